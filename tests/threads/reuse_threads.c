/*
 * reuse_threads.c - thread-table entries taken over while many threads start
 * and end at once, in one process, made to be run under ThreadSanitizer.
 *
 *   reuse_threads [THREADS]
 *	SPAWNERS threads each start and join BATCH short-lived threads at a
 *	time until THREADS have run, far more than the table's entries:
 *	ended threads' entries are claimed by threads starting together (the
 *	SPAWNERS * BATCH threads of a round wait for each other before their
 *	first call, so that they race for the same oldest ended entry).
 *	Afterwards no two threads ever held the same entry with the same
 *	serial, none went untracked, every entry names the thread that holds
 *	it now (tid and name), every record a ring holds for an entry is that
 *	thread's, and every event is in a ring or counted as lost.
 *
 * Prints "N passed, M failed" and exits non-zero on a failure.
 */
#define _GNU_SOURCE
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

#define SPAWNERS 8
#define BATCH 8 /* alive at once: at most SPAWNERS * BATCH + 1, far below the table */
#define EVENTS 30
#define RINGS 8

struct worker {
	pthread_t thread;
	uint32_t index;
	uint32_t entry; /* its thread-table index, UINT32_MAX if none */
	uint32_t serial;
	pid_t tid;
};

static struct worker *workers;
static uint32_t worker_count;
static pthread_barrier_t start_line;
static pthread_barrier_t round_line; /* a round's workers, before their first call */

static void *work(void *arg)
{
	struct worker *x = arg;
	char name[RT_NAME_MAX];
	snprintf(name, sizeof(name), "r%u", x->index);
	pthread_barrier_wait(&round_line);
	ringtrace_set_thread_name(name);
	x->tid = (pid_t)syscall(SYS_gettid);
	for (uint32_t i = 0; i < EVENTS; i++)
		pattern_emit(x->index, i);
	uint32_t state = ringtrace__tls_writer.state;
	x->entry = state == RT_WRITER_ATTACHED || state == RT_WRITER_NO_RING
		       ? ringtrace__tls_writer.thread
		       : UINT32_MAX;
	if (x->entry != UINT32_MAX) {
		/* while it lives, the entry is its own */
		const struct rt_thread_entry *e = &rt_arena.threads[x->entry];
		x->serial = __atomic_load_n(&e->serial, __ATOMIC_RELAXED);
		CHECK_EQ(__atomic_load_n(&e->state, __ATOMIC_ACQUIRE), RT_THREAD_LIVE);
		CHECK_EQ(e->tid, x->tid);
	}
	return NULL;
}

