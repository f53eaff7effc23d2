/*
 * losses.c - losses counted per thread and reason for an analysis's footer.
 */
#include "analyze/losses.h"
#include "common/escape.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/html.h"
#include "analyze/table.h"

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

/*
 * The losses table: who lost (the text ends it with a colon, the page not),
 * how many (about: estimated from a damaged region's size), why.  JSON
 * gives the numbers apart.
 */
static const struct rt_column loss_columns[] = {
    {.flags = RT_COLUMN_TEXT, .header = "thread"},
    {.flags = RT_COLUMN_HTML, .header = "thread"},
    {.flags = RT_COLUMN_JSON, .key = "lost"},
    {.flags = RT_COLUMN_TEXT | RT_COLUMN_HTML, .header = "events lost", .gap = 1},
    {.flags = RT_COLUMN_TEXT | RT_COLUMN_HTML | RT_COLUMN_JSON,
     .header = "reason",
     .key = "reason",
     .gap = 1},
    {.flags = RT_COLUMN_JSON, .key = "pid"},
    {.flags = RT_COLUMN_JSON, .key = "tid"},
    {.flags = RT_COLUMN_JSON, .key = "estimated"},
};
#define LOSS_COLUMNS (sizeof(loss_columns) / sizeof(loss_columns[0]))
static const struct rt_table loss_table = {loss_columns, LOSS_COLUMNS, "  "};

/* The texts one row's cells point into. */
struct loss_texts {
	char who[96], who_colon[97], count[32];
};

static void loss_row(const struct rt_analyze_loss *x, struct loss_texts *t, struct rt_cell *cells)
{
	whose(x, t->who, sizeof(t->who));
	snprintf(t->who_colon, sizeof(t->who_colon), "%s:", t->who);
	snprintf(t->count, sizeof(t->count), "%s%llu", x->estimated ? "about " : "",
		 (unsigned long long)x->count);
	cells[0] = rt_cell_text(t->who_colon);
	cells[1] = rt_cell_text(t->who);
	cells[2] = rt_cell_u64(x->count, NULL);
	cells[3] = rt_cell_text(t->count);
	cells[4] = rt_cell_string(x->reason, strlen(x->reason), x->reason);
	cells[5] = rt_cell_i64(x->pid, NULL);
	cells[6] = rt_cell_i64(x->tid, NULL);
	cells[7] = rt_cell_bool(x->estimated);
}

void rt_analyze_losses_report(const struct rt_analyze_losses *l, struct rt_out *out, int json)
{
	struct rt_cell cells[LOSS_COLUMNS];
	struct loss_texts texts;
	if (json) {
		for (size_t i = 0; i < l->count; i++) {
			loss_row(&l->items[i], &texts, cells);
			rt_table_row_json(out, &loss_table, cells);
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
		loss_row(&l->items[i], &texts, cells);
		rt_table_row_text(out, &loss_table, cells, NULL);
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
	struct rt_cell *cells = calloc(l->count * LOSS_COLUMNS + 1, sizeof(*cells));
	struct loss_texts *texts = calloc(l->count + 1, sizeof(*texts));
	int rc = cells && texts ? 0 : -ENOMEM;
	for (size_t i = 0; i < l->count && !rc; i++)
		loss_row(&l->items[i], &texts[i], &cells[i * LOSS_COLUMNS]);
	if (!rc)
		rc = rt_table_html(h, &loss_table, cells, l->count);
	if (rc)
		rt_html_paragraph(h, "(out of memory: the losses table is missing)");
	free(cells);
	free(texts);
}
