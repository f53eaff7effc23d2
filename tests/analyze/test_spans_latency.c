/*
 * test_spans_latency.c - the spans and latency analyzers on events made by
 * hand (analyze/spans.c, analyze/latency.c): exits lost (in recursion
 * too), calls closed by the library, open at the end, ends without a
 * start, the depth limit, marked spans by tag; latency's replaced starts,
 * unmatched ends, keys paired across threads, the bound on waiting keys.
 * Each run reports JSON rows into a temporary file, which the checks read
 * back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/test_site.h"
#include "events.h"
#include "decode/sites.h"

static const struct rt_analyzer *analyzer;
static struct rt_analyze_options options;
static void *state;

static void start(const struct rt_analyzer *a)
{
	analyzer = a;
	struct rt_trace_set set;
	memset(&set, 0, sizeof(set));
	struct rt_analyze_context context = {.options = &options, .set = &set};
	char message[128] = "";
	CHECK_EQ(a->open(&state, &context, message, sizeof(message)), 0);
}

/* The report, as text (JSON rows or the table); the caller frees it. */
static char *finish(int json)
{
	return analyze_report(analyzer, &state, "test_spans_latency", json);
}

/* An enter or exit at depth, as the library records them. */
static void call(enum rt_event_kind kind, int32_t tid, uint64_t addr, uint32_t depth, int64_t ns,
		 uint32_t flags)
{
	struct rt_event ev = analyze_event(kind, tid, ns);
	ev.addr = addr;
	ev.depth = depth;
	ev.function_flags = flags;
	/* named as a program without symbols would be: no module, the address */
	CHECK_EQ(analyzer->event(state, &ev), 0);
}

static struct rt_site site_of(uint8_t kind, const char *tag, unsigned nargs)
{
	return test_site(kind, tag, nargs);
}

static void traced(const struct rt_site *site, uint32_t site_id, uint32_t source, int32_t tid,
		   int64_t ns, uint64_t arg0)
{
	struct rt_event ev = analyze_event(RT_EVENT_TRACE, tid, ns);
	ev.source = source;
	ev.pid = 100 + (int32_t)source;
	ev.site = site;
	/* as the builder marks the events of span sites */
	ev.span = site->kind == RT_SITE_BEGIN ? RT_EVENT_SPAN_BEGIN
		  : site->kind == RT_SITE_END ? RT_EVENT_SPAN_END
					      : RT_EVENT_SPAN_NONE;
	ev.site_id = site_id;
	ev.nargs = site->nargs;
	ev.args[0] = arg0;
	CHECK_EQ(analyzer->event(state, &ev), 0);
}

/* The JSON row that begins with prefix, or NULL. */
static const char *row(const char *text, const char *prefix)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			return p;
	return NULL;
}

/* Whether the row starting with prefix holds field (up to its line's end). */
static int has(const char *text, const char *prefix, const char *field)
{
	const char *r = row(text, prefix);
	if (!r) {
		fprintf(stderr, "no row %s in:\n%s", prefix, text);
		return 0;
	}
	const char *end = strchr(r, '\n');
	const char *f = strstr(r, field);
	if (!f || (end && f > end)) {
		fprintf(stderr, "row %.*s has no %s\n", (int)(end ? end - r : 100), r, field);
		return 0;
	}
	return 1;
}

