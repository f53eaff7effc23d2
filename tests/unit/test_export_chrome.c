/*
 * test_export_chrome.c - the Chrome exporter's spans, on events made by
 * hand (export/chrome_json.c, paired by event/span_tracker.h): exits whose
 * calls above were left without theirs, a lost exit inside recursion, the
 * library's exits for calls left by longjmp or an ended thread, an exit
 * whose enter was never seen, spans open at the end, the depth limit;
 * spans marked in the source (RT_BEGIN, RT_END) on their thread's track of
 * marked spans, a pseudo-thread named after it: an end below the innermost
 * span, an end without its begin, a span begun in one call and ended in
 * another, one that outlives the call it began in.  The output goes to a
 * temporary file and is counted by its event types.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/check.h"
#include "../lib/test_site.h"
#include "common/output.h"
#include "export/exporter.h"

static struct rt_out out;
static void *state;

/* An enter or exit at depth, as the library records them (flags: RT_FUNC_F_*). */
static void event_flagged(enum rt_event_kind kind, int32_t tid, uint64_t addr, uint32_t depth,
			  int64_t ns, uint32_t flags)
{
	struct rt_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.pid = 100;
	ev.tid = tid;
	ev.addr = addr;
	ev.depth = depth;
	ev.function_flags = flags;
	ev.ts_ns = ns;
	ev.cpu = -1;
	ev.has_seq = 1;
	ev.seq = (uint64_t)ns; /* the times are all different */
	CHECK_EQ(rt_exporter_chrome.event(state, &ev), 0);
}

static void event(enum rt_event_kind kind, int32_t tid, uint64_t addr, uint32_t depth, int64_t ns)
{
	event_flagged(kind, tid, addr, depth, ns, 0);
}

static struct rt_site site_of(const char *tag)
{
	return test_site(0, tag, 0);
}

/* An RT_BEGIN or RT_END of site on thread tid, with one argument (none when arg < 0). */
static void span_event(enum rt_event_span span, int32_t tid, const struct rt_site *site, int64_t ns,
		       int arg)
{
	struct rt_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = RT_EVENT_TRACE;
	ev.span = span;
	ev.site = site;
	ev.pid = 100;
	ev.tid = tid;
	ev.thread = (struct rt_event_str){"worker", 6};
	ev.ts_ns = ns;
	ev.cpu = -1;
	ev.has_seq = 1;
	ev.seq = (uint64_t)ns;
	ev.nargs = arg >= 0 ? 1 : 0;
	ev.args[0] = (uint64_t)arg;
	CHECK_EQ(rt_exporter_chrome.event(state, &ev), 0);
}

