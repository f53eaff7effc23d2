/*
 * analyze.c - `ringtrace analyze ANALYZER INPUT...`: answers instead of
 * event lists.  One pass over the set in time order; each item is
 * flattened as for export (event/event.h) and handed to the chosen
 * analyzer (analyze/analyzer.h), which reports rows as a table or JSON and,
 * with --html, plots on a self-contained page.  Losses are counted here,
 * for every analyzer alike, and reported after its rows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/analyzer.h"
#include "analyze/html.h"
#include "analyze/losses.h"
#include "cmd/cmd.h"
#include "common/parse.h"
#include "event/set_events.h"
#include "present/units.h"

#define ANALYZE_USAGE "ringtrace analyze ANALYZER [--json] [--html OUT.html] [OPTIONS] INPUT..."

/* In the order --help lists them; one per line. */
static const struct rt_analyzer *const analyzers[] = {
    &rt_analyzer_spans,	 &rt_analyzer_latency, &rt_analyzer_rate,
    &rt_analyzer_by_arg, &rt_analyzer_stalls,  NULL,
};

void rt_cmd_analyze_help(FILE *to)
{
	fprintf(to, "usage: " ANALYZE_USAGE "\n"
		    "\n"
		    "Read arenas and trace files (or directories of them) once, in time order,\n"
		    "and answer a question about them: how long spans take, the time from one\n"
		    "event to another, how often events happen, how an argument's values\n"
		    "share the events, where threads went quiet.  Every analysis ends with\n"
		    "the events lost in the inputs, which its figures may miss.\n"
		    "\n"
		    "Analyzers:\n");
	for (size_t i = 0; analyzers[i]; i++)
		fprintf(to, "  %-10s %s\n", analyzers[i]->name, analyzers[i]->summary);
	fprintf(to,
		"\n"
		"Options:\n"
		"  --json           one JSON object per row instead of a table\n"
		"  --html OUT.html  also write a self-contained page with the plots\n"
		"  --per-thread     spans, latency, by-arg: rows per thread as well\n"
		"  --top N          at most N rows where rows are ranked\n"
		"  --from TAG --to TAG\n"
		"                   latency: from each TAG event to the next TAG event\n"
		"  --key argN       latency: pair by argument N's value, on any thread\n"
		"  --tag TAG --arg N\n"
		"                   by-arg: group TAG's events by argument N (from 0)\n"
		"  --interval DUR   rate: the width of one bin (\"10ms\", \"1s\")\n"
		"  --min DUR        stalls: ignore gaps shorter than DUR\n"
		"  --tid TID        only the thread TID\n"
		"  --debug-dir DIR  look for separate debug files in DIR too (up to 16\n"
		"                   times), to name functions\n"
		"  --help           this text\n"
		"\n"
		"Quantiles are exact up to %u values and within 0.4%% past that (a\n"
		"log-linear sketch); rows say which.  Exit status: 0, 1 when the output\n"
		"could not be written, 2 for a bad command line or an input that cannot\n"
		"be read, 3 when an input was damaged (what it held is analyzed, its\n"
		"losses reported).  docs/ANALYZE.md describes every analyzer and field.\n",
		RT_QUANTILES_EXACT_MAX);
}

struct analyze_options {
	const struct rt_analyzer *analyzer;
	struct rt_analyze_options a;
	const char *html_path;
	char **paths;
	size_t path_count;
	int has_tid;
	int32_t tid;
	const char *debug_dirs[RT_CMD_DEBUG_DIRS_MAX];
	size_t debug_dir_count;
};

static int usage(const char *format, const char *arg)
{
	return rt_cmd_usage_error("analyze", ANALYZE_USAGE, format, arg);
}

