/*
 * trace_set_cursors.c - ring cursors: the blocks of a ring in record order,
 * one block at a time, each read and handed to trace_set_decode.c to be
 * decoded and checked into items.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include <unistd.h>

#include "read/trace_set_private.h"

static int compare_blocks(const void *a, const void *b)
{
	const struct block_ref *x = a, *y = b;
	if (x->first_record != y->first_record)
		return x->first_record < y->first_record ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int rt_set_compare_covers(const void *a, const void *b)
{
	const struct cover *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int compare_owners(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The threads of rd that owned ring, by record range (as the arena reader splits a ring). */
int rt_set_owners_of_ring(const struct rt_reader *rd, uint32_t ring, struct owner **out,
			  size_t *count)
{
	size_t n = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++)
		n += rd->threads[i].ring == ring;
	struct owner *owners = calloc(n + 1, sizeof(*owners));
	if (!owners)
		return -ENOMEM;
	n = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		if (t->ring != ring)
			continue;
		struct owner *o = &owners[n++];
		o->first = t->first_record;
		o->end = t->end_record < t->first_record ? t->first_record : t->end_record;
		o->thread = i;
		o->tid = t->tid;
	}
	if (n > 1)
		qsort(owners, n, sizeof(*owners), compare_owners);
	for (size_t i = 0; i + 1 < n; i++)
		if (owners[i].end > owners[i + 1].first)
			owners[i].end = owners[i + 1].first;
	*out = owners;
	*count = n;
	return 0;
}

static int ring_owners(struct ring_cursor *c)
{
	return rt_set_owners_of_ring(c->rd, c->ring, &c->owners, &c->owner_count);
}

/* Records of [from, to) of ring rs that no LOSS entry accounts for (covers sorted; *at rises). */
uint64_t rt_set_uncovered_in(const struct ring_state *rs, size_t *at_cover, uint64_t from,
			     uint64_t to)
{
	const struct cover *cv = rs->covers;
	size_t n = rs->cover_count;
	while (*at_cover < n && cv[*at_cover].end <= from)
		(*at_cover)++;
	uint64_t covered = 0, at = from;
	for (size_t i = *at_cover; i < n && cv[i].first < to; i++) {
		uint64_t lo = cv[i].first > at ? cv[i].first : at;
		uint64_t hi = cv[i].end < to ? cv[i].end : to;
		if (hi > lo) {
			covered += hi - lo;
			at = hi;
		}
	}
	return to - from - covered;
}

/* A ring's blocks in record order (the first copy of a record first), its LOSS covers by seq. */
void rt_set_sort_ring(struct ring_state *rs)
{
	if (rs->block_count > 1)
		qsort(rs->blocks, rs->block_count, sizeof(*rs->blocks), compare_blocks);
	if (rs->cover_count > 1)
		qsort(rs->covers, rs->cover_count, sizeof(*rs->covers), rt_set_compare_covers);
}

/*
 * Where a ring's records begin: the first RINGS entry; a ring the head of
 * the first file did not list began with the recording when that file is
 * the recording's first, else with its first block.  Records the files hold
 * are read, whatever the head of the first file said.  Blocks sorted.
 */
/* The recording a trace-file source belongs to, or NULL. */
static const struct recording *rec_of(const struct set_private *p, const struct rt_set_source *src)
{
	for (size_t i = 0; i < p->recording_count; i++)
		if (p->recordings[i].context == src->recording)
			return &p->recordings[i];
	return NULL;
}

uint64_t rt_set_ring_first_record(const struct ring_state *rs, const struct recording *rec)
{
	uint64_t first_block = rs->block_count ? rs->blocks[0].first_record : 0;
	uint64_t first;
	if (rs->has_start)
		first = rs->start_record;
	else if (rec && rec->first_file_seq == 0)
		first = 0;
	else
		first = first_block;
	if (rs->block_count && first_block < first)
		first = first_block;
	return first;
}

void rt_set_cursor_rewind(struct ring_cursor *c)
{
	const struct recording *rec = rec_of(priv_of(c->set), &c->set->sources[c->source]);
	c->block_at = c->cover_at = c->owner_at = c->region_gap_at = 0;
	c->run_left = 0;
	c->unknown = c->lost_records = 0;
	c->readahead_length = 0;
	c->expected = rt_set_ring_first_record(c->rs, rec);
}

