/*
 * duration_rows.c - see duration_rows.h.
 */
#include "analyze/duration_rows.h"
#include "common/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/html.h"
#include "analyze/table.h"
#include "present/units.h"

#define BAR_WIDTH 40
#define CELL_MAX 64
#define COUNT_WIDTH 10
#define DURATION_WIDTH 12 /* '~' or ' ', then rt_units_duration_column's 11 */

static const double quantile_points[3] = {0.5, 0.9, 0.99};

char *rt_duration_short(char *out, size_t size, uint64_t ns)
{
	static const struct {
		double scale;
		const char *unit;
	} units[] = {{1, "ns"}, {1e3, "us"}, {1e6, "ms"}, {1e9, "s"}};
	unsigned u = 0;
	while (u + 1 < sizeof(units) / sizeof(units[0]) && (double)ns >= units[u + 1].scale)
		u++;
	double v = (double)ns / units[u].scale;
	if (u == 0)
		snprintf(out, size, "%llu ns", (unsigned long long)ns);
	else
		snprintf(out, size, "%.3g %s", v, units[u].unit);
	return out;
}

/* The row's statistics as numbers: count 0 shows zeros, not min's UINT64_MAX. */
struct figures {
	uint64_t min, q[3], max;
};

static struct figures figures_of(struct rt_quantiles *q)
{
	struct figures f = {0};
	if (!q->count)
		return f;
	f.min = q->min;
	f.max = q->max;
	for (unsigned i = 0; i < 3; i++)
		f.q[i] = rt_quantiles_get(q, quantile_points[i]);
	return f;
}

/* ---- the rows: one table for the text, JSON and the page (analyze/table.h) ---- */

/* The six durations of a row: total, min, p50, p90, p99, max. */
#define DURATIONS 6

enum {
	C_NAME_TEXT,
	C_NAME,
	C_KIND,
	C_PID,
	C_TID,
	C_THREAD,
	C_THREAD_PAGE,
	C_COUNT,
	C_DURATIONS, /* per duration: the text's, the page's, JSON's */
	C_EXACT = C_DURATIONS + 3 * DURATIONS,
	C_COUNTS,
	COLUMNS = C_COUNTS + RT_DURATION_COUNTS_MAX
};

static const char *const duration_headers[DURATIONS] = {"total", "min", "p50", "p90", "p99", "max"};
static const char *const duration_keys[DURATIONS] = {"total_ns", "min_ns", "p50_ns",
						     "p90_ns",	 "p99_ns", "max_ns"};

/*
 * The columns of rows like row (its counts), the name column name_width
 * wide in the text; the page's thread column only when with_thread.
 */
static void duration_columns(struct rt_column *c, unsigned name_width,
			     const struct rt_duration_row *row, int with_thread)
{
	const unsigned T = RT_COLUMN_TEXT, J = RT_COLUMN_JSON, H = RT_COLUMN_HTML,
		       R = RT_COLUMN_RIGHT;
	memset(c, 0, COLUMNS * sizeof(*c));
	c[C_NAME_TEXT] =
	    (struct rt_column){.flags = T | RT_COLUMN_WRAP, .header = "name", .width = name_width};
	c[C_NAME] = (struct rt_column){.flags = J | H, .header = "name", .key = "name"};
	c[C_KIND] = (struct rt_column){.flags = J, .key = "kind"};
	c[C_PID] = (struct rt_column){.flags = J, .key = "pid"};
	c[C_TID] = (struct rt_column){.flags = J, .key = "tid"};
	c[C_THREAD] = (struct rt_column){.flags = J, .key = "thread"};
	c[C_THREAD_PAGE] = (struct rt_column){.flags = with_thread ? H : 0, .header = "thread"};
	c[C_COUNT] = (struct rt_column){
	    .flags = T | J | H | R, .header = "count", .key = "count", .width = COUNT_WIDTH + 1};
	for (unsigned i = 0; i < DURATIONS; i++) {
		struct rt_column *d = &c[C_DURATIONS + 3 * i];
		d[0] = (struct rt_column){
		    .flags = T | R, .header = duration_headers[i], .width = DURATION_WIDTH + 1};
		d[1] = (struct rt_column){.flags = H, .header = duration_headers[i]};
		d[2] = (struct rt_column){.flags = J, .key = duration_keys[i]};
	}
	c[C_EXACT] = (struct rt_column){.flags = J, .key = "exact"};
	for (size_t i = 0; i < row->count_count && i < RT_DURATION_COUNTS_MAX; i++)
		c[C_COUNTS + i] = (struct rt_column){.flags = T | J | H | R,
						     .header = row->counts[i].header,
						     .key = row->counts[i].json_key,
						     .width = COUNT_WIDTH + 2};
}

