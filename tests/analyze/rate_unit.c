/*
 * rate_unit.c - `analyze rate` on events made by hand (analyze/rate.c):
 * bins past the bin cap merged by pairs and said, rows past the counters'
 * bound merged too, the default interval for a span, the tags of every
 * kind of event (lost sites, malformed I/O, span ends), ties in the
 * busiest bins, losses and events without a clock, and no events at all.
 * Each case's JSON rows go to a temporary file and are looked for whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "decode/sites.h"

#define SITES 600

static struct rt_site sites[SITES];
static char tags[SITES][16];
static struct rt_reader *reader;
static struct rt_set_source source;
static struct rt_trace_set set;
static struct rt_analyze_options options;
static void *state;

static void start(int64_t interval_ns)
{
	memset(&options, 0, sizeof(options));
	options.arg = -1;
	options.key_arg = -1;
	options.interval_ns = interval_ns;
	struct rt_analyze_context context = {.options = &options, .set = &set};
	char message[128];
	CHECK_EQ(rt_analyzer_rate.open(&state, &context, message, sizeof(message)), 0);
}

static void trace(uint32_t site, int32_t tid, int64_t ns)
{
	struct rt_event ev = analyze_event(RT_EVENT_TRACE, tid, ns);
	ev.site_id = site;
	ev.site = &sites[site];
	CHECK_EQ(rt_analyzer_rate.event(state, &ev), 0);
}

static void send(const struct rt_event *ev)
{
	CHECK_EQ(rt_analyzer_rate.event(state, ev), 0);
}

/* Report (JSON, or the table), free, and return the text (the caller frees). */
static char *finish(int json)
{
	return analyze_report(&rt_analyzer_rate, &state, "rate_unit", json);
}

/* --interval 1ns over 30000 ns: merged by pairs until at most 10000 bins (4 ns). */
static void bins_past_the_cap(void)
{
	start(1);
	for (int64_t t = 0; t < 30000; t++)
		trace(0, 1, t);
	for (int i = 0; i < 10; i++)
		trace(1, 1, 20001);
	char *text = finish(1);
	CHECK(analyze_has(
	    text, "{\"row\":\"bins\",\"events\":30010,\"interval_ns\":4,\"bins\":7500,"
		  "\"first_ns\":0,\"asked_interval_ns\":1,\"coarsened\":true,\"untimed\":0}"));
	/* every merged bin holds 4 events of t0; the one at 20000 the 10 of t1 too */
	CHECK(analyze_has(text,
			  "{\"row\":\"tag\",\"tag\":\"t0\",\"kind\":\"trace\",\"count\":30000,"
			  "\"mean_per_s\":1000000000.000,\"peak_per_s\":1000000000.000,"
			  "\"peak_at_ns\":0,\"interval_ns\":4}"));
	CHECK(analyze_has(
	    text, "{\"row\":\"thread\",\"pid\":100,\"tid\":1,\"thread\":\"\",\"count\":30010,"
		  "\"mean_per_s\":1000333333.333,\"peak_per_s\":3500000000.000,"
		  "\"peak_at_ns\":20000,\"interval_ns\":4}"));
	CHECK(analyze_has(text,
			  "{\"row\":\"busiest\",\"rank\":1,\"start_ns\":20000,\"end_ns\":20004,"
			  "\"count\":14,\"per_s\":3500000000.000,\"tag\":\"t1\",\"kind\":\"trace\","
			  "\"tag_count\":10,\"interval_ns\":4}"));
	/* then ties: the earliest bins first, their top tag the busiest row's */
	CHECK(analyze_has(text,
			  "{\"row\":\"busiest\",\"rank\":2,\"start_ns\":0,\"end_ns\":4,\"count\":4,"
			  "\"per_s\":1000000000.000,\"tag\":\"t0\""));
	CHECK(analyze_has(text, "\"rank\":10,\"start_ns\":32,"));
	CHECK(!strstr(text, "\"rank\":11,"));
	free(text);

	start(1);
	for (int64_t t = 0; t < 30000; t++)
		trace(0, 1, t);
	text = finish(0);
	CHECK(analyze_has(text, "rate: 30000 events in 7500 bins of 4 ns (30 us)\n"));
	CHECK(analyze_has(text,
			  "note: bins of 1 ns (--interval) would be more than 10000 bins: merged "
			  "to 4 ns\n"));
	free(text);
}

