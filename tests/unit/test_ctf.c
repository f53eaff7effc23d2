/*
 * test_ctf.c - the CTF exporter fed hand-made events.
 *
 *   test_ctf DIR EXPECTED   export to DIR (made here) and write to EXPECTED
 *                           the same events as `dump --json` lines, for
 *                           tests/export/check_ctf.py to hold the trace to
 *   test_ctf --refuse DIR   DIR holds a file: open must refuse it
 *
 * The events cover every kind, several threads and processes, losses of a
 * thread (first in its stream, between events, after its last event; with
 * a note, an estimated count, no time of its own, a count of 0) and of no
 * thread, strings that are not UTF-8 and a time that goes backwards,
 * and enough events that every busy thread fills several packets.  Trace
 * events come from sites of 0 to 6 arguments of every type (an unsigned
 * value past INT64_MAX, negative signed ones, pointers), from the start and
 * the end of a span whose tag needs escaping in TSDL, and from a lost site.
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

static const char *kind_name(enum rt_event_kind kind)
{
	static const char *const names[] = {"", "trace", "log", "enter", "exit", "io", "lost"};
	return names[kind];
}

/* The head every event line has. */
static void head(const struct rt_event *ev)
{
	fprintf(expected,
		"{\"kind\":\"%s\",\"ts_ns\":%" PRId64
		",\"pid\":%d,\"tid\":%d,\"cpu\":%d,\"seq\":%" PRIu64,
		kind_name(ev->kind), ev->ts_ns, (int)ev->pid, (int)ev->tid, ev->cpu, ev->seq);
	json_str("thread", ev->thread.s ? ev->thread.s : "", ev->thread.s ? ev->thread.length : 0);
}

static void give(const struct rt_event *ev)
{
	CHECK(rt_exporter_ctf.event(state, ev) == 0);
}

