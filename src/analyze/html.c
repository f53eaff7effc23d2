/*
 * html.c - the analysis page: inline style, inline SVG, no script.
 *
 * Plots are drawn here from numbers only, so every analyzer's pictures
 * share one look: a fixed palette, axes with round ticks in readable units,
 * and a <title> on every mark so the mouse tells the exact figure.  The
 * page holds no clock reading and no address: the same analysis of the same
 * input writes the same bytes.  Large inputs are thinned to what the pixels
 * can show, and the page says when it did.
 */
#include "analyze/html.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/out_file.h"
#include "common/utf8.h"
#include "present/units.h"

struct rt_html {
	FILE *f;
	int error; /* errno of the first failed write */
};

static const char *const palette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
				      "#59a14f", "#edc948", "#b07aa1", "#9c755f"};
#define PALETTE_SIZE (sizeof(palette) / sizeof(palette[0]))
#define AXIS_COLOR "#999"
#define GRID_COLOR "#e8e8e8"

static void put(struct rt_html *h, const char *s)
{
	if (fputs(s, h->f) == EOF && !h->error)
		h->error = errno ? errno : EIO;
}

__attribute__((format(printf, 2, 3))) static void putf(struct rt_html *h, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	if (vfprintf(h->f, format, ap) < 0 && !h->error)
		h->error = errno ? errno : EIO;
	va_end(ap);
}

static void put_bytes(struct rt_html *h, const unsigned char *p, size_t n)
{
	if (fwrite(p, 1, n, h->f) != n && !h->error)
		h->error = errno ? errno : EIO;
}

/*
 * Text made safe for an element or an attribute: markup escaped, valid
 * UTF-8 kept, and control bytes, DEL and bytes that are not UTF-8 shown as
 * \xNN, so the page is valid UTF-8 whatever the recorded program wrote.
 */
static void put_text(struct rt_html *h, const char *s)
{
	if (!s)
		return;
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	size_t i = 0;
	while (i < n) {
		unsigned char c = p[i];
		size_t plain = i;
		while (plain < n && p[plain] >= 0x20 && p[plain] < 0x7f && p[plain] != '&' &&
		       p[plain] != '<' && p[plain] != '>' && p[plain] != '"' && p[plain] != '\'')
			plain++;
		if (plain > i) {
			put_bytes(h, p + i, plain - i);
			i = plain;
			continue;
		}
		switch (c) {
		case '&':
			put(h, "&amp;");
			break;
		case '<':
			put(h, "&lt;");
			break;
		case '>':
			put(h, "&gt;");
			break;
		case '"':
			put(h, "&quot;");
			break;
		case '\'':
			put(h, "&#39;");
			break;
		case '\t':
		case '\n':
			put_bytes(h, &c, 1);
			break;
		default:
			if (c >= 0x80) {
				size_t len = rt_utf8_sequence_length(p + i, n - i);
				if (len == 2 && c == 0xc2 && p[i + 1] < 0xa0) {
					/* a C1 control character: both its bytes */
					putf(h, "\\x%02x\\x%02x", c, p[i + 1]);
					i += 2;
					continue;
				}
				if (len) {
					put_bytes(h, p + i, len);
					i += len;
					continue;
				}
			}
			putf(h, "\\x%02x", c);
		}
		i++;
	}
}

/*
 * A label of at most `chars` characters: a longer one is cut at a character's
 * start and ends in an ellipsis, the whole of it in a title the mouse shows.
 */
static void put_label(struct rt_html *h, const char *s, size_t chars)
{
	if (!s)
		return;
	size_t n = 0, cut = 0, i = 0;
	for (; s[i]; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == chars - 1)
			cut = i;
	if (n <= chars) {
		put_text(h, s);
		return;
	}
	char *head = strndup(s, cut);
	put(h, "<title>");
	put_text(h, s);
	put(h, "</title>");
	put_text(h, head ? head : "");
	put(h, "\xe2\x80\xa6");
	free(head);
}

