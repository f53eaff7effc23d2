/*
 * latency.c - `ringtrace analyze latency --from A --to B [--key argN]`:
 * the time from each event tagged A to its event tagged B.
 *
 * Without --key, per thread: an A waits for the next B of its thread.  An
 * A while one waits replaces it (the first is unmatched: the pair that
 * counts is the one nearest to its B); a B with none waiting is unmatched.
 * With --key argN, per process: an A waits for the B whose argument N has
 * its argument N's value, on any thread of its process (a request started
 * on one thread and answered on another).  An A whose key waits already
 * replaces it as above; at most LATENCY_PENDING_MAX keys wait, and past
 * that the one that waited longest is evicted, unmatched.
 *
 * Sites are classified once per (source, site id) by comparing their tags
 * with A and B, so the per-event work is a hash of two integers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/duration_rows.h"
#include "analyze/grow.h"
#include "analyze/html.h"
#include "analyze/id_table.h"
#include "analyze/pending_keys.h"
#include "analyze/threads.h"
#include "common/escape.h"

#define LATENCY_PENDING_MAX (1u << 20)
#define NAME_WIDTH_MIN 16u
#define NAME_WIDTH_MAX 40u

/* What a site is to the analysis: bits of a byte. */
#define CLASS_FROM 1u
#define CLASS_TO 2u

struct figures {
	struct rt_quantiles q;
	uint64_t unmatched_from, unmatched_to, evicted;
};

struct thread_state {
	struct figures f; /* --per-thread: B's durations; unmatched on the thread of each */
	int waiting;	  /* without --key: an A waits since since_ns */
	int64_t since_ns;
};

struct latency {
	const struct rt_analyze_options *options;
	size_t from_length, to_length;
	struct rt_id_table sites; /* (source, site id) -> classes */
	uint8_t *classes;
	size_t class_capacity;
	struct rt_analyze_threads threads;
	struct thread_state *states;
	size_t state_capacity;
	struct rt_pending_keys pending;
	struct figures all;
	uint64_t untimed;
	int finished;
	char name[512]; /* "A -> B" */
	/*
	 * skips_trace's answers by site: it is asked for every trace record,
	 * and comparing two tags each time was a sixth of the run.  A set's
	 * site tables stay where they are while it is read.
	 */
	struct {
		const struct rt_site *site;
		int skips;
	} skip_cache[64];
};

static int latency_check(const struct rt_analyze_options *options, char *message,
			 size_t message_size)
{
	if (!options->from_tag || !options->to_tag) {
		snprintf(
		    message, message_size,
		    "latency needs --from TAG and --to TAG: the events it measures from and to");
		return -EINVAL;
	}
	if (!options->from_tag[0] || !options->to_tag[0]) {
		snprintf(message, message_size, "latency: --from and --to take a tag, not ''");
		return -EINVAL;
	}
	return 0;
}

static int latency_open(void **state, const struct rt_analyze_context *context, char *message,
			size_t message_size)
{
	(void)message;
	(void)message_size;
	struct latency *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->options = context->options;
	l->from_length = strlen(l->options->from_tag);
	l->to_length = strlen(l->options->to_tag);
	rt_id_table_init(&l->sites);
	rt_analyze_threads_init(&l->threads);
	rt_pending_keys_init(&l->pending, LATENCY_PENDING_MAX);
	rt_quantiles_init(&l->all.q);
	snprintf(l->name, sizeof(l->name), "%s -> %s", l->options->from_tag, l->options->to_tag);
	*state = l;
	return 0;
}

static long classify(struct latency *l, const struct rt_event *ev)
{
	const struct rt_site *site = ev->site;
	unsigned c = 0;
	if (site->tag_length == l->from_length &&
	    memcmp(site->tag, l->options->from_tag, l->from_length) == 0)
		c |= CLASS_FROM;
	if (site->tag_length == l->to_length &&
	    memcmp(site->tag, l->options->to_tag, l->to_length) == 0)
		c |= CLASS_TO;
	long k = rt_id_table_add(&l->sites, ev->source, ev->site_id);
	if (k < 0 || rt_analyze_grow((void **)&l->classes, &l->class_capacity, l->sites.count,
				     sizeof(*l->classes)))
		return -1;
	l->classes[k] = (uint8_t)c;
	return (long)c;
}

