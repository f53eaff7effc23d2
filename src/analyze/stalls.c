/*
 * stalls.c - `ringtrace analyze stalls`: per thread, the longest intervals
 * without any event of that thread, with the events on either side: where a
 * thread hung or starved.
 *
 * Each thread keeps a min-heap of its --top longest gaps (at least --min
 * long).  A gap enters the heap only when it beats the heap's shortest, so
 * after the first few events a gap costs a subtraction and a compare; the
 * bordering events are described (strings copied) only then.  The thread's
 * last event is kept as stable references (its site, its function's place,
 * in reader and name-table memory that outlives the walk), and only a log
 * message, rendered into the builder's buffer, is copied as it goes by.
 *
 * Losses do not end a gap: they are noted in the thread's open gap, since
 * a gap with lost events in it may not be a stall at all.  The interval from
 * a thread's last event to the end of the set is reported apart: the thread
 * went silent (blocked, or dead) and nothing says when it would have spoken.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/html.h"
#include "analyze/table.h"
#include "common/escape.h"
#include "decode/io_event.h"
#include "decode/sites.h"
#include "present/units.h"

#define STALLS_TOP_DEFAULT 5
#define WHAT_MAX 64	   /* an event's description, with the NUL */
#define THREAD_NAME_MAX 32 /* a thread's name, with the NUL */

/* One bordering event, described for the rows. */
struct stall_event {
	int64_t ts_ns;
	enum rt_event_kind kind;
	char what[WHAT_MAX];
};

struct stall {
	int64_t gap_ns;
	uint64_t lost_inside;
	int damaged_inside;    /* a damaged loss of the thread or of its process lies inside */
	uint32_t thread;       /* index in the analyzer's threads, for the overall rows */
	unsigned overall_rank; /* set by the report: 1.. among all threads' top, or 0 */
	struct stall_event before, after;
};

/* The thread's last event, by references that hold until the report. */
struct last_event {
	int64_t ts_ns;
	enum rt_event_kind kind;
	uint32_t site_id;
	const struct rt_site *site;	/* TRACE: in the reader's site table */
	struct rt_function_place place; /* ENTER, EXIT: in the builder's name tables */
	uint64_t addr;			/* ENTER, EXIT */
	unsigned io_op, io_ok;		/* IO */
	int32_t io_fd;			/* IO */
	char text[WHAT_MAX];		/* LOG: the message's start, copied */
};

struct thread {
	uint32_t source;
	int32_t pid, tid;
	int has_last, raw_time;
	struct last_event last;
	uint64_t lost_pending; /* lost since the last event: inside the open gap */
	int damaged_pending;
	uint64_t gaps;	    /* gaps at least --min long, all of them */
	struct stall *heap; /* the longest; heap[0] the shortest of them */
	unsigned heap_count, heap_capacity;
	const char *name_seen; /* the name's bytes last copied from, to notice a new name */
	size_t name_seen_length;
	char name[THREAD_NAME_MAX];
};

struct stalls {
	unsigned top;
	int64_t min_gap_ns; /* at least 1: a stall has a length */
	struct thread *threads;
	size_t thread_count, thread_capacity;
	uint32_t *slots; /* open addressing by (source, tid): index + 1, 0 empty */
	size_t slot_mask;
	uint32_t cached;	   /* the thread of the previous event, + 1 */
	int64_t first_ns, last_ns; /* the set's times (sources with a clock) */
	int has_time;
	int64_t *raw_last; /* per source: the last raw counter of a source without a clock */
	size_t raw_count;
};

static size_t slot_of(const struct stalls *s, uint32_t source, int32_t tid)
{
	uint64_t k = ((uint64_t)source << 32 | (uint32_t)tid) * 0x9e3779b97f4a7c15ull;
	return (size_t)(k >> 32) & s->slot_mask;
}

