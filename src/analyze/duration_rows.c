/*
 * duration_rows.c - see duration_rows.h.
 */
#include "analyze/duration_rows.h"
#include "common/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/html.h"
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

static void put_padded(struct rt_out *out, const char *s, unsigned width, int right)
{
	size_t n = strlen(s);
	if (right)
		for (size_t i = n; i < width; i++)
			rt_out_char(out, ' ');
	rt_out_str(out, s);
	if (!right)
		for (size_t i = n; i < width; i++)
			rt_out_char(out, ' ');
}

void rt_duration_rows_header(struct rt_out *out, unsigned name_width,
			     const struct rt_duration_row *row)
{
	static const char *const columns[] = {"total", "min", "p50", "p90", "p99", "max"};
	put_padded(out, "name", name_width, 0);
	put_padded(out, "count", COUNT_WIDTH + 1, 1);
	for (unsigned i = 0; i < 6; i++)
		put_padded(out, columns[i], DURATION_WIDTH + 1, 1);
	for (size_t i = 0; i < row->count_count; i++)
		put_padded(out, row->counts[i].header, COUNT_WIDTH + 2, 1);
	rt_out_char(out, '\n');
}

static void put_duration(struct rt_out *out, uint64_t ns, int approximate, int empty)
{
	char cell[CELL_MAX];
	if (empty) {
		put_padded(out, "-", DURATION_WIDTH + 1, 1);
		return;
	}
	rt_units_duration_column(cell, sizeof(cell), ns > INT64_MAX ? INT64_MAX : (int64_t)ns);
	/* the mark right before the number: "  ~0.050 us" */
	size_t digits = strspn(cell, " ");
	if (approximate && digits > 0)
		cell[digits - 1] = '~';
	put_padded(out, cell, DURATION_WIDTH + 1, 1);
}

/* "pid 12 tid 34 (name)" or "pid 12 tid 34". */
static void thread_label(const struct rt_duration_row *row, char *buf, size_t size)
{
	if (row->thread_length)
		snprintf(buf, size, "pid %d tid %d (%.*s)", (int)row->pid, (int)row->tid,
			 (int)row->thread_length, row->thread);
	else
		snprintf(buf, size, "pid %d tid %d", (int)row->pid, (int)row->tid);
}