static const char page_style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;margin:8px 0}"
    "th,td{border:1px solid #ddd;padding:3px 8px;text-align:right;font-variant-numeric:"
    "tabular-nums;white-space:pre-wrap}th{background:#f4f4f4}"
    ".words,td:first-child,th:first-child{text-align:left}"
    "dl.summary{display:grid;grid-template-columns:max-content auto;gap:2px 12px;margin:8px 0}"
    "dl.summary dt{font-weight:bold}dl.summary dd{margin:0;white-space:pre-wrap}"
    "svg{display:block;margin:8px 0}svg text{font:11px sans-serif;fill:#333}"
    "svg text.plot-title{font-weight:bold;font-size:12px}p.note{color:#666;font-size:12px}";

struct rt_html *rt_html_open(const char *path, const char *title, char *message,
			     size_t message_size)
{
	struct rt_html *h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(message, message_size, "out of memory");
		return NULL;
	}
	/* made new: never a file another user made first (common/out_file.h) */
	int regular;
	int fd = rt_out_file_open(path, NULL, &regular, message, message_size);
	h->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!h->f) {
		int err = fd < 0 ? -fd : errno;
		if (fd >= 0) {
			snprintf(message, message_size, "%s: %s", path, strerror(err));
			close(fd);
		}
		free(h);
		errno = err;
		return NULL;
	}
	put(h, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>");
	put_text(h, title);
	put(h, "</title>\n<style>");
	put(h, page_style);
	put(h, "</style></head>\n<body>\n<h1>");
	put_text(h, title);
	put(h, "</h1>\n");
	return h;
}

int rt_html_close(struct rt_html *h)
{
	if (!h)
		return 0;
	put(h, "</body></html>\n");
	if (fclose(h->f) != 0 && !h->error)
		h->error = errno ? errno : EIO;
	int rc = -h->error;
	free(h);
	return rc;
}

void rt_html_summary(struct rt_html *h, const char *const *names, const char *const *values,
		     size_t count)
{
	put(h, "<dl class=\"summary\">");
	for (size_t i = 0; i < count; i++) {
		put(h, "<dt>");
		put_text(h, names[i]);
		put(h, "</dt><dd>");
		put_text(h, values[i]);
		put(h, "</dd>");
	}
	put(h, "</dl>\n");
}

void rt_html_section(struct rt_html *h, const char *heading, const char *text)
{
	put(h, "<h2>");
	put_text(h, heading);
	put(h, "</h2>\n");
	if (text)
		rt_html_paragraph(h, text);
}

void rt_html_paragraph(struct rt_html *h, const char *text)
{
	put(h, "<p>");
	put_text(h, text);
	put(h, "</p>\n");
}

static void note(struct rt_html *h, const char *text)
{
	put(h, "<p class=\"note\">");
	put_text(h, text);
	put(h, "</p>\n");
}

/* A cell that reads as a figure ("12", "-3", "1.5 ms", "~4 us", "12%"): set right. */
static int figure(const char *s)
{
	if (!s)
		return 1;
	if (*s == '-' || *s == '+' || *s == '~')
		s++;
	return *s >= '0' && *s <= '9';
}

void rt_html_table(struct rt_html *h, const char *const *headers, size_t columns,
		   const char *const *cells, size_t rows)
{
	/* a column of words reads from the left, one of figures lines up on the right */
	put(h, "<table><tr>");
	for (size_t c = 0; c < columns; c++) {
		int words = 0;
		for (size_t r = 0; r < rows && !words; r++)
			words = cells[r * columns + c] && cells[r * columns + c][0] &&
				!figure(cells[r * columns + c]);
		put(h, words ? "<th class=\"words\">" : "<th>");
		put_text(h, headers[c]);
		put(h, "</th>");
	}
	put(h, "</tr>\n");
	for (size_t r = 0; r < rows; r++) {
		put(h, "<tr>");
		for (size_t c = 0; c < columns; c++) {
			const char *cell = cells[r * columns + c];
			put(h, figure(cell) ? "<td>" : "<td class=\"words\">");
			put_text(h, cell);
			put(h, "</td>");
		}
		put(h, "</tr>\n");
	}
	put(h, "</table>\n");
}

