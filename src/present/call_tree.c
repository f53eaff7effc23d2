/*
 * call_tree.c - per-thread stacks of open calls, from enter and exit events
 * (call_tree.h), paired by the span tracker (event/span_tracker.h), the rule
 * every view that pairs calls follows.  Threads are found through an
 * open-addressing table keyed by source and tid.
 *
 * Each thread's tracker state sits beside the thread the views see, whose
 * stack of frames (struct rt_call_frame, what a view reads and writes of an
 * open call) moves in step with the tracker's stack of calls: a frame is
 * pushed when the tracker reports a call's begin, popped after it reports
 * its end.  The views read that stack as an array, as they read the stacks
 * call_limits.c builds of the calls it shows, which no tracker pairs.  The
 * tracker keeps every call however deep (calls_max raised): replay shows,
 * and report counts, every call, as they did before they paired through it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/span_tracker.h"
#include "present/call_tree.h"
#include "symbols/demangle.h"
#include "symbols/function_names.h"

/* A thread: what the views see of it, and the tracker's state of its calls. */
struct tree_thread {
	struct rt_call_thread view;
	struct rt_span_thread spans;
};

struct rt_call_tree {
	const struct rt_call_tree_ops *ops;
	void *ctx;
	struct rt_span_tracker tracker; /* nothing per open call: the frames are the views' */
	struct tree_thread **threads;	/* in the order first seen */
	size_t thread_count, thread_capacity;
	uint32_t *slots; /* index + 1 into threads, 0 empty; size a power of two */
	size_t slot_count;
};

/* The tracker's callbacks (below), which move the views' frames and call the views. */
static const struct rt_span_ops span_ops;

struct rt_call_tree *rt_call_tree_new(const struct rt_call_tree_ops *ops, void *ctx)
{
	struct rt_call_tree *tree = calloc(1, sizeof(*tree));
	if (!tree)
		return NULL;
	tree->ops = ops;
	tree->ctx = ctx;
	rt_span_tracker_init(&tree->tracker, &span_ops, tree, 0);
	/* every call is shown and counted, however deep: memory grows with the depth */
	tree->tracker.calls_max = UINT32_MAX;
	return tree;
}

static size_t slot_of(uint32_t source, int32_t tid, size_t mask)
{
	uint64_t h = ((uint64_t)source << 32 | (uint32_t)tid) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & mask;
}

