/*
 * call_limits.c - the calls a view shows by duration and depth
 * (call_limits.h).
 *
 * The tree's own stack of a thread holds every open call, each marked in
 * its frame's view slot: shown, held (-t: not known yet to last long
 * enough) or hidden (-D: too deep).  They lie in that order, outermost
 * first: a call inside a held one is held or hidden, one inside a hidden
 * one is hidden, and held calls are shown outermost first (an outer call
 * began earlier, so it lasted longer).  The view's thread has a stack of
 * its own, of the calls shown: the first held call of the tree's stack is
 * at the index the view's depth says.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "present/call_limits.h"

/* A call's mark, in its tree frame's view slot (0: never marked, when memory ran out). */
enum call_mark {
	CALL_SHOWN = 1,
	CALL_HELD = 2,
	CALL_HIDDEN = 3,
};

/* A thread as the view sees it, in the tree thread's view slot. */
struct limited_thread {
	struct rt_call_thread shown; /* the view's: its open calls shown */
	size_t held;		     /* the held calls above them in the tree's stack */
};

struct rt_call_limiter {
	struct rt_call_limits limits;
	const struct rt_call_tree_ops *ops; /* the view's */
	void *ctx;
	struct limited_thread **threads; /* to free */
	size_t thread_count, thread_capacity;
	int error;
};

struct rt_call_limiter *rt_call_limiter_new(const struct rt_call_limits *limits,
					    const struct rt_call_tree_ops *view_ops, void *view_ctx)
{
	struct rt_call_limiter *l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->limits = *limits;
	l->ops = view_ops;
	l->ctx = view_ctx;
	return l;
}

int rt_call_limiter_error(const struct rt_call_limiter *l)
{
	return l ? l->error : 0;
}

void rt_call_limiter_free(struct rt_call_limiter *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->thread_count; i++) {
		free(l->threads[i]->shown.stack);
		free(l->threads[i]);
	}
	free(l->threads);
	free(l);
}

struct rt_call_tree *rt_call_tree_limited(const struct rt_call_limits *limits,
					  const struct rt_call_tree_ops *view_ops, void *view_ctx,
					  struct rt_call_limiter **limiter)
{
	*limiter = NULL;
	if (!rt_call_limits_wanted(limits))
		return rt_call_tree_new(view_ops, view_ctx);
	*limiter = rt_call_limiter_new(limits, view_ops, view_ctx);
	return *limiter ? rt_call_tree_new(&rt_call_limiter_ops, *limiter) : NULL;
}

/* A new view thread for the tree's t; NULL when out of memory. */
static struct limited_thread *new_view_thread(struct rt_call_limiter *l, struct rt_call_thread *t)
{
	if (l->thread_count == l->thread_capacity) {
		size_t cap = l->thread_capacity ? 2 * l->thread_capacity : 16;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct limited_thread **threads = realloc(l->threads, cap * sizeof(*threads));
		if (!threads)
			return NULL;
		l->threads = threads;
		l->thread_capacity = cap;
	}
	struct limited_thread *lt = calloc(1, sizeof(*lt));
	if (!lt)
		return NULL;
	lt->shown.source = t->source;
	lt->shown.tid = t->tid;
	lt->shown.reader = t->reader;
	l->threads[l->thread_count++] = lt;
	t->view = lt;
	return lt;
}

/* The view's thread for the tree's t, up to date; NULL when out of memory. */
static struct limited_thread *view_thread(struct rt_call_limiter *l, struct rt_call_thread *t)
{
	struct limited_thread *lt = t->view;
	if (!lt && !(lt = new_view_thread(l, t)))
		return NULL;
	lt->shown.last_counter = t->last_counter;
	lt->shown.first_counter = t->first_counter;
	lt->shown.timed = t->timed;
	return lt;
}

/* Whether the span from counter `from` to `to` of t's source lasts min_ns. */
static int lasted(const struct rt_call_limiter *l, const struct rt_call_thread *t, uint64_t from,
		  uint64_t to)
{
	if (to < from)
		return !l->limits.min_ns;
	int64_t ns = rt_timebase_span_ns(&t->reader->timebase, to - from);
	return ns >= 0 && (uint64_t)ns >= l->limits.min_ns;
}

/* Give the view the call of tree frame f, on top of its stack; 0 or -ENOMEM. */
static int show(struct rt_call_limiter *l, struct limited_thread *lt, struct rt_call_frame *f)
{
	struct rt_call_thread *s = &lt->shown;
	if (s->depth == s->capacity) {
		size_t cap = s->capacity ? 2 * s->capacity : 32;
		struct rt_call_frame *stack = realloc(s->stack, cap * sizeof(*stack));
		if (!stack)
			return -ENOMEM;
		s->stack = stack;
		s->capacity = cap;
	}
	struct rt_call_frame *v = &s->stack[s->depth++];
	memset(v, 0, sizeof(*v));
	v->addr = f->addr;
	v->call_site = f->call_site;
	v->enter_counter = f->enter_counter;
	v->depth = f->depth;
	f->view = CALL_SHOWN;
	l->ops->enter(l->ctx, s, v);
	return 0;
}

