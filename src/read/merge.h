/*
 * merge.h - one time line out of many sorted item sources.
 *
 * A k-way merge over a binary heap of cursors, keyed by rt_item_compare()
 * (counter, then tid, then seq), then by the sources' keys.  Each source
 * must already be in that order (a thread's records are, as are the
 * reader's losses).  A source is an array, or a cursor that refills: an
 * arena thread's window (read/arena_cursor.h), a trace file's ring block.
 * The merge never copies an item: it hands out a pointer into the source,
 * good until the next call (the source refills only then).  O(log k) per
 * item, and only one compare when the same source keeps winning; a reader
 * that takes a source's run of items at once (rt_merge_run) makes one call
 * for them all.
 */
#ifndef RT_READ_MERGE_H
#define RT_READ_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "read/arena_reader.h"

/*
 * The next items of a refilling source, in *items (good until its next
 * refill): how many, 0 when it is done.
 */
typedef size_t (*rt_merge_refill)(void *state, const struct rt_item **items);

struct rt_merge_source {
	const struct rt_item *items; /* the first items (all of them, without refill) */
	size_t count;
	rt_merge_refill refill; /* NULL: items is all */
	void *state;
	uint32_t key; /* equal items: the source of the lower key first */
};

struct rt_merge_cursor {
	const struct rt_item *next;
	const struct rt_item *end;
	rt_merge_refill refill;
	void *state;
	uint32_t key;
};

struct rt_merge {
	struct rt_merge_cursor *heap;
	size_t size;
	size_t advance; /* items the top cursor gave: move it past them before the next */
	size_t runner;	/* the top's smaller child, the next source in line; 0: not known */
	/*
	 * The run rt_merge_run gave ended because the runner's next item comes
	 * before the top's item after it: advance then, or 0.  The top moving
	 * past exactly that many needs neither compare again.
	 */
	size_t runner_first_at;
	uint32_t key; /* the key of the source of the item last given */
};

/*
 * Start merging count sources (empty ones are fine): a refilling source
 * whose items are empty is refilled first.  Returns 0 or -ENOMEM.
 */
int rt_merge_init(struct rt_merge *merge, const struct rt_merge_source *sources, size_t count);
/* The next item in time order (its source's key in merge->key), or NULL when all are done. */
const struct rt_item *rt_merge_next(struct rt_merge *merge);
/*
 * The next items in time order that one source gives in a row, at *items:
 * how many (0 when all are done), their source's key in merge->key.  The
 * run ends where the source's window does or another source's next item
 * comes first; its items are the ones rt_merge_next() would give one by
 * one, and stay where they are until the next call.  A caller that uses
 * fewer says so with rt_merge_took() before it: the rest come again.
 */
size_t rt_merge_run(struct rt_merge *merge, const struct rt_item **items);
/* Of the run just given, only the first n were taken (0: none, the next call gives it again). */
static inline void rt_merge_took(struct rt_merge *merge, size_t n)
{
	if (n < merge->advance)
		merge->advance = n;
}
void rt_merge_free(struct rt_merge *merge);

#endif /* RT_READ_MERGE_H */
