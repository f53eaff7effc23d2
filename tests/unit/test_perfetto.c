/*
 * test_perfetto.c - the Perfetto exporter (export/perfetto.c) and its
 * protobuf encoder (export/protobuf.c), fed events made by hand.  The
 * output is decoded here, field by field, and checked for what a reader
 * of the format relies on: every packet well formed, tracks described
 * before use (a child track after its parent), and slices balanced on
 * every track (begin before end, no end without a begin, nothing left
 * open).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/check.h"
#include "export/exporter.h"
#include "export/protobuf.h"

/* ---- a decoder of the fields the exporter writes ---- */

struct annotation {
	char name[32];
	int field; /* the value's field number */
	uint64_t value;
	char text[256];
};

struct packet {
	uint64_t ts;
	uint32_t sequence;
	int descriptor, event;
	/* descriptor */
	uint64_t uuid, parent; /* parent: a child track's */
	int process, thread;
	int64_t pid, tid;
	char name[256]; /* process or thread name; the event's name */
	/* event */
	int type;
	uint64_t track;
	struct annotation ann[24];
	int ann_count;
};

static const unsigned char *varint(const unsigned char *p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; p < end && shift < 64; shift += 7) {
		unsigned char b = *p++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return p;
	}
	return NULL;
}

/*
 * Walk the fields of a message; fn sees each (number, wire type, value or
 * bytes).  Returns 0, or -1 when the message is not well formed.
 */
typedef int (*field_fn)(void *ctx, uint32_t field, int wire, uint64_t v, const unsigned char *b,
			size_t n);

static int walk(const unsigned char *p, size_t size, field_fn fn, void *ctx)
{
	const unsigned char *end = p + size;
	while (p < end) {
		uint64_t key, v = 0;
		if (!(p = varint(p, end, &key)))
			return -1;
		int wire = (int)(key & 7);
		uint32_t field = (uint32_t)(key >> 3);
		const unsigned char *b = NULL;
		size_t n = 0;
		if (wire == 0) {
			if (!(p = varint(p, end, &v)))
				return -1;
		} else if (wire == 1) {
			if (end - p < 8)
				return -1;
			for (int i = 0; i < 8; i++)
				v |= (uint64_t)p[i] << (8 * i);
			p += 8;
		} else if (wire == 2) {
			if (!(p = varint(p, end, &v)) || v > (uint64_t)(end - p))
				return -1;
			b = p, n = (size_t)v;
			p += n;
		} else {
			return -1;
		}
		if (fn(ctx, field, wire, v, b, n) < 0)
			return -1;
	}
	return 0;
}

static void text(char *dst, size_t size, const unsigned char *b, size_t n)
{
	if (n >= size)
		n = size - 1;
	memcpy(dst, b, n);
	dst[n] = 0;
}

static int on_annotation(void *ctx, uint32_t field, int wire, uint64_t v, const unsigned char *b,
			 size_t n)
{
	struct annotation *a = ctx;
	if (field == 10 && wire == 2)
		text(a->name, sizeof(a->name), b, n);
	else if (field == 6 && wire == 2)
		a->field = 6, text(a->text, sizeof(a->text), b, n);
	else if (wire == 0 && field >= 2 && field <= 7)
		a->field = (int)field, a->value = v;
	else
		return -1;
	return 0;
}

static int on_event(void *ctx, uint32_t field, int wire, uint64_t v, const unsigned char *b,
		    size_t n)
{
	struct packet *pk = ctx;
	if (field == 9 && wire == 0)
		pk->type = (int)v;
	else if (field == 11 && wire == 0)
		pk->track = v;
	else if (field == 23 && wire == 2)
		text(pk->name, sizeof(pk->name), b, n);
	else if (field == 4 && wire == 2 && pk->ann_count < 24)
		return walk(b, n, on_annotation, &pk->ann[pk->ann_count++]);
	else
		return -1;
	return 0;
}

static int on_process_or_thread(void *ctx, uint32_t field, int wire, uint64_t v,
				const unsigned char *b, size_t n)
{
	struct packet *pk = ctx;
	if (field == 1 && wire == 0)
		pk->pid = (int64_t)v;
	else if (pk->thread && field == 2 && wire == 0)
		pk->tid = (int64_t)v;
	else if (wire == 2 && ((pk->process && field == 6) || (pk->thread && field == 5)))
		text(pk->name, sizeof(pk->name), b, n);
	else
		return -1;
	return 0;
}