/*
 * Show the held calls of t known at counter now to last long enough,
 * outermost first: those entered min_ns or more before.  0 or -ENOMEM.
 */
static int show_known(struct rt_call_limiter *l, struct rt_call_thread *t,
		      struct limited_thread *lt, uint64_t now)
{
	while (lt->held) {
		struct rt_call_frame *f = &t->stack[lt->shown.depth];
		if (!lasted(l, t, f->enter_counter, now))
			break;
		lt->held--;
		if (show(l, lt, f))
			return -ENOMEM;
	}
	return 0;
}

/* The level of a call on top of t's depth open calls; SIZE_MAX inside a hidden one. */
static size_t next_level(const struct rt_call_thread *t, size_t depth,
			 const struct limited_thread *lt)
{
	if (depth && t->stack[depth - 1].view == CALL_HIDDEN)
		return SIZE_MAX;
	return lt->shown.depth + lt->held;
}

static int too_deep(const struct rt_call_limiter *l, size_t level)
{
	return l->limits.max_depth && level >= l->limits.max_depth;
}

static void on_enter(void *ctx, struct rt_call_thread *t, struct rt_call_frame *f)
{
	struct rt_call_limiter *l = ctx;
	struct limited_thread *lt = l->error ? NULL : view_thread(l, t);
	if (!lt || show_known(l, t, lt, f->enter_counter)) {
		l->error = -ENOMEM;
		return;
	}
	if (too_deep(l, next_level(t, t->depth - 1, lt))) {
		f->view = CALL_HIDDEN;
	} else if (l->limits.min_ns) {
		f->view = CALL_HELD;
		lt->held++;
	} else if (show(l, lt, f)) {
		l->error = -ENOMEM;
	}
}

static void on_leave(void *ctx, struct rt_call_thread *t, struct rt_call_frame *f, uint64_t end,
		     enum rt_call_end how)
{
	struct rt_call_limiter *l = ctx;
	struct limited_thread *lt = t->view;
	if (l->error || !lt)
		return;
	if (show_known(l, t, lt, end)) {
		l->error = -ENOMEM;
		return;
	}
	if (f->view == CALL_HELD) {
		lt->held--; /* shorter than min_ns: hidden, with all it held */
		return;
	}
	if (f->view != CALL_SHOWN)
		return;
	struct rt_call_thread *s = &lt->shown;
	struct rt_call_frame *v = &s->stack[s->depth - 1];
	s->last_counter = t->last_counter;
	l->ops->leave(l->ctx, s, v, end, how);
	if (s->depth > 1)
		s->stack[s->depth - 2].child_ticks +=
		    end > v->enter_counter ? end - v->enter_counter : 0;
	s->depth--;
}

static void on_stray_exit(void *ctx, struct rt_call_thread *t, const struct rt_item *item)
{
	struct rt_call_limiter *l = ctx;
	struct limited_thread *lt = l->error ? NULL : view_thread(l, t);
	if (!lt || (item->flags & RT_ITEM_TIMED && show_known(l, t, lt, item->counter))) {
		l->error = -ENOMEM;
		return;
	}
	if (too_deep(l, next_level(t, t->depth, lt)))
		return;
	/* known to last min_ns: open since before its thread's first item, that long before it */
	if (l->limits.min_ns && (t->depth || !t->timed || !(item->flags & RT_ITEM_TIMED) ||
				 !lasted(l, t, t->first_counter, item->counter)))
		return;
	l->ops->stray_exit(l->ctx, &lt->shown, item);
}

static void on_other(void *ctx, struct rt_call_thread *t, const struct rt_reader *rd,
		     const struct rt_item *item)
{
	struct rt_call_limiter *l = ctx;
	if (l->error)
		return;
	struct limited_thread *lt = t ? view_thread(l, t) : NULL;
	if (t && !lt) {
		l->error = -ENOMEM;
		return;
	}
	/* an event of the thread: the held calls it comes min_ns after lasted that long */
	if (lt && rt_item_kind_is_event(item->kind) && item->flags & RT_ITEM_TIMED &&
	    show_known(l, t, lt, item->counter)) {
		l->error = -ENOMEM;
		return;
	}
	if (l->ops->other)
		l->ops->other(l->ctx, lt ? &lt->shown : NULL, rd, item);
}

const struct rt_call_tree_ops rt_call_limiter_ops = {
    .enter = on_enter,
    .leave = on_leave,
    .stray_exit = on_stray_exit,
    .other = on_other,
};