static void spans_calls(void)
{
	memset(&options, 0, sizeof(options));
	options.key_arg = -1;
	options.arg = -1;
	start(&rt_analyzer_spans);
	/* thread 1: a > b > c, then a's exit: b's and c's exits were lost */
	call(RT_EVENT_ENTER, 1, 0xa, 0, 10, 0);
	call(RT_EVENT_ENTER, 1, 0xb, 1, 20, 0);
	call(RT_EVENT_ENTER, 1, 0xc, 2, 30, 0);
	call(RT_EVENT_EXIT, 1, 0xa, 0, 45, 0);
	/* thread 2: an exit before any enter, a call timed twice, one still open */
	call(RT_EVENT_EXIT, 2, 0xd, 0, 5, 0);
	call(RT_EVENT_ENTER, 2, 0xb, 0, 50, 0);
	call(RT_EVENT_EXIT, 2, 0xb, 0, 57, 0);
	call(RT_EVENT_ENTER, 2, 0xb, 0, 60, 0);
	call(RT_EVENT_EXIT, 2, 0xb, 0, 63, 0);
	call(RT_EVENT_ENTER, 2, 0xe, 0, 70, 0);
	/* thread 3: the library closed c for its thread's end: not timed */
	call(RT_EVENT_ENTER, 3, 0xc, 0, 100, 0);
	call(RT_EVENT_EXIT, 3, 0xc, 0, 150, RT_FUNC_F_THREAD_ENDED);
	/* thread 4: f -> f, the inner exit lost: the outer call is timed, the inner not */
	call(RT_EVENT_ENTER, 4, 0xf, 0, 200, 0);
	call(RT_EVENT_ENTER, 4, 0xf, 1, 210, 0);
	call(RT_EVENT_EXIT, 4, 0xf, 0, 290, 0);
	char *text = finish(1);
	CHECK(has(text, "{\"name\":\"0xa\"", "\"count\":1,\"total_ns\":35,\"min_ns\":35"));
	CHECK(has(text, "{\"name\":\"0xa\"", "\"unclosed\":0,\"orphan_ends\":0"));
	CHECK(has(text, "{\"name\":\"0xb\"", "\"count\":2,\"total_ns\":10,\"min_ns\":3"));
	CHECK(has(text, "{\"name\":\"0xb\"", "\"max_ns\":7,\"exact\":true,\"unclosed\":1"));
	CHECK(has(text, "{\"name\":\"0xc\"", "\"count\":0,\"total_ns\":0,\"min_ns\":0"));
	CHECK(has(text, "{\"name\":\"0xc\"", "\"unclosed\":2,\"orphan_ends\":0"));
	CHECK(has(text, "{\"name\":\"0xd\"", "\"count\":0,"));
	CHECK(has(text, "{\"name\":\"0xd\"", "\"unclosed\":0,\"orphan_ends\":1"));
	CHECK(has(text, "{\"name\":\"0xe\"", "\"unclosed\":1,\"orphan_ends\":0"));
	CHECK(has(text, "{\"name\":\"0xf\"", "\"count\":1,\"total_ns\":90,\"min_ns\":90"));
	CHECK(has(text, "{\"name\":\"0xf\"", "\"unclosed\":1,\"orphan_ends\":0"));
	CHECK(has(text, "{\"name\":\"0xa\"", "\"kind\":\"function\""));
	/* by total time, most first: a (35) before b (10) */
	CHECK(row(text, "{\"name\":\"0xa\"") < row(text, "{\"name\":\"0xb\""));
	free(text);
}

static void spans_depth_limit(void)
{
	memset(&options, 0, sizeof(options));
	options.key_arg = -1;
	start(&rt_analyzer_spans);
	/* 1030 nested calls of one function: 1024 timed, 6 past the limit */
	for (int i = 0; i < 1030; i++)
		call(RT_EVENT_ENTER, 1, 0x10, (uint32_t)i, 100 + i, 0);
	for (int i = 0; i < 1030; i++)
		call(RT_EVENT_EXIT, 1, 0x10, (uint32_t)(1029 - i), 2000 + i, 0);
	char *text = finish(1);
	CHECK(has(text, "{\"name\":\"0x10\"", "\"count\":1024,"));
	CHECK(has(text, "{\"name\":\"0x10\"", "\"unclosed\":6,\"orphan_ends\":0,\"overflow\":6"));
	free(text);
}

