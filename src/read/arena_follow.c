/*
 * arena_follow.c - following a live arena poll by poll (read/arena_follow.h):
 * the rings' heads, the tables read again when they changed, the records
 * published since, ordered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "format/arena_layout.h"
#include "read/arena_follow.h"

/* One item's place in the batch's time order. */
struct rt_follow_order {
	uint64_t key; /* its counter, or its thread's latest one before it (a clock stepped back) */
	uint64_t seq;
	int32_t tid;
	uint32_t index; /* in the batch as the rings gave it */
};

static const struct rt_arena_header *live_header(const struct rt_follower *f)
{
	return (const struct rt_arena_header *)f->rd->file;
}

static void read_marks(const struct rt_follower *f, struct rt_follow_table_marks *m)
{
	const struct rt_arena_header *h = live_header(f);
	m->threads_used = __atomic_load_n(&h->threads_used, __ATOMIC_ACQUIRE);
	m->sites_used = __atomic_load_n(&h->sites_used, __ATOMIC_ACQUIRE);
	m->modules_used = __atomic_load_n(&h->modules_used, __ATOMIC_ACQUIRE);
	m->module_unloads = __atomic_load_n(&h->module_unloads, __ATOMIC_ACQUIRE);
	m->strings_used = __atomic_load_n(&h->strings_used, __ATOMIC_ACQUIRE);
}

int rt_follower_init(struct rt_follower *f, struct rt_reader *rd)
{
	memset(f, 0, sizeof(*f));
	f->rd = rd;
	read_marks(f, &f->marks);
	const size_t rings = (size_t)rd->header.ring_count + 1;
	f->cursors = calloc(rings, sizeof(*f->cursors));
	f->saved = calloc(rings, sizeof(*f->saved));
	f->heads = calloc(rings, sizeof(*f->heads));
	if (!f->cursors || !f->saved || !f->heads) {
		rt_follower_free(f);
		return -ENOMEM;
	}
	return 0;
}

void rt_follower_free(struct rt_follower *f)
{
	free(f->cursors);
	free(f->saved);
	free(f->heads);
	free(f->batch.items);
	free(f->latest);
	free(f->order);
	struct rt_reader *rd = f->rd;
	memset(f, 0, sizeof(*f));
	f->rd = rd;
}

/* A thread named itself since the table was read (the name is not counted anywhere). */
static int renamed(const struct rt_follower *f)
{
	const struct rt_reader *rd = f->rd;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_thread_entry *e =
		    (const struct rt_thread_entry *)(rd->file +
						     rt_layout_thread_offset(&rd->header,
									     rd->threads[i].entry));
		char name[RT_NAME_MAX];
		memcpy(name, e->name, sizeof(name));
		name[sizeof(name) - 1] = 0;
		if (strncmp(name, rd->threads[i].name, sizeof(name)) != 0)
			return 1;
	}
	return 0;
}

static int reload(struct rt_follower *f, struct rt_read_error *error)
{
	read_marks(f, &f->marks);
	int rc = rt_reader_reload(f->rd, error);
	uint64_t shrunk;
	if (rc < 0) {
		/* zeros where the tables were: the file shrank, which the caller tells */
		if (rt_reader_shrunk(f->rd, &shrunk) == 1)
			error->message[0] = 0;
		return rc;
	}
	f->tables_reloaded = 1;
	if (rc > 0)
		f->modules_changed = 1;
	return 0;
}

static int read_rings(struct rt_follower *f)
{
	const uint32_t rings = f->rd->header.ring_count;
	f->batch.count = 0;
	f->batch.stale = 0;
	for (uint32_t r = rt_reader_next_ring(f->rd, 0); r < rings;
	     r = rt_reader_next_ring(f->rd, r + 1)) {
		if (f->heads[r] <= f->cursors[r].slot)
			continue;
		int rc = rt_reader_follow_ring(f->rd, r, f->heads[r], &f->cursors[r], &f->batch);
		if (rc)
			return rc;
	}
	return 0;
}

