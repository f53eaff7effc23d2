/*
 * losses.c - losses counted per thread and reason for an analysis's footer.
 */
#include "analyze/losses.h"
#include "common/escape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/html.h"

void rt_analyze_losses_init(struct rt_analyze_losses *l)
{
	memset(l, 0, sizeof(*l));
}

void rt_analyze_losses_free(struct rt_analyze_losses *l)
{
	free(l->items);
	rt_analyze_losses_init(l);
}

void rt_analyze_losses_add(struct rt_analyze_losses *l, const struct rt_event *ev)
{
	if (ev->kind != RT_EVENT_LOST)
		return;
	const char *reason = ev->reason ? ev->reason : "unknown";
	l->total += ev->count;
	for (size_t i = 0; i < l->count; i++) {
		struct rt_analyze_loss *x = &l->items[i];
		if (x->pid == ev->pid && x->tid == ev->tid && strcmp(x->reason, reason) == 0) {
			x->count += ev->count;
			x->estimated |= ev->estimated;
			return;
		}
	}
	if (l->count == l->capacity) {
		size_t capacity = l->capacity ? l->capacity * 2 : 8;
		struct rt_analyze_loss *grown = realloc(l->items, capacity * sizeof(*grown));
		if (!grown) {
			l->out_of_memory = 1;
			return;
		}
		l->items = grown;
		l->capacity = capacity;
	}
	struct rt_analyze_loss *x = &l->items[l->count++];
	memset(x, 0, sizeof(*x));
	x->pid = ev->pid;
	x->tid = ev->tid;
	x->reason = reason;
	x->count = ev->count;
	x->estimated = ev->estimated;
	if (ev->thread.s) {
		size_t n = ev->thread.length < sizeof(x->thread) - 1 ? ev->thread.length
								     : sizeof(x->thread) - 1;
		memcpy(x->thread, ev->thread.s, n);
	}
}

/* "pid 12 tid 34 (name)", or "pid 12, no thread's" for a process-wide loss. */
static void whose(const struct rt_analyze_loss *x, char *buf, size_t size)
{
	if (x->tid == 0)
		snprintf(buf, size, "pid %d, no thread's", (int)x->pid);
	else if (x->thread[0])
		snprintf(buf, size, "pid %d tid %d (%s)", (int)x->pid, (int)x->tid,
			 rt_escaped(x->thread));
	else
		snprintf(buf, size, "pid %d tid %d", (int)x->pid, (int)x->tid);
}

void rt_analyze_losses_report(const struct rt_analyze_losses *l, struct rt_out *out, int json)
{
	if (json) {
		for (size_t i = 0; i < l->count; i++) {
			const struct rt_analyze_loss *x = &l->items[i];
			rt_out_printf(out,
				      "{\"lost\":%llu,\"reason\":\"%s\",\"pid\":%d,\"tid\":%d,"
				      "\"estimated\":%s}\n",
				      (unsigned long long)x->count, x->reason, (int)x->pid,
				      (int)x->tid, x->estimated ? "true" : "false");
		}
		return;
	}
	if (!l->total) {
		rt_out_str(out, "\nNo event was lost.\n");
		return;
	}
	rt_out_printf(out, "\n%llu event%s lost; the figures above may miss them:\n",
		      (unsigned long long)l->total, l->total == 1 ? " was" : "s were");
	for (size_t i = 0; i < l->count; i++) {
		const struct rt_analyze_loss *x = &l->items[i];
		char who[96];
		whose(x, who, sizeof(who));
		rt_out_printf(out, "  %s: %s%llu %s\n", who, x->estimated ? "about " : "",
			      (unsigned long long)x->count, x->reason);
	}
	if (l->out_of_memory)
		rt_out_str(out, "  (out of memory: some threads are counted only in the total)\n");
}

void rt_analyze_losses_html(const struct rt_analyze_losses *l, struct rt_html *h)
{
	if (!l->total) {
		rt_html_section(h, "Losses", "No event was lost.");
		return;
	}
	char text[128];
	snprintf(text, sizeof(text), "%llu event%s lost; the figures above may miss them.",
		 (unsigned long long)l->total, l->total == 1 ? " was" : "s were");
	rt_html_section(h, "Losses", text);
	static const char *const headers[] = {"thread", "events lost", "reason"};
	const char **cells = calloc(l->count * 3 + 1, sizeof(*cells));
	char(*text_cells)[96] = calloc(l->count * 2 + 1, sizeof(*text_cells));
	if (!cells || !text_cells) {
		free(cells);
		free(text_cells);
		rt_html_paragraph(h, "(out of memory: the losses table is missing)");
		return;
	}
	for (size_t i = 0; i < l->count; i++) {
		const struct rt_analyze_loss *x = &l->items[i];
		whose(x, text_cells[2 * i], sizeof(text_cells[0]));
		snprintf(text_cells[2 * i + 1], sizeof(text_cells[0]), "%s%llu",
			 x->estimated ? "about " : "", (unsigned long long)x->count);
		cells[3 * i] = text_cells[2 * i];
		cells[3 * i + 1] = text_cells[2 * i + 1];
		cells[3 * i + 2] = x->reason;
	}
	rt_html_table(h, headers, 3, cells, l->count);
	free(cells);
	free(text_cells);
}
