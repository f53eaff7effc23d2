/*
 * by_arg_unit.c - `analyze by-arg` on events made by hand
 * (analyze/by_arg.c): the time rule (an event holds its thread until the
 * thread's next event; other threads and losses do not end it), spans to
 * the innermost end of the same name, orphan ends and unclosed spans,
 * signed and pointer values, values past the table's bound, events
 * without the argument, --per-thread and --top, no events, and what
 * check() refuses.  Each case's JSON rows go to a temporary file and are
 * looked for whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "decode/sites.h"

enum { S_TAG, S_OTHER, S_BEGIN, S_END, S_SIGNED, S_ONE_ARG, S_POINTER, S_BARE_BEGIN, SITES };

static struct rt_site sites[SITES];
static struct rt_reader *reader;
static struct rt_set_source source;
static struct rt_trace_set set;
static struct rt_analyze_options options;
static void *state;

static void start(const char *tag, int arg, int per_thread, unsigned top)
{
	memset(&options, 0, sizeof(options));
	options.tag = tag;
	options.arg = arg;
	options.key_arg = -1;
	options.per_thread = per_thread;
	options.top = top;
	char message[128];
	CHECK_EQ(rt_analyzer_by_arg.check(&options, message, sizeof(message)), 0);
	struct rt_analyze_context context = {.options = &options, .set = &set};
	CHECK_EQ(rt_analyzer_by_arg.open(&state, &context, message, sizeof(message)), 0);
}

static void send(const struct rt_event *ev)
{
	CHECK_EQ(rt_analyzer_by_arg.event(state, ev), 0);
}

/* A trace event of site with arguments a0, a1; raw: of a source without clock metadata. */
static void trace_of(uint32_t site, int32_t tid, int64_t ns, uint64_t a0, uint64_t a1, int raw)
{
	struct rt_event ev = analyze_event(RT_EVENT_TRACE, tid, ns);
	ev.raw_time = raw;
	ev.site_id = site;
	ev.site = &sites[site];
	ev.nargs = sites[site].nargs;
	ev.signed_args = sites[site].signed_args;
	ev.args[0] = a0;
	ev.args[1] = a1;
	if (sites[site].kind == RT_SITE_BEGIN)
		ev.span = RT_EVENT_SPAN_BEGIN;
	else if (sites[site].kind == RT_SITE_END)
		ev.span = RT_EVENT_SPAN_END;
	send(&ev);
}

static void trace(uint32_t site, int32_t tid, int64_t ns, uint64_t a0, uint64_t a1)
{
	trace_of(site, tid, ns, a0, a1, 0);
}

static char *finish(int json)
{
	return analyze_report(&rt_analyzer_by_arg, &state, "by_arg_unit", json);
}

/*
 * Thread 1: req(1)@100, other@150, req(2)@200, req(1)@260, enter@300.
 * Thread 2's events and a loss on thread 1 in between end nothing of
 * thread 1's.  req(1): 50 + 40; req(2): 60.  Thread 2's req(2)@400 has no
 * later event: unclosed.
 */
