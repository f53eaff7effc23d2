/*
 * rate.c - `ringtrace analyze rate`: events per second per tag and per
 * thread, over time in bins, and the busiest bins (docs/ANALYZE.md).
 *
 * Bins are aligned on multiples of the interval from the set's start (ts
 * 0) and kept per row from the first bin that holds an event, each row's
 * array grown only as far as its own last event.  Memory is bounded twice:
 * at most RATE_BINS_MAX bins in all, and at most RATE_CELLS_MAX counters
 * over all rows.  Past either, adjacent bins merge: pairs (the interval
 * doubles) when the user chose it, tens when the interval is ours.
 *
 * Without --interval, counting starts in 1 ns bins and coarsens by tens as
 * the events spread; at the end the interval becomes the smallest 1, 2 or
 * 5 x 10^k ns that cuts the span from the first event to the last into at
 * most 100 bins.  Since every interval passed is a power of ten no larger,
 * the last merge is exact.
 *
 * Per event: a compare for the bin (events come in time order; the bin is
 * recomputed only when an event leaves it), an array lookup for the tag
 * (by source and site index, the string hashed once per site), and the
 * thread's row by its index in analyze/threads.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/html.h"
#include "analyze/table.h"
#include "analyze/threads.h"
#include "common/escape.h"
#include "common/key_table.h"
#include "decode/io_event.h"
#include "decode/sites.h"
#include "present/units.h"

#ifndef RATE_BINS_MAX
#define RATE_BINS_MAX 10000u
#endif
#ifndef RATE_CELLS_MAX
#define RATE_CELLS_MAX (1u << 22) /* 32 MiB of counters */
#endif
#define RATE_TARGET_BINS 100u
#define RATE_TOP_DEFAULT 10u
#define RATE_PLOT_LINES 8u

/* What a tag row counts; the JSON "kind" field. */
enum rate_kind {
	KIND_TRACE,
	KIND_BEGIN,
	KIND_END,
	KIND_LOG,
	KIND_ENTER,
	KIND_EXIT,
	KIND_IO,
	KIND_COUNT
};
static const char *const kind_names[KIND_COUNT] = {"trace", "begin", "end", "log",
						   "enter", "exit",  "io"};

struct rate_row {
	uint64_t count;
	uint64_t *bins;	 /* bins[i]: events in bin first_bin + i */
	uint32_t length; /* bins allocated (and zeroed) */
	/* tag rows */
	uint8_t kind;
	uint8_t site_lost;
	const char *tag; /* in the key table */
	size_t tag_length;
	/* thread rows: filled from the thread's entry when the report starts */
	uint32_t source;
	int32_t pid, tid;
	char thread[RT_ANALYZE_THREAD_NAME_MAX];
	/* report */
	uint64_t peak;
	int64_t peak_bin;
};

struct rate_rows {
	struct rate_row *rows;
	size_t count, capacity;
};

struct rate_state {
	const struct rt_analyze_options *options;
	size_t source_count;
	/* tag rows, keyed by kind byte + tag; found per site once */
	struct rt_key_table tag_keys;
	struct rate_rows tags, threads;
	int32_t **site_rows; /* per source: per site index, the tag row + 1 (0: not yet) */
	uint32_t *site_counts;
	int32_t fixed_rows[KIND_COUNT][2]; /* enter, exit, lost sites: row + 1 */
	int32_t io_rows[RT_IO_OP_MAX + 2]; /* by op; the last: malformed */
	/* thread rows: threads.rows[i] is thread_ids' thread i */
	struct rt_analyze_threads thread_ids;
	/* the bins */
	int user_interval;
	int64_t interval;   /* ns */
	int64_t first_bin;  /* absolute index (ts / interval) of bins[0] */
	uint64_t bin_count; /* bins from first_bin to the latest event's */
	int64_t cur_lo, cur_hi;
	uint64_t cur_rel;
	uint64_t cells;	      /* counters allocated over all rows */
	int merged_for_cells; /* one of them for RATE_CELLS_MAX */
	int64_t asked;	      /* the interval asked, or the readable one for the span */
	int have_events;
	int64_t first_ts, last_ts;
	uint64_t events;
	uint64_t untimed; /* raw-clock events: no nanoseconds, not binned */
	int out_of_memory;
};

static int rate_open(void **state, const struct rt_analyze_context *context, char *message,
		     size_t message_size)
{
	(void)message;
	(void)message_size;
	struct rate_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	*state = st;
	rt_analyze_threads_init(&st->thread_ids);
	st->options = context->options;
	st->source_count = context->set->source_count;
	st->site_rows = calloc(st->source_count + 1, sizeof(*st->site_rows));
	st->site_counts = calloc(st->source_count + 1, sizeof(*st->site_counts));
	if (!st->site_rows || !st->site_counts)
		return -ENOMEM;
	for (size_t i = 0; i < st->source_count; i++)
		st->site_counts[i] = context->set->sources[i].reader->sites.count;
	st->user_interval = context->options->interval_ns > 0;
	st->interval = st->user_interval ? context->options->interval_ns : 1;
	return 0;
}

