/*
 * perfetto.c - `ringtrace export --perfetto`: the set as a Perfetto trace
 * (protobuf; a Trace message whose packets are track events), for the
 * Perfetto UI and its trace processor.
 *
 * Each process is a track (a ProcessDescriptor: pid and program) and each
 * thread a track of it (a ThreadDescriptor: pid, tid, name), described by
 * a TrackDescriptor packet before the first event on it.  On a thread's
 * track: function calls are nested slices, file I/O calls are slices from
 * their start to their end, trace events, log messages and losses are
 * instants; losses of no thread's go on the process's track.  Spans marked
 * in the source go on a child track of the thread's, named "spans".
 *
 * Every packet goes out as soon as it is built, as one field of the Trace
 * message, so memory grows with threads and call depth, never with events.
 *
 * Calls and spans marked in the source (RT_BEGIN, RT_END, RT_SCOPE, named
 * by the tag) are paired by the span tracker (event/span_tracker.h), as in
 * the Chrome export: a slice begins where it reports a begin and ends where
 * it reports the end, annotated with how it ended when it did not return
 * ("unwound", "thread_ended", "exited", "exit_lost" or "end_lost",
 * "unclosed": rt_span_end_mark).  The tracker keeps a thread's calls and
 * its marked spans on two stacks, each nested, which need not nest within
 * each other (a span begun in one function may end in another): so each
 * has a track, where a slice end always ends the innermost slice.  An exit
 * that closes nothing is an instant "exit without enter" on the thread's
 * track, an end that closes nothing an instant "end without begin" on the
 * marked spans' track; a begin past the tracker's caps is left out, with
 * the events that belong to it.
 * Enters and exits of no known thread are left out; a span's begin or end
 * of no known thread is an instant on the process's track.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event/span_tracker.h"
#include "export/exporter.h"
#include "export/protobuf.h"
#include "present/io_view.h"
#include "read/damage.h"

/* Field numbers of Perfetto's trace protos (tests/export/perfetto.proto lists them). */
enum {
	TRACE_PACKET = 1,

	PACKET_TIMESTAMP = 8,
	PACKET_SEQUENCE_ID = 10, /* trusted_packet_sequence_id */
	PACKET_TRACK_EVENT = 11,
	PACKET_SEQUENCE_FLAGS = 13,
	PACKET_TRACK_DESCRIPTOR = 60,

	TRACK_UUID = 1,
	TRACK_NAME = 2,
	TRACK_PROCESS = 3,
	TRACK_THREAD = 4,
	TRACK_PARENT_UUID = 5,

	PROCESS_PID = 1,
	PROCESS_NAME = 6,

	THREAD_PID = 1,
	THREAD_TID = 2,
	THREAD_NAME = 5,

	EVENT_DEBUG_ANNOTATION = 4,
	EVENT_TYPE = 9,
	EVENT_TRACK_UUID = 11,
	EVENT_NAME = 23,

	ANNOTATION_BOOL = 2,
	ANNOTATION_UINT = 3,
	ANNOTATION_INT = 4,
	ANNOTATION_STRING = 6,
	ANNOTATION_POINTER = 7,
	ANNOTATION_NAME = 10,
};

enum { SLICE_BEGIN = 1, SLICE_END = 2, INSTANT = 3 };

/* SEQ_INCREMENTAL_STATE_CLEARED: the sequence starts here */
#define SEQUENCE_CLEARED 1
#define SEQUENCE_ID 1

struct thread {
	uint32_t source;
	int32_t tid, pid;
	char *name; /* as described */
	size_t name_length;
	int marked_described;	     /* the track of its marked spans */
	struct rt_span_thread spans; /* its open slices; the time of its latest event */
};

struct process {
	int described;
	int32_t pid;
};

struct perfetto {
	struct rt_out *out;
	struct rt_pb pb;
	int started; /* a packet went out */
	struct thread *threads;
	size_t thread_count, thread_capacity;
	uint32_t *slots; /* hash of threads: index + 1, 0 empty */
	size_t slot_count;
	struct process *processes; /* by source */
	size_t process_count;
	struct rt_span_tracker tracker;
	int error;
};

