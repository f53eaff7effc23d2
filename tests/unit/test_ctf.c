/*
 * test_ctf.c - the CTF exporter fed hand-made events.
 *
 *   test_ctf DIR EXPECTED   export to DIR (made here) and write to EXPECTED
 *                           the same events as `dump --json` lines, for
 *                           tests/export/check_ctf.py to hold the trace to
 *   test_ctf --refuse DIR   DIR holds a file: open must refuse it
 *
 * The events cover every kind, several threads and processes, losses of a
 * thread (first in its stream, between events, after its last event) and
 * of no thread, strings that are not UTF-8 and a time that goes backwards,
 * and enough events that every busy thread fills several packets.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/sites.h"
#include "export/exporter.h"

static int failures;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static FILE *expected;
static void *state;

static void json_str(const char *key, const char *s, size_t n)
{
	fprintf(expected, ",\"%s\":\"", key);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(expected, "\\%c", c);
		else if (c < 0x20)
			fprintf(expected, "\\u%04x", c);
		else
			fputc(c, expected);
	}
	fputc('"', expected);
}

static const char *kind_name(enum rt_export_kind kind)
{
	static const char *const names[] = {"", "trace", "log", "enter", "exit", "io", "lost"};
	return names[kind];
}

/* The head every event line has. */
static void head(const struct rt_export_event *ev)
{
	fprintf(expected,
		"{\"kind\":\"%s\",\"ts_ns\":%" PRId64
		",\"pid\":%d,\"tid\":%d,\"cpu\":%d,\"seq\":%" PRIu64,
		kind_name(ev->kind), ev->ts_ns, (int)ev->pid, (int)ev->tid, ev->cpu, ev->seq);
	json_str("thread", ev->thread.s ? ev->thread.s : "", ev->thread.s ? ev->thread.length : 0);
}

static void give(const struct rt_export_event *ev)
{
	CHECK(rt_exporter_ctf.event(state, ev) == 0);
}

static struct rt_export_event base(enum rt_export_kind kind, int64_t ts, int32_t pid, int32_t tid,
				   const char *thread, uint64_t seq)
{
	struct rt_export_event ev;
	memset(&ev, 0, sizeof ev);
	ev.kind = kind;
	ev.ts_ns = ts;
	ev.timed = 1;
	ev.pid = pid;
	ev.tid = tid;
	ev.thread.s = thread;
	ev.thread.length = strlen(thread);
	ev.cpu = (int)(seq % 4);
	ev.has_seq = 1;
	ev.seq = seq;
	return ev;
}

static struct rt_site sites[2];

static void trace_event(int64_t ts, int32_t pid, int32_t tid, const char *thread, uint64_t seq)
{
	struct rt_export_event ev = base(RT_EXPORT_TRACE, ts, pid, tid, thread, seq);
	ev.site = &sites[0];
	ev.nargs = (unsigned)(seq % (RT_MAX_ARGS + 1));
	for (unsigned i = 0; i < ev.nargs; i++)
		ev.args[i] = i == 1 ? (uint64_t) - (int64_t)seq : seq * 1000003u + i;
	if (ev.nargs > 4)
		ev.args[4] = 18446744071564265248ull; /* an unsigned value past INT64_MAX */
	give(&ev);
	head(&ev);
	fprintf(expected, ",\"tag\":\"%s\",\"file\":\"%s\",\"line\":%u,\"func\":\"%s\",\"args\":[",
		sites[0].tag, sites[0].file, sites[0].line, sites[0].func);
	for (unsigned i = 0; i < ev.nargs; i++)
		fprintf(expected, "%s%" PRIu64, i ? "," : "", ev.args[i]);
	fprintf(expected, "]}\n");
}

static void log_event(int64_t ts, int32_t pid, int32_t tid, const char *thread, uint64_t seq,
		      const char *msg, const char *shown)
{
	struct rt_export_event ev = base(RT_EXPORT_LOG, ts, pid, tid, thread, seq);
	ev.site = &sites[1];
	ev.level = "warn";
	ev.msg.s = msg;
	ev.msg.length = strlen(msg);
	give(&ev);
	head(&ev);
	json_str("level", "warn", 4);
	json_str("msg", shown, strlen(shown));
	fprintf(expected, ",\"file\":\"%s\",\"line\":%u,\"func\":\"%s\"}\n", sites[1].file,
		sites[1].line, sites[1].func);
}