static void hold_rule(void)
{
	start("req", 0, 0, 0);
	trace(S_TAG, 1, 100, 1, 0);
	trace(S_OTHER, 2, 120, 0, 0);
	trace(S_OTHER, 1, 150, 0, 0);
	trace(S_TAG, 1, 200, 2, 0);
	struct rt_event loss = analyze_event(RT_EVENT_LOST, 1, 230);
	loss.count = 5;
	loss.reason = "dropped";
	send(&loss);
	trace(S_TAG, 1, 260, 1, 0);
	struct rt_event enter = analyze_event(RT_EVENT_ENTER, 1, 300);
	send(&enter);
	trace(S_TAG, 2, 400, 2, 0);
	char *text = finish(1);
	CHECK(analyze_has(
	    text, "{\"row\":\"summary\",\"tag\":\"req\",\"arg\":0,\"time\":\"hold\","
		  "\"events\":4,\"time_ns\":150,\"values\":2,\"other_events\":0,\"no_arg\":0,"
		  "\"orphan_ends\":0,\"too_deep\":0,\"untimed\":0}"));
	CHECK(analyze_has(
	    text, "{\"row\":\"value\",\"value\":1,\"type\":\"unsigned\",\"count\":2,"
		  "\"count_share\":0.500000,\"time_ns\":90,\"time_share\":0.600000,"
		  "\"timed\":2,\"unclosed\":0,\"p50_ns\":40,\"p99_ns\":50,\"exact\":true}"));
	CHECK(analyze_has(
	    text, "{\"row\":\"value\",\"value\":2,\"type\":\"unsigned\",\"count\":2,"
		  "\"count_share\":0.500000,\"time_ns\":60,\"time_share\":0.400000,"
		  "\"timed\":1,\"unclosed\":1,\"p50_ns\":60,\"p99_ns\":60,\"exact\":true}"));
	/* equal counts: the smaller value first */
	CHECK(strstr(text, "\"value\":1,") < strstr(text, "\"value\":2,"));
	free(text);
}

/*
 * Spans: B(1)@0, B(2)@10, an event of another tag, E@30 (ends 2: 20),
 * E@100 (ends 1: 100), E@110 (orphan), B(1)@200 never ended.  A span's
 * begin is not held: the other event at 15 ends nothing.
 */
static void span_rule(void)
{
	start("span", 0, 0, 0);
	trace(S_BEGIN, 1, 0, 1, 0);
	trace(S_BEGIN, 1, 10, 2, 0);
	trace(S_OTHER, 1, 15, 0, 0);
	trace(S_END, 1, 30, 0, 0);
	trace(S_END, 1, 100, 0, 0);
	trace(S_END, 1, 110, 0, 0);
	trace(S_BEGIN, 1, 200, 1, 0);
	trace(S_BEGIN, 2, 205, 3, 0);
	trace(S_END, 2, 305, 0, 0);
	char *text = finish(1);
	CHECK(analyze_has(
	    text, "{\"row\":\"summary\",\"tag\":\"span\",\"arg\":0,\"time\":\"span\","
		  "\"events\":4,\"time_ns\":220,\"values\":3,\"other_events\":0,\"no_arg\":0,"
		  "\"orphan_ends\":1,"));
	CHECK(analyze_has(text, "{\"row\":\"value\",\"value\":1,\"type\":\"unsigned\",\"count\":2,"
				"\"count_share\":0.500000,\"time_ns\":100,\"time_share\":0.454545,"
				"\"timed\":1,\"unclosed\":1,\"p50_ns\":100,"));
	CHECK(analyze_has(text, "{\"row\":\"value\",\"value\":2,\"type\":\"unsigned\",\"count\":1,"
				"\"count_share\":0.250000,\"time_ns\":20,"));
	CHECK(analyze_has(text, "{\"row\":\"value\",\"value\":3,\"type\":\"unsigned\",\"count\":1,"
				"\"count_share\":0.250000,\"time_ns\":100,"));
	free(text);

	start("span", 0, 0, 0);
	trace(S_BEGIN, 1, 0, 1, 0);
	trace(S_END, 1, 30, 0, 0);
	trace(S_END, 1, 40, 0, 0);
	text = finish(0);
	CHECK(analyze_has(text,
			  "by-arg: 'span' by argument 0: 1 events, 1 values, 30 ns (each span's "
			  "time to its end)\n"));
	CHECK(analyze_has(text, "note: 1 ends without an open 'span'\n"));
	free(text);
}

/*
 * A begin of the tag without argument N is not grouped, but it is a span
 * all the same: the end that follows it is its end, not that of the span
 * begun before it.  B(1)@0, bare B@10, E@20 (the bare one's), E@100: 1's
 * time is 100, and no end is an orphan.
 */