static uint64_t process_uuid(uint32_t source)
{
	return ((uint64_t)source + 1) << 32;
}

static uint64_t thread_uuid(const struct thread *t)
{
	return process_uuid(t->source) | (uint32_t)t->tid;
}

/* The track of t's marked spans: the top bit, which no process's or thread's uuid has. */
static uint64_t marked_uuid(const struct thread *t)
{
	return thread_uuid(t) | 1ull << 63;
}

static uint64_t ts_of(int64_t ts)
{
	return ts < 0 ? 0 : (uint64_t)ts;
}

static void packet_begin(struct perfetto *p, int64_t ts)
{
	rt_pb_reset(&p->pb);
	rt_pb_varint(&p->pb, PACKET_TIMESTAMP, ts_of(ts));
	rt_pb_varint(&p->pb, PACKET_SEQUENCE_ID, SEQUENCE_ID);
	if (!p->started)
		rt_pb_varint(&p->pb, PACKET_SEQUENCE_FLAGS, SEQUENCE_CLEARED);
}

static void packet_end(struct perfetto *p)
{
	if (p->pb.oom) {
		p->error = -ENOMEM;
		return;
	}
	rt_pb_write_field(p->out, TRACE_PACKET, &p->pb);
	p->started = 1;
}

static size_t cstrlen(const char *s)
{
	return s ? strlen(s) : 0;
}

/* ---- tracks ---- */

static int describe_process(struct perfetto *p, const struct rt_event *ev)
{
	if (ev->source >= p->process_count) {
		size_t n = p->process_count ? p->process_count : 8;
		while (n <= ev->source)
			n *= 2;
		struct process *q = realloc(p->processes, n * sizeof(*q));
		if (!q)
			return -ENOMEM;
		memset(q + p->process_count, 0, (n - p->process_count) * sizeof(*q));
		p->processes = q;
		p->process_count = n;
	}
	struct process *pr = &p->processes[ev->source];
	if (pr->described && pr->pid == ev->pid)
		return 0;
	pr->described = 1;
	pr->pid = ev->pid;
	packet_begin(p, ev->ts_ns);
	size_t d = rt_pb_begin(&p->pb, PACKET_TRACK_DESCRIPTOR);
	rt_pb_varint(&p->pb, TRACK_UUID, process_uuid(ev->source));
	size_t m = rt_pb_begin(&p->pb, TRACK_PROCESS);
	rt_pb_varint(&p->pb, PROCESS_PID, (uint64_t)(int64_t)ev->pid);
	if (ev->program.s && ev->program.length)
		rt_pb_string(&p->pb, PROCESS_NAME, ev->program.s, ev->program.length);
	rt_pb_end(&p->pb, m);
	rt_pb_end(&p->pb, d);
	packet_end(p);
	return p->error;
}

static void describe_thread(struct perfetto *p, const struct thread *t, int64_t ts)
{
	packet_begin(p, ts);
	size_t d = rt_pb_begin(&p->pb, PACKET_TRACK_DESCRIPTOR);
	rt_pb_varint(&p->pb, TRACK_UUID, thread_uuid(t));
	size_t m = rt_pb_begin(&p->pb, TRACK_THREAD);
	rt_pb_varint(&p->pb, THREAD_PID, (uint64_t)(int64_t)t->pid);
	rt_pb_varint(&p->pb, THREAD_TID, (uint64_t)(int64_t)t->tid);
	if (t->name_length)
		rt_pb_string(&p->pb, THREAD_NAME, t->name, t->name_length);
	rt_pb_end(&p->pb, m);
	rt_pb_end(&p->pb, d);
	packet_end(p);
}

/* The track of t's marked spans, a child of its track, described before its first event. */
static void describe_marked_track(struct perfetto *p, struct thread *t, int64_t ts)
{
	if (t->marked_described)
		return;
	t->marked_described = 1;
	packet_begin(p, ts);
	size_t d = rt_pb_begin(&p->pb, PACKET_TRACK_DESCRIPTOR);
	rt_pb_varint(&p->pb, TRACK_UUID, marked_uuid(t));
	rt_pb_string(&p->pb, TRACK_NAME, "spans", 5);
	rt_pb_varint(&p->pb, TRACK_PARENT_UUID, thread_uuid(t));
	rt_pb_end(&p->pb, d);
	packet_end(p);
}

