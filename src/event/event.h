/*
 * event.h - the event model: one item of a trace set, decoded and flattened
 * into one struct that every consumer reads.
 *
 * Every export format (Chrome JSON, CTF, Perfetto), every analysis and
 * every shipped row shows the same facts as `dump --json` (docs/JSON.md):
 * a consumer never decodes a record itself.  The builder turns each item
 * the trace set yields, in time order, into a struct rt_event whose strings
 * point into the readers' mappings or into the builder's own buffers; they
 * hold until the next build.  event/set_events.h makes one builder over
 * the sources of an open set.
 *
 * Kinds: a trace event (its site's tag, place and decoded arguments; the
 * start or end of a span marked in the source is one, with span set), a log
 * message (rendered), a function's enter or exit (named from the module
 * loaded at its address when --debug-dir or the binary allows), a file I/O
 * call (descriptors named by the process's time-aware table), and a loss.
 * A loss without a time of its own sorts where the set placed it: it gets
 * the time of the event before it (timed = 0).
 */
#ifndef RT_EVENT_EVENT_H
#define RT_EVENT_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "common/output.h"
#include "event/io_calls.h"
#include "event/span_tracker.h"
#include "read/arena_reader.h"
#include "symbols/function_names.h"

enum rt_event_kind {
	RT_EVENT_TRACE = 1,
	RT_EVENT_LOG = 2,
	RT_EVENT_ENTER = 3,
	RT_EVENT_EXIT = 4,
	RT_EVENT_IO = 5,
	RT_EVENT_LOST = 6,
};

/*
 * A trace event of an RT_BEGIN or RT_END site (or RT_SCOPE's): still kind
 * TRACE, so that a format that knows nothing of spans shows a trace event.
 */
enum rt_event_span {
	RT_EVENT_SPAN_NONE = 0,
	RT_EVENT_SPAN_BEGIN = 1,
	RT_EVENT_SPAN_END = 2,
};

/* A string that may hold any byte but NUL; NULL when not known. */
struct rt_event_str {
	const char *s;
	size_t length;
};

struct rt_event {
	enum rt_event_kind kind;
	uint32_t source; /* index in the set's sources (one per traced process) */
	/*
	 * Nanoseconds since the set's earliest start (dump --json's ts_ns).
	 * raw_time: the source lost its clock metadata; ts_ns is the raw
	 * counter then, comparable only with other raw times of that source.
	 */
	int64_t ts_ns;
	int raw_time;
	int timed; /* losses: the loss has a time of its own (else the event's before) */
	/* the process and the thread; tid 0: no thread's (a global loss, an unowned ring) */
	int32_t pid;
	struct rt_event_str program; /* the process's program name */
	int32_t tid;
	struct rt_event_str thread; /* the thread's name, or empty */
	int cpu;		    /* -1 when unknown */
	int has_seq;
	uint64_t seq;
	/* the record's site was lost or its thread unknown: what it says is marked */
	int metadata_lost;
	uint32_t site_id; /* the site-table index the record names */

	/* TRACE and LOG: the site, or NULL when its metadata is lost */
	const struct rt_site *site;
	/* TRACE: decoded arguments; bit i of signed_args: argument i is signed */
	unsigned nargs;
	uint64_t args[RT_MAX_ARGS];
	unsigned signed_args;
	enum rt_event_span span; /* TRACE: the start or end of a span (the tag names it) */

	/* LOG */
	const char *level;	 /* "info"...; NULL when the site is lost */
	struct rt_event_str msg; /* rendered; NULL when the site is lost */
	int damaged;		 /* the payload did not check: msg carries the mark */

	/* ENTER and EXIT: the record, and where it points when known */
	uint32_t depth, function_flags;
	uint64_t addr, call_site;
	struct rt_function_place place;