static void call_event(enum rt_export_kind kind, int64_t ts, int32_t pid, int32_t tid,
		       const char *thread, uint64_t seq, uint32_t depth, int known)
{
	struct rt_export_event ev = base(kind, ts, pid, tid, thread, seq);
	ev.depth = depth;
	ev.addr = 0x55d0c0de0000ull + depth * 64;
	ev.call_site = ev.addr + 0x1234;
	if (known) {
		ev.place.func = "fact";
		ev.place.file = "/src/calls.c";
		ev.place.line = 40 + depth;
		ev.place.module = "app";
		ev.place.offset = 0x1000 + depth * 64;
	}
	give(&ev);
	head(&ev);
	fprintf(expected, ",\"depth\":%u,\"flags\":0,\"addr\":%" PRIu64 ",\"call_site\":%" PRIu64,
		depth, ev.addr, ev.call_site);
	if (known)
		fprintf(
		    expected,
		    ",\"func\":\"fact\",\"file\":\"/src/calls.c\",\"line\":%u,\"module\":\"app\","
		    "\"offset\":%" PRIu64 "}\n",
		    ev.place.line, ev.place.offset);
	else
		fprintf(expected, ",\"func\":null,\"file\":null,\"line\":null,\"module\":null,"
				  "\"offset\":null}\n");
}

static void io_event(int64_t ts, int32_t pid, int32_t tid, const char *thread, uint64_t seq)
{
	struct rt_export_event ev = base(RT_EXPORT_IO, ts, pid, tid, thread, seq);
	ev.io.ok = 1;
	ev.io.ev.op = RT_IO_READ;
	ev.io.ev.fd = 3;
	ev.io.ev.size = 4096;
	ev.io.ev.result = seq & 1 ? 516 : -5;
	ev.io.names.fd.known = 1;
	ev.io.names.fd.name = "/etc/hosts";
	ev.io.names.fd.name_length = 10;
	ev.io.names.offset_derived = 1;
	ev.io.names.offset = (int64_t)seq * 516;
	ev.io.has_duration = 1;
	ev.io.dur_ns = 50 + (int64_t)seq;
	give(&ev);
	head(&ev);
	fprintf(expected,
		",\"op\":\"read\",\"fd\":3,\"path\":\"/etc/hosts\",\"offset\":%" PRId64
		",\"offset_derived\":true,\"size\":4096,\"result\":%" PRId64 ",\"errno\":%d,"
		"\"dur_ns\":%" PRId64 "}\n",
		ev.io.names.offset, ev.io.ev.result, ev.io.ev.result < 0 ? 5 : 0, ev.io.dur_ns);

	/* a failed open: no descriptor, the path the call named, no duration */
	ev = base(RT_EXPORT_IO, ts, pid, tid, thread, seq + 1);
	ev.io.ok = 1;
	ev.io.ev.op = RT_IO_OPEN;
	ev.io.ev.fd = -1;
	ev.io.ev.result = -2;
	ev.io.ev.path = "/nope";
	ev.io.ev.path_length = 5;
	give(&ev);
	head(&ev);
	fprintf(expected, ",\"op\":\"open\",\"path\":\"/nope\",\"size\":0,\"result\":-2,"
			  "\"errno\":2,\"error\":\"ENOENT\"}\n");
}

static void lost(int64_t ts, int32_t pid, int32_t tid, uint64_t count)
{
	struct rt_export_event ev = base(RT_EXPORT_LOST, ts, pid, tid, "", 0);
	ev.has_seq = 0;
	ev.count = count;
	ev.reason = "overwritten";
	give(&ev);
	fprintf(expected,
		"{\"kind\":\"lost\",\"ts_ns\":%" PRId64 ",\"pid\":%d,\"tid\":%d,\"count\":%" PRIu64
		",\"reason\":\"overwritten\"}\n",
		ts, (int)pid, (int)tid, count);
}

