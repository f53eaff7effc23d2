/*
 * by_arg.c - `ringtrace analyze by-arg --tag TAG --arg N`: TAG's trace
 * events grouped by the value of their argument N, with the count and the
 * time each value takes (docs/ANALYZE.md).
 *
 * The time of an event depends on its site.  A span's start (an RT_BEGIN
 * site) lasts until the RT_END of the same name, the innermost open one on
 * its thread, paired by the span tracker (event/span_tracker.h) as every
 * other view pairs them: fed TAG's begins and ends only, each begin opens a
 * span (one without argument N too: its end is its own, though it is not
 * grouped), spans past RT_SPAN_MARKED_MAX are counted but not timed and
 * their ends absorbed, and a source without clock metadata pairs on its
 * counter (its spans are not timed).  Any other event holds its thread until the thread's next
 * event of any kind: the time the thread spent after it, before it did
 * anything else traced.  So an event that says why the thread stopped
 * (an exit reason, a wait's cause) is charged with the time it stopped.
 *
 * Values are kept in a hash table by (value, type) - and by thread too
 * with --per-thread - up to BY_ARG_VALUES_MAX of them; later values go to
 * one "other" row.  Each value has its duration quantiles
 * (analyze/quantiles.h), so memory is bounded by the values kept, never by
 * the events.  Per event: the site's match is cached per (source, site
 * index); threads (analyze/threads.h) are looked up only while some event
 * holds one, or for TAG's own events.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/grow.h"
#include "analyze/html.h"
#include "analyze/quantiles.h"
#include "analyze/table.h"
#include "analyze/threads.h"
#include "common/escape.h"
#include "decode/sites.h"
#include "event/span_tracker.h"
#include "present/units.h"

#ifndef BY_ARG_VALUES_MAX
#define BY_ARG_VALUES_MAX 16384u
#endif
#define BY_ARG_TOP_DEFAULT 20u

/* How a site's events count: cached per (source, site index). */
enum site_role {
	ROLE_UNKNOWN = 0,
	ROLE_NONE,  /* another tag: only ends what the thread holds */
	ROLE_EVENT, /* TAG, held until the thread's next event */
	ROLE_BEGIN, /* TAG, an RT_BEGIN: until its RT_END */
	ROLE_END,   /* TAG's RT_END */
};

enum value_type { TYPE_UNSIGNED, TYPE_SIGNED, TYPE_POINTER };
static const char *const type_names[] = {"unsigned", "signed", "pointer"};

struct value_row {
	uint64_t value;
	uint8_t type;
	uint32_t thread;  /* thread index + 1 with --per-thread, else 0 */
	int32_t pid, tid; /* with thread: its ids, to sort by */
	uint64_t count;
	uint64_t unclosed; /* events whose time never ended */
	struct rt_quantiles q;
};

/* A slot of the values' hash table: the key, and its row + 1 (0: empty). */
struct value_slot {
	uint64_t value;
	uint32_t thread_type; /* thread << 2 | type */
	uint32_t row;
};

/* Rows by (value, type, thread); SIZE_MAX as a row index: "other". */
struct value_table {
	struct value_row *rows; /* count of them */
	size_t count, capacity;
	struct value_row other;	  /* the events of values past BY_ARG_VALUES_MAX */
	struct value_slot *slots; /* keys beside their rows: a probe touches one line */
	size_t slot_count;
};

/* An event whose time runs: the rows it counts in (SIZE_MAX: other). */
struct open_event {
	int64_t ts;
	size_t row, thread_row;
};

/* A span of TAG as the tracker keeps it open (its user bytes). */
struct open_span {
	size_t row, thread_row;
	int counted; /* it has argument N: its time goes to its rows */
	int timed;   /* its source has clock metadata: its time is in ns */
};

/* By the thread's index in analyze/threads.h; zero until it is seen. */
struct thread_state {
	int holding; /* held: an ROLE_EVENT event waits for the next event */
	struct open_event held;
	struct rt_span_thread spans; /* open spans of TAG, paired by the span tracker */
};