static void bare_begin(void)
{
	start("span", 0, 0, 0);
	trace(S_BEGIN, 1, 0, 1, 0);
	trace(S_BARE_BEGIN, 1, 10, 0, 0);
	trace(S_END, 1, 20, 0, 0);
	trace(S_END, 1, 100, 0, 0);
	char *text = finish(1);
	CHECK(analyze_has(
	    text, "{\"row\":\"summary\",\"tag\":\"span\",\"arg\":0,\"time\":\"span\","
		  "\"events\":1,\"time_ns\":100,\"values\":1,\"other_events\":0,\"no_arg\":1,"
		  "\"orphan_ends\":0,"));
	CHECK(analyze_has(text, "{\"row\":\"value\",\"value\":1,\"type\":\"unsigned\",\"count\":1,"
				"\"count_share\":1.000000,\"time_ns\":100,\"time_share\":1.000000,"
				"\"timed\":1,\"unclosed\":0,"));
	free(text);
}

/*
 * A source without clock metadata: its spans are not timed, but their ends
 * still close them; none is an orphan.  Only the end with no begin is.
 */
static void untimed_spans(void)
{
	start("span", 0, 0, 0);
	trace_of(S_BEGIN, 1, 1000, 1, 0, 1);
	trace_of(S_BEGIN, 1, 1010, 2, 0, 1);
	trace_of(S_END, 1, 1020, 0, 0, 1);
	trace_of(S_END, 1, 1030, 0, 0, 1);
	trace_of(S_END, 1, 1040, 0, 0, 1);
	char *text = finish(1);
	CHECK(analyze_has(text,
			  "{\"row\":\"summary\",\"tag\":\"span\",\"arg\":0,\"time\":\"span\","
			  "\"events\":2,\"time_ns\":0,\"values\":2,\"other_events\":0,\"no_arg\":0,"
			  "\"orphan_ends\":1,\"too_deep\":0,\"untimed\":2}"));
	free(text);
}

/*
 * 1025 spans open on a thread: the last is past the bound, counted and not
 * timed; the end that follows is its end, and the next one closes the
 * 1024th (value 1023, begun at 1023): 3000 - 1023.
 */
static void spans_past_the_bound(void)
{
	start("span", 0, 0, 2000);
	for (uint64_t v = 0; v <= 1024; v++)
		trace(S_BEGIN, 1, (int64_t)v, v, 0);
	trace(S_END, 1, 2000, 0, 0);
	trace(S_END, 1, 3000, 0, 0);
	char *text = finish(1);
	CHECK(analyze_has(text, "\"events\":1025,"));
	CHECK(analyze_has(text, "\"orphan_ends\":0,\"too_deep\":1,\"untimed\":0}"));
	CHECK(analyze_has(text, "{\"row\":\"value\",\"value\":1023,\"type\":\"unsigned\","
				"\"count\":1,\"count_share\":0.000976,\"time_ns\":1977,"));
	CHECK(analyze_has(text, "{\"row\":\"value\",\"value\":1024,\"type\":\"unsigned\","
				"\"count\":1,\"count_share\":0.000976,\"time_ns\":0,"
				"\"time_share\":0.000000,\"timed\":0,\"unclosed\":1,"));
	CHECK(analyze_has(text, "{\"row\":\"value\",\"value\":1022,\"type\":\"unsigned\","
				"\"count\":1,\"count_share\":0.000976,\"time_ns\":0,"
				"\"time_share\":0.000000,\"timed\":0,\"unclosed\":1,"));
	free(text);
}

