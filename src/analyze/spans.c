/*
 * spans.c - `ringtrace analyze spans`: how long spans take, per name.
 *
 * A span is a function call (an enter to its exit, named by the function)
 * or a span marked in the source (an RT_BEGIN to the RT_END of the same
 * tag on its thread), paired by the span tracker (event/span_tracker.h),
 * as every view pairs them.  A span that returned (its exit, its end) is
 * timed; one that ended any other way (unwound, thread ended, exited, its
 * exit or end lost, still open at the end of the input) is counted as
 * unclosed; an exit or end with nothing to close is an orphan end; a begin
 * past the tracker's caps (on open calls, on open marked spans) is counted
 * as unclosed and as overflow.
 *
 * Names are keyed by the numbers the records carry, (source, site id) and
 * (source, function address), so the per-event work is a hash of two
 * integers; the name's string is made once per key.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/duration_rows.h"
#include "analyze/grow.h"
#include "analyze/html.h"
#include "analyze/id_table.h"
#include "analyze/threads.h"
#include "common/key_table.h"
#include "event/span_tracker.h"

#define SPANS_HTML_HISTOGRAMS 20u
#define SPANS_HTML_ROWS 200u
#define NAME_WIDTH_MIN 16u
#define NAME_WIDTH_MAX 40u

/* The first byte of a name's key: the two kinds never share a row. */
#define KIND_FUNCTION 'f'
#define KIND_MARKED 's'

/* A row's figures: per name, and per (name, thread). */
struct row {
	struct rt_quantiles q;
	uint64_t unclosed, orphan_ends, overflow;
	uint32_t name, thread; /* thread: per-thread rows only */
};

struct spans {
	const struct rt_analyze_options *options;
	struct rt_key_table names; /* KIND byte + the name */
	struct row *rows;	   /* per name, indexed as names */
	size_t row_count, row_capacity;
	struct rt_id_table keys; /* (source * 2 + is_call, site id or address) -> key_names */
	uint32_t *key_names;
	size_t key_capacity;
	struct rt_analyze_threads threads;
	struct rt_span_tracker tracker; /* open spans: a row's name each (a uint32_t) */
	struct rt_span_thread *states;	/* per thread, indexed as threads */
	size_t state_capacity;
	struct rt_id_table pair_ids; /* (thread, name) -> pairs */
	struct row *pairs;
	size_t pair_count, pair_capacity;
	uint64_t untimed; /* events of sources without clock metadata */
	int finished;
};

static void row_init(struct row *r, uint32_t name, uint32_t thread)
{
	memset(r, 0, sizeof(*r));
	rt_quantiles_init(&r->q);
	r->name = name;
	r->thread = thread;
}

/* The row of a name's key (kind byte first), made when new; -1 when out of memory. */
static long name_of(struct spans *s, const char *key, size_t n)
{
	long i = rt_key_table_find(&s->names, key, n);
	if (i < 0 ||
	    rt_analyze_grow((void **)&s->rows, &s->row_capacity, s->names.count, sizeof(*s->rows)))
		return -1;
	for (; s->row_count < s->names.count; s->row_count++)
		row_init(&s->rows[s->row_count], (uint32_t)s->row_count, 0);
	return i;
}

/* The name of a function's address or a marked span's site, found once per key. */
static long key_slow(struct spans *s, const struct rt_event *ev, uint32_t space, uint64_t id)
{
	char text[512];
	size_t n;
	if (ev->kind == RT_EVENT_TRACE) {
		text[0] = KIND_MARKED;
		n = ev->site->tag_length < sizeof(text) - 1 ? ev->site->tag_length
							    : sizeof(text) - 1;
		memcpy(text + 1, ev->site->tag, n);
		n++;
	} else {
		/* named as `report` names calls: the function, its module+offset, its address */
		text[0] = KIND_FUNCTION;
		struct rt_function_place place = ev->place;
		if (place.func) {
			n = strlen(place.func);
			n = n < sizeof(text) - 1 ? n : sizeof(text) - 1;
			memcpy(text + 1, place.func, n);
		} else {
			place.file = NULL;
			n = rt_function_place_text(&place, ev->addr, text + 1, sizeof(text) - 1);
		}
		n++;
	}
	long name = name_of(s, text, n);
	if (name < 0)
		return -1;
	long k = rt_id_table_add(&s->keys, space, id);
	if (k < 0 || rt_analyze_grow((void **)&s->key_names, &s->key_capacity, s->keys.count,
				     sizeof(*s->key_names)))
		return -1;
	s->key_names[k] = (uint32_t)name;
	return name;
}