/* The cursors of the rings read (those with a descriptor in the file) into to. */
static void save_cursors(const struct rt_follower *f, struct rt_ring_cursor *to,
			 const struct rt_ring_cursor *from)
{
	const uint32_t rings = f->rd->header.ring_count;
	for (uint32_t r = rt_reader_next_ring(f->rd, 0); r < rings;
	     r = rt_reader_next_ring(f->rd, r + 1))
		to[r] = from[r];
}

int rt_follower_skip_to_heads(struct rt_follower *f)
{
	const uint32_t rings = f->rd->header.ring_count;
	int rc = 0;
	f->batch.count = 0;
	/* a ring whose writer is always mid-record when looked at is read to its head, unused */
	for (uint32_t r = rt_reader_next_ring(f->rd, 0); r < rings && rc == 0;
	     r = rt_reader_next_ring(f->rd, r + 1))
		if (!rt_reader_ring_start(f->rd, r, &f->cursors[r]))
			rc = rt_reader_follow_ring(f->rd, r, rt_reader_ring_head(f->rd, r),
						   &f->cursors[r], &f->batch);
	f->batch.count = 0;
	rt_reader_forget_payloads(f->rd);
	return rc;
}

static int compare_order(const void *a, const void *b)
{
	const struct rt_follow_order *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The slot of latest[] that an item's thread keeps, or NULL (no thread entry claims it). */
static uint64_t *latest_of(struct rt_follower *f, const struct rt_item *it)
{
	if (it->thread >= f->rd->thread_count || (it->flags & RT_ITEM_NO_OWNER))
		return NULL;
	uint32_t entry = f->rd->threads[it->thread].entry;
	return entry < f->latest_count ? &f->latest[entry] : NULL;
}

/* Room in latest[] for every thread entry the tables hold; 0 or -ENOMEM. */
static int grow_latest(struct rt_follower *f)
{
	uint32_t need = 0;
	for (uint32_t i = 0; i < f->rd->thread_count; i++)
		if (f->rd->threads[i].entry >= need)
			need = f->rd->threads[i].entry + 1;
	if (need <= f->latest_count)
		return 0;
	uint64_t *more = realloc(f->latest, (size_t)need * sizeof(*more));
	if (!more)
		return -ENOMEM;
	memset(more + f->latest_count, 0, (size_t)(need - f->latest_count) * sizeof(*more));
	f->latest = more;
	f->latest_count = need;
	return 0;
}

/*
 * The batch in time order, each thread's records in the order it wrote them
 * (arena_follow.h).  The rings give each ring's records in record order, its
 * loss items after them: a loss is placed by its own time, no earlier than
 * its thread's latest record before this batch.  0 or -ENOMEM.
 */
static int order_batch(struct rt_follower *f)
{
	struct rt_item_batch *b = &f->batch;
	if (b->count == 0)
		return 0;
	int rc = grow_latest(f);
	if (rc)
		return rc;
	if (b->count > f->order_capacity) {
		free(f->order);
		f->order = malloc(b->count * sizeof(*f->order));
		f->order_capacity = f->order ? b->count : 0;
		if (!f->order)
			return -ENOMEM;
	}
	for (size_t i = 0; i < b->count; i++) {
		const struct rt_item *it = &b->items[i];
		uint64_t *latest = latest_of(f, it);
		struct rt_follow_order *o = &f->order[i];
		o->key = it->counter;
		o->seq = it->seq;
		o->tid = it->tid;
		o->index = (uint32_t)i;
		/* an untimed loss has no place in time: it goes where its counter 0 puts it */
		if (it->kind == RT_ITEM_LOSS && latest && (it->flags & RT_ITEM_TIMED) &&
		    *latest > o->key)
			o->key = *latest;
	}
	for (size_t i = 0; i < b->count; i++) {
		const struct rt_item *it = &b->items[i];
		uint64_t *latest = latest_of(f, it);
		if (it->kind == RT_ITEM_LOSS || !latest)
			continue;
		if (*latest > f->order[i].key)
			f->order[i].key = *latest;
		else
			*latest = f->order[i].key;
	}
	qsort(f->order, b->count, sizeof(*f->order), compare_order);
	/* moved in place, cycle by cycle: no second copy of a batch that may hold whole rings */
	for (size_t i = 0; i < b->count; i++) {
		if (f->order[i].index == i)
			continue;
		struct rt_item first = b->items[i];
		size_t at = i;
		while (f->order[at].index != i) {
			size_t from = f->order[at].index;
			b->items[at] = b->items[from];
			f->order[at].index = (uint32_t)at;
			at = from;
		}
		b->items[at] = first;
		f->order[at].index = (uint32_t)at;
	}
	return 0;
}

int rt_follower_poll(struct rt_follower *f, struct rt_read_error *error)
{
	const uint32_t rings = f->rd->header.ring_count;
	error->message[0] = 0;
	f->tables_reloaded = f->modules_changed = 0;
	f->batch.count = 0;
	/* heads first: the tables read after them hold every site and thread below them */
	/* a ring whose descriptor lies in a hole was never claimed: its head is 0 */
	for (uint32_t r = rt_reader_next_ring(f->rd, 0); r < rings;
	     r = rt_reader_next_ring(f->rd, r + 1))
		f->heads[r] = rt_reader_ring_head(f->rd, r);
	struct rt_follow_table_marks now;
	read_marks(f, &now);
	int rc;
	if ((memcmp(&now, &f->marks, sizeof(now)) != 0 || renamed(f)) &&
	    (rc = reload(f, error)) != 0)
		return rc;
	save_cursors(f, f->saved, f->cursors);
	if ((rc = read_rings(f)) != 0)
		return rc;
	if (f->batch.stale) {
		/* a thread entry or site published after the tables were read: once more */
		save_cursors(f, f->cursors, f->saved);
		rt_reader_forget_payloads(f->rd);
		if ((rc = reload(f, error)) != 0 || (rc = read_rings(f)) != 0)
			return rc;
	}
	return order_batch(f);
}

void rt_follower_forget(struct rt_follower *f)
{
	f->batch.count = 0;
	rt_reader_forget_payloads(f->rd);
}

int rt_follower_program_ended(const struct rt_follower *f)
{
	const struct rt_arena_header *h = live_header(f);
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == RT_ARENA_CLOSED)
		return 1;
	return !rt_process_alive(f->rd->header.pid, f->rd->header.process_start);
}

int rt_follower_run(struct rt_follower *f, int from_start, volatile sig_atomic_t *stop,
		    rt_follow_use use, void *state, int *shrunk, struct rt_read_error *error)
{
	uint64_t from;
	int rc = from_start ? 0 : rt_follower_skip_to_heads(f);
	error->message[0] = 0;
	*shrunk = 0;
	while (rc == 0) {
		/* looked at before the poll: what the program wrote before it ended is read */
		int ended = *stop || rt_follower_program_ended(f);
		rc = rt_follower_poll(f, error);
		if (rc == 0 && (f->batch.count || f->tables_reloaded))
			rc = use(state, f);
		rt_follower_forget(f);
		if ((*shrunk = rt_reader_shrunk(f->rd, &from)) != 0)
			return *shrunk < 0 ? *shrunk : 0;
		if (ended)
			break;
		struct timespec pause = {0, RT_FOLLOW_POLL_NS};
		nanosleep(&pause, NULL); /* a signal cuts it short: fine */
	}
	return rc;
}

static volatile sig_atomic_t stop_requested;

static void on_stop(int signal_number)
{
	(void)signal_number;
	stop_requested = 1;
}

volatile sig_atomic_t *rt_follow_stop_on_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return &stop_requested;
}
