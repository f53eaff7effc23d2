/*
 * stalls_unit.c - `analyze stalls` (analyze/stalls.c) on events made by
 * hand: the heap keeps the longest gaps and ranks them, a loss does not end
 * a gap but is noted in it (a thread's own, a process's, one before the
 * thread's first event), the silence to the end of the set, --min, ties,
 * threads of two sources with one tid, a long log message cut, and no
 * events at all.  The JSON rows go to a temporary file and are compared.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "decode/sites.h"

static void *state;
static int raw_time; /* the events made have no clock: raw counter ticks */
static struct rt_site site_a = {.valid = 1, .tag = "tick", .tag_length = 4};
static struct rt_site site_b = {.valid = 1, .tag = "tock", .tag_length = 4};

static void event(uint32_t source, int32_t tid, int64_t ns, const struct rt_site *site)
{
	struct rt_event ev = analyze_event(RT_EVENT_TRACE, tid, ns);
	ev.source = source;
	ev.pid = 100 + (int32_t)source;
	ev.thread.s = tid == 1 ? "one" : "";
	ev.thread.length = tid == 1 ? 3 : 0;
	ev.raw_time = raw_time;
	ev.timed = 1;
	ev.site = site;
	CHECK_EQ(rt_analyzer_stalls.event(state, &ev), 0);
}

static void log_event(int32_t tid, int64_t ns, const char *msg)
{
	struct rt_event ev = analyze_event(RT_EVENT_LOG, tid, ns);
	ev.msg.s = msg;
	ev.msg.length = strlen(msg);
	CHECK_EQ(rt_analyzer_stalls.event(state, &ev), 0);
}

static void loss_of(int32_t pid, int32_t tid, int64_t ns, uint64_t count, const char *reason,
		    int in_region)
{
	/* an untimed loss has the time of the event before it */
	struct rt_event ev = analyze_event(RT_EVENT_LOST, tid, ns);
	ev.pid = pid;
	ev.count = count;
	ev.reason = reason;
	ev.in_region = in_region;
	CHECK_EQ(rt_analyzer_stalls.event(state, &ev), 0);
}

static void loss(int32_t tid, int64_t ns, uint64_t count, const char *reason, int in_region)
{
	loss_of(100, tid, ns, count, reason, in_region);
}

static void start(unsigned top, int64_t min_gap_ns)
{
	struct rt_analyze_options options;
	memset(&options, 0, sizeof(options));
	options.top = top;
	options.min_gap_ns = min_gap_ns;
	options.key_arg = options.arg = -1;
	static struct rt_trace_set set;
	struct rt_analyze_context context = {.options = &options, .set = &set};
	char message[128] = "";
	CHECK_EQ(rt_analyzer_stalls.open(&state, &context, message, sizeof(message)), 0);
}

/* The report, as JSON rows or a table, in a string to free. */
static char *finish(int json)
{
	return analyze_report(&rt_analyzer_stalls, &state, "stalls_unit", json);
}

/* The text must hold this line, whole. */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)) != NULL; p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return 1;
	return 0;
}

static int lines(const char *text)
{
	int n = 0;
	for (; *text; text++)
		n += *text == '\n';
	return n;
}

#define CHECK_LINE(text, line)                                                                     \
	do {                                                                                       \
		if (!has_line(text, line))                                                         \
			check_fail(__FILE__, __LINE__, "no line %s in:\n%s", line, text);          \
	} while (0)