static inline long key_name(struct spans *s, const struct rt_event *ev, uint32_t space, uint64_t id)
{
	long k = rt_id_table_get(&s->keys, space, id);
	return k >= 0 ? (long)s->key_names[k] : key_slow(s, ev, space, id);
}

/* The (name, thread) row for --per-thread; NULL when out of memory. */
static struct row *pair_of(struct spans *s, uint32_t name, uint32_t thread)
{
	long i = rt_id_table_get(&s->pair_ids, thread, name);
	if (i >= 0)
		return &s->pairs[i];
	if (rt_analyze_grow((void **)&s->pairs, &s->pair_capacity, s->pair_count + 1,
			    sizeof(*s->pairs)))
		return NULL;
	if ((i = rt_id_table_add(&s->pair_ids, thread, name)) < 0)
		return NULL;
	row_init(&s->pairs[i], name, thread);
	s->pair_count++;
	return &s->pairs[i];
}

enum outcome { TIMED, UNCLOSED, ORPHAN, OVERFLOW };

/* Count one span's outcome on its name's row and, per thread, on its pair's. */
static int tally(struct spans *s, uint32_t name, uint32_t thread, enum outcome what,
		 uint64_t duration)
{
	struct row *rows[2] = {&s->rows[name], NULL};
	if (s->options->per_thread && !(rows[1] = pair_of(s, name, thread)))
		return -ENOMEM;
	for (unsigned i = 0; i < 2 && rows[i]; i++) {
		struct row *r = rows[i];
		switch (what) {
		case TIMED:
			/* out of memory only costs the quantiles their exactness */
			(void)rt_quantiles_add(&r->q, duration);
			break;
		case OVERFLOW:
			r->overflow++;
			r->unclosed++;
			break;
		case UNCLOSED:
			r->unclosed++;
			break;
		case ORPHAN:
			r->orphan_ends++;
			break;
		}
	}
	return 0;
}

/* The row name of an enter, exit, begin or end. */
static long name_of_event(struct spans *s, const struct rt_event *ev)
{
	if (ev->kind == RT_EVENT_TRACE)
		return key_name(s, ev, ev->source * 2u, ev->site_id);
	return key_name(s, ev, ev->source * 2u + 1u, ev->addr);
}

/* The index of the thread the tracker calls back about (a pointer into states). */
static uint32_t thread_index(const struct spans *s, const void *thread)
{
	return (uint32_t)((const struct rt_span_thread *)thread - s->states);
}

static int span_begin(void *ctx, void *thread, struct rt_span *span, const struct rt_span_event *ev)
{
	/* marked spans pair by name: two RT_BEGIN sites of one tag open the same span */
	long name = name_of_event(ctx, ev->origin);
	if (name < 0)
		return -ENOMEM;
	*(uint32_t *)rt_span_user(span) = (uint32_t)name;
	return 0;
}

/* Only a span that returned is timed: any other end is counted apart. */
static int span_end(void *ctx, void *thread, struct rt_span *span, int64_t end_ts,
		    enum rt_span_end how, const struct rt_span_event *own_end)
{
	struct spans *s = ctx;
	uint32_t name = *(const uint32_t *)rt_span_user(span);
	if (how != RT_SPAN_RETURNED)
		return tally(s, name, thread_index(s, thread), UNCLOSED, 0);
	return tally(s, name, thread_index(s, thread), TIMED, rt_span_duration(span, end_ts));
}

static int span_orphan(void *ctx, void *thread, const struct rt_span_event *ev)
{
	long name = name_of_event(ctx, ev->origin);
	return name < 0 ? -ENOMEM
			: tally(ctx, (uint32_t)name, thread_index(ctx, thread), ORPHAN, 0);
}

static int span_too_deep(void *ctx, void *thread, const struct rt_span_event *ev)
{
	long name = name_of_event(ctx, ev->origin);
	return name < 0 ? -ENOMEM
			: tally(ctx, (uint32_t)name, thread_index(ctx, thread), OVERFLOW, 0);
}

