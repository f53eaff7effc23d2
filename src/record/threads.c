/*
 * threads.c - a thread's place in the arena: its thread-table entry, its
 * ring, and the end of both when it exits.
 *
 * A thread gets a ring on its first event: a never-used ring first, then the
 * ring of the thread that exited longest ago.  A ring that changes hands
 * keeps its sequence numbers running, and each owner's thread entry says
 * which record numbers were its own, so a reader attributes every record in
 * a reused ring to the right thread.  A thread that finds no ring keeps an
 * entry, counts what it loses, and keeps its last event there.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>

#include "record/record.h"

/* glibc >= 2.35 registers rseq for every thread; its cpu_id is one load away. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
static const int32_t rt_cpu_unknown = -1;

static pthread_key_t rt_exit_key;
static int rt_exit_key_ok;

/*
 * Attached writers, by thread-table index, so that ringtrace_shutdown() can
 * stop other threads.  The lock is taken only by shutdown and thread exit,
 * never on the recording path (attach publishes with an atomic store).
 */
static struct ringtrace__writer *rt_writers[4 * RT_MAX_RINGS];
static pthread_mutex_t rt_writers_lock = PTHREAD_MUTEX_INITIALIZER;

static const volatile int32_t *current_cpu_pointer(void)
{
	if (&__rseq_offset && &__rseq_size && __rseq_size >= 8)
		return (const volatile int32_t *)((char *)__builtin_thread_pointer() +
						  __rseq_offset + 4);
	return &rt_cpu_unknown;
}

static void entry_name_from_kernel(struct rt_thread_entry *e)
{
	char name[RT_NAME_MAX + 1];
	memset(name, 0, sizeof(name));
	if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0)
		memcpy(e->name, name, RT_NAME_MAX - 1);
}

/* The ring of the thread that exited longest ago, taken over atomically. */
static int take_oldest_released_ring(uint32_t *out)
{
	struct rt_arena_header *h = rt_arena.header;
	for (int attempt = 0; attempt < 8; attempt++) {
		uint32_t best = RT_NO_RING;
		uint64_t best_time = UINT64_MAX;
		for (uint32_t r = 0; r < h->ring_count; r++) {
			struct rt_ring_desc *d = &rt_arena.rings[r];
			if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) != RT_RING_RELEASED)
				continue;
			uint64_t t = __atomic_load_n(&d->released_counter, __ATOMIC_RELAXED);
			if (t < best_time) {
				best_time = t;
				best = r;
			}
		}
		if (best == RT_NO_RING)
			return -1;
		uint32_t expected = RT_RING_RELEASED;
		if (__atomic_compare_exchange_n(&rt_arena.rings[best].state, &expected,
						RT_RING_OWNED, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED)) {
			__atomic_fetch_add(&h->ring_reuses, 1, __ATOMIC_RELAXED);
			*out = best;
			return 0;
		}
	}
	return -1;
}

static int take_ring(uint32_t *out)
{
	struct rt_arena_header *h = rt_arena.header;
	/*
	 * A compare-and-swap rather than an add: rings_used never passes
	 * ring_count, even for an instant, so every reader can trust it (threads
	 * starting together used to push it past the count and leave it there).
	 */
	uint32_t r = __atomic_load_n(&h->rings_used, __ATOMIC_RELAXED);
	while (r < h->ring_count) {
		if (__atomic_compare_exchange_n(&h->rings_used, &r, r + 1, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED)) {
			if (rt_arena_allocate_ring(r) != 0)
				return -1; /* no memory for it: this ring stays unused */
			__atomic_store_n(&rt_arena.rings[r].state, RT_RING_OWNED, __ATOMIC_RELEASE);
			*out = r;
			return 0;
		}
	}
	return take_oldest_released_ring(out);
}

/* Give the writer ring r; the thread entry records where its records begin. */
static void bind_ring(struct ringtrace__writer *w, struct rt_thread_entry *e, uint32_t r)
{
	struct rt_ring_desc *d = &rt_arena.rings[r];
	d->owner = w->thread;
	uint64_t head = __atomic_load_n(&d->head, __ATOMIC_RELAXED);
	__atomic_store_n(&d->reserve, head, __ATOMIC_RELAXED);
	w->ring = d;
	w->slots = rt_arena_ring_slots(r);
	w->mask = rt_arena.ring_slots - 1;
	w->head = head;
	w->records = __atomic_load_n(&d->records, __ATOMIC_RELAXED);
	e->first_record = w->records;
	__atomic_store_n(&e->ring, r, __ATOMIC_RELEASE);
	w->state = RT_WRITER_ATTACHED;
	rt_writer_set_limit(w);
}

