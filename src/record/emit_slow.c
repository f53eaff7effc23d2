/*
 * emit_slow.c - everything the inline fast path leaves out: starting the
 * library, registering a site, attaching a thread, the periodic clock
 * refresh, a full ring in stream mode, and events that cannot be recorded.
 *
 * Every event that reaches here is recorded or counted, never silently
 * dropped (except when tracing is off, which records nothing by definition).
 */
#include <sched.h>
#include <string.h>
#include <time.h>

#include "common/arena_names.h"
#include "record/record.h"

RT_EXPORT __thread struct ringtrace__writer ringtrace__tls_writer
    __attribute__((tls_model("initial-exec")));

void rt_writer_set_limit(struct ringtrace__writer *w)
{
	uint64_t limit = 0;
	if (rt_arena_on() && w->state == RT_WRITER_ATTACHED) {
		if (rt_arena.header->mode == RT_MODE_STREAM) {
			uint64_t tail = __atomic_load_n(&w->ring->tail, __ATOMIC_ACQUIRE);
			if (tail > w->head)
				tail =
				    w->head; /* a confused collector must not make us overwrite */
			limit = tail + rt_arena.ring_slots;
		} else {
			/* come back once per lap of the ring, to refresh the clock */
			limit = w->head + rt_arena.ring_slots;
		}
		/* and never past the ring's claimed pages (threads.c, "Claiming pages") */
		limit = rt_thread_claimed_limit(w, limit);
	}
	/*
	 * A shutdown may have zeroed the limit (rt_threads_stop_all) since
	 * rt_arena_on() said on: storing ours over it would let the fast path
	 * write on after the shutdown.  The exchange reads the shutdown's
	 * release store when ours comes after it, so the state is seen off then.
	 */
	__atomic_exchange_n(&w->limit, limit, __ATOMIC_ACQUIRE);
	if (limit && !rt_arena_on())
		__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
}

static void last_event_of(struct rt_last_event *ev, const struct ringtrace__writer *w, uint32_t id,
			  uint64_t counter, uint16_t cpu, const uint32_t a32[4],
			  const uint64_t a64[2])
{
	memset(ev, 0, sizeof(*ev));
	if (w->state == RT_WRITER_ATTACHED) {
		/* dropped: it comes after every record the ring has */
		ev->flags = RT_LAST_F_RING_RECORDS;
		ev->ring_records = (uint32_t)w->records;
	}
	ev->site = id;
	ev->counter = counter;
	ev->cpu = cpu;
	ev->kind = RT_REC_TRACE;
	memcpy(ev->a32, a32, sizeof(ev->a32));
	memcpy(ev->a64, a64, sizeof(ev->a64));
}

static int has_room(struct ringtrace__writer *w, uint64_t slots)
{
	return w->head + slots <= __atomic_load_n(&w->limit, __ATOMIC_RELAXED);
}

/* How a writer waits for room: spins first, then yields, then sleeps. */
#define WAIT_SPINS 64u
#define WAIT_YIELDS 64u
#define WAIT_SLEEP_NS 20000L

/*
 * Stream mode, and the ring is full because the collector is behind: when
 * the collector asked for it (full_wait_us), wait for it to make room, at
 * most that long, instead of dropping the record.  A wait that runs out
 * (a collector stopped or killed) is not tried again until the collector's
 * tail moves, so a collector gone costs one wait, not one per event.
 * clock_gettime, sched_yield and nanosleep are async-signal-safe; the wait
 * is bounded, and another process ends it.
 */
static void wait_for_room(struct ringtrace__writer *w, uint64_t need)
{
	const struct rt_arena_header *h = rt_arena.header;
	uint64_t bound_us = __atomic_load_n(&h->full_wait_us, __ATOMIC_RELAXED);
	if (!bound_us || h->mode != RT_MODE_STREAM)
		return;
	/* whoever may write the arena may write this: never more than the most one may ask */
	if (bound_us > RT_FULL_WAIT_US_MAX)
		bound_us = RT_FULL_WAIT_US_MAX;
	struct rt_ring_desc *d = w->ring;
	uint64_t start = 0;
	for (unsigned round = 0;; round++) {
		/* read before the limit is set again from a tail as new or newer */
		uint64_t tail = __atomic_load_n(&d->tail, __ATOMIC_ACQUIRE);
		rt_writer_set_limit(w);
		if (has_room(w, need) || !__atomic_load_n(&h->full_wait_us, __ATOMIC_RELAXED))
			return;
		/* full for another reason (no page could be claimed): no collector makes room */
		if (tail > w->head || w->head + need <= tail + rt_arena.ring_slots)
			return;
		if (round == 0) {
			if (d->wait_gave_up == tail + 1)
				return;
			__atomic_store_n(&d->waits, d->waits + 1, __ATOMIC_RELAXED);
		} else if (round == WAIT_SPINS) {
			start = rt_monotonic_ns();
		} else if (round > WAIT_SPINS && rt_monotonic_ns() - start >= bound_us * 1000u) {
			__atomic_store_n(&d->wait_gave_up, tail + 1, __ATOMIC_RELAXED);
			return;
		}
		if (round < WAIT_SPINS) {
			RT_CPU_RELAX();
		} else if (round < WAIT_SPINS + WAIT_YIELDS) {
			sched_yield();
		} else {
			struct timespec pause = {0, WAIT_SLEEP_NS};
			nanosleep(&pause, NULL);
		}
	}
}

