/*
 * item_filter.c - which items the reading views keep (item_filter.h).
 *
 * Each thread (a source and a tid) has a stack of its open calls, every
 * call, kept or not, with what it decided for what happens inside it
 * (under -F, under -N), paired by the span tracker (event/span_tracker.h)
 * as the call tree that shows the kept ones pairs them: the verdict on an
 * enter or exit is made in the tracker's callbacks, from the calls it
 * closes, the call it opens or ends, or the exit it finds without an
 * enter.  Events carry no depth: they fall under the top call of their
 * thread.  A function's matches are found once per name string the
 * symbolizer gave (those live as long as the names); functions with no
 * symbol are matched on every event.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "event/span_tracker.h"
#include "present/call_tree.h"
#include "present/item_filter.h"
#include "symbols/demangle.h"
#include "symbols/function_names.h"

#define NAME_MAX_BYTES 1024

/* What an open call decided, kept beside it by the tracker (its user bytes). */
struct scope {
	uint8_t kept;	/* its enter was kept: its exit is too */
	uint8_t inside; /* what it holds is under -F (or there is no -F) */
	uint8_t out;	/* what it holds is under -N */
};

struct thread {
	uint32_t source;
	int32_t tid;
	struct rt_span_thread spans; /* its open calls, a struct scope each */
};

/* The enter or exit being judged: what the tracker's callbacks need and find. */
struct judging {
	const struct rt_reader *rd;
	int in_time;
	int closes;  /* a kept call was closed by its depth */
	int verdict; /* -1 until a callback gives one */
};

/* What a function name string matched: MATCH_* bits, and that it was looked at. */
#define MATCH_INCLUDE 1u
#define MATCH_EXCLUDE 2u
#define MATCH_KNOWN 4u

struct match {
	const char *func; /* the symbolizer's string; NULL: a free entry */
	unsigned bits;
};

struct rt_item_filter {
	const struct rt_item_filter_options *o;
	struct rt_function_names *names;
	int by_function;
	struct thread *threads;
	size_t thread_count, thread_capacity;
	size_t last_thread; /* found last: a view shows a few threads at a time */
	struct rt_span_tracker tracker;
	struct judging judging;
	struct match *matches; /* open addressing, a power of two, at most half full */
	size_t match_count, match_slots;
	size_t open_kept; /* kept calls open in every thread */
	int past_until;
	char full[NAME_MAX_BYTES], name[NAME_MAX_BYTES];
};

int rt_item_filter_wanted(const struct rt_item_filter_options *o)
{
	return o->pid_count || o->has_since || o->has_until || o->include_count || o->exclude_count;
}

/* The tracker's callbacks, which judge enters and exits (below). */
static const struct rt_span_ops span_ops;

struct rt_item_filter *rt_item_filter_new(const struct rt_item_filter_options *o,
					  struct rt_function_names *names)
{
	struct rt_item_filter *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->o = o;
	f->names = names;
	f->by_function = o->include_count || o->exclude_count;
	rt_span_tracker_init(&f->tracker, &span_ops, f, sizeof(struct scope));
	/* a call is judged however deep, as the call tree keeps it however deep */
	f->tracker.calls_max = UINT32_MAX;
	return f;
}

void rt_item_filter_reset(struct rt_item_filter *f)
{
	for (size_t i = 0; i < f->thread_count; i++)
		rt_span_thread_free(&f->threads[i].spans);
	f->open_kept = 0;
	f->past_until = 0;
}

void rt_item_filter_free(struct rt_item_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->thread_count; i++)
		rt_span_thread_free(&f->threads[i].spans);
	free(f->threads);
	free(f->matches);
	free(f);
}

/* ---- names ---------------------------------------------------------------- */

static int any_match(const char *const *patterns, size_t count, const char *full, const char *name)
{
	for (size_t i = 0; i < count; i++)
		if (fnmatch(patterns[i], name, 0) == 0 || fnmatch(patterns[i], full, 0) == 0)
			return 1;
	return 0;
}

static unsigned match_text(const struct rt_item_filter *f, const char *full, const char *name)
{
	const struct rt_item_filter_options *o = f->o;
	return (any_match(o->include, o->include_count, full, name) ? MATCH_INCLUDE : 0) |
	       (any_match(o->exclude, o->exclude_count, full, name) ? MATCH_EXCLUDE : 0);
}

static size_t match_slot(const char *func, size_t mask)
{
	uint64_t h = (uint64_t)(uintptr_t)func * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & mask;
}

