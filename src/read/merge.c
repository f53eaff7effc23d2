/*
 * merge.c - k-way merge of sorted item lists with a binary min-heap.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/merge.h"

static int cursor_before(const struct rt_merge_cursor *a, const struct rt_merge_cursor *b)
{
	return rt_item_compare(a->next, b->next) < 0;
}

/* Restore the heap below position i after heap[i] grew. */
static void sift_down(struct rt_merge *m, size_t i)
{
	struct rt_merge_cursor moving = m->heap[i];
	for (;;) {
		size_t child = 2 * i + 1;
		if (child >= m->size)
			break;
		if (child + 1 < m->size && cursor_before(&m->heap[child + 1], &m->heap[child]))
			child++;
		if (!cursor_before(&m->heap[child], &moving))
			break;
		m->heap[i] = m->heap[child];
		i = child;
	}
	m->heap[i] = moving;
}

int rt_merge_init(struct rt_merge *m, const struct rt_merge_source *sources, size_t count)
{
	memset(m, 0, sizeof(*m));
	if (count == 0)
		return 0;
	m->heap = calloc(count, sizeof(*m->heap));
	if (!m->heap)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		if (!sources[i].count)
			continue;
		m->heap[m->size].next = sources[i].items;
		m->heap[m->size].end = sources[i].items + sources[i].count;
		m->size++;
	}
	for (size_t i = m->size / 2; i > 0; i--)
		sift_down(m, i - 1);
	return 0;
}

const struct rt_item *rt_merge_next(struct rt_merge *m)
{
	if (m->size == 0)
		return NULL;
	struct rt_merge_cursor *top = &m->heap[0];
	const struct rt_item *item = top->next++;
	if (top->next == top->end)
		*top = m->heap[--m->size];
	if (m->size > 1)
		sift_down(m, 0);
	return item;
}

void rt_merge_free(struct rt_merge *m)
{
	free(m->heap);
	memset(m, 0, sizeof(*m));
}