static int refuse(const char *dir)
{
	struct rt_export_target target = {.dir = dir};
	char message[256] = "";
	void *st = NULL;
	int rc = rt_exporter_ctf.open(&st, &target, message, sizeof message);
	CHECK(rc == -EEXIST);
	CHECK(strstr(message, "not empty") != NULL);
	if (rc == 0)
		rt_exporter_ctf.free(st);
	printf("refused: %s\n", message);
	return failures != 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--refuse") == 0)
		return refuse(argv[2]);
	if (argc != 3) {
		fprintf(stderr, "usage: test_ctf DIR EXPECTED | test_ctf --refuse DIR\n");
		return 2;
	}
	expected = fopen(argv[2], "w");
	if (!expected) {
		perror(argv[2]);
		return 1;
	}
	sites[0] = (struct rt_site){
	    .valid = 1, .line = 12, .tag = "before send", .file = "src/app.c", .func = "main"};
	sites[1] = (struct rt_site){
	    .valid = 1, .line = 88, .tag = "request %d", .file = "src/app.c", .func = "handle"};
	for (int i = 0; i < 2; i++) {
		sites[i].tag_length = (uint32_t)strlen(sites[i].tag);
		sites[i].file_length = (uint32_t)strlen(sites[i].file);
		sites[i].func_length = (uint32_t)strlen(sites[i].func);
	}
	struct rt_export_target target = {.dir = argv[1]};
	char message[256] = "";
	int rc = rt_exporter_ctf.open(&state, &target, message, sizeof message);
	if (rc) {
		fprintf(stderr, "open: %s (%s)\n", message, strerror(-rc));
		return 1;
	}

	/* a thread whose stream begins with a loss */
	lost(100, 10, 11, 7);
	/* the losses of no thread */
	lost(150, 10, 0, 3);
	uint64_t seq[4] = {0, 0, 0, 0};
	const int32_t tids[4] = {11, 12, 21, 22};
	const int32_t pids[4] = {10, 10, 20, 20};
	const char *names[4] = {"main", "worker", "", "io"};
	int64_t ts = 1000;
	for (int i = 0; i < 6000; i++) {
		int t = i % 4;
		ts += 7;
		switch (i % 5) {
		case 0:
			trace_event(ts, pids[t], tids[t], names[t], seq[t]++);
			break;
		case 1:
			log_event(ts, pids[t], tids[t], names[t], seq[t]++,
				  "request 42 from alice took 17 us",
				  "request 42 from alice took 17 us");
			break;
		case 2:
			call_event(RT_EXPORT_ENTER, ts, pids[t], tids[t], names[t], seq[t]++,
				   (uint32_t)(i % 3), i % 2);
			break;
		case 3:
			call_event(RT_EXPORT_EXIT, ts, pids[t], tids[t], names[t], seq[t]++,
				   (uint32_t)(i % 3), i % 2);
			break;
		default:
			io_event(ts, pids[t], tids[t], names[t], seq[t]);
			seq[t] += 2;
			break;
		}
		if (i == 3001)
			lost(ts, 10, 12, 40); /* between events of a thread */
	}
	/* not UTF-8, and a long message: U+FFFD for the bad bytes */
	log_event(ts + 1, 10, 11, "main", seq[0]++, "caf\xe9 \xff ok \xc3\xa9",
		  "caf\xef\xbf\xbd \xef\xbf\xbd ok \xc3\xa9");
	char big[8192];
	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = 0;
	log_event(ts + 2, 10, 11, "main", seq[0]++, big, big);
	/* a time before the thread's last one: raised to it */
	trace_event(ts - 500, 20, 22, "io", seq[3]++);
	/* losses after a thread's last event */
	lost(ts + 10, 20, 21, 5);
	fclose(expected);

	CHECK(rt_exporter_ctf.finish(state) == 0);
	rt_exporter_ctf.free(state);
	return failures != 0;
}
