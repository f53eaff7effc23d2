/*
 * race_threads.c - the recording library's shared state under concurrent
 * use, in one process, made to be run under ThreadSanitizer.
 *
 *   race_threads start [EVENTS]
 *	Many threads make their first event at the same moment: they race to
 *	create the arena, to register the same sites, to claim thread-table
 *	entries and rings; short-lived threads meanwhile release rings that
 *	others take over, and threads rename themselves.  Afterwards every
 *	event is accounted for exactly (recorded, or counted as lost) and every
 *	record left in a ring belongs to the thread its range says.
 *
 *   race_threads shutdown [EVENTS]
 *	One thread calls ringtrace_shutdown() while others trace and new
 *	threads keep starting.  Once shutdown has returned nothing more is
 *	recorded, and what was recorded is intact.
 *
 * Prints "N passed, M failed" (one check group per scenario) and exits
 * non-zero on a failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/record.h"

#include "../lib/check.h"
#include "../lib/event_pattern.h"
#include "../lib/ring_view.h"
#include "../lib/last_event.h"

#define TRACERS 24
#define CHURNERS 160  /* short-lived threads, CHURN_BATCH alive at a time */
#define CHURN_BATCH 4 /* divides CHURNERS */
#define CHURN_EVENTS 100
#define RINGS 8 /* far fewer than threads: rings are reused, some threads get none */
/*
 * Started one by one at the end, more of them than rings: they must reuse
 * rings even when the machine was so busy that every earlier thread ran
 * while the arena was still being created and none of them took a ring.
 */
#define LATE (RINGS + 1)
#define MAX_THREADS (TRACERS + CHURNERS + LATE)

/* One thread of the test, as the test saw it. */
struct test_thread {
	pthread_t thread;
	uint32_t index;	  /* its number in the test: argument 1 of its events */
	uint32_t events;  /* events it emits (start scenario) */
	uint32_t emitted; /* events it did emit */
	uint32_t entry;	  /* its thread-table index; UINT32_MAX if it never attached */
	pid_t tid;
	char name[RT_NAME_MAX]; /* given with ringtrace_set_thread_name, or "" */
};

static struct test_thread threads[MAX_THREADS];
static pthread_barrier_t start_line;

/* set once ringtrace_shutdown() has returned (shutdown scenario) */
static int shutdown_done;
static int stop_tracing;

static void note_attachment(struct test_thread *x)
{
	x->tid = (pid_t)syscall(SYS_gettid);
	uint32_t state = ringtrace__tls_writer.state;
	x->entry = state == RT_WRITER_ATTACHED || state == RT_WRITER_NO_RING
		       ? ringtrace__tls_writer.thread
		       : UINT32_MAX;
}

/* Start scenario: a fixed number of events, renaming itself on the way. */
static void *start_tracer(void *arg)
{
	struct test_thread *x = arg;
	if (x->index < TRACERS)
		pthread_barrier_wait(&start_line);
	for (uint32_t i = 0; i < x->events; i++) {
		pattern_emit(x->index, i);
		/*
		 * Rename once attached: a thread the table had no room for
		 * keeps no name.
		 */
		uint32_t state = ringtrace__tls_writer.state;
		if (x->index % 2 == 0 && !x->name[0] &&
		    (state == RT_WRITER_ATTACHED || state == RT_WRITER_NO_RING)) {
			snprintf(x->name, sizeof(x->name), "racer-%u", x->index % 1000);
			ringtrace_set_thread_name(x->name);
		}
	}
	x->emitted = x->events;
	note_attachment(x);
	return NULL;
}

/*
 * Starts and joins the short-lived threads, CHURN_BATCH at a time; in the
 * shutdown scenario, round after round until shutdown is done, so threads
 * attach and exit while it runs.
 */
struct churn_plan {
	void *(*body)(void *);
	int until_shutdown;
};