void rt_duration_row_text(struct rt_out *out, const struct rt_duration_row *row,
			  unsigned name_width)
{
	char label[160];
	size_t shown;
	if (row->has_thread) {
		thread_label(row, label, sizeof(label));
		rt_out_str(out, "  ");
		const char *text = rt_escaped(label);
		rt_out_str(out, text);
		shown = 2 + strlen(text);
	} else {
		const char *text = rt_escaped_n(row->name, row->name_length);
		rt_out_str(out, text);
		shown = strlen(text);
	}
	if (shown > name_width) {
		rt_out_char(out, '\n');
		shown = 0;
	}
	for (size_t i = shown; i < name_width; i++)
		rt_out_char(out, ' ');
	struct rt_quantiles *q = row->q;
	struct figures f = figures_of(q);
	char cell[CELL_MAX];
	snprintf(cell, sizeof(cell), "%llu", (unsigned long long)q->count);
	put_padded(out, cell, COUNT_WIDTH + 1, 1);
	int empty = q->count == 0, approximate = !rt_quantiles_exact(q);
	put_duration(out, q->total, 0, empty);
	put_duration(out, f.min, 0, empty);
	for (unsigned i = 0; i < 3; i++)
		put_duration(out, f.q[i], approximate, empty);
	put_duration(out, f.max, 0, empty);
	for (size_t i = 0; i < row->count_count; i++) {
		snprintf(cell, sizeof(cell), "%llu", (unsigned long long)row->counts[i].value);
		put_padded(out, cell, COUNT_WIDTH + 2, 1);
	}
	rt_out_char(out, '\n');
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

static void put_json_count(struct rt_out *out, const char *key, uint64_t v)
{
	rt_out_str(out, ",\"");
	rt_out_str(out, key);
	rt_out_str(out, "\":");
	rt_out_u64(out, v);
}

void rt_duration_row_json(struct rt_out *out, const struct rt_duration_row *row)
{
	struct rt_quantiles *q = row->q;
	struct figures f = figures_of(q);
	rt_out_str(out, "{\"name\":");
	rt_out_json_string(out, row->name, row->name_length);
	if (row->kind) {
		rt_out_str(out, ",\"kind\":");
		rt_out_json_string(out, row->kind, strlen(row->kind));
	}
	if (row->has_thread) {
		rt_out_str(out, ",\"pid\":");
		rt_out_i64(out, row->pid);
		rt_out_str(out, ",\"tid\":");
		rt_out_i64(out, row->tid);
		rt_out_str(out, ",\"thread\":");
		rt_out_json_string(out, row->thread ? row->thread : "", row->thread_length);
	}
	put_json_count(out, "count", q->count);
	put_json_count(out, "total_ns", q->total);
	put_json_count(out, "min_ns", f.min);
	put_json_count(out, "p50_ns", f.q[0]);
	put_json_count(out, "p90_ns", f.q[1]);
	put_json_count(out, "p99_ns", f.q[2]);
	put_json_count(out, "max_ns", f.max);
	rt_out_str(out, rt_quantiles_exact(q) ? ",\"exact\":true" : ",\"exact\":false");
	for (size_t i = 0; i < row->count_count; i++)
		put_json_count(out, row->counts[i].json_key, row->counts[i].value);
	rt_out_str(out, "}\n");
}

void rt_duration_rows_html(struct rt_html *h, const struct rt_duration_row *rows, size_t count)
{
	if (!count)
		return;
	static const char *const fixed[] = {"name", "thread", "count", "total", "min",
					    "p50",  "p90",    "p99",   "max"};
	const size_t fixed_count = sizeof(fixed) / sizeof(fixed[0]);
	size_t columns = fixed_count + rows[0].count_count;
	const char *headers[sizeof(fixed) / sizeof(fixed[0]) + RT_DURATION_COUNTS_MAX];
	const char **cells = calloc(count * columns, sizeof(*cells));
	char(*text)[CELL_MAX] = calloc(count * columns, sizeof(*text));
	char **names = calloc(count, sizeof(*names));
	if (!cells || !text || !names) {
		free(cells);
		free(text);
		free(names);
		rt_html_paragraph(h, "(out of memory: the table is missing)");
		return;
	}
	for (size_t c = 0; c < fixed_count; c++)
		headers[c] = fixed[c];
	for (size_t c = 0; c < rows[0].count_count; c++)
		headers[fixed_count + c] = rows[0].counts[c].header;
	for (size_t r = 0; r < count; r++) {
		const struct rt_duration_row *row = &rows[r];
		char(*t)[CELL_MAX] = &text[r * columns];
		const char **cell = &cells[r * columns];
		struct figures f = figures_of(row->q);
		int approximate = !rt_quantiles_exact(row->q), empty = row->q->count == 0;
		names[r] = strndup(row->name, row->name_length);
		cell[0] = names[r] ? names[r] : "?";
		if (row->has_thread)
			thread_label(row, t[1], CELL_MAX);
		cell[1] = t[1];
		snprintf(t[2], CELL_MAX, "%llu", (unsigned long long)row->q->count);
		uint64_t values[6] = {row->q->total, f.min, f.q[0], f.q[1], f.q[2], f.max};
		for (unsigned i = 0; i < 6; i++) {
			char d[CELL_MAX - 1]; /* room for the "~" before it */
			if (empty)
				snprintf(t[3 + i], CELL_MAX, "-");
			else
				snprintf(t[3 + i], CELL_MAX, "%s%s",
					 approximate && i >= 2 && i <= 4 ? "~" : "",
					 rt_duration_short(d, sizeof(d), values[i]));
		}
		for (size_t c = 0; c < row->count_count; c++)
			snprintf(t[fixed_count + c], CELL_MAX, "%llu",
				 (unsigned long long)row->counts[c].value);
		for (size_t c = 2; c < columns; c++)
			cell[c] = t[c];
	}
	int with_thread = 0;
	for (size_t r = 0; r < count; r++)
		with_thread |= rows[r].has_thread;
	if (!with_thread) {
		/* no thread's row: the column goes, cells shifted left in place */
		size_t k = 0;
		for (size_t i = 0; i < count * columns; i++)
			if (i % columns != 1)
				cells[k++] = cells[i];
		for (size_t c = 1; c + 1 < columns; c++)
			headers[c] = headers[c + 1];
		columns--;
	}
	rt_html_table(h, headers, columns, cells, count);
	for (size_t r = 0; r < count; r++)
		free(names[r]);
	free(names);
	free(cells);
	free(text);
}