static void write_lost(struct ringtrace__writer *w, uint32_t reason, uint64_t count, uint64_t first,
		       uint64_t last)
{
	ringtrace__write_record(w, w->head, 2, RT_REC_LOST, 0, first, reason, 0, 0, 0, count, last);
	/* what the ring's records count besides events: an image replaced unread says so */
	__atomic_store_n(&w->ring->notes, w->ring->notes + 1, __ATOMIC_RELAXED);
}

/*
 * One record of site: a trace event (payload NULL: a32, a64) or a log
 * message or I/O call (its payload of bytes bytes, record kind), stamped
 * at: its time, or 0 to stamp it now (after the slow path's own work: an
 * I/O call passes the time its call returned, which the slow path must
 * not lengthen).  A NULL site is an event of a site the ABI check refused
 * (abi.c): counted lost with the sites the arena had no room for.
 */
static void record(struct ringtrace__writer *w, struct ringtrace__site_body *site,
		   const uint32_t a32[4], const uint64_t a64[2], uint8_t kind,
		   const uint8_t *payload, uint32_t bytes, uint64_t at)
{
	/* a vfork child on this thread's state (vfork.c) */
	if (RT__UNLIKELY(w->lent)) {
		rt_vfork_count_event();
		return;
	}
	if (!rt_arena_ensure_started(NULL, NULL)) {
		int state = __atomic_load_n(&rt_arena.state, __ATOMIC_ACQUIRE);
		/*
		 * Still being created after the wait (or by this very thread,
		 * which cannot wait for itself): counted, and moved into the
		 * arena if it came up meanwhile (else when it comes up).
		 */
		if (state == RT_STARTING) {
			__atomic_fetch_add(&rt_arena.lost_while_starting, 1, __ATOMIC_RELAXED);
			if (rt_arena_on())
				rt_arena_account_start_losses();
			return;
		}
		if (state != RT_ON) {
			/* tracing is off: keep the fast path from recording later events */
			__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
			return;
		}
		/* the arena came up since: record */
	}
	struct rt_arena_header *h = rt_arena.header;
	uint32_t id = site ? rt_site_register(site) : 0;
	if (!id) {
		__atomic_fetch_add(&h->lost_no_site, 1, __ATOMIC_RELAXED);
		return;
	}
	if (w->state == RT_WRITER_NEW)
		rt_thread_attach(w);
	if (w->state == RT_WRITER_NO_RING) {
		struct rt_thread_entry *e = &rt_arena.threads[w->thread];
		/* rings free up as threads exit: look again now and then */
		if ((__atomic_load_n(&e->lost_no_ring, __ATOMIC_RELAXED) & 1023) == 1023)
			rt_thread_retry_ring(w);
		if (w->state == RT_WRITER_NO_RING) {
			struct rt_last_event ev;
			last_event_of(&ev, w, id, ringtrace__counter(), (uint16_t)*w->cpu, a32,
				      a64);
			rt_thread_keep_last(w, &ev);
			__atomic_store_n(&e->lost_no_ring, e->lost_no_ring + 1, __ATOMIC_RELAXED);
			return;
		}
	}
	if (w->state != RT_WRITER_ATTACHED) {
		__atomic_fetch_add(&h->lost_untracked, 1, __ATOMIC_RELAXED);
		return;
	}

	uint64_t nested = __atomic_exchange_n(&w->nested, 0, __ATOMIC_RELAXED);
	unsigned nslots = payload ? RT_LOG_SLOTS(bytes) : RT_TRACE_SLOTS(site->nargs);
	uint64_t need = nslots + (w->dropped ? 2 : 0) + (nested ? 2 : 0);
	if (!has_room(w, need)) {
		rt_clock_refresh(h, 0);
		rt_writer_set_limit(w);
	}
	if (!has_room(w, need))
		wait_for_room(w, need);
	uint64_t now = at ? at : ringtrace__counter();
	if (!has_room(w, need)) {
		/* stream mode and the collector is behind: drop this one, say so later */
		if (!w->dropped)
			w->dropped_first = now;
		w->dropped_last = now;
		w->dropped++;
		/* the fast path must not write a smaller event before the lost note */
		__atomic_store_n(&w->limit, w->head, __ATOMIC_RELAXED);
		/* atomic adds: a signal handler may count into the same fields */
		__atomic_fetch_add(&w->nested, nested, __ATOMIC_RELAXED);
		__atomic_fetch_add(&w->ring->dropped, 1, __ATOMIC_RELAXED);
		struct rt_last_event ev;
		last_event_of(&ev, w, id, now, (uint16_t)*w->cpu, a32, a64);
		rt_thread_keep_last(w, &ev);
		return;
	}
	uint64_t noting = nested + w->dropped;
	if (nested)
		write_lost(w, RT_LOST_NESTED, nested, now, now);
	if (w->dropped) {
		write_lost(w, RT_LOST_DROPPED, w->dropped, w->dropped_first, w->dropped_last);
		w->dropped = 0;
	}
	if (noting) {
		/* what the notes just written report: a reader counts the rest as unnoted */
		__atomic_store_n(&w->ring->noted, w->ring->noted + noting, __ATOMIC_RELAXED);
	}
	if (payload)
		rt_write_payload_record(w, kind, nslots, id, now, payload, bytes);
	else
		ringtrace__write_record(w, w->head, nslots, RT_REC_TRACE, id, now, a32[0], a32[1],
					a32[2], a32[3], a64[0], a64[1]);
}