/* Signed values as signed, pointers in hex in the table, argument 1 too. */
static void types(void)
{
	start("neg", 1, 0, 0);
	trace(S_SIGNED, 1, 0, 7, (uint64_t)-3);
	trace(S_SIGNED, 1, 10, 7, (uint64_t)-3);
	trace(S_SIGNED, 1, 20, 7, 4);
	char *text = finish(1);
	CHECK(analyze_has(text,
			  "{\"row\":\"value\",\"value\":-3,\"type\":\"signed\",\"count\":2,"
			  "\"count_share\":0.666667,\"time_ns\":20,\"time_share\":1.000000,"));
	CHECK(analyze_has(
	    text, "{\"row\":\"value\",\"value\":4,\"type\":\"signed\",\"count\":1,"
		  "\"count_share\":0.333333,\"time_ns\":0,\"time_share\":0.000000,\"timed\":0,"
		  "\"unclosed\":1,\"p50_ns\":0,"));
	free(text);

	start("ptr", 0, 0, 0);
	trace(S_POINTER, 1, 0, 0x7f0012345678ull, 0);
	trace(S_OTHER, 1, 5, 0, 0);
	text = finish(0);
	CHECK(analyze_has(text,
			  "\n  0x7f0012345678                    1  100.0%    0.005 us  100.0% "));
	free(text);
	start("ptr", 0, 0, 0);
	trace(S_POINTER, 1, 0, 0x7f0012345678ull, 0);
	text = finish(1);
	CHECK(analyze_has(text,
			  "{\"row\":\"value\",\"value\":139638282147448,\"type\":\"pointer\","));
	free(text);
}

/* 16384 values kept, the 10 next go to other; --top 3 sums the rest. */
static void values_past_the_bound(void)
{
	start("req", 0, 0, 3);
	int64_t t = 0;
	for (uint64_t v = 0; v < 16384 + 10; v++, t += 10)
		trace(S_TAG, 1, t, v, 0);
	trace(S_TAG, 1, t, 5, 0); /* a kept value seen again */
	trace(S_OTHER, 1, t + 1000, 0, 0);
	char *text = finish(1);
	CHECK(analyze_has(
	    text, "{\"row\":\"summary\",\"tag\":\"req\",\"arg\":0,\"time\":\"hold\","
		  "\"events\":16395,\"time_ns\":164940,\"values\":16384,\"other_events\":10,"));
	CHECK(analyze_has(text, "{\"row\":\"value\",\"value\":5,\"type\":\"unsigned\",\"count\":2,"
				"\"count_share\":0.000122,\"time_ns\":1010,"));
	CHECK(
	    analyze_has(text, "{\"row\":\"value\",\"value\":0,\"type\":\"unsigned\",\"count\":1,"));
	CHECK(
	    analyze_has(text, "{\"row\":\"value\",\"value\":1,\"type\":\"unsigned\",\"count\":1,"));
	CHECK(!strstr(text, "{\"row\":\"value\",\"value\":2,"));
	/* 16384 kept - 3 shown = 16381 in the rest: 16383 events of 10 ns... */
	CHECK(analyze_has(text, "{\"row\":\"rest\",\"values\":16381,\"count\":16381,"));
	CHECK(analyze_has(text, "{\"row\":\"other\",\"count\":10,\"count_share\":0.000610,"
				"\"time_ns\":100,"));
	free(text);
	start("req", 0, 0, 0);
	for (uint64_t v = 0; v < 16384 + 10; v++)
		trace(S_TAG, 1, (int64_t)v, v, 0);
	text = finish(0);
	CHECK(analyze_has(text,
			  "note: values past the first 16384 are counted together as other (10 "
			  "events)\n"));
	CHECK(analyze_has(text, "\n  (16364 more values)"));
	CHECK(analyze_has(text, "\n  (other values)"));
	free(text);
}

/* A site of the tag without argument N: said, not counted; it still ends a hold. */
static void no_arg(void)
{
	start("req", 1, 0, 0);
	trace(S_TAG, 1, 0, 1, 9);
	trace(S_ONE_ARG, 1, 25, 1, 0);
	char *text = finish(1);
	CHECK(analyze_has(text, "\"events\":1,\"time_ns\":25,\"values\":1,\"other_events\":0,"
				"\"no_arg\":1,"));
	CHECK(
	    analyze_has(text, "{\"row\":\"value\",\"value\":9,\"type\":\"unsigned\",\"count\":1,"));
	free(text);
}

