/*
 * analyzer.h - what every analysis provides to `ringtrace analyze`.
 *
 * The command (cmd/analyze.c) walks the trace set once, in time order, and
 * hands each item, flattened as for export (event/event.h), to the
 * chosen analyzer.  An analyzer keeps per-name and per-thread state only,
 * never per event, so its memory is bounded by the sites and threads of
 * the set, not by its length.  Losses are counted by the command itself
 * (analyze/losses.h) and reported after the analyzer's rows.
 *
 *   check   before any input is opened: refuse options the analyzer cannot
 *           use (a missing --from, say) with a message; NULL: all do
 *   open    once, before the first event: the set's sources are known
 *   event   each item in time order (losses too, if the analyzer cares)
 *   report  after the last item: the rows, to report->out as a table or
 *           one JSON object per line, and the analyzer's plots to
 *           report->html when the user asked for a page
 *   free    always once open set *state
 *
 * Errors are -errno; open may fill message (one line, no newline).
 */
#ifndef RT_ANALYZE_ANALYZER_H
#define RT_ANALYZE_ANALYZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/output.h"
#include "event/event.h"
#include "read/trace_set.h"

struct rt_html;

/* What the command line asked; each analyzer reads the fields it knows. */
struct rt_analyze_options {
	int json;	/* --json: one object per row instead of a table */
	int per_thread; /* --per-thread: rows per thread as well as per name */
	unsigned top;	/* --top N: at most N rows where rows are ranked (0: the default) */
	/* latency */
	const char *from_tag, *to_tag; /* --from TAG --to TAG */
	int key_arg;		       /* --key argN: N, or -1 for "the same thread" */
	/* by-arg */
	const char *tag; /* --tag TAG */
	int arg;	 /* --arg N, or -1 when not given */
	/* rate */
	int64_t interval_ns; /* --interval: the width of one bin (0: chosen from the span) */
	/* stalls */
	int64_t min_gap_ns; /* --min GAP: shorter gaps are not stalls (0: the default) */
};

struct rt_analyze_context {
	const struct rt_analyze_options *options;
	const struct rt_trace_set *set; /* the sources: set->sources[i].reader */
};

struct rt_analyze_report {
	struct rt_out *out;   /* the table or the JSON rows */
	int json;	      /* write JSON rows, not a table */
	struct rt_html *html; /* NULL, or the page to add this analyzer's plots to */
};

struct rt_analyzer {
	const char *name;    /* the command line's word: "spans" */
	const char *summary; /* one line for --help */
	int (*check)(const struct rt_analyze_options *options, char *message, size_t message_size);
	int (*open)(void **state, const struct rt_analyze_context *context, char *message,
		    size_t message_size);
	int (*event)(void *state, const struct rt_event *ev);
	/*
	 * Optional: whether a trace event of site (NULL: its site is lost) is
	 * of no use to the analysis, so that it is counted but not decoded
	 * into an event.  Other kinds (losses, logs, I/O) are always decoded.
	 * By the site and the options alone, never by what was seen so far:
	 * the reading decides ahead of the events (rt_trace_set_skip_trace).
	 */
	int (*skips_trace)(void *state, const struct rt_site *site);
	int (*report)(void *state, const struct rt_analyze_report *report);
	void (*free)(void *state);
};

extern const struct rt_analyzer rt_analyzer_spans;
extern const struct rt_analyzer rt_analyzer_latency;
extern const struct rt_analyzer rt_analyzer_rate;
extern const struct rt_analyzer rt_analyzer_by_arg;
extern const struct rt_analyzer rt_analyzer_stalls;

#endif /* RT_ANALYZE_ANALYZER_H */
