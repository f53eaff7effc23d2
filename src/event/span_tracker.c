/*
 * span_tracker.c - two stacks of open spans per thread, its calls and its
 * marked spans, closed by the rules of span_tracker.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/span_tracker.h"

/* A thread's first frames: most threads never nest deeper. */
#define FIRST_CAPACITY 16u

void rt_span_tracker_init(struct rt_span_tracker *tr, const struct rt_span_ops *ops, void *ctx,
			  size_t user_bytes)
{
	memset(tr, 0, sizeof(*tr));
	tr->ops = ops;
	tr->ctx = ctx;
	tr->stride = sizeof(struct rt_span) + (user_bytes + 7) / 8 * 8;
	tr->calls_max = RT_SPAN_CALLS_MAX;
}

void rt_span_thread_free(struct rt_span_thread *t)
{
	free(t->calls.frames);
	free(t->marked.frames);
	memset(t, 0, sizeof(*t));
}

enum rt_span_end rt_span_end_of_flags(uint32_t flags)
{
	if (flags & RT_FUNC_F_UNWOUND)
		return RT_SPAN_UNWOUND;
	if (flags & RT_FUNC_F_THREAD_ENDED)
		return RT_SPAN_THREAD_ENDED;
	if (flags & RT_FUNC_F_EXITED)
		return RT_SPAN_EXITED;
	return RT_SPAN_RETURNED;
}

const char *rt_span_end_mark(enum rt_span_end how, enum rt_span_kind kind)
{
	switch (how) {
	case RT_SPAN_RETURNED:
		return NULL;
	case RT_SPAN_UNWOUND:
		return "unwound";
	case RT_SPAN_THREAD_ENDED:
		return "thread_ended";
	case RT_SPAN_EXITED:
		return "exited";
	case RT_SPAN_EXIT_LOST:
		return kind == RT_SPAN_MARKED ? "end_lost" : "exit_lost";
	case RT_SPAN_UNCLOSED:
		return "unclosed";
	}
	return NULL;
}

enum rt_span_input rt_span_input_of_site(const struct rt_site *site)
{
	if (!site)
		return RT_SPAN_NONE;
	switch (site->kind) {
	case RT_SITE_ENTER:
		return RT_SPAN_ENTER;
	case RT_SITE_EXIT:
		return RT_SPAN_EXIT;
	case RT_SITE_BEGIN:
		return RT_SPAN_BEGIN;
	case RT_SITE_END:
		return RT_SPAN_END;
	default:
		return RT_SPAN_NONE;
	}
}

enum rt_span_input rt_span_event_of_item(const struct rt_reader *rd, const struct rt_item *item,
					 struct rt_span_event *out)
{
	memset(out, 0, sizeof(*out));
	if (item->kind != RT_ITEM_TRACE || item->flags & RT_ITEM_NO_SITE)
		return RT_SPAN_NONE;
	const struct rt_site *site = rt_site_lookup(&rd->sites, item->site);
	out->input = rt_span_input_of_site(site);
	out->ts = (int64_t)item->counter;
	out->origin = item;
	if (out->input == RT_SPAN_ENTER || out->input == RT_SPAN_EXIT) {
		/* ringtrace/format.h: a0 the depth, a1 the flags, a4 the function, a5 the call site
		 */
		out->depth = item->args.a32[0];
		out->flags = item->args.a32[1];
		out->addr = item->args.a64[0];
		out->call_site = item->args.a64[1];
	} else if (out->input != RT_SPAN_NONE) {
		out->site = site;
	}
	return out->input;
}

static int report_orphan(struct rt_span_tracker *tr, void *thread, const struct rt_span_event *ev)
{
	return tr->ops->orphan ? tr->ops->orphan(tr->ctx, thread, ev) : 0;
}

static int report_too_deep(struct rt_span_tracker *tr, void *thread, const struct rt_span_event *ev)
{
	if (ev->input == RT_SPAN_ENTER)
		tr->calls_too_deep++;
	else
		tr->marked_too_deep++;
	return tr->ops->too_deep ? tr->ops->too_deep(tr->ctx, thread, ev) : 0;
}