/*
 * 500 tags, each at 0 and at 999.99 ms, in 100 us bins: 10000 bins each,
 * 5M counters over the rows, past the bound of 4M: merged to 200 us.
 */
static void rows_past_the_counters(void)
{
	start(100000);
	for (uint32_t s = 0; s < 500; s++)
		trace(s, 1, 0);
	for (uint32_t s = 0; s < 500; s++)
		trace(s, 1, 999999999);
	char *text = finish(1);
	CHECK(analyze_has(text,
			  "{\"row\":\"bins\",\"events\":1000,\"interval_ns\":200000,\"bins\":5000,"
			  "\"first_ns\":0,\"asked_interval_ns\":100000,\"coarsened\":true,"));
	CHECK(analyze_has(text, "{\"row\":\"tag\",\"tag\":\"t0\",\"kind\":\"trace\",\"count\":2,"
				"\"mean_per_s\":2.000,\"peak_per_s\":5000.000,\"peak_at_ns\":0,"));
	CHECK(
	    analyze_has(text, "{\"row\":\"tag\",\"tag\":\"t499\",\"kind\":\"trace\",\"count\":2,"));
	CHECK(analyze_has(text, "{\"row\":\"busiest\",\"rank\":2,\"start_ns\":999800000,\"end_ns\":"
				"1000000000,\"count\":500,"));
	free(text);
	start(100000);
	for (uint32_t s = 0; s < 500; s++)
		trace(s, 1, 0);
	for (uint32_t s = 0; s < 500; s++)
		trace(s, 1, 999999999);
	text = finish(0);
	CHECK(analyze_has(text, "would be more than the counters' bound: merged to 200 us"));
	free(text);
}

/* Without --interval: the smallest 1, 2 or 5 x 10^k ns giving at most 100 bins. */
static void default_interval(void)
{
	start(0);
	trace(0, 1, 1000);
	trace(0, 2, 5000000);
	trace(1, 2, 1000000999); /* a span of 999999999 ns: 10 ms bins, 101 of them */
	char *text = finish(1);
	CHECK(analyze_has(text,
			  "{\"row\":\"bins\",\"events\":3,\"interval_ns\":10000000,\"bins\":101,"
			  "\"first_ns\":0,\"asked_interval_ns\":10000000,\"coarsened\":false,"));
	CHECK(analyze_has(text, "{\"row\":\"tag\",\"tag\":\"t0\",\"kind\":\"trace\",\"count\":2,"
				"\"mean_per_s\":1.980,\"peak_per_s\":200.000,\"peak_at_ns\":0,"));
	CHECK(analyze_has(
	    text, "{\"row\":\"thread\",\"pid\":100,\"tid\":2,\"thread\":\"\",\"count\":2,"));
	free(text);

	/* a span of 2001 ns: 50 ns bins (20 ns would make 101) */
	start(0);
	trace(0, 1, 7000);
	trace(0, 1, 9001);
	text = finish(1);
	CHECK(analyze_has(text, "\"interval_ns\":50,\"bins\":41,\"first_ns\":7000,"));
	free(text);

	/* one event: 1 ns, one bin */
	start(0);
	trace(0, 1, 123456789);
	text = finish(1);
	CHECK(analyze_has(text, "\"interval_ns\":1,\"bins\":1,\"first_ns\":123456789,"));
	free(text);
}