static void *spawn(void *arg)
{
	uint32_t s = (uint32_t)(uintptr_t)arg;
	pthread_barrier_wait(&start_line);
	uint32_t per = worker_count / SPAWNERS;
	for (uint32_t c = s * per; c < (s + 1) * per; c += BATCH) {
		for (uint32_t k = c; k < c + BATCH; k++)
			pthread_create(&workers[k].thread, NULL, work, &workers[k]);
		for (uint32_t k = c; k < c + BATCH; k++)
			pthread_join(workers[k].thread, NULL);
	}
	return NULL;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The worker now holding entry e (with its serial), or NULL. */
static const struct worker *holder(uint32_t e)
{
	uint32_t serial = rt_arena.threads[e].serial;
	for (uint32_t k = 0; k < worker_count; k++)
		if (workers[k].entry == e && workers[k].serial == serial)
			return &workers[k];
	return NULL;
}

static void check_table(void)
{
	const struct rt_arena_header *h = rt_arena.header;
	uint64_t *held = calloc(worker_count, sizeof(*held));
	uint32_t attached = 1; /* the main thread */
	for (uint32_t k = 0; k < worker_count; k++) {
		CHECK(workers[k].entry != UINT32_MAX);
		held[k] = (uint64_t)workers[k].entry << 32 | workers[k].serial;
		attached += workers[k].entry != UINT32_MAX;
	}
	qsort(held, worker_count, sizeof(*held), compare_u64);
	for (uint32_t k = 1; k < worker_count; k++)
		CHECK(held[k] != held[k - 1]); /* one thread per entry and serial */
	free(held);
	CHECK_EQ(h->threads_untracked, 0);
	uint32_t fresh =
	    h->threads_used < h->thread_capacity ? h->threads_used : h->thread_capacity;
	CHECK(worker_count + 1 > h->thread_capacity);
	CHECK_EQ(h->threads_reused + fresh, attached);
	for (uint32_t e = 1; e < fresh; e++) {
		const struct rt_thread_entry *t = &rt_arena.threads[e];
		const struct worker *x = holder(e);
		if (!CHECK(x != NULL))
			continue;
		CHECK_EQ(t->state, RT_THREAD_EXITED);
		CHECK_EQ(t->tid, x->tid);
		char name[RT_NAME_MAX];
		snprintf(name, sizeof(name), "r%u", x->index);
		CHECK_STR(t->name, name);
	}
}

/* Every record a ring holds for an entry's present holder is that thread's. */
static void check_rings(void)
{
	const struct rt_arena_header *h = rt_arena.header;
	uint32_t fresh =
	    h->threads_used < h->thread_capacity ? h->threads_used : h->thread_capacity;
	uint64_t held = 0;
	for (uint32_t ring = 0; ring < h->rings_used && ring < h->ring_count; ring++) {
		struct ring_view v;
		struct ring_view_record r;
		ring_view_open(&v, ring);
		while (ring_view_next(&v, &r)) {
			if (!CHECK(pattern_record_ok(&r)))
				continue;
			for (uint32_t e = 1; e < fresh; e++) {
				const struct rt_thread_entry *t = &rt_arena.threads[e];
				if (t->ring != ring || r.record < t->first_record ||
				    r.record >= t->end_record)
					continue;
				const struct worker *x = holder(e);
				if (CHECK(x != NULL))
					CHECK_EQ(r.head.a0, x->index);
				held++;
			}
		}
	}
	CHECK(held > 0);
}

/* Every event emitted is in a ring's count of records, or counted as lost. */
static void check_accounting(uint64_t main_events)
{
	const struct rt_arena_header *h = rt_arena.header;
	uint64_t counted = h->lost_untracked + h->lost_no_site + h->lost_reused;
	for (uint32_t ring = 0; ring < h->rings_used && ring < h->ring_count; ring++) {
		const struct rt_ring_desc *d = &rt_arena.rings[ring];
		counted += d->records - d->notes + d->dropped;
	}
	uint32_t fresh =
	    h->threads_used < h->thread_capacity ? h->threads_used : h->thread_capacity;
	for (uint32_t e = 0; e < fresh; e++)
		counted += rt_arena.threads[e].lost_no_ring;
	CHECK_EQ(counted, (uint64_t)worker_count * EVENTS + main_events);
}

int main(int argc, char **argv)
{
	worker_count = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 3072;
	worker_count -= worker_count % (SPAWNERS * BATCH);
	if (worker_count < 2 * RT_MIN_THREAD_CAPACITY) {
		fprintf(stderr, "usage: reuse_threads [THREADS >= %u]\n",
			2 * RT_MIN_THREAD_CAPACITY);
		return 2;
	}
	char dir[] = "/tmp/ringtrace-reuse.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	char arena[sizeof(dir) + 16];
	snprintf(arena, sizeof(arena), "%s/reuse.arena", dir);
	setenv("RINGTRACE_ARENA", arena, 1);
	setenv("RINGTRACE_BUFFER", "4K", 1);
	char rings[16];
	snprintf(rings, sizeof(rings), "%u", RINGS);
	setenv("RINGTRACE_RINGS", rings, 1);
	unsetenv("RINGTRACE_MODE");
	unsetenv("RINGTRACE_COLLECTOR");

	pattern_emit(UINT32_MAX, 0); /* the arena starts here, before any worker */
	workers = calloc(worker_count, sizeof(*workers));
	for (uint32_t k = 0; k < worker_count; k++) {
		workers[k].index = k;
		workers[k].entry = UINT32_MAX;
	}
	pthread_barrier_init(&start_line, NULL, SPAWNERS);
	/* every spawner runs worker_count / SPAWNERS / BATCH rounds of BATCH */
	pthread_barrier_init(&round_line, NULL, SPAWNERS * BATCH);
	pthread_t spawners[SPAWNERS];
	for (uint32_t s = 0; s < SPAWNERS; s++)
		pthread_create(&spawners[s], NULL, spawn, (void *)(uintptr_t)s);
	for (uint32_t s = 0; s < SPAWNERS; s++)
		pthread_join(spawners[s], NULL);
	pthread_barrier_destroy(&start_line);
	pthread_barrier_destroy(&round_line);
	if (CHECK(rt_arena_on())) {
		check_table();
		check_rings();
		check_accounting(1);
		printf("%u threads, %llu entries taken over\n", worker_count,
		       (unsigned long long)rt_arena.header->threads_reused);
	}
	ringtrace_shutdown();
	unlink(arena);
	rmdir(dir);
	free(workers);
	int failed = check_failure_count() != 0;
	printf("%d passed, %d failed\n", !failed, failed);
	return failed;
}