/* Only events of the --from and --to tags are paired (classify). */
static int latency_skips_trace(void *state, const struct rt_site *site)
{
	struct latency *l = state;
	if (!site)
		return 1;
	/* neighbouring sites of a table in neighbouring entries */
	const size_t k =
	    (uintptr_t)site / sizeof(*site) % (sizeof(l->skip_cache) / sizeof(l->skip_cache[0]));
	if (l->skip_cache[k].site == site)
		return l->skip_cache[k].skips;
	const int skips = !((site->tag_length == l->from_length &&
			     memcmp(site->tag, l->options->from_tag, l->from_length) == 0) ||
			    (site->tag_length == l->to_length &&
			     memcmp(site->tag, l->options->to_tag, l->to_length) == 0));
	l->skip_cache[k].site = site;
	l->skip_cache[k].skips = skips;
	return skips;
}

static struct thread_state *state_of(struct latency *l, long thread)
{
	if ((size_t)thread >= l->state_capacity) {
		size_t before = l->state_capacity;
		if (rt_analyze_grow((void **)&l->states, &l->state_capacity, (size_t)thread + 1,
				    sizeof(*l->states)))
			return NULL;
		for (size_t i = before; i < l->state_capacity; i++)
			rt_quantiles_init(&l->states[i].f.q);
	}
	return &l->states[thread];
}

/* An A without its B, counted on the A's thread too. */
static void unmatched_from(struct latency *l, uint32_t thread, int evicted)
{
	l->all.unmatched_from++;
	l->all.evicted += (uint64_t)evicted;
	if (l->options->per_thread && thread < l->state_capacity) {
		l->states[thread].f.unmatched_from++;
		l->states[thread].f.evicted += (uint64_t)evicted;
	}
}

static void matched(struct latency *l, struct thread_state *t, int64_t since, int64_t now)
{
	uint64_t d = now > since ? (uint64_t)(now - since) : 0;
	/* out of memory only costs the quantiles their exactness */
	(void)rt_quantiles_add(&l->all.q, d);
	if (l->options->per_thread)
		(void)rt_quantiles_add(&t->f.q, d);
}

static int keyed(struct latency *l, const struct rt_event *ev, unsigned c, long thread,
		 struct thread_state *t)
{
	unsigned arg = (unsigned)l->options->key_arg;
	int has_key = arg < ev->nargs;
	uint64_t key = has_key ? ev->args[arg] : 0;
	struct rt_pending_key old;
	if (c & CLASS_TO) {
		if (has_key && rt_pending_keys_take(&l->pending, ev->source, key, &old)) {
			matched(l, t, old.ts_ns, ev->ts_ns);
		} else {
			l->all.unmatched_to++;
			t->f.unmatched_to++;
		}
	}
	if (c & CLASS_FROM) {
		if (!has_key) {
			unmatched_from(l, (uint32_t)thread, 0);
			return 0;
		}
		int rc = rt_pending_keys_put(&l->pending, ev->source, key, ev->ts_ns,
					     (uint32_t)thread, &old);
		if (rc < 0)
			return rc;
		if (rc != RT_PENDING_ADDED)
			unmatched_from(l, old.thread, rc == RT_PENDING_EVICTED);
	}
	return 0;
}