static size_t slot_of(const struct perfetto *p, uint32_t source, int32_t tid)
{
	uint64_t h = ((uint64_t)source << 32 | (uint32_t)tid) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (p->slot_count - 1);
	for (;;) {
		uint32_t k = p->slots[i];
		if (!k)
			return i;
		const struct thread *t = &p->threads[k - 1];
		if (t->source == source && t->tid == tid)
			return i;
		i = (i + 1) & (p->slot_count - 1);
	}
}

static int grow_slots(struct perfetto *p)
{
	size_t n = p->slot_count ? 2 * p->slot_count : 64;
	uint32_t *s = calloc(n, sizeof(*s));
	if (!s)
		return -ENOMEM;
	free(p->slots);
	p->slots = s;
	p->slot_count = n;
	for (size_t i = 0; i < p->thread_count; i++)
		p->slots[slot_of(p, p->threads[i].source, p->threads[i].tid)] = (uint32_t)(i + 1);
	return 0;
}

/* The thread of ev (tid not 0), described with its current name; NULL when out of memory. */
static struct thread *thread_of(struct perfetto *p, const struct rt_event *ev)
{
	if (2 * (p->thread_count + 1) > p->slot_count && grow_slots(p) < 0)
		return NULL;
	size_t i = slot_of(p, ev->source, ev->tid);
	struct thread *t;
	if (p->slots[i]) {
		t = &p->threads[p->slots[i] - 1];
	} else {
		if (p->thread_count == p->thread_capacity) {
			size_t n = p->thread_capacity ? 2 * p->thread_capacity : 16;
			struct thread *q = realloc(p->threads, n * sizeof(*q));
			if (!q)
				return NULL;
			p->threads = q;
			p->thread_capacity = n;
		}
		t = &p->threads[p->thread_count++];
		memset(t, 0, sizeof(*t));
		t->source = ev->source;
		t->tid = ev->tid;
		t->pid = ev->pid;
		p->slots[i] = (uint32_t)p->thread_count;
		t->name_length = (size_t)-1; /* not described yet */
	}
	size_t n = ev->thread.s ? ev->thread.length : 0;
	/* described again when it is named (or renamed) after its first event */
	if (n != t->name_length || (n && memcmp(t->name, ev->thread.s, n) != 0)) {
		char *name = malloc(n + 1);
		if (!name)
			return NULL;
		if (n)
			memcpy(name, ev->thread.s, n);
		name[n] = 0;
		free(t->name);
		t->name = name;
		t->name_length = n;
		describe_thread(p, t, ev->ts_ns);
	}
	return t;
}

/* ---- events ---- */

static void annotation_name(struct rt_pb *pb, const char *name)
{
	rt_pb_bytes(pb, ANNOTATION_NAME, name, strlen(name));
}

static void ann_string(struct rt_pb *pb, const char *name, const char *s, size_t n)
{
	size_t m = rt_pb_begin(pb, EVENT_DEBUG_ANNOTATION);
	annotation_name(pb, name);
	rt_pb_string(pb, ANNOTATION_STRING, s ? s : "", s ? n : 0);
	rt_pb_end(pb, m);
}

static void ann_cstr(struct rt_pb *pb, const char *name, const char *s)
{
	ann_string(pb, name, s, cstrlen(s));
}

static void ann_int(struct rt_pb *pb, const char *name, int64_t v)
{
	size_t m = rt_pb_begin(pb, EVENT_DEBUG_ANNOTATION);
	annotation_name(pb, name);
	rt_pb_varint(pb, ANNOTATION_INT, (uint64_t)v);
	rt_pb_end(pb, m);
}

static void ann_uint(struct rt_pb *pb, const char *name, uint64_t v)
{
	size_t m = rt_pb_begin(pb, EVENT_DEBUG_ANNOTATION);
	annotation_name(pb, name);
	rt_pb_varint(pb, ANNOTATION_UINT, v);
	rt_pb_end(pb, m);
}

