/*
 * stream_collector.c - stream mode with a collector in the same process,
 * made to be run under ThreadSanitizer.
 *
 * Long-lived and short-lived threads trace into small rings while a
 * collector thread consumes them through the live mapping, exactly as the
 * ring protocol in ringtrace/format.h says a collector may: head loaded with
 * acquire, slots read with relaxed atomic loads, tail stored with release.
 * The collector is slow enough that rings fill, so threads drop events and
 * write lost notes; rings pass from exiting threads to new ones.
 *
 * Asserted: every record the collector sees is whole and is the event its
 * arguments say (nothing garbled, nothing overwritten before it was
 * consumed); within a thread, events come in order and every gap is covered
 * by the lost note right before; and in the end every event is seen,
 * counted in a note, or counted as dropped or as lost for want of a ring.
 *
 *   stream_collector [TRACER_EVENTS]	(the least a long-lived thread emits)
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
#include "../lib/last_event.h"

#define TRACERS 4
#define CHURNERS 60   /* short-lived, CHURN_BATCH alive at a time */
#define CHURN_BATCH 3 /* divides CHURNERS */
#define CHURN_EVENTS 300
#define RINGS 6 /* TRACERS + CHURN_BATCH - 1: one thread of each batch finds none */
#define MAX_THREADS (TRACERS + CHURNERS)

struct test_thread {
	pthread_t thread;
	uint32_t events; /* to emit; once joined, emitted */
	uint32_t entry;	 /* thread-table index, UINT32_MAX if it never attached */
};

static struct test_thread threads[MAX_THREADS];
static pthread_barrier_t tracers_attached, batch_attached;
static int churn_done;	 /* set when every short-lived thread has been joined */
static int tracing_done; /* set when every tracing thread has been joined */

/* What the collector learned, per test thread and per ring (collector thread only). */
struct seen {
	uint64_t records;
	uint32_t next_i;    /* the event expected next */
	int any;	    /* a record of this thread was seen */
	uint32_t first_gap; /* events missing before its first record, not covered by a note */
	uint64_t noted;	    /* events counted in its lost notes */
};
static struct seen seen[MAX_THREADS];
static uint64_t ring_tail[RINGS];
static uint64_t ring_pending_note[RINGS]; /* count of a note whose event is not seen yet */
static uint64_t ring_next_record[RINGS];
static uint64_t notes_total;

/*
 * Long-lived threads trace at least their count and on until the short-lived
 * ones are done, so those always compete for the rings that are left.
 */
static void *tracer(void *arg)
{
	struct test_thread *x = arg;
	uint32_t t = (uint32_t)(x - threads);
	uint32_t i = 0;
	pattern_emit(t, i++);
	/* hold until all of a group are attached: then some find no ring */
	pthread_barrier_wait(t < TRACERS ? &tracers_attached : &batch_attached);
	for (; i < x->events || (t < TRACERS && !__atomic_load_n(&churn_done, __ATOMIC_ACQUIRE));
	     i++)
		pattern_emit(t, i);
	x->events = i;
	uint32_t state = ringtrace__tls_writer.state;
	x->entry = state == RT_WRITER_ATTACHED || state == RT_WRITER_NO_RING
		       ? ringtrace__tls_writer.thread
		       : UINT32_MAX;
	return NULL;
}

static void *spawner(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&tracers_attached);
	for (uint32_t c = TRACERS; c < MAX_THREADS; c += CHURN_BATCH) {
		for (uint32_t k = c; k < c + CHURN_BATCH; k++)
			pthread_create(&threads[k].thread, NULL, tracer, &threads[k]);
		for (uint32_t k = c; k < c + CHURN_BATCH; k++)
			pthread_join(threads[k].thread, NULL);
	}
	__atomic_store_n(&churn_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void consume_lost_note(uint32_t ring, const struct ring_view_record *r)
{
	CHECK_EQ(r->head.a0, RT_LOST_DROPPED);
	CHECK(r->cont.a4 > 0);
	CHECK(r->head.counter <= r->cont.a5); /* first and last dropped event, in order */
	CHECK_EQ(ring_pending_note[ring], 0); /* a note is followed by its thread's event */
	ring_pending_note[ring] = r->cont.a4;
	notes_total += r->cont.a4;
}

static void consume_event(uint32_t ring, const struct ring_view_record *r)
{
	if (!CHECK(pattern_record_ok(r)) || !CHECK(r->head.a0 < MAX_THREADS))
		return;
	struct seen *s = &seen[r->head.a0];
	uint32_t i = r->head.a1;
	uint64_t noted = ring_pending_note[ring];
	ring_pending_note[ring] = 0;
	if (!s->any) {
		/* what its first record follows: events lost for want of a ring, then a note */
		if (CHECK(i >= noted))
			s->first_gap = i - (uint32_t)noted;
		s->any = 1;
	} else {
		CHECK_EQ(i, s->next_i + noted);
	}
	s->noted += noted;
	s->next_i = i + 1;
	s->records++;
}

/* Consume what ring holds from our tail to its head; returns how many slots. */
static uint64_t consume_ring(uint32_t ring)
{
	const struct rt_ring_desc *d = &rt_arena.rings[ring];
	if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) == RT_RING_UNUSED)
		return 0;
	/* publishes to us: every slot below head */
	uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
	const union rt_slot *slots = rt_arena_ring_slots(ring);
	uint64_t mask = rt_arena.ring_slots - 1;
	uint64_t pos = ring_tail[ring];
	if (!CHECK(head >= pos && head - pos <= rt_arena.ring_slots))
		return 0; /* the writer went past our tail: it overwrote what we had not read */
	while (pos < head) {
		struct ring_view_record r;
		if (!ring_view_parse(slots, mask, pos, head, &r)) {
			check_fail(__FILE__, __LINE__, "ring %u: garbled record at slot %llu", ring,
				   (unsigned long long)pos);
			pos = head;
			break;
		}
		CHECK_EQ(r.head.record, (uint32_t)ring_next_record[ring]);
		ring_next_record[ring]++;
		if (r.head.kind == RT_REC_LOST)
			consume_lost_note(ring, &r);
		else
			consume_event(ring, &r);
		pos += r.head.nslots;
	}
	uint64_t consumed = pos - ring_tail[ring];
	ring_tail[ring] = pos;
	/* publishes to the writer: we are done with every slot below pos */
	__atomic_store_n(&rt_arena.rings[ring].tail, pos, __ATOMIC_RELEASE);
	return consumed;
}

