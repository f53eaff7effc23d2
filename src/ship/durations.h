/*
 * durations.h - how long the spans of a trace file took, given on their
 * ends: an exit's time since its enter, an RT_END's since the RT_BEGIN of
 * its tag, on the same thread, paired by the span tracker
 * (event/span_tracker.h) as every view pairs them.  Only a span that
 * returned has a duration: a call the library closed for the program (a
 * flagged exit), an end with nothing open to close, and a source without
 * its clock give none.
 */
#ifndef RT_SHIP_DURATIONS_H
#define RT_SHIP_DURATIONS_H

#include <stdint.h>

#include "analyze/threads.h"
#include "event/event.h"
#include "event/span_tracker.h"

struct rt_ship_durations {
	struct rt_analyze_threads threads;
	struct rt_span_tracker tracker;
	struct rt_span_thread *states; /* per thread, indexed as threads */
	size_t state_capacity;
	int64_t *taking; /* where the event being taken puts its duration */
};

void rt_ship_durations_init(struct rt_ship_durations *d);
void rt_ship_durations_free(struct rt_ship_durations *d);

/* Take ev (in time order); *dur_ns: the span ev ends took, or -1.  0, or -ENOMEM. */
int rt_ship_durations_take(struct rt_ship_durations *d, const struct rt_event *ev, int64_t *dur_ns);

#endif /* RT_SHIP_DURATIONS_H */
