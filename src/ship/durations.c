/*
 * durations.c - the span tracker's ends, as the durations of the events
 * that end spans (durations.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "analyze/grow.h"
#include "ship/durations.h"

/* The event taken ended a span: its duration when it returned (one that did not is -1). */
static int span_end(void *ctx, void *thread, struct rt_span *span, int64_t end_ts,
		    enum rt_span_end how, const struct rt_span_event *own_end)
{
	struct rt_ship_durations *d = ctx;
	if (how == RT_SPAN_RETURNED && d->taking)
		*d->taking = (int64_t)rt_span_duration(span, end_ts);
	return 0;
}

static const struct rt_span_ops span_ops = {.end = span_end};

void rt_ship_durations_init(struct rt_ship_durations *d)
{
	rt_analyze_threads_init(&d->threads);
	rt_span_tracker_init(&d->tracker, &span_ops, d, 0);
	d->states = NULL;
	d->state_capacity = 0;
	d->taking = NULL;
}

void rt_ship_durations_free(struct rt_ship_durations *d)
{
	for (size_t i = 0; i < d->state_capacity; i++)
		rt_span_thread_free(&d->states[i]);
	free(d->states);
	rt_analyze_threads_free(&d->threads);
	d->states = NULL;
	d->state_capacity = 0;
}

int rt_ship_durations_take(struct rt_ship_durations *d, const struct rt_event *ev, int64_t *dur_ns)
{
	*dur_ns = -1;
	struct rt_span_event span;
	if (rt_event_as_span(ev, &span) == RT_SPAN_NONE)
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
	d->taking = dur_ns;
	int rc = rt_span_feed(&d->tracker, &d->states[thread], NULL, &span);
	d->taking = NULL;
	return rc;
}