static const struct rt_span_ops span_ops = {
    .begin = span_begin, .end = span_end, .orphan = span_orphan, .too_deep = span_too_deep};

static int spans_event(void *state, const struct rt_event *ev)
{
	struct spans *s = state;
	struct rt_span_event span;
	if (rt_event_as_span(ev, &span) == RT_SPAN_NONE)
		return 0;
	if (ev->raw_time) {
		/* counter ticks are no durations: such a source is left out, and said so */
		s->untimed++;
		return 0;
	}
	long thread = rt_analyze_thread(&s->threads, ev);
	if (thread < 0)
		return -ENOMEM;
	if ((size_t)thread >= s->state_capacity &&
	    rt_analyze_grow((void **)&s->states, &s->state_capacity, (size_t)thread + 1,
			    sizeof(*s->states)))
		return -ENOMEM;
	return rt_span_feed(&s->tracker, &s->states[thread], &s->states[thread], &span);
}

/* Only begins, ends, enters and exits become spans (rt_event_as_span). */
static int spans_skips_trace(void *state, const struct rt_site *site)
{
	(void)state;
	return !site || (site->kind != RT_SITE_BEGIN && site->kind != RT_SITE_END &&
			 site->kind != RT_SITE_ENTER && site->kind != RT_SITE_EXIT);
}

static int spans_open(void **state, const struct rt_analyze_context *context, char *message,
		      size_t message_size)
{
	(void)message;
	(void)message_size;
	struct spans *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->options = context->options;
	rt_id_table_init(&s->keys);
	rt_id_table_init(&s->pair_ids);
	rt_analyze_threads_init(&s->threads);
	rt_span_tracker_init(&s->tracker, &span_ops, s, sizeof(uint32_t));
	*state = s;
	return 0;
}

/* Whatever is still open at the end of the input never closed. */
static int finish(struct spans *s)
{
	if (s->finished)
		return 0;
	s->finished = 1;
	for (size_t i = 0; i < s->threads.count && i < s->state_capacity; i++)
		if (rt_span_finish(&s->tracker, &s->states[i], &s->states[i]))
			return -ENOMEM;
	return 0;
}

/* Rows by total time, most first; then by count, then by name, for a stable order. */
static const struct spans *sorting;

