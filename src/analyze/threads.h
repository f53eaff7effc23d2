/*
 * threads.h - the threads an analysis has seen, by (source, tid), as dense
 * indices for the analyzer's own per-thread arrays, with what a row needs
 * to name them: pid, tid and the thread's name.  One lookup per event,
 * through a small cache of the threads seen last (by tid) before the hash.
 */
#ifndef RT_ANALYZE_THREADS_H
#define RT_ANALYZE_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/id_table.h"
#include "event/event.h"

#define RT_ANALYZE_THREAD_NAME_MAX 32

struct rt_analyze_thread {
	uint32_t source;
	int32_t pid, tid;
	char name[RT_ANALYZE_THREAD_NAME_MAX]; /* NUL-terminated, possibly empty */
	size_t name_length;
	const char *seen; /* the event's name string it was copied from */
};

/* A few recent threads, by tid: events of several threads interleave. */
#define RT_ANALYZE_THREAD_CACHE 64u

struct rt_analyze_thread_cached {
	uint32_t source;
	int32_t tid;
	long index; /* -1: empty */
};

struct rt_analyze_threads {
	struct rt_id_table ids;
	struct rt_analyze_thread *items;
	size_t count, capacity;
	struct rt_analyze_thread_cached cache[RT_ANALYZE_THREAD_CACHE];
};

void rt_analyze_threads_init(struct rt_analyze_threads *t);
void rt_analyze_threads_free(struct rt_analyze_threads *t);

/*
 * The index of ev's thread, added when new (the count before the call is
 * then returned: the caller grows its arrays to count).  A thread renamed
 * later keeps its latest non-empty name.  -1 when out of memory.
 */
long rt_analyze_thread_slow(struct rt_analyze_threads *t, const struct rt_event *ev);

static inline long rt_analyze_thread(struct rt_analyze_threads *t, const struct rt_event *ev)
{
	const struct rt_analyze_thread_cached *c =
	    &t->cache[(uint32_t)ev->tid & (RT_ANALYZE_THREAD_CACHE - 1)];
	if (c->index >= 0 && c->tid == ev->tid && c->source == ev->source &&
	    t->items[c->index].seen == ev->thread.s)
		return c->index;
	return rt_analyze_thread_slow(t, ev);
}

#endif /* RT_ANALYZE_THREADS_H */
