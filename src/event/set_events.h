/*
 * set_events.h - the events of an open set, as `export`, `analyze` and
 * `ship` read them: a builder (event/event.h) over every source, forked
 * sources marked (they derive no position), with debug_dirs as --debug-dir
 * named them.
 */
#ifndef RT_EVENT_SET_EVENTS_H
#define RT_EVENT_SET_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "event/event.h"
#include "read/trace_set.h"

struct rt_set_events {
	const struct rt_reader **readers; /* the builder reads through them */
	struct rt_event_builder *builder;
};

/* 0 or -ENOMEM. */
int rt_set_events_open(struct rt_set_events *e, struct rt_trace_set *set,
		       const char *const *debug_dirs, size_t debug_dir_count);

/*
 * Close it, saying on stderr how many log messages and I/O records had a
 * damaged payload ("..., <done>": what the command did with them).
 * Returns that count: damage, as dump counts it, for the exit status.
 */
uint64_t rt_set_events_close(struct rt_set_events *e, const char *done);

#endif /* RT_EVENT_SET_EVENTS_H */
