/*
 * arena_follow.h - a live arena followed as its program writes it, poll
 * after poll: the records each ring published since the previous poll, in
 * time order, without reading the arena again from its start.  `ringtrace
 * tail` and `ringtrace log -f` print what it hands them.
 *
 * A passive reader: the arena is mapped read-only and never written.
 * Every poll reads each ring's head, reads the tables again when they grew
 * (threads, sites, modules, strings) or a thread was renamed, and takes
 * each ring's records published since (rt_reader_follow_ring).  Records
 * the writer overwrote before a poll took them are a loss item with their
 * count.  A record a slow thread published late may sort before items an
 * earlier poll handed out: it comes in the next batch, never dropped.
 *
 * Time order, and a clock that goes backwards: a thread's records keep the
 * order it wrote them in.  Each is placed at its thread's latest time so far
 * (its own counter, or an earlier record's when its clock stepped back), so
 * that a backward step never moves a thread's message before one it wrote
 * earlier; that is the order `ringtrace log` and `dump`, which merge the
 * threads of a finished arena, print.  With clocks that only go forward the
 * order is plain time order (counter, then tid, then seq).
 */
#ifndef RT_READ_ARENA_FOLLOW_H
#define RT_READ_ARENA_FOLLOW_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "read/arena_reader.h"

/* Between two polls: well inside the 100 ms a record may wait to be shown. */
#define RT_FOLLOW_POLL_NS 25000000L

/* What the tables held when they were read: more means read them again. */
struct rt_follow_table_marks {
	uint32_t threads_used, sites_used, modules_used, module_unloads;
	uint64_t strings_used;
};

struct rt_follower {
	struct rt_reader *rd; /* opened by rt_reader_open_live*(); the caller's to close */
	/* the last poll's items, in time order; good until the next poll */
	struct rt_item_batch batch;
	/* the last poll read the tables again: what was taken of them must be taken again */
	int tables_reloaded;
	int modules_changed; /* ... and the module list changed with them */
	/* private */
	struct rt_ring_cursor *cursors; /* one per ring */
	struct rt_ring_cursor *saved;	/* the cursors before a poll read */
	uint64_t *heads;		/* each ring's head as a poll took it */
	struct rt_follow_table_marks marks;
	uint64_t *latest; /* per thread entry: the latest counter of its records taken */
	uint32_t latest_count;
	struct rt_follow_order *order; /* the batch's sort keys */
	size_t order_capacity;
};

/*
 * Follow the live reader rd (rt_reader_open_live*), from every ring's
 * start: the first poll takes what the rings hold.  0 or -ENOMEM.
 */
int rt_follower_init(struct rt_follower *f, struct rt_reader *rd);
/* Skip what the rings hold now: the next poll takes only what comes after.  0 or -ENOMEM. */
int rt_follower_skip_to_heads(struct rt_follower *f);
/*
 * One poll: f->batch holds what the rings published since the last one,
 * in time order (its log payloads live until rt_follower_forget()).  0, or
 * -errno, with error->message set when it is the arena's fault (its
 * tables no longer read; nothing said when the file shrank, which
 * rt_reader_shrunk() tells).
 */
int rt_follower_poll(struct rt_follower *f, struct rt_read_error *error);
/* The batch was used: its payloads are freed. */
void rt_follower_forget(struct rt_follower *f);
/* The program closed its arena, or is gone (a crash, a kill). */
int rt_follower_program_ended(const struct rt_follower *f);
void rt_follower_free(struct rt_follower *f);

/*
 * What a command does with each poll's batch: 0 to go on, or -errno.
 * Called after every poll, also for an empty batch when the tables were
 * read again (f->tables_reloaded), so that what it took of them is taken
 * again.
 */
typedef int (*rt_follow_use)(void *state, struct rt_follower *f);

/*
 * Poll every RT_FOLLOW_POLL_NS, handing each batch to use, until the program ends
 * (after the poll that follows its end), *stop becomes nonzero, or the
 * arena file shrinks under the mapping (a truncated arena is nobody's live
 * arena any more: what was read of it is handed out and the follower
 * ends, *shrunk 1).  Starts at the rings' start when from_start, else at
 * their heads.  0, or -errno (error->message as rt_follower_poll() says).
 */
int rt_follower_run(struct rt_follower *f, int from_start, volatile sig_atomic_t *stop,
		    rt_follow_use use, void *state, int *shrunk, struct rt_read_error *error);

/*
 * From now on SIGINT and SIGTERM set the flag returned, for
 * rt_follower_run()'s stop: the poll under way is finished and used, then
 * the follower ends.
 */
volatile sig_atomic_t *rt_follow_stop_on_signals(void);

#endif /* RT_READ_ARENA_FOLLOW_H */