/* ---- axes -------------------------------------------------------------- */

/* The round step (1, 2 or 5 times a power of ten) that cuts range into about `target` parts. */
static double nice_step(double range, int target)
{
	if (!(range > 0) || !isfinite(range))
		return 1;
	double raw = range / target;
	double magnitude = pow(10, floor(log10(raw)));
	double norm = raw / magnitude;
	double m = norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10;
	return m * magnitude;
}

/* The same for durations: 1-2-5 steps of ns to seconds, then minutes, hours and days. */
static int64_t nice_duration_step(int64_t range, int target)
{
	static const int64_t long_steps[] = {10000000000LL,    20000000000LL,	 30000000000LL,
					     60000000000LL,    120000000000LL,	 300000000000LL,
					     600000000000LL,   900000000000LL,	 1800000000000LL,
					     3600000000000LL,  7200000000000LL,	 10800000000000LL,
					     21600000000000LL, 43200000000000LL, 86400000000000LL};
	if (range < 1)
		return 1;
	double raw = (double)range / target;
	if (raw <= 5e9) {
		double step = nice_step((double)range, target);
		return step < 1 ? 1 : (int64_t)step;
	}
	for (size_t i = 0; i < sizeof(long_steps) / sizeof(long_steps[0]); i++)
		if (raw <= (double)long_steps[i])
			return long_steps[i];
	int64_t days = 86400000000000LL;
	return (int64_t)nice_step(raw / (double)days * target, target) * days;
}

/*
 * A tick's number: as many decimals as the step needs; from ten thousand on
 * in k, M or G, the largest that keeps one decimal at most ("500k", "1.5M").
 */
static void tick_number(char *buf, size_t size, double v, double step)
{
	static const struct {
		double scale;
		const char *suffix;
	} big[] = {{1e9, "G"}, {1e6, "M"}, {1e3, "k"}};
	double a = fabs(v);
	const char *suffix = "";
	if (a >= 1e4)
		for (size_t i = 0; i < 3; i++)
			if (a >= big[i].scale && step >= big[i].scale / 10) {
				v /= big[i].scale;
				step /= big[i].scale;
				suffix = big[i].suffix;
				break;
			}
	int decimals = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
	if (decimals > 9)
		decimals = 9;
	if (fabs(v) < step / 2)
		v = 0; /* not "-0" */
	snprintf(buf, size, "%.*f%s", decimals, v, suffix);
}

#define PLOT_W 720
#define PLOT_H 220
#define MARGIN_L 60
#define MARGIN_R 16
#define MARGIN_T 24
#define MARGIN_B 40
#define INNER_W (PLOT_W - MARGIN_L - MARGIN_R)
#define INNER_H (PLOT_H - MARGIN_T - MARGIN_B)
#define BASE (PLOT_H - MARGIN_B)

static void plot_start(struct rt_html *h, const char *kind, const char *title, int height)
{
	putf(h, "<svg class=\"%s\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">",
	     kind, PLOT_W, height, PLOT_W, height);
	put(h, "<text class=\"plot-title\" x=\"4\" y=\"14\">");
	put_text(h, title);
	put(h, "</text>");
}

static void plot_empty(struct rt_html *h, const char *what, int height)
{
	putf(h, "<text class=\"empty\" x=\"%d\" y=\"%d\">%s</text></svg>\n", MARGIN_L, height / 2,
	     what);
}