static void ann_pointer(struct rt_pb *pb, const char *name, uint64_t v)
{
	size_t m = rt_pb_begin(pb, EVENT_DEBUG_ANNOTATION);
	annotation_name(pb, name);
	rt_pb_varint(pb, ANNOTATION_POINTER, v);
	rt_pb_end(pb, m);
}

static void ann_bool(struct rt_pb *pb, const char *name, int v)
{
	size_t m = rt_pb_begin(pb, EVENT_DEBUG_ANNOTATION);
	annotation_name(pb, name);
	rt_pb_varint(pb, ANNOTATION_BOOL, v != 0);
	rt_pb_end(pb, m);
}

static void ann_true(struct rt_pb *pb, const char *name)
{
	ann_bool(pb, name, 1);
}

/* Open a track event packet; annotations follow, then event_end. */
static size_t event_begin(struct perfetto *p, int64_t ts, int type, uint64_t track,
			  const char *name, size_t name_length)
{
	packet_begin(p, ts);
	size_t m = rt_pb_begin(&p->pb, PACKET_TRACK_EVENT);
	rt_pb_varint(&p->pb, EVENT_TYPE, (uint64_t)type);
	rt_pb_varint(&p->pb, EVENT_TRACK_UUID, track);
	if (name)
		rt_pb_string(&p->pb, EVENT_NAME, name, name_length);
	return m;
}

static void event_end(struct perfetto *p, size_t mark)
{
	rt_pb_end(&p->pb, mark);
	packet_end(p);
}

static void slice_end(struct perfetto *p, int64_t ts, uint64_t track, const char *why)
{
	size_t m = event_begin(p, ts, SLICE_END, track, NULL, 0);
	if (why)
		ann_true(&p->pb, why);
	event_end(p, m);
}

/* What dump --json says of every event: its CPU and sequence, and lost metadata. */
static void common_annotations(struct rt_pb *pb, const struct rt_event *ev)
{
	if (ev->cpu >= 0)
		ann_int(pb, "cpu", ev->cpu);
	if (ev->has_seq)
		ann_uint(pb, "seq", ev->seq);
	if (ev->metadata_lost) {
		ann_cstr(pb, "metadata", "lost");
		ann_uint(pb, "site_id", ev->site_id);
	}
	if (ev->raw_time)
		ann_true(pb, "raw_time");
}

static void function_name(const struct rt_event *ev, char *buf, size_t size)
{
	if (ev->place.func)
		snprintf(buf, size, "%s", ev->place.func);
	else
		rt_function_place_text(&ev->place, ev->addr, buf, size);
}

static void function_annotations(struct rt_pb *pb, const struct rt_event *ev)
{
	if (ev->place.file) {
		ann_cstr(pb, "file", ev->place.file);
		ann_uint(pb, "line", ev->place.line);
	}
	if (ev->place.module)
		ann_cstr(pb, "module", ev->place.module);
	ann_pointer(pb, "addr", ev->addr);
	ann_uint(pb, "depth", ev->depth);
}

static void io_path(struct rt_pb *pb, const char *key, const char *path, uint32_t length)
{
	if (path)
		ann_string(pb, key, path, length);
}

static void io_name(struct rt_pb *pb, const char *key, const struct rt_fd_name *n)
{
	if (n->known)
		ann_string(pb, key, n->name, n->name_length);
	else if (n->why)
		ann_cstr(pb, "path_why", n->why);
}

