/*
 * duration_rows.h - one row of duration statistics, as the spans and
 * latency analyzers print it: a line of a table with the row's log-scale
 * histogram drawn under it, or one JSON object; and the rows as a table of
 * the page.
 *
 * A row is a name (a span's, "A -> B"), optionally a thread, its
 * statistics (analyze/quantiles.h) and a few counts of its own that are
 * not durations (spans: unclosed, orphan ends; latency: unmatched), each
 * with its column header and JSON key.
 */
#ifndef RT_ANALYZE_DURATION_ROWS_H
#define RT_ANALYZE_DURATION_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/quantiles.h"
#include "common/output.h"

struct rt_html;

#define RT_DURATION_COUNTS_MAX 4

/* A count beside the durations: "unclosed", "unclosed": 3. */
struct rt_duration_count {
	const char *header;   /* the table's column (at most 11 characters) */
	const char *json_key; /* the JSON row's key */
	uint64_t value;
};

struct rt_duration_row {
	const char *name; /* raw bytes, escaped when written */
	size_t name_length;
	const char *kind; /* NULL, or a JSON "kind" value ("function", "span") */
	struct rt_quantiles *q;
	/* a thread's row (--per-thread): pid, tid, thread name */
	int has_thread;
	int32_t pid, tid;
	const char *thread;
	size_t thread_length;
	struct rt_duration_count counts[RT_DURATION_COUNTS_MAX];
	size_t count_count;
};

/*
 * The table's header line: the name column name_width wide, then count,
 * total, min, p50, p90, p99, max and the counts' headers (those of row).
 */
void rt_duration_rows_header(struct rt_out *out, unsigned name_width,
			     const struct rt_duration_row *row);

/*
 * One line of the table.  A thread's row is indented under its name and
 * named "pid P tid T (name)"; a name longer than name_width gets a line of
 * its own.  Approximate quantiles (the sketch) are marked with '~'.
 */
void rt_duration_row_text(struct rt_out *out, const struct rt_duration_row *row,
			  unsigned name_width);

/*
 * The log-scale histogram of q: one line per power of two of nanoseconds
 * from the lowest to the highest holding values, each with its range, a
 * bar of '#' scaled to the fullest line, and its count; indent first.
 */
void rt_duration_histogram_text(struct rt_out *out, const struct rt_quantiles *q,
				const char *indent);

/*
 * One JSON object, a line: name, [kind,] [pid, tid, thread,] count,
 * total_ns, min_ns, p50_ns, p90_ns, p99_ns, max_ns, exact, then the counts.
 * min_ns, the quantiles and max_ns are 0 when count is 0.
 */
void rt_duration_row_json(struct rt_out *out, const struct rt_duration_row *row);

/* The rows as a table of the page (the same columns as the terminal's). */
void rt_duration_rows_html(struct rt_html *h, const struct rt_duration_row *rows, size_t count);

/* "512 ns", "1.02 us", "16.4 ms", "2.15 s": three digits, for labels. */
char *rt_duration_short(char *out, size_t size, uint64_t ns);

#endif /* RT_ANALYZE_DURATION_ROWS_H */
