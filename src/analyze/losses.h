/*
 * losses.h - the losses an analysis saw, so its numbers are never shown
 * without what might bias them.
 *
 * Counted per process, thread and reason as the loss items go by, and
 * reported after the analyzer's rows: a line per thread and reason in a
 * table, or one JSON object each ({"lost": N, "reason": ..., "pid": ...,
 * "tid": ..., "estimated": ...}).  Memory grows with the distinct
 * (thread, reason) pairs, not with the losses.
 */
#ifndef RT_ANALYZE_LOSSES_H
#define RT_ANALYZE_LOSSES_H

#include <stddef.h>
#include <stdint.h>

#include "common/output.h"
#include "event/event.h"

struct rt_html;

struct rt_analyze_loss {
	int32_t pid, tid;
	const char *reason; /* a static string: "overwritten", "dropped", "torn", "damaged" */
	uint64_t count;
	int estimated; /* some of count was estimated from a damaged region's size */
	char thread[32];
};

struct rt_analyze_losses {
	struct rt_analyze_loss *items;
	size_t count, capacity;
	uint64_t total;
	int out_of_memory; /* a pair could not be added: total still counts it */
};

void rt_analyze_losses_init(struct rt_analyze_losses *l);
void rt_analyze_losses_free(struct rt_analyze_losses *l);

/* Count ev when it is a loss (RT_EVENT_LOST); other events are ignored. */
void rt_analyze_losses_add(struct rt_analyze_losses *l, const struct rt_event *ev);

/* After the rows: the losses as a table's footer, or JSON rows. */
void rt_analyze_losses_report(const struct rt_analyze_losses *l, struct rt_out *out, int json);

/* The same, as a section of the page. */
void rt_analyze_losses_html(const struct rt_analyze_losses *l, struct rt_html *h);

#endif /* RT_ANALYZE_LOSSES_H */