static void io_annotations(struct rt_pb *pb, const struct rt_io_shown *s)
{
	const struct rt_io_event *io = &s->ev;
	if (io->fd >= 0)
		ann_int(pb, "fd", io->fd);
	if (rt_io_shows_named_path(io))
		io_path(pb, "path", io->path, io->path_length);
	else
		io_name(pb, "path", &s->names.fd);
	if (io->op == RT_IO_RENAME)
		io_path(pb, "path2", io->path2, io->path2_length);
	if (io->op == RT_IO_COPY_FILE_RANGE || io->op == RT_IO_SENDFILE) {
		if (io->flags & RT_IO_F_AUX)
			ann_int(pb, "fd2", (int32_t)io->aux[0]);
		io_name(pb, "path2", &s->names.fd2);
	}
	if (io->flags & RT_IO_F_OFFSET)
		ann_int(pb, "offset", io->offset);
	else if (s->names.offset_derived)
		ann_int(pb, "offset", s->names.offset);
	ann_int(pb, "size", io->size);
	ann_int(pb, "result", io->result);
	const int failed = rt_io_event_failed(io);
	ann_int(pb, "errno", failed ? -io->result : 0);
	if (failed) {
		const char *name = rt_io_errno_name((int)-io->result);
		if (name)
			ann_cstr(pb, "error", name);
	}
	if (io->flags & RT_IO_F_PATH_CUT)
		ann_true(pb, "path_cut");
	if (s->has_duration)
		ann_int(pb, "dur_ns", s->dur_ns);
}

static void on_io(struct perfetto *p, struct thread *t, uint64_t track, const struct rt_event *ev)
{
	const struct rt_io_shown *s = &ev->io;
	if (!s->ok) {
		size_t m = event_begin(p, ev->ts_ns, INSTANT, track, "malformed io", 12);
		ann_cstr(&p->pb, "problem", s->problem ? s->problem : "?");
		common_annotations(&p->pb, ev);
		event_end(p, m);
		return;
	}
	const char *name = rt_io_op_json_name(s->ev.op);
	if (!name)
		name = "io";
	if (!s->has_duration || s->dur_ns <= 0) {
		size_t m = event_begin(p, ev->ts_ns, INSTANT, track, name, strlen(name));
		io_annotations(&p->pb, s);
		common_annotations(&p->pb, ev);
		event_end(p, m);
		return;
	}
	/*
	 * The call began dur_ns before its record; never before the thread's
	 * previous event, which would cross the slices around it.
	 */
	int64_t begin = ev->ts_ns - s->dur_ns;
	if (t && t->spans.has_time && begin < t->spans.last_ts)
		begin = t->spans.last_ts;
	size_t m = event_begin(p, begin, SLICE_BEGIN, track, name, strlen(name));
	io_annotations(&p->pb, s);
	common_annotations(&p->pb, ev);
	event_end(p, m);
	slice_end(p, ev->ts_ns, track, NULL);
}

static void site_annotations(struct rt_pb *pb, const struct rt_site *site)
{
	if (!site || !site->valid)
		return;
	ann_string(pb, "file", site->file, site->file_length);
	ann_uint(pb, "line", site->line);
	ann_string(pb, "func", site->func, site->func_length);
}

/* arg0 ... arg5, or end_arg0 ... of an end on its span's slice */
/* end: the arguments of a span's end, beside its begin's on the same slice */
static void arg_annotations(struct rt_pb *pb, const struct rt_event *ev, int end)
{
	static const char *const keys[2][RT_MAX_ARGS] = {
	    {"arg0", "arg1", "arg2", "arg3", "arg4", "arg5"},
	    {"end_arg0", "end_arg1", "end_arg2", "end_arg3", "end_arg4", "end_arg5"}};
	for (unsigned i = 0; i < ev->nargs && i < RT_MAX_ARGS; i++) {
		const char *key = keys[end][i];
		if (ev->signed_args & (1u << i))
			ann_int(pb, key, (int64_t)ev->args[i]);
		else
			ann_uint(pb, key, ev->args[i]);
	}
}

static void on_trace(struct perfetto *p, uint64_t track, const struct rt_event *ev)
{
	const struct rt_site *site = ev->site && ev->site->valid ? ev->site : NULL;
	char lost[48];
	const char *name = site ? site->tag : lost;
	size_t length = site ? site->tag_length : 0;
	if (!site)
		length = (size_t)snprintf(lost, sizeof(lost), "site %u", ev->site_id);
	size_t m = event_begin(p, ev->ts_ns, INSTANT, track, name, length);
	arg_annotations(&p->pb, ev, 0);
	site_annotations(&p->pb, site);
	common_annotations(&p->pb, ev);
	event_end(p, m);
}

