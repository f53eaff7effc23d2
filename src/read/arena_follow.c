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
#include "read/merge.h"

/* An item's place in the time order. */
struct rt_follow_order {
	uint64_t key; /* its counter, or its thread's latest one before it (a clock stepped back) */
	uint64_t seq;
	int32_t tid;
	uint64_t rank;	/* among its ring's items, as one batch of the ring held them */
	uint32_t index; /* in the ring's items as read */
};

/*
 * One ring of a poll, a source of the merge: a window of its stream, each
 * item's counter replaced by its sort key (the merge orders by counter,
 * then tid, then seq, then ring), its own counter kept beside.
 */
struct rt_follow_source {
	struct rt_follower *f;
	struct rt_ring_stream *stream;
	uint32_t ring;
	int whole; /* not in time order as it comes: read whole and sorted */
	struct rt_item *items;
	uint64_t *counters;
	size_t count, counters_capacity;
	struct rt_item *sorted; /* whole: its items in order, owned here */
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
	f->heads = calloc(rings, sizeof(*f->heads));
	if (!f->cursors || !f->heads) {
		rt_follower_free(f);
		return -ENOMEM;
	}
	return 0;
}

/* The poll's sources, closed. */
static void free_sources(struct rt_follower *f)
{
	for (size_t i = 0; i < f->source_count; i++) {
		struct rt_follow_source *src = &f->sources[i];
		rt_ring_stream_free(src->stream);
		free(src->counters);
		free(src->sorted);
		memset(src, 0, sizeof(*src));
	}
	f->source_count = 0;
}

