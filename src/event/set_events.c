/*
 * set_events.c - the events of an open set (event/set_events.h): one
 * builder over every source, the sources that forked or were forked marked
 * (they derive no position).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "event/set_events.h"

int rt_set_events_open(struct rt_set_events *e, struct rt_trace_set *set,
		       const char *const *debug_dirs, size_t debug_dir_count)
{
	e->builder = NULL;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	e->readers = calloc(set->source_count + 1, sizeof(*e->readers));
	if (!e->readers)
		return -ENOMEM;
	for (size_t i = 0; i < set->source_count; i++)
		e->readers[i] = set->sources[i].reader;
	e->builder =
	    rt_event_builder_new(e->readers, set->source_count, debug_dirs, debug_dir_count);
	if (!e->builder) {
		free(e->readers);
		e->readers = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < set->source_count; i++)
		if (rt_trace_set_shares_files(set, i))
			rt_event_builder_forked(e->builder, i);
	return 0;
}

uint64_t rt_set_events_close(struct rt_set_events *e, const char *done)
{
	uint64_t n = e->builder ? rt_event_builder_damaged(e->builder) : 0;
	if (n)
		fprintf(
		    stderr,
		    "ringtrace: %llu log message%s or I/O record%s with a damaged payload, %s\n",
		    (unsigned long long)n, n == 1 ? "" : "s", n == 1 ? "" : "s", done);
	rt_event_builder_free(e->builder);
	free(e->readers);
	e->builder = NULL;
	e->readers = NULL;
	return n;
}