/* "argN" or "N": the argument's index, 0..RT_MAX_ARGS-1. */
static int parse_arg_index(const char *s, int *out)
{
	uint64_t v;
	if (strncmp(s, "arg", 3) == 0)
		s += 3;
	if (rt_parse_u64(s, &v) || v >= RT_MAX_ARGS)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int duration_option(const char *value, const char *name, int64_t *out)
{
	uint64_t ns;
	if (rt_parse_duration(value, &ns) || ns == 0 || ns > INT64_MAX)
		return rt_cmd_usage_error("analyze", ANALYZE_USAGE,
					  "%s takes a duration with a unit, like 10ms: '%s'", name,
					  value);
	*out = (int64_t)ns;
	return 0;
}

/* One option that takes a value; 1 if argv[*i] was another one. */
static int value_option(int argc, char **argv, int *i, struct analyze_options *o)
{
	const char *v;
	int m;
	if ((m = rt_cmd_option(argc, argv, i, "--html", &v)) != 0) {
		o->html_path = v;
	} else if ((m = rt_cmd_option(argc, argv, i, "--from", &v)) != 0) {
		o->a.from_tag = v;
	} else if ((m = rt_cmd_option(argc, argv, i, "--to", &v)) != 0) {
		o->a.to_tag = v;
	} else if ((m = rt_cmd_option(argc, argv, i, "--tag", &v)) != 0) {
		o->a.tag = v;
	} else if ((m = rt_cmd_option(argc, argv, i, "--key", &v)) != 0) {
		if (m > 0 && parse_arg_index(v, &o->a.key_arg))
			return usage("--key takes an argument's index, arg0 to arg5: '%s'", v);
	} else if ((m = rt_cmd_option(argc, argv, i, "--arg", &v)) != 0) {
		if (m > 0 && parse_arg_index(v, &o->a.arg))
			return usage("--arg takes an argument's index, 0 to 5: '%s'", v);
	} else if ((m = rt_cmd_option(argc, argv, i, "--top", &v)) != 0) {
		uint64_t n;
		if (m > 0 && (rt_parse_u64(v, &n) || n == 0 || n > 1000000))
			return usage("--top takes a count from 1: '%s'", v);
		if (m > 0)
			o->a.top = (unsigned)n;
	} else if ((m = rt_cmd_option(argc, argv, i, "--interval", &v)) != 0) {
		if (m > 0 && duration_option(v, "--interval", &o->a.interval_ns))
			return RT_EXIT_USAGE;
	} else if ((m = rt_cmd_option(argc, argv, i, "--min", &v)) != 0) {
		if (m > 0 && duration_option(v, "--min", &o->a.min_gap_ns))
			return RT_EXIT_USAGE;
	} else {
		return 1;
	}
	if (m < 0)
		return usage("%s needs a value", argv[*i]);
	return 0;
}

static int parse_options(int argc, char **argv, struct analyze_options *o)
{
	int rc;
	int positional_only = 0;
	memset(o, 0, sizeof(*o));
	o->a.key_arg = -1;
	o->a.arg = -1;
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		if (argc < 2)
			return usage("which analyzer? %s",
				     "spans, latency, rate, by-arg or stalls");
		rt_cmd_analyze_help(stdout);
		return -1;
	}
	for (size_t k = 0; analyzers[k]; k++)
		if (strcmp(argv[1], analyzers[k]->name) == 0)
			o->analyzer = analyzers[k];
	if (!o->analyzer)
		return usage("no analyzer '%s': spans, latency, rate, by-arg or stalls", argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			argv[o->path_count++] = argv[i]; /* the inputs, packed at the front */
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_analyze_help(stdout);
			return -1;
		} else if (strcmp(arg, "--json") == 0) {
			o->a.json = 1;
		} else if (strcmp(arg, "--per-thread") == 0) {
			o->a.per_thread = 1;
		} else if ((rc = value_option(argc, argv, &i, o)) != 1) {
			if (rc)
				return rc;
		} else if ((rc = rt_cmd_reading_option(argc, argv, &i, "analyze", ANALYZE_USAGE,
						       &o->has_tid, &o->tid, o->debug_dirs,
						       &o->debug_dir_count)) != 0) {
			if (rc != 1)
				return rc;
		} else {
			return usage("unknown option '%s'", arg);
		}
	}
	o->paths = argv;
	if (o->path_count == 0)
		return usage("which arena or trace file?%s", "");
	char message[512] = "";
	if (o->analyzer->check && o->analyzer->check(&o->a, message, sizeof(message)))
		return usage("%s", message);
	return 0;
}