void rt_follower_free(struct rt_follower *f)
{
	free_sources(f);
	free(f->cursors);
	free(f->heads);
	free(f->sources);
	free(f->batch.items);
	free(f->latest);
	free(f->scratch);
	free(f->mark);
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

int rt_follower_skip_to_heads(struct rt_follower *f)
{
	const uint32_t rings = f->rd->header.ring_count;
	int rc = 0;
	f->batch.count = 0;
	/* a ring whose writer is always mid-record when looked at is read to its head, unused */
	for (uint32_t r = rt_reader_next_ring(f->rd, 0); r < rings && rc == 0;
	     r = rt_reader_next_ring(f->rd, r + 1)) {
		if (rt_reader_ring_start(f->rd, r, &f->cursors[r]))
			continue;
		struct rt_ring_stream *s;
		rc = rt_ring_stream_open(f->rd, r, rt_reader_ring_head(f->rd, r), &f->cursors[r], 0,
					 &s);
		struct rt_item *items;
		long n = 0;
		while (rc == 0 && s && (n = rt_ring_stream_fill(s, 0, SIZE_MAX, &items, NULL)) > 0)
			;
		if (n < 0)
			rc = (int)n;
		if (rc == 0 && s)
			rt_ring_stream_cursor(s, &f->cursors[r]);
		rt_ring_stream_free(s);
	}
	return rc;
}

/* The thread entry whose latest time an item's thread keeps, or -1 (no thread entry claims it). */
static long entry_of(const struct rt_follower *f, const struct rt_item *it)
{
	if (it->thread >= f->rd->thread_count || (it->flags & RT_ITEM_NO_OWNER))
		return -1;
	uint32_t entry = f->rd->threads[it->thread].entry;
	return entry < f->latest_count ? (long)entry : -1;
}

/*
 * Room in latest[] for every thread entry the tables hold, and in the
 * scratch the passes over a poll keep beside it (zero pages until a
 * thread's records touch them: a table of millions of entries costs what
 * its threads with records do).  0 or -ENOMEM.
 */
static int grow_latest(struct rt_follower *f)
{
	uint32_t need = 0;
	for (uint32_t i = 0; i < f->rd->thread_count; i++)
		if (f->rd->threads[i].entry >= need)
			need = f->rd->threads[i].entry + 1;
	if (need <= f->latest_count)
		return 0;
	uint64_t *latest = calloc(need, sizeof(*latest));
	uint64_t *scratch = calloc(need, sizeof(*scratch));
	uint32_t *mark = calloc(need, sizeof(*mark));
	if (!latest || !scratch || !mark) {
		free(latest);
		free(scratch);
		free(mark);
		return -ENOMEM;
	}
	if (f->latest_count)
		memcpy(latest, f->latest, f->latest_count * sizeof(*latest));
	free(f->latest);
	free(f->scratch);
	free(f->mark);
	f->latest = latest;
	f->scratch = scratch;
	f->mark = mark;
	f->latest_count = need;
	f->pass = 0;
	return 0;
}

/* A new pass over the poll's items: every thread's scratch is taken again. */
static void new_pass(struct rt_follower *f, int keep)
{
	if (++f->pass == 0) {
		memset(f->mark, 0, f->latest_count * sizeof(*f->mark));
		f->pass = 1;
	}
	f->keep = keep;
}

/*
 * An item's place in time (arena_follow.h), taken in its ring's order: a
 * record stands at its thread's latest time so far in this poll, and moves
 * it on; a loss stands at its own time, no earlier than its thread's latest
 * record before this poll; an untimed loss, or an item no thread entry
 * claims, at its own counter.  A pass that looks (keep 0) moves the
 * thread's time in its scratch, leaving latest[] as the poll found it; the
 * pass that keeps moves latest[], its scratch holding where it was.
 */
static uint64_t item_key(struct rt_follower *f, const struct rt_item *it)
{
	long entry = entry_of(f, it);
	uint64_t key = it->counter;
	if (entry < 0)
		return key;
	if (f->mark[entry] != f->pass) {
		f->mark[entry] = f->pass;
		f->scratch[entry] = f->latest[entry];
	}
	uint64_t *now = f->keep ? &f->latest[entry] : &f->scratch[entry];
	uint64_t before = f->keep ? f->scratch[entry] : f->latest[entry];
	if (it->kind == RT_ITEM_LOSS) {
		/* an untimed loss has no place in time: it goes where its counter 0 puts it */
		if ((it->flags & RT_ITEM_TIMED) && before > key)
			key = before;
		return key;
	}
	if (*now > key)
		return *now;
	*now = key;
	return key;
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
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/*
 * Read a ring's stream once without its payloads: whether its items come
 * in time order (else it is read whole and sorted), and whether it held
 * records the tables do not know (the stream says).  0 or -ENOMEM.
 */
static int look_at_ring(struct rt_follower *f, struct rt_follow_source *src)
{
	struct rt_follow_order previous, now;
	int have = 0;
	struct rt_item *items;
	const uint64_t *ranks;
	long n;
	memset(&previous, 0, sizeof(previous));
	memset(&now, 0, sizeof(now));
	while ((n = rt_ring_stream_fill(src->stream, 0, f->window, &items, &ranks)) > 0) {
		for (long i = 0; i < n; i++) {
			now.key = item_key(f, &items[i]);
			now.tid = items[i].tid;
			now.seq = items[i].seq;
			now.rank = ranks[i];
			if (have && compare_order(&previous, &now) > 0)
				src->whole = 1;
			previous = now;
			have = 1;
		}
	}
	return (int)n;
}

/*
 * Open a stream on every ring with records past its cursor, and look at
 * each (look_at_ring).  *stale when one held records of a site or thread
 * the tables do not hold.  0 or -ENOMEM.
 */
static int open_sources(struct rt_follower *f, int *stale)
{
	const uint32_t rings = f->rd->header.ring_count;
	int rc = grow_latest(f);
	size_t open = 0;
	*stale = 0;
	for (uint32_t r = rt_reader_next_ring(f->rd, 0); r < rings && rc == 0;
	     r = rt_reader_next_ring(f->rd, r + 1))
		if (f->heads[r] > f->cursors[r].slot)
			open++;
	size_t window = open ? RT_FOLLOW_WINDOWS_BUDGET / open : RT_FOLLOW_WINDOW_MAX;
	if (window < RT_FOLLOW_WINDOW_MIN)
		window = RT_FOLLOW_WINDOW_MIN;
	f->window = window < RT_FOLLOW_WINDOW_MAX ? window : RT_FOLLOW_WINDOW_MAX;
	new_pass(f, 0);
	for (uint32_t r = rt_reader_next_ring(f->rd, 0); r < rings && rc == 0;
	     r = rt_reader_next_ring(f->rd, r + 1)) {
		if (f->heads[r] <= f->cursors[r].slot)
			continue;
		if (f->source_count == f->source_capacity) {
			/* as many as the rings with records: a table of rings may be huge and empty
			 */
			size_t capacity = f->source_capacity ? 2 * f->source_capacity : 16;
			struct rt_follow_source *more =
			    realloc(f->sources, capacity * sizeof(*more));
			if (!more) {
				rc = -ENOMEM;
				break;
			}
			f->sources = more;
			f->source_capacity = capacity;
		}
		struct rt_follow_source *src = &f->sources[f->source_count];
		memset(src, 0, sizeof(*src));
		src->f = f;
		src->ring = r;
		rc = rt_ring_stream_open(f->rd, r, f->heads[r], &f->cursors[r], f->window,
					 &src->stream);
		if (rc || !src->stream)
			continue;
		f->source_count++;
		rc = look_at_ring(f, src);
		if (rt_ring_stream_stale(src->stream))
			*stale = 1;
	}
	return rc;
}

/* A window of a ring for the merge, each counter replaced by the item's key. */
static size_t refill_source(void *state, const struct rt_item **items)
{
	struct rt_follow_source *src = state;
	struct rt_follower *f = src->f;
	struct rt_item *its;
	long n = rt_ring_stream_fill(src->stream, 1, f->window, &its, NULL);
	if (n <= 0) {
		if (n < 0)
			f->error = (int)n;
		return 0;
	}
	if ((size_t)n > src->counters_capacity) {
		free(src->counters);
		src->counters = malloc((size_t)n * sizeof(*src->counters));
		src->counters_capacity = src->counters ? (size_t)n : 0;
		if (!src->counters) {
			f->error = -ENOMEM;
			return 0;
		}
	}
	for (long i = 0; i < n; i++) {
		src->counters[i] = its[i].counter;
		its[i].counter = item_key(f, &its[i]);
	}
	src->items = its;
	src->count = (size_t)n;
	*items = its;
	return (size_t)n;
}

/* A ring whose items do not come in time order: all of them, sorted (keys as counters). */
static int read_whole(struct rt_follower *f, struct rt_follow_source *src)
{
	struct rt_item *items;
	const uint64_t *ranks;
	long n = rt_ring_stream_fill(src->stream, 1, SIZE_MAX, &items, &ranks);
	if (n <= 0)
		return (int)n;
	struct rt_follow_order *order = malloc((size_t)n * sizeof(*order));
	src->sorted = malloc((size_t)n * sizeof(*src->sorted));
	src->counters = malloc((size_t)n * sizeof(*src->counters));
	if (!order || !src->sorted || !src->counters) {
		free(order);
		return -ENOMEM;
	}
	for (long i = 0; i < n; i++) {
		order[i].key = item_key(f, &items[i]);
		order[i].tid = items[i].tid;
		order[i].seq = items[i].seq;
		order[i].rank = ranks[i];
		order[i].index = (uint32_t)i;
	}
	qsort(order, (size_t)n, sizeof(*order), compare_order);
	for (long i = 0; i < n; i++) {
		src->sorted[i] = items[order[i].index];
		src->counters[i] = src->sorted[i].counter;
		src->sorted[i].counter = order[i].key;
	}
	free(order);
	src->items = src->sorted;
	src->count = (size_t)n;
	return 0;
}

/* Hand the batch to use (the poll's first batch says whether the tables were read again). */
static int hand_out(struct rt_follower *f, rt_follow_use use, void *state)
{
	int rc = use(state, f);
	f->tables_reloaded = f->modules_changed = 0;
	rt_follower_forget(f);
	return rc;
}

/* An item into the batch, with its own counter, its payload copied.  0 or -ENOMEM. */
static int add_item(struct rt_follower *f, const struct rt_item *from, uint64_t counter)
{
	struct rt_item_batch *b = &f->batch;
	if (b->count == b->capacity) {
		size_t capacity = b->capacity ? b->capacity * 2 : 256;
		struct rt_item *bigger = realloc(b->items, capacity * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		b->items = bigger;
		b->capacity = capacity;
	}
	struct rt_item *it = &b->items[b->count++];
	*it = *from;
	it->counter = counter;
	if (rt_item_has_payload(it->kind) && it->log.payload) {
		unsigned char *kept = rt_reader_payload_room(f->rd, it->log.length);
		if (!kept)
			return -ENOMEM;
		memcpy(kept, it->log.payload, it->log.length);
		it->log.payload = kept;
	}
	return 0;
}

/*
 * The rings' items merged by time into the batch; with use, handed out
 * every RT_FOLLOW_BATCH items.  Then each ring's cursor stands where its
 * stream ended, and each thread's latest time is where this poll left it.
 */
static int merge_sources(struct rt_follower *f, rt_follow_use use, void *state)
{
	int rc = 0;
	new_pass(f, 1);
	struct rt_merge_source *in = calloc(f->source_count + 1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	for (size_t i = 0; i < f->source_count && rc == 0; i++) {
		struct rt_follow_source *src = &f->sources[i];
		rt_ring_stream_rewind(src->stream);
		in[i].key = (uint32_t)i;
		if (src->whole) {
			rc = read_whole(f, src);
			in[i].items = src->items;
			in[i].count = src->count;
		} else {
			in[i].refill = refill_source;
			in[i].state = src;
		}
	}
	struct rt_merge m;
	f->error = 0;
	if (rc == 0)
		rc = rt_merge_init(&m, in, f->source_count);
	free(in);
	if (rc)
		return rc;
	const struct rt_item *it;
	while ((it = rt_merge_next(&m)) != NULL) {
		const struct rt_follow_source *src = &f->sources[m.key];
		if ((rc = add_item(f, it, src->counters[it - src->items])) != 0)
			break;
		if (use && f->batch.count >= RT_FOLLOW_BATCH && (rc = hand_out(f, use, state)) != 0)
			break;
	}
	rt_merge_free(&m);
	if (rc == 0)
		rc = f->error;
	if (rc)
		return rc;
	for (size_t i = 0; i < f->source_count; i++)
		rt_ring_stream_cursor(f->sources[i].stream, &f->cursors[f->sources[i].ring]);
	return 0;
}

/* One poll (rt_follower_poll), its items handed to use a batch at a time when use is set. */
static int poll_rings(struct rt_follower *f, struct rt_read_error *error, rt_follow_use use,
		      void *state)
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
	int rc, stale = 0;
	if ((memcmp(&now, &f->marks, sizeof(now)) != 0 || renamed(f)) &&
	    (rc = reload(f, error)) != 0)
		return rc;
	rc = open_sources(f, &stale);
	if (rc == 0 && stale) {
		/* a thread entry or site published after the tables were read: once more */
		free_sources(f);
		if ((rc = reload(f, error)) == 0)
			rc = open_sources(f, &stale);
	}
	if (rc == 0)
		rc = merge_sources(f, use, state);
	free_sources(f);
	if (rc == 0 && use && (f->batch.count || f->tables_reloaded))
		rc = hand_out(f, use, state);
	return rc;
}

int rt_follower_poll(struct rt_follower *f, struct rt_read_error *error)
{
	return poll_rings(f, error, NULL, NULL);
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
		rc = poll_rings(f, error, use, state);
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
