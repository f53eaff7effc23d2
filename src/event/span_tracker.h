/*
 * span_tracker.h - function calls and marked spans paired into spans with
 * durations, by one rule for every view that pairs them (analyze spans,
 * ship's durations, the Chrome and Perfetto exports, and the call trees of
 * replay and report, present/call_tree.c, which feed it calls only).
 *
 * A consumer keeps one struct rt_span_thread per thread of a source (a
 * source and a tid) and feeds it that thread's events in time order: the
 * enters and exits of -finstrument-functions calls, and the begins and ends
 * of spans marked in the source (RT_BEGIN, RT_END, RT_SCOPE).  The tracker
 * calls back on every begin, and on every end with its time and how it
 * ended.  A thread has two stacks: its open calls, and its open marked
 * spans.  Neither ever closes a span of the other, so a span begun in one
 * function and ended in another (a request begun in one callback and ended
 * in the next) is timed, and the spans of each stack always nest: each end
 * reported is of the innermost open span of its stack.  A view whose format
 * needs nesting draws each stack on a track of its own; where marked spans
 * nest within the calls (the common case) the two tracks agree.
 *
 * The rules:
 *   - An enter at depth d (the depth every enter and exit record carries)
 *     first closes every open call at depth d or deeper: their exits were
 *     not recorded (RT_SPAN_EXIT_LOST).
 *   - An exit at depth d closes every open call deeper than d (exit lost),
 *     then the open call at depth d: when it is a call of the exit's
 *     function, it ended as the exit says (returned, or unwound, thread
 *     ended or exited when the recording library wrote the exit for a call
 *     that did not return by itself: RT_FUNC_F_*); a call of another
 *     function at that depth lost its exit, and the exit is an orphan.  An
 *     exit with no open call at its depth is an orphan (its enter came
 *     before the trace, or was lost).
 *   - An end closes the innermost open marked span of its name (its tag) on
 *     its thread, whatever calls began or ended since its begin; one that
 *     finds none is an orphan.  The marked spans begun after that one and
 *     still open are closed with it, just before it, as exit lost (shown
 *     "end lost": an RT_BEGIN whose RT_END never came), so that marked spans
 *     stay nested.  Enters and exits never close a marked span, nor ends a
 *     call: a marked span open when its calls were unwound or its thread
 *     ended stays open until its end, or the end of the trace.
 *   - A thread holds tracker->calls_max open calls (RT_SPAN_CALLS_MAX) and
 *     RT_SPAN_MARKED_MAX open marked spans.  A begin past either is too
 *     deep: reported, counted (calls_too_deep, marked_too_deep), not
 *     tracked, and the events that belong to it are absorbed, so that the
 *     stack stays in step: the calls deeper than the first one skipped and
 *     their exits; for marked spans, an end while begins skipped are
 *     pending is taken as the end of the latest of them.
 *   - rt_span_finish() closes what is still open at the thread's last time
 *     (RT_SPAN_UNCLOSED): the latest time it saw.
 *
 * Memory: the frames of the open spans of each thread, each stack grown by
 * doubling up to its cap (each frame sizeof(struct rt_span) plus the
 * consumer's user bytes); nothing per event.
 */
#ifndef RT_EVENT_SPAN_TRACKER_H
#define RT_EVENT_SPAN_TRACKER_H

#include <stddef.h>
#include <stdint.h>

#include "decode/sites.h"
#include "read/arena_reader.h"

/* Open calls a thread holds, unless the consumer sets tracker->calls_max otherwise. */
#define RT_SPAN_CALLS_MAX 1024u
/* Open marked spans a thread holds, for every consumer. */
#define RT_SPAN_MARKED_MAX 1024u

