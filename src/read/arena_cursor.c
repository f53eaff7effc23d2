/*
 * arena_cursor.c - a thread's items, a window at a time (read/arena_cursor.h).
 *
 * The check pass kept, per thread, the walk's state just before its first
 * item and how many items it has.  The cursor copies that state and walks
 * on, giving each item to the thread, until it has given them all.  The
 * bytes it reads are those the check pass read: the ring in the file (a
 * dead writer's, which nothing changes), or the copy of a live ring's
 * window the reader keeps.  Should they change all the same (another
 * process truncated the file), an item that is not the thread's ends the
 * walk: fewer items, never another thread's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/records.h"
#include "read/arena_cursor.h"

/* Payload bytes one window may gather; a window stops early past it. */
#define WINDOW_PAYLOAD_MAX (1u << 20)

int rt_arena_cursor_init(struct rt_arena_cursor *c, const struct rt_reader *rd, uint32_t thread,
			 size_t window)
{
	memset(c, 0, sizeof(*c));
	c->rd = rd;
	c->thread = thread;
	const size_t total = thread < rd->thread_count ? rd->threads[thread].item_count : 0;
	if (!window)
		window = RT_ARENA_WINDOW;
	c->window = total < window ? total : window;
	if (c->window) {
		c->items = malloc(c->window * sizeof(*c->items));
		if (!c->items)
			return -ENOMEM;
	}
	rt_arena_cursor_rewind(c);
	return 0;
}

void rt_arena_cursor_rewind(struct rt_arena_cursor *c)
{
	const struct rt_reader *rd = c->rd;
	c->given = 0;
	c->done = c->window == 0 || !rd->walks.threads ||
		  rd->walks.threads[c->thread].source >= rd->walks.source_count;
	if (!c->done)
		c->walk = rd->walks.threads[c->thread].start;
}

/* Room for n more payload bytes after used; the items keep offsets until the window is full. */
static int payload_room(struct rt_arena_cursor *c, size_t used, size_t n)
{
	if (used + n <= c->payload_capacity)
		return 0;
	size_t capacity = c->payload_capacity ? c->payload_capacity : 64u << 10;
	while (capacity < used + n)
		capacity *= 2;
	unsigned char *bigger = realloc(c->payloads, capacity);
	if (!bigger)
		return -ENOMEM;
	c->payloads = bigger;
	c->payload_capacity = capacity;
	return 0;
}

size_t rt_arena_cursor_fill(struct rt_arena_cursor *c)
{
	if (c->done)
		return 0;
	const struct rt_reader *rd = c->rd;
	const struct rt_thread_walk *tw = &rd->walks.threads[c->thread];
	const struct rt_walk_source *src = &rd->walks.sources[tw->source].source;
	const struct rt_reader_thread *t = &rd->threads[c->thread];
	const size_t total = t->item_count;
	unsigned char payload[RT_LOG_PAYLOAD_MAX];
	size_t n = 0, used = 0;
	while (n < c->window && c->given < total && used < WINDOW_PAYLOAD_MAX) {
		struct rt_item *it = &c->items[n];
		if (rt_walk_next(rd, src, &c->walk, NULL, it, payload) != 1 || it->seq >= tw->end ||
		    it->seq < tw->first) {
			c->given = total; /* the bytes changed under us: the thread ends here */
			break;
		}
		it->thread = c->thread;
		it->tid = t->tid;
		if (rt_item_has_payload(it->kind)) {
			if (payload_room(c, used, it->log.length)) {
				c->given = total;
				break;
			}
			memcpy(c->payloads + used, payload, it->log.length);
			/* an offset until the window is whole: the buffer may still move */
			it->log.reserved[0] = used;
			used += it->log.length;
		}
		n++;
		c->given++;
	}
	for (size_t i = 0; used && i < n; i++) {
		struct rt_item *it = &c->items[i];
		if (rt_item_has_payload(it->kind)) {
			it->log.payload = c->payloads + it->log.reserved[0];
			it->log.reserved[0] = 0;
		}
	}
	if (c->given >= total)
		c->done = 1;
	return n;
}

void rt_arena_cursor_free(struct rt_arena_cursor *c)
{
	free(c->items);
	free(c->payloads);
	memset(c, 0, sizeof(*c));
}

int rt_arena_thread_items(const struct rt_reader *rd, uint32_t thread, struct rt_item **items,
			  size_t *count)
{
	struct rt_arena_cursor c;
	*items = NULL;
	*count = 0;
	if (rt_arena_cursor_init(&c, rd, thread, 0))
		return -ENOMEM;
	struct rt_item *all = NULL;
	size_t n = 0, payload_bytes = 0;
	int rc = 0;
	for (size_t got; (got = rt_arena_cursor_fill(&c)) > 0;) {
		struct rt_item *bigger = realloc(all, (n + got) * sizeof(*bigger));
		if (!bigger) {
			rc = -ENOMEM;
			break;
		}
		all = bigger;
		memcpy(all + n, c.items, got * sizeof(*all));
		n += got;
		for (size_t i = 0; i < got; i++)
			if (rt_item_has_payload(c.items[i].kind))
				payload_bytes += c.items[i].log.length;
	}
	rt_arena_cursor_free(&c);
	if (rc) {
		free(all);
		return rc;
	}
	if (payload_bytes) {
		/* the payloads went with their windows: read them again into one place */
		struct rt_item *whole = realloc(all, n * sizeof(*whole) + payload_bytes);
		if (!whole) {
			free(all);
			return -ENOMEM;
		}
		all = whole;
		unsigned char *at = (unsigned char *)(all + n);
		if (rt_arena_cursor_init(&c, rd, thread, 0)) {
			free(all);
			return -ENOMEM;
		}
		size_t k = 0;
		for (size_t got; (got = rt_arena_cursor_fill(&c)) > 0;) {
			for (size_t i = 0; i < got && k < n; i++, k++) {
				if (!rt_item_has_payload(c.items[i].kind))
					continue;
				memcpy(at, c.items[i].log.payload, c.items[i].log.length);
				all[k].log.payload = at;
				at += c.items[i].log.length;
			}
		}
		rt_arena_cursor_free(&c);
	}
	*items = all;
	*count = n;
	return 0;
}

size_t rt_arena_cursor_refill(void *state, const struct rt_item **items)
{
	struct rt_arena_cursor *c = state;
	size_t n = rt_arena_cursor_fill(c);
	*items = c->items;
	return n;
}

size_t rt_arena_window_for(size_t n)
{
	size_t each = n ? RT_ARENA_WINDOWS_BUDGET / n : RT_ARENA_WINDOW;
	if (each < 64)
		each = 64;
	return each < RT_ARENA_WINDOW ? each : RT_ARENA_WINDOW;
}