/* The walk: every item, flattened, to the analyzer; losses counted on the way. */
static int analyze_items(struct rt_trace_set *set, const struct analyze_options *o, void *state,
			 struct rt_event_builder *b, struct rt_analyze_losses *losses,
			 uint64_t *events)
{
	/* the set may be read again by another (tests run every analyzer on one set) */
	rt_trace_set_skip_trace(set, o->analyzer->skips_trace, state);
	int rc = rt_trace_set_start(set, o->has_tid ? o->tid : 0);
	if (rc) {
		rt_trace_set_skip_trace(set, NULL, NULL);
		return rc;
	}
	const struct rt_item *run;
	uint32_t source;
	size_t n;
	/* a run of one source's items at a time: one call to the set for them all */
	while (!rc && (n = rt_trace_set_run(set, &source, &run)) > 0) {
		for (size_t i = 0; i < n; i++) {
			const struct rt_item *item = &run[i];
			++*events;
			/* the set leaves out only trace files' records: an arena's come here */
			if (item->kind == RT_ITEM_TRACE && o->analyzer->skips_trace &&
			    o->analyzer->skips_trace(
				state,
				rt_site_lookup(&set->sources[source].reader->sites, item->site)))
				continue;
			const struct rt_event *ev = rt_event_build_kept(b, source, item);
			if (ev->kind == RT_EVENT_LOST)
				rt_analyze_losses_add(losses, ev);
			if ((rc = o->analyzer->event(state, ev)) != 0) {
				rt_trace_set_took(set, i + 1);
				break;
			}
		}
	}
	*events += rt_trace_set_skipped(set);
	/* state is freed after: the set must not call into it again */
	rt_trace_set_skip_trace(set, NULL, NULL);
	return rc ? rc : rt_trace_set_error(set);
}

/*
 * The page's header: the inputs as given and the options that change the
 * figures, so a page read later tells what it shows; nothing that differs
 * between two runs on the same inputs (no clock, no absolute path).
 */
static void page_summary(const struct analyze_options *o, struct rt_html *html, uint64_t events)
{
	char inputs[1024] = "", options[512] = "", count[32];
	size_t n = 0;
	for (size_t i = 0; i < o->path_count && n < sizeof(inputs); i++)
		n += (size_t)snprintf(inputs + n, sizeof(inputs) - n, "%s%s", i ? "\n" : "",
				      o->paths[i]);
	const struct rt_analyze_options *a = &o->a;
	char d[RT_UNITS_MAX];
	n = 0;
#define OPTION(...)                                                                                \
	if (n < sizeof(options))                                                                   \
	n += (size_t)snprintf(options + n, sizeof(options) - n, __VA_ARGS__)
	if (a->per_thread)
		OPTION(" --per-thread");
	if (a->top)
		OPTION(" --top %u", a->top);
	if (a->from_tag)
		OPTION(" --from %s", a->from_tag);
	if (a->to_tag)
		OPTION(" --to %s", a->to_tag);
	if (a->key_arg >= 0)
		OPTION(" --key arg%d", a->key_arg);
	if (a->tag)
		OPTION(" --tag %s", a->tag);
	if (a->arg >= 0)
		OPTION(" --arg %d", a->arg);
	if (a->interval_ns)
		OPTION(" --interval %s", rt_units_duration_short(d, sizeof(d), a->interval_ns));
	if (a->min_gap_ns)
		OPTION(" --min %s", rt_units_duration_short(d, sizeof(d), a->min_gap_ns));
	if (o->has_tid)
		OPTION(" --tid %d", (int)o->tid);
#undef OPTION
	snprintf(count, sizeof(count), "%llu", (unsigned long long)events);
	const char *names[] = {"analyzer", o->path_count == 1 ? "input" : "inputs", "options",
			       "items read"};
	const char *values[] = {o->analyzer->name, inputs, options[0] ? options + 1 : "none",
				count};
	rt_html_summary(html, names, values, sizeof(names) / sizeof(names[0]));
}