static struct rate_row *rows_add(struct rate_rows *r)
{
	if (r->count == r->capacity) {
		size_t capacity = r->capacity ? r->capacity * 2 : 64;
		struct rate_row *grown = realloc(r->rows, capacity * sizeof(*grown));
		if (!grown)
			return NULL;
		r->rows = grown;
		r->capacity = capacity;
	}
	struct rate_row *row = &r->rows[r->count++];
	memset(row, 0, sizeof(*row));
	return row;
}

/* The tag row of (kind, tag): its index + 1, or 0 out of memory. */
static int32_t tag_row(struct rate_state *st, enum rate_kind kind, int site_lost, const char *tag,
		       size_t length)
{
	char stack[256];
	char *key = length + 2 <= sizeof(stack) ? stack : malloc(length + 2);
	if (!key)
		return 0;
	key[0] = (char)('a' + kind);
	key[1] = site_lost ? '!' : '=';
	memcpy(key + 2, tag, length);
	long index = rt_key_table_find(&st->tag_keys, key, length + 2);
	if (key != stack)
		free(key);
	if (index < 0)
		return 0;
	if ((size_t)index == st->tags.count) {
		struct rate_row *row = rows_add(&st->tags);
		if (!row)
			return 0;
		row->kind = (uint8_t)kind;
		row->site_lost = (uint8_t)site_lost;
		row->tag = st->tag_keys.keys[index] + 2;
		row->tag_length = length;
	}
	return (int32_t)index + 1;
}

static int32_t site_row(struct rate_state *st, const struct rt_event *ev, int log)
{
	if (!ev->site) {
		int32_t *fixed = &st->fixed_rows[log ? KIND_LOG : KIND_TRACE][1];
		if (!*fixed)
			*fixed = tag_row(st, log ? KIND_LOG : KIND_TRACE, 1, "(site lost)", 11);
		return *fixed;
	}
	if (ev->source >= st->source_count || ev->site_id >= st->site_counts[ev->source]) {
		/* a site the source's table does not hold: named all the same */
		enum rate_kind kind = log ? KIND_LOG : KIND_TRACE;
		return tag_row(st, kind, 0, ev->site->tag, ev->site->tag_length);
	}
	int32_t **rows = &st->site_rows[ev->source];
	if (!*rows && !(*rows = calloc(st->site_counts[ev->source], sizeof(**rows))))
		return 0;
	int32_t *r = &(*rows)[ev->site_id];
	if (!*r) {
		enum rate_kind kind = log				? KIND_LOG
				      : ev->site->kind == RT_SITE_BEGIN ? KIND_BEGIN
				      : ev->site->kind == RT_SITE_END	? KIND_END
									: KIND_TRACE;
		*r = tag_row(st, kind, 0, ev->site->tag, ev->site->tag_length);
	}
	return *r;
}

static int32_t fixed_row(struct rate_state *st, enum rate_kind kind, const char *tag)
{
	int32_t *r = &st->fixed_rows[kind][0];
	if (!*r)
		*r = tag_row(st, kind, 0, tag, strlen(tag));
	return *r;
}

static int32_t io_row(struct rate_state *st, const struct rt_event *ev)
{
	const char *name = ev->io.ok ? rt_io_op_json_name(ev->io.ev.op) : NULL;
	unsigned slot = name ? ev->io.ev.op : RT_IO_OP_MAX + 1;
	if (!st->io_rows[slot]) {
		char tag[64];
		int n = snprintf(tag, sizeof(tag), "io:%s", name ? name : "malformed");
		st->io_rows[slot] = tag_row(st, KIND_IO, 0, tag, (size_t)n);
	}
	return st->io_rows[slot];
}