void rt_thread_attach(struct ringtrace__writer *w)
{
	struct rt_arena_header *h = rt_arena.header;
	uint32_t index = __atomic_load_n(&h->threads_used, __ATOMIC_RELAXED) < h->thread_capacity
			     ? __atomic_fetch_add(&h->threads_used, 1, __ATOMIC_RELAXED)
			     : UINT32_MAX;
	if (index >= h->thread_capacity) {
		__atomic_fetch_add(&h->threads_untracked, 1, __ATOMIC_RELAXED);
		w->state = RT_WRITER_UNTRACKED;
		return;
	}
	rt_crash_thread_start(); /* so that a stack overflow still dumps; freed in thread_exit */
	struct rt_thread_entry *e = &rt_arena.threads[index];
	e->tid = rt_gettid();
	e->ring = RT_NO_RING;
	e->end_record = UINT64_MAX;
	e->start_counter = ringtrace__counter();
	entry_name_from_kernel(e);
	w->thread = index;
	w->cpu = current_cpu_pointer();
	w->state = RT_WRITER_NO_RING;

	uint32_t r;
	if (take_ring(&r) == 0)
		bind_ring(w, e, r);
	/* publishes: the entry, with its ring and first record */
	__atomic_store_n(&e->state, RT_THREAD_LIVE, __ATOMIC_RELEASE);

	__atomic_store_n(&rt_writers[index], w, __ATOMIC_SEQ_CST);
	if (rt_exit_key_ok)
		pthread_setspecific(rt_exit_key, w);
	/* a shutdown that ran while we attached may have missed us */
	if (!rt_arena_on())
		__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
	rt_clock_refresh(h, 0);
}

void rt_thread_retry_ring(struct ringtrace__writer *w)
{
	uint32_t r;
	if (take_ring(&r) == 0)
		bind_ring(w, &rt_arena.threads[w->thread], r);
}

void rt_thread_keep_last(struct ringtrace__writer *w, const struct rt_last_event *ev)
{
	struct rt_thread_entry *e = &rt_arena.threads[w->thread];
	uint32_t g0 = __atomic_load_n(&e->last[0].valid, __ATOMIC_RELAXED);
	uint32_t g1 = __atomic_load_n(&e->last[1].valid, __ATOMIC_RELAXED);
	/* overwrite the older copy: the newer one stays whole if we die meanwhile */
	int older = (g0 == 0 || (g1 != 0 && (int32_t)(g0 - g1) < 0)) ? 0 : 1;
	uint32_t next = (int32_t)(g0 - g1) > 0 ? g0 + 1 : g1 + 1;
	if (next == 0)
		next = 1;
	struct rt_last_event *last = &e->last[older];
	__atomic_store_n(&last->valid, 0, __ATOMIC_RELAXED);
	/* publishes: valid = 0 before the copy changes (a reader skips it) */
	RT_FENCE_RELEASE();
	last->site = ev->site;
	last->counter = ev->counter;
	last->cpu = ev->cpu;
	last->kind = ev->kind;
	memcpy(last->a32, ev->a32, sizeof(last->a32));
	memcpy(last->a64, ev->a64, sizeof(last->a64));
	/* publishes: the complete copy, newer than the other */
	__atomic_store_n(&last->valid, next, __ATOMIC_RELEASE);
}

