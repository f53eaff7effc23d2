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
 *
 * Entries.  A thread takes a never-used entry first (threads_used), then
 * the entry of the thread that ended longest ago, so that only threads
 * alive at once are limited by the table.  An entry may be taken over once
 * its thread ended and let its ring go (thread_exit, or its vfork parent):
 * rt_entry_released says so, in process memory, since the arena cannot
 * tell a thread that let its ring go from one that ended with the process
 * and kept it.  The new occupant turns the state from EXITED to FREE with
 * a compare-and-swap (two threads never share an entry; readers skip a
 * FREE one), checks that the serial it chose by is still the entry's
 * (another thread may have taken and ended it in between), rewrites the
 * entry with serial + 1, and publishes it LIVE.  The ended occupant's
 * lost_no_ring moves into the header's lost_reused, so that no count of
 * losses disappears with it.  While a collector drains the arena (or is
 * announced and not yet attached), an entry waits for the collector's word
 * (collected = serial + 1) that it wrote the ended occupant out and
 * drained its records; a thread that finds every ended entry waiting waits
 * for it at most RT_ENTRY_WAIT_NS.  A thread that never ran its exit
 * handler (killed by pthread_cancel with no cleanup, or still alive)
 * keeps its entry for the life of the process.
 *
 * Claiming an ended entry, or a released ring.  Threads that start
 * together all pick the same oldest one, and all but one lose the
 * compare-and-swap.  A loser looks again for as long as one is left, with
 * no cap on the tries: each lost race is an entry or ring another thread
 * took (or, for the serial check, took and ended), so the tries end when
 * the table does.  A cap of eight tries left one of 64 threads starting
 * together with no entry though ended ones were there to take: untracked,
 * every event it recorded lost.
 *
 * Claiming pages.  A ring's pages come into the arena file as the ring fills, not
 * when a thread takes it: claiming a whole ring of 16 MiB (posix_fallocate,
 * which zeroes every page) would hold the thread's first event for
 * milliseconds, and a thread that records little would hold memory it never
 * uses.  A page must exist before the first store into it: the arena is a
 * shared file mapping, and a store into a page the file system cannot
 * provide (a full tmpfs) is a SIGBUS.  So:
 *
 *  - taking a never-used ring claims its first RT_CLAIM_FIRST_BYTES;
 *  - the writer remembers where the claimed pages end (w->claimed, a ring
 *    seq: during the ring's first lap seq and slot index are one), and its
 *    limit never reaches past the slot before it: the fast path, which
 *    runs while head + nslots <= limit, never touches an unclaimed page,
 *    and the slot at head always lies in a claimed page, since readers
 *    look at it (a hole in a tmpfs file is read as zeros, but reading it
 *    through a mapping makes the page exist, and on a full file system a
 *    reader would get the SIGBUS);
 *  - when the slow path finds the limit there, it claims the next pages
 *    (at most RT_CLAIM_BYTES: the one event that pays for them waits a few
 *    microseconds); once the whole ring is claimed, w->claimed is
 *    UINT64_MAX and the limit is what the mode makes it;
 *  - a claim that fails leaves the limit where it was: the events that do
 *    not fit are dropped and counted (ring dropped, an RT_REC_LOST note),
 *    as a full ring's are in stream mode, in both modes; the thread tries
 *    again after RT_CLAIM_RETRY_EVENTS more events;
 *  - a ring that passes to another thread was claimed at least up to the
 *    page after the one holding its head: the new owner starts there.
 *
 * Memory: a ring holds the pages its thread wrote plus at most
 * RT_CLAIM_BYTES ahead, until its first lap ends; from then on all of it,
 * as before.  Claimed pages stay claimed when the ring changes hands.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"

/* glibc >= 2.35 registers rseq for every thread; its cpu_id is one load away. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
static const int32_t rt_cpu_unknown = -1;

#define RT_CLAIM_PAGE 4096u
/*
 * A new ring's first claim: what the thread's first event pays for, one
 * page (posix_fallocate zeroes what it claims: four pages cost a first
 * event about 3 us more on a 2-vCPU VM).
 */
#define RT_CLAIM_FIRST_BYTES (4u << 10)
/* Each later claim, in the ring's first 64 KiB: RT_CLAIM_FIRST_BYTES. */
#define RT_CLAIM_BYTES (64u << 10)
#define RT_CLAIM_RETRY_EVENTS 1024u
/* Head this close to the claimed end: a record and two lost notes may not fit. */
#define RT_CLAIM_NEAR_SLOTS (RT_LOG_MAX_SLOTS + 2 * 2 + 1)
/* How long a starting thread waits for a collector to free an ended entry. */
#define RT_ENTRY_WAIT_NS 20000000L
#define RT_ENTRY_WAIT_STEP_NS 200000L

static pthread_key_t rt_exit_key;
static int rt_exit_key_ok;

/*
 * Attached writers, by thread-table index, so that ringtrace_shutdown() can
 * stop other threads.  The lock is taken only by shutdown and thread exit,
 * never on the recording path (attach publishes with an atomic store).
 */
static struct ringtrace__writer *rt_writers[4 * RT_MAX_RINGS];
static pthread_mutex_t rt_writers_lock = PTHREAD_MUTEX_INITIALIZER;

/* By thread-table index: 1 once the entry's thread ended and let its ring go. */
static uint8_t rt_entry_released[4 * RT_MAX_RINGS];
/* A collector attached once: when it leaves, ended entries no longer wait for it. */
static int rt_collector_seen;

static const volatile int32_t *current_cpu_pointer(void)
{
	if (&__rseq_offset && &__rseq_size && __rseq_size >= 8)
		return (const volatile int32_t *)((char *)__builtin_thread_pointer() +
						  __rseq_offset + 4);
	return &rt_cpu_unknown;
}

/*
 * A thread's name into its entry, word by word: the thread itself and the
 * one ending the process may both name it, and a collector copies it live.
 */
static void entry_set_name(struct rt_thread_entry *e, const char *name)
{
	uint64_t words[RT_NAME_MAX / 8];
	memset(words, 0, sizeof(words));
	memcpy(words, name, strnlen(name, RT_NAME_MAX - 1));
	uint64_t *to = (uint64_t *)(void *)e->name;
	for (size_t i = 0; i < RT_NAME_MAX / 8; i++)
		__atomic_store_n(&to[i], words[i], __ATOMIC_RELAXED);
}

static void entry_name_from_kernel(struct rt_thread_entry *e)
{
	char name[RT_NAME_MAX + 1];
	memset(name, 0, sizeof(name));
	if (prctl(PR_GET_NAME, name, 0, 0, 0) == 0)
		entry_set_name(e, name);
}

/*
 * Thread tid's name as the kernel has it now (pthread_setname_np since it
 * attached), from another thread of the process: 1 and name, or 0.
 */
static int name_of_task(int32_t tid, char name[RT_NAME_MAX])
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, name, RT_NAME_MAX);
	close(fd);
	if (n <= 0)
		return 0;
	size_t len = (size_t)n < RT_NAME_MAX ? (size_t)n : RT_NAME_MAX - 1;
	if (len && name[len - 1] == '\n')
		len--;
	memset(name + len, 0, RT_NAME_MAX - len);
	return 1;
}