static void spans_marked(void)
{
	memset(&options, 0, sizeof(options));
	options.key_arg = -1;
	options.per_thread = 1;
	start(&rt_analyzer_spans);
	struct rt_site begin = site_of(RT_SITE_BEGIN, "req", 1),
		       end = site_of(RT_SITE_END, "req", 1);
	struct rt_site begin2 = site_of(RT_SITE_BEGIN, "parse", 0);
	struct rt_site end2 = site_of(RT_SITE_END, "parse", 0);
	struct rt_site plain = site_of(RT_SITE_TRACE, "req", 1);
	/* nested req spans: the end closes the innermost */
	traced(&begin, 1, 0, 7, 1000, 0);
	traced(&begin, 1, 0, 7, 1100, 0);
	traced(&plain, 5, 0, 7, 1150, 0); /* a plain trace of the same tag is no span */
	traced(&end, 2, 0, 7, 1200, 0);	  /* 100 */
	/* parse begun inside req, req ends first: parse unwound */
	traced(&begin2, 3, 0, 7, 1300, 0);
	traced(&end, 2, 0, 7, 1500, 0);	 /* 500 */
	traced(&end2, 4, 0, 7, 1600, 0); /* parse: nothing open, an orphan */
	/* another thread: an end without a start, and a start left open */
	traced(&end, 2, 0, 8, 50, 0);
	traced(&begin, 1, 0, 8, 2000, 0);
	char *text = finish(1);
	CHECK(has(text, "{\"name\":\"req\",\"kind\":\"span\",\"count\"",
		  "\"count\":2,\"total_ns\":600,\"min_ns\":100,\"p50_ns\":100,\"p90_ns\":500"));
	CHECK(has(text, "{\"name\":\"req\",\"kind\":\"span\",\"count\"",
		  "\"unclosed\":1,\"orphan_ends\":1"));
	CHECK(has(text, "{\"name\":\"parse\",\"kind\":\"span\",\"count\"",
		  "\"unclosed\":1,\"orphan_ends\":1"));
	CHECK(has(text, "{\"name\":\"req\",\"kind\":\"span\",\"pid\":100,\"tid\":7",
		  "\"count\":2,\"total_ns\":600,"));
	CHECK(has(text, "{\"name\":\"req\",\"kind\":\"span\",\"pid\":100,\"tid\":8",
		  "\"count\":0,\"total_ns\":0,"));
	CHECK(has(text, "{\"name\":\"req\",\"kind\":\"span\",\"pid\":100,\"tid\":8",
		  "\"unclosed\":1,\"orphan_ends\":1"));
	free(text);
}

static void spans_empty(void)
{
	memset(&options, 0, sizeof(options));
	options.key_arg = -1;
	start(&rt_analyzer_spans);
	char *text = finish(0);
	CHECK(strstr(text, "No span was found") != NULL);
	free(text);
	start(&rt_analyzer_spans);
	text = finish(1);
	CHECK_EQ(strlen(text), 0);
	free(text);
}

static void latency_same_thread(void)
{
	memset(&options, 0, sizeof(options));
	options.key_arg = -1;
	options.from_tag = "a";
	options.to_tag = "b";
	options.per_thread = 1;
	char message[128];
	CHECK(rt_analyzer_latency.check(&options, message, sizeof(message)) == 0);
	start(&rt_analyzer_latency);
	struct rt_site a = site_of(RT_SITE_TRACE, "a", 1), b = site_of(RT_SITE_TRACE, "b", 1);
	struct rt_site other = site_of(RT_SITE_TRACE, "c", 1);
	traced(&b, 2, 0, 1, 5, 0);  /* unmatched B */
	traced(&a, 1, 0, 1, 10, 0); /* replaced by the next A: unmatched */
	traced(&a, 1, 0, 1, 20, 0);
	traced(&other, 3, 0, 1, 25, 0);
	traced(&b, 2, 0, 2, 26, 0); /* another thread's B: unmatched there */
	traced(&b, 2, 0, 1, 30, 0); /* 10 */
	traced(&a, 1, 0, 2, 40, 0);
	traced(&b, 2, 0, 2, 70, 0); /* 30 */
	traced(&a, 1, 0, 2, 80, 0); /* open at the end: unmatched */
	char *text = finish(1);
	CHECK(has(text, "{\"name\":\"a -> b\",\"count\"",
		  "\"count\":2,\"total_ns\":40,\"min_ns\":10,\"p50_ns\":10,\"p90_ns\":30"));
	CHECK(has(text, "{\"name\":\"a -> b\",\"count\"",
		  "\"unmatched_from\":2,\"unmatched_to\":2}"));
	CHECK(has(text, "{\"name\":\"a -> b\",\"pid\":100,\"tid\":1,",
		  "\"count\":1,\"total_ns\":10,"));
	CHECK(has(text, "{\"name\":\"a -> b\",\"pid\":100,\"tid\":1,",
		  "\"unmatched_from\":1,\"unmatched_to\":1}"));
	CHECK(has(text, "{\"name\":\"a -> b\",\"pid\":100,\"tid\":2,",
		  "\"unmatched_from\":1,\"unmatched_to\":1}"));
	free(text);
	/* the command line: both tags needed */
	options.to_tag = NULL;
	message[0] = 0;
	CHECK(rt_analyzer_latency.check(&options, message, sizeof(message)) != 0);
	CHECK(strstr(message, "--to") != NULL);
}