static void per_thread(void)
{
	start("req", 0, 1, 0);
	trace(S_TAG, 2, 0, 1, 0);
	trace(S_TAG, 1, 5, 1, 0);
	trace(S_TAG, 1, 10, 1, 0);
	trace(S_OTHER, 2, 40, 0, 0);
	trace(S_OTHER, 1, 50, 0, 0);
	char *text = finish(1);
	CHECK(analyze_has(text, "{\"row\":\"value\",\"value\":1,\"type\":\"unsigned\",\"count\":3,"
				"\"count_share\":1.000000,\"time_ns\":85,"));
	CHECK(analyze_has(text,
			  "{\"row\":\"thread_value\",\"value\":1,\"type\":\"unsigned\",\"pid\":100,"
			  "\"tid\":1,\"thread\":\"\",\"count\":2,\"count_share\":0.666667,"
			  "\"time_ns\":45,"));
	CHECK(analyze_has(text,
			  "{\"row\":\"thread_value\",\"value\":1,\"type\":\"unsigned\",\"pid\":100,"
			  "\"tid\":2,\"thread\":\"\",\"count\":1,\"count_share\":0.333333,"
			  "\"time_ns\":40,"));
	free(text);
}

static void empty(void)
{
	start("req", 0, 0, 0);
	char *text = finish(1);
	CHECK(analyze_has(text, "{\"row\":\"summary\",\"tag\":\"req\",\"arg\":0,\"time\":\"hold\","
				"\"events\":0,\"time_ns\":0,\"values\":0,"));
	CHECK(!strstr(text, "\"row\":\"value\""));
	free(text);
}

static void refused(void)
{
	struct rt_analyze_options o;
	char message[256];
	memset(&o, 0, sizeof(o));
	o.arg = 0;
	CHECK_EQ(rt_analyzer_by_arg.check(&o, message, sizeof(message)), -EINVAL);
	CHECK(analyze_has(message, "--tag"));
	o.tag = "req";
	o.arg = -1;
	CHECK_EQ(rt_analyzer_by_arg.check(&o, message, sizeof(message)), -EINVAL);
	CHECK(analyze_has(message, "--arg"));
}

static void site(int index, const char *tag, uint8_t kind, uint8_t nargs, uint8_t signed_args,
		 uint8_t type)
{
	sites[index] = (struct rt_site){.valid = 1,
					.kind = kind,
					.tag = tag,
					.tag_length = (uint32_t)strlen(tag),
					.nargs = nargs,
					.signed_args = signed_args};
	for (unsigned i = 0; i < nargs; i++)
		sites[index].arg_types[i] = type;
}

int main(void)
{
	reader = calloc(1, sizeof(*reader));
	CHECK(reader != NULL);
	reader->sites.count = SITES;
	reader->sites.sites = sites;
	source.reader = reader;
	set.sources = &source;
	set.source_count = 1;
	site(S_TAG, "req", RT_SITE_TRACE, 2, 0, RT_ARG_UNSIGNED | 8);
	site(S_OTHER, "other", RT_SITE_TRACE, 2, 0, RT_ARG_UNSIGNED | 8);
	site(S_BEGIN, "span", RT_SITE_BEGIN, 1, 0, RT_ARG_UNSIGNED | 8);
	site(S_END, "span", RT_SITE_END, 0, 0, 0);
	site(S_SIGNED, "neg", RT_SITE_TRACE, 2, 3, RT_ARG_SIGNED | 4);
	site(S_ONE_ARG, "req", RT_SITE_TRACE, 1, 0, RT_ARG_UNSIGNED | 8);
	site(S_POINTER, "ptr", RT_SITE_TRACE, 1, 0, RT_ARG_POINTER | 8);
	site(S_BARE_BEGIN, "span", RT_SITE_BEGIN, 0, 0, 0);

	hold_rule();
	span_rule();
	bare_begin();
	untimed_spans();
	spans_past_the_bound();
	types();
	values_past_the_bound();
	no_arg();
	per_thread();
	empty();
	refused();
	free(reader);
	int failures = check_failure_count();
	printf("by_arg_unit: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