static int compare_rows(const void *a, const void *b)
{
	const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
	if (x->q.total != y->q.total)
		return x->q.total > y->q.total ? -1 : 1;
	if (x->q.count != y->q.count)
		return x->q.count > y->q.count ? -1 : 1;
	if (x->name != y->name) {
		const struct rt_key_table *t = &sorting->names;
		int c = strcmp(t->keys[x->name] + 1, t->keys[y->name] + 1);
		if (c)
			return c;
		return x->name < y->name ? -1 : 1;
	}
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static struct rt_duration_row row_of(const struct spans *s, struct row *r, int per_thread)
{
	const char *key = s->names.keys[r->name];
	struct rt_duration_row d = {
	    .name = key + 1,
	    .name_length = s->names.lengths[r->name] - 1,
	    .kind = key[0] == KIND_FUNCTION ? "function" : "span",
	    .q = &r->q,
	    .counts = {{"unclosed", "unclosed", r->unclosed},
		       {"orphan ends", "orphan_ends", r->orphan_ends},
		       {"overflow", "overflow", r->overflow}},
	    .count_count = 3,
	};
	if (per_thread) {
		const struct rt_analyze_thread *t = &s->threads.items[r->thread];
		d.has_thread = 1;
		d.pid = t->pid;
		d.tid = t->tid;
		d.thread = t->name;
		d.thread_length = t->name_length;
	}
	return d;
}

/* The rows shown: names ranked, cut to --top, each followed by its threads' rows. */
struct shown {
	struct row **names;
	size_t name_count;
	struct row **pairs; /* sorted by their name's rank, then total */
	size_t *pair_start; /* pairs of names[i]: pair_start[i] .. pair_start[i + 1] */
};

static int rank(struct spans *s, struct shown *w)
{
	memset(w, 0, sizeof(*w));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	w->names = calloc(s->row_count + 1, sizeof(*w->names));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	w->pairs = calloc(s->pair_count + 1, sizeof(*w->pairs));
	w->pair_start = calloc(s->row_count + 2, sizeof(*w->pair_start));
	uint32_t *order = calloc(s->row_count + 1, sizeof(*order));
	if (!w->names || !w->pairs || !w->pair_start || !order) {
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->row_count; i++)
		w->names[i] = &s->rows[i];
	sorting = s;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	qsort(w->names, s->row_count, sizeof(*w->names), compare_rows);
	w->name_count = s->row_count;
	if (s->options->top && w->name_count > s->options->top)
		w->name_count = s->options->top;
	for (size_t i = 0; i < s->row_count; i++)
		order[w->names[i]->name] = (uint32_t)i;
	/* pairs bucketed by their name's rank (a counting sort), then each bucket by total */
	for (size_t i = 0; i < s->pair_count; i++)
		w->pair_start[order[s->pairs[i].name] + 1]++;
	for (size_t i = 0; i < s->row_count; i++)
		w->pair_start[i + 1] += w->pair_start[i];
	size_t *fill = calloc(s->row_count + 1, sizeof(*fill));
	if (!fill) {
		free(order);
		return -ENOMEM;
	}
	memcpy(fill, w->pair_start, s->row_count * sizeof(*fill));
	for (size_t i = 0; i < s->pair_count; i++)
		w->pairs[fill[order[s->pairs[i].name]]++] = &s->pairs[i];
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	size_t pair_bytes = sizeof(*w->pairs);
	for (size_t i = 0; i < s->row_count; i++)
		qsort(w->pairs + w->pair_start[i], w->pair_start[i + 1] - w->pair_start[i],
		      pair_bytes, compare_rows);
	free(fill);
	free(order);
	return 0;
}

static void shown_free(struct shown *w)
{
	free(w->names);
	free(w->pairs);
	free(w->pair_start);
}

static void report_text(struct spans *s, struct shown *w, struct rt_out *out)
{
	uint64_t timed = 0, unclosed = 0, orphans = 0;
	for (size_t i = 0; i < s->row_count; i++) {
		timed += s->rows[i].q.count;
		unclosed += s->rows[i].unclosed;
		orphans += s->rows[i].orphan_ends;
	}
	if (!s->row_count) {
		rt_out_str(out, "No span was found: no function enter or exit, no RT_BEGIN or "
				"RT_END.\n");
	} else {
		rt_out_printf(out,
			      "%zu span name%s: %llu span%s timed, %llu unclosed, %llu orphan "
			      "end%s (not timed)",
			      s->row_count, s->row_count == 1 ? "" : "s", (unsigned long long)timed,
			      timed == 1 ? "" : "s", (unsigned long long)unclosed,
			      (unsigned long long)orphans, orphans == 1 ? "" : "s");
		if (w->name_count < s->row_count)
			rt_out_printf(out, "; the top %zu by total time", w->name_count);
		rt_out_str(out, ".\n\n");
		unsigned width = NAME_WIDTH_MIN;
		for (size_t i = 0; i < w->name_count; i++) {
			size_t n = s->names.lengths[w->names[i]->name] - 1;
			if (n > width)
				width = n > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (unsigned)n;
			for (size_t p = w->pair_start[i]; p < w->pair_start[i + 1]; p++) {
				const struct rt_analyze_thread *t =
				    &s->threads.items[w->pairs[p]->thread];
				/* "  pid P tid T (name)" */
				n = 2 +
				    (size_t)snprintf(NULL, 0, "pid %d tid %d", (int)t->pid,
						     (int)t->tid) +
				    (t->name_length ? t->name_length + 3 : 0);
				if (n > width)
					width = n > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (unsigned)n;
			}
		}
		struct rt_duration_row header = row_of(s, w->names[0], 0);
		rt_duration_rows_header(out, width, &header);
		for (size_t i = 0; i < w->name_count; i++) {
			struct rt_duration_row d = row_of(s, w->names[i], 0);
			rt_duration_row_text(out, &d, width);
			rt_duration_histogram_text(out, &w->names[i]->q, "    ");
			size_t rank_of = i;
			for (size_t p = w->pair_start[rank_of]; p < w->pair_start[rank_of + 1];
			     p++) {
				struct rt_duration_row t = row_of(s, w->pairs[p], 1);
				rt_duration_row_text(out, &t, width);
				rt_duration_histogram_text(out, &w->pairs[p]->q, "      ");
			}
		}
	}
	uint64_t calls = s->tracker.calls_too_deep, marked = s->tracker.marked_too_deep;
	if (calls)
		rt_out_printf(out,
			      "\n%llu call%s began deeper than %u open calls on a thread: counted "
			      "as unclosed and overflow, not timed.\n",
			      (unsigned long long)calls, calls == 1 ? "" : "s",
			      s->tracker.calls_max);
	if (marked)
		rt_out_printf(out,
			      "\n%llu marked span%s began past %u open marked spans on a thread: "
			      "counted as unclosed and overflow, not timed.\n",
			      (unsigned long long)marked, marked == 1 ? "" : "s",
			      RT_SPAN_MARKED_MAX);
	if (s->untimed)
		rt_out_printf(out,
			      "\n%llu enter, exit, begin or end event%s of sources without clock "
			      "metadata left out: their times are raw counter ticks.\n",
			      (unsigned long long)s->untimed, s->untimed == 1 ? "" : "s");
}

static void report_html(struct spans *s, struct shown *w, struct rt_html *h)
{
	char text[256];
	snprintf(text, sizeof(text),
		 "%zu span names, by total time. Unclosed spans and orphan ends are counted "
		 "apart and not timed.",
		 s->row_count);
	rt_html_section(h, "Spans", s->row_count ? text : "No span was found.");
	size_t rows = w->name_count < SPANS_HTML_ROWS ? w->name_count : SPANS_HTML_ROWS;
	struct rt_duration_row *table = calloc(rows + 1, sizeof(*table));
	if (!table) {
		rt_html_paragraph(h, "(out of memory: the table is missing)");
		return;
	}
	for (size_t i = 0; i < rows; i++)
		table[i] = row_of(s, w->names[i], 0);
	rt_duration_rows_html(h, table, rows);
	free(table);
	/* the first names that have a duration (untimed ones rank last anyway) */
	for (size_t i = 0, drawn = 0; i < rows && drawn < SPANS_HTML_HISTOGRAMS; i++) {
		struct row *r = w->names[i];
		if (!r->q.count)
			continue;
		drawn++;
		char title[160];
		snprintf(title, sizeof(title), "%.*s", (int)(s->names.lengths[r->name] - 1),
			 s->names.keys[r->name] + 1);
		rt_html_histogram(h, title, &r->q);
	}
}

static int spans_report(void *state, const struct rt_analyze_report *report)
{
	struct spans *s = state;
	struct shown w;
	memset(&w, 0, sizeof(w));
	if (finish(s) || rank(s, &w)) {
		shown_free(&w);
		return -ENOMEM;
	}
	if (report->json) {
		for (size_t i = 0; i < w.name_count; i++) {
			struct rt_duration_row d = row_of(s, w.names[i], 0);
			rt_duration_row_json(report->out, &d);
			for (size_t p = w.pair_start[i]; p < w.pair_start[i + 1]; p++) {
				struct rt_duration_row t = row_of(s, w.pairs[p], 1);
				rt_duration_row_json(report->out, &t);
			}
		}
	} else {
		report_text(s, &w, report->out);
	}
	if (report->html)
		report_html(s, &w, report->html);
	shown_free(&w);
	return 0;
}

static void spans_free(void *state)
{
	struct spans *s = state;
	if (!s)
		return;
	for (size_t i = 0; i < s->row_count; i++)
		rt_quantiles_free(&s->rows[i].q);
	for (size_t i = 0; i < s->pair_count; i++)
		rt_quantiles_free(&s->pairs[i].q);
	for (size_t i = 0; i < s->state_capacity; i++)
		rt_span_thread_free(&s->states[i]);
	free(s->rows);
	free(s->pairs);
	free(s->states);
	free(s->key_names);
	rt_key_table_free(&s->names);
	rt_id_table_free(&s->keys);
	rt_id_table_free(&s->pair_ids);
	rt_analyze_threads_free(&s->threads);
	free(s);
}

const struct rt_analyzer rt_analyzer_spans = {
    .name = "spans",
    .summary = "how long function calls and RT_BEGIN..RT_END spans take, per name",
    .open = spans_open,
    .event = spans_event,
    .skips_trace = spans_skips_trace,
    .report = spans_report,
    .free = spans_free,
};