static int grow_slots(struct rt_call_tree *tree)
{
	size_t count = tree->slot_count ? tree->slot_count * 2 : 64;
	uint32_t *slots = calloc(count, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < tree->thread_count; i++) {
		const struct rt_call_thread *t = &tree->threads[i]->view;
		size_t s = slot_of(t->source, t->tid, count - 1);
		while (slots[s])
			s = (s + 1) & (count - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(tree->slots);
	tree->slots = slots;
	tree->slot_count = count;
	return 0;
}

static struct tree_thread *thread_of(struct rt_call_tree *tree, uint32_t source,
				     const struct rt_reader *rd, int32_t tid)
{
	if (tree->slot_count) {
		size_t mask = tree->slot_count - 1;
		for (size_t s = slot_of(source, tid, mask); tree->slots[s]; s = (s + 1) & mask) {
			struct tree_thread *t = tree->threads[tree->slots[s] - 1];
			if (t->view.source == source && t->view.tid == tid)
				return t;
		}
	}
	/* a new thread: keep the table at most half full */
	if ((tree->thread_count + 1) * 2 > tree->slot_count && grow_slots(tree))
		return NULL;
	if (tree->thread_count == tree->thread_capacity) {
		size_t cap = tree->thread_capacity ? tree->thread_capacity * 2 : 16;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct tree_thread **threads = realloc(tree->threads, cap * sizeof(*threads));
		if (!threads)
			return NULL;
		tree->threads = threads;
		tree->thread_capacity = cap;
	}
	struct tree_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->view.source = source;
	t->view.tid = tid;
	t->view.reader = rd;
	tree->threads[tree->thread_count++] = t;
	size_t mask = tree->slot_count - 1;
	size_t s = slot_of(source, tid, mask);
	while (tree->slots[s])
		s = (s + 1) & mask;
	tree->slots[s] = (uint32_t)tree->thread_count;
	return t;
}

enum rt_call_end rt_call_end_of(uint32_t flags)
{
	if (flags & RT_FUNC_F_UNWOUND)
		return RT_CALL_UNWOUND;
	if (flags & RT_FUNC_F_THREAD_ENDED)
		return RT_CALL_THREAD_ENDED;
	if (flags & RT_FUNC_F_EXITED)
		return RT_CALL_EXITED;
	return RT_CALL_RETURNED;
}

const char *rt_call_end_text(enum rt_call_end how)
{
	switch (how) {
	case RT_CALL_RETURNED:
		return "returned";
	case RT_CALL_UNWOUND:
		return "unwound";
	case RT_CALL_THREAD_ENDED:
		return "thread ended";
	case RT_CALL_EXITED:
		return "open at exit()";
	case RT_CALL_EXIT_LOST:
		return "exit not recorded";
	case RT_CALL_OPEN:
		return "not returned";
	}
	return "?";
}

/* How a call ended, in the views' words: the tracker's one for one. */
static enum rt_call_end call_end_of(enum rt_span_end how)
{
	switch (how) {
	case RT_SPAN_RETURNED:
		return RT_CALL_RETURNED;
	case RT_SPAN_UNWOUND:
		return RT_CALL_UNWOUND;
	case RT_SPAN_THREAD_ENDED:
		return RT_CALL_THREAD_ENDED;
	case RT_SPAN_EXITED:
		return RT_CALL_EXITED;
	case RT_SPAN_EXIT_LOST:
		return RT_CALL_EXIT_LOST;
	case RT_SPAN_UNCLOSED:
		break;
	}
	return RT_CALL_OPEN;
}

/* Room for one more frame on t's stack, so that a call's begin cannot fail. */
static int reserve_frame(struct rt_call_thread *t)
{
	if (t->depth < t->capacity)
		return 0;
	size_t cap = t->capacity ? t->capacity * 2 : 32;
	struct rt_call_frame *stack = realloc(t->stack, cap * sizeof(*stack));
	if (!stack)
		return -ENOMEM;
	t->stack = stack;
	t->capacity = cap;
	return 0;
}

/* A call began: its frame on top of the thread's stack (room reserved before the feed). */
static int call_begin(void *ctx, void *thread, struct rt_span *span, const struct rt_span_event *ev)
{
	struct rt_call_tree *tree = ctx;
	struct rt_call_thread *t = &((struct tree_thread *)thread)->view;
	struct rt_call_frame *f = &t->stack[t->depth++];
	memset(f, 0, sizeof(*f));
	f->addr = ev->addr;
	f->call_site = ev->call_site;
	f->enter_counter = (uint64_t)ev->ts;
	f->depth = ev->depth;
	tree->ops->enter(tree->ctx, t, f);
	return 0;
}

/* The top call ends at end_ts: the view sees it on top, then it pops into its caller's time. */
static int call_end(void *ctx, void *thread, struct rt_span *span, int64_t end_ts,
		    enum rt_span_end how, const struct rt_span_event *own_end)
{
	struct rt_call_tree *tree = ctx;
	struct rt_call_thread *t = &((struct tree_thread *)thread)->view;
	struct rt_call_frame *f = &t->stack[t->depth - 1];
	uint64_t end = (uint64_t)end_ts;
	tree->ops->leave(tree->ctx, t, f, end, call_end_of(how));
	if (t->depth > 1) {
		uint64_t ticks = end > f->enter_counter ? end - f->enter_counter : 0;
		t->stack[t->depth - 2].child_ticks += ticks;
	}
	t->depth--;
	return 0;
}

/* An exit whose enter is not in the trace. */
static int call_orphan(void *ctx, void *thread, const struct rt_span_event *ev)
{
	struct rt_call_tree *tree = ctx;
	tree->ops->stray_exit(tree->ctx, &((struct tree_thread *)thread)->view, ev->origin);
	return 0;
}

static const struct rt_span_ops span_ops = {
    .begin = call_begin, .end = call_end, .orphan = call_orphan};

int rt_call_tree_feed(struct rt_call_tree *tree, uint32_t source, const struct rt_reader *rd,
		      const struct rt_item *item)
{
	struct tree_thread *tt = NULL;
	if (item->tid) {
		tt = thread_of(tree, source, rd, item->tid);
		if (!tt)
			return -ENOMEM;
		struct rt_call_thread *t = &tt->view;
		if (item->flags & RT_ITEM_TIMED && !t->timed) {
			t->first_counter = item->counter;
			t->timed = 1;
		}
		if (item->flags & RT_ITEM_TIMED && item->counter > t->last_counter)
			t->last_counter = item->counter;
		/* the time its calls still open at the end end at */
		if (item->flags & RT_ITEM_TIMED)
			rt_span_saw(&tt->spans, (int64_t)t->last_counter);
	}
	/* marked spans are no calls: the views show them as the events they are */
	struct rt_span_event ev;
	enum rt_span_input input = tt ? rt_span_event_of_item(rd, item, &ev) : RT_SPAN_NONE;
	if (input == RT_SPAN_ENTER && reserve_frame(&tt->view))
		return -ENOMEM;
	if (input == RT_SPAN_ENTER || input == RT_SPAN_EXIT)
		return rt_span_feed(&tree->tracker, &tt->spans, tt, &ev);
	if (tree->ops->other)
		tree->ops->other(tree->ctx, tt ? &tt->view : NULL, rd, item);
	return 0;
}

void rt_call_tree_close_lost(struct rt_call_tree *tree, uint32_t source, const struct rt_reader *rd,
			     const struct rt_item *item)
{
	struct tree_thread *tt = item->tid ? thread_of(tree, source, rd, item->tid) : NULL;
	struct rt_span_event ev;
	if (tt && rt_span_event_of_item(rd, item, &ev) != RT_SPAN_NONE)
		(void)rt_span_close_unseen(&tree->tracker, &tt->spans, tt, &ev);
}

void rt_call_tree_finish(struct rt_call_tree *tree)
{
	for (size_t i = 0; i < tree->thread_count; i++)
		(void)rt_span_finish(&tree->tracker, &tree->threads[i]->spans, tree->threads[i]);
}

void rt_call_tree_free(struct rt_call_tree *tree)
{
	if (!tree)
		return;
	for (size_t i = 0; i < tree->thread_count; i++) {
		free(tree->threads[i]->view.stack);
		rt_span_thread_free(&tree->threads[i]->spans);
		free(tree->threads[i]);
	}
	free(tree->threads);
	free(tree->slots);
	free(tree);
}

static const char *call_name(struct rt_function_names *names, const struct rt_reader *rd,
			     uint64_t addr, uint64_t counter, char *buf, size_t size,
			     int short_form)
{
	struct rt_function_place place;
	memset(&place, 0, sizeof(place));
	if (names)
		rt_function_names_find(names, rd, addr, counter, &place);
	if (place.func && short_form) {
		rt_demangled_short(place.func, buf, size);
		return buf;
	}
	if (place.func) {
		size_t n = strlen(place.func);
		if (n >= size)
			n = size - 1;
		memcpy(buf, place.func, n);
		buf[n] = 0;
		return buf;
	}
	place.file = NULL;
	rt_function_place_text(&place, addr, buf, size);
	return buf;
}

const char *rt_call_name(struct rt_function_names *names, const struct rt_reader *rd, uint64_t addr,
			 uint64_t counter, char *buf, size_t size)
{
	return call_name(names, rd, addr, counter, buf, size, 0);
}

const char *rt_call_short_name(struct rt_function_names *names, const struct rt_reader *rd,
			       uint64_t addr, uint64_t counter, char *buf, size_t size)
{
	return call_name(names, rd, addr, counter, buf, size, 1);
}
