/*
 * text.h - events and losses as JTRACE-style text lines.
 *
 *   [   7.718998976][cpu 2 tid 3702 name] : 00000002 00000006 ... : (       0.308 uSec) :
 * app.c:main:12 (tag)
 *   --- lost: tid 3702 name, 120 events overwritten ---
 *   --- lost: tid 3702 name, 7 events dropped between 1.234567890 and 1.240000000 (ring full) ---
 *
 * The parts of a line that depend only on the thread or the site are
 * rendered once and copied after that.
 */
#ifndef RT_PRESENT_TEXT_H
#define RT_PRESENT_TEXT_H

#include <stdint.h>

#include "common/output.h"
#include "present/fragments.h"
#include "read/arena_reader.h"
#include "symbols/function_names.h"

struct rt_event_builder; /* event/event.h */

struct rt_text_printer {
	struct rt_out *out;
	const struct rt_reader *reader; /* the source of the item being printed */
	/* threads: "tid 3702 name] : ", sites: "app.c:main:12 (tag)" and a newline */
	struct rt_fragments *fragments;
	int64_t previous_ns;
	int have_previous;
	int show_pid; /* several processes: events say "pid P" before the tid */
	/* every source's reader and fragments (read/trace_set.h) */
	const struct rt_reader *const *readers;
	struct rt_fragments *all_fragments;
	size_t source_count;
	const struct rt_reader *single;
	/* enter and exit events name their function with it; NULL: raw addresses */
	struct rt_function_names *names;
	/* log messages printed whose payload did not check (shown marked) */
	uint64_t log_damaged;
	/*
	 * the items decoded into events (event/event.h), I/O calls' descriptor
	 * names among them, fed in output order (rt_event_builder_take_io for
	 * calls not shown)
	 */
	struct rt_event_builder *events;
	size_t source; /* of the item being printed */
};

int rt_text_printer_init(struct rt_text_printer *p, struct rt_out *out,
			 const struct rt_reader *reader);
/* Several sources: an item is printed with the reader of its source. */
int rt_text_printer_init_sources(struct rt_text_printer *p, struct rt_out *out,
				 const struct rt_reader *const *readers, size_t count);
void rt_text_printer_free(struct rt_text_printer *p);
/* Print the next items as items of source (an index in the readers given). */
void rt_text_printer_source(struct rt_text_printer *p, size_t source);
/*
 * The reader of source read its tables again (rt_reader_reload): its
 * threads and sites are rendered anew; the rest of the printer's state
 * (the previous event's time, names) is kept.  0 or -ENOMEM.
 */
int rt_text_printer_reload(struct rt_text_printer *p, size_t source);

/* "ringtrace: recovered 166/170 events from 3 threads (4 lost)" */
void rt_text_print_summary(struct rt_text_printer *p, const struct rt_counts *counts,
			   uint32_t threads);
/* One event (with the time since the previous one printed) or one loss. */
void rt_text_print_item(struct rt_text_printer *p, const struct rt_item *item);
/* The section of last events: a heading, then one event per call (delta 0). */
void rt_text_print_last_heading(struct rt_text_printer *p);
void rt_text_print_last_event(struct rt_text_printer *p, const struct rt_item *item);
/* "Last timestamp [  17.437678993]" */
void rt_text_print_last_timestamp(struct rt_text_printer *p, int64_t ns);
/* The same when the clock metadata was lost: "Last timestamp [raw 123456]". */
void rt_text_print_last_raw(struct rt_text_printer *p, uint64_t counter);

/* "   7.718998976": seconds right-aligned to 4 columns; needs 32 bytes. */
char *rt_text_format_timestamp(char *p, int64_t ns);

#endif /* RT_PRESENT_TEXT_H */