/*
 * The header, as the file holds it, of the block at offset of the run's
 * file: through the read-ahead, or read alone.  0, or -1 when there is no
 * block there (the file changed since the scan, or cannot be read).
 */
static int header_at(struct ring_cursor *c, uint64_t offset, struct rt_block_header *h)
{
	const struct block_ref at = {.offset = offset, .file = c->run->file};
	if (c->readahead_capacity >= RT_BLOCK_MAX_BYTES) {
		int error = 0;
		uint64_t avail = 0;
		const unsigned char *b = rt_set_cursor_bytes(c, &at, &avail, &error);
		if (error)
			priv_of(c->set)->error = error;
		if (!b || avail < RT_BLOCK_HEADER_SIZE || !rt_block_magic_at(b))
			return -1;
		memcpy(h, b, sizeof(*h));
	} else {
		const struct rt_trace_file *f = &c->set->files[at.file].file;
		ssize_t got;
		do
			got = pread(f->fd, h, sizeof(*h), (off_t)offset);
		while (got < 0 && errno == EINTR);
		if (got != (ssize_t)sizeof(*h) || !rt_block_magic_at(h))
			return -1;
	}
	return h->size >= RT_BLOCK_HEADER_SIZE && h->size <= RT_BLOCK_MAX_BYTES &&
		       h->size % RT_BLOCK_ALIGN == 0
		   ? 0
		   : -1;
}

/*
 * The next block of the run the cursor walks: past the blocks of other
 * rings, sources and kinds, as the scan stepped from block to block (the
 * run spans no damage), to the next of its ring that holds records.  It
 * must start at the run's next record.  0: found, *ref its place; -1: the
 * file no longer holds it.
 */
static int next_in_run(struct ring_cursor *c, struct block_ref *ref)
{
	const struct rt_set_source *src = &c->set->sources[c->source];
	const uint64_t end = c->run->last_offset;
	while (c->run_at <= end) {
		struct rt_block_header h;
		if (header_at(c, c->run_at, &h))
			return -1;
		const uint64_t offset = c->run_at;
		c->run_at += h.size;
		if ((h.type != RT_BLOCK_SLOTS && h.type != RT_BLOCK_PACKED) || h.ring != c->ring ||
		    h.source != src->number || h.file_id != src->file_id || h.count == 0)
			continue;
		if (h.first_record != c->run_next || h.count > c->run_left)
			return -1;
		ref->offset = ref->last_offset = offset;
		ref->first_record = h.first_record;
		ref->count = h.count;
		ref->counter_first = h.counter_first;
		ref->counter_last = h.counter_last;
		ref->file = c->run->file;
		ref->order = c->run->order;
		c->run_next += h.count;
		c->run_left -= h.count;
		return 0;
	}
	return -1;
}

/* Fill the cursor with the next block that gives items.  0: the ring is done. */
size_t rt_set_cursor_refill(struct ring_cursor *c)
{
	for (;;) {
		size_t n = 0;
		c->tallied = 0;
		if (c->run_left) {
			struct block_ref ref;
			if (next_in_run(c, &ref)) {
				/* the file changed since the scan: the rest of the run is a gap */
				rt_set_gap_to(c, add_sat(c->run->first_record, c->run->count),
					      c->run->counter_last, &n);
				c->run_left = 0;
			} else if (add_sat(ref.first_record, ref.count) > c->expected) {
				n = rt_set_read_ref(c, &ref);
			}
		} else if (c->block_at < c->rs->block_count) {
			const struct block_ref *ref = &c->rs->blocks[c->block_at++];
			if (add_sat(ref->first_record, ref->count) <= c->expected)
				continue; /* every record in it was read already */
			if (ref->last_offset != ref->offset) {
				/* a run: its blocks are walked to, one at a time */
				c->run = ref;
				c->run_at = ref->offset;
				c->run_next = ref->first_record;
				c->run_left = ref->count;
				continue;
			}
			n = rt_set_read_ref(c, ref);
		} else {
			rt_set_gap_to_end(c, &n); /* once: it moves expected to the end */
			return n;
		}
		if (n)
			return n;
	}
}

