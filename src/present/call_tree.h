/*
 * call_tree.h - the calls of every thread, rebuilt from function enter and
 * exit events fed in time order (docs/FORMAT.md "Sites"), for the views
 * that show them (`replay`, `report`).
 *
 * Each thread (a source and a tid) has a stack of open calls, paired by the
 * span tracker's rule (event/span_tracker.h), as every view that pairs calls
 * pairs them.  The depth an event carries keeps the nesting right when
 * events are missing: an enter at depth d first closes every open call at
 * depth d or more (their exits were lost), an exit at depth d closes every
 * open call deeper than d, then its own call.  An exit with no open call of
 * its function at its depth is an exit without its enter (recorded before
 * the trace begins, or lost).  Calls still open at the end are closed with
 * RT_CALL_OPEN.  Spans marked in the source are no calls: they come to the
 * view as other items.  Every call is kept however deep (no cap): memory
 * grows with the number of threads and the depth of their calls, never with
 * the number of events.
 */
#ifndef RT_PRESENT_CALL_TREE_H
#define RT_PRESENT_CALL_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "read/arena_reader.h"

/* How a call ended. */
enum rt_call_end {
	RT_CALL_RETURNED = 0, /* its exit event */
	RT_CALL_UNWOUND,      /* the library's exit for it: longjmp or an exception left it */
	RT_CALL_THREAD_ENDED, /* the library's exit for it: still open when its thread ended */
	RT_CALL_EXITED,	      /* the library's exit for it: still open at exit() */
	RT_CALL_EXIT_LOST,    /* closed by the depth of a later event: its exit is missing */
	RT_CALL_OPEN,	      /* still open when the trace ends */
};

struct rt_call_frame {
	uint64_t addr;	    /* the function */
	uint64_t call_site; /* where it returns to */
	uint64_t enter_counter;
	uint64_t child_ticks; /* time in its closed callees, raw counter ticks */
	uint32_t depth;	      /* the event's depth */
	uint32_t view;	      /* the view's own use (a function index, say) */
	int shown;	      /* the view's own use */
};

struct rt_call_thread {
	uint32_t source; /* in the trace set */
	int32_t tid;
	const struct rt_reader *reader; /* names and times of its source */
	struct rt_call_frame *stack;	/* open calls, outermost first */
	size_t depth, capacity;
	uint64_t last_counter;	/* of its newest item */
	uint64_t first_counter; /* of its first timed item (when timed) */
	int timed;		/* it has had a timed item */
	void *view;		/* the view's own use */
};

struct rt_call_tree_ops {
	/* a call was entered: f is the top of t's stack */
	void (*enter)(void *ctx, struct rt_call_thread *t, struct rt_call_frame *f);
	/* a call ends at end_counter: f is still the top of t's stack */
	void (*leave)(void *ctx, struct rt_call_thread *t, struct rt_call_frame *f,
		      uint64_t end_counter, enum rt_call_end how);
	/* an exit whose enter is not in the trace */
	void (*stray_exit)(void *ctx, struct rt_call_thread *t, const struct rt_item *item);
	/*
	 * Any other item: an RT_TRACE event, or a loss (t is NULL for a loss
	 * that is no one thread's, or an event no thread entry claims).  rd
	 * describes it.  May be NULL.
	 */
	void (*other)(void *ctx, struct rt_call_thread *t, const struct rt_reader *rd,
		      const struct rt_item *item);
};

struct rt_call_tree;

/* NULL when out of memory. */
struct rt_call_tree *rt_call_tree_new(const struct rt_call_tree_ops *ops, void *ctx);
/* One item of source (described by rd), in time order.  0 or -ENOMEM. */
int rt_call_tree_feed(struct rt_call_tree *tree, uint32_t source, const struct rt_reader *rd,
		      const struct rt_item *item);
/*
 * An enter or exit of source that a filter left out (present/item_filter.h):
 * the calls its depth shows ended before it are closed (RT_CALL_EXIT_LOST),
 * as if it were fed; nothing else changes.
 */
void rt_call_tree_close_lost(struct rt_call_tree *tree, uint32_t source, const struct rt_reader *rd,
			     const struct rt_item *item);
/* Close every call still open (RT_CALL_OPEN, at its thread's last item). */
void rt_call_tree_finish(struct rt_call_tree *tree);
void rt_call_tree_free(struct rt_call_tree *tree);

/*
 * The function at addr in rd's process at counter, with no source line:
 * its name (a C++ name whole, as demangled), or "module+0x1a2b", or
 * "0x7f00deadbeef" (names NULL: always the address).
 * Into buf (size bytes with the NUL); returns buf.
 */
struct rt_function_names;
const char *rt_call_name(struct rt_function_names *names, const struct rt_reader *rd, uint64_t addr,
			 uint64_t counter, char *buf, size_t size);
/* The same with a function's name in its short form (symbols/demangle.h): "std::sort". */
const char *rt_call_short_name(struct rt_function_names *names, const struct rt_reader *rd,
			       uint64_t addr, uint64_t counter, char *buf, size_t size);

/* How a call whose exit event has these flags (RT_FUNC_F_*) ended. */
enum rt_call_end rt_call_end_of(uint32_t flags);
/* "unwound", "thread ended", ...: how a call ended, in a few words. */
const char *rt_call_end_text(enum rt_call_end how);

#endif /* RT_PRESENT_CALL_TREE_H */
