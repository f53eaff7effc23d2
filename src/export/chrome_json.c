/*
 * chrome_json.c - the Chrome trace-event JSON exporter (export --chrome).
 *
 * One object {"traceEvents":[...],"displayTimeUnit":"ns"} written as the
 * events come: the Perfetto UI, chrome://tracing and speedscope read it.
 * Times are microseconds with three decimals (the format's unit; nothing
 * below a nanosecond is lost).
 *
 *   process and thread names  "M" metadata events, before every other event
 *   function enter and exit   "B" and "E", nested per thread
 *   RT_BEGIN, RT_END          "B" and "E" of category "span", named by the tag,
 *                             on a track of the thread's own: a pseudo-thread
 *                             (its tid + RT_CHROME_MARKED_TID), nested there,
 *                             named "NAME spans" by an "M" event just before
 *                             its first event (which threads have marked
 *                             spans is known only as they come)
 *   file I/O calls            "X" complete events from the call's start
 *   trace events, log lines   "i" instant events on their thread
 *   losses, damage            "i" instant events, category "loss" (process-wide
 *                             when no thread is known)
 *
 * Nesting: viewers take an "E" as the end of the innermost open "B" of its
 * thread.  Calls and marked spans are paired by the span tracker
 * (event/span_tracker.h), on two stacks per thread whose ends always come
 * innermost first: a "B" is written when it reports a begin and an "E" when
 * it reports the end, with how it ended when it did not return ("unwound",
 * "thread_ended", "exited", "exit_lost" or "end_lost", "unclosed":
 * rt_span_end_mark).  A marked span need not nest within the calls (one
 * begun in one function may end in another), so the marked spans of a
 * thread go on a pseudo-thread of their own, where they nest with each
 * other.  "B" and "E" are written there as they come, in time order: a
 * complete "X" event can only be written at its end, after the spans inside
 * it, and both the Perfetto UI and chrome://tracing may nest complete
 * events that begin at the same time in file order, the wrong way round;
 * async events ("b", "e") would leave the thread for tracks of the
 * process, one per name in the Perfetto UI.  An exit or end that closes
 * nothing becomes an instant "exit without enter" (on the thread) or "end
 * without begin" (on its spans' pseudo-thread); a begin past the tracker's
 * caps is left out, with the events that belong to it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log_levels.h"
#include "event/span_tracker.h"
#include "export/exporter.h"

/* Everything on an event line but its strings. */
#define LINE_FIXED_MAX 640

/*
 * Added to a thread's tid for the pseudo-thread of its marked spans: above
 * any Linux tid (PID_MAX_LIMIT is 2^22), a positive 32-bit number still,
 * which every viewer takes as a tid.
 */
#define RT_CHROME_MARKED_TID 0x40000000

/*
 * What the begin said of the span, written on its "E" (its "B" holds what
 * is the same for every call of the function, or every begin of the site):
 * a call's call site and seq, a marked span's seq and arguments.  The
 * tracker keeps it beside each open span.
 */
struct open_span {
	uint64_t call_site, seq;
	int has_seq;
	unsigned nargs, signed_args;
	uint64_t args[RT_MAX_ARGS];
};

/*
 * A thread: a source's (source, tid).  Found by a hash of what the viewer
 * shows (pid, tid), which also orders the spans still open at the end.
 */
struct thread_state {
	uint32_t source;
	int32_t pid, tid; /* tid 0 with used: the process's own track */
	int used;
	int marked_named; /* the pseudo-thread of its marked spans has its name */
	struct rt_span_thread spans;
};

struct site_text {
	char *bytes;
	size_t length;
};

struct chrome {
	struct rt_out *out;
	/* per source, per site index: its trace events' fixed text (site_text) */
	struct site_text **site_texts;
	uint32_t *site_counts;
	size_t source_count;
	const struct rt_trace_set *set;
	int first; /* no event written yet: no comma before the next */
	struct rt_span_tracker tracker;
	struct thread_state *threads;
	size_t thread_capacity, thread_count;
};