/* The entry of func, made when new; NULL when out of memory. */
static struct match *match_entry(struct rt_item_filter *f, const char *func)
{
	if ((f->match_count + 1) * 2 > f->match_slots) {
		size_t slots = f->match_slots ? 2 * f->match_slots : 256;
		struct match *m = calloc(slots, sizeof(*m));
		if (!m)
			return NULL;
		for (size_t i = 0; i < f->match_slots; i++) {
			if (!f->matches[i].func)
				continue;
			size_t s = match_slot(f->matches[i].func, slots - 1);
			while (m[s].func)
				s = (s + 1) & (slots - 1);
			m[s] = f->matches[i];
		}
		free(f->matches);
		f->matches = m;
		f->match_slots = slots;
	}
	size_t mask = f->match_slots - 1;
	size_t s = match_slot(func, mask);
	while (f->matches[s].func && f->matches[s].func != func)
		s = (s + 1) & mask;
	if (!f->matches[s].func) {
		f->matches[s].func = func;
		f->match_count++;
	}
	return &f->matches[s];
}

/* MATCH_* bits of the function at addr at counter; -ENOMEM. */
static int match_function(struct rt_item_filter *f, const struct rt_reader *rd, uint64_t addr,
			  uint64_t counter)
{
	struct rt_function_place place;
	memset(&place, 0, sizeof(place));
	if (f->names)
		rt_function_names_find(f->names, rd, addr, counter, &place);
	if (!place.func) {
		place.file = NULL;
		rt_function_place_text(&place, addr, f->name, sizeof(f->name));
		return (int)match_text(f, f->name, f->name);
	}
	struct match *m = match_entry(f, place.func);
	if (!m)
		return -ENOMEM;
	if (!(m->bits & MATCH_KNOWN)) {
		rt_demangled_short(place.func, f->name, sizeof(f->name));
		m->bits = MATCH_KNOWN | match_text(f, place.func, f->name);
	}
	return (int)(m->bits & ~MATCH_KNOWN);
}

/* ---- threads -------------------------------------------------------------- */

static struct thread *thread_of(struct rt_item_filter *f, uint32_t source, int32_t tid)
{
	size_t last = f->last_thread;
	if (last < f->thread_count && f->threads[last].source == source &&
	    f->threads[last].tid == tid)
		return &f->threads[last];
	for (size_t i = 0; i < f->thread_count; i++)
		if (f->threads[i].source == source && f->threads[i].tid == tid) {
			f->last_thread = i;
			return &f->threads[i];
		}
	if (f->thread_count == f->thread_capacity) {
		size_t cap = f->thread_capacity ? 2 * f->thread_capacity : 16;
		struct thread *t = realloc(f->threads, cap * sizeof(*t));
		if (!t)
			return NULL;
		f->threads = t;
		f->thread_capacity = cap;
	}
	struct thread *t = &f->threads[f->thread_count];
	memset(t, 0, sizeof(*t));
	t->source = source;
	t->tid = tid;
	f->last_thread = f->thread_count++;
	return t;
}

/* The scope of t's open call i, 0 the outermost. */
static struct scope *scope_at(const struct rt_item_filter *f, const struct thread *t, uint32_t i)
{
	return rt_span_user(rt_span_at(&f->tracker, &t->spans.calls, i));
}

/* What holds what t records when its count innermost calls are open: the top one, or t. */
static struct scope scope_below(const struct rt_item_filter *f, const struct thread *t,
				uint32_t count)
{
	if (count)
		return *scope_at(f, t, count - 1);
	struct scope none = {0, !f->o->include_count, 0};
	return none;
}

/* What holds the events of t now: its top call, or the thread itself. */
static struct scope scope_of(const struct rt_item_filter *f, const struct thread *t)
{
	return scope_below(f, t, t->spans.calls.count);
}

/* ---- the verdict ---------------------------------------------------------- */

static int pid_kept(const struct rt_item_filter_options *o, int32_t pid)
{
	for (size_t i = 0; i < o->pid_count; i++)
		if (o->pids[i] == pid)
			return 1;
	return !o->pid_count;
}

/* Whether the item's time is in the span; notes when the walk has passed it. */
static int in_span(struct rt_item_filter *f, const struct rt_reader *rd, const struct rt_item *item)
{
	const struct rt_item_filter_options *o = f->o;
	if (!o->has_since && !o->has_until)
		return 1;
	int64_t ns = rt_timebase_ns(&rd->timebase, item->counter);
	if (ns < 0)
		ns = 0; /* nothing is before the start (cut counts the same way) */
	if (o->has_since && (uint64_t)ns < o->since_ns)
		return 0;
	if (o->has_until && (uint64_t)ns > o->until_ns) {
		f->past_until = 1;
		return 0;
	}
	return 1;
}

/* Dropped, or closing kept calls whose exits were lost: what a verdict is when not kept. */
static int not_kept(const struct judging *j)
{
	return j->closes ? RT_FILTER_CLOSES : RT_FILTER_DROP;
}