/* What an event is to the tracker. */
enum rt_span_input {
	RT_SPAN_NONE = 0, /* nothing that opens or closes a span */
	RT_SPAN_ENTER,	  /* a function was entered */
	RT_SPAN_EXIT,	  /* a function's exit (its own, or the library's for it) */
	RT_SPAN_BEGIN,	  /* RT_BEGIN, or RT_SCOPE's start */
	RT_SPAN_END,	  /* RT_END, or RT_SCOPE's end */
};

/* How a span ended. */
enum rt_span_end {
	RT_SPAN_RETURNED = 0, /* its exit or its end: the one case that times the span */
	RT_SPAN_UNWOUND,      /* the library's exit: longjmp or an exception left it */
	RT_SPAN_THREAD_ENDED, /* the library's exit: still open when its thread ended */
	RT_SPAN_EXITED,	      /* the library's exit: still open when the program called exit() */
	RT_SPAN_EXIT_LOST,    /* closed by a later event: its exit (or end) was not recorded */
	RT_SPAN_UNCLOSED,     /* still open when the trace ends */
};

enum rt_span_kind {
	RT_SPAN_CALL = 1,   /* a function call */
	RT_SPAN_MARKED = 2, /* a span marked in the source */
};

/* An event as the tracker sees it. */
struct rt_span_event {
	enum rt_span_input input;
	int64_t ts;	/* any unit that orders a thread's events: ns, or a raw counter */
	uint32_t depth; /* ENTER, EXIT: the call's depth on its thread */
	uint32_t flags; /* EXIT: RT_FUNC_F_* */
	uint64_t addr;	/* ENTER, EXIT: the function */
	uint64_t call_site;
	const struct rt_site *site; /* BEGIN, END: its site (the tag names the span) */
	const void *origin;	    /* the consumer's own event, for its callbacks */
};

/* An open span, as its begin left it; the consumer's user bytes follow (rt_span_user). */
struct rt_span {
	enum rt_span_kind kind;
	uint32_t depth;		    /* a call's */
	uint64_t addr;		    /* a call's function */
	const struct rt_site *site; /* a marked span's begin */
	int64_t begin_ts;
};

/*
 * The consumer's callbacks.  thread is what the consumer passed along with
 * the thread's stacks (rt_span_feed...).  Each returns 0 or -errno, which
 * stops the tracker and is returned (the stacks stay consistent).
 *   begin     span was just opened: the innermost of its stack; fill its user bytes
 *             (may be NULL)
 *   end       span ends at end_ts, how; it is still the innermost of its stack (the
 *             stack pops after).  own_end: the exit or end that ended it (RETURNED,
 *             and UNWOUND, THREAD_ENDED, EXITED of a call), else NULL
 *   orphan    an exit or end that closes nothing (may be NULL)
 *   too_deep  a begin past its stack's cap, not tracked (may be NULL)
 */
struct rt_span_ops {
	int (*begin)(void *ctx, void *thread, struct rt_span *span, const struct rt_span_event *ev);
	int (*end)(void *ctx, void *thread, struct rt_span *span, int64_t end_ts,
		   enum rt_span_end how, const struct rt_span_event *own_end);
	int (*orphan)(void *ctx, void *thread, const struct rt_span_event *ev);
	int (*too_deep)(void *ctx, void *thread, const struct rt_span_event *ev);
};

/* What every thread's stacks of one consumer share. */
struct rt_span_tracker {
	const struct rt_span_ops *ops;
	void *ctx;
	size_t stride;		  /* bytes per frame: the span and the user bytes */
	uint32_t calls_max;	  /* open calls a thread holds: RT_SPAN_CALLS_MAX after init */
	uint64_t calls_too_deep;  /* enters past calls_max, every thread */
	uint64_t marked_too_deep; /* begins past RT_SPAN_MARKED_MAX, every thread */
};

/* One stack of a thread's open spans. */
struct rt_span_stack {
	unsigned char *frames; /* count frames of tracker->stride bytes, outermost first */
	uint32_t count, capacity;
};