struct by_arg_state {
	const struct rt_analyze_options *options;
	size_t tag_length;
	size_t source_count;
	uint8_t **roles; /* per source, per site index */
	uint32_t *site_counts;
	struct rt_analyze_threads thread_ids;
	struct thread_state *threads; /* thread_capacity of them, by thread_ids' index */
	size_t thread_capacity;
	size_t holding;			/* threads with a held event */
	struct rt_span_tracker tracker; /* TAG's spans, begun and ended */
	struct value_table values, per_thread;
	int spans;	     /* TAG has an RT_BEGIN site */
	uint64_t events;     /* TAG events with argument N */
	uint64_t no_arg;     /* TAG events whose site has no argument N */
	uint64_t orphan_end; /* TAG ends with no open span */
	uint64_t untimed;    /* events of a source without clock metadata: no time */
	uint64_t deeper;
};

static int by_arg_check(const struct rt_analyze_options *options, char *message,
			size_t message_size)
{
	if (!options->tag || !options->tag[0]) {
		snprintf(message, message_size, "by-arg needs --tag TAG: the events to group");
		return -EINVAL;
	}
	if (options->arg < 0) {
		snprintf(message, message_size,
			 "by-arg needs --arg N: the argument (from 0) to group '%s' by",
			 options->tag);
		return -EINVAL;
	}
	return 0;
}

static const struct rt_span_ops span_ops;

static int by_arg_open(void **state, const struct rt_analyze_context *context, char *message,
		       size_t message_size)
{
	(void)message;
	(void)message_size;
	struct by_arg_state *st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	*state = st;
	rt_analyze_threads_init(&st->thread_ids);
	st->options = context->options;
	st->tag_length = strlen(context->options->tag);
	st->source_count = context->set->source_count;
	st->roles = calloc(st->source_count + 1, sizeof(*st->roles));
	st->site_counts = calloc(st->source_count + 1, sizeof(*st->site_counts));
	if (!st->roles || !st->site_counts)
		return -ENOMEM;
	for (size_t i = 0; i < st->source_count; i++)
		st->site_counts[i] = context->set->sources[i].reader->sites.count;
	rt_quantiles_init(&st->values.other.q);
	rt_quantiles_init(&st->per_thread.other.q);
	rt_span_tracker_init(&st->tracker, &span_ops, st, sizeof(struct open_span));
	return 0;
}

static enum site_role role_of_site(const struct by_arg_state *st, const struct rt_site *site)
{
	if (site->tag_length != st->tag_length ||
	    memcmp(site->tag, st->options->tag, st->tag_length) != 0)
		return ROLE_NONE;
	if (site->kind == RT_SITE_BEGIN)
		return ROLE_BEGIN;
	if (site->kind == RT_SITE_END)
		return ROLE_END;
	return ROLE_EVENT;
}

/* The role of a trace event's site, found once per (source, site). */
static enum site_role role_of(struct by_arg_state *st, const struct rt_event *ev)
{
	if (!ev->site)
		return ROLE_NONE; /* its tag is not known: not TAG's, as far as anyone can tell */
	if (ev->source >= st->source_count || ev->site_id >= st->site_counts[ev->source])
		return role_of_site(st, ev->site);
	uint8_t **roles = &st->roles[ev->source];
	if (!*roles && !(*roles = calloc(st->site_counts[ev->source], 1)))
		return role_of_site(st, ev->site);
	uint8_t *r = &(*roles)[ev->site_id];
	if (!*r)
		*r = (uint8_t)role_of_site(st, ev->site);
	return (enum site_role) * r;
}

/* Every bit of k into every bit of the result: the table takes the low ones. */
static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	return k ^ (k >> 33);
}

/* ev's thread: its index + 1, or 0 out of memory. */
static size_t thread_of(struct by_arg_state *st, const struct rt_event *ev)
{
	long i = rt_analyze_thread(&st->thread_ids, ev);
	if (i < 0)
		return 0;
	if (rt_analyze_grow((void **)&st->threads, &st->thread_capacity, (size_t)i + 1,
			    sizeof(*st->threads)))
		return 0;
	return (size_t)i + 1;
}

/* ---- values ---------------------------------------------------------- */

static int value_slots_grow(struct value_table *vt)
{
	size_t count = vt->slot_count ? vt->slot_count * 2 : 64;
	struct value_slot *slots = calloc(count, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < vt->slot_count; i++) {
		const struct value_slot *from = &vt->slots[i];
		if (!from->row)
			continue;
		size_t s = mix(from->value ^ mix(from->thread_type)) & (count - 1);
		while (slots[s].row)
			s = (s + 1) & (count - 1);
		slots[s] = *from;
	}
	free(vt->slots);
	vt->slots = slots;
	vt->slot_count = count;
	return 0;
}