/* The texts of a row's cells. */
struct row_texts {
	char name[4 * 160 + 3]; /* a thread's row: its label, escaped */
	char *page_name;	/* the name, NUL-ended for the page (allocated) */
	char thread[160];
	char durations[DURATIONS][CELL_MAX];
	char page[DURATIONS][CELL_MAX];
};

/* "pid 12 tid 34 (name)" or "pid 12 tid 34". */
static void thread_label(const struct rt_duration_row *row, char *buf, size_t size)
{
	if (row->thread_length)
		snprintf(buf, size, "pid %d tid %d (%.*s)", (int)row->pid, (int)row->tid,
			 (int)row->thread_length, row->thread);
	else
		snprintf(buf, size, "pid %d tid %d", (int)row->pid, (int)row->tid);
}

/* The cells of row; the page's name only with page. */
static void duration_cells(const struct rt_duration_row *row, struct row_texts *x,
			   struct rt_cell *c, int page)
{
	memset(c, 0, COLUMNS * sizeof(*c));
	if (row->has_thread) {
		thread_label(row, x->thread, sizeof(x->thread));
		snprintf(x->name, sizeof(x->name), "  %s", rt_escaped(x->thread));
		c[C_NAME_TEXT] = rt_cell_text(x->name);
	} else {
		/* the text's only: rt_escaped_n's buffer holds while the row is written */
		x->thread[0] = 0;
		c[C_NAME_TEXT] = rt_cell_text(rt_escaped_n(row->name, row->name_length));
	}
	x->page_name = page ? strndup(row->name, row->name_length) : NULL;
	c[C_NAME] = rt_cell_string(row->name, row->name_length,
				   page ? (x->page_name ? x->page_name : "?") : NULL);
	if (row->kind)
		c[C_KIND] = rt_cell_string(row->kind, strlen(row->kind), NULL);
	if (row->has_thread) {
		c[C_PID] = rt_cell_i64(row->pid, NULL);
		c[C_TID] = rt_cell_i64(row->tid, NULL);
		c[C_THREAD] =
		    rt_cell_string(row->thread ? row->thread : "", row->thread_length, NULL);
	}
	c[C_THREAD_PAGE] = rt_cell_text(x->thread);
	struct rt_quantiles *q = row->q;
	struct figures f = figures_of(q);
	c[C_COUNT] = rt_cell_u64(q->count, NULL);
	int empty = q->count == 0, approximate = !rt_quantiles_exact(q);
	uint64_t values[DURATIONS] = {q->total, f.min, f.q[0], f.q[1], f.q[2], f.max};
	for (unsigned i = 0; i < DURATIONS; i++) {
		int marked = approximate && i >= 2 && i <= 4; /* the quantiles */
		char *text = x->durations[i], *shown = x->page[i];
		if (empty) {
			snprintf(text, CELL_MAX, "-");
			snprintf(shown, CELL_MAX, "-");
		} else {
			uint64_t ns = values[i];
			rt_units_duration_column(text, CELL_MAX,
						 ns > INT64_MAX ? INT64_MAX : (int64_t)ns);
			/* the mark right before the number: "  ~0.050 us" */
			size_t digits = strspn(text, " ");
			if (marked && digits > 0)
				text[digits - 1] = '~';
			char d[CELL_MAX - 1]; /* room for the "~" before it */
			snprintf(shown, CELL_MAX, "%s%s", marked ? "~" : "",
				 rt_duration_short(d, sizeof(d), ns));
		}
		c[C_DURATIONS + 3 * i] = rt_cell_text(text);
		c[C_DURATIONS + 3 * i + 1] = rt_cell_text(shown);
		c[C_DURATIONS + 3 * i + 2] = rt_cell_u64(values[i], NULL);
	}
	c[C_EXACT] = rt_cell_bool(rt_quantiles_exact(q));
	for (size_t i = 0; i < row->count_count && i < RT_DURATION_COUNTS_MAX; i++)
		c[C_COUNTS + i] = rt_cell_u64(row->counts[i].value, NULL);
}

