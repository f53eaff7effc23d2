/*
 * durations.c - open spans per thread, two stacks each (calls, marked
 * spans), as in `analyze spans`.
 */
#include <errno.h>
#include <stdlib.h>

#include "analyze/grow.h"
#include "ship/durations.h"

#define DEPTH_MAX 1024u

struct frame {
	uint64_t addr;		    /* a call's function */
	const struct rt_site *site; /* a marked span's begin: its tag names it */
	int64_t start_ns;
};

struct stack {
	struct frame *frames;
	size_t capacity;
	uint32_t depth;
	uint32_t skipped; /* spans past DEPTH_MAX, still open */
};

struct rt_ship_thread_spans {
	struct stack calls, marked;
};

void rt_ship_durations_init(struct rt_ship_durations *d)
{
	rt_analyze_threads_init(&d->threads);
	d->states = NULL;
	d->state_capacity = 0;
}

void rt_ship_durations_free(struct rt_ship_durations *d)
{
	for (size_t i = 0; i < d->state_capacity; i++) {
		free(d->states[i].calls.frames);
		free(d->states[i].marked.frames);
	}
	free(d->states);
	rt_analyze_threads_free(&d->threads);
	d->states = NULL;
	d->state_capacity = 0;
}

static int push(struct stack *k, struct frame f)
{
	if (k->depth == DEPTH_MAX) {
		k->skipped++;
		return 0;
	}
	if (k->depth == k->capacity &&
	    rt_analyze_grow((void **)&k->frames, &k->capacity, k->depth + 1, sizeof(*k->frames)))
		return -ENOMEM;
	k->frames[k->depth++] = f;
	return 0;
}

static int same(const struct frame *f, const struct rt_export_event *ev)
{
	if (ev->kind == RT_EXPORT_EXIT)
		return f->addr == ev->addr;
	return rt_site_same_tag(f->site, ev->site);
}

/* The end ev closes: the start of the span it closes, or -1 when it times none. */
static int64_t pop(struct stack *k, const struct rt_export_event *ev, int unclosed)
{
	if (k->skipped) {
		k->skipped--; /* the deepest open spans are the ones past the limit */
		return -1;
	}
	uint32_t at = k->depth;
	while (at > 0 && !same(&k->frames[at - 1], ev))
		at--;
	if (at == 0)
		return -1; /* nothing open to close */
	k->depth = at - 1;
	if (unclosed)
		return -1;
	int64_t start = k->frames[at - 1].start_ns;
	return ev->ts_ns > start ? ev->ts_ns - start : 0;
}

int rt_ship_durations_take(struct rt_ship_durations *d, const struct rt_export_event *ev,
			   int64_t *dur_ns)
{
	*dur_ns = -1;
	int marked = ev->kind == RT_EXPORT_TRACE && ev->site &&
		     (ev->site->kind == RT_SITE_BEGIN || ev->site->kind == RT_SITE_END);
	if (!marked && ev->kind != RT_EXPORT_ENTER && ev->kind != RT_EXPORT_EXIT)
		return 0;
	if (ev->raw_time)
		return 0; /* counter ticks are no durations */
	long thread = rt_analyze_thread(&d->threads, ev);
	if (thread < 0)
		return -ENOMEM;
	if ((size_t)thread >= d->state_capacity &&
	    rt_analyze_grow((void **)&d->states, &d->state_capacity, (size_t)thread + 1,
			    sizeof(*d->states)))
		return -ENOMEM;
	struct rt_ship_thread_spans *t = &d->states[thread];
	if (marked) {
		if (ev->site->kind == RT_SITE_BEGIN)
			return push(&t->marked,
				    (struct frame){.site = ev->site, .start_ns = ev->ts_ns});
		*dur_ns = pop(&t->marked, ev, 0);
		return 0;
	}
	if (ev->kind == RT_EXPORT_ENTER)
		return push(&t->calls, (struct frame){.addr = ev->addr, .start_ns = ev->ts_ns});
	*dur_ns = pop(&t->calls, ev, (ev->function_flags & RT_FUNC_F_CLOSED) != 0);
	return 0;
}