/* The row of (value, type, thread): its index, SIZE_MAX for other. */
static size_t value_row(struct value_table *vt, uint64_t value, uint8_t type, uint32_t thread)
{
	if ((vt->count + 1) * 2 > vt->slot_count && vt->count < BY_ARG_VALUES_MAX &&
	    value_slots_grow(vt))
		return SIZE_MAX;
	if (!vt->slot_count)
		return SIZE_MAX;
	uint32_t thread_type = thread << 2 | type;
	size_t mask = vt->slot_count - 1;
	size_t s = mix(value ^ mix(thread_type)) & mask;
	for (; vt->slots[s].row; s = (s + 1) & mask)
		if (vt->slots[s].value == value && vt->slots[s].thread_type == thread_type)
			return vt->slots[s].row - 1;
	if (vt->count == BY_ARG_VALUES_MAX)
		return SIZE_MAX;
	if (vt->count == vt->capacity) {
		size_t capacity = vt->capacity ? vt->capacity * 2 : 64;
		struct value_row *grown = realloc(vt->rows, capacity * sizeof(*grown));
		if (!grown)
			return SIZE_MAX;
		vt->rows = grown;
		vt->capacity = capacity;
	}
	struct value_row *r = &vt->rows[vt->count];
	memset(r, 0, sizeof(*r));
	r->value = value;
	r->type = type;
	r->thread = thread;
	rt_quantiles_init(&r->q);
	vt->slots[s] = (struct value_slot){value, thread_type, (uint32_t)++vt->count};
	return vt->count - 1;
}

static struct value_row *row_at(struct value_table *vt, size_t row)
{
	return row == SIZE_MAX ? &vt->other : &vt->rows[row];
}

/* ---- events ---------------------------------------------------------- */

static int charge(struct by_arg_state *st, const struct open_event *o, int64_t end)
{
	uint64_t d = end > o->ts ? (uint64_t)(end - o->ts) : 0;
	if (rt_quantiles_add(&row_at(&st->values, o->row)->q, d))
		return -ENOMEM;
	if (st->options->per_thread &&
	    rt_quantiles_add(&row_at(&st->per_thread, o->thread_row)->q, d))
		return -ENOMEM;
	return 0;
}

static void unclosed(struct by_arg_state *st, const struct open_event *o)
{
	row_at(&st->values, o->row)->unclosed++;
	if (st->options->per_thread)
		row_at(&st->per_thread, o->thread_row)->unclosed++;
}

/* The index + 1 of the thread the tracker calls back about (a pointer into threads). */
static size_t thread_index(const struct by_arg_state *st, const void *thread)
{
	return (size_t)((const struct thread_state *)thread - st->threads) + 1;
}

/*
 * A TAG event, begin or not: counted in its rows when it has argument N
 * (1), else only said (0).  o: its rows and time.
 */
static int count_value(struct by_arg_state *st, size_t thread, const struct rt_event *ev,
		       struct open_event *o)
{
	unsigned n = (unsigned)st->options->arg;
	if (n >= ev->nargs || n >= ev->site->nargs) {
		st->no_arg++;
		return 0;
	}
	uint8_t type = RT_ARG_CLASS(ev->site->arg_types[n]) == RT_ARG_POINTER ? TYPE_POINTER
		       : ev->signed_args & (1u << n)			      ? TYPE_SIGNED
									      : TYPE_UNSIGNED;
	*o = (struct open_event){.ts = ev->ts_ns};
	o->row = value_row(&st->values, ev->args[n], type, 0);
	row_at(&st->values, o->row)->count++;
	if (st->options->per_thread) {
		o->thread_row = value_row(&st->per_thread, ev->args[n], type, (uint32_t)thread);
		struct value_row *r = row_at(&st->per_thread, o->thread_row);
		r->count++;
		r->pid = st->thread_ids.items[thread - 1].pid;
		r->tid = st->thread_ids.items[thread - 1].tid;
	}
	st->events++;
	if (ev->raw_time) {
		st->untimed++;
		unclosed(st, o);
	}
	return 1;
}

/* A begin of TAG the tracker opened: its rows kept in the span, with or without argument N. */
static int span_begin(void *ctx, void *thread, struct rt_span *span, const struct rt_span_event *ev)
{
	struct by_arg_state *st = ctx;
	const struct rt_event *e = ev->origin;
	struct open_event o = {0}; /* a value not counted leaves it as it is */
	struct open_span *open = rt_span_user(span);
	open->counted = count_value(st, thread_index(st, thread), e, &o);
	open->timed = !e->raw_time;
	open->row = o.row;
	open->thread_row = o.thread_row;
	return 0;
}