static void *churn(void *arg)
{
	const struct churn_plan *plan = arg;
	pthread_barrier_wait(&start_line);
	int rounds_after_shutdown = 0;
	do {
		for (uint32_t c = 0; c < CHURNERS; c += CHURN_BATCH) {
			for (uint32_t k = c; k < c + CHURN_BATCH; k++)
				pthread_create(&threads[TRACERS + k].thread, NULL, plan->body,
					       &threads[TRACERS + k]);
			for (uint32_t k = c; k < c + CHURN_BATCH; k++)
				pthread_join(threads[TRACERS + k].thread, NULL);
		}
		if (__atomic_load_n(&shutdown_done, __ATOMIC_ACQUIRE))
			rounds_after_shutdown++;
	} while (plan->until_shutdown && rounds_after_shutdown < 1);
	return NULL;
}

/* The test thread whose thread-table entry is e, or NULL. */
static struct test_thread *thread_of_entry(uint32_t e)
{
	for (uint32_t k = 0; k < MAX_THREADS; k++)
		if (threads[k].entry == e)
			return &threads[k];
	return NULL;
}

/* The thread-table entry whose record range in ring r holds record rec. */
static uint32_t owner_of(uint32_t ring, uint64_t rec)
{
	uint32_t n = rt_arena.header->threads_used;
	for (uint32_t e = 0; e < n && e < rt_arena.header->thread_capacity; e++) {
		const struct rt_thread_entry *t = &rt_arena.threads[e];
		if (t->ring == ring && rec >= t->first_record && rec < t->end_record)
			return e;
	}
	return UINT32_MAX;
}

/*
 * Every record in every ring is an intact pattern event, and all records of
 * one thread-table entry carry the same thread number.  With exact_end, a
 * thread's last record is its last event, so a record's argument i follows
 * from its record number; otherwise consecutive records of one owner carry
 * consecutive i.
 */
static void check_rings(int exact_end)
{
	static uint32_t thread_number_of_entry[RT_MIN_THREAD_CAPACITY];
	memset(thread_number_of_entry, 0xff, sizeof(thread_number_of_entry));
	uint32_t used = rt_arena.header->rings_used;
	CHECK(used <= rt_arena.header->ring_count);
	for (uint32_t ring = 0; ring < used && ring < rt_arena.header->ring_count; ring++) {
		const struct rt_ring_desc *d = &rt_arena.rings[ring];
		CHECK_EQ(d->reserve, d->head); /* no thread stopped inside a record */
		/* flight mode drops nothing; an event racing shutdown may count as dropped */
		if (exact_end)
			CHECK_EQ(d->dropped, 0);
		else
			CHECK(d->dropped <= TRACERS + CHURN_BATCH);
		struct ring_view v;
		struct ring_view_record r;
		ring_view_open(&v, ring);
		uint32_t prev_owner = UINT32_MAX, prev_i = 0;
		uint64_t prev_record = 0;
		while (ring_view_next(&v, &r)) {
			if (prev_owner != UINT32_MAX)
				CHECK_EQ(r.record, prev_record + 1);
			prev_record = r.record;
			if (!CHECK(pattern_record_ok(&r)))
				continue;
			uint32_t e = owner_of(ring, r.record);
			if (!CHECK(e < RT_MIN_THREAD_CAPACITY))
				continue;
			if (thread_number_of_entry[e] == UINT32_MAX)
				thread_number_of_entry[e] = r.head.a0;
			CHECK_EQ(r.head.a0, thread_number_of_entry[e]);
			if (exact_end) {
				const struct test_thread *x = thread_of_entry(e);
				const struct rt_thread_entry *t = &rt_arena.threads[e];
				if (CHECK(x != NULL)) {
					CHECK_EQ(r.head.a0, x->index);
					CHECK_EQ(r.head.a1, x->events - (t->end_record - r.record));
				}
			} else if (e == prev_owner) {
				CHECK_EQ(r.head.a1, prev_i + 1);
			}
			prev_owner = e;
			prev_i = r.head.a1;
		}
		CHECK(v.skipped <= 1); /* at most the tail of a record cut by the window */
	}
}