static struct rt_event base(enum rt_event_kind kind, int64_t ts, int32_t pid, int32_t tid,
			    const char *thread, uint64_t seq)
{
	struct rt_event ev;
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

/*
 * The sites of both processes' tables: trace sites of 0..6 arguments
 * (SITE_TRACE + n), the log site, a span's start and end, and an entry that
 * is not valid (no class).
 */
enum { SITE_TRACE = 0, SITE_LOG = RT_MAX_ARGS + 1, SITE_BEGIN, SITE_END, SITE_INVALID, SITES };
static struct rt_site sites[SITES];
static const uint8_t arg_types[RT_MAX_ARGS] = {
    RT_ARG_UNSIGNED | 8, RT_ARG_SIGNED | 4,   RT_ARG_POINTER | 8,
    RT_ARG_UNSIGNED | 4, RT_ARG_UNSIGNED | 8, RT_ARG_SIGNED | 8,
};

/* The source of a process: its site table's index in the set. */
static uint32_t source_of(int32_t pid)
{
	return pid == 10 ? 0 : 1;
}

static void put_args(const struct rt_event *ev)
{
	fprintf(expected, ",\"args\":[");
	for (unsigned i = 0; i < ev->nargs; i++) {
		if (ev->signed_args & (1u << i))
			fprintf(expected, "%s%" PRId64, i ? "," : "", (int64_t)ev->args[i]);
		else
			fprintf(expected, "%s%" PRIu64, i ? "," : "", ev->args[i]);
	}
	fprintf(expected, "]");
}

/* An event of the site: its arguments as the site's types decode them. */
static void site_event(unsigned index, int64_t ts, int32_t pid, int32_t tid, const char *thread,
		       uint64_t seq)
{
	const struct rt_site *site = &sites[index];
	struct rt_event ev = base(RT_EVENT_TRACE, ts, pid, tid, thread, seq);
	ev.source = source_of(pid);
	ev.site = site;
	ev.site_id = index;
	ev.nargs = site->nargs;
	ev.signed_args = site->signed_args;
	const uint64_t values[RT_MAX_ARGS] = {
	    seq * 1000003u,
	    (uint64_t) - (int64_t)seq,
	    0x7ffd12340000ull + seq * 16,
	    seq,
	    18446744071564265248ull + seq, /* an unsigned value past INT64_MAX */
	    (uint64_t)(-(INT64_C(1) << 40) - (int64_t)seq),
	};
	memcpy(ev.args, values, sizeof values);
	for (unsigned i = ev.nargs; i < RT_MAX_ARGS; i++)
		ev.args[i] = 0;
	give(&ev);
	head(&ev);
	json_str("tag", site->tag, site->tag_length);
	fprintf(expected, ",\"file\":\"%s\",\"line\":%u,\"func\":\"%s\"", site->file, site->line,
		site->func);
	if (site->kind != RT_SITE_TRACE)
		fprintf(expected, ",\"span\":\"%s\"",
			site->kind == RT_SITE_BEGIN ? "begin" : "end");
	put_args(&ev);
	fprintf(expected, "}\n");
}

static void trace_event(int64_t ts, int32_t pid, int32_t tid, const char *thread, uint64_t seq)
{
	site_event(SITE_TRACE + (unsigned)(seq % (RT_MAX_ARGS + 1)), ts, pid, tid, thread, seq);
}

/* A trace event whose site is lost: the record's two raw words, unsigned. */
static void lost_site_event(int64_t ts, int32_t pid, int32_t tid, const char *thread, uint64_t seq)
{
	struct rt_event ev = base(RT_EVENT_TRACE, ts, pid, tid, thread, seq);
	ev.source = source_of(pid);
	ev.metadata_lost = 1;
	ev.site_id = 4000;
	ev.nargs = 2;
	ev.args[0] = 0xfffffffeu;
	ev.args[1] = seq;
	give(&ev);
	head(&ev);
	fprintf(expected, ",\"metadata\":\"lost\",\"site_id\":4000");
	put_args(&ev);
	fprintf(expected, "}\n");
}

static void log_event(int64_t ts, int32_t pid, int32_t tid, const char *thread, uint64_t seq,
		      const char *msg, const char *shown)
{
	struct rt_event ev = base(RT_EVENT_LOG, ts, pid, tid, thread, seq);
	ev.source = source_of(pid);
	ev.site = &sites[SITE_LOG];
	ev.site_id = SITE_LOG;
	ev.level = "warn";
	ev.msg.s = msg;
	ev.msg.length = strlen(msg);
	give(&ev);
	head(&ev);
	json_str("level", "warn", 4);
	json_str("msg", shown, strlen(shown));
	fprintf(expected, ",\"file\":\"%s\",\"line\":%u,\"func\":\"%s\"}\n", sites[SITE_LOG].file,
		sites[SITE_LOG].line, sites[SITE_LOG].func);
}

static void call_event(enum rt_event_kind kind, int64_t ts, int32_t pid, int32_t tid,
		       const char *thread, uint64_t seq, uint32_t depth, int known)
{
	struct rt_event ev = base(kind, ts, pid, tid, thread, seq);
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
	struct rt_event ev = base(RT_EVENT_IO, ts, pid, tid, thread, seq);
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
	ev = base(RT_EVENT_IO, ts, pid, tid, thread, seq + 1);
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

/*
 * A loss: overwritten events, or (note) damaged ones whose count was
 * estimated.  Untimed: it has the time of the event before it (ts), and
 * JSON shows none.
 */
static void lost_with(int64_t ts, int32_t pid, int32_t tid, uint64_t count, const char *note,
		      int timed)
{
	struct rt_event ev = base(RT_EVENT_LOST, ts, pid, tid, "", 0);
	ev.cpu = -1;
	ev.has_seq = 0;
	ev.count = count;
	ev.reason = note ? "damaged" : "overwritten";
	ev.note = note;
	ev.estimated = note != NULL;
	ev.timed = timed;
	give(&ev);
	fprintf(expected, "{\"kind\":\"lost\",\"pid\":%d,\"tid\":%d,\"count\":%" PRIu64, (int)pid,
		(int)tid, count);
	json_str("reason", ev.reason, strlen(ev.reason));
	if (note)
		fprintf(expected, ",\"estimated\":true");
	if (timed)
		fprintf(expected, ",\"ts_ns\":%" PRId64, ts);
	if (note)
		json_str("note", note, strlen(note));
	fprintf(expected, "}\n");
}

static void lost(int64_t ts, int32_t pid, int32_t tid, uint64_t count)
{
	lost_with(ts, pid, tid, count, NULL, 1);
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
	for (unsigned n = 0; n <= RT_MAX_ARGS; n++) {
		struct rt_site *site = &sites[SITE_TRACE + n];
		*site = (struct rt_site){.valid = 1,
					 .kind = RT_SITE_TRACE,
					 .line = 12 + n,
					 .nargs = (uint8_t)n,
					 .tag = "before send",
					 .file = "src/app.c",
					 .func = "main"};
		for (unsigned i = 0; i < n; i++) {
			site->arg_types[i] = arg_types[i];
			if (RT_ARG_CLASS(arg_types[i]) == RT_ARG_SIGNED)
				site->signed_args |= (uint8_t)(1u << i);
		}
	}
	sites[SITE_LOG] = (struct rt_site){.valid = 1,
					   .kind = RT_SITE_LOG,
					   .line = 88,
					   .tag = "request %d",
					   .file = "src/app.c",
					   .func = "handle"};
	/* a span's tag with what TSDL must escape, and a character past ASCII */
	for (int end = 0; end < 2; end++)
		sites[SITE_BEGIN + end] =
		    (struct rt_site){.valid = 1,
				     .kind = end ? RT_SITE_END : RT_SITE_BEGIN,
				     .line = 120 + (uint32_t)end,
				     .nargs = 2,
				     .arg_types = {RT_ARG_SIGNED | 8, RT_ARG_POINTER | 8},
				     .signed_args = 1,
				     .tag = "phase \"load\" \\ caf\xc3\xa9",
				     .file = "src/phase.c",
				     .func = "load"};
	sites[SITE_INVALID] = (struct rt_site){.tag = "", .file = "", .func = ""};
	for (int i = 0; i < SITES; i++) {
		sites[i].tag_length = (uint32_t)strlen(sites[i].tag);
		sites[i].file_length = (uint32_t)strlen(sites[i].file);
		sites[i].func_length = (uint32_t)strlen(sites[i].func);
	}
	/* two processes whose site tables hold those sites */
	static struct rt_reader readers[2];
	struct rt_set_source sources[2];
	memset(sources, 0, sizeof sources);
	for (int i = 0; i < 2; i++) {
		readers[i].sites.sites = sites;
		readers[i].sites.count = SITES;
		readers[i].sites.valid_count = SITES - 1;
		sources[i].reader = &readers[i];
	}
	struct rt_trace_set set;
	memset(&set, 0, sizeof set);
	set.sources = sources;
	set.source_count = 2;
	struct rt_export_target target = {.dir = argv[1], .set = &set};
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
			if (i % 200 == 0) {
				site_event(SITE_BEGIN, ts, pids[t], tids[t], names[t], seq[t]++);
				site_event(SITE_END, ts, pids[t], tids[t], names[t], seq[t]++);
				lost_site_event(ts, pids[t], tids[t], names[t], seq[t]++);
			}
			break;
		case 1:
			log_event(ts, pids[t], tids[t], names[t], seq[t]++,
				  "request 42 from alice took 17 us",
				  "request 42 from alice took 17 us");
			break;
		case 2:
			call_event(RT_EVENT_ENTER, ts, pids[t], tids[t], names[t], seq[t]++,
				   (uint32_t)(i % 3), i % 2);
			break;
		case 3:
			call_event(RT_EVENT_EXIT, ts, pids[t], tids[t], names[t], seq[t]++,
				   (uint32_t)(i % 3), i % 2);
			break;
		default:
			io_event(ts, pids[t], tids[t], names[t], seq[t]);
			seq[t] += 2;
			break;
		}
		if (i == 3001)
			lost(ts, 10, 12, 40); /* between events of a thread */
		if (i == 4002) /* damage: a note, an estimated count, no time of its own */
			lost_with(ts, 20, 21, 12, "a region of \"ring 3\" unreadable", 0);
		if (i == 4003) /* a loss of no events, which discards none */
			lost_with(ts, 20, 22, 0, NULL, 1);
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
