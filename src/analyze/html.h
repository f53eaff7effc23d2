/*
 * html.h - `ringtrace analyze --html OUT`: one self-contained page.
 *
 * Everything is inline: the style, the SVG plots, the tables.  The page
 * loads no script, font or image, so it opens offline and from a mail
 * attachment alike.  An analyzer adds its section through these calls
 * while it reports; the command opens the page before and closes it after.
 *
 * Every string given is escaped here; callers pass raw text (tags, paths
 * and thread names come from the recorded program and may hold anything).
 * Write errors are kept in the page and returned by rt_html_close().
 */
#ifndef RT_ANALYZE_HTML_H
#define RT_ANALYZE_HTML_H

#include <stddef.h>
#include <stdint.h>

#include "analyze/quantiles.h"

struct rt_html;

/* Create path and write the page's head (title: the analysis, the inputs).
 * NULL with errno set and message (naming path) filled when it cannot be
 * created; a file of another user at path is never written (-EPERM,
 * common/out_file.h), one of the caller's is replaced. */
struct rt_html *rt_html_open(const char *path, const char *title, char *message,
			     size_t message_size);
/* Write the page's end and close it: 0, or -errno of the first failed write. */
int rt_html_close(struct rt_html *h);

/* The page's header: what was analyzed, as name and value pairs (inputs, options). */
void rt_html_summary(struct rt_html *h, const char *const *names, const char *const *values,
		     size_t count);

/* A heading for what follows, and a paragraph under it (text may be NULL). */
void rt_html_section(struct rt_html *h, const char *heading, const char *text);

/* A paragraph of plain text. */
void rt_html_paragraph(struct rt_html *h, const char *text);

/* A table: columns headers, then rows of cells (row-major, rows * columns). */
void rt_html_table(struct rt_html *h, const char *const *headers, size_t columns,
		   const char *const *cells, size_t rows);

/*
 * A histogram of durations on a log scale: one bar per power of two of
 * nanoseconds (q->log2_counts), labelled in readable units, with the p50,
 * p90 and p99 marked.
 */
void rt_html_histogram(struct rt_html *h, const char *title, struct rt_quantiles *q);

/* One line of a plot over time: count points (x: ns since the set's start). */
struct rt_html_series {
	const char *name;
	const int64_t *x_ns;
	const double *y;
	size_t count;
};

/*
 * Lines over time on shared axes, with a legend; y_label names the y axis.
 * Points come in time order.  A y that is NaN or infinite leaves a gap in
 * its line.  A line of more than 2000 points is drawn as the lowest and the
 * highest point of each pixel column, which is all the plot can show.
 */
void rt_html_series_plot(struct rt_html *h, const char *title, const char *y_label,
			 const struct rt_html_series *series, size_t series_count);

/* One interval on a timeline lane, with what the mouse shows over it. */
struct rt_html_interval {
	int64_t start_ns, end_ns; /* ns since the set's start */
	const char *label;
};

/* One lane (a thread) of a timeline. */
struct rt_html_lane {
	const char *name;
	const struct rt_html_interval *intervals;
	size_t count;
};

/*
 * Lanes under a shared time axis from t0_ns to t1_ns: intervals drawn as
 * bars, clipped to the axis.  Past 100 lanes the rest are left out, past
 * 2000 intervals only the longest are drawn; a note under the plot says so.
 */
void rt_html_timeline(struct rt_html *h, const char *title, const struct rt_html_lane *lanes,
		      size_t lane_count, int64_t t0_ns, int64_t t1_ns);

#endif /* RT_ANALYZE_HTML_H */
