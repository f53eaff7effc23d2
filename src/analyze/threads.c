/*
 * threads.c - see threads.h.
 */
#include "analyze/threads.h"

#include <stdlib.h>
#include <string.h>

void rt_analyze_threads_init(struct rt_analyze_threads *t)
{
	memset(t, 0, sizeof(*t));
	rt_id_table_init(&t->ids);
	for (unsigned i = 0; i < RT_ANALYZE_THREAD_CACHE; i++)
		t->cache[i].index = -1;
}

void rt_analyze_threads_free(struct rt_analyze_threads *t)
{
	rt_id_table_free(&t->ids);
	free(t->items);
	rt_analyze_threads_init(t);
}

static void take_name(struct rt_analyze_thread *x, const struct rt_event *ev)
{
	x->seen = ev->thread.s;
	if (!ev->thread.s || !ev->thread.length)
		return;
	size_t n =
	    ev->thread.length < sizeof(x->name) - 1 ? ev->thread.length : sizeof(x->name) - 1;
	if (n == x->name_length && memcmp(x->name, ev->thread.s, n) == 0)
		return;
	memcpy(x->name, ev->thread.s, n);
	x->name[n] = 0;
	x->name_length = n;
}

long rt_analyze_thread_slow(struct rt_analyze_threads *t, const struct rt_event *ev)
{
	uint64_t id = (uint64_t)(uint32_t)ev->tid;
	long i = rt_id_table_get(&t->ids, ev->source, id);
	if (i < 0) {
		if (t->count == t->capacity) {
			size_t capacity = t->capacity ? t->capacity * 2 : 16;
			struct rt_analyze_thread *grown =
			    realloc(t->items, capacity * sizeof(*grown));
			if (!grown)
				return -1;
			t->items = grown;
			t->capacity = capacity;
		}
		if ((i = rt_id_table_add(&t->ids, ev->source, id)) < 0)
			return -1;
		struct rt_analyze_thread *x = &t->items[i];
		memset(x, 0, sizeof(*x));
		x->source = ev->source;
		x->pid = ev->pid;
		x->tid = ev->tid;
		t->count++;
	}
	/* a thread may be named after its first events: a new name string is looked at */
	take_name(&t->items[i], ev);
	struct rt_analyze_thread_cached *c =
	    &t->cache[(uint32_t)ev->tid & (RT_ANALYZE_THREAD_CACHE - 1)];
	*c = (struct rt_analyze_thread_cached){.source = ev->source, .tid = ev->tid, .index = i};
	return i;
}