/* Horizontal grid lines and labels of a value axis from lo to hi (pixels y_lo to y_hi). */
static void value_axis(struct rt_html *h, double lo, double hi, double step, double y_lo,
		       double y_hi, int x_left, int x_right)
{
	char t[64];
	/* an integer counts the lines: a sum of steps would drift */
	long long first = (long long)ceil(lo / step - 1e-9);
	for (long long k = first; (double)k * step <= hi + step * 1e-9; k++) {
		double v = (double)k * step;
		double y = y_lo - (y_lo - y_hi) * (v - lo) / (hi - lo);
		tick_number(t, sizeof(t), v, step);
		putf(h,
		     "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>"
		     "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
		     x_left, y, x_right, y, GRID_COLOR, x_left - 4, y + 4, t);
	}
}

/* Vertical grid lines and labels of a time axis from t0 to t1 (pixels x_lo to x_hi). */
static void time_axis(struct rt_html *h, int64_t t0, int64_t t1, double x_lo, double x_hi,
		      double y_top, double y_base)
{
	int64_t step = nice_duration_step(t1 - t0, 6);
	int64_t first = t0 >= 0 ? (t0 + step - 1) / step * step : -(-t0 / step * step);
	char t[RT_UNITS_MAX];
	for (int64_t v = first; v <= t1; v += step) {
		double x = x_lo + (x_hi - x_lo) * (double)(v - t0) / (double)(t1 - t0);
		putf(h,
		     "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>"
		     "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>",
		     x, y_top, x, y_base + 4, GRID_COLOR, x, y_base + 16,
		     rt_units_duration_short(t, sizeof(t), v));
		if (v > INT64_MAX - step)
			break;
	}
}

/* ---- histogram --------------------------------------------------------- */

/* The smallest value of log2 bucket b (bit length b): 0, 1, 2, 4, ... */
static double bucket_low(unsigned b)
{
	return b == 0 ? 0 : ldexp(1, (int)b - 1);
}

/* Where value v falls on a log2 axis drawn from bucket first, in bucket widths. */
static double log2_position(double v, unsigned first)
{
	double pos = v >= 1 ? log2(v) + 1.0 : v > 0 ? v : 0.0;
	return pos - (double)first;
}

static void duration_d(char *buf, size_t size, double ns)
{
	rt_units_duration_short(buf, size, ns >= 9.2e18 ? INT64_MAX : (int64_t)ns);
}

/* Above a histogram's bars: room for the quantiles' labels under its title. */
#define HIST_T (MARGIN_T + 14)
#define MARK_LABEL_W 22 /* "p99" and a gap */

