/*
 * trace_set_merge.c - the merge: every cursor of the set in one time order.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include "read/trace_set_private.h"

/*
 * The one merge (read/merge.h) over every cursor, keyed by source: the next
 * block of a trace file's ring, the next window of an arena thread.
 */
static size_t merge_refill(void *state, const struct rt_item **items)
{
	struct cursor *cur = state;
	cur->next = cur->end;
	if (cur->arena) {
		rt_set_arena_refill(cur);
	} else if (cur->ring) {
		size_t n = rt_set_cursor_refill(cur->ring);
		cur->next = cur->ring->items;
		cur->end = cur->ring->items + n;
		if (cur->tally)
			rt_set_tally_block(cur->tally, cur, cur->next, n);
	}
	*items = cur->next;
	return (size_t)(cur->end - cur->next);
}

/*
 * Whether a source of the set recorded I/O calls (it has an I/O site).  A
 * walk from a time cannot skip their calls before it: each names the
 * descriptors and moves the positions of the calls after it, across
 * threads, and across processes that share their files.
 */
static int set_records_io(const struct rt_trace_set *set)
{
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_site_table *sites = &set->sources[i].reader->sites;
		for (uint32_t k = 0; k < sites->count; k++)
			if (sites->sites[k].valid && sites->sites[k].kind == RT_SITE_IO)
				return 1;
	}
	return 0;
}

int rt_trace_set_start(struct rt_trace_set *set, int32_t tid)
{
	return rt_trace_set_start_from(set, tid, INT64_MIN);
}

int rt_trace_set_start_from(struct rt_trace_set *set, int32_t tid, int64_t from_ns)
{
	struct set_private *p = priv_of(set);
	int rc;
	if (p->index_merged) {
		/* runs of blocks cannot be read: the whole index first */
		if ((rc = rt_set_reopen_indexed(set)) != 0)
			return rc;
		p = priv_of(set);
	}
	rc = rt_set_make_cursors(set);
	if (rc)
		return rc;
	p->error = 0;
	p->tid = tid;
	p->skipped = 0;
	/* a walk that reads every item, as a count reads them, can count them too */
	p->tally_on = p->count_while_reading && tid <= 0 && from_ns == INT64_MIN && !p->skips;
	p->tallied = 0;
	if (p->tally_on && (rc = rt_set_count_reset(set)) != 0)
		return rc;
	/* where each ring may first hold a record at from_ns, unless what comes before counts */
	const int64_t seek_to =
	    p->seek_off || (from_ns != INT64_MIN && set_records_io(set)) ? INT64_MIN : from_ns;
	size_t n = 0;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct cursor *c = &p->cursors[i];
		c->tally = p->tally_on ? set : NULL;
		if (c->ring)
			c->ring->tallying = p->tally_on;
		rt_set_cursor_start(c, seek_to);
		if (p->tally_on)
			rt_set_tally_cursor(set, i);
		if (c->next >= c->end)
			continue;
		struct rt_merge_source *m = &p->merge_sources[n++];
		m->items = c->next;
		m->count = (size_t)(c->end - c->next);
		m->refill = c->ring || c->arena ? merge_refill : NULL;
		m->state = c;
		m->key = c->source;
	}
	rt_merge_free(&p->merge);
	rc = rt_merge_init(&p->merge, p->merge_sources, n);
	return rc ? rc : p->error;
}

const struct rt_item *rt_trace_set_next(struct rt_trace_set *set, uint32_t *source)
{
	struct set_private *p = priv_of(set);
	const struct rt_item *it;
	while ((it = rt_merge_next(&p->merge)) != NULL) {
		if (p->tid > 0 && it->tid != p->tid)
			continue;
		*source = p->merge.key;
		/* a loss of a source whose clock is lost says where it sorts, not when */
		if (it->kind == RT_ITEM_LOSS && set->sources[*source].reader->raw_time) {
			p->held = *it;
			p->held.flags &= (uint8_t)~RT_ITEM_TIMED;
			return &p->held;
		}
		/* the merge moves past it only on the next call: it stays until then */
		return it;
	}
	if (p->tally_on && !p->tallied) {
		rt_set_count_finish(set);
		p->tallied = 1;
	}
	return NULL;
}

size_t rt_trace_set_run(struct rt_trace_set *set, uint32_t *source, const struct rt_item **items)
{
	struct set_private *p = priv_of(set);
	const struct rt_item *it;
	const size_t n = rt_merge_run(&p->merge, &it);
	if (n == 0) {
		rt_trace_set_next(set, source); /* the end: what rt_trace_set_next does there */
		return 0;
	}
	*source = p->merge.key;
	if (p->tid > 0 || set->sources[*source].reader->raw_time) {
		/*
		 * One at a time, as rt_trace_set_next hands them out: a walk of
		 * one thread leaves the others' out, and a source whose clock is
		 * lost has its losses copied.
		 */
		rt_merge_took(&p->merge, 0);
		*items = rt_trace_set_next(set, source);
		return *items != NULL;
	}
	*items = it;
	return n;
}

void rt_trace_set_took(struct rt_trace_set *set, size_t n)
{
	rt_merge_took(&priv_of(set)->merge, n);
}

void rt_trace_set_count_while_reading(struct rt_trace_set *set)
{
	priv_of(set)->count_while_reading = 1;
}

int rt_trace_set_counted_while_reading(const struct rt_trace_set *set)
{
	const struct set_private *p = priv_of(set);
	return p->tally_on && p->tallied && !p->error;
}

void rt_trace_set_skip_trace(struct rt_trace_set *set,
			     int (*skips)(void *state, const struct rt_site *site), void *state)
{
	struct set_private *p = priv_of(set);
	p->skips = skips;
	p->skips_state = state;
}

uint64_t rt_trace_set_skipped(const struct rt_trace_set *set)
{
	return priv_of(set)->skipped;
}