/* The ring of the thread that exited longest ago, taken over atomically. */
static int take_oldest_released_ring(uint32_t *out)
{
	struct rt_arena_header *h = rt_arena.header;
	for (;;) { /* a lost race is a ring another thread took: look again */
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
}

/* Claim [from, to) of ring r; the writer's claimed end after it (UINT64_MAX: all of it). */
static int claim_pages(uint32_t r, uint64_t from_slot, uint64_t to_slot, uint64_t *claimed)
{
	if (to_slot > rt_arena.ring_slots)
		to_slot = rt_arena.ring_slots;
	if (rt_arena_claim_ring(r, from_slot * RT_SLOT_SIZE, to_slot * RT_SLOT_SIZE) != 0)
		return -1;
	*claimed = to_slot == rt_arena.ring_slots ? UINT64_MAX : to_slot;
	return 0;
}

/* A ring, and where its claimed pages end (known to end at least there). */
static int take_ring(uint32_t *out, uint64_t *claimed)
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
			if (claim_pages(r, 0, RT_CLAIM_FIRST_BYTES / RT_SLOT_SIZE, claimed) != 0)
				return -1; /* no memory for it: this ring stays unused */
			__atomic_store_n(&rt_arena.rings[r].state, RT_RING_OWNED, __ATOMIC_RELEASE);
			*out = r;
			return 0;
		}
	}
	if (take_oldest_released_ring(out) != 0)
		return -1;
	/* the page holding its head was claimed (see the top): the next one may not be */
	uint64_t head = __atomic_load_n(&rt_arena.rings[*out].head, __ATOMIC_RELAXED);
	const uint64_t page = RT_CLAIM_PAGE / RT_SLOT_SIZE;
	*claimed = head >= rt_arena.ring_slots - page ? UINT64_MAX : (head / page + 1) * page;
	return 0;
}