/* A call entered: kept when in time, under -F (or no -F) and not under -N. */
static int judge_enter(void *ctx, void *thread, struct rt_span *span,
		       const struct rt_span_event *ev)
{
	struct rt_item_filter *f = ctx;
	const struct thread *t = thread;
	struct judging *j = &f->judging;
	/* it is on top: the call below it holds it */
	struct scope scope = scope_below(f, t, t->spans.calls.count - 1);
	int bits = 0;
	if (f->by_function && (bits = match_function(f, j->rd, ev->addr, (uint64_t)ev->ts)) < 0)
		return bits;
	struct scope *s = rt_span_user(span);
	s->inside = scope.inside || (bits & MATCH_INCLUDE);
	s->out = scope.out || (bits & MATCH_EXCLUDE);
	s->kept = j->in_time && s->inside && !s->out;
	f->open_kept += s->kept;
	j->verdict = s->kept ? RT_FILTER_KEEP : not_kept(j);
	return 0;
}

/* A call ended: by its own exit, kept as its enter was; closed by a depth, noted. */
static int judge_end(void *ctx, void *thread, struct rt_span *span, int64_t end_ts,
		     enum rt_span_end how, const struct rt_span_event *own_end)
{
	struct rt_item_filter *f = ctx;
	struct judging *j = &f->judging;
	int kept = ((const struct scope *)rt_span_user(span))->kept;
	f->open_kept -= kept;
	if (own_end)
		j->verdict = kept ? RT_FILTER_KEEP : not_kept(j);
	else
		j->closes |= kept;
	return 0;
}

/*
 * An exit without its enter: kept as an enter there would be; not with
 * --since, where its enter came before (a walk from the start saw it, one
 * that seeks did not) or was lost (a loss says so).
 */
static int judge_orphan(void *ctx, void *thread, const struct rt_span_event *ev)
{
	struct rt_item_filter *f = ctx;
	struct judging *j = &f->judging;
	j->verdict = not_kept(j);
	if (f->o->has_since)
		return 0;
	struct scope scope = scope_of(f, thread);
	int bits = 0;
	if (f->by_function && (bits = match_function(f, j->rd, ev->addr, (uint64_t)ev->ts)) < 0)
		return bits;
	if (j->in_time && (scope.inside || (bits & MATCH_INCLUDE)) && !scope.out &&
	    !(bits & MATCH_EXCLUDE))
		j->verdict = RT_FILTER_KEEP;
	return 0;
}

static const struct rt_span_ops span_ops = {
    .begin = judge_enter, .end = judge_end, .orphan = judge_orphan};

/* The verdict on an enter or exit ev of t: an enum rt_filter_verdict, or -ENOMEM. */
static int judge(struct rt_item_filter *f, struct thread *t, const struct rt_reader *rd,
		 const struct rt_span_event *ev, int in_time)
{
	f->judging = (struct judging){.rd = rd, .in_time = in_time, .verdict = -1};
	int rc = rt_span_feed(&f->tracker, &t->spans, t, ev);
	if (rc)
		return rc;
	return f->judging.verdict >= 0 ? f->judging.verdict : not_kept(&f->judging);
}

int rt_item_filter_check(struct rt_item_filter *f, uint32_t source, const struct rt_reader *rd,
			 const struct rt_item *item)
{
	int in_time = in_span(f, rd, item);
	if (!rt_item_kind_is_event(item->kind)) /* a loss */
		return in_time && (!rd->header.pid || pid_kept(f->o, rd->header.pid));
	if (!pid_kept(f->o, rd->header.pid))
		return RT_FILTER_DROP;
	if (!f->by_function && !f->o->has_since && !f->o->has_until)
		return RT_FILTER_KEEP;
	if (!item->tid)
		return in_time && !f->o->include_count;
	struct thread *t = thread_of(f, source, item->tid);
	if (!t)
		return -ENOMEM;
	struct rt_span_event ev;
	enum rt_span_input input = rt_span_event_of_item(rd, item, &ev);
	if (input == RT_SPAN_ENTER || input == RT_SPAN_EXIT)
		return judge(f, t, rd, &ev, in_time);
	/* anything else, a marked span's begin or end too, falls under the top call */
	struct scope scope = scope_of(f, t);
	return in_time && scope.inside && !scope.out;
}

int rt_item_filter_done(const struct rt_item_filter *f)
{
	return f && f->past_until && !f->open_kept;
}

int rt_item_filter_feed(struct rt_item_filter *f, struct rt_call_tree *tree, uint32_t source,
			const struct rt_reader *rd, const struct rt_item *item)
{
	int verdict = f ? rt_item_filter_check(f, source, rd, item) : RT_FILTER_KEEP;
	if (verdict == RT_FILTER_KEEP) {
		int rc = rt_call_tree_feed(tree, source, rd, item);
		return rc ? rc : verdict;
	}
	if (verdict == RT_FILTER_CLOSES)
		rt_call_tree_close_lost(tree, source, rd, item);
	return verdict;
}