static int grow_slots(struct stalls *s)
{
	size_t count = s->slots ? (s->slot_mask + 1) * 2 : 64;
	uint32_t *slots = calloc(count, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	free(s->slots);
	s->slots = slots;
	s->slot_mask = count - 1;
	for (size_t i = 0; i < s->thread_count; i++) {
		size_t k = slot_of(s, s->threads[i].source, s->threads[i].tid);
		while (s->slots[k])
			k = (k + 1) & s->slot_mask;
		s->slots[k] = (uint32_t)i + 1;
	}
	return 0;
}

/* The thread's state, created on its first item; NULL when out of memory. */
static struct thread *thread_of(struct stalls *s, const struct rt_event *ev)
{
	if (s->cached) {
		struct thread *t = &s->threads[s->cached - 1];
		if (t->tid == ev->tid && t->source == ev->source)
			return t;
	}
	size_t k = slot_of(s, ev->source, ev->tid);
	for (; s->slots[k]; k = (k + 1) & s->slot_mask) {
		struct thread *t = &s->threads[s->slots[k] - 1];
		if (t->tid == ev->tid && t->source == ev->source) {
			s->cached = s->slots[k];
			return t;
		}
	}
	if (s->thread_count == s->thread_capacity) {
		size_t capacity = s->thread_capacity ? s->thread_capacity * 2 : 16;
		struct thread *more = realloc(s->threads, capacity * sizeof(*more));
		if (!more)
			return NULL;
		s->threads = more;
		s->thread_capacity = capacity;
	}
	/* at most half full, so that probes stay short */
	if ((s->thread_count + 1) * 2 > s->slot_mask + 1) {
		if (grow_slots(s))
			return NULL;
		k = slot_of(s, ev->source, ev->tid);
		while (s->slots[k])
			k = (k + 1) & s->slot_mask;
	}
	struct thread *t = &s->threads[s->thread_count];
	memset(t, 0, sizeof(*t));
	t->source = ev->source;
	t->pid = ev->pid;
	t->tid = ev->tid;
	s->slots[k] = (uint32_t)++s->thread_count;
	s->cached = (uint32_t)s->thread_count;
	return t;
}

/* At most size - 1 bytes of text, as they are (escaped when shown), cut on a UTF-8 boundary. */
static void copy_text(char *out, size_t size, const char *text, size_t length)
{
	size_t n = length < size - 1 ? length : size - 1;
	if (n < length)
		while (n > 0 && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;
	memcpy(out, text, n);
	out[n] = 0;
}

/* Keep what describes ev past the builder's next event. */
static void remember(struct last_event *l, const struct rt_event *ev)
{
	l->ts_ns = ev->ts_ns;
	l->kind = ev->kind;
	switch (ev->kind) {
	case RT_EVENT_TRACE:
		l->site = ev->site;
		l->site_id = ev->site_id;
		break;
	case RT_EVENT_LOG:
		l->site_id = ev->site_id;
		if (ev->msg.s)
			copy_text(l->text, sizeof(l->text), ev->msg.s, ev->msg.length);
		else
			snprintf(l->text, sizeof(l->text), "(site %u lost)", (unsigned)ev->site_id);
		break;
	case RT_EVENT_ENTER:
	case RT_EVENT_EXIT:
		l->place = ev->place;
		l->addr = ev->addr;
		break;
	case RT_EVENT_IO:
		l->io_ok = (unsigned)ev->io.ok;
		l->io_op = ev->io.ev.op;
		l->io_fd = ev->io.ev.fd;
		break;
	case RT_EVENT_LOST:
		break;
	}
}

/* The words the rows show for an event: its tag, message, function or call. */
static void describe(const struct last_event *l, struct stall_event *out)
{
	out->ts_ns = l->ts_ns;
	out->kind = l->kind;
	switch (l->kind) {
	case RT_EVENT_TRACE:
		if (l->site && l->site->tag &&
		    (l->site->kind == RT_SITE_BEGIN || l->site->kind == RT_SITE_END)) {
			/* a span's end, as dump shows it: "begin request" */
			char text[WHAT_MAX + 8];
			int n = snprintf(
			    text, sizeof(text), "%s %.*s",
			    l->site->kind == RT_SITE_BEGIN ? "begin" : "end",
			    (int)(l->site->tag_length < WHAT_MAX ? l->site->tag_length : WHAT_MAX),
			    l->site->tag);
			copy_text(out->what, sizeof(out->what), text,
				  n < (int)sizeof(text) ? (size_t)n : sizeof(text) - 1);
		} else if (l->site && l->site->tag)
			copy_text(out->what, sizeof(out->what), l->site->tag, l->site->tag_length);
		else
			snprintf(out->what, sizeof(out->what), "(site %u lost)",
				 (unsigned)l->site_id);
		break;
	case RT_EVENT_LOG:
		memcpy(out->what, l->text, sizeof(out->what));
		break;
	case RT_EVENT_ENTER:
	case RT_EVENT_EXIT:
		if (l->place.func) {
			copy_text(out->what, sizeof(out->what), l->place.func,
				  strlen(l->place.func));
		} else {
			char text[256];
			size_t n = rt_function_place_text(&l->place, l->addr, text, sizeof(text));
			copy_text(out->what, sizeof(out->what), text,
				  n < sizeof(text) ? n : sizeof(text) - 1);
		}
		break;
	case RT_EVENT_IO: {
		const char *op = l->io_ok ? rt_io_op_json_name(l->io_op) : NULL;
		if (op)
			snprintf(out->what, sizeof(out->what), "%s fd %d", op, (int)l->io_fd);
		else
			snprintf(out->what, sizeof(out->what), "(malformed call)");
		break;
	}
	case RT_EVENT_LOST:
		out->what[0] = 0;
		break;
	}
}

/* a ranks below b: shorter, or as long and later (the earlier is kept). */
static int ranks_below(int64_t a_gap, int64_t a_start, int64_t b_gap, int64_t b_start)
{
	return a_gap < b_gap || (a_gap == b_gap && a_start > b_start);
}

static int heap_below(const struct stall *a, const struct stall *b)
{
	return ranks_below(a->gap_ns, a->before.ts_ns, b->gap_ns, b->before.ts_ns);
}

static void sift_down(struct stall *h, unsigned count, unsigned i)
{
	for (;;) {
		unsigned low = i, l = 2 * i + 1, r = l + 1;
		if (l < count && heap_below(&h[l], &h[low]))
			low = l;
		if (r < count && heap_below(&h[r], &h[low]))
			low = r;
		if (low == i)
			return;
		struct stall x = h[i];
		h[i] = h[low];
		h[low] = x;
		i = low;
	}
}

/* A gap of t ending at ev, among the thread's longest: into the heap. */
static int offer(struct stalls *s, struct thread *t, int64_t gap, const struct rt_event *ev)
{
	struct stall *x;
	if (t->heap_count == s->top) {
		x = &t->heap[0];
	} else {
		if (t->heap_count == t->heap_capacity) {
			unsigned capacity = t->heap_capacity ? t->heap_capacity * 2 : 4;
			if (capacity > s->top)
				capacity = s->top;
			struct stall *more = realloc(t->heap, capacity * sizeof(*more));
			if (!more)
				return -ENOMEM;
			t->heap = more;
			t->heap_capacity = capacity;
		}
		x = &t->heap[t->heap_count++];
	}
	x->gap_ns = gap;
	x->lost_inside = t->lost_pending;
	x->damaged_inside = t->damaged_pending;
	x->thread = (uint32_t)(t - s->threads);
	describe(&t->last, &x->before);
	struct last_event after;
	remember(&after, ev);
	describe(&after, &x->after);
	if (x == &t->heap[0] && t->heap_count == s->top) {
		sift_down(t->heap, t->heap_count, 0);
	} else {
		/* sift up the new last entry */
		unsigned i = t->heap_count - 1;
		while (i > 0 && heap_below(&t->heap[i], &t->heap[(i - 1) / 2])) {
			struct stall y = t->heap[i];
			t->heap[i] = t->heap[(i - 1) / 2];
			t->heap[(i - 1) / 2] = y;
			i = (i - 1) / 2;
		}
	}
	return 0;
}

static void note_raw_time(struct stalls *s, const struct rt_event *ev)
{
	if (ev->source >= s->raw_count) {
		size_t count = (size_t)ev->source + 1;
		int64_t *more = realloc(s->raw_last, count * sizeof(*more));
		if (!more)
			return; /* the thread's own last event stands in */
		for (size_t i = s->raw_count; i < count; i++)
			more[i] = INT64_MIN;
		s->raw_last = more;
		s->raw_count = count;
	}
	if (ev->ts_ns > s->raw_last[ev->source])
		s->raw_last[ev->source] = ev->ts_ns;
}

/*
 * A loss of no thread: its events may have been any thread's of the
 * process (of any process when it names none: a damaged region of a trace
 * file belongs to the file, not to the process), so it is noted in the
 * open gap of each.  A damaged region's count is not added (its threads'
 * own losses, in_region, count their share) but marks the gaps it may lie
 * in.
 */
static void process_loss(struct stalls *s, const struct rt_event *ev)
{
	int counted = !ev->in_region && !ev->damage;
	int damaged = ev->reason && strcmp(ev->reason, "damaged") == 0;
	for (size_t i = 0; i < s->thread_count; i++) {
		struct thread *t = &s->threads[i];
		if ((ev->pid && t->pid != ev->pid) || !t->has_last)
			continue;
		if (counted)
			t->lost_pending += ev->count;
		t->damaged_pending |= damaged;
	}
}

static int stalls_event(void *state, const struct rt_event *ev)
{
	struct stalls *s = state;
	if (ev->raw_time) {
		note_raw_time(s, ev);
	} else {
		if (!s->has_time || ev->ts_ns < s->first_ns)
			s->first_ns = ev->ts_ns;
		if (!s->has_time || ev->ts_ns > s->last_ns)
			s->last_ns = ev->ts_ns;
		s->has_time = 1;
	}
	if (ev->tid == 0) {
		/* events of an unowned ring are no thread's; losses may be anyone's */
		if (ev->kind == RT_EVENT_LOST)
			process_loss(s, ev);
		return 0;
	}
	struct thread *t = thread_of(s, ev);
	if (!t)
		return -ENOMEM;
	if (ev->kind == RT_EVENT_LOST) {
		/* before the thread's first event a loss is in no gap */
		if (t->has_last) {
			t->lost_pending += ev->count;
			t->damaged_pending |= ev->reason && strcmp(ev->reason, "damaged") == 0;
		}
		return 0;
	}
	if (ev->thread.s != t->name_seen || ev->thread.length != t->name_seen_length) {
		/* a thread renamed: the newest name is the one shown */
		if (ev->thread.length)
			copy_text(t->name, sizeof(t->name), ev->thread.s, ev->thread.length);
		t->name_seen = ev->thread.s;
		t->name_seen_length = ev->thread.length;
	}
	if (t->has_last) {
		int64_t gap = ev->ts_ns - t->last.ts_ns;
		if (gap >= s->min_gap_ns) {
			t->gaps++;
			/* the common case, checked here: not longer than the kept ones */
			if ((t->heap_count < s->top ||
			     ranks_below(t->heap[0].gap_ns, t->heap[0].before.ts_ns, gap,
					 t->last.ts_ns)) &&
			    offer(s, t, gap, ev))
				return -ENOMEM;
		}
	}
	t->raw_time = ev->raw_time;
	t->has_last = 1;
	t->lost_pending = 0;
	t->damaged_pending = 0;
	remember(&t->last, ev);
	return 0;
}

static int stalls_open(void **state, const struct rt_analyze_context *context, char *message,
		       size_t message_size)
{
	struct stalls *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	const struct rt_analyze_options *o = context->options;
	s->top = o->top ? o->top : STALLS_TOP_DEFAULT;
	s->min_gap_ns = o->min_gap_ns > 0 ? o->min_gap_ns : 1;
	*state = s;
	if (grow_slots(s)) {
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static void stalls_free(void *state)
{
	struct stalls *s = state;
	for (size_t i = 0; i < s->thread_count; i++)
		free(s->threads[i].heap);
	free(s->threads);
	free(s->slots);
	free(s->raw_last);
	free(s);
}

/* ---- the report ---- */

/* The interval from a thread's last event to the end of its set. */
struct silence {
	int64_t gap_ns, end_ns;
	uint64_t lost_inside;
	int damaged_inside;
	uint32_t thread;
	struct stall_event before;
};

static int compare_stalls(const void *a, const void *b)
{
	const struct stall *x = *(const struct stall *const *)a,
			   *y = *(const struct stall *const *)b;
	if (x->gap_ns != y->gap_ns)
		return x->gap_ns > y->gap_ns ? -1 : 1;
	if (x->before.ts_ns != y->before.ts_ns)
		return x->before.ts_ns < y->before.ts_ns ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int compare_silences(const void *a, const void *b)
{
	const struct silence *x = a, *y = b;
	if (x->gap_ns != y->gap_ns)
		return x->gap_ns > y->gap_ns ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* The report's view of one thread: its gaps longest first, its silence. */
struct thread_view {
	struct thread *t;
	struct stall **gaps; /* into the thread's heap, sorted */
	unsigned gap_count;
	int has_silence;
	struct silence silence;
};

static int compare_views(const void *a, const void *b)
{
	const struct thread_view *x = a, *y = b;
	int64_t gx = x->gap_count ? x->gaps[0]->gap_ns : -1;
	int64_t gy = y->gap_count ? y->gaps[0]->gap_ns : -1;
	if (gx != gy)
		return gx > gy ? -1 : 1;
	if (x->t->pid != y->t->pid)
		return x->t->pid < y->t->pid ? -1 : 1;
	return x->t->tid < y->t->tid ? -1 : x->t->tid > y->t->tid;
}

struct report_data {
	struct thread_view *views;
	struct stall **all; /* every kept gap, longest first */
	size_t all_count;
	size_t overall;		  /* the first overall of all are the overall top */
	struct silence *silences; /* longest first */
	size_t silence_count;
};

static void report_data_free(struct report_data *d)
{
	free(d->views);
	free(d->all);
	free(d->silences);
}

static int report_data_build(struct stalls *s, struct report_data *d)
{
	memset(d, 0, sizeof(*d));
	size_t kept = 0;
	for (size_t i = 0; i < s->thread_count; i++)
		kept += s->threads[i].heap_count;
	d->views = calloc(s->thread_count + 1, sizeof(*d->views));
	/* the first half in per-thread order, the second in the overall order */
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	d->all = calloc(2 * kept + 1, sizeof(*d->all));
	d->silences = calloc(s->thread_count + 1, sizeof(*d->silences));
	if (!d->views || !d->all || !d->silences) {
		report_data_free(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->thread_count; i++) {
		struct thread *t = &s->threads[i];
		struct thread_view *v = &d->views[i];
		v->t = t;
		v->gaps = d->all + d->all_count;
		v->gap_count = t->heap_count;
		for (unsigned k = 0; k < t->heap_count; k++) {
			v->gaps[k] = &t->heap[k];
			t->heap[k].overall_rank = 0;
		}
		d->all_count += t->heap_count;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		qsort(v->gaps, v->gap_count, sizeof(*v->gaps), compare_stalls);
		if (!t->has_last)
			continue;
		int64_t end = s->last_ns;
		if (t->raw_time)
			end = t->source < s->raw_count ? s->raw_last[t->source] : t->last.ts_ns;
		int64_t gap = end - t->last.ts_ns;
		if (gap < s->min_gap_ns)
			continue;
		v->has_silence = 1;
		struct silence *x = &v->silence;
		x->gap_ns = gap;
		x->end_ns = end;
		x->lost_inside = t->lost_pending;
		x->damaged_inside = t->damaged_pending;
		x->thread = (uint32_t)i;
		describe(&t->last, &x->before);
		d->silences[d->silence_count++] = *x;
	}
	qsort(d->silences, d->silence_count, sizeof(*d->silences), compare_silences);
	struct stall **overall = d->all + d->all_count;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	memcpy(overall, d->all, d->all_count * sizeof(*overall));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	qsort(overall, d->all_count, sizeof(*overall), compare_stalls);
	d->overall = d->all_count < s->top ? d->all_count : s->top;
	for (size_t i = 0; i < d->overall; i++)
		overall[i]->overall_rank = (unsigned)i + 1;
	qsort(d->views, s->thread_count, sizeof(*d->views), compare_views);
	return 0;
}

/* The overall order: the second half of all. */
static struct stall *overall_at(const struct report_data *d, size_t i)
{
	return d->all[d->all_count + i];
}

/* "trace tick", "log round 3 gave...": what was recorded escaped (common/escape.h), cut to size. */
static void event_text(char *buf, size_t size, const struct stall_event *e)
{
	const char *kind = rt_event_kind_name(e->kind);
	size_t k = strlen(kind) + 1;
	snprintf(buf, size, "%s %s", kind,
		 rt_escaped_cut(e->what, strlen(e->what), size > k ? size - 1 - k : 0));
}

static void thread_text(char *buf, size_t size, const struct thread *t)
{
	if (t->name[0])
		snprintf(buf, size, "pid %d tid %d (%s)", (int)t->pid, (int)t->tid,
			 rt_escaped_cut(t->name, strlen(t->name), size / 2));
	else
		snprintf(buf, size, "pid %d tid %d", (int)t->pid, (int)t->tid);
}

/* The same, short, for a column: "4242/4243 worker-1". */
static void thread_cell(char *buf, size_t size, const struct thread *t)
{
	snprintf(buf, size, "%d/%d %s", (int)t->pid, (int)t->tid,
		 rt_escaped_cut(t->name, strlen(t->name), size / 2));
}

static void lost_text(char *buf, size_t size, uint64_t lost, int damaged)
{
	if (lost && damaged)
		snprintf(buf, size, "%llu, damage", (unsigned long long)lost);
	else if (lost)
		snprintf(buf, size, "%llu", (unsigned long long)lost);
	else if (damaged)
		snprintf(buf, size, "damage");
	else
		buf[0] = 0;
}

/* ---- the rows: one table for the text, JSON and the page (analyze/table.h) ---- */

#define LABEL_MAX (2 * WHAT_MAX + 128)

/* An interval of a thread: a gap between two of its events, or its silence to the end. */
struct interval {
	int64_t gap_ns, start_ns, end_ns;
	const struct stall_event *before, *after; /* after NULL: a silence */
	uint64_t lost_inside;
	int damaged_inside;
	const struct thread *t;
	unsigned overall_rank; /* 0: none */
};

enum {
	I_RANK,
	I_GAP,
	I_GAP_PAGE,
	I_AT,
	I_WHO,
	I_THREAD_PAGE,
	I_BEFORE,
	I_AFTER,
	I_BETWEEN_PAGE,
	I_LOST,
	I_PID,
	I_TID,
	I_THREAD,
	I_SILENT,
	I_RAW_TIME,
	I_GAP_NS,
	I_START_NS,
	I_END_NS,
	I_BEFORE_EVENT,
	I_AFTER_EVENT,
	I_LOST_INSIDE,
	I_DAMAGED_INSIDE,
	I_RANK_NUMBER,
	I_OVERALL_RANK,
	I_COLUMNS
};

/* the columns' flags, short */
enum { T = RT_COLUMN_TEXT, J = RT_COLUMN_JSON, H = RT_COLUMN_HTML };
enum { R = RT_COLUMN_RIGHT, CUT = RT_COLUMN_CUT };
static const struct rt_column interval_columns[I_COLUMNS] = {
    [I_RANK] = {.flags = T | H | R, .header = "rank", .width = 4},
    [I_GAP] = {.flags = T | R, .header = "gap", .width = 11, .gap = 1},
    [I_GAP_PAGE] = {.flags = H, .header = "gap"},
    [I_AT] = {.flags = T | R, .header = "at", .width = 11, .gap = 1},
    [I_WHO] = {.flags = T | CUT, .header = "pid/tid thread", .width = 28, .gap = 2},
    [I_THREAD_PAGE] = {.flags = H, .header = "thread"},
    [I_BEFORE] = {.flags = T | CUT, .header = "before", .width = 30, .gap = 2},
    [I_AFTER] = {.flags = T | CUT, .header = "after", .width = 30, .gap = 2},
    [I_BETWEEN_PAGE] = {.flags = H, .header = "between"},
    [I_LOST] = {.flags = T | H, .header = "lost inside", .gap = 2},
    [I_PID] = {.flags = J, .key = "pid"},
    [I_TID] = {.flags = J, .key = "tid"},
    [I_THREAD] = {.flags = J, .key = "thread"},
    [I_SILENT] = {.flags = J, .key = "silent_until_end"},
    [I_RAW_TIME] = {.flags = J, .key = "raw_time"},
    [I_GAP_NS] = {.flags = J, .key = "gap_ns"},
    [I_START_NS] = {.flags = J, .key = "start_ns"},
    [I_END_NS] = {.flags = J, .key = "end_ns"},
    [I_BEFORE_EVENT] = {.flags = J, .key = "before"},
    [I_AFTER_EVENT] = {.flags = J, .key = "after"},
    [I_LOST_INSIDE] = {.flags = J, .key = "lost_inside"},
    [I_DAMAGED_INSIDE] = {.flags = J, .key = "damaged_inside"},
    [I_RANK_NUMBER] = {.flags = J, .key = "rank"},
    [I_OVERALL_RANK] = {.flags = J, .key = "overall_rank"},
};

/* An event around an interval, in JSON: {"kind":..,"what":..,"ts_ns":..}. */
enum { E_KIND, E_WHAT, E_TS, E_COLUMNS };
static const struct rt_column event_columns[E_COLUMNS] = {
    [E_KIND] = {.flags = J, .key = "kind"},
    [E_WHAT] = {.flags = J, .key = "what"},
    [E_TS] = {.flags = J, .key = "ts_ns"},
};
static const struct rt_table event_table = {.columns = event_columns, .count = E_COLUMNS};

/* The tables: a thread's gaps, the longest of all threads, the silences. */
enum interval_table { GAPS, OVERALL, SILENCES };

static void table_of(enum interval_table which, struct rt_column *c)
{
	memcpy(c, interval_columns, sizeof(interval_columns));
	if (which == GAPS)
		c[I_WHO].flags = 0; /* under the thread's own heading */
	if (which == SILENCES) {
		c[I_GAP].header = c[I_GAP_PAGE].header = "silent";
		c[I_AT].header = "since";
		c[I_BEFORE].header = c[I_BETWEEN_PAGE].header = "last event";
		c[I_AFTER].flags = 0;
	}
}

/* The texts of an interval's cells. */
struct interval_texts {
	char gap[RT_UNITS_MAX], at[RT_UNITS_MAX], gap_page[RT_UNITS_MAX];
	char who[96], thread[96], lost[48];
	char before[WHAT_MAX + 8], after[WHAT_MAX + 8], between[LABEL_MAX];
	struct rt_cell before_event[E_COLUMNS], after_event[E_COLUMNS];
};

/* The JSON object of an event around an interval, its cells in c. */
static struct rt_cell event_object(const struct stall_event *e, struct rt_cell *c)
{
	const char *kind = rt_event_kind_name(e->kind);
	c[E_KIND] = rt_cell_string(kind, strlen(kind), NULL);
	c[E_WHAT] = rt_cell_string(e->what, strlen(e->what), NULL);
	c[E_TS] = rt_cell_i64(e->ts_ns, NULL);
	return rt_cell_object(&event_table, c);
}

/* The cells of interval x, ranked rank in its table. */
static void interval_cells(const struct interval *x, size_t rank, struct interval_texts *w,
			   struct rt_cell *c)
{
	memset(c, 0, I_COLUMNS * sizeof(*c));
	c[I_RANK] = rt_cell_u64(rank, NULL);
	rt_units_duration_column(w->gap, sizeof(w->gap), x->gap_ns);
	c[I_GAP] = rt_cell_text(w->gap);
	rt_units_duration(w->gap_page, sizeof(w->gap_page), x->gap_ns);
	c[I_GAP_PAGE] = rt_cell_text(w->gap_page);
	rt_units_duration_column(w->at, sizeof(w->at), x->before->ts_ns);
	c[I_AT] = rt_cell_text(w->at);
	thread_cell(w->who, sizeof(w->who), x->t);
	c[I_WHO] = rt_cell_text(w->who);
	thread_text(w->thread, sizeof(w->thread), x->t);
	c[I_THREAD_PAGE] = rt_cell_text(w->thread);
	event_text(w->before, sizeof(w->before), x->before);
	c[I_BEFORE] = rt_cell_text(w->before);
	/* the page's "trace tick -> trace tock", or the last event before a silence */
	const struct stall_event *b = x->before, *a = x->after;
	w->after[0] = 0;
	if (a)
		event_text(w->after, sizeof(w->after), a);
	snprintf(w->between, sizeof(w->between), "%s %s%s%s%s%s", rt_event_kind_name(b->kind),
		 b->what, a ? " -> " : "", a ? rt_event_kind_name(a->kind) : "", a ? " " : "",
		 a ? a->what : "");
	c[I_AFTER] = rt_cell_text(w->after);
	c[I_BETWEEN_PAGE] = rt_cell_text(w->between);
	lost_text(w->lost, sizeof(w->lost), x->lost_inside, x->damaged_inside);
	c[I_LOST] = rt_cell_text(w->lost);
	c[I_PID] = rt_cell_i64(x->t->pid, NULL);
	c[I_TID] = rt_cell_i64(x->t->tid, NULL);
	c[I_THREAD] = rt_cell_string(x->t->name, strlen(x->t->name), NULL);
	c[I_SILENT] = rt_cell_bool(!x->after);
	if (x->t->raw_time)
		c[I_RAW_TIME] = rt_cell_bool(1);
	c[I_GAP_NS] = rt_cell_i64(x->gap_ns, NULL);
	c[I_START_NS] = rt_cell_i64(x->start_ns, NULL);
	c[I_END_NS] = rt_cell_i64(x->end_ns, NULL);
	c[I_BEFORE_EVENT] = event_object(x->before, w->before_event);
	c[I_AFTER_EVENT] = x->after ? event_object(x->after, w->after_event) : rt_cell_null();
	c[I_LOST_INSIDE] = rt_cell_u64(x->lost_inside, NULL);
	c[I_DAMAGED_INSIDE] = rt_cell_bool(x->damaged_inside);
	c[I_RANK_NUMBER] = rt_cell_u64(rank, NULL);
	c[I_OVERALL_RANK] = x->overall_rank ? rt_cell_u64(x->overall_rank, NULL) : rt_cell_null();
}

static struct interval gap_interval(const struct stalls *s, const struct stall *x)
{
	return (struct interval){
	    x->gap_ns,	    x->before.ts_ns,   x->after.ts_ns,	       &x->before,     &x->after,
	    x->lost_inside, x->damaged_inside, &s->threads[x->thread], x->overall_rank};
}

static struct interval silence_interval(const struct stalls *s, const struct silence *x)
{
	return (struct interval){
	    x->gap_ns,	       x->before.ts_ns,	       x->end_ns, &x->before, NULL, x->lost_inside,
	    x->damaged_inside, &s->threads[x->thread], 0};
}

/* One interval's row, as the text or JSON. */
static void put_interval(struct rt_out *out, const struct rt_table *table, int json,
			 struct interval x, size_t rank)
{
	struct interval_texts w;
	struct rt_cell cells[I_COLUMNS];
	interval_cells(&x, rank, &w, cells);
	if (json)
		rt_table_row_json(out, table, cells);
	else
		rt_table_row_text(out, table, cells, NULL);
}

static void report_json(struct stalls *s, const struct report_data *d, struct rt_out *out)
{
	struct rt_column columns[I_COLUMNS];
	table_of(GAPS, columns);
	struct rt_table table = {.columns = columns, .count = I_COLUMNS};
	for (size_t i = 0; i < s->thread_count; i++) {
		const struct thread_view *v = &d->views[i];
		for (unsigned k = 0; k < v->gap_count; k++)
			put_interval(out, &table, 1, gap_interval(s, v->gaps[k]), k + 1);
	}
	size_t silent = d->silence_count < s->top ? d->silence_count : s->top;
	for (size_t i = 0; i < silent; i++)
		put_interval(out, &table, 1, silence_interval(s, &d->silences[i]), i + 1);
}

static void report_table(struct stalls *s, const struct report_data *d, struct rt_out *out)
{
	char min[RT_UNITS_MAX];
	rt_units_duration(min, sizeof(min), s->min_gap_ns);
	rt_out_printf(out,
		      "Stalls: per thread, the %u longest intervals without any of its events"
		      "%s%s\n",
		      s->top, s->min_gap_ns > 1 ? ", at least " : "", s->min_gap_ns > 1 ? min : "");
	if (!s->thread_count) {
		rt_out_str(out, "\nNo thread had an event.\n");
		return;
	}
	struct rt_column columns[I_COLUMNS];
	struct rt_table table = {.columns = columns, .count = I_COLUMNS, .indent = "  "};
	table_of(GAPS, columns);
	for (size_t i = 0; i < s->thread_count; i++) {
		const struct thread_view *v = &d->views[i];
		char who[96];
		thread_text(who, sizeof(who), v->t);
		rt_out_printf(out, "\n%s: %llu gap%s%s\n", who, (unsigned long long)v->t->gaps,
			      v->t->gaps == 1 ? "" : "s",
			      v->t->raw_time ? " (times in raw counter ticks: no clock)" : "");
		if (v->gap_count)
			rt_table_header_text(out, &table);
		for (unsigned k = 0; k < v->gap_count; k++)
			put_interval(out, &table, 0, gap_interval(s, v->gaps[k]), k + 1);
		if (v->has_silence) {
			char gap[RT_UNITS_MAX], before[WHAT_MAX + 8], lost[48];
			rt_units_duration(gap, sizeof(gap), v->silence.gap_ns);
			event_text(before, sizeof(before), &v->silence.before);
			lost_text(lost, sizeof(lost), v->silence.lost_inside,
				  v->silence.damaged_inside);
			rt_out_printf(out, "  silent until the end: %s after %s%s%s\n", gap, before,
				      lost[0] ? "; lost inside: " : "", lost);
		}
	}
	if (d->overall) {
		rt_out_printf(out, "\nThe %zu longest of all threads:\n", d->overall);
		table_of(OVERALL, columns);
		rt_table_header_text(out, &table);
		for (size_t i = 0; i < d->overall; i++)
			put_interval(out, &table, 0, gap_interval(s, overall_at(d, i)), i + 1);
	}
	size_t silent = d->silence_count < s->top ? d->silence_count : s->top;
	if (silent) {
		char end[RT_UNITS_MAX];
		rt_units_duration(end, sizeof(end), s->last_ns);
		rt_out_printf(
		    out, "\nSilent until the end (the inputs end at %s): blocked, or gone?\n", end);
		table_of(SILENCES, columns);
		rt_table_header_text(out, &table);
		for (size_t i = 0; i < silent; i++)
			put_interval(out, &table, 0, silence_interval(s, &d->silences[i]), i + 1);
	}
}

/* The page's table of n intervals of which (each from at(i)). */
static int html_intervals(struct rt_html *h, const struct stalls *s, const struct report_data *d,
			  enum interval_table which, size_t n)
{
	struct interval_texts *w = calloc(n + 1, sizeof(*w));
	struct rt_cell *cells = calloc((n + 1) * I_COLUMNS, sizeof(*cells));
	if (!w || !cells) {
		free(w);
		free(cells);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct interval x = which == SILENCES ? silence_interval(s, &d->silences[i])
						      : gap_interval(s, overall_at(d, i));
		interval_cells(&x, i + 1, &w[i], cells + i * I_COLUMNS);
	}
	struct rt_column columns[I_COLUMNS];
	table_of(which, columns);
	struct rt_table table = {.columns = columns, .count = I_COLUMNS};
	int rc = rt_table_html(h, &table, cells, n);
	free(w);
	free(cells);
	return rc;
}

/* "300.1 ms: trace tick -> trace tock (3 lost inside)" */
static void interval_label(char *buf, size_t size, int64_t gap_ns, const struct stall_event *before,
			   const struct stall_event *after, uint64_t lost, int damaged)
{
	char gap[RT_UNITS_MAX], lost_words[64] = "";
	rt_units_duration(gap, sizeof(gap), gap_ns);
	if (lost || damaged) {
		char l[48];
		lost_text(l, sizeof(l), lost, damaged);
		snprintf(lost_words, sizeof(lost_words), " (lost inside: %s)", l);
	}
	if (after)
		snprintf(buf, size, "%s: %s %s -> %s %s%s", gap, rt_event_kind_name(before->kind),
			 before->what, rt_event_kind_name(after->kind), after->what, lost_words);
	else
		snprintf(buf, size, "%s: silent until the end after %s %s%s", gap,
			 rt_event_kind_name(before->kind), before->what, lost_words);
}

static int report_html(struct stalls *s, const struct report_data *d, struct rt_html *h)
{
	rt_html_section(h, "Stalls",
			"Per thread, the longest intervals without any of its events, and each "
			"thread's silence from its last event to the end of the inputs.");
	size_t intervals = 0, lanes = 0;
	for (size_t i = 0; i < s->thread_count; i++)
		if (!d->views[i].t->raw_time)
			intervals += d->views[i].gap_count + (size_t)d->views[i].has_silence;
	struct rt_html_lane *lane = calloc(s->thread_count + 1, sizeof(*lane));
	struct rt_html_interval *iv = calloc(intervals + 1, sizeof(*iv));
	size_t silent = d->silence_count < s->top ? d->silence_count : s->top;
	char(*labels)[LABEL_MAX] = calloc(intervals + 1, sizeof(*labels));
	char(*names)[96] = calloc(s->thread_count + 1, sizeof(*names));
	if (!lane || !iv || !labels || !names) {
		free(lane);
		free(iv);
		free(labels);
		free(names);
		return -ENOMEM;
	}
	size_t n = 0;
	for (size_t i = 0; i < s->thread_count; i++) {
		const struct thread_view *v = &d->views[i];
		if (v->t->raw_time)
			continue; /* its times do not line up with the others' */
		thread_text(names[lanes], sizeof(names[0]), v->t);
		lane[lanes].name = names[lanes];
		lane[lanes].intervals = &iv[n];
		for (unsigned k = 0; k < v->gap_count; k++, n++) {
			const struct stall *x = v->gaps[k];
			iv[n].start_ns = x->before.ts_ns;
			iv[n].end_ns = x->after.ts_ns;
			interval_label(labels[n], sizeof(labels[0]), x->gap_ns, &x->before,
				       &x->after, x->lost_inside, x->damaged_inside);
			iv[n].label = labels[n];
		}
		if (v->has_silence) {
			iv[n].start_ns = v->silence.before.ts_ns;
			iv[n].end_ns = v->silence.end_ns;
			interval_label(labels[n], sizeof(labels[0]), v->silence.gap_ns,
				       &v->silence.before, NULL, v->silence.lost_inside,
				       v->silence.damaged_inside);
			iv[n].label = labels[n];
			n++;
		}
		lane[lanes].count = (size_t)(&iv[n] - lane[lanes].intervals);
		lanes++;
	}
	if (lanes)
		rt_html_timeline(h, "Stalls per thread", lane, lanes, s->first_ns, s->last_ns);
	int rc = 0;
	if (d->overall)
		rc = html_intervals(h, s, d, OVERALL, d->overall);
	else
		rt_html_paragraph(h, "No thread had two events with time between them.");
	if (!rc && silent) {
		rt_html_paragraph(h, "Silent until the end of the inputs: blocked, or gone?");
		rc = html_intervals(h, s, d, SILENCES, silent);
	}
	free(lane);
	free(iv);
	free(labels);
	free(names);
	return rc;
}

static int stalls_report(void *state, const struct rt_analyze_report *report)
{
	struct stalls *s = state;
	struct report_data d;
	if (report_data_build(s, &d))
		return -ENOMEM;
	if (report->json)
		report_json(s, &d, report->out);
	else
		report_table(s, &d, report->out);
	int rc = report->html ? report_html(s, &d, report->html) : 0;
	report_data_free(&d);
	return rc;
}

const struct rt_analyzer rt_analyzer_stalls = {
    .name = "stalls",
    .summary = "per thread, the longest intervals without an event: hangs, starvation",
    .check = NULL,
    .open = stalls_open,
    .event = stalls_event,
    .report = stalls_report,
    .free = stalls_free,
};