/* the status when the page could not be created (rt_cmd_output_status), else 0 */
static int page_status;

/* After the walk: rows, losses, and the page when asked for. */
static int analyze_report(const struct analyze_options *o, void *state,
			  const struct rt_analyze_losses *losses, struct rt_out *out,
			  uint64_t events)
{
	struct rt_analyze_report report = {.out = out, .json = o->a.json};
	if (o->html_path) {
		char title[128], message[512] = "";
		snprintf(title, sizeof(title), "ringtrace analyze %s", o->analyzer->name);
		report.html = rt_html_open(o->html_path, title, message, sizeof(message));
		if (!report.html) {
			page_status = rt_cmd_output_status(-errno);
			fprintf(stderr, "ringtrace analyze: %s\n", rt_escaped(message));
			return RT_CMD_REPORTED;
		}
		page_summary(o, report.html, events);
	}
	int rc = o->analyzer->report(state, &report);
	rt_analyze_losses_report(losses, out, o->a.json);
	if (report.html) {
		rt_analyze_losses_html(losses, report.html);
		int closed = rt_html_close(report.html);
		if (closed && !rc) {
			fprintf(stderr, "ringtrace analyze: %s: %s\n", rt_escaped(o->html_path),
				strerror(-closed));
			rc = RT_CMD_REPORTED;
		}
	}
	return rc;
}

/* Payloads shown marked (damaged logs, malformed I/O): damage, as dump counts it. */
static uint64_t payloads_damaged;

static int analyze_set(struct rt_trace_set *set, const void *options, struct rt_out *out)
{
	const struct analyze_options *o = options;
	struct rt_set_events set_events;
	if (rt_set_events_open(&set_events, set, o->debug_dirs, o->debug_dir_count))
		return -ENOMEM;
	struct rt_event_builder *b = set_events.builder;
	struct rt_analyze_context context = {.options = &o->a, .set = set};
	struct rt_analyze_losses losses;
	rt_analyze_losses_init(&losses);
	void *state = NULL;
	char message[512] = "";
	int rc = o->analyzer->open(&state, &context, message, sizeof(message));
	if (rc) {
		fprintf(stderr, "ringtrace analyze %s: %s\n", o->analyzer->name,
			rt_escaped(message[0] ? message : strerror(-rc)));
		rc = RT_CMD_REPORTED;
	} else {
		uint64_t events = 0;
		rc = analyze_items(set, o, state, b, &losses, &events);
		if (!rc)
			rc = analyze_report(o, state, &losses, out, events);
	}
	if (state)
		o->analyzer->free(state);
	rt_analyze_losses_free(&losses);
	payloads_damaged += rt_set_events_close(&set_events, "analyzed as read");
	return rc;
}

int rt_cmd_analyze_print(struct rt_trace_set *set, int argc, char **argv, struct rt_out *out)
{
	struct analyze_options o;
	if (parse_options(argc, argv, &o))
		return -EINVAL;
	return analyze_set(set, &o, out);
}

int rt_cmd_analyze(int argc, char **argv)
{
	struct analyze_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? RT_EXIT_OK : rc;
	int status = rt_cmd_print_set(o.paths, o.path_count, analyze_set, &o);
	if (page_status)
		return page_status;
	return status == RT_EXIT_OK && payloads_damaged ? RT_EXIT_DAMAGED : status;
}