/* Every kind's tag; losses not counted; raw-clock events said, not binned. */
static void kinds(void)
{
	start(1000);
	trace(0, 1, 10);
	struct rt_event ev = analyze_event(RT_EVENT_TRACE, 1, 20);
	ev.site_id = 999; /* metadata lost */
	send(&ev);
	ev = analyze_event(RT_EVENT_LOG, 1, 30);
	send(&ev);
	ev = analyze_event(RT_EVENT_LOG, 1, 35);
	ev.site = &sites[SITES - 1];
	ev.site_id = SITES - 1;
	send(&ev);
	ev = analyze_event(RT_EVENT_ENTER, 2, 40);
	send(&ev);
	ev = analyze_event(RT_EVENT_EXIT, 2, 50);
	send(&ev);
	ev = analyze_event(RT_EVENT_IO, 2, 60);
	ev.io.ok = 1;
	ev.io.ev.op = RT_IO_READ;
	send(&ev);
	ev = analyze_event(RT_EVENT_IO, 2, 70);
	ev.io.ok = 0;
	send(&ev);
	trace(SITES - 2, 2, 80); /* a span's end */
	ev = analyze_event(RT_EVENT_LOST, 2, 80);
	ev.count = 1000;
	ev.reason = "overwritten";
	send(&ev);
	ev = analyze_event(RT_EVENT_TRACE, 3, 5);
	ev.site = &sites[0];
	ev.raw_time = 1;
	send(&ev);
	char *text = finish(1);
	CHECK(analyze_has(text, "{\"row\":\"bins\",\"events\":9,\"interval_ns\":1000,\"bins\":1,"
				"\"first_ns\":0,\"asked_interval_ns\":1000,\"coarsened\":false,"
				"\"untimed\":1}"));
	CHECK(analyze_has(text, "\"tag\":\"t0\",\"kind\":\"trace\",\"count\":1,"));
	CHECK(analyze_has(
	    text, "\"tag\":\"(site lost)\",\"kind\":\"trace\",\"site_lost\":true,\"count\":1,"));
	CHECK(analyze_has(
	    text, "\"tag\":\"(site lost)\",\"kind\":\"log\",\"site_lost\":true,\"count\":1,"));
	CHECK(analyze_has(text, "\"tag\":\"fmt %d\",\"kind\":\"log\",\"count\":1,"));
	CHECK(analyze_has(text, "\"tag\":\"enter\",\"kind\":\"enter\",\"count\":1,"));
	CHECK(analyze_has(text, "\"tag\":\"exit\",\"kind\":\"exit\",\"count\":1,"));
	CHECK(analyze_has(text, "\"tag\":\"io:read\",\"kind\":\"io\",\"count\":1,"));
	CHECK(analyze_has(text, "\"tag\":\"io:malformed\",\"kind\":\"io\",\"count\":1,"));
	CHECK(analyze_has(text, "\"tag\":\"span\",\"kind\":\"end\",\"count\":1,"));
	CHECK(!strstr(text, "\"tid\":3,"));
	/* ties in count: by tag, then kind: "(site lost)" log before trace */
	const char *log = strstr(text, "\"tag\":\"(site lost)\",\"kind\":\"log\"");
	const char *tr = strstr(text, "\"tag\":\"(site lost)\",\"kind\":\"trace\"");
	CHECK(log && tr && log < tr);
	free(text);
}

static void empty(void)
{
	start(0);
	char *text = finish(1);
	CHECK(analyze_has(
	    text, "{\"row\":\"bins\",\"events\":0,\"interval_ns\":1,\"bins\":0,\"first_ns\":0,"));
	CHECK(!strstr(text, "\"row\":\"tag\""));
	CHECK(!strstr(text, "\"row\":\"busiest\""));
	free(text);
	start(0);
	text = finish(0);
	CHECK(analyze_has(text, "rate: no events with a time\n"));
	free(text);
}

/* Out of time order (a source whose clock is behind): counted in the first bin. */
static void out_of_order(void)
{
	start(100);
	trace(0, 1, 1000);
	trace(0, 1, 1250);
	trace(0, 2, 900);
	char *text = finish(1);
	CHECK(analyze_has(text, "\"events\":3,\"interval_ns\":100,\"bins\":3,\"first_ns\":1000,"));
	CHECK(analyze_has(
	    text, "\"tag\":\"t0\",\"kind\":\"trace\",\"count\":3,\"mean_per_s\":10000000.000,"
		  "\"peak_per_s\":20000000.000,\"peak_at_ns\":1000,"));
	free(text);
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
	for (int i = 0; i < SITES; i++) {
		snprintf(tags[i], sizeof(tags[i]), "t%d", i);
		sites[i] = (struct rt_site){.valid = 1, .kind = RT_SITE_TRACE, .tag = tags[i]};
		sites[i].tag_length = (uint32_t)strlen(tags[i]);
	}
	sites[SITES - 1] = (struct rt_site){.valid = 1, .kind = RT_SITE_LOG, .tag = "fmt %d"};
	sites[SITES - 1].tag_length = 6;
	sites[SITES - 2] = (struct rt_site){.valid = 1, .kind = RT_SITE_END, .tag = "span"};
	sites[SITES - 2].tag_length = 4;

	bins_past_the_cap();
	rows_past_the_counters();
	default_interval();
	kinds();
	empty();
	out_of_order();
	free(reader);
	int failures = check_failure_count();
	printf("rate_unit: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