/* The thread row of ev: index + 1, or 0 out of memory. */
static size_t thread_row(struct rate_state *st, const struct rt_event *ev)
{
	long i = rt_analyze_thread(&st->thread_ids, ev);
	if (i < 0)
		return 0;
	while (st->threads.count <= (size_t)i)
		if (!rows_add(&st->threads))
			return 0;
	return (size_t)i + 1;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Merge each `factor` adjacent bins (aligned on absolute indices) of a row. */
static void row_merge(struct rate_row *row, int64_t first_bin, int64_t factor)
{
	if (!row->length)
		return;
	int64_t new_first = floor_div(first_bin, factor);
	uint32_t used = 0;
	for (uint32_t i = 0; i < row->length; i++) {
		uint64_t to = (uint64_t)(floor_div(first_bin + i, factor) - new_first);
		if (i != to)
			row->bins[to] += row->bins[i];
		if (i != to)
			row->bins[i] = 0;
		used = (uint32_t)to + 1;
	}
	/* keep what the merged bins use; the rest goes back */
	uint64_t *shrunk = realloc(row->bins, used * sizeof(*shrunk));
	if (shrunk)
		row->bins = shrunk;
	row->length = used;
}

static void rows_merge(struct rate_state *st, struct rate_rows *r, int64_t factor)
{
	for (size_t i = 0; i < r->count; i++) {
		row_merge(&r->rows[i], st->first_bin, factor);
		st->cells += r->rows[i].length;
	}
}

/* Merge every `factor` adjacent bins: the interval grows by factor. */
static void merge_bins(struct rate_state *st, int64_t factor)
{
	st->cells = 0;
	rows_merge(st, &st->tags, factor);
	rows_merge(st, &st->threads, factor);
	int64_t new_first = floor_div(st->first_bin, factor);
	int64_t last = st->first_bin + (int64_t)st->bin_count - 1;
	st->bin_count = (uint64_t)(floor_div(last, factor) - new_first + 1);
	st->first_bin = new_first;
	st->interval *= factor;
	st->cur_lo = 1;
	st->cur_hi = 0; /* the current bin is found again */
}

static int64_t merge_factor(const struct rate_state *st)
{
	return st->user_interval ? 2 : 10;
}

/* The relative bin of ts (time order: at or after the first event). */
static uint64_t bin_of(struct rate_state *st, int64_t ts)
{
	if (ts >= st->cur_lo && ts < st->cur_hi)
		return st->cur_rel;
	if (!st->have_events) {
		st->have_events = 1;
		st->first_ts = ts;
		st->first_bin = floor_div(ts, st->interval);
		st->bin_count = 1;
	}
	int64_t abs = floor_div(ts, st->interval);
	if (abs < st->first_bin)
		return 0; /* out of time order: counted in the first bin */
	while ((uint64_t)(abs - st->first_bin) >= RATE_BINS_MAX && st->interval <= INT64_MAX / 10) {
		merge_bins(st, merge_factor(st));
		abs = floor_div(ts, st->interval);
	}
	uint64_t rel = (uint64_t)(abs - st->first_bin);
	if (rel >= st->bin_count)
		st->bin_count = rel + 1;
	st->cur_rel = rel;
	st->cur_lo = abs * st->interval;
	st->cur_hi = st->cur_lo > INT64_MAX - st->interval ? INT64_MAX : st->cur_lo + st->interval;
	return rel;
}

/* Room in row for bin rel: 0, or -ENOMEM. */
static int row_grow(struct rate_state *st, struct rate_row *row, uint64_t rel)
{
	uint64_t want = row->length ? (uint64_t)row->length * 2 : 16;
	if (want < rel + 1)
		want = rel + 1;
	if (want > RATE_BINS_MAX)
		want = RATE_BINS_MAX;
	if (st->cells + (want - row->length) > RATE_CELLS_MAX)
		want = st->cells - row->length < RATE_CELLS_MAX
			   ? RATE_CELLS_MAX - st->cells + row->length
			   : rel + 1;
	if (want < rel + 1)
		want = rel + 1;
	uint64_t *grown = realloc(row->bins, want * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	memset(grown + row->length, 0, (want - row->length) * sizeof(*grown));
	st->cells += want - row->length;
	row->bins = grown;
	row->length = (uint32_t)want;
	return 0;
}

static int count_in(struct rate_state *st, struct rate_row *row, uint64_t *rel, int64_t ts)
{
	row->count++;
	if (*rel >= row->length) {
		uint64_t grow_by = *rel + 1 - row->length;
		while (st->cells + grow_by > RATE_CELLS_MAX && st->bin_count > 1 &&
		       st->interval <= INT64_MAX / 10) {
			merge_bins(st, merge_factor(st));
			st->merged_for_cells = 1;
			*rel = bin_of(st, ts);
			if (*rel < row->length)
				break;
			grow_by = *rel + 1 - row->length;
		}
		if (*rel >= row->length && row_grow(st, row, *rel))
			return -ENOMEM;
	}
	row->bins[*rel]++;
	return 0;
}

static int rate_event(void *state, const struct rt_event *ev)
{
	struct rate_state *st = state;
	int32_t tag;
	switch (ev->kind) {
	case RT_EVENT_TRACE:
		tag = site_row(st, ev, 0);
		break;
	case RT_EVENT_LOG:
		tag = site_row(st, ev, 1);
		break;
	case RT_EVENT_ENTER:
		tag = fixed_row(st, KIND_ENTER, "enter");
		break;
	case RT_EVENT_EXIT:
		tag = fixed_row(st, KIND_EXIT, "exit");
		break;
	case RT_EVENT_IO:
		tag = io_row(st, ev);
		break;
	default:
		return 0; /* losses: the command counts them */
	}
	if (ev->raw_time) {
		st->untimed++;
		return 0;
	}
	size_t thread = thread_row(st, ev);
	if (!tag || !thread) {
		st->out_of_memory = 1;
		return -ENOMEM;
	}
	st->events++;
	st->last_ts = ev->ts_ns;
	uint64_t rel = bin_of(st, ev->ts_ns);
	if (count_in(st, &st->tags.rows[tag - 1], &rel, ev->ts_ns) ||
	    count_in(st, &st->threads.rows[thread - 1], &rel, ev->ts_ns))
		return -ENOMEM;
	return 0;
}

/* ---- report ---------------------------------------------------------- */

/* The smallest 1, 2 or 5 x 10^k ns that cuts span into at most RATE_TARGET_BINS. */
static int64_t readable_interval(int64_t span)
{
	for (int64_t decade = 1;; decade *= 10) {
		static const int64_t steps[] = {1, 2, 5};
		for (size_t i = 0; i < 3; i++) {
			int64_t v = steps[i] * decade;
			if (v * (int64_t)RATE_TARGET_BINS >= span || decade > INT64_MAX / 100)
				return v;
		}
	}
}

static void finish_bins(struct rate_state *st)
{
	if (st->user_interval || !st->have_events) {
		st->asked = st->options->interval_ns;
		return;
	}
	st->asked = readable_interval(st->last_ts - st->first_ts);
	if (st->asked > st->interval)
		merge_bins(st, st->asked / st->interval);
}

static void row_peak(struct rate_row *row)
{
	row->peak = 0;
	row->peak_bin = 0;
	for (uint32_t i = 0; i < row->length; i++)
		if (row->bins[i] > row->peak) {
			row->peak = row->bins[i];
			row->peak_bin = i;
		}
}

static int by_tag(const void *a, const void *b)
{
	const struct rate_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	size_t n = x->tag_length < y->tag_length ? x->tag_length : y->tag_length;
	int c = memcmp(x->tag, y->tag, n);
	if (c)
		return c;
	if (x->tag_length != y->tag_length)
		return x->tag_length < y->tag_length ? -1 : 1;
	if (x->kind != y->kind)
		return strcmp(kind_names[x->kind], kind_names[y->kind]);
	return (int)x->site_lost - (int)y->site_lost;
}

static int by_thread(const void *a, const void *b)
{
	const struct rate_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->source < y->source ? -1 : x->source > y->source;
}

struct busy_bin {
	uint64_t rel, count;
	size_t tag; /* the row (sorted) with the most events in it */
};

static int by_busy(const void *a, const void *b)
{
	const struct busy_bin *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->rel < y->rel ? -1 : x->rel > y->rel;
}

static double per_s(uint64_t count, int64_t interval)
{
	return (double)count * 1e9 / (double)interval;
}

static int64_t bin_start(const struct rate_state *st, uint64_t rel)
{
	return (st->first_bin + (int64_t)rel) * st->interval;
}

/* The busiest bins, top of them, the most first; *n set.  NULL out of memory. */
static struct busy_bin *busiest(const struct rate_state *st, size_t *n)
{
	uint64_t *total = calloc(st->bin_count ? st->bin_count : 1, sizeof(*total));
	if (!total)
		return NULL;
	for (size_t i = 0; i < st->tags.count; i++) {
		const struct rate_row *row = &st->tags.rows[i];
		for (uint32_t b = 0; b < row->length && b < st->bin_count; b++)
			total[b] += row->bins[b];
	}
	size_t top = st->options->top ? st->options->top : RATE_TOP_DEFAULT;
	struct busy_bin *out = calloc(top + 1, sizeof(*out));
	if (!out) {
		free(total);
		return NULL;
	}
	size_t count = 0;
	/* insertion into a short sorted list: bins are at most RATE_BINS_MAX */
	for (uint64_t b = 0; b < st->bin_count; b++) {
		if (!total[b])
			continue;
		struct busy_bin x = {.rel = b, .count = total[b]};
		size_t at = count;
		while (at > 0 && by_busy(&x, &out[at - 1]) < 0) {
			if (at < top)
				out[at] = out[at - 1];
			at--;
		}
		if (at < top) {
			out[at] = x;
			if (count < top)
				count++;
		}
	}
	for (size_t k = 0; k < count; k++) {
		uint64_t best = 0;
		for (size_t i = 0; i < st->tags.count; i++) {
			const struct rate_row *row = &st->tags.rows[i];
			if (out[k].rel < row->length && row->bins[out[k].rel] > best) {
				best = row->bins[out[k].rel];
				out[k].tag = i;
			}
		}
	}
	free(total);
	*n = count;
	return out;
}

/* A duration for the text: nanoseconds as such below a microsecond. */
static char *duration_text(char *out, size_t size, int64_t ns)
{
	if (ns >= 0 && ns < 1000) {
		snprintf(out, size, "%d ns", (int)ns);
		return out;
	}
	return rt_units_duration(out, size, ns);
}

static void tag_text(const struct rate_row *row, char *buf, size_t size)
{
	snprintf(buf, size, "%s", rt_escaped_n(row->tag, row->tag_length));
}

static void thread_text(const struct rate_row *row, char *buf, size_t size, int multi)
{
	int n = multi ? snprintf(buf, size, "pid %d tid %d", (int)row->pid, (int)row->tid)
		      : snprintf(buf, size, "tid %d", (int)row->tid);
	if (row->thread[0] && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " (%s)", rt_escaped(row->thread));
}

static int multi_process(const struct rate_state *st)
{
	for (size_t i = 1; i < st->threads.count; i++)
		if (st->threads.rows[i].pid != st->threads.rows[0].pid)
			return 1;
	return 0;
}

static void rate_column(char *buf, size_t size, double v)
{
	if (v >= 1e7)
		snprintf(buf, size, "%.3gM", v / 1e6);
	else
		snprintf(buf, size, "%.1f", v);
}

/* ---- the rows: tables for the text and JSON (analyze/table.h) ---- */

/* the columns' flags, short */
enum { T = RT_COLUMN_TEXT, J = RT_COLUMN_JSON, R = RT_COLUMN_RIGHT };

/* A tag's or a thread's row. */
enum {
	C_ROW,
	C_NAME,
	C_TAG,
	C_KIND,
	C_SITE_LOST,
	C_PID,
	C_TID,
	C_THREAD,
	C_COUNT,
	C_MEAN,
	C_MEAN_PER_S,
	C_PEAK,
	C_PEAK_PER_S,
	C_PEAK_AT,
	C_PEAK_AT_NS,
	C_INTERVAL,
	COLUMNS
};
static const struct rt_column rate_columns[COLUMNS] = {
    [C_ROW] = {.flags = J, .key = "row"},
    [C_NAME] = {.flags = T, .header = "tag", .width = 32},
    [C_TAG] = {.flags = J, .key = "tag"},
    [C_KIND] = {.flags = T | J, .header = "kind", .key = "kind", .width = 6, .gap = 1},
    [C_SITE_LOST] = {.flags = J, .key = "site_lost"},
    [C_PID] = {.flags = J, .key = "pid"},
    [C_TID] = {.flags = J, .key = "tid"},
    [C_THREAD] = {.flags = J, .key = "thread"},
    [C_COUNT] = {.flags = T | J | R, .header = "events", .key = "count", .width = 12, .gap = 1},
    [C_MEAN] = {.flags = T | R, .header = "mean/s", .width = 12, .gap = 1},
    [C_MEAN_PER_S] = {.flags = J, .key = "mean_per_s", .format = "%.3f"},
    [C_PEAK] = {.flags = T | R, .header = "peak/s", .width = 12, .gap = 1},
    [C_PEAK_PER_S] = {.flags = J, .key = "peak_per_s", .format = "%.3f"},
    [C_PEAK_AT] = {.flags = T, .header = "peak at", .gap = 2},
    [C_PEAK_AT_NS] = {.flags = J, .key = "peak_at_ns"},
    [C_INTERVAL] = {.flags = J, .key = "interval_ns"},
};

/* A busiest interval's row. */
enum {
	B_ROW,
	B_RANK,
	B_FROM,
	B_START_NS,
	B_END_NS,
	B_COUNT,
	B_RATE,
	B_PER_S,
	B_TOP,
	B_TAG,
	B_KIND,
	B_TAG_COUNT,
	B_INTERVAL,
	BUSY_COLUMNS
};
static const struct rt_column busy_columns[BUSY_COLUMNS] = {
    [B_ROW] = {.flags = J, .key = "row"},
    [B_RANK] = {.flags = T | J | R, .header = "rank", .key = "rank", .width = 4},
    [B_FROM] = {.flags = T, .header = "from", .width = 12, .gap = 2},
    [B_START_NS] = {.flags = J, .key = "start_ns"},
    [B_END_NS] = {.flags = J, .key = "end_ns"},
    [B_COUNT] = {.flags = T | J | R, .header = "events", .key = "count", .width = 12, .gap = 1},
    [B_RATE] = {.flags = T | R, .header = "/s", .width = 12, .gap = 1},
    [B_PER_S] = {.flags = J, .key = "per_s", .format = "%.3f"},
    [B_TOP] = {.flags = T, .header = "top tag (its events)", .gap = 2},
    [B_TAG] = {.flags = J, .key = "tag"},
    [B_KIND] = {.flags = J, .key = "kind"},
    [B_TAG_COUNT] = {.flags = J, .key = "tag_count"},
    [B_INTERVAL] = {.flags = J, .key = "interval_ns"},
};

/* The texts of a row's cells. */
struct row_texts {
	char name[300], mean[32], peak[32], at[RT_UNITS_MAX];
};

static struct rt_cell cell_str(const char *s)
{
	return rt_cell_string(s, strlen(s), s);
}

/* The cells of a tag's row (thread 0) or a thread's (1, multi: several processes). */
static void row_cells(const struct rate_state *st, const struct rate_row *row, int thread,
		      int multi, struct row_texts *x, struct rt_cell *c)
{
	memset(c, 0, COLUMNS * sizeof(*c));
	c[C_ROW] = cell_str(thread ? "thread" : "tag");
	if (thread) {
		thread_text(row, x->name, sizeof(x->name), multi);
		c[C_KIND] = rt_cell_text("");
		c[C_PID] = rt_cell_i64(row->pid, NULL);
		c[C_TID] = rt_cell_i64(row->tid, NULL);
		c[C_THREAD] = rt_cell_string(row->thread, strlen(row->thread), NULL);
	} else {
		tag_text(row, x->name, sizeof(x->name));
		c[C_TAG] = rt_cell_string(row->tag, row->tag_length, NULL);
		c[C_KIND] = cell_str(kind_names[row->kind]);
		if (row->site_lost)
			c[C_SITE_LOST] = rt_cell_bool(1);
	}
	c[C_NAME] = rt_cell_text(x->name);
	c[C_COUNT] = rt_cell_u64(row->count, NULL);
	double mean = per_s(row->count, st->interval * (int64_t)st->bin_count);
	double peak = per_s(row->peak, st->interval);
	int64_t at = bin_start(st, (uint64_t)row->peak_bin);
	rate_column(x->mean, sizeof(x->mean), mean);
	c[C_MEAN] = rt_cell_text(x->mean);
	c[C_MEAN_PER_S] = rt_cell_double(mean, NULL);
	rate_column(x->peak, sizeof(x->peak), peak);
	c[C_PEAK] = rt_cell_text(x->peak);
	c[C_PEAK_PER_S] = rt_cell_double(peak, NULL);
	c[C_PEAK_AT] = rt_cell_text(duration_text(x->at, sizeof(x->at), at));
	c[C_PEAK_AT_NS] = rt_cell_i64(at, NULL);
	c[C_INTERVAL] = rt_cell_i64(st->interval, NULL);
}

/* The busiest interval k's cells. */
static void busy_cells(const struct rate_state *st, const struct busy_bin *busy, size_t k,
		       struct row_texts *x, struct rt_cell *c)
{
	memset(c, 0, BUSY_COLUMNS * sizeof(*c));
	const struct rate_row *tag = &st->tags.rows[busy[k].tag];
	double rate = per_s(busy[k].count, st->interval);
	c[B_ROW] = cell_str("busiest");
	c[B_RANK] = rt_cell_u64(k + 1, NULL);
	c[B_FROM] = rt_cell_text(duration_text(x->at, sizeof(x->at), bin_start(st, busy[k].rel)));
	c[B_START_NS] = rt_cell_i64(bin_start(st, busy[k].rel), NULL);
	c[B_END_NS] = rt_cell_i64(bin_start(st, busy[k].rel + 1), NULL);
	c[B_COUNT] = rt_cell_u64(busy[k].count, NULL);
	rate_column(x->mean, sizeof(x->mean), rate);
	c[B_RATE] = rt_cell_text(x->mean);
	c[B_PER_S] = rt_cell_double(rate, NULL);
	char name[sizeof(x->name) - 32];
	tag_text(tag, name, sizeof(name));
	snprintf(x->name, sizeof(x->name), "%s (%" PRIu64 ")", name, tag->bins[busy[k].rel]);
	c[B_TOP] = rt_cell_text(x->name);
	c[B_TAG] = rt_cell_string(tag->tag, tag->tag_length, NULL);
	c[B_KIND] = cell_str(kind_names[tag->kind]);
	c[B_TAG_COUNT] = rt_cell_u64(tag->bins[busy[k].rel], NULL);
	c[B_INTERVAL] = rt_cell_i64(st->interval, NULL);
}

/* The tags', the threads' and the busiest intervals' rows, as the text or JSON. */
static void report_rows(const struct rate_state *st, struct rt_out *out, int json,
			const struct busy_bin *busy, size_t busy_n)
{
	struct rt_column columns[COLUMNS];
	memcpy(columns, rate_columns, sizeof(columns));
	struct rt_table table = {.columns = columns, .count = COLUMNS, .indent = "  "};
	struct rt_cell cells[(int)COLUMNS > (int)BUSY_COLUMNS ? (int)COLUMNS : (int)BUSY_COLUMNS];
	struct row_texts x;
	if (!json) {
		rt_out_char(out, '\n');
		rt_table_header_text(out, &table);
	}
	for (size_t i = 0; i < st->tags.count; i++) {
		row_cells(st, &st->tags.rows[i], 0, 0, &x, cells);
		if (json)
			rt_table_row_json(out, &table, cells);
		else
			rt_table_row_text(out, &table, cells, NULL);
	}
	int multi = multi_process(st);
	columns[C_NAME].header = "thread";
	columns[C_KIND].header = "";
	if (!json) {
		rt_out_char(out, '\n');
		rt_table_header_text(out, &table);
	}
	for (size_t i = 0; i < st->threads.count; i++) {
		row_cells(st, &st->threads.rows[i], 1, multi, &x, cells);
		if (json)
			rt_table_row_json(out, &table, cells);
		else
			rt_table_row_text(out, &table, cells, NULL);
	}
	struct rt_table busiest = {.columns = busy_columns, .count = BUSY_COLUMNS, .indent = "  "};
	if (!json) {
		char interval[RT_UNITS_MAX];
		duration_text(interval, sizeof(interval), st->interval);
		rt_out_printf(out, "\nbusiest intervals (%s each)\n", interval);
		rt_table_header_text(out, &busiest);
	}
	for (size_t k = 0; k < busy_n; k++) {
		busy_cells(st, busy, k, &x, cells);
		if (json)
			rt_table_row_json(out, &busiest, cells);
		else
			rt_table_row_text(out, &busiest, cells, NULL);
	}
}

static void report_rows_json(const struct rate_state *st, struct rt_out *out,
			     const struct busy_bin *busy, size_t busy_n)
{
	rt_out_printf(out,
		      "{\"row\":\"bins\",\"events\":%" PRIu64 ",\"interval_ns\":%" PRId64
		      ",\"bins\":%" PRIu64 ",\"first_ns\":%" PRId64
		      ",\"asked_interval_ns\":%" PRId64 ",\"coarsened\":%s,\"untimed\":%" PRIu64
		      "}\n",
		      st->events, st->interval, st->have_events ? st->bin_count : 0,
		      st->have_events ? bin_start(st, 0) : 0, st->asked,
		      st->interval > st->asked ? "true" : "false", st->untimed);
	report_rows(st, out, 1, busy, busy_n);
}

static void report_table(const struct rate_state *st, struct rt_out *out,
			 const struct busy_bin *busy, size_t busy_n)
{
	char interval[RT_UNITS_MAX], span[RT_UNITS_MAX];
	duration_text(interval, sizeof(interval), st->interval);
	duration_text(span, sizeof(span), st->interval * (int64_t)st->bin_count);
	if (!st->have_events) {
		rt_out_str(out, "rate: no events with a time\n");
	} else {
		rt_out_printf(out, "rate: %" PRIu64 " events in %" PRIu64 " bins of %s (%s)\n",
			      st->events, st->bin_count, interval, span);
	}
	if (st->have_events && st->interval > st->asked) {
		char asked[RT_UNITS_MAX];
		duration_text(asked, sizeof(asked), st->asked);
		rt_out_printf(out, "  note: bins of %s%s would be more than %s: merged to %s\n",
			      asked, st->user_interval ? " (--interval)" : "",
			      st->merged_for_cells ? "the counters' bound" : "10000 bins",
			      interval);
	}
	if (st->untimed)
		rt_out_printf(out,
			      "  note: %" PRIu64 " events of sources without clock metadata"
			      " are not counted (no nanoseconds)\n",
			      st->untimed);
	if (!st->have_events)
		return;
	report_rows(st, out, 0, busy, busy_n);
}

/* One plot: the first (busiest) rows of r, at most RATE_PLOT_LINES lines. */
static int plot_rows(const struct rate_state *st, struct rt_html *h, const struct rate_rows *r,
		     const char *title, int threads, const int64_t *x)
{
	size_t lines = r->count < RATE_PLOT_LINES ? r->count : RATE_PLOT_LINES;
	struct rt_html_series series[RATE_PLOT_LINES];
	char names[RATE_PLOT_LINES][300];
	double *y = calloc(lines * st->bin_count + 1, sizeof(*y));
	if (!y)
		return -ENOMEM;
	int multi = multi_process(st);
	for (size_t i = 0; i < lines; i++) {
		const struct rate_row *row = &r->rows[i];
		double *line = y + i * st->bin_count;
		for (uint32_t b = 0; b < row->length && b < st->bin_count; b++)
			line[b] = per_s(row->bins[b], st->interval);
		if (threads)
			thread_text(row, names[i], sizeof(names[i]), multi);
		else
			tag_text(row, names[i], sizeof(names[i]));
		/* a span's two ends share its name: the legend tells them apart */
		if (!threads &&
		    (row->kind == KIND_BEGIN || row->kind == KIND_END || row->site_lost)) {
			size_t n = strlen(names[i]);
			snprintf(names[i] + n, sizeof(names[i]) - n, " (%s)",
				 kind_names[row->kind]);
		}
		series[i] = (struct rt_html_series){
		    .name = names[i], .x_ns = x, .y = line, .count = st->bin_count};
	}
	rt_html_series_plot(h, title, "events per second", series, lines);
	free(y);
	return 0;
}

static int report_html(const struct rate_state *st, struct rt_html *h)
{
	char text[512], interval[RT_UNITS_MAX];
	duration_text(interval, sizeof(interval), st->interval);
	snprintf(text, sizeof(text),
		 "%" PRIu64 " events counted in %" PRIu64 " bins of %s; rates are events per "
		 "second of each bin.  The busiest %u tags and threads are drawn%s.",
		 st->events, st->have_events ? st->bin_count : 0, interval, RATE_PLOT_LINES,
		 st->tags.count > RATE_PLOT_LINES || st->threads.count > RATE_PLOT_LINES
		     ? " (the others are in the tables only)"
		     : "");
	rt_html_section(h, "Rate over time", text);
	if (!st->have_events)
		return 0;
	int64_t *x = calloc(st->bin_count, sizeof(*x));
	if (!x)
		return -ENOMEM;
	for (uint64_t b = 0; b < st->bin_count; b++)
		x[b] = bin_start(st, b);
	int rc = plot_rows(st, h, &st->tags, "Events per second, by tag", 0, x);
	if (!rc)
		rc = plot_rows(st, h, &st->threads, "Events per second, by thread", 1, x);
	free(x);
	return rc;
}

static int rate_report(void *state, const struct rt_analyze_report *report)
{
	struct rate_state *st = state;
	finish_bins(st);
	for (size_t i = 0; i < st->tags.count; i++)
		row_peak(&st->tags.rows[i]);
	for (size_t i = 0; i < st->threads.count; i++) {
		struct rate_row *row = &st->threads.rows[i];
		const struct rt_analyze_thread *t = &st->thread_ids.items[i];
		row->source = t->source;
		row->pid = t->pid;
		row->tid = t->tid;
		memcpy(row->thread, t->name, sizeof(row->thread));
		row_peak(row);
	}
	/* sorted: the tag rows' keys stay where the key table put them */
	if (st->tags.count > 1)
		qsort(st->tags.rows, st->tags.count, sizeof(*st->tags.rows), by_tag);
	if (st->threads.count > 1)
		qsort(st->threads.rows, st->threads.count, sizeof(*st->threads.rows), by_thread);
	size_t busy_n = 0;
	struct busy_bin *busy = busiest(st, &busy_n);
	if (!busy)
		return -ENOMEM;
	if (report->json)
		report_rows_json(st, report->out, busy, busy_n);
	else
		report_table(st, report->out, busy, busy_n);
	int rc = report->html ? report_html(st, report->html) : 0;
	free(busy);
	return rc;
}

static void rows_free(struct rate_rows *r)
{
	for (size_t i = 0; i < r->count; i++)
		free(r->rows[i].bins);
	free(r->rows);
}

static void rate_free(void *state)
{
	struct rate_state *st = state;
	if (!st)
		return;
	rows_free(&st->tags);
	rows_free(&st->threads);
	for (size_t i = 0; i < st->source_count && st->site_rows; i++)
		free(st->site_rows[i]);
	free(st->site_rows);
	free(st->site_counts);
	rt_analyze_threads_free(&st->thread_ids);
	rt_key_table_free(&st->tag_keys);
	free(st);
}

const struct rt_analyzer rt_analyzer_rate = {
    .name = "rate",
    .summary = "events per second per tag and per thread over time, the busiest intervals",
    .open = rate_open,
    .event = rate_event,
    .report = rate_report,
    .free = rate_free,
};
