/*
 * exporter.h - what every export format provides to `ringtrace export`.
 *
 * The command (cmd/export.c) walks the trace set once, in time order, and
 * gives each item, flattened (event/event.h), to the format's
 * event function; nothing is read twice and nothing is kept per event, so
 * an exporter's memory grows with threads and sites, never with events.
 *
 *   open    once, before the first event: the set's sources are known
 *           (their readers: threads, sites, programs); write the preamble
 *   event   each item in time order
 *   finish  after the last item: write what closes the output
 *   free    always once open set *state (finish or not, open failed or not)
 *
 * Errors are -errno; open may also fill message (one line, no newline).
 */
#ifndef RT_EXPORT_EXPORTER_H
#define RT_EXPORT_EXPORTER_H

#include <stddef.h>

#include "common/output.h"
#include "event/event.h"
#include "read/trace_set.h"

struct rt_export_target {
	struct rt_out *out;		/* the stream formats: standard output, buffered */
	const char *dir;		/* the directory formats (CTF): where to write */
	const struct rt_trace_set *set; /* the sources: set->sources[i].reader */
};

struct rt_exporter {
	const char *name; /* the option: "chrome" for --chrome */
	int writes_dir;	  /* takes a directory (the last argument), not standard output */
	int (*open)(void **state, const struct rt_export_target *target, char *message,
		    size_t message_size);
	int (*event)(void *state, const struct rt_event *ev);
	int (*finish)(void *state);
	void (*free)(void *state);
};

extern const struct rt_exporter rt_exporter_chrome;
extern const struct rt_exporter rt_exporter_ctf;
extern const struct rt_exporter rt_exporter_perfetto;

#endif /* RT_EXPORT_EXPORTER_H */