/* A call's slice, named by its function. */
static void call_begin(struct perfetto *p, uint64_t track, const struct rt_event *ev)
{
	char name[512];
	function_name(ev, name, sizeof(name));
	size_t m = event_begin(p, ev->ts_ns, SLICE_BEGIN, track, name, strlen(name));
	function_annotations(&p->pb, ev);
	common_annotations(&p->pb, ev);
	event_end(p, m);
}

/* An RT_BEGIN: a slice named by its tag, with its arguments. */
static void marked_begin(struct perfetto *p, uint64_t track, const struct rt_event *ev)
{
	size_t m =
	    event_begin(p, ev->ts_ns, SLICE_BEGIN, track, ev->site->tag, ev->site->tag_length);
	ann_true(&p->pb, "span");
	arg_annotations(&p->pb, ev, 0);
	site_annotations(&p->pb, ev->site);
	common_annotations(&p->pb, ev);
	event_end(p, m);
}

/* The track of span, a call or a marked span of thread t. */
static uint64_t track_of(const struct thread *t, const struct rt_span *span)
{
	return span->kind == RT_SPAN_MARKED ? marked_uuid(t) : thread_uuid(t);
}

static int span_begin(void *ctx, void *thread, struct rt_span *span,
		      const struct rt_span_event *span_event)
{
	struct perfetto *p = ctx;
	if (span->kind == RT_SPAN_CALL) {
		call_begin(p, thread_uuid(thread), span_event->origin);
	} else {
		describe_marked_track(p, thread, span_event->ts);
		marked_begin(p, marked_uuid(thread), span_event->origin);
	}
	return 0;
}

/*
 * The end of the innermost slice of span's track: a marked span's end
 * carries the end's arguments; any slice that did not return, how it ended.
 */
static int span_end(void *ctx, void *thread, struct rt_span *span, int64_t ts, enum rt_span_end how,
		    const struct rt_span_event *own_end)
{
	struct perfetto *p = ctx;
	uint64_t track = track_of(thread, span);
	if (how != RT_SPAN_RETURNED || span->kind == RT_SPAN_CALL) {
		slice_end(p, ts, track, rt_span_end_mark(how, span->kind));
		return 0;
	}
	size_t m = event_begin(p, ts, SLICE_END, track, NULL, 0);
	arg_annotations(&p->pb, own_end->origin, 1);
	common_annotations(&p->pb, own_end->origin);
	event_end(p, m);
	return 0;
}

/* An exit whose enter was never seen, or an end with no open span of its name. */
static int span_orphan(void *ctx, void *thread, const struct rt_span_event *span_event)
{
	struct perfetto *p = ctx;
	const struct rt_event *ev = span_event->origin;
	size_t m;
	if (span_event->input == RT_SPAN_EXIT) {
		char name[512];
		function_name(ev, name, sizeof(name));
		m = event_begin(p, ev->ts_ns, INSTANT, thread_uuid(thread), "exit without enter",
				18);
		ann_string(&p->pb, "function", name, strlen(name));
		function_annotations(&p->pb, ev);
	} else {
		describe_marked_track(p, thread, ev->ts_ns);
		m = event_begin(p, ev->ts_ns, INSTANT, marked_uuid(thread), "end without begin",
				17);
		ann_string(&p->pb, "span", ev->site->tag, ev->site->tag_length);
		arg_annotations(&p->pb, ev, 0);
		site_annotations(&p->pb, ev->site);
	}
	common_annotations(&p->pb, ev);
	event_end(p, m);
	return 0;
}

/* Past the tracker's caps nothing is written. */
static const struct rt_span_ops span_ops = {
    .begin = span_begin, .end = span_end, .orphan = span_orphan};

static void on_log(struct perfetto *p, uint64_t track, const struct rt_event *ev)
{
	const char *name = ev->msg.s ? ev->msg.s : "log";
	size_t length = ev->msg.s ? ev->msg.length : 3;
	size_t m = event_begin(p, ev->ts_ns, INSTANT, track, name, length);
	if (ev->level)
		ann_cstr(&p->pb, "level", ev->level);
	if (ev->msg.s)
		ann_string(&p->pb, "msg", ev->msg.s, ev->msg.length);
	if (ev->damaged)
		ann_true(&p->pb, "damaged");
	site_annotations(&p->pb, ev->site && ev->site->valid ? ev->site : NULL);
	common_annotations(&p->pb, ev);
	event_end(p, m);
}