static int latency_event(void *state, const struct rt_event *ev)
{
	struct latency *l = state;
	if ((ev->kind != RT_EVENT_TRACE && ev->kind != RT_EVENT_LOG) || !ev->site)
		return 0;
	long k = rt_id_table_get(&l->sites, ev->source, ev->site_id);
	long c = k >= 0 ? (long)l->classes[k] : classify(l, ev);
	if (c <= 0)
		return c < 0 ? -ENOMEM : 0;
	if (ev->raw_time) {
		/* counter ticks are no durations: such a source is left out, and said so */
		l->untimed++;
		return 0;
	}
	long thread = rt_analyze_thread(&l->threads, ev);
	struct thread_state *t = thread < 0 ? NULL : state_of(l, thread);
	if (!t)
		return -ENOMEM;
	if (l->options->key_arg >= 0)
		return keyed(l, ev, (unsigned)c, thread, t);
	if (c & CLASS_TO) {
		if (t->waiting) {
			matched(l, t, t->since_ns, ev->ts_ns);
			t->waiting = 0;
		} else {
			l->all.unmatched_to++;
			t->f.unmatched_to++;
		}
	}
	if (c & CLASS_FROM) {
		if (t->waiting)
			unmatched_from(l, (uint32_t)thread, 0);
		t->waiting = 1;
		t->since_ns = ev->ts_ns;
	}
	return 0;
}

/* The A still waiting at the end never met its B. */
static void finish(struct latency *l)
{
	if (l->finished)
		return;
	l->finished = 1;
	for (size_t i = 0; i < l->threads.count && i < l->state_capacity; i++)
		if (l->states[i].waiting) {
			l->states[i].waiting = 0;
			unmatched_from(l, (uint32_t)i, 0);
		}
	struct rt_pending_key old;
	while (rt_pending_keys_pop_oldest(&l->pending, &old))
		unmatched_from(l, old.thread, 0);
}

static struct rt_duration_row row_of(struct latency *l, struct figures *f, long thread)
{
	struct rt_duration_row d = {
	    .name = l->name,
	    .name_length = strlen(l->name),
	    .q = &f->q,
	    .counts = {{"unmatched A", "unmatched_from", f->unmatched_from},
		       {"unmatched B", "unmatched_to", f->unmatched_to},
		       {"evicted", "evicted", f->evicted}},
	    .count_count = l->options->key_arg >= 0 ? 3 : 2,
	};
	if (thread >= 0) {
		const struct rt_analyze_thread *t = &l->threads.items[thread];
		d.has_thread = 1;
		d.pid = t->pid;
		d.tid = t->tid;
		d.thread = t->name;
		d.thread_length = t->name_length;
	}
	return d;
}

/* Thread rows by their total time, most first. */
static const struct latency *sorting;