/* End the innermost span of stack k of t. */
static int pop(struct rt_span_tracker *tr, struct rt_span_thread *t, struct rt_span_stack *k,
	       void *thread, int64_t end_ts, enum rt_span_end how,
	       const struct rt_span_event *own_end)
{
	int rc =
	    tr->ops->end(tr->ctx, thread, rt_span_at(tr, k, k->count - 1), end_ts, how, own_end);
	k->count--;
	/* calls skipped past the cap sat above a call that ends: they are over too */
	if (k == &t->calls)
		t->skipping_calls = 0;
	return rc;
}

/* End the spans of stack k of t above its first keep ones, innermost first. */
static int pop_down_to(struct rt_span_tracker *tr, struct rt_span_thread *t,
		       struct rt_span_stack *k, void *thread, uint32_t keep, int64_t end_ts,
		       enum rt_span_end how)
{
	while (k->count > keep) {
		int rc = pop(tr, t, k, thread, end_ts, how, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Close, as exit lost, the open calls of t deeper than depth (or at depth
 * too, when at_depth).
 */
static int close_deeper(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread,
			uint32_t depth, int at_depth, int64_t ts)
{
	struct rt_span_stack *calls = &t->calls;
	while (calls->count) {
		uint32_t open = rt_span_at(tr, calls, calls->count - 1)->depth;
		if (open < depth || (open == depth && !at_depth))
			return 0;
		int rc = pop(tr, t, calls, thread, ts, RT_SPAN_EXIT_LOST, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

/* A new innermost span on stack k (of at most max), NULL when it cannot grow; zeroed. */
static struct rt_span *push(struct rt_span_tracker *tr, struct rt_span_stack *k, uint32_t max)
{
	if (k->count == k->capacity) {
		uint64_t capacity = k->capacity ? 2ull * k->capacity : FIRST_CAPACITY;
		if (capacity > max)
			capacity = max;
		unsigned char *frames = realloc(k->frames, (size_t)capacity * tr->stride);
		if (!frames)
			return NULL;
		k->frames = frames;
		k->capacity = (uint32_t)capacity;
	}
	struct rt_span *span = rt_span_at(tr, k, k->count++);
	memset(span, 0, tr->stride);
	return span;
}

static int enter(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread,
		 const struct rt_span_event *ev)
{
	if (t->skipping_calls) {
		if (ev->depth >= t->skip_depth)
			return report_too_deep(tr, thread, ev);
		t->skipping_calls = 0; /* a shallower call: the skipped ones are over */
	}
	int rc = close_deeper(tr, t, thread, ev->depth, 1, ev->ts);
	if (rc)
		return rc;
	if (t->calls.count >= tr->calls_max) {
		t->skipping_calls = 1;
		t->skip_depth = ev->depth;
		return report_too_deep(tr, thread, ev);
	}
	struct rt_span *span = push(tr, &t->calls, tr->calls_max);
	if (!span)
		return -ENOMEM;
	span->kind = RT_SPAN_CALL;
	span->depth = ev->depth;
	span->addr = ev->addr;
	span->begin_ts = ev->ts;
	return tr->ops->begin ? tr->ops->begin(tr->ctx, thread, span, ev) : 0;
}

static int leave(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread,
		 const struct rt_span_event *ev)
{
	if (t->skipping_calls) {
		if (ev->depth >= t->skip_depth) {
			/* a skipped call's exit; the shallowest one's ends the skipping */
			if (ev->depth == t->skip_depth)
				t->skipping_calls = 0;
			return 0;
		}
		t->skipping_calls = 0;
	}
	int rc = close_deeper(tr, t, thread, ev->depth, 0, ev->ts);
	if (rc)
		return rc;
	struct rt_span_stack *calls = &t->calls;
	if (calls->count && rt_span_at(tr, calls, calls->count - 1)->depth == ev->depth) {
		if (rt_span_at(tr, calls, calls->count - 1)->addr == ev->addr)
			return pop(tr, t, calls, thread, ev->ts, rt_span_end_of_flags(ev->flags),
				   ev);
		/* another function's call at this depth: its exit is missing */
		if ((rc = pop(tr, t, calls, thread, ev->ts, RT_SPAN_EXIT_LOST, NULL)) != 0)
			return rc;
	}
	return report_orphan(tr, thread, ev);
}

static int begin_marked(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread,
			const struct rt_span_event *ev)
{
	if (t->marked.count >= RT_SPAN_MARKED_MAX) {
		t->skip_marked++;
		return report_too_deep(tr, thread, ev);
	}
	struct rt_span *span = push(tr, &t->marked, RT_SPAN_MARKED_MAX);
	if (!span)
		return -ENOMEM;
	span->kind = RT_SPAN_MARKED;
	span->site = ev->site;
	span->begin_ts = ev->ts;
	return tr->ops->begin ? tr->ops->begin(tr->ctx, thread, span, ev) : 0;
}

static int end_marked(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread,
		      const struct rt_span_event *ev)
{
	if (t->skip_marked) {
		t->skip_marked--; /* the latest skipped span's end */
		return 0;
	}
	struct rt_span_stack *marked = &t->marked;
	for (uint32_t i = marked->count; i > 0; i--) {
		if (rt_site_same_tag(rt_span_at(tr, marked, i - 1)->site, ev->site)) {
			/* the spans begun after it never ended: closed first, so that all nest */
			int rc = pop_down_to(tr, t, marked, thread, i, ev->ts, RT_SPAN_EXIT_LOST);
			return rc ? rc : pop(tr, t, marked, thread, ev->ts, RT_SPAN_RETURNED, ev);
		}
	}
	return report_orphan(tr, thread, ev);
}

int rt_span_feed(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread,
		 const struct rt_span_event *ev)
{
	rt_span_saw(t, ev->ts);
	switch (ev->input) {
	case RT_SPAN_ENTER:
		return enter(tr, t, thread, ev);
	case RT_SPAN_EXIT:
		return leave(tr, t, thread, ev);
	case RT_SPAN_BEGIN:
		return begin_marked(tr, t, thread, ev);
	case RT_SPAN_END:
		return end_marked(tr, t, thread, ev);
	case RT_SPAN_NONE:
		break;
	}
	return 0;
}

int rt_span_close_unseen(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread,
			 const struct rt_span_event *ev)
{
	if (ev->input != RT_SPAN_ENTER && ev->input != RT_SPAN_EXIT)
		return 0;
	int is_enter = ev->input == RT_SPAN_ENTER;
	if (t->skipping_calls) {
		if (ev->depth > t->skip_depth || (is_enter && ev->depth == t->skip_depth))
			return 0;
		t->skipping_calls = 0;
		if (ev->depth == t->skip_depth)
			return 0;
	}
	int rc = close_deeper(tr, t, thread, ev->depth, is_enter, ev->ts);
	if (rc || is_enter)
		return rc;
	/* an exit at the depth of an open call of another function: that call is over */
	struct rt_span_stack *calls = &t->calls;
	if (calls->count && rt_span_at(tr, calls, calls->count - 1)->depth == ev->depth &&
	    rt_span_at(tr, calls, calls->count - 1)->addr != ev->addr)
		return pop(tr, t, calls, thread, ev->ts, RT_SPAN_EXIT_LOST, NULL);
	return 0;
}

int rt_span_finish(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread)
{
	int rc = pop_down_to(tr, t, &t->marked, thread, 0, t->last_ts, RT_SPAN_UNCLOSED);
	if (!rc)
		rc = pop_down_to(tr, t, &t->calls, thread, 0, t->last_ts, RT_SPAN_UNCLOSED);
	t->skipping_calls = 0;
	t->skip_marked = 0;
	return rc;
}