void rt_html_histogram(struct rt_html *h, const char *title, struct rt_quantiles *q)
{
	unsigned first = RT_QUANTILES_LOG2_BUCKETS, last = 0;
	uint64_t peak = 0;
	for (unsigned b = 0; b < RT_QUANTILES_LOG2_BUCKETS; b++) {
		if (!q || !q->log2_counts[b])
			continue;
		if (first == RT_QUANTILES_LOG2_BUCKETS)
			first = b;
		last = b;
		if (q->log2_counts[b] > peak)
			peak = q->log2_counts[b];
	}
	plot_start(h, "histogram", title, PLOT_H);
	if (!peak) {
		plot_empty(h, "no values", PLOT_H);
		return;
	}
	/* at least 8 bars' room, so one lone bucket is a bar and not a wall */
	unsigned buckets = last - first + 1;
	unsigned slots = buckets < 8 ? 8 : buckets;
	unsigned pad = (slots - buckets) / 2;
	first = first > pad ? first - pad : 0;
	if (first + slots > RT_QUANTILES_LOG2_BUCKETS)
		first = RT_QUANTILES_LOG2_BUCKETS - slots;
	double bar_w = (double)INNER_W / slots;
	double step = nice_step((double)peak, 4);
	if (step < 1)
		step = 1;
	double top = ceil((double)peak / step) * step;
	value_axis(h, 0, top, step, BASE, HIST_T, MARGIN_L, PLOT_W - MARGIN_R);
	/* x ticks at round durations: powers of ten, and 2 and 5 times them on a short axis */
	char t[RT_UNITS_MAX], lo[RT_UNITS_MAX], hi[RT_UNITS_MAX];
	double low = bucket_low(first), high = ldexp(1, (int)(first + slots) - 1);
	int dense = slots <= 12;
	/* a decade is 3.3 bars: on a crowded axis only 1 ns, 1 us, 1 ms... are named */
	int every_decade = bar_w * 3.32 >= 44;
	int exponent = 0;
	for (double decade = 1; decade <= high && decade < 1e19; decade *= 10, exponent++)
		for (int m = 1; m <= 5; m++) {
			if (m != 1 && !(dense && (m == 2 || m == 5)))
				continue;
			double v = decade * m;
			if (v < low || v > high)
				continue;
			double x = MARGIN_L + log2_position(v, first) * bar_w;
			putf(h, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>",
			     x, BASE, x, BASE + 4, AXIS_COLOR);
			if (every_decade || exponent % 3 == 0)
				putf(h,
				     "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
				     x, BASE + 16,
				     rt_units_duration_short(t, sizeof(t), (int64_t)v));
		}
	if (first == 0) /* the bucket of zero, left of 1 ns */
		putf(h, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">0</text>",
		     MARGIN_L + bar_w / 2, BASE + 16);
	/* the quantiles' lines go under the bars: the bars' pixels stay their colour */
	static const double marks[] = {0.5, 0.9, 0.99};
	static const char *const names[] = {"p50", "p90", "p99"};
	double mark_x[3];
	for (unsigned m = 0; m < 3; m++) {
		uint64_t v = rt_quantiles_get(q, marks[m]);
		mark_x[m] = MARGIN_L + log2_position((double)v, first) * bar_w;
		duration_d(lo, sizeof(lo), (double)v);
		putf(h,
		     "<line class=\"mark\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
		     "stroke=\"%s\" stroke-dasharray=\"4 3\"><title>%s %s</title></line>",
		     mark_x[m], HIST_T - 6, mark_x[m], BASE, palette[2 + m], names[m], lo);
	}
	for (unsigned b = first; b <= last; b++) {
		if (!q->log2_counts[b])
			continue;
		double x = MARGIN_L + (b - first) * bar_w;
		double bh = (BASE - HIST_T) * (double)q->log2_counts[b] / top;
		if (bh < 1)
			bh = 1;
		duration_d(lo, sizeof(lo), bucket_low(b));
		duration_d(hi, sizeof(hi), ldexp(1, (int)b));
		putf(h,
		     "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
		     "fill=\"%s\" shape-rendering=\"crispEdges\"><title>%s to %s: "
		     "%llu</title></rect>",
		     x + 1, BASE - bh, bar_w > 3 ? bar_w - 2 : bar_w, bh, palette[0], lo, hi,
		     (unsigned long long)q->log2_counts[b]);
	}
	/* the axis on the pixel row under the bars, not half over their last one */
	putf(h, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\"/>", MARGIN_L,
	     BASE + 0.5, PLOT_W - MARGIN_R, BASE + 0.5, AXIS_COLOR);
	/*
	 * The labels above the plot, clear of the bars: right of their line, pushed
	 * right of the one before when the quantiles are close, and back left from
	 * the edge.
	 */
	double label_x[3];
	for (unsigned m = 0; m < 3; m++) {
		label_x[m] = mark_x[m] + 2;
		if (m && label_x[m] < label_x[m - 1] + MARK_LABEL_W)
			label_x[m] = label_x[m - 1] + MARK_LABEL_W;
	}
	double limit = PLOT_W - MARK_LABEL_W;
	for (int m = 2; m >= 0; m--) {
		if (label_x[m] > limit)
			label_x[m] = limit;
		limit = label_x[m] - MARK_LABEL_W;
	}
	for (unsigned m = 0; m < 3; m++)
		putf(h, "<text class=\"mark-label\" x=\"%.1f\" y=\"%d\" fill=\"%s\">%s</text>",
		     label_x[m], HIST_T - 8, palette[2 + m], names[m]);
	putf(h,
	     "<text x=\"%d\" y=\"%d\">duration (log scale, one bar per power of two); "
	     "count of %llu</text>",
	     MARGIN_L, PLOT_H - 6, (unsigned long long)q->count);
	put(h, "</svg>\n");
}

