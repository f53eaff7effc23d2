/*
 * merge.h - one time line out of many sorted item lists.
 *
 * A k-way merge over a binary heap of cursors, keyed by rt_item_compare()
 * (counter, then tid, then seq).  Each source must already be in that order
 * (a thread's records are, as are the reader's losses); the merge never
 * copies an item, it hands out pointers into the sources.  O(log k) per
 * item, and only one compare when the same source keeps winning.
 */
#ifndef RT_READ_MERGE_H
#define RT_READ_MERGE_H

#include <stddef.h>

#include "read/arena_reader.h"

struct rt_merge_source {
	const struct rt_item *items;
	size_t count;
};

struct rt_merge_cursor {
	const struct rt_item *next;
	const struct rt_item *end;
};

struct rt_merge {
	struct rt_merge_cursor *heap;
	size_t size;
};

/* Start merging count sources (empty ones are fine).  Returns 0 or -ENOMEM. */
int rt_merge_init(struct rt_merge *merge, const struct rt_merge_source *sources, size_t count);
/* The next item in time order, or NULL when every source is done. */
const struct rt_item *rt_merge_next(struct rt_merge *merge);
void rt_merge_free(struct rt_merge *merge);

#endif /* RT_READ_MERGE_H */