uint64_t rt_thread_claimed_limit(struct ringtrace__writer *w, uint64_t limit)
{
	/* the slot at head stays inside the claimed pages: readers look at it */
	if (w->claimed == UINT64_MAX || limit < w->claimed)
		return limit;
	/* claim only when the head is near: not for a thread that just took the ring */
	if (w->claimed - w->head > RT_CLAIM_NEAR_SLOTS)
		return w->claimed - 1;
	if (w->claim_wait) {
		w->claim_wait--;
		return w->claimed - 1;
	}
	uint64_t bytes =
	    w->claimed * RT_SLOT_SIZE < RT_CLAIM_BYTES ? RT_CLAIM_FIRST_BYTES : RT_CLAIM_BYTES;
	uint32_t r = (uint32_t)(w->ring - rt_arena.rings);
	if (claim_pages(r, w->claimed, w->claimed + bytes / RT_SLOT_SIZE, &w->claimed) != 0) {
		/* the events that do not fit are dropped and counted: try again later */
		w->claim_wait = RT_CLAIM_RETRY_EVENTS;
		return w->claimed - 1;
	}
	return w->claimed == UINT64_MAX || limit < w->claimed ? limit : w->claimed - 1;
}

/* Give the writer ring r; the thread entry records where its records begin. */
static void bind_ring(struct ringtrace__writer *w, struct rt_thread_entry *e, uint32_t r,
		      uint64_t claimed)
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
	w->claimed = claimed;
	w->claim_wait = 0;
	__atomic_store_n(&e->ring, r, __ATOMIC_RELEASE);
	w->state = RT_WRITER_ATTACHED;
	rt_writer_set_limit(w);
}

/* Whether an ended entry must wait for a collector to write it out before it is taken over. */
static int collector_expected(void)
{
	if (__atomic_load_n(&rt_arena.header->collector_pid, __ATOMIC_ACQUIRE) != 0) {
		__atomic_store_n(&rt_collector_seen, 1, __ATOMIC_RELAXED);
		return 1;
	}
	return rt_arena.collector != 0 && !__atomic_load_n(&rt_collector_seen, __ATOMIC_RELAXED);
}

/*
 * The entry of the thread that ended longest ago, claimed (state FREE, see
 * the top); its index and the old occupant's serial, or UINT32_MAX.
 * *waiting: 1 if an ended entry waits for the collector.
 */