/* Before the ring may pass to another thread: keep its newest event apart. */
static void keep_last_from_ring(struct ringtrace__writer *w, struct rt_thread_entry *e)
{
	if (w->state != RT_WRITER_ATTACHED || w->records == e->first_record)
		return;
	uint64_t at = w->head - 1;
	if (w->slots[at & w->mask].head.kind == RT_REC_CONT)
		at--;
	const struct rt_slot_head *s = &w->slots[at & w->mask].head;
	if (s->kind != RT_REC_TRACE)
		return;
	struct rt_last_event kept;
	if (rt_last_event_read(e, &kept) && kept.counter > s->counter)
		return; /* a dropped event came later */
	struct rt_last_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.site = s->site;
	ev.counter = s->counter;
	ev.cpu = s->cpu;
	ev.kind = s->kind;
	ev.a32[0] = s->a0;
	ev.a32[1] = s->a1;
	if (s->nslots > 1) {
		const struct rt_slot_cont *c = &w->slots[(at + 1) & w->mask].cont;
		ev.a32[2] = c->a2;
		ev.a32[3] = c->a3;
		ev.a64[0] = c->a4;
		ev.a64[1] = c->a5;
	}
	rt_thread_keep_last(w, &ev);
}

static void detach(struct ringtrace__writer *w, int release_ring)
{
	if (w->state != RT_WRITER_ATTACHED && w->state != RT_WRITER_NO_RING)
		return;
	w->busy = 1; /* a signal handler tracing now must not write */
	struct rt_thread_entry *e = &rt_arena.threads[w->thread];
	keep_last_from_ring(w, e);
	if (!w->named)
		entry_name_from_kernel(e); /* it may have been renamed since it attached */
	uint64_t now = ringtrace__counter();
	e->exit_counter = now;
	if (w->state == RT_WRITER_ATTACHED) {
		e->end_record = w->records;
		if (release_ring) {
			__atomic_store_n(&w->ring->released_counter, now, __ATOMIC_RELAXED);
			/* publishes: the end of this thread's records; the ring may be reused */
			__atomic_store_n(&w->ring->state, RT_RING_RELEASED, __ATOMIC_RELEASE);
		}
	}
	__atomic_store_n(&e->state, RT_THREAD_EXITED, __ATOMIC_RELEASE);

	pthread_mutex_lock(&rt_writers_lock);
	__atomic_store_n(&rt_writers[w->thread], NULL, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&rt_writers_lock);
	w->state = RT_WRITER_DETACHED;
	w->slots = NULL;
	__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
	w->busy = 0;
}

static void thread_exit(void *arg)
{
	rt_fn_thread_end(); /* its exits go into the ring before the ring is let go */
	if (rt_arena_on())
		detach((struct ringtrace__writer *)arg, 1);
	rt_crash_thread_end();
}

void rt_thread_finish_current(void)
{
	/* the process is ending: the ring stays with this thread */
	detach(&ringtrace__tls_writer, 0);
}

void rt_threads_stop_all(void)
{
	pthread_mutex_lock(&rt_writers_lock);
	uint32_t n = __atomic_load_n(&rt_arena.header->threads_used, __ATOMIC_RELAXED);
	if (n > rt_arena.header->thread_capacity)
		n = rt_arena.header->thread_capacity;
	for (uint32_t i = 0; i < n; i++) {
		struct ringtrace__writer *w = __atomic_load_n(&rt_writers[i], __ATOMIC_SEQ_CST);
		if (w)
			__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&rt_writers_lock);
}

void rt_threads_forget_after_fork(void)
{
	/* RT_WRITER_NEW with limit 0: the next event takes the slow path and attaches */
	memset(&ringtrace__tls_writer, 0, sizeof(ringtrace__tls_writer));
	pthread_mutex_init(&rt_writers_lock, NULL);
	memset(rt_writers, 0, sizeof(rt_writers));
}

/* See rt_arena_register_fork_handler: start-up work that must not wait for a signal handler. */
__attribute__((constructor)) static void rt_threads_create_exit_key(void)
{
	rt_exit_key_ok = pthread_key_create(&rt_exit_key, thread_exit) == 0;
}

RT_EXPORT void ringtrace_set_thread_name(const char *name)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (!name || w->busy || w->lent || !rt_arena_ensure_started(NULL, NULL))
		return;
	w->busy = 1;
	if (w->state == RT_WRITER_NEW)
		rt_thread_attach(w);
	if (w->state == RT_WRITER_ATTACHED || w->state == RT_WRITER_NO_RING) {
		char *dst = rt_arena.threads[w->thread].name;
		size_t n = strnlen(name, RT_NAME_MAX - 1);
		memcpy(dst, name, n);
		memset(dst + n, 0, RT_NAME_MAX - n);
		w->named = 1;
	}
	w->busy = 0;
}