/* The next window of an arena thread's cursor: 0 when it is done. */
int rt_set_arena_refill(struct cursor *cur)
{
	size_t n = rt_arena_cursor_fill(cur->arena);
	cur->next = cur->end = NULL;
	if (n) {
		cur->next = cur->arena->items;
		cur->end = cur->arena->items + n;
	}
	return n > 0;
}

int rt_set_cursor_advance(struct cursor *cur)
{
	if (cur->next < cur->end)
		cur->next++;
	if (cur->next == cur->end && cur->arena)
		return rt_set_arena_refill(cur);
	if (cur->next < cur->end || !cur->ring)
		return cur->next < cur->end;
	size_t n = rt_set_cursor_refill(cur->ring);
	cur->next = cur->ring->items;
	cur->end = cur->ring->items + n;
	return n > 0;
}

/* Past the records of a block (its end) as if they had been read. */
static void skip_to(struct ring_cursor *c, uint64_t first_record, uint32_t count)
{
	uint64_t end = add_sat(first_record, count);
	if (end > c->expected)
		c->expected = end;
}

/*
 * Past the blocks at the start of the run ref whose records all come before
 * ns, walking to them (their headers say their last record's time).  1 when
 * the whole run was passed; 0 when the cursor's walk of the run stands at
 * the first block that may hold a record at or after ns (or at one the file
 * no longer holds: the walk reports it).
 */
static int skip_in_run(struct ring_cursor *c, const struct block_ref *ref, int64_t ns)
{
	c->run = ref;
	c->run_at = ref->offset;
	c->run_next = ref->first_record;
	c->run_left = ref->count;
	while (c->run_left) {
		const uint64_t at = c->run_at, next = c->run_next, left = c->run_left;
		struct block_ref one;
		if (next_in_run(c, &one) ||
		    rt_timebase_ns(&c->rd->timebase, one.counter_last) >= ns) {
			c->run_at = at;
			c->run_next = next;
			c->run_left = left;
			return 0;
		}
		skip_to(c, one.first_record, one.count);
	}
	return 1;
}

/*
 * Past the first blocks of c whose records all come before ns (by the
 * index, or a run's blocks' headers: their last record's time), as if they
 * had been read: no gap is reported for them, and the walk begins at the
 * first block that may hold a record at or after ns.  Only a prefix is
 * skipped, so a block out of time order is never passed over.
 */
static void cursor_skip_before(struct ring_cursor *c, int64_t ns)
{
	const struct ring_state *rs = c->rs;
	size_t b = 0;
	for (; b < rs->block_count; b++) {
		const struct block_ref *ref = &rs->blocks[b];
		if (ref->last_offset != ref->offset) {
			if (!skip_in_run(c, ref, ns)) {
				c->block_at = b + 1; /* the walk of its run goes on from there */
				return;
			}
			continue;
		}
		if (rt_timebase_ns(&c->rd->timebase, ref->counter_last) >= ns)
			break;
		skip_to(c, ref->first_record, ref->count);
	}
	c->block_at = b;
}

void rt_set_cursor_start(struct cursor *cur, int64_t from_ns)
{
	if (cur->ring) {
		rt_set_cursor_rewind(cur->ring);
		if (from_ns != INT64_MIN)
			cursor_skip_before(cur->ring, from_ns);
		size_t n = rt_set_cursor_refill(cur->ring);
		cur->next = cur->ring->items;
		cur->end = cur->ring->items + n;
	} else if (cur->arena) {
		rt_arena_cursor_rewind(cur->arena);
		rt_set_arena_refill(cur);
	} else {
		cur->next = cur->base;
		cur->end = cur->base + cur->count;
	}
}

static int add_cursor(struct set_private *p, size_t *capacity, uint32_t source,
		      const struct rt_item *items, size_t count, struct ring_cursor *ring)
{
	if (!ring && count == 0)
		return 0;
	if (grow((void **)&p->cursors, capacity, p->cursor_count + 1, sizeof(*p->cursors)))
		return -ENOMEM;
	struct cursor *c = &p->cursors[p->cursor_count++];
	c->source = source;
	c->base = items;
	c->count = count;
	c->ring = ring;
	c->arena = NULL;
	return 0;
}