/*
 * Every event emitted was committed to a ring or counted as lost: no ring
 * free, lost while the arena was being created, or untracked.
 */
static void check_accounting(void)
{
	const struct rt_arena_header *h = rt_arena.header;
	uint64_t unaccounted = 0;
	uint32_t attached = 0;
	for (uint32_t k = 0; k < MAX_THREADS; k++) {
		struct test_thread *x = &threads[k];
		if (x->entry == UINT32_MAX) {
			unaccounted += x->emitted; /* all lost before the arena was there */
			continue;
		}
		attached++;
		const struct rt_thread_entry *e = &rt_arena.threads[x->entry];
		CHECK_EQ(e->tid, x->tid);
		CHECK_EQ(e->state, RT_THREAD_EXITED);
		uint64_t committed = e->ring == RT_NO_RING ? 0 : e->end_record - e->first_record;
		if (!CHECK(committed + e->lost_no_ring <= x->emitted))
			continue;
		unaccounted += x->emitted - committed - e->lost_no_ring;
		/* its newest event, kept in its entry whether or not a ring holds it */
		CHECK(rt_test_last(e).valid != 0);
		CHECK_EQ(rt_test_last(e).a32[0], x->index);
		CHECK_EQ(rt_test_last(e).a32[1], x->emitted - 1);
		if (x->name[0])
			CHECK_STR(e->name, x->name);
	}
	CHECK_EQ(h->threads_used, attached);
	CHECK_EQ(unaccounted, h->lost_untracked + h->lost_no_site);
	CHECK_EQ(h->threads_untracked, 0);
	CHECK_EQ(h->sites_refused, 0);
	/* each site registered once, or a few times by threads that raced on it */
	CHECK(h->sites_used >= 1 + 3 && h->sites_used <= 1 + 3 * MAX_THREADS);
	CHECK(h->ring_reuses > 0);
	printf("start: %u threads attached, %llu ring reuses, %llu events lost while starting "
	       "or untracked\n",
	       attached, (unsigned long long)h->ring_reuses, (unsigned long long)h->lost_untracked);
}

static void scenario_start(uint32_t events)
{
	pthread_barrier_init(&start_line, NULL, TRACERS + 1);
	for (uint32_t k = 0; k < MAX_THREADS; k++) {
		threads[k].index = k;
		threads[k].events = k < TRACERS ? events : CHURN_EVENTS;
		threads[k].entry = UINT32_MAX;
	}
	pthread_t churner;
	struct churn_plan plan = {start_tracer, 0};
	for (uint32_t k = 0; k < TRACERS; k++)
		pthread_create(&threads[k].thread, NULL, start_tracer, &threads[k]);
	pthread_create(&churner, NULL, churn, &plan);
	for (uint32_t k = 0; k < TRACERS; k++)
		pthread_join(threads[k].thread, NULL);
	pthread_join(churner, NULL);
	for (uint32_t k = TRACERS + CHURNERS; k < MAX_THREADS; k++) {
		pthread_create(&threads[k].thread, NULL, start_tracer, &threads[k]);
		pthread_join(threads[k].thread, NULL);
	}
	if (!CHECK(rt_arena_on()))
		return;
	/* closing accounts for threads that counted a start-up loss late */
	ringtrace_shutdown();
	CHECK_EQ(rt_arena.header->state, RT_ARENA_CLOSED);
	check_accounting();
	check_rings(1);
	pthread_barrier_destroy(&start_line);
}

/*
 * Shutdown scenario: trace until told to stop.  Thread 0 shuts tracing down
 * midway; every thread then checks that its events no longer reach its ring.
 */
