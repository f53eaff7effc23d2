/*
 * call_limits.h - the calls `replay` and `report` show by how long they
 * lasted (-t) and how deep they are (-D): a view's call tree operations
 * (present/call_tree.h) wrapped, so that the view sees only the calls
 * shown, nested as if the others had not been there.
 *
 * The rules:
 * - Depth: a call's level among the calls fed to the tree (what the item
 *   filter kept, present/item_filter.h): a thread's outermost call is at
 *   level 0, and with -F the outermost call it selects.  max_depth N shows
 *   the levels below N.
 * - Duration: a call is shown when it lasted min_ns or more, timed as the
 *   views time it: up to its exit (or the library's exit for a call that
 *   did not return), for a call whose exit is missing up to the event that
 *   closed it, for a call still open at the end up to its thread's last
 *   item.  A call inside a shorter one is shorter still, never shown.
 *   Streaming in time order, a call's length is known only at its end, or
 *   once an event of its thread comes min_ns after its enter: until then
 *   its enter is held, and the view is given it then, with the time it was
 *   entered (a view that writes as it goes writes its line late).
 * - An exit whose enter is not in the trace: with max_depth, at the level
 *   its open calls give it; with min_ns, shown only when no call of its
 *   thread is open around it and it comes min_ns or more after its
 *   thread's first timed item (its call was open since before that).
 * - Trace events, log messages, I/O calls and losses are never hidden
 *   here: the view gets each as it comes, under the innermost call shown.
 *   What a call records before it is known to last min_ns comes before
 *   its enter (as in a trace `record -t` wrote).
 * - Time: the view's frames count only shown callees in child_ticks, so
 *   the time of a hidden callee is its caller's own.
 *
 * Memory: a second stack per thread, of its open calls shown, and the
 * held enters stay in the tree's own stack: bounded by the depth of the
 * open calls, never by the number of events.
 */
#ifndef RT_PRESENT_CALL_LIMITS_H
#define RT_PRESENT_CALL_LIMITS_H

#include <stdint.h>

#include "present/call_tree.h"

/* What the command line chose. */
struct rt_call_limits {
	uint64_t min_ns;    /* -t: shortest call shown; 0, any */
	uint32_t max_depth; /* -D: levels shown; 0, all */
};

/* Whether the limits hide anything. */
static inline int rt_call_limits_wanted(const struct rt_call_limits *l)
{
	return l->min_ns || l->max_depth;
}

struct rt_call_limiter;

/*
 * A limiter by limits (copied) for the view whose operations and context
 * are view_ops and view_ctx.  NULL when out of memory.
 */
struct rt_call_limiter *rt_call_limiter_new(const struct rt_call_limits *limits,
					    const struct rt_call_tree_ops *view_ops,
					    void *view_ctx);
/* The operations of a call tree feeding the limiter l (its context: l). */
extern const struct rt_call_tree_ops rt_call_limiter_ops;
/* 0, or -ENOMEM when memory ran out (the view then missed calls). */
int rt_call_limiter_error(const struct rt_call_limiter *l);
void rt_call_limiter_free(struct rt_call_limiter *l);

/*
 * The call tree a view reads through: through a new limiter when limits
 * are wanted (*limiter: it, for the caller to free after the tree), else
 * the view's own (*limiter NULL).  NULL when out of memory.
 */
struct rt_call_tree *rt_call_tree_limited(const struct rt_call_limits *limits,
					  const struct rt_call_tree_ops *view_ops, void *view_ctx,
					  struct rt_call_limiter **limiter);

#endif /* RT_PRESENT_CALL_LIMITS_H */