/* How many times needle occurs in the text. */
static int count(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

int main(void)
{
	char path[] = "/tmp/test_export_chrome.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	unlink(path);
	CHECK_EQ(rt_out_open(&out, fd), 0);
	struct rt_trace_set set;
	memset(&set, 0, sizeof(set));
	struct rt_export_target target = {.out = &out, .set = &set};
	char message[64];
	CHECK_EQ(rt_exporter_chrome.open(&state, &target, message, sizeof(message)), 0);

	/* thread 1: a > b > c, then a returns: the exits of b and c were lost */
	event(RT_EVENT_ENTER, 1, 0xa, 0, 10);
	event(RT_EVENT_ENTER, 1, 0xb, 1, 20);
	event(RT_EVENT_ENTER, 1, 0xc, 2, 30);
	event(RT_EVENT_EXIT, 1, 0xa, 0, 40);
	/* thread 2: an exit before any enter, then two spans never closed */
	event(RT_EVENT_EXIT, 2, 0xd, 0, 5);
	event(RT_EVENT_ENTER, 2, 0xe, 0, 50);
	event(RT_EVENT_ENTER, 2, 0xf, 1, 60);
	event(RT_EVENT_TRACE, 2, 0, 0, 70);
	/* thread 5: r -> r, the inner exit lost: the outer exit ends the outer call */
	event(RT_EVENT_ENTER, 5, 0x50, 0, 4000);
	event(RT_EVENT_ENTER, 5, 0x50, 1, 4010);
	event(RT_EVENT_EXIT, 5, 0x50, 0, 4090);
	/* thread 6: longjmp out of k > l, then the thread ends inside m: the library's exits */
	event(RT_EVENT_ENTER, 6, 0x60, 0, 5000);
	event(RT_EVENT_ENTER, 6, 0x61, 1, 5010);
	event(RT_EVENT_ENTER, 6, 0x62, 2, 5020);
	event_flagged(RT_EVENT_EXIT, 6, 0x62, 2, 5030, RT_FUNC_F_UNWOUND);
	event_flagged(RT_EVENT_EXIT, 6, 0x61, 1, 5030, RT_FUNC_F_UNWOUND);
	event(RT_EVENT_ENTER, 6, 0x63, 1, 5040);
	event_flagged(RT_EVENT_EXIT, 6, 0x63, 1, 5050, RT_FUNC_F_THREAD_ENDED);
	event_flagged(RT_EVENT_EXIT, 6, 0x60, 0, 5050, RT_FUNC_F_THREAD_ENDED);
	/*
	 * thread 4: f { begin s(5), begin t, end s(6): t's end lost; end x: no
	 * begin; begin u, g { end u(2): u's, begun outside g }, f returns };
	 * begin open: unclosed
	 */
	struct rt_site s = site_of("s"), t = site_of("t"), x = site_of("x"), u = site_of("u"),
		       open = site_of("open");
	event(RT_EVENT_ENTER, 4, 0xf0, 0, 3000);
	span_event(RT_EVENT_SPAN_BEGIN, 4, &s, 3010, 5);
	span_event(RT_EVENT_SPAN_BEGIN, 4, &t, 3020, -1);
	span_event(RT_EVENT_SPAN_END, 4, &s, 3030, 6);
	span_event(RT_EVENT_SPAN_END, 4, &x, 3040, 9);
	span_event(RT_EVENT_SPAN_BEGIN, 4, &u, 3050, -1);
	event(RT_EVENT_ENTER, 4, 0xf1, 1, 3060);
	span_event(RT_EVENT_SPAN_END, 4, &u, 3065, 2);
	event(RT_EVENT_EXIT, 4, 0xf1, 1, 3070);
	event(RT_EVENT_EXIT, 4, 0xf0, 0, 3080);
	span_event(RT_EVENT_SPAN_BEGIN, 4, &open, 3090, 1);
	/* thread 3: deeper than the stack keeps; the skipped ones pair up */
	for (int i = 0; i < 1030; i++)
		event(RT_EVENT_ENTER, 3, 0x1000 + (uint64_t)i, (uint32_t)i, 100 + i);
	for (int i = 1029; i >= 0; i--)
		event(RT_EVENT_EXIT, 3, 0x1000 + (uint64_t)i, (uint32_t)i, 2000 + (1029 - i));
	CHECK_EQ(rt_exporter_chrome.finish(state), 0);
	rt_exporter_chrome.free(state);
	CHECK_EQ(rt_out_close(&out), 0);

	off_t size = lseek(fd, 0, SEEK_END);
	char *text = calloc(1, (size_t)size + 1);
	CHECK(text && pread(fd, text, (size_t)size, 0) == size);
	close(fd);
	CHECK(strncmp(text, "{\"traceEvents\":[", 16) == 0);
	CHECK(strstr(text, "],\"displayTimeUnit\":\"ns\"}") != NULL);
	/* 3 + 2 + 2 + 4 + 6 + 1024 spans begun, every one ended */
	CHECK_EQ(count(text, "\"ph\":\"B\""), 3 + 2 + 2 + 4 + 6 + 1024);
	CHECK_EQ(count(text, "\"ph\":\"E\""), 3 + 2 + 2 + 4 + 6 + 1024);
	CHECK_EQ(count(text, "\"exit_lost\":true"), 2 + 1);
	CHECK_EQ(count(text, "\"end_lost\":true"), 1);
	CHECK_EQ(count(text, "\"unwound\":true"), 2);
	CHECK_EQ(count(text, "\"thread_ended\":true"), 2);
	CHECK_EQ(count(text, "\"unclosed\":true"), 2 + 1);
	CHECK_EQ(count(text, "exit without enter"), 1);
	CHECK_EQ(count(text, "\"cat\":\"span\",\"name\":"), 4 + 1);
	/* the marked spans of thread 4 on a pseudo-thread, tid 4 + 2^30, named after it */
	CHECK_EQ(count(text, "\"tid\":1073741828,"), 1 + 2 * 4 + 1);
	CHECK(strstr(text, "{\"ph\":\"M\",\"pid\":100,\"tid\":1073741828,\"name\":\"thread_name\","
			   "\"args\":{\"name\":\"worker spans\"}}"));
	/* the end whose begin is not open: an instant naming the span, with its arguments */
	CHECK_EQ(count(text, "end without begin"), 1);
	CHECK(strstr(
	    text, "{\"ph\":\"i\",\"pid\":100,\"tid\":1073741828,\"ts\":3.040,\"s\":\"t\",\"cat\":"
		  "\"span\",\"name\":\"end without begin\",\"args\":{\"cpu\":-1,\"seq\":3040,"
		  "\"span\":\"x\",\"file\":\"a.c\",\"line\":7,\"func\":\"f\",\"args\":[9]}}"));
	/* a span's B holds its place; its E the begin's and the end's arguments */
	CHECK(strstr(text, "{\"ph\":\"B\",\"pid\":100,\"tid\":1073741828,\"ts\":3.010,\"cat\":"
			   "\"span\",\"name\":\"s\",\"args\":{\"span\":true,\"file\":\"a.c\","
			   "\"line\":7,\"func\":\"f\"}}"));
	CHECK(strstr(text, "{\"ph\":\"E\",\"pid\":100,\"tid\":1073741828,\"ts\":3.030,\"args\":"
			   "{\"args\":[],\"begin_seq\":3020,\"end_lost\":true}}"));
	CHECK(strstr(text, "{\"ph\":\"E\",\"pid\":100,\"tid\":1073741828,\"ts\":3.030,\"args\":"
			   "{\"args\":[5],\"begin_seq\":3010,\"end_args\":[6],\"cpu\":-1,"
			   "\"seq\":3030}}"));
	/* u, begun in f before g was called, ends inside g: timed on its own track */
	CHECK(strstr(text, "{\"ph\":\"E\",\"pid\":100,\"tid\":1073741828,\"ts\":3.065,\"args\":"
			   "{\"args\":[],\"begin_seq\":3050,\"end_args\":[2],\"cpu\":-1,"
			   "\"seq\":3065}}"));
	/* f and g end on the thread's own track, as their exits say */
	CHECK(strstr(text, "{\"ph\":\"E\",\"pid\":100,\"tid\":4,\"ts\":3.070,\"args\":{\"depth\":1,"
			   "\"call_site\":0,\"enter_seq\":3060,\"cpu\":-1,\"seq\":3070}}"));
	CHECK(strstr(text, "{\"ph\":\"E\",\"pid\":100,\"tid\":1073741828,\"ts\":3.090,\"args\":"
			   "{\"args\":[1],\"begin_seq\":3090,\"unclosed\":true}}"));
	/* the unclosed spans end at their thread's last event (70 ns) */
	CHECK(strstr(text, "{\"ph\":\"E\",\"pid\":100,\"tid\":2,\"ts\":0.070,\"args\":{\"depth\":1,"
			   "\"call_site\":0,\"enter_seq\":60,\"unclosed\":true}}"));
	/* the calls whose exits were lost end where the exit that shows it is */
	CHECK(strstr(text, "{\"ph\":\"E\",\"pid\":100,\"tid\":1,\"ts\":0.040,\"args\":{\"depth\":2,"
			   "\"call_site\":0,\"enter_seq\":30,\"exit_lost\":true}}"));
	/* recursion: the inner call's exit lost, the outer call ends at its own exit */
	CHECK(strstr(text,
		     "{\"ph\":\"E\",\"pid\":100,\"tid\":5,\"ts\":4.090,\"args\":{\"depth\":1,"
		     "\"call_site\":0,\"enter_seq\":4010,\"exit_lost\":true}}"
		     ",\n{\"ph\":\"E\",\"pid\":100,\"tid\":5,\"ts\":4.090,\"args\":{\"depth\":0,"
		     "\"call_site\":0,\"enter_seq\":4000,\"cpu\":-1,\"seq\":4090}}"));
	/* the library's exits: the exit's own fields, and how the call ended */
	CHECK(strstr(text, "{\"ph\":\"E\",\"pid\":100,\"tid\":6,\"ts\":5.030,\"args\":{\"depth\":2,"
			   "\"call_site\":0,\"enter_seq\":5020,\"cpu\":-1,\"seq\":5030,"
			   "\"unwound\":true}}"));
	CHECK(strstr(text, "{\"ph\":\"E\",\"pid\":100,\"tid\":6,\"ts\":5.050,\"args\":{\"depth\":0,"
			   "\"call_site\":0,\"enter_seq\":5000,\"cpu\":-1,\"seq\":5050,"
			   "\"thread_ended\":true}}"));
	free(text);
	int failures = check_failure_count();
	printf("test_export_chrome: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