static int compare_threads(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct figures *fx = &sorting->states[x].f, *fy = &sorting->states[y].f;
	if (fx->q.total != fy->q.total)
		return fx->q.total > fy->q.total ? -1 : 1;
	if (fx->q.count != fy->q.count)
		return fx->q.count > fy->q.count ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void describe(const struct latency *l, char *text, size_t size)
{
	if (l->options->key_arg >= 0)
		snprintf(text, size,
			 "From each '%s' to the '%s' whose argument %d has the same value, on "
			 "any thread of its process.",
			 rt_escaped(l->options->from_tag), rt_escaped(l->options->to_tag),
			 l->options->key_arg);
	else
		snprintf(text, size, "From each '%s' to the next '%s' on the same thread.",
			 rt_escaped(l->options->from_tag), rt_escaped(l->options->to_tag));
}

static int latency_report(void *state, const struct rt_analyze_report *report)
{
	struct latency *l = state;
	finish(l);
	size_t shown = 0;
	size_t *order = calloc(l->threads.count + 1, sizeof(*order));
	if (!order)
		return -ENOMEM;
	if (l->options->per_thread) {
		for (size_t i = 0; i < l->threads.count && i < l->state_capacity; i++) {
			const struct figures *f = &l->states[i].f;
			if (f->q.count || f->unmatched_from || f->unmatched_to)
				order[shown++] = i;
		}
		sorting = l;
		qsort(order, shown, sizeof(*order), compare_threads);
		if (l->options->top && shown > l->options->top)
			shown = l->options->top;
	}
	struct rt_duration_row all = row_of(l, &l->all, -1);
	struct rt_out *out = report->out;
	if (report->json) {
		rt_duration_row_json(out, &all);
		for (size_t i = 0; i < shown; i++) {
			struct rt_duration_row d =
			    row_of(l, &l->states[order[i]].f, (long)order[i]);
			rt_duration_row_json(out, &d);
		}
	} else {
		char text[1200];
		describe(l, text, sizeof(text));
		rt_out_printf(out, "%s\n\n", text);
		unsigned width = NAME_WIDTH_MIN;
		size_t n = strlen(l->name);
		if (n > width)
			width = n > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (unsigned)n;
		for (size_t i = 0; i < shown; i++) {
			const struct rt_analyze_thread *t = &l->threads.items[order[i]];
			n = 2 +
			    (size_t)snprintf(NULL, 0, "pid %d tid %d", (int)t->pid, (int)t->tid) +
			    (t->name_length ? t->name_length + 3 : 0);
			if (n > width)
				width = n > NAME_WIDTH_MAX ? NAME_WIDTH_MAX : (unsigned)n;
		}
		rt_duration_rows_header(out, width, &all);
		rt_duration_row_text(out, &all, width);
		rt_duration_histogram_text(out, &l->all.q, "    ");
		for (size_t i = 0; i < shown; i++) {
			struct rt_duration_row d =
			    row_of(l, &l->states[order[i]].f, (long)order[i]);
			rt_duration_row_text(out, &d, width);
			rt_duration_histogram_text(out, &l->states[order[i]].f.q, "      ");
		}
		rt_out_printf(
		    out,
		    "\n%llu '%s' without a '%s' (unmatched A: the trace ended, or a later "
		    "A replaced it%s), %llu '%s' without a '%s' (unmatched B).\n",
		    (unsigned long long)l->all.unmatched_from, rt_escaped(l->options->from_tag),
		    rt_escaped(l->options->to_tag),
		    l->options->key_arg >= 0 ? ", or it was the oldest of 1M keys waiting" : "",
		    (unsigned long long)l->all.unmatched_to, rt_escaped(l->options->to_tag),
		    rt_escaped(l->options->from_tag));
		if (l->untimed)
			rt_out_printf(out,
				      "%llu event%s of sources without clock metadata left out: "
				      "their times are raw counter ticks.\n",
				      (unsigned long long)l->untimed, l->untimed == 1 ? "" : "s");
	}
	if (report->html) {
		char text[1200];
		describe(l, text, sizeof(text));
		rt_html_section(report->html, "Latency", text);
		struct rt_duration_row *rows = calloc(shown + 1, sizeof(*rows));
		if (rows) {
			rows[0] = all;
			for (size_t i = 0; i < shown; i++)
				rows[i + 1] = row_of(l, &l->states[order[i]].f, (long)order[i]);
			rt_duration_rows_html(report->html, rows, shown + 1);
			free(rows);
		}
		if (l->all.q.count)
			rt_html_histogram(report->html, l->name, &l->all.q);
	}
	free(order);
	return 0;
}

static void latency_free(void *state)
{
	struct latency *l = state;
	if (!l)
		return;
	rt_quantiles_free(&l->all.q);
	for (size_t i = 0; i < l->state_capacity; i++)
		rt_quantiles_free(&l->states[i].f.q);
	free(l->states);
	free(l->classes);
	rt_id_table_free(&l->sites);
	rt_analyze_threads_free(&l->threads);
	rt_pending_keys_free(&l->pending);
	free(l);
}

const struct rt_analyzer rt_analyzer_latency = {
    .name = "latency",
    .summary = "the time from each --from TAG event to its --to TAG event",
    .check = latency_check,
    .open = latency_open,
    .event = latency_event,
    .skips_trace = latency_skips_trace,
    .report = latency_report,
    .free = latency_free,
};