/* The tracker's callbacks, which write the spans (below). */
static const struct rt_span_ops span_ops;

static char *put(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

static char *put_str(char *p, const char *s, size_t n)
{
	*p++ = '"';
	p = rt_fmt_json_escaped(p, s ? s : "", s ? n : 0);
	*p++ = '"';
	return p;
}

/* Microseconds with three decimals: -0.001 for -1 ns. */
static char *put_us(char *p, int64_t ns)
{
	uint64_t magnitude = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	if (ns < 0)
		*p++ = '-';
	p = rt_fmt_u64(p, magnitude / 1000);
	*p++ = '.';
	return rt_fmt_u64_zero(p, magnitude % 1000, 3);
}

static uint64_t hash_thread(int32_t pid, int32_t tid)
{
	uint64_t k = ((uint64_t)(uint32_t)pid << 32) | (uint32_t)tid;
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	return k ^ (k >> 33);
}

static int grow_threads(struct chrome *c)
{
	size_t capacity = c->thread_capacity ? c->thread_capacity * 2 : 64;
	struct thread_state *more = calloc(capacity, sizeof(*more));
	if (!more)
		return -ENOMEM;
	for (size_t i = 0; i < c->thread_capacity; i++) {
		struct thread_state *t = &c->threads[i];
		if (!t->used)
			continue;
		size_t k = hash_thread(t->pid, t->tid) & (capacity - 1);
		while (more[k].used)
			k = (k + 1) & (capacity - 1);
		more[k] = *t;
	}
	free(c->threads);
	c->threads = more;
	c->thread_capacity = capacity;
	return 0;
}

/* The state of ev's thread, made at first sight; NULL when out of memory. */
static struct thread_state *thread_of(struct chrome *c, const struct rt_event *ev)
{
	if ((c->thread_count + 1) * 2 > c->thread_capacity && grow_threads(c) != 0)
		return NULL;
	size_t k = hash_thread(ev->pid, ev->tid) & (c->thread_capacity - 1);
	while (c->threads[k].used) {
		if (c->threads[k].source == ev->source && c->threads[k].tid == ev->tid)
			return &c->threads[k];
		k = (k + 1) & (c->thread_capacity - 1);
	}
	struct thread_state *t = &c->threads[k];
	t->used = 1;
	t->source = ev->source;
	t->pid = ev->pid;
	t->tid = ev->tid;
	c->thread_count++;
	return t;
}

/* Room for one more event object, after a comma when one came before. */
static char *begin_event(struct chrome *c, size_t strings)
{
	char *s = rt_out_reserve(c->out, LINE_FIXED_MAX + RT_JSON_ESCAPED_MAX(strings) + 2);
	if (!c->first)
		*s++ = ',';
	c->first = 0;
	*s++ = '\n';
	return s;
}

/* {"ph":"X","pid":P,"tid":T,"ts":U */
static char *put_head(char *s, const char *ph, int32_t pid, int64_t tid, int64_t ns)
{
	s = put(s, "{\"ph\":\"");
	s = put(s, ph);
	s = put(s, "\",\"pid\":");
	s = rt_fmt_i64(s, pid);
	s = put(s, ",\"tid\":");
	s = rt_fmt_i64(s, tid);
	s = put(s, ",\"ts\":");
	return put_us(s, ns);
}

static void write_metadata(struct chrome *c, const char *what, int32_t pid, int64_t tid,
			   const char *name, size_t length)
{
	char *s = begin_event(c, length);
	s = put(s, "{\"ph\":\"M\",\"pid\":");
	s = rt_fmt_i64(s, pid);
	s = put(s, ",\"tid\":");
	s = rt_fmt_i64(s, tid);
	s = put(s, ",\"name\":\"");
	s = put(s, what);
	s = put(s, "\",\"args\":{\"name\":");
	s = put_str(s, name, length);
	s = put(s, "}}");
	rt_out_commit(c->out, s);
}

static int chrome_open(void **state, const struct rt_export_target *target, char *message,
		       size_t message_size)
{
	(void)message;
	(void)message_size;
	struct chrome *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->out = target->out;
	c->set = target->set;
	c->first = 1;
	rt_span_tracker_init(&c->tracker, &span_ops, c, sizeof(struct open_span));
	*state = c;
	c->source_count = c->set->source_count;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	c->site_texts = calloc(c->source_count + 1, sizeof(*c->site_texts));
	c->site_counts = calloc(c->source_count + 1, sizeof(*c->site_counts));
	if (!c->site_texts || !c->site_counts)
		return -ENOMEM;
	for (size_t i = 0; i < c->source_count; i++) {
		uint32_t n = c->set->sources[i].reader->sites.count;
		if (n && !(c->site_texts[i] = calloc(n, sizeof(**c->site_texts))))
			return -ENOMEM;
		c->site_counts[i] = c->site_texts[i] ? n : 0;
	}
	rt_out_str(c->out, "{\"traceEvents\":[");
	/* names first: a viewer labels its tracks from them */
	for (size_t i = 0; i < c->set->source_count; i++) {
		const struct rt_reader *rd = c->set->sources[i].reader;
		if (c->set->sources[i].context)
			continue; /* a recording's file damage only: no process */
		const char *program = rd->header.program;
		write_metadata(c, "process_name", rd->header.pid, 0, program,
			       strnlen(program, sizeof(rd->header.program)));
		for (uint32_t k = 0; k < rd->thread_count; k++) {
			const struct rt_reader_thread *t = &rd->threads[k];
			size_t n = strnlen(t->name, sizeof(t->name));
			if (n)
				write_metadata(c, "thread_name", rd->header.pid, t->tid, t->name,
					       n);
		}
	}
	return 0;
}

/* ,"args":{ ... } parts */
static char *put_key(char *s, const char *key)
{
	*s++ = ',';
	*s++ = '"';
	s = put(s, key);
	*s++ = '"';
	*s++ = ':';
	return s;
}

static char *put_site_place(char *s, const struct rt_site *site)
{
	s = put_key(s, "file");
	s = put_str(s, site->file, site->file_length);
	s = put_key(s, "line");
	s = rt_fmt_u64(s, site->line);
	s = put_key(s, "func");
	return put_str(s, site->func, site->func_length);
}

/* "cpu":C,"seq":N, and the marks of lost metadata: what every event's args begin with */
static char *put_common_fields(char *s, const struct rt_event *ev)
{
	s = put(s, "\"cpu\":");
	s = rt_fmt_i64(s, ev->cpu);
	if (ev->has_seq) {
		s = put_key(s, "seq");
		s = rt_fmt_u64(s, ev->seq);
	}
	if (ev->metadata_lost) {
		s = put(s, ",\"metadata\":\"lost\",\"site_id\":");
		s = rt_fmt_u64(s, ev->site_id);
	}
	return s;
}

static char *put_common_args(char *s, const struct rt_event *ev)
{
	return put_common_fields(put(s, ",\"args\":{"), ev);
}

/*
 * What a trace event of a site always says, escaped once per site:
 * ,"s":"t","cat":"trace","name":"TAG","args":{"file":"F","line":N,"func":"FN",
 */
static const struct site_text *site_text(struct chrome *c, uint32_t source,
					 const struct rt_event *ev)
{
	const struct rt_site *site = ev->site;
	if (source >= c->source_count || ev->site_id >= c->site_counts[source])
		return NULL;
	struct site_text *t = &c->site_texts[source][ev->site_id];
	if (t->bytes)
		return t;
	size_t room = 128 + RT_JSON_ESCAPED_MAX((size_t)site->tag_length + site->file_length +
						site->func_length);
	char *bytes = malloc(room);
	if (!bytes)
		return NULL;
	char *s = put(bytes, ",\"s\":\"t\",\"cat\":\"trace\",\"name\":");
	s = put_str(s, site->tag, site->tag_length);
	s = put(s, ",\"args\":{");
	char *place = s;
	s = put_site_place(s, site);
	/* the object was just opened: no comma before its first key */
	memmove(place, place + 1, (size_t)(s - place - 1));
	s[-1] = ',';
	t->bytes = bytes;
	t->length = (size_t)(s - bytes);
	return t;
}

static void write_trace(struct chrome *c, const struct rt_event *ev)
{
	const struct rt_site *site = ev->site;
	const struct site_text *text = site ? site_text(c, ev->source, ev) : NULL;
	size_t strings = site ? site->tag_length + site->file_length + site->func_length : 0;
	char *s = begin_event(c, strings);
	s = put_head(s, "i", ev->pid, ev->tid, ev->ts_ns);
	if (text) {
		memcpy(s, text->bytes, text->length);
		s = put_common_fields(s + text->length, ev);
	} else {
		s = put(s, ",\"s\":\"t\",\"cat\":\"trace\",\"name\":");
		s = site ? put_str(s, site->tag, site->tag_length) : put(s, "\"(site lost)\"");
		s = put_common_args(s, ev);
		if (site)
			s = put_site_place(s, site);
	}
	s = put(s, ",\"args\":[");
	s = rt_event_put_args(s, ev);
	s = put(s, "]}}");
	rt_out_commit(c->out, s);
}

static void write_log(struct chrome *c, const struct rt_event *ev)
{
	const struct rt_site *site = ev->site;
	size_t strings =
	    site ? 2 * ev->msg.length + site->tag_length + site->file_length + site->func_length
		 : 0;
	char *s = begin_event(c, strings);
	s = put_head(s, "i", ev->pid, ev->tid, ev->ts_ns);
	s = put(s, ",\"s\":\"t\",\"cat\":\"log\",\"name\":");
	s = site ? put_str(s, ev->msg.s, ev->msg.length) : put(s, "\"(log site lost)\"");
	s = put_common_args(s, ev);
	if (site) {
		s = put_key(s, "level");
		s = put_str(s, ev->level, strlen(ev->level));
		s = put_key(s, "msg");
		s = put_str(s, ev->msg.s, ev->msg.length);
		if (ev->damaged)
			s = put(s, ",\"damaged\":true");
		s = put_key(s, "format");
		s = put_str(s, site->tag, site->tag_length);
		s = put_site_place(s, site);
	}
	s = put(s, "}}");
	rt_out_commit(c->out, s);
}

/* The name a function span shows: its function, else its address. */
static char *put_function_name(char *s, const struct rt_event *ev)
{
	if (ev->place.func)
		return put_str(s, ev->place.func, strlen(ev->place.func));
	s = put(s, "\"0x");
	s = rt_fmt_hex(s, ev->addr, 16);
	return put(s, "\"");
}

static size_t place_strings(const struct rt_event *ev)
{
	return (ev->place.func ? strlen(ev->place.func) : 0) +
	       (ev->place.file ? strlen(ev->place.file) : 0) +
	       (ev->place.module ? strlen(ev->place.module) : 0);
}

/* ,"addr":A and where it is: the same for every call of a function */
static char *put_place(char *s, const struct rt_event *ev)
{
	s = put(s, ",\"addr\":");
	s = rt_fmt_u64(s, ev->addr);
	if (ev->place.file) {
		s = put_key(s, "file");
		s = put_str(s, ev->place.file, strlen(ev->place.file));
		s = put_key(s, "line");
		s = rt_fmt_u64(s, ev->place.line);
	}
	if (ev->place.module) {
		s = put_key(s, "module");
		s = put_str(s, ev->place.module, strlen(ev->place.module));
		s = put_key(s, "offset");
		s = rt_fmt_u64(s, ev->place.offset);
	}
	return s;
}

/* A JSON array of arguments: [1,-2,3]. */
static char *put_args(char *s, unsigned nargs, unsigned signed_args, const uint64_t *args)
{
	*s++ = '[';
	for (unsigned i = 0; i < nargs; i++) {
		if (i)
			*s++ = ',';
		if (signed_args & (1u << i))
			s = rt_fmt_i64(s, (int64_t)args[i]);
		else
			s = rt_fmt_u64(s, args[i]);
	}
	*s++ = ']';
	return s;
}

/* The pseudo-thread of t's marked spans. */
static int64_t marked_tid(const struct thread_state *t)
{
	return (int64_t)t->tid + RT_CHROME_MARKED_TID;
}

/* The name of the pseudo-thread of t's marked spans, before its first event: "NAME spans". */
static void name_marked_track(struct chrome *c, struct thread_state *t, const struct rt_event *ev)
{
	if (t->marked_named)
		return;
	t->marked_named = 1;
	char name[160];
	int n =
	    ev->thread.s && ev->thread.length
		? snprintf(name, sizeof(name), "%.*s spans",
			   (int)(ev->thread.length < 128 ? ev->thread.length : 128), ev->thread.s)
		: snprintf(name, sizeof(name), "tid %d spans", (int)t->tid);
	write_metadata(c, "thread_name", t->pid, marked_tid(t), name,
		       n > 0 && (size_t)n < sizeof(name) ? (size_t)n : strlen(name));
}

/*
 * "E" for span, the innermost open span of its stack of thread, at ns: the begin's own
 * fields (a call's depth, call site and enter's seq; a marked span's
 * arguments and begin's seq), the exit's or end's cpu and seq (and an
 * end's arguments) when its own exit or end ended it, and how it ended
 * when it did not return.  Viewers show the args of a span's "B" and "E"
 * together; a "B" holds only what is the same for every call of its
 * function, so that viewers which name frames by their args (speedscope)
 * keep one frame per function.
 */
static int span_end(void *ctx, void *thread, struct rt_span *span, int64_t ns, enum rt_span_end how,
		    const struct rt_span_event *own_end)
{
	struct chrome *c = ctx;
	const struct thread_state *t = thread;
	const struct open_span *open = rt_span_user(span);
	const struct rt_event *exit = own_end ? own_end->origin : NULL;
	const char *why = rt_span_end_mark(how, span->kind);
	char *s = begin_event(c, 0);
	s = put_head(s, "E", t->pid, span->kind == RT_SPAN_MARKED ? marked_tid(t) : t->tid, ns);
	if (span->kind == RT_SPAN_MARKED) {
		/* the begin's arguments, and the end's when it has some */
		s = put(s, ",\"args\":{\"args\":");
		s = put_args(s, open->nargs, open->signed_args, open->args);
		if (open->has_seq) {
			s = put(s, ",\"begin_seq\":");
			s = rt_fmt_u64(s, open->seq);
		}
		if (exit && exit->nargs) {
			s = put(s, ",\"end_args\":");
			s = put_args(s, exit->nargs, exit->signed_args, exit->args);
		}
	} else {
		s = put(s, ",\"args\":{\"depth\":");
		s = rt_fmt_u64(s, span->depth);
		s = put(s, ",\"call_site\":");
		s = rt_fmt_u64(s, open->call_site);
		if (open->has_seq) {
			s = put(s, ",\"enter_seq\":");
			s = rt_fmt_u64(s, open->seq);
		}
	}
	if (exit) {
		*s++ = ',';
		s = put_common_fields(s, exit);
	}
	if (why) {
		s = put(s, ",\"");
		s = put(s, why);
		s = put(s, "\":true");
	}
	s = put(s, "}}");
	rt_out_commit(c->out, s);
	return 0;
}

/* A call's "B", named by its function; what its "E" will say is kept beside the span. */
static void write_enter(struct chrome *c, struct open_span *open, const struct rt_event *ev)
{
	*open =
	    (struct open_span){.call_site = ev->call_site, .seq = ev->seq, .has_seq = ev->has_seq};
	char *s = begin_event(c, place_strings(ev));
	s = put_head(s, "B", ev->pid, ev->tid, ev->ts_ns);
	s = put(s, ",\"cat\":\"function\",\"name\":");
	s = put_function_name(s, ev);
	/* put_place begins with a comma: the object opens on a key of its own */
	s = put(s, ",\"args\":{\"function\":true");
	s = put_place(s, ev);
	if (ev->metadata_lost)
		s = put(s, ",\"metadata\":\"lost\"");
	s = put(s, "}}");
	rt_out_commit(c->out, s);
}

/* An RT_BEGIN: a "B" named by its tag, on t's marked track; its arguments wait for the "E". */
static void write_span_begin(struct chrome *c, struct thread_state *t, struct open_span *open,
			     const struct rt_event *ev)
{
	const struct rt_site *site = ev->site;
	*open = (struct open_span){.seq = ev->seq,
				   .has_seq = ev->has_seq,
				   .nargs = ev->nargs,
				   .signed_args = ev->signed_args};
	memcpy(open->args, ev->args, sizeof(open->args));
	name_marked_track(c, t, ev);
	char *s = begin_event(c, (size_t)site->tag_length + site->file_length + site->func_length);
	s = put_head(s, "B", ev->pid, marked_tid(t), ev->ts_ns);
	s = put(s, ",\"cat\":\"span\",\"name\":");
	s = put_str(s, site->tag, site->tag_length);
	/* put_site_place begins with a comma: the object opens on a key of its own */
	s = put(s, ",\"args\":{\"span\":true");
	s = put_site_place(s, site);
	s = put(s, "}}");
	rt_out_commit(c->out, s);
}

static int span_begin(void *ctx, void *thread, struct rt_span *span,
		      const struct rt_span_event *span_event)
{
	const struct rt_event *ev = span_event->origin;
	if (span->kind == RT_SPAN_CALL)
		write_enter(ctx, rt_span_user(span), ev);
	else
		write_span_begin(ctx, thread, rt_span_user(span), ev);
	return 0;
}

/*
 * An exit whose enter is not in the record (on the thread), or an end with
 * no open span of its name (on the thread's marked track).
 */
static int span_orphan(void *ctx, void *thread, const struct rt_span_event *span_event)
{
	struct chrome *c = ctx;
	struct thread_state *t = thread;
	const struct rt_event *ev = span_event->origin;
	char *s;
	if (span_event->input == RT_SPAN_EXIT) {
		s = begin_event(c, place_strings(ev));
		s = put_head(s, "i", ev->pid, ev->tid, ev->ts_ns);
		s = put(s, ",\"s\":\"t\",\"cat\":\"function\",\"name\":\"exit without enter\"");
		s = put_common_args(s, ev);
		s = put_key(s, "func");
		s = put_function_name(s, ev);
		s = put_place(s, ev);
		s = put(s, ",\"call_site\":");
		s = rt_fmt_u64(s, ev->call_site);
		s = put(s, ",\"depth\":");
		s = rt_fmt_u64(s, ev->depth);
	} else {
		const struct rt_site *site = ev->site;
		name_marked_track(c, t, ev);
		s = begin_event(c,
				(size_t)site->tag_length + site->file_length + site->func_length);
		s = put_head(s, "i", ev->pid, marked_tid(t), ev->ts_ns);
		s = put(s, ",\"s\":\"t\",\"cat\":\"span\",\"name\":\"end without begin\"");
		s = put_common_args(s, ev);
		s = put_key(s, "span");
		s = put_str(s, site->tag, site->tag_length);
		s = put_site_place(s, site);
		s = put_key(s, "args");
		s = put_args(s, ev->nargs, ev->signed_args, ev->args);
	}
	s = put(s, "}}");
	rt_out_commit(c->out, s);
	return 0;
}

/* Past the tracker's caps nothing is written: the viewers' stacks stay as deep. */
static const struct rt_span_ops span_ops = {
    .begin = span_begin, .end = span_end, .orphan = span_orphan};

static void write_io(struct chrome *c, const struct rt_event *ev)
{
	const struct rt_io_shown *io = &ev->io;
	const struct rt_io_event *e = &io->ev;
	size_t strings = (size_t)e->path_length + e->path2_length + io->names.fd.name_length +
			 io->names.fd2.name_length + 64;
	char *s = begin_event(c, strings);
	if (!io->ok) {
		s = put_head(s, "i", ev->pid, ev->tid, ev->ts_ns);
		s = put(s, ",\"s\":\"t\",\"cat\":\"io\",\"name\":\"malformed I/O record\"");
		s = put_common_args(s, ev);
		s = put(s, ",\"malformed\":true,\"problem\":");
		s = put_str(s, io->problem ? io->problem : "?",
			    io->problem ? strlen(io->problem) : 1);
		s = put(s, "}}");
		rt_out_commit(c->out, s);
		return;
	}
	if (io->has_duration) {
		s = put_head(s, "X", ev->pid, ev->tid, ev->ts_ns - io->dur_ns);
		s = put(s, ",\"dur\":");
		s = put_us(s, io->dur_ns);
	} else {
		s = put_head(s, "i", ev->pid, ev->tid, ev->ts_ns);
		s = put(s, ",\"s\":\"t\"");
	}
	const char *op = rt_io_op_json_name(e->op);
	s = put(s, ",\"cat\":\"io\",\"name\":");
	s = put_str(s, op ? op : "?", op ? strlen(op) : 1);
	s = put_common_args(s, ev);
	if (e->fd >= 0) {
		s = put_key(s, "fd");
		s = rt_fmt_i64(s, e->fd);
	}
	/* the path the call named, else the descriptor's */
	s = put_key(s, "path");
	if (e->path)
		s = put_str(s, e->path, e->path_length);
	else if (io->names.fd.known)
		s = put_str(s, io->names.fd.name, io->names.fd.name_length);
	else
		s = put(s, "null");
	if (!e->path && !io->names.fd.known && e->fd >= 0) {
		s = put_key(s, "path_why");
		s = put_str(s, io->names.fd.why ? io->names.fd.why : "unseen",
			    strlen(io->names.fd.why ? io->names.fd.why : "unseen"));
	}
	if (e->path2) {
		s = put_key(s, "path2");
		s = put_str(s, e->path2, e->path2_length);
	} else if (io->names.fd2.known) {
		s = put_key(s, "path2");
		s = put_str(s, io->names.fd2.name, io->names.fd2.name_length);
	}
	if (e->flags & RT_IO_F_OFFSET) {
		s = put_key(s, "offset");
		s = rt_fmt_i64(s, e->offset);
	} else if (io->names.offset_derived) {
		s = put_key(s, "offset");
		s = rt_fmt_i64(s, io->names.offset);
		s = put(s, ",\"offset_derived\":true");
	}
	s = put_key(s, "size");
	s = rt_fmt_i64(s, e->size);
	s = put_key(s, "result");
	s = rt_fmt_i64(s, e->result);
	const int failed = rt_io_event_failed(e);
	s = put_key(s, "errno");
	s = rt_fmt_i64(s, failed ? -e->result : 0);
	if (failed) {
		const char *name = rt_io_errno_name((int)-e->result);
		if (name) {
			s = put_key(s, "error");
			s = put_str(s, name, strlen(name));
		}
	}
	if (io->has_duration) {
		s = put_key(s, "dur_ns");
		s = rt_fmt_i64(s, io->dur_ns);
	}
	s = put(s, "}}");
	rt_out_commit(c->out, s);
}

static void write_loss(struct chrome *c, const struct rt_event *ev)
{
	size_t note = ev->note ? strlen(ev->note) : 0;
	size_t what = ev->damage ? strnlen(ev->damage->what, sizeof(ev->damage->what)) : 0;
	char *s = begin_event(c, note + what);
	s = put_head(s, "i", ev->pid, ev->tid, ev->ts_ns);
	/* a loss of no known thread marks the whole process */
	s = put(s, ev->tid ? ",\"s\":\"t\"" : ",\"s\":\"p\"");
	s = put(s, ",\"cat\":\"loss\",\"name\":\"lost ");
	s = rt_fmt_u64(s, ev->count);
	s = put(s, ev->count == 1 ? " event (" : " events (");
	s = put(s, ev->reason ? ev->reason : "?");
	s = put(s, ")\",\"args\":{\"count\":");
	s = rt_fmt_u64(s, ev->count);
	s = put(s, ",\"reason\":\"");
	s = put(s, ev->reason ? ev->reason : "?");
	*s++ = '"';
	if (note) {
		s = put_key(s, "note");
		s = put_str(s, ev->note, note);
	}
	if (!ev->timed)
		s = put(s, ",\"time_known\":false");
	if (ev->has_last) {
		s = put_key(s, "ts_last_ns");
		s = rt_fmt_i64(s, ev->ts_last_ns);
	}
	if (ev->damage) {
		s = put_key(s, "offset");
		s = rt_fmt_u64(s, ev->damage->offset);
		s = put_key(s, "length");
		s = rt_fmt_u64(s, ev->damage->length);
		s = put_key(s, "what");
		s = put_str(s, ev->damage->what, what);
	}
	if (ev->estimated)
		s = put(s, ",\"estimated\":true");
	if (ev->in_region)
		s = put(s, ",\"in_region\":true");
	s = put(s, "}}");
	rt_out_commit(c->out, s);
}

static int chrome_event(void *state, const struct rt_event *ev)
{
	struct chrome *c = state;
	/* a span whose site is lost has no name to match: an instant, as before */
	struct rt_span_event span;
	if (rt_event_as_span(ev, &span) != RT_SPAN_NONE) {
		struct thread_state *t = thread_of(c, ev);
		if (!t)
			return -ENOMEM;
		return rt_span_feed(&c->tracker, &t->spans, t, &span);
	}
	/* a thread's last event, where its unclosed spans will end */
	if (ev->tid && c->thread_count) {
		struct thread_state *t = thread_of(c, ev);
		if (!t)
			return -ENOMEM;
		rt_span_saw(&t->spans, ev->ts_ns);
	}
	switch (ev->kind) {
	case RT_EVENT_TRACE:
		write_trace(c, ev);
		break;
	case RT_EVENT_LOG:
		write_log(c, ev);
		break;
	case RT_EVENT_IO:
		write_io(c, ev);
		break;
	default:
		write_loss(c, ev);
		break;
	}
	return 0;
}

static int chrome_finish(void *state)
{
	struct chrome *c = state;
	for (size_t i = 0; i < c->thread_capacity; i++) {
		struct thread_state *t = &c->threads[i];
		if (t->used)
			rt_span_finish(&c->tracker, &t->spans, t);
	}
	rt_out_str(c->out, "\n],\"displayTimeUnit\":\"ns\"}\n");
	return 0;
}

static void chrome_free(void *state)
{
	struct chrome *c = state;
	if (!c)
		return;
	for (size_t i = 0; i < c->thread_capacity; i++)
		rt_span_thread_free(&c->threads[i].spans);
	free(c->threads);
	for (size_t i = 0; c->site_texts && i < c->source_count; i++) {
		for (uint32_t k = 0; k < c->site_counts[i]; k++)
			free(c->site_texts[i][k].bytes);
		free(c->site_texts[i]);
	}
	free(c->site_texts);
	free(c->site_counts);
	free(c);
}

const struct rt_exporter rt_exporter_chrome = {
    .name = "chrome",
    .writes_dir = 0,
    .open = chrome_open,
    .event = chrome_event,
    .finish = chrome_finish,
    .free = chrome_free,
};