/* ---- lines over time --------------------------------------------------- */

/* Points past this in one line are thinned to the lowest and highest per pixel column. */
#define SERIES_POINTS_MAX 2000

struct line_pen {
	struct rt_html *h;
	int down;      /* a point was drawn since the last gap */
	size_t drawn;  /* points written */
	size_t in_run; /* points of the current run, for the lone-point dot */
	double last_x, last_y;
	const char *color;
};

static void pen_point(struct line_pen *pen, double x, double y)
{
	putf(pen->h, "%s%.1f %.1f", pen->down ? " L" : pen->drawn ? " M" : "M", x, y);
	pen->down = 1;
	pen->drawn++;
	pen->in_run++;
	pen->last_x = x;
	pen->last_y = y;
}

void rt_html_series_plot(struct rt_html *h, const char *title, const char *y_label,
			 const struct rt_html_series *series, size_t series_count)
{
	int64_t x0 = INT64_MAX, x1 = INT64_MIN;
	double y0 = 0, y1 = 0;
	size_t skipped = 0;
	for (size_t s = 0; s < series_count; s++)
		for (size_t i = 0; i < series[s].count; i++) {
			double y = series[s].y[i];
			if (!isfinite(y)) {
				skipped++;
				continue;
			}
			if (series[s].x_ns[i] < x0)
				x0 = series[s].x_ns[i];
			if (series[s].x_ns[i] > x1)
				x1 = series[s].x_ns[i];
			if (y > y1)
				y1 = y;
			if (y < y0)
				y0 = y;
		}
	int legend_h = (int)(series_count * 14);
	plot_start(h, "series", title, PLOT_H + legend_h);
	if (x0 > x1) {
		plot_empty(h, "no values", PLOT_H);
		return;
	}
	if (x1 == x0)
		x1 = x0 + 1;
	double step = nice_step(y1 - y0 > 0 ? y1 - y0 : 1, 5);
	double lo = floor(y0 / step) * step, hi = ceil(y1 / step) * step;
	if (hi <= lo)
		hi = lo + step;
	value_axis(h, lo, hi, step, BASE, MARGIN_T, MARGIN_L, PLOT_W - MARGIN_R);
	time_axis(h, x0, x1, MARGIN_L, PLOT_W - MARGIN_R, MARGIN_T, BASE);
	putf(h,
	     "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\"/>"
	     "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\"/>",
	     MARGIN_L, BASE, PLOT_W - MARGIN_R, BASE, AXIS_COLOR, MARGIN_L, MARGIN_T, MARGIN_L,
	     BASE, AXIS_COLOR);
	/* the y axis's name runs up its left side, clear of the tick labels */
	putf(h,
	     "<text class=\"axis-label\" x=\"%d\" y=\"12\" transform=\"rotate(-90)\" "
	     "text-anchor=\"middle\">",
	     -(MARGIN_T + INNER_H / 2));
	put_text(h, y_label);
	put(h, "</text>");
	double x_scale = INNER_W / (double)(x1 - x0), y_scale = INNER_H / (hi - lo);
	for (size_t s = 0; s < series_count; s++) {
		const struct rt_html_series *line = &series[s];
		struct line_pen pen = {.h = h, .color = palette[s % PALETTE_SIZE]};
		int thin = line->count > SERIES_POINTS_MAX;
		putf(h,
		     "<path class=\"line\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
		     "stroke-linejoin=\"round\" d=\"",
		     pen.color);
		/* the current pixel column's lowest and highest points, drawn in time order */
		long column = -1;
		size_t low_i = 0, high_i = 0, dots = 0;
		double dot_x[8], dot_y[8];
		for (size_t i = 0; i <= line->count; i++) {
			int gap = i < line->count && !isfinite(line->y[i]);
			long c = i < line->count && !gap
				     ? lround((double)(line->x_ns[i] - x0) * x_scale)
				     : -2;
			if (thin && column >= 0 && c != column) {
				size_t a = low_i < high_i ? low_i : high_i, b = low_i ^ high_i ^ a;
				pen_point(&pen, MARGIN_L + (double)column,
					  BASE - (line->y[a] - lo) * y_scale);
				if (b != a)
					pen_point(&pen, MARGIN_L + (double)column,
						  BASE - (line->y[b] - lo) * y_scale);
				column = -1;
			}
			if (i == line->count || gap) {
				if (pen.in_run == 1 && dots < 8) {
					dot_x[dots] = pen.last_x;
					dot_y[dots++] = pen.last_y;
				}
				pen.down = 0;
				pen.in_run = 0;
				continue;
			}
			if (!thin) {
				pen_point(&pen, MARGIN_L + (double)(line->x_ns[i] - x0) * x_scale,
					  BASE - (line->y[i] - lo) * y_scale);
			} else if (c != column) {
				column = c;
				low_i = high_i = i;
			} else {
				if (line->y[i] < line->y[low_i])
					low_i = i;
				if (line->y[i] > line->y[high_i])
					high_i = i;
			}
		}
		put(h, "\"><title>");
		put_text(h, line->name);
		put(h, "</title></path>");
		/* a run of one point draws no line: a dot shows it */
		for (size_t d = 0; d < dots; d++)
			putf(h, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>", dot_x[d],
			     dot_y[d], pen.color);
		double ly = PLOT_H + 14.0 * (double)s;
		putf(h,
		     "<rect x=\"%d\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
		     "<text class=\"legend\" x=\"%d\" y=\"%.1f\">",
		     MARGIN_L, ly - 9, pen.color, MARGIN_L + 14, ly);
		put_text(h, line->name);
		if (thin)
			putf(h, " (%zu points, the lowest and highest per pixel drawn)",
			     line->count);
		put(h, "</text>");
	}
	put(h, "</svg>\n");
	if (skipped) {
		char text[160];
		snprintf(text, sizeof(text),
			 "%zu point%s with no finite value left out (gaps in the lines).", skipped,
			 skipped == 1 ? "" : "s");
		note(h, text);
	}
}

