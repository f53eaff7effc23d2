/*
 * arena_cursor.h - one thread's records of an arena, decoded a window at a
 * time.
 *
 * Opening an arena checks and counts every ring but keeps no item
 * (read/arena_reader.h).  A cursor reads a thread's items again, from where
 * the check pass found its first one, a bounded window of them at a time,
 * with the same checks (read/arena_walk.h): so it gives the items, in record
 * order, that the check pass counted, and memory follows the window, never
 * the number of events.  An item, and the payload it points to, lives until
 * the cursor's next fill.
 */
#ifndef RT_READ_ARENA_CURSOR_H
#define RT_READ_ARENA_CURSOR_H

#include <stddef.h>
#include <stdint.h>

#include "read/arena_reader.h"
#include "read/arena_walk.h"

/* Items a window holds unless asked otherwise. */
#define RT_ARENA_WINDOW 4096u

struct rt_arena_cursor {
	const struct rt_reader *rd;
	uint32_t thread;
	struct rt_walk walk;
	size_t given; /* items given since the start */
	struct rt_item *items;
	size_t window; /* room in items */
	unsigned char *payloads;
	size_t payload_capacity;
	int done;
};

/*
 * A cursor over thread `thread` of rd (an index in rd->threads), whose
 * windows hold up to window items (0: RT_ARENA_WINDOW; never more than the
 * thread has).  0 or -ENOMEM.
 */
int rt_arena_cursor_init(struct rt_arena_cursor *c, const struct rt_reader *rd, uint32_t thread,
			 size_t window);
/* The next window: its items in c->items, how many returned; 0 when the thread is done. */
size_t rt_arena_cursor_fill(struct rt_arena_cursor *c);
/* Back to the thread's first item. */
void rt_arena_cursor_rewind(struct rt_arena_cursor *c);
void rt_arena_cursor_free(struct rt_arena_cursor *c);

/*
 * Every item of a thread in one array the caller frees, with payloads in
 * one allocation after it: for tests and small tools, never for events
 * without bound.  0 or -ENOMEM; *items NULL when it has none.
 */
int rt_arena_thread_items(const struct rt_reader *rd, uint32_t thread, struct rt_item **items,
			  size_t *count);

/* rt_arena_cursor_fill() for a merge (read/merge.h): state is the cursor. */
size_t rt_arena_cursor_refill(void *state, const struct rt_item **items);

/* Items all of an arena's cursors hold together: a window's share of them each. */
#define RT_ARENA_WINDOWS_BUDGET (1u << 18)

/* The window each of n cursors reading at once gets from the budget. */
size_t rt_arena_window_for(size_t n);

#endif /* RT_READ_ARENA_CURSOR_H */
