/*
 * call_tree.c - per-thread stacks of open calls, from enter and exit events
 * (call_tree.h).  Threads are found through an open-addressing table keyed
 * by source and tid.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "present/call_tree.h"
#include "present/function_names.h"
#include "symbols/demangle.h"

struct rt_call_tree {
	const struct rt_call_tree_ops *ops;
	void *ctx;
	struct rt_call_thread **threads; /* in the order first seen */
	size_t thread_count, thread_capacity;
	uint32_t *slots; /* index + 1 into threads, 0 empty; size a power of two */
	size_t slot_count;
};

struct rt_call_tree *rt_call_tree_new(const struct rt_call_tree_ops *ops, void *ctx)
{
	struct rt_call_tree *tree = calloc(1, sizeof(*tree));
	if (!tree)
		return NULL;
	tree->ops = ops;
	tree->ctx = ctx;
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
		const struct rt_call_thread *t = tree->threads[i];
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

static struct rt_call_thread *thread_of(struct rt_call_tree *tree, uint32_t source,
					const struct rt_reader *rd, int32_t tid)
{
	if (tree->slot_count) {
		size_t mask = tree->slot_count - 1;
		for (size_t s = slot_of(source, tid, mask); tree->slots[s]; s = (s + 1) & mask) {
			struct rt_call_thread *t = tree->threads[tree->slots[s] - 1];
			if (t->source == source && t->tid == tid)
				return t;
		}
	}
	/* a new thread: keep the table at most half full */
	if ((tree->thread_count + 1) * 2 > tree->slot_count && grow_slots(tree))
		return NULL;
	if (tree->thread_count == tree->thread_capacity) {
		size_t cap = tree->thread_capacity ? tree->thread_capacity * 2 : 16;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct rt_call_thread **threads = realloc(tree->threads, cap * sizeof(*threads));
		if (!threads)
			return NULL;
		tree->threads = threads;
		tree->thread_capacity = cap;
	}
	struct rt_call_thread *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->source = source;
	t->tid = tid;
	t->reader = rd;
	tree->threads[tree->thread_count++] = t;
	size_t mask = tree->slot_count - 1;
	size_t s = slot_of(source, tid, mask);
	while (tree->slots[s])
		s = (s + 1) & mask;
	tree->slots[s] = (uint32_t)tree->thread_count;
	return t;
}

int rt_call_item_kind(const struct rt_reader *rd, const struct rt_item *item)
{
	if (item->kind != RT_ITEM_TRACE || item->flags & RT_ITEM_NO_SITE)
		return 0;
	const struct rt_site *site = rt_site_lookup(&rd->sites, item->site);
	if (!site)
		return 0;
	return site->kind == RT_SITE_ENTER ? 1 : site->kind == RT_SITE_EXIT ? 2 : 0;
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

/* Close the top call of t at end. */
static void pop(struct rt_call_tree *tree, struct rt_call_thread *t, uint64_t end,
		enum rt_call_end how)
{
	struct rt_call_frame *f = &t->stack[t->depth - 1];
	tree->ops->leave(tree->ctx, t, f, end, how);
	if (t->depth > 1) {
		uint64_t ticks = end > f->enter_counter ? end - f->enter_counter : 0;
		t->stack[t->depth - 2].child_ticks += ticks;
	}
	t->depth--;
}

static int enter(struct rt_call_tree *tree, struct rt_call_thread *t, const struct rt_item *item)
{
	uint32_t depth = item->args.a32[0];
	while (t->depth && t->stack[t->depth - 1].depth >= depth)
		pop(tree, t, item->counter, RT_CALL_EXIT_LOST);
	if (t->depth == t->capacity) {
		size_t cap = t->capacity ? t->capacity * 2 : 32;
		struct rt_call_frame *stack = realloc(t->stack, cap * sizeof(*stack));
		if (!stack)
			return -ENOMEM;
		t->stack = stack;
		t->capacity = cap;
	}
	struct rt_call_frame *f = &t->stack[t->depth++];
	memset(f, 0, sizeof(*f));
	f->addr = item->args.a64[0];
	f->call_site = item->args.a64[1];
	f->enter_counter = item->counter;
	f->depth = depth;
	tree->ops->enter(tree->ctx, t, f);
	return 0;
}

static void leave(struct rt_call_tree *tree, struct rt_call_thread *t, const struct rt_item *item)
{
	uint32_t depth = item->args.a32[0];
	while (t->depth && t->stack[t->depth - 1].depth > depth)
		pop(tree, t, item->counter, RT_CALL_EXIT_LOST);
	if (t->depth && t->stack[t->depth - 1].depth == depth) {
		if (t->stack[t->depth - 1].addr == item->args.a64[0]) {
			pop(tree, t, item->counter, rt_call_end_of(item->args.a32[1]));
			return;
		}
		pop(tree, t, item->counter, RT_CALL_EXIT_LOST); /* another call: ours is lost */
	}
	tree->ops->stray_exit(tree->ctx, t, item);
}

int rt_call_tree_feed(struct rt_call_tree *tree, uint32_t source, const struct rt_reader *rd,
		      const struct rt_item *item)
{
	struct rt_call_thread *t = NULL;
	if (item->tid) {
		t = thread_of(tree, source, rd, item->tid);
		if (!t)
			return -ENOMEM;
		if (item->flags & RT_ITEM_TIMED && !t->timed) {
			t->first_counter = item->counter;
			t->timed = 1;
		}
		if (item->flags & RT_ITEM_TIMED && item->counter > t->last_counter)
			t->last_counter = item->counter;
	}
	int kind = t ? rt_call_item_kind(rd, item) : 0;
	if (kind == 1)
		return enter(tree, t, item);
	if (kind == 2)
		leave(tree, t, item);
	else if (tree->ops->other)
		tree->ops->other(tree->ctx, t, rd, item);
	return 0;
}

void rt_call_tree_close_lost(struct rt_call_tree *tree, uint32_t source, const struct rt_reader *rd,
			     const struct rt_item *item)
{
	struct rt_call_thread *t = item->tid ? thread_of(tree, source, rd, item->tid) : NULL;
	int kind = t ? rt_call_item_kind(rd, item) : 0;
	if (!kind)
		return;
	uint32_t depth = item->args.a32[0];
	while (t->depth && t->stack[t->depth - 1].depth > depth)
		pop(tree, t, item->counter, RT_CALL_EXIT_LOST);
	if (t->depth && t->stack[t->depth - 1].depth == depth &&
	    (kind == 1 || t->stack[t->depth - 1].addr != item->args.a64[0]))
		pop(tree, t, item->counter, RT_CALL_EXIT_LOST);
}

void rt_call_tree_finish(struct rt_call_tree *tree)
{
	for (size_t i = 0; i < tree->thread_count; i++) {
		struct rt_call_thread *t = tree->threads[i];
		while (t->depth)
			pop(tree, t, t->last_counter, RT_CALL_OPEN);
	}
}

size_t rt_call_tree_threads(const struct rt_call_tree *tree, struct rt_call_thread ***threads)
{
	*threads = tree->threads;
	return tree->thread_count;
}

void rt_call_tree_free(struct rt_call_tree *tree)
{
	if (!tree)
		return;
	for (size_t i = 0; i < tree->thread_count; i++) {
		free(tree->threads[i]->stack);
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