static void latency_keyed(void)
{
	memset(&options, 0, sizeof(options));
	options.key_arg = 0;
	options.from_tag = "request";
	options.to_tag = "reply";
	start(&rt_analyzer_latency);
	struct rt_site a = site_of(RT_SITE_TRACE, "request", 1);
	struct rt_site b = site_of(RT_SITE_TRACE, "reply", 1);
	struct rt_site bare = site_of(RT_SITE_TRACE, "reply", 0);
	/* requests on thread 1, replies on threads 2 and 3, out of order */
	traced(&a, 1, 0, 1, 100, 7);
	traced(&a, 1, 0, 1, 110, 8);
	traced(&a, 1, 0, 1, 120, 9);
	traced(&b, 2, 0, 3, 150, 9); /* 30 */
	traced(&b, 2, 0, 2, 160, 7); /* 60 */
	traced(&b, 2, 0, 2, 170, 7); /* 7 again: unmatched */
	traced(&a, 1, 0, 1, 200, 8); /* 8 again: the first 8 replaced, unmatched */
	traced(&b, 2, 0, 3, 260, 8); /* 60 */
	/* the same key in another process is another request */
	traced(&a, 1, 1, 1, 300, 5);
	traced(&b, 2, 0, 2, 310, 5);	/* unmatched in process 0 */
	traced(&bare, 4, 0, 2, 320, 0); /* no argument 0: unmatched */
	char *text = finish(1);
	CHECK(has(text, "{\"name\":\"request -> reply\"",
		  "\"count\":3,\"total_ns\":150,\"min_ns\":30,\"p50_ns\":60,\"p90_ns\":60"));
	/* unmatched A: the replaced 8, process 1's 5; unmatched B: 7, 5, the bare one */
	CHECK(has(text, "{\"name\":\"request -> reply\"",
		  "\"unmatched_from\":2,\"unmatched_to\":3,\"evicted\":0}"));
	free(text);

	/* past the bound, the oldest waiting key is evicted */
	start(&rt_analyzer_latency);
	const uint64_t n = (1u << 20) + 10;
	for (uint64_t k = 0; k < n; k++)
		traced(&a, 1, 0, 1, (int64_t)k, k);
	for (uint64_t k = 0; k < n; k++)
		traced(&b, 2, 0, 2, (int64_t)(n + k), k);
	text = finish(1);
	CHECK(has(text, "{\"name\":\"request -> reply\"", "\"count\":1048576,"));
	CHECK(has(text, "{\"name\":\"request -> reply\"",
		  "\"unmatched_from\":10,\"unmatched_to\":10,\"evicted\":10}"));
	free(text);
}

int main(void)
{
	spans_calls();
	spans_depth_limit();
	spans_marked();
	spans_empty();
	latency_same_thread();
	latency_keyed();
	int failures = check_failure_count();
	printf("test_spans_latency: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