static int span_end(void *ctx, void *thread, struct rt_span *span, int64_t end_ts,
		    enum rt_span_end how, const struct rt_span_event *own_end)
{
	(void)thread;
	(void)own_end;
	struct by_arg_state *st = ctx;
	const struct open_span *open = rt_span_user(span);
	if (!open->counted || !open->timed)
		return 0; /* not grouped, or said untimed (and unclosed) when it began */
	struct open_event o = {
	    .ts = span->begin_ts, .row = open->row, .thread_row = open->thread_row};
	if (how != RT_SPAN_RETURNED) {
		unclosed(st, &o);
		return 0;
	}
	return charge(st, &o, end_ts);
}

static int span_orphan(void *ctx, void *thread, const struct rt_span_event *ev)
{
	(void)thread;
	(void)ev;
	((struct by_arg_state *)ctx)->orphan_end++;
	return 0;
}

/* A begin past RT_SPAN_MARKED_MAX open: counted, never timed. */
static int span_too_deep(void *ctx, void *thread, const struct rt_span_event *ev)
{
	struct by_arg_state *st = ctx;
	const struct rt_event *e = ev->origin;
	struct open_event o;
	if (count_value(st, thread_index(st, thread), e, &o) && !e->raw_time) {
		st->deeper++;
		unclosed(st, &o);
	}
	return 0;
}

static const struct rt_span_ops span_ops = {
    .begin = span_begin, .end = span_end, .orphan = span_orphan, .too_deep = span_too_deep};

static int by_arg_event(void *state, const struct rt_event *ev)
{
	struct by_arg_state *st = state;
	if (ev->kind == RT_EVENT_LOST)
		return 0; /* a loss ends nothing: the thread did not run it */
	enum site_role role = ev->kind == RT_EVENT_TRACE ? role_of(st, ev) : ROLE_NONE;
	if (role == ROLE_NONE && !st->holding)
		return 0;
	size_t thread = thread_of(st, ev);
	if (!thread)
		return -ENOMEM;
	struct thread_state *t = &st->threads[thread - 1];
	/* the thread did something: what it held ends here */
	if (t->holding) {
		t->holding = 0;
		st->holding--;
		if (ev->raw_time) {
			unclosed(st, &t->held);
		} else {
			int rc = charge(st, &t->held, ev->ts_ns);
			if (rc)
				return rc;
		}
	}
	if (role == ROLE_BEGIN || role == ROLE_END) {
		if (role == ROLE_BEGIN)
			st->spans = 1;
		struct rt_span_event span = {.input =
						 role == ROLE_BEGIN ? RT_SPAN_BEGIN : RT_SPAN_END,
					     .ts = ev->ts_ns,
					     .site = ev->site,
					     .origin = ev};
		return rt_span_feed(&st->tracker, &t->spans, t, &span);
	}
	if (role == ROLE_EVENT) {
		struct open_event o;
		if (count_value(st, thread, ev, &o) && !ev->raw_time) {
			t->held = o;
			t->holding = 1;
			st->holding++;
		}
	}
	return 0;
}

/* ---- report ---------------------------------------------------------- */

struct totals {
	uint64_t count, time;
};