static int on_descriptor(void *ctx, uint32_t field, int wire, uint64_t v, const unsigned char *b,
			 size_t n)
{
	struct packet *pk = ctx;
	if (field == 1 && wire == 0) {
		pk->uuid = v;
		return 0;
	}
	if (field == 5 && wire == 0) {
		pk->parent = v;
		return 0;
	}
	if (field == 2 && wire == 2) {
		text(pk->name, sizeof(pk->name), b, n);
		return 0;
	}
	if (field == 3 && wire == 2)
		pk->process = 1;
	else if (field == 4 && wire == 2)
		pk->thread = 1;
	else
		return -1;
	return walk(b, n, on_process_or_thread, pk);
}

static int on_packet(void *ctx, uint32_t field, int wire, uint64_t v, const unsigned char *b,
		     size_t n)
{
	struct packet *pk = ctx;
	if (field == 8 && wire == 0)
		pk->ts = v;
	else if (field == 10 && wire == 0)
		pk->sequence = (uint32_t)v;
	else if (field == 13 && wire == 0)
		; /* sequence flags */
	else if (field == 11 && wire == 2)
		return pk->event = 1, walk(b, n, on_event, pk);
	else if (field == 60 && wire == 2)
		return pk->descriptor = 1, walk(b, n, on_descriptor, pk);
	else
		return -1;
	return 0;
}

struct trace {
	struct packet *packets;
	size_t count, capacity;
};

static int on_trace(void *ctx, uint32_t field, int wire, uint64_t v, const unsigned char *b,
		    size_t n)
{
	struct trace *t = ctx;
	if (field != 1 || wire != 2)
		return -1;
	if (t->count == t->capacity) {
		/* doubling: a packet is several KiB, and a sanitizer's realloc always copies */
		size_t capacity = t->capacity ? 2 * t->capacity : 256;
		struct packet *more = realloc(t->packets, capacity * sizeof(*more));
		if (!more)
			return -1;
		t->packets = more;
		t->capacity = capacity;
	}
	struct packet *pk = &t->packets[t->count++];
	memset(pk, 0, sizeof(*pk));
	return walk(b, n, on_packet, pk);
}

static const struct annotation *ann(const struct packet *pk, const char *name)
{
	for (int i = 0; i < pk->ann_count; i++)
		if (strcmp(pk->ann[i].name, name) == 0)
			return &pk->ann[i];
	return NULL;
}

/* ---- the encoder ---- */

static void test_encoder(void)
{
	struct rt_pb pb;
	rt_pb_init(&pb);
	rt_pb_varint(&pb, 1, 300);
	const unsigned char want[] = {0x08, 0xac, 0x02};
	CHECK_EQ(pb.used, 3);
	CHECK(memcmp(pb.buf, want, 3) == 0);

	rt_pb_reset(&pb);
	rt_pb_varint(&pb, 60, UINT64_MAX);
	CHECK_EQ(pb.used, 2 + 10); /* a two-byte key; ten bytes hold 64 bits */
	CHECK_EQ(rt_pb_zigzag(-1), 1);
	CHECK_EQ(rt_pb_zigzag(1), 2);
	CHECK_EQ(rt_pb_zigzag(INT64_MIN), UINT64_MAX);

	rt_pb_reset(&pb);
	rt_pb_fixed64(&pb, 5, 0x0102030405060708ull);
	const unsigned char fixed[] = {0x29, 8, 7, 6, 5, 4, 3, 2, 1};
	CHECK_EQ(pb.used, 9);
	CHECK(memcmp(pb.buf, fixed, 9) == 0);

	/* a nested body longer than 127 bytes takes a two-byte length, inserted before it */
	rt_pb_reset(&pb);
	size_t outer = rt_pb_begin(&pb, 2);
	size_t inner = rt_pb_begin(&pb, 3);
	char big[200];
	memset(big, 'x', sizeof(big));
	rt_pb_bytes(&pb, 4, big, sizeof(big));
	rt_pb_end(&pb, inner);
	rt_pb_end(&pb, outer);
	CHECK_EQ(pb.used, 1 + 2 + 1 + 2 + 1 + 2 + 200);
	const unsigned char head[] = {0x12, 0xce, 0x01, 0x1a, 0xcb, 0x01, 0x22, 0xc8, 0x01};
	CHECK(memcmp(pb.buf, head, sizeof(head)) == 0);
	CHECK(pb.buf[pb.used - 1] == 'x');
	CHECK(!pb.oom);

	/* bytes that are not UTF-8 become U+FFFD; valid sequences are kept */
	rt_pb_reset(&pb);
	rt_pb_string(&pb, 1,
		     "a\xff"
		     "b\xc3\xa9\xe2\x82",
		     7);
	const unsigned char utf[] = {0x0a, 13,	 'a',  0xef, 0xbf, 0xbd, 'b', 0xc3,
				     0xa9, 0xef, 0xbf, 0xbd, 0xef, 0xbf, 0xbd};
	CHECK_EQ(pb.used, sizeof(utf));
	CHECK(memcmp(pb.buf, utf, sizeof(utf)) == 0);
	rt_pb_free(&pb);
}

