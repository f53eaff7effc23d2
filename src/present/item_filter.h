/*
 * item_filter.h - what the reading views (`replay`, `report`, `dump`) keep
 * of a time line, as their options chose: processes (--pid), a time range
 * (--since, --until) and functions (-F/--filter, -N/--notrace).  The views
 * feed it every item in time order and show only those it keeps; --tid is
 * the trace set's own (rt_trace_set_start).
 *
 * The rules, the same in every view:
 * - A function pattern is a shell glob (fnmatch: '*', '?', '[...]'), matched
 *   against the whole of a function's short name ("geo::area",
 *   symbols/demangle.h) and of its full name ("geo::area(int, int)"): it
 *   selects the function when either matches.  A function with no symbol
 *   is matched by the text that names it ("libfoo.so+0x1a2b").
 * - -F: the calls of the functions it selects are kept with everything
 *   their thread recorded inside them (callees, events, log messages, I/O).
 *   -N: the calls it selects are left out, with everything inside them; it
 *   applies inside -F's calls too.  Without -F every call is a candidate.
 * - --since/--until (times since the trace's start, the zero `dump` shows):
 *   items recorded in that span, both ends included; a call entered in it
 *   is kept with its exit, even one after --until.
 *   An exit whose enter is not in the trace is left out with --since (its
 *   enter may come before it): a walk may then seek to --since
 *   (rt_item_filter_from_ns).
 * - --pid: the items of those processes.
 * - Losses are never hidden by a function: a loss is kept when its time is
 *   in the span (or not known) and its process is kept (or is none, as for
 *   the damage of a trace file).
 * Calls nest by the depth their events carry, paired by the span tracker
 * (event/span_tracker.h) as the call trees pair them, so a call whose exit
 * was lost ends where a later event of its thread says.
 */
#ifndef RT_PRESENT_ITEM_FILTER_H
#define RT_PRESENT_ITEM_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "read/arena_reader.h"

#define RT_FILTER_PIDS_MAX 64
#define RT_FILTER_PATTERNS_MAX 64

/* What the command line chose (strings must outlive the filter). */
struct rt_item_filter_options {
	int32_t pids[RT_FILTER_PIDS_MAX];
	size_t pid_count;
	int has_since, has_until;
	uint64_t since_ns, until_ns;
	const char *include[RT_FILTER_PATTERNS_MAX]; /* -F */
	size_t include_count;
	const char *exclude[RT_FILTER_PATTERNS_MAX]; /* -N */
	size_t exclude_count;
};

/* Whether the options filter anything. */
int rt_item_filter_wanted(const struct rt_item_filter_options *o);

/* Where a walk of the time line may begin (rt_trace_set_start_from): INT64_MIN, the start. */
static inline int64_t rt_item_filter_from_ns(const struct rt_item_filter_options *o)
{
	return o->has_since && o->since_ns <= (uint64_t)INT64_MAX ? (int64_t)o->since_ns
								  : INT64_MIN;
}

struct rt_item_filter;
struct rt_function_names;

/*
 * A filter by o, naming functions through names (NULL: by their address
 * only).  NULL when out of memory.
 */
struct rt_item_filter *rt_item_filter_new(const struct rt_item_filter_options *o,
					  struct rt_function_names *names);
void rt_item_filter_free(struct rt_item_filter *f);
/* Forget every thread's calls, for another walk from the start. */
void rt_item_filter_reset(struct rt_item_filter *f);

enum rt_filter_verdict {
	RT_FILTER_DROP = 0,
	RT_FILTER_KEEP = 1,
	/*
	 * Dropped, but its depth ends kept calls whose exit was lost (an enter
	 * or exit at their depth or above): a view that nests calls closes them
	 * there (rt_call_tree_close_lost).
	 */
	RT_FILTER_CLOSES = 2,
};

/*
 * The verdict on item, the next of the time line (of source, described by
 * rd): an enum rt_filter_verdict, or -ENOMEM.
 */
int rt_item_filter_check(struct rt_item_filter *f, uint32_t source, const struct rt_reader *rd,
			 const struct rt_item *item);

/*
 * Feed item to a call tree as f decides: kept, it is fed; dropped, it may
 * still close calls (RT_FILTER_CLOSES).  f NULL: fed.  Returns the verdict
 * or -ENOMEM.
 */
struct rt_call_tree;
int rt_item_filter_feed(struct rt_item_filter *f, struct rt_call_tree *tree, uint32_t source,
			const struct rt_reader *rd, const struct rt_item *item);

/*
 * Whether no later item can be kept: the time line has passed --until and
 * no kept call is still open (f NULL: never).  A walk may stop there.
 */
int rt_item_filter_done(const struct rt_item_filter *f);

#endif /* RT_PRESENT_ITEM_FILTER_H */