void rt_duration_rows_header(struct rt_out *out, unsigned name_width,
			     const struct rt_duration_row *row)
{
	struct rt_column columns[COLUMNS];
	duration_columns(columns, name_width, row, 0);
	struct rt_table table = {.columns = columns, .count = COLUMNS};
	rt_table_header_text(out, &table);
}

void rt_duration_row_text(struct rt_out *out, const struct rt_duration_row *row,
			  unsigned name_width)
{
	struct rt_column columns[COLUMNS];
	struct rt_cell cells[COLUMNS];
	struct row_texts x;
	duration_columns(columns, name_width, row, 0);
	duration_cells(row, &x, cells, 0);
	struct rt_table table = {.columns = columns, .count = COLUMNS};
	rt_table_row_text(out, &table, cells, NULL);
}

void rt_duration_histogram_text(struct rt_out *out, const struct rt_quantiles *q,
				const char *indent)
{
	unsigned low = RT_QUANTILES_LOG2_BUCKETS, high = 0;
	uint64_t most = 0;
	for (unsigned b = 0; b < RT_QUANTILES_LOG2_BUCKETS; b++) {
		if (!q->log2_counts[b])
			continue;
		if (low == RT_QUANTILES_LOG2_BUCKETS)
			low = b;
		high = b;
		if (q->log2_counts[b] > most)
			most = q->log2_counts[b];
	}
	if (!most)
		return;
	for (unsigned b = low; b <= high; b++) {
		char from[32], to[32], range[80], bar[BAR_WIDTH + 1];
		uint64_t n = q->log2_counts[b];
		/* bucket b: the values of bit length b, [2^(b-1), 2^b) */
		if (b == 0)
			snprintf(range, sizeof(range), "0 ns");
		else
			snprintf(range, sizeof(range), "%s - %s",
				 rt_duration_short(from, sizeof(from), 1ull << (b - 1)),
				 b < 64 ? rt_duration_short(to, sizeof(to), 1ull << b) : "...");
		unsigned width = (unsigned)((n * BAR_WIDTH + most - 1) / most);
		memset(bar, '#', width);
		memset(bar + width, ' ', BAR_WIDTH - width);
		bar[BAR_WIDTH] = 0;
		rt_out_printf(out, "%s%19s |%s| %llu\n", indent, range, bar, (unsigned long long)n);
	}
}

void rt_duration_row_json(struct rt_out *out, const struct rt_duration_row *row)
{
	struct rt_column columns[COLUMNS];
	struct rt_cell cells[COLUMNS];
	struct row_texts x;
	duration_columns(columns, 0, row, 0);
	duration_cells(row, &x, cells, 0);
	struct rt_table table = {.columns = columns, .count = COLUMNS};
	rt_table_row_json(out, &table, cells);
}

void rt_duration_rows_html(struct rt_html *h, const struct rt_duration_row *rows, size_t count)
{
	if (!count)
		return;
	int with_thread = 0;
	for (size_t r = 0; r < count; r++)
		with_thread |= rows[r].has_thread;
	struct rt_column columns[COLUMNS];
	duration_columns(columns, 0, &rows[0], with_thread);
	struct row_texts *x = calloc(count, sizeof(*x));
	struct rt_cell *cells = calloc(count * COLUMNS, sizeof(*cells));
	int rc = -1;
	if (x && cells) {
		for (size_t r = 0; r < count; r++)
			duration_cells(&rows[r], &x[r], cells + r * COLUMNS, 1);
		struct rt_table table = {.columns = columns, .count = COLUMNS};
		rc = rt_table_html(h, &table, cells, count);
	}
	if (rc)
		rt_html_paragraph(h, "(out of memory: the table is missing)");
	for (size_t r = 0; x && r < count; r++)
		free(x[r].page_name);
	free(x);
	free(cells);
}