/* ---- timeline ---------------------------------------------------------- */

#define LANE_H 22
#define LANE_LABEL_W 200
#define LANE_LABEL_CHARS 32 /* what 200 pixels hold; longer names end in an ellipsis */
#define TIMELINE_LANES_MAX 100
#define TIMELINE_INTERVALS_MAX 2000

static int compare_durations_down(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x < y) - (x > y);
}

void rt_html_timeline(struct rt_html *h, const char *title, const struct rt_html_lane *lanes,
		      size_t lane_count, int64_t t0_ns, int64_t t1_ns)
{
	if (t1_ns <= t0_ns)
		t1_ns = t0_ns + 1;
	size_t shown_lanes = lane_count < TIMELINE_LANES_MAX ? lane_count : TIMELINE_LANES_MAX;
	size_t total = 0;
	for (size_t l = 0; l < shown_lanes; l++)
		total += lanes[l].count;
	/* too many to see: the longest are drawn; threshold and ties counted out in order */
	int64_t threshold = INT64_MIN;
	size_t ties_left = SIZE_MAX;
	if (total > TIMELINE_INTERVALS_MAX) {
		int64_t *d = malloc(total * sizeof(*d));
		if (d) {
			size_t n = 0;
			for (size_t l = 0; l < shown_lanes; l++)
				for (size_t i = 0; i < lanes[l].count; i++)
					d[n++] = lanes[l].intervals[i].end_ns -
						 lanes[l].intervals[i].start_ns;
			qsort(d, n, sizeof(*d), compare_durations_down);
			threshold = d[TIMELINE_INTERVALS_MAX - 1];
			ties_left = 0;
			for (size_t i = 0; i < TIMELINE_INTERVALS_MAX; i++)
				ties_left += d[i] == threshold;
			free(d);
		} else {
			threshold = INT64_MAX; /* no memory to choose: draw none, say so */
			ties_left = 0;
		}
	}
	int height = MARGIN_T + (int)(shown_lanes ? shown_lanes : 1) * LANE_H + MARGIN_B;
	double inner_w = PLOT_W - LANE_LABEL_W - MARGIN_R;
	double scale = inner_w / (double)(t1_ns - t0_ns);
	plot_start(h, "timeline", title, height);
	if (!lane_count) {
		plot_empty(h, "no threads", height);
		return;
	}
	double base = MARGIN_T + (double)shown_lanes * LANE_H;
	for (size_t l = 0; l < shown_lanes; l++) {
		double y = MARGIN_T + (double)l * LANE_H;
		putf(h,
		     "<rect class=\"lane\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
		     "fill=\"%s\"/><text x=\"4\" y=\"%.1f\">",
		     LANE_LABEL_W, y + 2, inner_w, LANE_H - 4, l % 2 ? "#fafafa" : "#f0f0f0",
		     y + LANE_H / 2.0 + 4);
		put_label(h, lanes[l].name, LANE_LABEL_CHARS);
		put(h, "</text>");
	}
	time_axis(h, t0_ns, t1_ns, LANE_LABEL_W, LANE_LABEL_W + inner_w, MARGIN_T, base);
	size_t drawn = 0;
	char a[RT_UNITS_MAX], b[RT_UNITS_MAX], d[RT_UNITS_MAX];
	for (size_t l = 0; l < shown_lanes; l++) {
		double y = MARGIN_T + (double)l * LANE_H;
		for (size_t i = 0; i < lanes[l].count; i++) {
			const struct rt_html_interval *iv = &lanes[l].intervals[i];
			int64_t length = iv->end_ns - iv->start_ns;
			if (length < threshold)
				continue;
			if (length == threshold) {
				if (!ties_left)
					continue;
				ties_left--;
			}
			drawn++;
			/* clipped to the axis; a pixel short, so touching ones stay apart; one
			 * pixel at least, so a short one is seen */
			int64_t s = iv->start_ns < t0_ns ? t0_ns : iv->start_ns;
			int64_t e = iv->end_ns > t1_ns ? t1_ns : iv->end_ns;
			if (e < s)
				e = s;
			double xa = LANE_LABEL_W + (double)(s - t0_ns) * scale;
			double xb = LANE_LABEL_W + (double)(e - t0_ns) * scale;
			if (xa > LANE_LABEL_W + inner_w - 1)
				xa = LANE_LABEL_W + inner_w - 1;
			putf(h,
			     "<rect class=\"interval\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			     "height=\"%d\" fill=\"%s\" shape-rendering=\"crispEdges\"><title>",
			     xa, y + 4, xb - xa < 2 ? 1 : xb - xa - 1, LANE_H - 8, palette[2]);
			if (iv->label)
				put_text(h, iv->label);
			else
				putf(h, "%s to %s (%s)",
				     rt_units_duration_short(a, sizeof(a), iv->start_ns),
				     rt_units_duration_short(b, sizeof(b), iv->end_ns),
				     rt_units_duration_short(d, sizeof(d), length));
			put(h, "</title></rect>");
		}
	}
	putf(h, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>", LANE_LABEL_W,
	     base, LANE_LABEL_W + inner_w, base, AXIS_COLOR);
	put(h, "</svg>\n");
	char text[200];
	if (lane_count > shown_lanes) {
		snprintf(text, sizeof(text), "The first %zu of %zu threads are shown.", shown_lanes,
			 lane_count);
		note(h, text);
	}
	if (drawn < total) {
		snprintf(
		    text, sizeof(text),
		    "The %zu longest of %zu intervals are drawn; the %zu shorter ones are left "
		    "out.",
		    drawn, total, total - drawn);
		note(h, text);
	}
}