static void *shutdown_tracer(void *arg)
{
	struct test_thread *x = arg;
	uint32_t events = x->events;
	if (x->index < TRACERS)
		pthread_barrier_wait(&start_line);
	uint32_t i = 0;
	for (; !__atomic_load_n(&stop_tracing, __ATOMIC_ACQUIRE) &&
	       (x->index < TRACERS || i < events);
	     i++) {
		pattern_emit(x->index, i);
		if (x->index == 0 && i == events) {
			ringtrace_shutdown();
			__atomic_store_n(&shutdown_done, 1, __ATOMIC_RELEASE);
		}
		if (x->index < TRACERS && __atomic_load_n(&shutdown_done, __ATOMIC_ACQUIRE))
			break;
	}
	note_attachment(x);
	if (x->index < TRACERS && ringtrace__tls_writer.ring) {
		const struct rt_ring_desc *d = ringtrace__tls_writer.ring;
		uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
		for (uint32_t k = 0; k < 2000; k++)
			pattern_emit(x->index, i + 1 + k);
		CHECK_EQ(__atomic_load_n(&d->head, __ATOMIC_ACQUIRE), head);
	}
	x->emitted = i;
	return NULL;
}

static void scenario_shutdown(const char *arena, uint32_t events)
{
	struct ringtrace_options o = {.size = sizeof(o),
				      .arena_path = arena,
				      .buffer_bytes = 4096,
				      .mode = RINGTRACE_FLIGHT,
				      .rings = RINGS / 2};
	CHECK_EQ(ringtrace_init(&o), 0);
	if (!rt_arena_on())
		return;
	pthread_barrier_init(&start_line, NULL, TRACERS + 1);
	for (uint32_t k = 0; k < MAX_THREADS; k++) {
		threads[k].index = k;
		threads[k].events = k < TRACERS ? events : CHURN_EVENTS;
		threads[k].entry = UINT32_MAX;
	}
	pthread_t churner;
	struct churn_plan plan = {shutdown_tracer, 1};
	for (uint32_t k = 0; k < TRACERS; k++)
		pthread_create(&threads[k].thread, NULL, shutdown_tracer, &threads[k]);
	pthread_create(&churner, NULL, churn, &plan);
	pthread_join(threads[0].thread, NULL);
	__atomic_store_n(&stop_tracing, 1, __ATOMIC_RELEASE);
	for (uint32_t k = 1; k < TRACERS; k++)
		pthread_join(threads[k].thread, NULL);
	pthread_join(churner, NULL);
	CHECK_EQ(rt_arena.header->state, RT_ARENA_CLOSED);
	CHECK(!ringtrace_enabled());
	check_rings(0);
	pthread_barrier_destroy(&start_line);
}

int main(int argc, char **argv)
{
	const char *scenario = argc > 1 ? argv[1] : "";
	uint32_t events = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 20000;
	if (events < 10 || (strcmp(scenario, "start") != 0 && strcmp(scenario, "shutdown") != 0)) {
		fprintf(stderr, "usage: race_threads start|shutdown [EVENTS >= 10]\n");
		return 2;
	}
	char dir[] = "/tmp/ringtrace-race.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	char arena[sizeof(dir) + 16];
	snprintf(arena, sizeof(arena), "%s/race.arena", dir);
	if (strcmp(scenario, "start") == 0) {
		/* no set-up call: the first events start the library, from the environment */
		setenv("RINGTRACE_ARENA", arena, 1);
		setenv("RINGTRACE_BUFFER", "4K", 1);
		char rings[16];
		snprintf(rings, sizeof(rings), "%u", RINGS);
		setenv("RINGTRACE_RINGS", rings, 1);
		unsetenv("RINGTRACE_MODE");
		scenario_start(events);
	} else {
		scenario_shutdown(arena, events);
	}
	unlink(arena);
	rmdir(dir);
	int failed = check_failure_count() != 0;
	printf("%d passed, %d failed\n", !failed, failed);
	return failed;
}
