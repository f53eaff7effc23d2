/*
 * io_calls.h - file I/O calls as the event model gives them: the record's
 * payload parsed (decode/io_event.h) and its descriptors named by the
 * process's own time-aware table (decode/fd_names.h).
 *
 * A consumer keeps one table per source, made at the source's first call
 * and seeded from its reader's descriptor seeds, and feeds it every call of
 * that source in output order; so `dump`, `replay` and a long-lived printer
 * fed poll after poll share one behaviour.  The records of a source must
 * reach it in completion order (the order every output stream has).  How a
 * call is printed is present/io_view.h's.
 */
#ifndef RT_EVENT_IO_CALLS_H
#define RT_EVENT_IO_CALLS_H

#include <stddef.h>
#include <stdint.h>

#include "decode/fd_names.h"
#include "decode/io_event.h"
#include "format/records.h"
#include "read/arena_reader.h"

struct rt_io_view {
	const struct rt_reader *const *readers;
	size_t count;
	struct rt_fd_names **tables; /* per source, NULL until its first call */
	unsigned char *forked;	     /* per source: positions are never derived */
	uint64_t malformed;	     /* calls whose payload did not parse */
};

/* One call, ready to print. */
struct rt_io_shown {
	int ok;		     /* the payload parsed; else problem says why */
	const char *problem; /* a few words */
	struct rt_io_event ev;
	struct rt_fd_resolved names;
	int has_duration;
	int64_t dur_ns;
};

int rt_io_view_init(struct rt_io_view *v, const struct rt_reader *const *readers, size_t count);
void rt_io_view_free(struct rt_io_view *v);

/* Source forked a traced child of the same input: it derives no position. */
void rt_io_view_forked(struct rt_io_view *v, size_t source);

/*
 * The RT_ITEM_IO item of source, as shown; apply 0 resolves without
 * feeding the table (an item shown a second time).  A payload that does
 * not parse is counted in malformed (when apply).
 */
void rt_io_view_take(struct rt_io_view *v, size_t source, const struct rt_item *item, int apply,
		     struct rt_io_shown *out);

#endif /* RT_EVENT_IO_CALLS_H */