/* ---- the exporter ---- */

static struct rt_event base(enum rt_event_kind kind, int64_t ts, int32_t tid)
{
	struct rt_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.ts_ns = ts;
	ev.pid = 100;
	ev.program = (struct rt_event_str){"prog", 4};
	ev.tid = tid;
	ev.thread = tid == 101 ? (struct rt_event_str){"worker", 6} : (struct rt_event_str){"", 0};
	ev.cpu = -1;
	ev.timed = 1;
	return ev;
}

static struct rt_event call(enum rt_event_kind kind, int64_t ts, int32_t tid, const char *func,
			    uint32_t depth, uint64_t addr)
{
	struct rt_event ev = base(kind, ts, tid);
	ev.place.func = func;
	ev.depth = depth;
	ev.addr = addr;
	return ev;
}

/* Export events to a temporary file; the bytes into *t. */
static void export_events(const struct rt_event *events, size_t count, struct trace *t)
{
	FILE *f = tmpfile();
	if (!CHECK(f != NULL))
		return;
	struct rt_out out;
	CHECK_EQ(rt_out_open(&out, fileno(f)), 0);
	struct rt_export_target target = {.out = &out};
	void *state = NULL;
	char message[128] = "";
	const struct rt_exporter *x = &rt_exporter_perfetto;
	CHECK_STR(x->name, "perfetto");
	CHECK_EQ(x->writes_dir, 0);
	CHECK_EQ(x->open(&state, &target, message, sizeof(message)), 0);
	for (size_t i = 0; i < count; i++)
		CHECK_EQ(x->event(state, &events[i]), 0);
	CHECK_EQ(x->finish(state), 0);
	x->free(state);
	CHECK_EQ(rt_out_close(&out), 0);

	long size = ftell(f);
	CHECK(size > 0);
	unsigned char *bytes = malloc((size_t)size);
	rewind(f);
	CHECK_EQ(fread(bytes, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	memset(t, 0, sizeof(*t));
	CHECK_EQ(walk(bytes, (size_t)size, on_trace, t), 0);
	free(bytes);
}

struct track_state {
	uint64_t uuid;
	int described;
	int depth;
	uint64_t last_ts;
};

/*
 * What every reader relies on: one sequence, every event on a described
 * track, per track times in order and slices balanced.  Returns the
 * number of events.
 */
static size_t check_well_formed(const struct trace *t)
{
	struct track_state tracks[16];
	size_t ntracks = 0, events = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct packet *pk = &t->packets[i];
		CHECK_EQ(pk->sequence, 1);
		CHECK(pk->descriptor + pk->event == 1);
		uint64_t uuid = pk->descriptor ? pk->uuid : pk->track;
		CHECK(uuid != 0);
		struct track_state *s = NULL;
		for (size_t k = 0; k < ntracks; k++)
			if (tracks[k].uuid == uuid)
				s = &tracks[k];
		if (!s && CHECK(ntracks < 16)) {
			s = &tracks[ntracks++];
			memset(s, 0, sizeof(*s));
			s->uuid = uuid;
		}
		if (!s)
			continue;
		if (pk->descriptor) {
			s->described = 1;
			if (pk->parent) {
				int parent_described = 0;
				for (size_t k = 0; k < ntracks; k++)
					parent_described |=
					    tracks[k].uuid == pk->parent && tracks[k].described;
				CHECK(parent_described);
			}
			continue;
		}
		events++;
		CHECK(s->described);
		CHECK(pk->ts >= s->last_ts);
		s->last_ts = pk->ts;
		CHECK(pk->type >= 1 && pk->type <= 3);
		if (pk->type == 1) {
			s->depth++;
			CHECK(pk->name[0] != 0);
		} else if (pk->type == 2) {
			CHECK(s->depth > 0);
			s->depth--;
		} else {
			CHECK(pk->name[0] != 0);
		}
	}
	for (size_t k = 0; k < ntracks; k++)
		CHECK_EQ(tracks[k].depth, 0);
	return events;
}

static void test_tracks_and_nesting(void)
{
	static const struct rt_site site = {.valid = 1,
					    .line = 42,
					    .tag = "tick",
					    .tag_length = 4,
					    .file = "a.c",
					    .file_length = 3,
					    .func = "main",
					    .func_length = 4};
	struct rt_event ev[32];
	size_t n = 0;
	/* thread 101: f { g { } } nested; then a call whose exit is missing */
	ev[n++] = call(RT_EVENT_ENTER, 10, 101, "f", 0, 0x1000);
	ev[n++] = call(RT_EVENT_ENTER, 20, 101, "g", 1, 0x2000);
	ev[n] = base(RT_EVENT_TRACE, 25, 101);
	ev[n].site = &site;
	ev[n].nargs = 2;
	ev[n].args[0] = (uint64_t)-5;
	ev[n].args[1] = 7;
	ev[n++].signed_args = 1;
	ev[n++] = call(RT_EVENT_EXIT, 30, 101, "g", 1, 0x2000);
	ev[n++] = call(RT_EVENT_EXIT, 40, 101, "f", 0, 0x1000);
	/* thread 102: began recording inside h, whose exit comes unmatched */
	ev[n++] = call(RT_EVENT_EXIT, 45, 102, "h", 3, 0x3000);
	ev[n++] = call(RT_EVENT_ENTER, 50, 102, "a", 0, 0x4000);
	ev[n++] = call(RT_EVENT_ENTER, 55, 102, "b", 1, 0x5000);
	/* b's exit was not recorded: a's exit closes both */
	ev[n++] = call(RT_EVENT_EXIT, 60, 102, "a", 0, 0x4000);
	/* an I/O call of 5 ns ending at 70, then a log message */
	ev[n] = base(RT_EVENT_IO, 70, 102);
	ev[n].io.ok = 1;
	ev[n].io.ev.op = RT_IO_READ;
	ev[n].io.ev.fd = 3;
	ev[n].io.ev.size = 4096;
	ev[n].io.ev.result = 12;
	ev[n].io.names.fd =
	    (struct rt_fd_name){.known = 1, .name = "/etc/hosts", .name_length = 10};
	ev[n].io.has_duration = 1;
	ev[n++].io.dur_ns = 5;
	ev[n] = base(RT_EVENT_LOG, 72, 102);
	ev[n].level = "warn";
	ev[n++].msg = (struct rt_event_str){"disk 90% full", 13};
	/* still open at the end: c enters and never leaves; the thread's last event is at 90 */
	ev[n++] = call(RT_EVENT_ENTER, 80, 102, "c", 0, 0x6000);
	ev[n] = base(RT_EVENT_TRACE, 90, 102);
	ev[n++].site_id = 9; /* its site's metadata lost */
	/* a loss of no thread's: on the process's track */
	ev[n] = base(RT_EVENT_LOST, 95, 0);
	ev[n].count = 17;
	ev[n++].reason = "overwritten";

	struct trace t;
	export_events(ev, n, &t);
	size_t events = check_well_formed(&t);
	/* 2+2 f,g; instant; unmatched; 2+2 a,b; 2 io; log; 2 c (closed at end); trace; lost */
	CHECK_EQ(events, 4 + 1 + 1 + 4 + 2 + 1 + 2 + 1 + 1);

	uint64_t proc = 0, w101 = 0, w102 = 0;
	int unmatched = 0, missing = 0, unfinished = 0, io_begin = 0, lost = 0, tick = 0, logs = 0;
	for (size_t i = 0; i < t.count; i++) {
		const struct packet *pk = &t.packets[i];
		if (pk->descriptor && pk->process) {
			CHECK_EQ(pk->pid, 100);
			CHECK_STR(pk->name, "prog");
			proc = pk->uuid;
		} else if (pk->descriptor && pk->thread) {
			CHECK_EQ(pk->pid, 100);
			if (pk->tid == 101) {
				CHECK_STR(pk->name, "worker");
				w101 = pk->uuid;
			} else {
				CHECK_EQ(pk->tid, 102);
				CHECK_STR(pk->name, "");
				w102 = pk->uuid;
			}
		}
		if (!pk->event)
			continue;
		const struct annotation *a;
		if (strcmp(pk->name, "exit without enter") == 0) {
			unmatched++;
			CHECK_EQ(pk->type, 3);
			CHECK_EQ(pk->track, w102);
			CHECK_EQ(pk->ts, 45);
			a = ann(pk, "function");
			CHECK(a && strcmp(a->text, "h") == 0);
		}
		if (pk->type == 2 && ann(pk, "exit_lost")) {
			missing++;
			CHECK_EQ(pk->ts, 60);
		}
		if (pk->type == 2 && ann(pk, "unclosed")) {
			unfinished++;
			CHECK_EQ(pk->ts, 90);
			CHECK_EQ(pk->track, w102);
		}
		if (pk->type == 1 && strcmp(pk->name, "read") == 0) {
			io_begin++;
			CHECK_EQ(pk->ts, 65);
			CHECK_EQ(pk->track, w102);
			a = ann(pk, "path");
			CHECK(a && a->field == 6 && strcmp(a->text, "/etc/hosts") == 0);
			a = ann(pk, "fd");
			CHECK(a && a->field == 4 && a->value == 3);
			a = ann(pk, "size");
			CHECK(a && a->value == 4096);
			a = ann(pk, "result");
			CHECK(a && a->value == 12);
			a = ann(pk, "errno");
			CHECK(a && a->value == 0);
			/* the next packet ends it at the call's end */
			CHECK(i + 1 < t.count && t.packets[i + 1].type == 2 &&
			      t.packets[i + 1].ts == 70);
		}
		if (strcmp(pk->name, "tick") == 0) {
			tick++;
			CHECK_EQ(pk->type, 3);
			CHECK_EQ(pk->track, w101);
			a = ann(pk, "arg0");
			CHECK(a && a->field == 4 && (int64_t)a->value == -5);
			a = ann(pk, "arg1");
			CHECK(a && a->field == 3 && a->value == 7);
			a = ann(pk, "line");
			CHECK(a && a->value == 42);
			a = ann(pk, "file");
			CHECK(a && strcmp(a->text, "a.c") == 0);
		}
		if (strcmp(pk->name, "disk 90% full") == 0) {
			logs++;
			a = ann(pk, "level");
			CHECK(a && strcmp(a->text, "warn") == 0);
		}
		if (strcmp(pk->name, "lost 17 events (overwritten)") == 0) {
			lost++;
			CHECK_EQ(pk->track, proc);
			a = ann(pk, "count");
			CHECK(a && a->value == 17);
		}
	}
	CHECK(proc != 0 && w101 != 0 && w102 != 0);
	CHECK(proc != w101 && proc != w102 && w101 != w102);
	CHECK_EQ(unmatched, 1);
	CHECK_EQ(missing, 1);
	CHECK_EQ(unfinished, 1);
	CHECK_EQ(io_begin, 1);
	CHECK_EQ(tick, 1);
	CHECK_EQ(logs, 1);
	CHECK_EQ(lost, 1);
	free(t.packets);
}

/* An enter at the depth of a call still open: that call's exit was lost. */
static void test_enter_closes_lost_exit(void)
{
	struct rt_event ev[4];
	ev[0] = call(RT_EVENT_ENTER, 10, 7, "f", 0, 0x10);
	ev[1] = call(RT_EVENT_ENTER, 20, 7, "g", 0, 0x20);
	ev[2] = call(RT_EVENT_EXIT, 30, 7, "g", 0, 0x20);
	struct trace t;
	export_events(ev, 3, &t);
	CHECK_EQ(check_well_formed(&t), 4);
	int order[4], k = 0;
	for (size_t i = 0; i < t.count; i++)
		if (t.packets[i].event && k < 4)
			order[k++] = t.packets[i].type;
	CHECK_EQ(k, 4);
	/* begin f, end f (missing exit) at g's enter, begin g, end g */
	CHECK(k == 4 && order[0] == 1 && order[1] == 2 && order[2] == 1 && order[3] == 2);
	free(t.packets);
}

/*
 * f -> f whose inner exit was lost: the inner slice ends as exit lost where
 * the outer exit is, which ends the outer slice; then the library's exits
 * for calls left by longjmp and by the end of the thread say so.
 */
static void test_lost_and_closed_exits(void)
{
	struct rt_event ev[7];
	ev[0] = call(RT_EVENT_ENTER, 10, 7, "f", 0, 0x10);
	ev[1] = call(RT_EVENT_ENTER, 20, 7, "f", 1, 0x10);
	ev[2] = call(RT_EVENT_EXIT, 40, 7, "f", 0, 0x10);
	ev[3] = call(RT_EVENT_ENTER, 50, 7, "k", 0, 0x20);
	ev[4] = call(RT_EVENT_ENTER, 60, 7, "l", 1, 0x30);
	ev[5] = call(RT_EVENT_EXIT, 70, 7, "l", 1, 0x30);
	ev[5].function_flags = RT_FUNC_F_UNWOUND;
	ev[6] = call(RT_EVENT_EXIT, 80, 7, "k", 0, 0x20);
	ev[6].function_flags = RT_FUNC_F_THREAD_ENDED;
	struct trace t;
	export_events(ev, 7, &t);
	CHECK_EQ(check_well_formed(&t), 8);
	static const struct {
		int type;
		uint64_t ts;
		const char *mark;
	} want[8] = {{1, 10, NULL}, {1, 20, NULL}, {2, 40, "exit_lost"}, {2, 40, NULL},
		     {1, 50, NULL}, {1, 60, NULL}, {2, 70, "unwound"},	 {2, 80, "thread_ended"}};
	int k = 0;
	for (size_t i = 0; i < t.count; i++) {
		const struct packet *pk = &t.packets[i];
		if (!pk->event || !CHECK(k < 8))
			continue;
		CHECK_EQ(pk->type, want[k].type);
		CHECK_EQ(pk->ts, want[k].ts);
		if (want[k].mark)
			CHECK(ann(pk, want[k].mark) != NULL);
		else if (pk->type == 2)
			CHECK_EQ(pk->ann_count, 0);
		k++;
	}
	CHECK_EQ(k, 8);
	free(t.packets);
}

/* Calls deeper than a thread keeps open are left out, enters and exits alike. */
static void test_depth_limit(void)
{
	enum { DEEP = 1030 };
	static struct rt_event ev[2 * DEEP];
	for (uint32_t i = 0; i < DEEP; i++) {
		ev[i] = call(RT_EVENT_ENTER, 10 + i, 7, "r", i, 0x10);
		ev[2 * DEEP - 1 - i] = call(RT_EVENT_EXIT, 10 + 2 * DEEP - i, 7, "r", i, 0x10);
	}
	struct trace t;
	export_events(ev, 2 * DEEP, &t);
	CHECK_EQ(check_well_formed(&t), 2 * 1024);
	for (size_t i = 0; i < t.count; i++) {
		CHECK(strcmp(t.packets[i].name, "exit without enter") != 0);
		CHECK(!ann(&t.packets[i], "exit_lost") && !ann(&t.packets[i], "unclosed"));
	}
	free(t.packets);
}

static struct rt_event span(enum rt_event_span which, int64_t ts, const struct rt_site *site,
			    int arg)
{
	struct rt_event ev = base(RT_EVENT_TRACE, ts, 7);
	ev.span = which;
	ev.site = site;
	ev.nargs = arg >= 0 ? 1 : 0;
	ev.args[0] = (uint64_t)arg;
	return ev;
}

/*
 * Spans marked in the source go on a child track of their thread's, named
 * "spans", where they nest: an end below the innermost span ends the ones
 * above first, an end without its begin is an instant there, a span begun
 * in f ends inside g, called after it began, and a span open at the end is
 * closed there.  The calls stay on the thread's track.
 */
static void test_spans(void)
{
	static const struct rt_site s = {.valid = 1, .tag = "s", .tag_length = 1, .line = 3},
				    t_ = {.valid = 1, .tag = "t", .tag_length = 1, .line = 4},
				    x = {.valid = 1, .tag = "x", .tag_length = 1, .line = 5},
				    u = {.valid = 1, .tag = "u", .tag_length = 1, .line = 6},
				    open = {.valid = 1, .tag = "open", .tag_length = 4, .line = 7};
	struct rt_event ev[11];
	ev[0] = call(RT_EVENT_ENTER, 10, 7, "f", 0, 0x10);
	ev[1] = span(RT_EVENT_SPAN_BEGIN, 20, &s, 5);
	ev[2] = span(RT_EVENT_SPAN_BEGIN, 30, &t_, -1);
	ev[3] = span(RT_EVENT_SPAN_END, 40, &s, 6);
	ev[4] = span(RT_EVENT_SPAN_END, 50, &x, 9);
	ev[5] = span(RT_EVENT_SPAN_BEGIN, 60, &u, -1);
	ev[6] = call(RT_EVENT_ENTER, 70, 7, "g", 1, 0x20);
	ev[7] = span(RT_EVENT_SPAN_END, 75, &u, -1);
	ev[8] = call(RT_EVENT_EXIT, 80, 7, "g", 1, 0x20);
	ev[9] = call(RT_EVENT_EXIT, 90, 7, "f", 0, 0x10);
	ev[10] = span(RT_EVENT_SPAN_BEGIN, 100, &open, 1);
	struct trace tr;
	export_events(ev, 11, &tr);
	CHECK_EQ(check_well_formed(&tr), 13);
	static const struct {
		int type, marked;
		const char *name, *mark;
		uint64_t ts;
	} want[13] = {
	    {1, 0, "f", NULL, 10},	 {1, 1, "s", NULL, 20},
	    {1, 1, "t", NULL, 30},	 {2, 1, "", "end_lost", 40},
	    {2, 1, "", NULL, 40},	 {3, 1, "end without begin", NULL, 50},
	    {1, 1, "u", NULL, 60},	 {1, 0, "g", NULL, 70},
	    {2, 1, "", NULL, 75},	 {2, 0, "", NULL, 80},
	    {2, 0, "", NULL, 90},	 {1, 1, "open", NULL, 100},
	    {2, 1, "", "unclosed", 100},
	};
	uint64_t thread_track = 0, marked_track = 0;
	int k = 0;
	for (size_t i = 0; i < tr.count; i++) {
		const struct packet *pk = &tr.packets[i];
		if (pk->descriptor && pk->thread)
			thread_track = pk->uuid;
		if (pk->descriptor && pk->parent) {
			CHECK_EQ(pk->parent, thread_track);
			CHECK_STR(pk->name, "spans");
			marked_track = pk->uuid;
		}
		if (!pk->event || !CHECK(k < 13))
			continue;
		CHECK_EQ(pk->type, want[k].type);
		CHECK_STR(pk->name, want[k].name);
		CHECK_EQ(pk->ts, want[k].ts);
		CHECK_EQ(pk->track, want[k].marked ? marked_track : thread_track);
		if (want[k].mark)
			CHECK(ann(pk, want[k].mark) != NULL);
		else
			CHECK(!ann(pk, "end_lost") && !ann(pk, "unclosed"));
		if (k == 1) /* begin s: its argument, and marked a span */
			CHECK(ann(pk, "arg0") && ann(pk, "arg0")->value == 5 && ann(pk, "span"));
		if (k == 4) /* end s: the end's argument */
			CHECK(ann(pk, "end_arg0") && ann(pk, "end_arg0")->value == 6);
		if (k == 5) /* the end without begin names its span */
			CHECK(ann(pk, "span") && strcmp(ann(pk, "span")->text, "x") == 0 &&
			      ann(pk, "arg0") && ann(pk, "arg0")->value == 9);
		k++;
	}
	CHECK_EQ(k, 13);
	CHECK(thread_track != 0 && marked_track != 0 && thread_track != marked_track);
	free(tr.packets);
}

int main(void)
{
	test_encoder();
	test_tracks_and_nesting();
	test_enter_closes_lost_exit();
	test_lost_and_closed_exits();
	test_depth_limit();
	test_spans();
	if (check_failure_count()) {
		fprintf(stderr, "test_perfetto: %d checks failed\n", check_failure_count());
		return 1;
	}
	printf("test_perfetto: ok\n");
	return 0;
}