static void *collector(void *arg)
{
	(void)arg;
	int last_pass = 0;
	while (!last_pass) {
		last_pass = __atomic_load_n(&tracing_done, __ATOMIC_ACQUIRE);
		uint64_t consumed = 0;
		for (uint32_t ring = 0; ring < RINGS; ring++)
			consumed += consume_ring(ring);
		/* a collector that falls behind now and then, so rings fill and drop */
		if (consumed < 64)
			usleep(200);
	}
	return NULL;
}

/* Every event seen, noted, dropped, or lost for want of a ring. */
static void check_accounting(void)
{
	const struct rt_arena_header *h = rt_arena.header;
	uint64_t emitted = 0, records = 0, no_ring = 0, trailing = 0, dropped = 0;
	for (uint32_t t = 0; t < MAX_THREADS; t++) {
		const struct test_thread *x = &threads[t];
		const struct seen *s = &seen[t];
		emitted += x->events;
		records += s->records;
		if (!CHECK(x->entry != UINT32_MAX))
			continue;
		const struct rt_thread_entry *e = &rt_arena.threads[x->entry];
		no_ring += e->lost_no_ring;
		CHECK_EQ(e->state, RT_THREAD_EXITED);
		CHECK(rt_test_last(e).valid != 0);
		CHECK_EQ(rt_test_last(e).a32[0], t);
		CHECK_EQ(rt_test_last(e).a32[1], x->events - 1);
		if (s->any) {
			CHECK_EQ(s->first_gap, e->lost_no_ring);
			trailing += x->events - s->next_i; /* dropped at the end, never noted */
		} else {
			CHECK(e->lost_no_ring <= x->events);
			trailing += x->events - e->lost_no_ring;
		}
	}
	for (uint32_t ring = 0; ring < RINGS; ring++) {
		dropped += rt_arena.rings[ring].dropped;
		CHECK_EQ(ring_pending_note[ring], 0);
		CHECK_EQ(rt_arena.rings[ring].records, ring_next_record[ring]);
	}
	CHECK_EQ(notes_total + trailing, dropped);
	CHECK_EQ(records + dropped + no_ring, emitted);
	CHECK_EQ(h->lost_untracked, 0);
	CHECK_EQ(h->lost_no_site, 0);
	printf("stream: %llu events, %llu seen, %llu in lost notes, %llu dropped at the end, "
	       "%llu lost with no ring, %llu ring reuses\n",
	       (unsigned long long)emitted, (unsigned long long)records,
	       (unsigned long long)notes_total, (unsigned long long)trailing,
	       (unsigned long long)no_ring, (unsigned long long)h->ring_reuses);
	CHECK(notes_total > 0); /* the test did make rings fill and recover */
	CHECK(h->ring_reuses > 0);
	CHECK(no_ring > 0);
}

int main(int argc, char **argv)
{
	uint32_t events = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 100000;
	if (events < 1000) {
		fprintf(stderr, "usage: stream_collector [TRACER_EVENTS >= 1000]\n");
		return 2;
	}
	char dir[] = "/tmp/ringtrace-stream.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	char arena[sizeof(dir) + 16];
	snprintf(arena, sizeof(arena), "%s/stream.arena", dir);
	struct ringtrace_options o = {.size = sizeof(o),
				      .arena_path = arena,
				      .buffer_bytes = 4096,
				      .mode = RINGTRACE_STREAM,
				      .rings = RINGS};
	CHECK_EQ(ringtrace_init(&o), 0);
	if (rt_arena_on()) {
		for (uint32_t t = 0; t < MAX_THREADS; t++) {
			threads[t].events = t < TRACERS ? events : CHURN_EVENTS;
			threads[t].entry = UINT32_MAX;
		}
		pthread_barrier_init(&tracers_attached, NULL, TRACERS + 1);
		pthread_barrier_init(&batch_attached, NULL, CHURN_BATCH);
		pthread_t collector_thread, spawner_thread;
		pthread_create(&collector_thread, NULL, collector, NULL);
		for (uint32_t t = 0; t < TRACERS; t++)
			pthread_create(&threads[t].thread, NULL, tracer, &threads[t]);
		pthread_create(&spawner_thread, NULL, spawner, NULL);
		for (uint32_t t = 0; t < TRACERS; t++)
			pthread_join(threads[t].thread, NULL);
		pthread_join(spawner_thread, NULL);
		__atomic_store_n(&tracing_done, 1, __ATOMIC_RELEASE);
		pthread_join(collector_thread, NULL);
		check_accounting();
		ringtrace_shutdown();
		pthread_barrier_destroy(&tracers_attached);
		pthread_barrier_destroy(&batch_attached);
	}
	unlink(arena);
	rmdir(dir);
	int failed = check_failure_count() != 0;
	printf("%d passed, %d failed\n", !failed, failed);
	return failed;
}
