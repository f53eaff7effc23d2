/*
 * io_calls.c - the file I/O calls of a set's sources, parsed and their
 * descriptors named by each source's own time-aware table
 * (event/io_calls.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/io_calls.h"

int rt_io_view_init(struct rt_io_view *v, const struct rt_reader *const *readers, size_t count)
{
	memset(v, 0, sizeof(*v));
	v->readers = readers;
	v->count = count;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	v->tables = calloc(count + 1, sizeof(*v->tables));
	v->forked = calloc(count + 1, 1);
	if (!v->tables || !v->forked) {
		rt_io_view_free(v);
		return -ENOMEM;
	}
	return 0;
}

void rt_io_view_free(struct rt_io_view *v)
{
	for (size_t i = 0; v->tables && i < v->count; i++)
		rt_fd_names_free(v->tables[i]);
	free(v->tables);
	free(v->forked);
	memset(v, 0, sizeof(*v));
}

void rt_io_view_forked(struct rt_io_view *v, size_t source)
{
	if (source >= v->count)
		return;
	v->forked[source] = 1;
	if (v->tables[source])
		rt_fd_names_positions(v->tables[source], 0);
}

/* The table of source, made and seeded at its first call; NULL without memory. */
static struct rt_fd_names *table_of(struct rt_io_view *v, size_t source)
{
	if (source >= v->count)
		return NULL;
	if (!v->tables[source]) {
		struct rt_fd_names *t = rt_fd_names_new();
		if (!t)
			return NULL;
		if (rt_fd_names_seed(t, &v->readers[source]->fds)) {
			rt_fd_names_free(t);
			return NULL;
		}
		rt_fd_names_positions(t, !v->forked[source]);
		v->tables[source] = t;
	}
	return v->tables[source];
}

void rt_io_view_take(struct rt_io_view *v, size_t source, const struct rt_item *item, int apply,
		     struct rt_io_shown *out)
{
	memset(out, 0, sizeof(*out));
	if (rt_io_event_parse(item->log.payload, item->log.length, &out->ev, &out->problem)) {
		v->malformed += apply != 0; /* an item shown twice counts once */
		return;
	}
	out->ok = 1;
	struct rt_fd_names *t = table_of(v, source);
	if (!t) {
		/* no memory for names: every descriptor unknown, never a wrong one */
		out->names.fd.why = out->names.fd2.why = "unseen";
	} else if (apply) {
		rt_fd_names_call(t, &out->ev, item->counter, &out->names);
	} else {
		rt_fd_names_resolve(t, &out->ev, &out->names);
	}
	const struct rt_reader *rd = source < v->count ? v->readers[source] : NULL;
	/* a rundown or a naming is not a call: it has no duration */
	if (rd && !rd->raw_time && out->ev.op != RT_IO_RUNDOWN && out->ev.op != RT_IO_NAMED &&
	    out->ev.start && out->ev.start <= item->counter) {
		out->has_duration = 1;
		out->dur_ns = rt_timebase_ns(&rd->timebase, item->counter) -
			      rt_timebase_ns(&rd->timebase, out->ev.start);
		if (out->dur_ns < 0)
			out->dur_ns = 0;
	}
}