	/* LOST */
	uint64_t count;
	const char *reason; /* "overwritten", "dropped", "torn", "damaged" */
	const char *note;   /* or NULL */
	int64_t ts_last_ns; /* has_last: the time of the last one lost */
	int has_last;
	const struct rt_damage *damage; /* a damaged region of a file, or NULL */
	int estimated;			/* count estimated from the damage's size */
	int in_region;			/* a thread's share of a region counted on its own item */

	/*
	 * IO: the call as dump shows it (shown.ok 0: malformed, shown.problem
	 * why).  Last, and set only for IO events: the builder clears the
	 * fields above it for every event, and this one only when it is an IO
	 * event's, so the other kinds do not pay for clearing its 192 bytes.
	 */
	struct rt_io_shown io;
};

struct rt_event_builder;

/*
 * A builder for the sources of a set (readers[i] describes source i);
 * function names looked up in debug_dirs too.  NULL when out of memory.
 */
struct rt_event_builder *rt_event_builder_new(const struct rt_reader *const *readers, size_t count,
					      const char *const *debug_dirs,
					      size_t debug_dir_count);
void rt_event_builder_free(struct rt_event_builder *b);

/*
 * For a printer that names functions itself, or shows raw addresses: an
 * enter or exit is built without looking its address up (place empty).
 */
void rt_event_builder_leave_names(struct rt_event_builder *b);

/* Source forked a traced child of the set, or was forked: it derives no position. */
void rt_event_builder_forked(struct rt_event_builder *b, size_t source);

/* The item of source, flattened into *ev. */
void rt_event_build(struct rt_event_builder *b, uint32_t source, const struct rt_item *item,
		    struct rt_event *ev);
/*
 * The same for an item shown again out of its place (a thread's last
 * event): an I/O call's descriptor state is read, not moved.
 */
void rt_event_build_again(struct rt_event_builder *b, uint32_t source, const struct rt_item *item,
			  struct rt_event *ev);
/*
 * The item of source, flattened into the builder's own event: valid until
 * the next build into it, and never written but by the builder.  Faster
 * than rt_event_build where trace events follow each other: what one does
 * not write is still zero from the one before, and is not cleared again.
 */
const struct rt_event *rt_event_build_kept(struct rt_event_builder *b, uint32_t source,
					   const struct rt_item *item);
/* An I/O call not shown (a filter left it out): its descriptor state still moves. */
void rt_event_builder_take_io(struct rt_event_builder *b, uint32_t source,
			      const struct rt_item *item);
/* I/O records that did not parse, so far. */
uint64_t rt_event_builder_io_malformed(const struct rt_event_builder *b);

/* Log messages with a damaged payload, and I/O records that did not parse, so far. */
uint64_t rt_event_builder_damaged(const struct rt_event_builder *b);

/*
 * What ev is to the span tracker (event/span_tracker.h): an enter, an exit,
 * a span's begin or end (its site known), or nothing; ts is ev's ts_ns and
 * origin ev.  The one place the views that read events tell them.
 */
enum rt_span_input rt_event_as_span(const struct rt_event *ev, struct rt_span_event *out);

/* The kind's name in dump --json: "trace", "log", "enter", "exit", "io", "lost". */
const char *rt_event_kind_name(enum rt_event_kind kind);

/*
 * ev's arguments in decimal, comma-separated, at s (room for 21 bytes each);
 * returns the end.  The one spelling of an argument list in JSON outputs.
 */
static inline __attribute__((always_inline)) char *rt_event_put_args(char *s,
								     const struct rt_event *ev)
{
	/* each followed by a comma, the last one's taken back: no question per argument */
	for (unsigned i = 0; i < ev->nargs; i++) {
		/* the sign written here, so that one copy of rt_fmt_u64 serves both */
		uint64_t v = ev->args[i];
		if ((ev->signed_args & (1u << i)) && (int64_t)v < 0) {
			*s++ = '-';
			v = 0 - v;
		}
		s = rt_fmt_u64(s, v);
		*s++ = ',';
	}
	return s - (ev->nargs != 0);
}

#endif /* RT_EVENT_EVENT_H */
