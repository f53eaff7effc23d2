/*
 * threads.h - the threads an analysis has seen, by (source, tid), as dense
 * indices for the analyzer's own per-thread arrays, with what a row needs
 * to name them: pid, tid and the thread's name.  One lookup per event; the
 * last thread looked up is remembered, as events of one thread come in
 * runs.
 */
#ifndef RT_ANALYZE_THREADS_H
#define RT_ANALYZE_THREADS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/id_table.h"
#include "export/export_event.h"

#define RT_ANALYZE_THREAD_NAME_MAX 32

struct rt_analyze_thread {
	uint32_t source;
	int32_t pid, tid;
	char name[RT_ANALYZE_THREAD_NAME_MAX]; /* NUL-terminated, possibly empty */
	size_t name_length;
};

struct rt_analyze_threads {
	struct rt_id_table ids;
	struct rt_analyze_thread *items;
	size_t count, capacity;
	/* the last lookup */
	uint32_t last_source;
	int32_t last_tid;
	long last_index; /* -1: none yet */
};

void rt_analyze_threads_init(struct rt_analyze_threads *t);
void rt_analyze_threads_free(struct rt_analyze_threads *t);

/*
 * The index of ev's thread, added when new (the count before the call is
 * then returned: the caller grows its arrays to count).  A thread renamed
 * later keeps its latest non-empty name.  -1 when out of memory.
 */
long rt_analyze_thread_slow(struct rt_analyze_threads *t, const struct rt_export_event *ev);

static inline long rt_analyze_thread(struct rt_analyze_threads *t, const struct rt_export_event *ev)
{
	if (t->last_index >= 0 && ev->tid == t->last_tid && ev->source == t->last_source)
		return t->last_index;
	return rt_analyze_thread_slow(t, ev);
}

#endif /* RT_ANALYZE_THREADS_H */
