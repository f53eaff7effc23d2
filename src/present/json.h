/*
 * json.h - events and losses as JSON Lines, one object per line:
 *
 *   {"kind":"trace","ts_ns":7718998976,"tid":3702,"thread":"name","cpu":2,"seq":41,
 *    "tag":"before send","file":"app.c","line":12,"func":"main","args":[2,-123]}
 *   {"kind":"lost","tid":3702,"count":7,"reason":"dropped","ts_ns":81234000,
 *    "ts_last_ns":81290012,"note":"ring full"}
 *   {"kind":"last_event",...the fields of "trace"...}, or of "log", or
 *    "event":"io", "enter" or "exit" and the fields of those
 *
 * ts_ns is signed nanoseconds since the trace's start; cpu is -1 when
 * unknown; a lost object has ts_ns only when the time is known (and
 * ts_last_ns when the losses span a known time); a last_event has no seq
 * when it came from the thread entry's copy.  docs/JSON.md is the contract.
 */
#ifndef RT_PRESENT_JSON_H
#define RT_PRESENT_JSON_H

#include <stdint.h>

#include "common/output.h"
#include "present/fragments.h"
#include "read/arena_reader.h"
#include "symbols/function_names.h"

struct rt_event_builder; /* event/event.h */

/* Threads whose seqs keep a prefix each: more share one, which only makes it miss. */
#define RT_JSON_SEQ_PREFIXES 64

struct rt_json_printer {
	struct rt_out *out;
	const struct rt_reader *reader; /* the source of the item being printed */
	/* threads: ,"tid":3702,"thread":"name","cpu":
	 * sites: ,"tag":"..","file":"..","line":12,"func":"..","args":[ */
	struct rt_fragments *fragments;
	/* every source's reader and fragments (read/trace_set.h) */
	const struct rt_reader *const *readers;
	struct rt_fragments *all_fragments;
	size_t source_count;
	const struct rt_reader *single;
	/* objects carry "pid" (the source's process): set when several are shown */
	int show_pid;
	/* enter and exit events name their function with it; NULL: raw addresses */
	struct rt_function_names *names;
	/* log messages printed whose payload did not check (shown marked) */
	uint64_t log_damaged;
	size_t source; /* of the item being printed */
	/*
	 * The digits of the last time printed, and of the seqs of threads by
	 * the low bits of their index: a line's time and its thread's seq
	 * are close to ones printed before (common/output.h).
	 */
	struct rt_fmt_prefix time_prefix;
	struct rt_fmt_prefix seq_prefix[RT_JSON_SEQ_PREFIXES];
	/*
	 * the items decoded into events (event/event.h): what every object
	 * shows, an I/O call's descriptor names included (the builder's view,
	 * fed in output order; rt_event_builder_take_io for calls not shown)
	 */
	struct rt_event_builder *events;
};

int rt_json_printer_init(struct rt_json_printer *p, struct rt_out *out,
			 const struct rt_reader *reader);
/* Several sources: an item is printed with the reader of its source. */
int rt_json_printer_init_sources(struct rt_json_printer *p, struct rt_out *out,
				 const struct rt_reader *const *readers, size_t count);
void rt_json_printer_free(struct rt_json_printer *p);
/* Print the next items as items of source (an index in the readers given). */
void rt_json_printer_source(struct rt_json_printer *p, size_t source);
/*
 * The reader of source read its tables again (rt_reader_reload): its
 * threads and sites are rendered anew; the rest of the printer's state
 * (the previous event's time, names) is kept.  0 or -ENOMEM.
 */
int rt_json_printer_reload(struct rt_json_printer *p, size_t source);

/* A "trace" object for an event, a "lost" object for a loss. */
void rt_json_print_item(struct rt_json_printer *p, const struct rt_item *item);
/* n items of the printer's source, in order, as rt_json_print_item prints each. */
void rt_json_print_items(struct rt_json_printer *p, const struct rt_item *items, size_t n);
/* A "last_event" object. */
void rt_json_print_last_event(struct rt_json_printer *p, const struct rt_item *item);

#endif /* RT_PRESENT_JSON_H */