static uint32_t take_ended_entry(uint32_t *serial, int *waiting)
{
	struct rt_arena_header *h = rt_arena.header;
	uint32_t n = __atomic_load_n(&h->threads_used, __ATOMIC_RELAXED);
	if (n > h->thread_capacity)
		n = h->thread_capacity;
	int collector = collector_expected();
	*waiting = 0;
	for (;;) { /* see "Claiming an ended entry" at the top */
		uint32_t best = UINT32_MAX, best_serial = 0;
		uint64_t best_time = UINT64_MAX;
		for (uint32_t i = 0; i < n; i++) {
			if (!__atomic_load_n(&rt_entry_released[i], __ATOMIC_ACQUIRE))
				continue;
			struct rt_thread_entry *e = &rt_arena.threads[i];
			if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != RT_THREAD_EXITED)
				continue;
			uint32_t serial_now = __atomic_load_n(&e->serial, __ATOMIC_RELAXED);
			if (serial_now == UINT32_MAX)
				continue; /* its serial would wrap: this entry is done */
			if (collector &&
			    __atomic_load_n(&e->collected, __ATOMIC_ACQUIRE) != serial_now + 1) {
				*waiting = 1;
				continue;
			}
			uint64_t t = __atomic_load_n(&e->exit_counter, __ATOMIC_RELAXED);
			if (t < best_time) {
				best_time = t;
				best = i;
				best_serial = serial_now;
			}
		}
		if (best == UINT32_MAX)
			return UINT32_MAX;
		struct rt_thread_entry *e = &rt_arena.threads[best];
		uint32_t expected = RT_THREAD_EXITED;
		if (!__atomic_compare_exchange_n(&e->state, &expected, RT_THREAD_FREE, 0,
						 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			continue;
		if (__atomic_load_n(&e->serial, __ATOMIC_RELAXED) != best_serial) {
			/* taken and ended again since we looked: not checked for the collector */
			__atomic_store_n(&e->state, RT_THREAD_EXITED, __ATOMIC_RELEASE);
			continue;
		}
		__atomic_store_n(&rt_entry_released[best], 0, __ATOMIC_RELAXED);
		*serial = best_serial;
		return best;
	}
}

/* A never-used entry, else an ended thread's (waiting a while for a collector); or UINT32_MAX. */
static uint32_t take_entry(uint32_t *serial)
{
	struct rt_arena_header *h = rt_arena.header;
	*serial = 0;
	if (__atomic_load_n(&h->threads_used, __ATOMIC_RELAXED) < h->thread_capacity) {
		uint32_t index = __atomic_fetch_add(&h->threads_used, 1, __ATOMIC_RELAXED);
		if (index < h->thread_capacity)
			return index;
	}
	int waiting = 0;
	uint32_t index = take_ended_entry(serial, &waiting);
	for (long waited = 0; index == UINT32_MAX && waiting && waited < RT_ENTRY_WAIT_NS;
	     waited += RT_ENTRY_WAIT_STEP_NS) {
		struct timespec step = {0, RT_ENTRY_WAIT_STEP_NS};
		nanosleep(&step, NULL);
		index = take_ended_entry(serial, &waiting);
	}
	if (index == UINT32_MAX)
		return UINT32_MAX;
	/*
	 * Ours (state FREE): what the ended occupant counted stays counted,
	 * and nothing of it stays for the new one to be taken for its own.
	 */
	struct rt_thread_entry *e = &rt_arena.threads[index];
	uint64_t lost = __atomic_load_n(&e->lost_no_ring, __ATOMIC_RELAXED);
	if (lost)
		__atomic_fetch_add(&h->lost_reused, lost, __ATOMIC_RELAXED);
	__atomic_fetch_add(&h->threads_reused, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&e->lost_no_ring, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->exit_counter, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->last[0].valid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->last[1].valid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&e->serial, *serial + 1, __ATOMIC_RELAXED);
	*serial += 1;
	return index;
}

void rt_thread_attach(struct ringtrace__writer *w)
{
	struct rt_arena_header *h = rt_arena.header;
	uint32_t serial;
	uint32_t index = take_entry(&serial);
	if (index == UINT32_MAX) {
		__atomic_fetch_add(&h->threads_untracked, 1, __ATOMIC_RELAXED);
		w->state = RT_WRITER_UNTRACKED;
		return;
	}
	/*
	 * A vfork child (vfork.c) maps no signal stack (the mapping would stay
	 * in its parent's address space), registers no exit key (its parent's
	 * thread ends the entry), and has no rseq area of its own: the one it
	 * shares is its parent's, which the kernel does not update for it.
	 */
	int vfork_child = w->vfork_child != 0;
	if (!vfork_child)
		rt_crash_thread_start(); /* so that a stack overflow still dumps; freed in
					    thread_exit */
	struct rt_thread_entry *e = &rt_arena.threads[index];
	e->tid = rt_gettid();
	e->ring = RT_NO_RING;
	e->flags = vfork_child ? RT_THREAD_F_VFORK_CHILD : 0;
	e->first_record = 0;
	e->end_record = UINT64_MAX;
	e->start_counter = ringtrace__counter();
	entry_name_from_kernel(e);
	w->thread = index;
	w->cpu = vfork_child ? &rt_cpu_unknown : current_cpu_pointer();
	w->state = RT_WRITER_NO_RING;

	uint32_t r;
	uint64_t claimed;
	if (take_ring(&r, &claimed) == 0)
		bind_ring(w, e, r, claimed);
	/* publishes: the entry, with its ring and first record */
	__atomic_store_n(&e->state, RT_THREAD_LIVE, __ATOMIC_RELEASE);

	__atomic_store_n(&rt_writers[index], w, __ATOMIC_SEQ_CST);
	if (rt_exit_key_ok && !vfork_child)
		pthread_setspecific(rt_exit_key, w);
	/* a shutdown that ran while we attached may have missed us */
	if (!rt_arena_on())
		__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
	rt_clock_refresh(h, 0);
}

void rt_thread_retry_ring(struct ringtrace__writer *w)
{
	uint32_t r;
	uint64_t claimed;
	if (take_ring(&r, &claimed) == 0)
		bind_ring(w, &rt_arena.threads[w->thread], r, claimed);
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
	last->flags = ev->flags;
	last->ring_records = ev->ring_records;
	memcpy(last->a32, ev->a32, sizeof(last->a32));
	memcpy(last->a64, ev->a64, sizeof(last->a64));
	/* publishes: the complete copy, newer than the other */
	__atomic_store_n(&last->valid, next, __ATOMIC_RELEASE);
}

/*
 * Before the ring may pass to another thread: keep its newest event apart.
 * Events dropped since the ring's last record (w->dropped, not noted yet)
 * came after it and are kept already.  Program order decides, not the
 * counters: a coarse counter (AArch64's runs at tens of MHz) stamps a
 * record and the drops behind it alike.
 */
static void keep_last_from_ring(struct ringtrace__writer *w, struct rt_thread_entry *e)
{
	if (w->state != RT_WRITER_ATTACHED || w->records == e->first_record || w->dropped)
		return;
	uint64_t at = w->head - 1;
	if (w->slots[at & w->mask].head.kind == RT_REC_CONT)
		at--;
	const struct rt_slot_head *s = &w->slots[at & w->mask].head;
	if (s->kind != RT_REC_TRACE)
		return;
	struct rt_last_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.flags = RT_LAST_F_RING_RECORDS;
	ev.ring_records = s->record; /* it is that record */
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

static void detach(struct ringtrace__writer *w, int release_ring, int rename)
{
	if (w->state != RT_WRITER_ATTACHED && w->state != RT_WRITER_NO_RING)
		return;
	w->busy = 1; /* a signal handler tracing now must not write */
	struct rt_thread_entry *e = &rt_arena.threads[w->thread];
	keep_last_from_ring(w, e);
	if (rename && !w->named)
		entry_name_from_kernel(e); /* it may have been renamed since it attached */
	uint64_t now = ringtrace__counter();
	__atomic_store_n(&e->exit_counter, now, __ATOMIC_RELAXED); /* threads taking over read it */
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
	/* publishes: an ended entry that holds no ring, which another thread may take over */
	if (release_ring)
		__atomic_store_n(&rt_entry_released[w->thread], 1, __ATOMIC_RELEASE);
	w->state = RT_WRITER_DETACHED;
	w->slots = NULL;
	__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
	w->busy = 0;
}

static void thread_exit(void *arg)
{
	rt_fn_thread_end(); /* its exits go into the ring before the ring is let go */
	if (rt_arena_on())
		detach((struct ringtrace__writer *)arg, 1, 1);
	rt_crash_thread_end();
}

void rt_thread_finish_current(void)
{
	/* the process is ending: the ring stays with this thread */
	detach(&ringtrace__tls_writer, 0, 1);
}

void rt_thread_end_vfork_child(struct ringtrace__writer *w)
{
	/* the kernel's name for the calling thread is the parent's, not the child's */
	if (rt_arena_on())
		detach(w, 1, 0);
}

void rt_threads_stop_all(void)
{
	pthread_mutex_lock(&rt_writers_lock);
	uint32_t n = __atomic_load_n(&rt_arena.header->threads_used, __ATOMIC_RELAXED);
	if (n > rt_arena.header->thread_capacity)
		n = rt_arena.header->thread_capacity;
	for (uint32_t i = 0; i < n; i++) {
		struct ringtrace__writer *w = __atomic_load_n(&rt_writers[i], __ATOMIC_SEQ_CST);
		if (!w)
			continue;
		/* release: a writer that stores its limit after this one sees the state off */
		__atomic_store_n(&w->limit, 0, __ATOMIC_RELEASE);
		/* a thread still alive never detaches: its entry gets its latest name here */
		struct rt_thread_entry *e = &rt_arena.threads[i];
		char name[RT_NAME_MAX];
		if (!__atomic_load_n(&w->named, __ATOMIC_RELAXED) &&
		    __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == RT_THREAD_LIVE &&
		    name_of_task(e->tid, name))
			entry_set_name(e, name);
	}
	pthread_mutex_unlock(&rt_writers_lock);
}

void rt_threads_forget_after_fork(void)
{
	/* RT_WRITER_NEW with limit 0: the next event takes the slow path and attaches */
	memset(&ringtrace__tls_writer, 0, sizeof(ringtrace__tls_writer));
	pthread_mutex_init(&rt_writers_lock, NULL);
	memset(rt_writers, 0, sizeof(rt_writers));
	memset(rt_entry_released, 0, sizeof(rt_entry_released));
	rt_collector_seen = 0;
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
		entry_set_name(&rt_arena.threads[w->thread], name);
		__atomic_store_n(&w->named, 1, __ATOMIC_RELAXED);
	}
	w->busy = 0;
}