/* A cursor over thread `thread` of an arena source, if it has items. */
static int add_arena_cursor(struct set_private *p, size_t *capacity, uint32_t source,
			    const struct rt_reader *rd, uint32_t thread, size_t window)
{
	if (!rd->threads[thread].item_count)
		return 0;
	struct rt_arena_cursor *a = malloc(sizeof(*a));
	if (!a || rt_arena_cursor_init(a, rd, thread, window) ||
	    grow((void **)&p->cursors, capacity, p->cursor_count + 1, sizeof(*p->cursors))) {
		if (a)
			rt_arena_cursor_free(a);
		free(a);
		return -ENOMEM;
	}
	struct cursor *c = &p->cursors[p->cursor_count++];
	memset(c, 0, sizeof(*c));
	c->source = source;
	c->arena = a;
	return 0;
}

/* Every item list of every source, as cursors. */
int rt_set_make_cursors(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	size_t capacity = 0, rings = 0, arena_threads = 0;
	/* the merge's sources are made last: without, the cursors are not made yet */
	if (p->merge_sources)
		return 0;
	for (size_t i = 0; i < set->source_count; i++)
		for (uint32_t t = 0;
		     set->sources[i].arena && t < set->sources[i].reader->thread_count; t++)
			arena_threads += set->sources[i].reader->threads[t].item_count > 0;
	const size_t window = rt_arena_window_for(arena_threads);
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		struct rt_reader *rd = s->reader;
		uint32_t src = (uint32_t)i;
		if (s->arena) {
			for (uint32_t t = 0; t < rd->thread_count; t++)
				if (add_arena_cursor(p, &capacity, src, rd, t, window))
					return -ENOMEM;
			if (add_cursor(p, &capacity, src, rd->losses, rd->loss_count, NULL))
				return -ENOMEM;
			continue;
		}
		if (s->context) {
			for (size_t r = 0; r < p->recording_count; r++)
				if (p->recordings[r].context == src &&
				    (add_cursor(p, &capacity, src, p->recordings[r].regions,
						p->recordings[r].region_count, NULL) ||
				     add_cursor(p, &capacity, src, p->recordings[r].unplaced,
						p->recordings[r].unplaced_count, NULL)))
					return -ENOMEM;
			continue;
		}
		struct file_source *fs = s->priv;
		if (add_cursor(p, &capacity, src, fs->loss_items, fs->loss_item_count, NULL))
			return -ENOMEM;
		for (size_t r = 0; r < fs->ring_capacity; r++) {
			struct ring_state *rs = &fs->rings[r];
			/*
			 * A ring with no block left: only an end past its start says
			 * something (all its records lost with the damage).
			 */
			if (rs->block_count == 0 &&
			    !(rs->has_end &&
			      rs->end_record > rt_set_ring_first_record(rs, rec_of(p, s))))
				continue;
			rt_set_sort_ring(rs);
			struct ring_cursor *c =
			    aligned_alloc(_Alignof(struct ring_cursor), sizeof(*c));
			if (c)
				memset(c, 0, sizeof(*c));
			if (!c)
				return -ENOMEM;
			c->set = set;
			c->rd = rd;
			c->fs = fs;
			c->rs = rs;
			c->ring = (uint32_t)r;
			c->source = src;
			if (ring_owners(c) || add_cursor(p, &capacity, src, NULL, 0, c)) {
				free(c->owners);
				free(c);
				return -ENOMEM;
			}
			rings++;
		}
	}
	/* read-ahead: what the budget gives each ring cursor, at least one block */
	size_t each = rings ? READAHEAD_BUDGET / rings : 0;
	if (each > READAHEAD_MAX)
		each = READAHEAD_MAX;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *c = p->cursors[i].ring;
		if (!c || each < 2 * (size_t)RT_BLOCK_MAX_BYTES)
			continue;
		c->readahead = malloc(each);
		if (!c->readahead)
			return -ENOMEM;
		c->readahead_capacity = each;
	}
	p->merge_sources = calloc(p->cursor_count + 1, sizeof(*p->merge_sources));
	return p->merge_sources ? 0 : -ENOMEM;
}