static void on_lost(struct perfetto *p, uint64_t track, const struct rt_event *ev)
{
	char name[96];
	int n = snprintf(name, sizeof(name), "lost %llu events (%s)", (unsigned long long)ev->count,
			 ev->reason ? ev->reason : "?");
	if (n < 0 || (size_t)n >= sizeof(name))
		n = (int)strlen(name);
	size_t m = event_begin(p, ev->ts_ns, INSTANT, track, name, (size_t)n);
	ann_uint(&p->pb, "count", ev->count);
	ann_cstr(&p->pb, "reason", ev->reason ? ev->reason : "?");
	if (ev->note)
		ann_cstr(&p->pb, "note", ev->note);
	if (ev->estimated)
		ann_true(&p->pb, "estimated");
	if (!ev->timed)
		ann_bool(&p->pb, "time_known", 0);
	if (ev->has_last)
		ann_int(&p->pb, "ts_last_ns", ev->ts_last_ns);
	if (ev->damage) {
		ann_uint(&p->pb, "offset", ev->damage->offset);
		ann_uint(&p->pb, "length", ev->damage->length);
		ann_string(&p->pb, "what", ev->damage->what,
			   strnlen(ev->damage->what, sizeof(ev->damage->what)));
	}
	if (ev->in_region)
		ann_true(&p->pb, "in_region");
	common_annotations(&p->pb, ev);
	event_end(p, m);
}

/* ---- the exporter ---- */

static int pf_open(void **state, const struct rt_export_target *target, char *message,
		   size_t message_size)
{
	struct perfetto *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	p->out = target->out;
	rt_pb_init(&p->pb);
	rt_span_tracker_init(&p->tracker, &span_ops, p, 0);
	*state = p;
	return 0;
}

static int pf_event(void *state, const struct rt_event *ev)
{
	struct perfetto *p = state;
	if (p->error)
		return p->error;
	if (describe_process(p, ev) < 0)
		return p->error ? p->error : -ENOMEM;
	struct thread *t = NULL;
	uint64_t track = process_uuid(ev->source);
	if (ev->tid != 0) {
		t = thread_of(p, ev);
		if (!t)
			return -ENOMEM;
		track = thread_uuid(t);
	}
	/* a span whose site or thread is lost has nothing to match: an instant */
	struct rt_span_event span;
	if (t && rt_event_as_span(ev, &span) != RT_SPAN_NONE) {
		int rc = rt_span_feed(&p->tracker, &t->spans, t, &span);
		if (rc && !p->error)
			p->error = rc;
		return p->error;
	}
	switch (ev->kind) {
	case RT_EVENT_TRACE:
		on_trace(p, track, ev);
		break;
	case RT_EVENT_LOG:
		on_log(p, track, ev);
		break;
	case RT_EVENT_ENTER:
	case RT_EVENT_EXIT:
		break; /* of no known thread */
	case RT_EVENT_IO:
		on_io(p, t, track, ev);
		break;
	case RT_EVENT_LOST:
		on_lost(p, track, ev);
		break;
	}
	if (t)
		rt_span_saw(&t->spans, ev->ts_ns);
	return p->error;
}

static int pf_finish(void *state)
{
	struct perfetto *p = state;
	for (size_t i = 0; i < p->thread_count && !p->error; i++)
		rt_span_finish(&p->tracker, &p->threads[i].spans, &p->threads[i]);
	return p->error;
}

static void pf_free(void *state)
{
	struct perfetto *p = state;
	if (!p)
		return;
	for (size_t i = 0; i < p->thread_count; i++) {
		free(p->threads[i].name);
		rt_span_thread_free(&p->threads[i].spans);
	}
	free(p->threads);
	free(p->slots);
	free(p->processes);
	rt_pb_free(&p->pb);
	free(p);
}

const struct rt_exporter rt_exporter_perfetto = {
    .name = "perfetto",
    .writes_dir = 0,
    .open = pf_open,
    .event = pf_event,
    .finish = pf_finish,
    .free = pf_free,
};