int main(void)
{
	/*
	 * thread 1: gaps 10, 100, 20, 1000, 5; top 2 keeps 1000 and 100.
	 * thread 2: a loss of its own inside its only gap, then silent.
	 * thread 3: a loss before its first event is in no gap.
	 * a loss of no thread at 700: in every open gap of the process.
	 * source 1 has a tid 1 too: another thread.
	 */
	start(2, 0);
	event(0, 1, 0, &site_a);
	event(0, 1, 10, &site_b);
	event(0, 2, 50, &site_a);
	loss(2, 50, 7, "overwritten", 0);
	loss(3, 50, 4, "overwritten", 0);
	event(0, 1, 110, &site_a);
	event(0, 1, 130, &site_b);
	event(0, 3, 200, &site_a);
	event(0, 3, 300, &site_b);
	event(1, 1, 400, &site_a);
	event(0, 2, 500, &site_b);
	event(0, 2, 600, &site_a);
	loss(0, 700, 3, "dropped", 0);
	loss(0, 700, 9, "damaged", 1); /* counted in a region: marks, adds nothing */
	event(1, 1, 800, &site_b);
	event(0, 1, 1130, &site_a);
	event(0, 1, 1135, &site_b);
	char *text = finish(1);
	CHECK_LINE(text,
		   "{\"pid\":100,\"tid\":1,\"thread\":\"one\",\"silent_until_end\":false,"
		   "\"gap_ns\":1000,\"start_ns\":130,\"end_ns\":1130,"
		   "\"before\":{\"kind\":\"trace\",\"what\":\"tock\",\"ts_ns\":130},"
		   "\"after\":{\"kind\":\"trace\",\"what\":\"tick\",\"ts_ns\":1130},"
		   "\"lost_inside\":3,\"damaged_inside\":true,\"rank\":1,\"overall_rank\":1}");
	CHECK_LINE(text,
		   "{\"pid\":100,\"tid\":1,\"thread\":\"one\",\"silent_until_end\":false,"
		   "\"gap_ns\":100,\"start_ns\":10,\"end_ns\":110,"
		   "\"before\":{\"kind\":\"trace\",\"what\":\"tock\",\"ts_ns\":10},"
		   "\"after\":{\"kind\":\"trace\",\"what\":\"tick\",\"ts_ns\":110},"
		   "\"lost_inside\":0,\"damaged_inside\":false,\"rank\":2,\"overall_rank\":null}");
	CHECK_LINE(text,
		   "{\"pid\":100,\"tid\":2,\"thread\":\"\",\"silent_until_end\":false,"
		   "\"gap_ns\":450,\"start_ns\":50,\"end_ns\":500,"
		   "\"before\":{\"kind\":\"trace\",\"what\":\"tick\",\"ts_ns\":50},"
		   "\"after\":{\"kind\":\"trace\",\"what\":\"tock\",\"ts_ns\":500},"
		   "\"lost_inside\":7,\"damaged_inside\":false,\"rank\":1,\"overall_rank\":2}");
	CHECK_LINE(text,
		   "{\"pid\":100,\"tid\":2,\"thread\":\"\",\"silent_until_end\":false,"
		   "\"gap_ns\":100,\"start_ns\":500,\"end_ns\":600,"
		   "\"before\":{\"kind\":\"trace\",\"what\":\"tock\",\"ts_ns\":500},"
		   "\"after\":{\"kind\":\"trace\",\"what\":\"tick\",\"ts_ns\":600},"
		   "\"lost_inside\":0,\"damaged_inside\":false,\"rank\":2,\"overall_rank\":null}");
	CHECK_LINE(text,
		   "{\"pid\":100,\"tid\":3,\"thread\":\"\",\"silent_until_end\":false,"
		   "\"gap_ns\":100,\"start_ns\":200,\"end_ns\":300,"
		   "\"before\":{\"kind\":\"trace\",\"what\":\"tick\",\"ts_ns\":200},"
		   "\"after\":{\"kind\":\"trace\",\"what\":\"tock\",\"ts_ns\":300},"
		   "\"lost_inside\":0,\"damaged_inside\":false,\"rank\":1,\"overall_rank\":null}");
	CHECK_LINE(text,
		   "{\"pid\":101,\"tid\":1,\"thread\":\"one\",\"silent_until_end\":false,"
		   "\"gap_ns\":400,\"start_ns\":400,\"end_ns\":800,"
		   "\"before\":{\"kind\":\"trace\",\"what\":\"tick\",\"ts_ns\":400},"
		   "\"after\":{\"kind\":\"trace\",\"what\":\"tock\",\"ts_ns\":800},"
		   "\"lost_inside\":0,\"damaged_inside\":false,\"rank\":1,\"overall_rank\":null}");
	/* silences, longest first, top 2: thread 3 (835, the process's loss in it), thread 2 */
	CHECK_LINE(text, "{\"pid\":100,\"tid\":3,\"thread\":\"\",\"silent_until_end\":true,"
			 "\"gap_ns\":835,\"start_ns\":300,\"end_ns\":1135,"
			 "\"before\":{\"kind\":\"trace\",\"what\":\"tock\",\"ts_ns\":300},"
			 "\"after\":null,\"lost_inside\":3,\"damaged_inside\":true,\"rank\":1,"
			 "\"overall_rank\":null}");
	CHECK_LINE(text, "{\"pid\":100,\"tid\":2,\"thread\":\"\",\"silent_until_end\":true,"
			 "\"gap_ns\":535,\"start_ns\":600,\"end_ns\":1135,"
			 "\"before\":{\"kind\":\"trace\",\"what\":\"tick\",\"ts_ns\":600},"
			 "\"after\":null,\"lost_inside\":3,\"damaged_inside\":true,\"rank\":2,"
			 "\"overall_rank\":null}");
	CHECK_EQ(lines(text), 8);
	free(text);

	/* --min 150: only longer gaps count; ties rank the earlier first; a log cut */
	start(5, 150);
	event(0, 5, 0, &site_a);
	event(0, 5, 200, &site_b);
	event(0, 5, 300, &site_a);
	event(0, 5, 500, &site_b);
	char msg[200];
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = 0;
	memcpy(msg, "line\none ", 9);
	log_event(5, 900, msg);
	event(0, 5, 1000, &site_a);
	text = finish(1);
	CHECK(strstr(text, "\"gap_ns\":400,\"start_ns\":500,\"end_ns\":900") != NULL);
	CHECK(strstr(text, "\"gap_ns\":200,\"start_ns\":0,\"end_ns\":200,\"before\":{\"kind\":"
			   "\"trace\",\"what\":\"tick\",\"ts_ns\":0},\"after\":{\"kind\":\"trace\","
			   "\"what\":\"tock\",\"ts_ns\":200},\"lost_inside\":0,\"damaged_inside\":"
			   "false,\"rank\":2,") != NULL);
	CHECK(strstr(text, "\"gap_ns\":200,\"start_ns\":300,\"end_ns\":500") != NULL &&
	      strstr(strstr(text, "\"gap_ns\":200,\"start_ns\":300"), "\"rank\":3,") != NULL);
	/* 63 bytes of the message as they are, the newline escaped by JSON */
	char want[128];
	snprintf(want, sizeof(want), "\"after\":{\"kind\":\"log\",\"what\":\"line\\none %.54s\"",
		 msg + 9);
	CHECK(strstr(text, want) != NULL);
	CHECK(strstr(text, "\"gap_ns\":100") == NULL); /* under --min */
	CHECK_EQ(lines(text), 3); /* no silence: the thread has the last event */
	free(text);

	/* the table: one thread, its rows, the overall top and the silence */
	start(0, 0);
	event(0, 1, 0, &site_a);
	event(0, 1, 5000000, &site_b);
	event(0, 2, 6000000, &site_b);
	text = finish(0);
	CHECK(strstr(text, "pid 100 tid 1 (one): 1 gap\n") != NULL);
	CHECK(strstr(text, "5.000 ms") != NULL);
	CHECK(strstr(text, "trace tick") != NULL && strstr(text, "trace tock") != NULL);
	CHECK(strstr(text, "silent until the end: 1.0 ms after trace tock") != NULL);
	CHECK(strstr(text, "The 1 longest of all threads:") != NULL);
	free(text);

	/*
	 * a loss of no thread that names no process (a trace file's damaged
	 * region): in the open gaps of every process; a source without a
	 * clock: its silence ends at its own last time, its rows say raw_time
	 */
	start(5, 0);
	event(0, 1, 0, &site_a);
	event(1, 7, 0, &site_a);
	event(0, 1, 100, &site_b);
	event(1, 7, 50, &site_b);
	loss_of(0, 0, 60, 2, "dropped", 0);
	event(0, 1, 200, &site_a);
	event(1, 7, 300, &site_a);
	raw_time = 1;
	event(2, 9, 1000, &site_a);
	event(2, 9, 5000, &site_b);
	event(2, 10, 9000, &site_a);
	raw_time = 0;
	text = finish(1);
	CHECK(strstr(text, "\"tid\":1,\"thread\":\"one\",\"silent_until_end\":false,\"gap_ns\":100,"
			   "\"start_ns\":100,\"end_ns\":200") != NULL);
	CHECK(strstr(text,
		     "\"gap_ns\":100,\"start_ns\":100,\"end_ns\":200,\"before\":{\"kind\":"
		     "\"trace\",\"what\":\"tock\",\"ts_ns\":100},\"after\":{\"kind\":"
		     "\"trace\",\"what\":\"tick\",\"ts_ns\":200},\"lost_inside\":2,") != NULL);
	CHECK(strstr(text,
		     "\"gap_ns\":250,\"start_ns\":50,\"end_ns\":300,\"before\":{\"kind\":"
		     "\"trace\",\"what\":\"tock\",\"ts_ns\":50},\"after\":{\"kind\":"
		     "\"trace\",\"what\":\"tick\",\"ts_ns\":300},\"lost_inside\":2,") != NULL);
	CHECK_LINE(text, "{\"pid\":102,\"tid\":9,\"thread\":\"\",\"silent_until_end\":true,"
			 "\"raw_time\":true,\"gap_ns\":4000,\"start_ns\":5000,\"end_ns\":9000,"
			 "\"before\":{\"kind\":\"trace\",\"what\":\"tock\",\"ts_ns\":5000},"
			 "\"after\":null,\"lost_inside\":0,\"damaged_inside\":false,\"rank\":1,"
			 "\"overall_rank\":null}");
	free(text);

	/* nothing at all */
	start(0, 0);
	text = finish(0);
	CHECK(strstr(text, "No thread had an event.") != NULL);
	free(text);
	start(0, 0);
	text = finish(1);
	CHECK_EQ(strlen(text), 0);
	free(text);

	if (check_failure_count()) {
		fprintf(stderr, "%d checks failed\n", check_failure_count());
		return 1;
	}
	printf("stalls_unit: all checks passed\n");
	return 0;
}