static int by_count(const void *a, const void *b)
{
	const struct value_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->type != y->type)
		return x->type < y->type ? -1 : 1;
	if (x->value != y->value) {
		if (x->type == TYPE_SIGNED)
			return (int64_t)x->value < (int64_t)y->value ? -1 : 1;
		return x->value < y->value ? -1 : 1;
	}
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static struct totals table_totals(const struct value_table *vt)
{
	struct totals t = {vt->other.count, vt->other.q.total};
	for (size_t i = 0; i < vt->count; i++) {
		t.count += vt->rows[i].count;
		t.time += vt->rows[i].q.total;
	}
	return t;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0;
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

static void value_text(const struct value_row *r, char *buf, size_t size)
{
	if (r->type == TYPE_SIGNED)
		snprintf(buf, size, "%" PRId64, (int64_t)r->value);
	else if (r->type == TYPE_POINTER)
		snprintf(buf, size, "0x%" PRIx64, r->value);
	else
		snprintf(buf, size, "%" PRIu64, r->value);
}

static void thread_text(const struct by_arg_state *st, uint32_t thread, char *buf, size_t size)
{
	const struct rt_analyze_thread *t = &st->thread_ids.items[thread - 1];
	int n = snprintf(buf, size, "pid %d tid %d", (int)t->pid, (int)t->tid);
	if (t->name[0] && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, " (%s)", rt_escaped(t->name));
}

/* ---- the rows: one table for the text, JSON and the page (analyze/table.h) ---- */

#define BAR_WIDTH 40u

enum {
	C_ROW,
	C_NAME,
	C_VALUE,
	C_TYPE,
	C_VALUES,
	C_PID,
	C_TID,
	C_THREAD,
	C_COUNT,
	C_COUNT_PERCENT,
	C_COUNT_SHARE,
	C_TIME,
	C_TIME_PAGE,
	C_TIME_NS,
	C_TIME_PERCENT,
	C_TIME_SHARE,
	C_TIMED,
	C_UNCLOSED,
	C_P50,
	C_P50_PAGE,
	C_P50_NS,
	C_P99,
	C_P99_PAGE,
	C_P99_NS,
	C_EXACT,
	C_BAR,
	COLUMNS
};

/* the columns' flags, short */
enum { T = RT_COLUMN_TEXT, J = RT_COLUMN_JSON, H = RT_COLUMN_HTML, R = RT_COLUMN_RIGHT };
static const struct rt_column value_columns[COLUMNS] = {
    [C_ROW] = {.flags = J, .key = "row"},
    [C_NAME] = {.flags = T | H, .header = "value", .width = 24},
    [C_VALUE] = {.flags = J, .key = "value"},
    [C_TYPE] = {.flags = J, .key = "type"},
    [C_VALUES] = {.flags = J, .key = "values"},
    [C_PID] = {.flags = J, .key = "pid"},
    [C_TID] = {.flags = J, .key = "tid"},
    [C_THREAD] = {.flags = J, .key = "thread"},
    [C_COUNT] = {.flags = T | J | H | R, .header = "count", .key = "count", .width = 10, .gap = 1},
    [C_COUNT_PERCENT] = {.flags = T | H | R,
			 .header = "count%",
			 .html_header = "count share",
			 .width = 7,
			 .gap = 1},
    [C_COUNT_SHARE] = {.flags = J, .key = "count_share"},
    [C_TIME] = {.flags = T | R, .header = "time", .width = 11, .gap = 1},
    [C_TIME_PAGE] = {.flags = H, .header = "time"},
    [C_TIME_NS] = {.flags = J, .key = "time_ns"},
    [C_TIME_PERCENT] =
	{.flags = T | H | R, .header = "time%", .html_header = "time share", .width = 7, .gap = 1},
    [C_TIME_SHARE] = {.flags = J, .key = "time_share"},
    [C_TIMED] = {.flags = J, .key = "timed"},
    [C_UNCLOSED] = {.flags = J, .key = "unclosed"},
    [C_P50] = {.flags = T | R, .header = "p50", .width = 12, .gap = 1},
    [C_P50_PAGE] = {.flags = H, .header = "p50"},
    [C_P50_NS] = {.flags = J, .key = "p50_ns"},
    [C_P99] = {.flags = T | R, .header = "p99", .width = 12, .gap = 1},
    [C_P99_PAGE] = {.flags = H, .header = "p99"},
    [C_P99_NS] = {.flags = J, .key = "p99_ns"},
    [C_EXACT] = {.flags = J, .key = "exact"},
    [C_BAR] = {.flags = H, .header = "time share"},
};

/* The texts of a row's cells. */
struct row_texts {
	char name[128];
	char count_percent[16], time_percent[16];
	char time[RT_UNITS_MAX], p50[RT_UNITS_MAX + 1], p99[RT_UNITS_MAX + 1];
	char time_page[RT_UNITS_MAX], p50_page[RT_UNITS_MAX], p99_page[RT_UNITS_MAX];
	char bar[3 * BAR_WIDTH + 1];
};

/*
 * The cells of row r (its name already in x->name) of a table whose totals
 * are tot.  kind: its JSON "row"; values: how many values a rest row sums
 * (0: not said).
 */
static void row_cells(const struct by_arg_state *st, const char *kind, struct value_row *r,
		      struct totals tot, uint64_t values, struct row_texts *x, struct rt_cell *c)
{
	memset(c, 0, COLUMNS * sizeof(*c));
	c[C_ROW] = rt_cell_string(kind, strlen(kind), NULL);
	c[C_NAME] = rt_cell_text(x->name);
	if (strcmp(kind, "value") == 0 || strcmp(kind, "thread_value") == 0) {
		c[C_VALUE] = r->type == TYPE_SIGNED ? rt_cell_i64((int64_t)r->value, NULL)
						    : rt_cell_u64(r->value, NULL);
		const char *type = type_names[r->type];
		c[C_TYPE] = rt_cell_string(type, strlen(type), NULL);
	} else if (values) {
		c[C_VALUES] = rt_cell_u64(values, NULL);
	}
	if (r->thread) {
		const struct rt_analyze_thread *t = &st->thread_ids.items[r->thread - 1];
		c[C_PID] = rt_cell_i64(t->pid, NULL);
		c[C_TID] = rt_cell_i64(t->tid, NULL);
		c[C_THREAD] = rt_cell_string(t->name, strlen(t->name), NULL);
	}
	uint64_t p50 = rt_quantiles_get(&r->q, 0.5), p99 = rt_quantiles_get(&r->q, 0.99);
	double count_share = share(r->count, tot.count), time_share = share(r->q.total, tot.time);
	const char *approx = rt_quantiles_exact(&r->q) ? " " : "~";
	char column[RT_UNITS_MAX];
	c[C_COUNT] = rt_cell_u64(r->count, NULL);
	snprintf(x->count_percent, sizeof(x->count_percent), "%.1f%%", 100 * count_share);
	c[C_COUNT_PERCENT] = rt_cell_text(x->count_percent);
	c[C_COUNT_SHARE] = rt_cell_double(count_share, NULL);
	rt_units_duration_column(x->time, sizeof(x->time), (int64_t)r->q.total);
	c[C_TIME] = rt_cell_text(x->time);
	c[C_TIME_PAGE] =
	    rt_cell_text(duration_text(x->time_page, sizeof(x->time_page), (int64_t)r->q.total));
	c[C_TIME_NS] = rt_cell_u64(r->q.total, NULL);
	snprintf(x->time_percent, sizeof(x->time_percent), "%.1f%%", 100 * time_share);
	c[C_TIME_PERCENT] = rt_cell_text(x->time_percent);
	c[C_TIME_SHARE] = rt_cell_double(time_share, NULL);
	c[C_TIMED] = rt_cell_u64(r->q.count, NULL);
	c[C_UNCLOSED] = rt_cell_u64(r->unclosed, NULL);
	rt_units_duration_column(column, sizeof(column), (int64_t)p50);
	snprintf(x->p50, sizeof(x->p50), "%s%s", approx, column);
	c[C_P50] = rt_cell_text(x->p50);
	c[C_P50_PAGE] = rt_cell_text(duration_text(x->p50_page, sizeof(x->p50_page), (int64_t)p50));
	c[C_P50_NS] = rt_cell_u64(p50, NULL);
	rt_units_duration_column(column, sizeof(column), (int64_t)p99);
	snprintf(x->p99, sizeof(x->p99), "%s%s", approx, column);
	c[C_P99] = rt_cell_text(x->p99);
	c[C_P99_PAGE] = rt_cell_text(duration_text(x->p99_page, sizeof(x->p99_page), (int64_t)p99));
	c[C_P99_NS] = rt_cell_u64(p99, NULL);
	c[C_EXACT] = rt_cell_bool(rt_quantiles_exact(&r->q));
	unsigned blocks = (unsigned)(time_share * BAR_WIDTH + 0.5);
	char *p = x->bar;
	for (unsigned b = 0; b < blocks; b++, p += 3)
		memcpy(p, "\xe2\x96\x88", 3); /* a full block */
	*p = 0;
	c[C_BAR] = rt_cell_text(x->bar);
}

/* One row, as the text or JSON. */
static void put_row(const struct by_arg_state *st, struct rt_out *out, int json,
		    const struct rt_table *table, const char *kind, struct value_row *r,
		    struct totals tot, uint64_t values, struct row_texts *x)
{
	struct rt_cell cells[COLUMNS];
	row_cells(st, kind, r, tot, values, x, cells);
	if (json) {
		rt_table_row_json(out, table, cells);
		return;
	}
	char tail[48] = "";
	if (r->unclosed)
		snprintf(tail, sizeof(tail), "  (%" PRIu64 " unclosed)", r->unclosed);
	rt_table_row_text(out, table, cells, tail);
}

/* The rest after the top rows, summed into one row (quantiles merged). */
static int rest_row(struct value_table *vt, size_t from, struct value_row *rest)
{
	memset(rest, 0, sizeof(*rest));
	rt_quantiles_init(&rest->q);
	for (size_t i = from; i < vt->count; i++) {
		rest->count += vt->rows[i].count;
		rest->unclosed += vt->rows[i].unclosed;
		if (rt_quantiles_merge(&rest->q, &vt->rows[i].q))
			return -ENOMEM;
	}
	return 0;
}

/* The rows of vt: its top values, the rest summed, the other values; heading names the text's first
 * column. */
static int report_rows(struct by_arg_state *st, struct rt_out *out, int json,
		       struct value_table *vt, const char *heading)
{
	struct totals tot = table_totals(vt);
	size_t top = st->options->top ? st->options->top : BY_ARG_TOP_DEFAULT;
	size_t shown = vt->count < top ? vt->count : top;
	int threads = vt != &st->values;
	struct rt_column columns[COLUMNS];
	memcpy(columns, value_columns, sizeof(columns));
	columns[C_NAME].header = heading;
	struct rt_table table = {.columns = columns, .count = COLUMNS, .indent = "  "};
	struct row_texts x;
	if (!json) {
		rt_out_char(out, '\n');
		rt_table_header_text(out, &table);
	}
	for (size_t i = 0; i < shown; i++) {
		struct value_row *r = &vt->rows[i];
		value_text(r, x.name, sizeof(x.name));
		if (r->thread) {
			size_t n = strlen(x.name);
			snprintf(x.name + n, sizeof(x.name) - n, " ");
			thread_text(st, r->thread, x.name + n + 1, sizeof(x.name) - n - 1);
		}
		put_row(st, out, json, &table, threads ? "thread_value" : "value", r, tot, 1, &x);
	}
	if (shown < vt->count) {
		struct value_row rest;
		if (rest_row(vt, shown, &rest))
			return -ENOMEM;
		snprintf(x.name, sizeof(x.name), "(%zu more value%s)", vt->count - shown,
			 vt->count - shown > 1 ? "s" : "");
		put_row(st, out, json, &table, threads ? "thread_rest" : "rest", &rest, tot,
			vt->count - shown, &x);
		rt_quantiles_free(&rest.q);
	}
	if (vt->other.count) {
		snprintf(x.name, sizeof(x.name), "(other values)");
		put_row(st, out, json, &table, threads ? "thread_other" : "other", &vt->other, tot,
			0, &x);
	}
	return 0;
}

static const char *time_rule(const struct by_arg_state *st)
{
	return st->spans ? "span" : "hold";
}

static void report_head(struct by_arg_state *st, struct rt_out *out, int json)
{
	struct totals tot = table_totals(&st->values);
	if (json) {
		rt_out_str(out, "{\"row\":\"summary\",\"tag\":");
		rt_out_json_string(out, st->options->tag, st->tag_length);
		rt_out_printf(out,
			      ",\"arg\":%d,\"time\":\"%s\",\"events\":%" PRIu64
			      ",\"time_ns\":%" PRIu64 ",\"values\":%zu,\"other_events\":%" PRIu64
			      ",\"no_arg\":%" PRIu64 ",\"orphan_ends\":%" PRIu64
			      ",\"too_deep\":%" PRIu64 ",\"untimed\":%" PRIu64 "}\n",
			      st->options->arg, time_rule(st), st->events, tot.time,
			      st->values.count, st->values.other.count, st->no_arg, st->orphan_end,
			      st->deeper, st->untimed);
		return;
	}
	char time[RT_UNITS_MAX];
	duration_text(time, sizeof(time), (int64_t)tot.time);
	rt_out_printf(out, "by-arg: '%s' by argument %d: %" PRIu64 " events, %zu values, %s (%s)\n",
		      rt_escaped(st->options->tag), st->options->arg, st->events, st->values.count,
		      time,
		      st->spans ? "each span's time to its end"
				: "each event's time until its thread's next event");
	if (st->values.other.count)
		rt_out_printf(out,
			      "  note: values past the first %u are counted together as other "
			      "(%" PRIu64 " events)\n",
			      BY_ARG_VALUES_MAX, st->values.other.count);
	if (st->no_arg)
		rt_out_printf(out,
			      "  note: %" PRIu64 " events of sites without argument %d: not "
			      "counted\n",
			      st->no_arg, st->options->arg);
	if (st->orphan_end)
		rt_out_printf(out, "  note: %" PRIu64 " ends without an open '%s'\n",
			      st->orphan_end, rt_escaped(st->options->tag));
	if (st->deeper)
		rt_out_printf(out, "  note: %" PRIu64 " spans nested past %u deep: never timed\n",
			      st->deeper, RT_SPAN_MARKED_MAX);
	if (st->untimed)
		rt_out_printf(out, "  note: %" PRIu64 " events without clock metadata: not timed\n",
			      st->untimed);
}

/* ---- the page -------------------------------------------------------- */

static int report_html(struct by_arg_state *st, struct rt_html *h)
{
	char text[512];
	snprintf(text, sizeof(text),
		 "'%s' grouped by argument %d: count and time per value (%s); the bar is the "
		 "value's share of the time.",
		 rt_escaped(st->options->tag), st->options->arg,
		 st->spans ? "each span's time to its end"
			   : "each event's time until its thread's next event");
	rt_html_section(h, "Events by argument", text);
	struct value_table *vt = &st->values;
	struct totals tot = table_totals(vt);
	size_t top = st->options->top ? st->options->top : BY_ARG_TOP_DEFAULT;
	size_t shown = vt->count < top ? vt->count : top;
	size_t rows = shown + (vt->other.count ? 1 : 0);
	struct row_texts *x = calloc(rows + 1, sizeof(*x));
	struct rt_cell *cells = calloc((rows + 1) * COLUMNS, sizeof(*cells));
	if (!x || !cells) {
		free(x);
		free(cells);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rows; i++) {
		struct value_row *r = i < shown ? &vt->rows[i] : &vt->other;
		if (i < shown)
			value_text(r, x[i].name, sizeof(x[i].name));
		else
			snprintf(x[i].name, sizeof(x[i].name), "(other values)");
		row_cells(st, i < shown ? "value" : "other", r, tot, 0, &x[i], cells + i * COLUMNS);
	}
	struct rt_table table = {.columns = value_columns, .count = COLUMNS};
	int rc = rt_table_html(h, &table, cells, rows);
	free(x);
	free(cells);
	return rc;
}

static int by_arg_report(void *state, const struct rt_analyze_report *report)
{
	struct by_arg_state *st = state;
	/* what is still open never ended: no time */
	for (size_t i = 0; i < st->thread_capacity; i++) {
		struct thread_state *t = &st->threads[i];
		if (t->holding)
			unclosed(st, &t->held);
		t->holding = 0;
		int rc = rt_span_finish(&st->tracker, &t->spans, t);
		if (rc)
			return rc;
	}
	st->holding = 0;
	/* the rows move: what still pointed at them is gone above */
	if (st->values.count > 1)
		qsort(st->values.rows, st->values.count, sizeof(*st->values.rows), by_count);
	if (st->per_thread.count > 1)
		qsort(st->per_thread.rows, st->per_thread.count, sizeof(*st->per_thread.rows),
		      by_count);
	report_head(st, report->out, report->json);
	int rc = report_rows(st, report->out, report->json, &st->values, "value");
	if (!rc && st->options->per_thread)
		rc =
		    report_rows(st, report->out, report->json, &st->per_thread, "value and thread");
	if (!rc && report->html)
		rc = report_html(st, report->html);
	return rc;
}

static void table_free(struct value_table *vt)
{
	for (size_t i = 0; i < vt->count; i++)
		rt_quantiles_free(&vt->rows[i].q);
	rt_quantiles_free(&vt->other.q);
	free(vt->rows);
	free(vt->slots);
}

static void by_arg_free(void *state)
{
	struct by_arg_state *st = state;
	if (!st)
		return;
	table_free(&st->values);
	table_free(&st->per_thread);
	for (size_t i = 0; i < st->thread_capacity; i++)
		rt_span_thread_free(&st->threads[i].spans);
	free(st->threads);
	rt_analyze_threads_free(&st->thread_ids);
	for (size_t i = 0; i < st->source_count && st->roles; i++)
		free(st->roles[i]);
	free(st->roles);
	free(st->site_counts);
	free(st);
}

const struct rt_analyzer rt_analyzer_by_arg = {
    .name = "by-arg",
    .summary = "an event's count and time shares by an argument's value",
    .check = by_arg_check,
    .open = by_arg_open,
    .event = by_arg_event,
    .report = by_arg_report,
    .free = by_arg_free,
};
