/*
 * merge.c - k-way merge of sorted item sources with a binary min-heap.
 *
 * The top cursor moves past the items it gave (one, or a run) only on the
 * next call, so that they stay where they are until then even when moving
 * on refills its source; the heap sees the same steps in the same order
 * either way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "read/merge.h"

/* Inline: it is most of the merge's work, once an item while one source keeps winning. */
static inline __attribute__((always_inline)) int cursor_before(const struct rt_merge_cursor *a,
							       const struct rt_merge_cursor *b)
{
	int c = rt_item_compare(a->next, b->next);
	return c ? c < 0 : a->key < b->key;
}

/* Restore the heap below position i, where moving goes, after it grew. */
static void sift_down_from(struct rt_merge *m, size_t i, struct rt_merge_cursor moving)
{
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

static void sift_down(struct rt_merge *m, size_t i)
{
	sift_down_from(m, i, m->heap[i]);
}

/* The top, known to come after its smaller child child: that child up, and on down from there. */
static void sift_top_below(struct rt_merge *m, size_t child)
{
	struct rt_merge_cursor moving = m->heap[0];
	m->heap[0] = m->heap[child];
	sift_down_from(m, child, moving);
}

/* The cursor's next items from its source: 0 when it is done. */
static int refill(struct rt_merge_cursor *c)
{
	const struct rt_item *items = NULL;
	size_t n = c->refill(c->state, &items);
	c->next = c->end = NULL;
	if (n && items) {
		c->next = items;
		c->end = items + n;
	}
	return c->next != NULL;
}

/* Past the cursor's current n items: 0 when its source is done. */
static int cursor_advance(struct rt_merge_cursor *c, size_t n)
{
	c->next += n;
	if (c->next < c->end)
		return 1;
	if (!c->refill)
		return 0;
	return refill(c);
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
		struct rt_merge_cursor *c = &m->heap[m->size];
		c->refill = sources[i].refill;
		c->state = sources[i].state;
		c->key = sources[i].key;
		c->next = c->end = NULL;
		if (sources[i].count) {
			c->next = sources[i].items;
			c->end = sources[i].items + sources[i].count;
		}
		if (c->next || (c->refill && refill(c)))
			m->size++;
	}
	for (size_t i = m->size / 2; i > 0; i--)
		sift_down(m, i - 1);
	return 0;
}

/* The top's smaller child (sift_down's choice, ties alike), kept until the heap changes. */
static size_t runner_up(struct rt_merge *m)
{
	if (!m->runner)
		m->runner = m->size > 2 && cursor_before(&m->heap[2], &m->heap[1]) ? 2 : 1;
	return m->runner;
}

/* The top cursor moved past what it gave last: the heap as it must be for the next. */
static inline __attribute__((always_inline)) void move_on(struct rt_merge *m)
{
	if (m->advance) {
		const size_t n = m->advance;
		/* the run ended where the runner comes first: the compare that said so stands */
		const int runner_first = n == m->runner_first_at;
		m->advance = m->runner_first_at = 0;
		if (!cursor_advance(&m->heap[0], n)) {
			m->heap[0] = m->heap[--m->size];
			m->runner = 0;
			if (m->size > 1)
				sift_down(m, 0);
		} else if (m->size > 1 &&
			   (runner_first || cursor_before(&m->heap[runner_up(m)], &m->heap[0]))) {
			/*
			 * Only then does the top move: while one source keeps
			 * winning (a thread running alone), one compare an item.
			 */
			const size_t runner = runner_up(m);
			m->runner = 0;
			sift_top_below(m, runner);
		}
	}
}

const struct rt_item *rt_merge_next(struct rt_merge *m)
{
	move_on(m);
	if (m->size == 0)
		return NULL;
	m->advance = 1;
	m->key = m->heap[0].key;
	return m->heap[0].next;
}

size_t rt_merge_run(struct rt_merge *m, const struct rt_item **items)
{
	move_on(m);
	if (m->size == 0)
		return 0;
	const struct rt_merge_cursor *top = &m->heap[0];
	size_t n = (size_t)(top->end - top->next);
	if (m->size > 1) {
		/* as rt_merge_next steps: on until the next source in line comes first */
		const struct rt_merge_cursor *runner = &m->heap[runner_up(m)];
		struct rt_merge_cursor at = *top;
		size_t k = 1;
		for (at.next = top->next + 1; k < n && !cursor_before(runner, &at); at.next++)
			k++;
		m->runner_first_at = k < n ? k : 0;
		n = k;
	}
	m->advance = n;
	m->key = top->key;
	*items = top->next;
	return n;
}

void rt_merge_free(struct rt_merge *m)
{
	free(m->heap);
	memset(m, 0, sizeof(*m));
}