/* One thread's open spans.  All zero is a thread that saw nothing yet. */
struct rt_span_thread {
	struct rt_span_stack calls;  /* its open calls, by depth */
	struct rt_span_stack marked; /* its open marked spans, in the order they began */
	int skipping_calls;	     /* calls from skip_depth down are past the cap */
	uint32_t skip_depth;	     /* the depth of the shallowest call skipped */
	uint32_t skip_marked;	     /* marked spans skipped, their ends not come yet */
	int has_time;		     /* last_ts holds a time */
	int64_t last_ts;	     /* the latest time the thread saw */
};

/*
 * user_bytes: what the consumer keeps per open span (8-byte aligned,
 * rt_span_user).  calls_max starts at RT_SPAN_CALLS_MAX; a consumer that
 * must keep every call open however deep (the call trees, which show and
 * count every call) may raise it before the first event.
 */
void rt_span_tracker_init(struct rt_span_tracker *tr, const struct rt_span_ops *ops, void *ctx,
			  size_t user_bytes);

/* Take ev, the next event of t, passing thread to the callbacks.  0 or -errno. */
int rt_span_feed(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread,
		 const struct rt_span_event *ev);

/*
 * An enter or exit of t that the consumer leaves out (a filter): the calls
 * its depth shows ended are closed (exit lost), as rt_span_feed would close
 * them; it opens and closes nothing itself.  0 or -errno.
 */
int rt_span_close_unseen(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread,
			 const struct rt_span_event *ev);

/* Any other event of t, at ts: the time its unclosed spans end at. */
static inline void rt_span_saw(struct rt_span_thread *t, int64_t ts)
{
	if (!t->has_time || ts > t->last_ts) {
		t->last_ts = ts;
		t->has_time = 1;
	}
}

/*
 * Close what t still has open (RT_SPAN_UNCLOSED at its last time): its
 * marked spans, then its calls, innermost first.  0 or -errno.
 */
int rt_span_finish(struct rt_span_tracker *tr, struct rt_span_thread *t, void *thread);

/* Free t's frames; t is all zero again. */
void rt_span_thread_free(struct rt_span_thread *t);

/* The open span i of a stack, 0 the outermost, count - 1 the innermost. */
static inline struct rt_span *rt_span_at(const struct rt_span_tracker *tr,
					 const struct rt_span_stack *stack, uint32_t i)
{
	return (struct rt_span *)(void *)(stack->frames + (size_t)i * tr->stride);
}

/* The consumer's bytes of span. */
static inline void *rt_span_user(struct rt_span *span)
{
	return span + 1;
}

/* How long span took to end_ts: 0 when the clock went backwards. */
static inline uint64_t rt_span_duration(const struct rt_span *span, int64_t end_ts)
{
	return end_ts > span->begin_ts ? (uint64_t)end_ts - (uint64_t)span->begin_ts : 0;
}

/* How a call ended whose exit record carries flags (RT_FUNC_F_*). */
enum rt_span_end rt_span_end_of_flags(uint32_t flags);

/*
 * The mark the exports put on a span that did not end normally, the same
 * word in every format: NULL for RT_SPAN_RETURNED, "unwound",
 * "thread_ended", "exited", "exit_lost" (a call) or "end_lost" (a marked
 * span), "unclosed".
 */
const char *rt_span_end_mark(enum rt_span_end how, enum rt_span_kind kind);

/* What events of site are: enter, exit, begin, end or none (site NULL: none). */
enum rt_span_input rt_span_input_of_site(const struct rt_site *site);

/*
 * A trace set's item (of a source rd describes) as the tracker sees it,
 * ts its raw counter: 0 when it opens or closes nothing (out->input NONE).
 * The one reading of the enter and exit records' words (ringtrace/format.h).
 */
enum rt_span_input rt_span_event_of_item(const struct rt_reader *rd, const struct rt_item *item,
					 struct rt_span_event *out);

#endif /* RT_EVENT_SPAN_TRACKER_H */