/* A signal handler interrupted this thread inside a record: the event is counted, not written. */
void rt_count_nested(struct ringtrace__writer *w)
{
	/* an atomic add is signal-safe */
	int state = __atomic_load_n(&rt_arena.state, __ATOMIC_ACQUIRE);
	if (w->lent) {
		rt_vfork_count_event();
	} else if (w->state == RT_WRITER_ATTACHED) {
		__atomic_fetch_add(&w->nested, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&w->ring->dropped, 1, __ATOMIC_RELAXED);
	} else if (state == RT_ON) {
		__atomic_fetch_add(&rt_arena.header->lost_untracked, 1, __ATOMIC_RELAXED);
	} else if (state == RT_STARTING || state == RT_OFF_NOT_STARTED) {
		/* the interrupted thread is starting the arena or waiting for it */
		__atomic_fetch_add(&rt_arena.lost_while_starting, 1, __ATOMIC_RELAXED);
		if (rt_arena_on())
			rt_arena_account_start_losses();
	}
}

void rt_record_payload(struct ringtrace__writer *w, struct ringtrace__site_body *site, uint8_t kind,
		       const uint8_t *payload, uint32_t bytes, uint64_t at)
{
	/* what the crash handler and a ringless thread keep: the payload's first words */
	uint32_t a32[4] = {0, 0, 0, 0};
	uint64_t a64[2] = {0, 0};
	memcpy(a32, payload, bytes < sizeof(a32) ? bytes : sizeof(a32));
	record(w, site, a32, a64, kind, payload, bytes, at);
}

void rt_emit_trace_at(struct ringtrace__site_body *site, uint64_t at, const uint32_t a32[4],
		      const uint64_t a64[2])
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (!rt_writer_enter(w))
		return;
	record(w, site, a32, a64, RT_REC_TRACE, NULL, 0, at ? at : 1);
	rt_writer_leave(w);
}

void rt_emit_trace(struct ringtrace__site_body *site, uint32_t a0, uint32_t a1, uint32_t a2,
		   uint32_t a3, uint64_t a4, uint64_t a5)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (!rt_writer_enter(w))
		return;
	const uint32_t a32[4] = {a0, a1, a2, a3};
	const uint64_t a64[2] = {a4, a5};
	record(w, site, a32, a64, RT_REC_TRACE, NULL, 0, 0);
	rt_writer_leave(w);
}

void rt_count_refused_event(void)
{
	static const uint32_t a32[4];
	static const uint64_t a64[2];
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (!rt_writer_enter(w))
		return;
	record(w, NULL, a32, a64, RT_REC_TRACE, NULL, 0, 0);
	rt_writer_leave(w);
}
