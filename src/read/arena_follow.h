/*
 * arena_follow.h - a live arena followed as its program writes it, poll
 * after poll: the records each ring published since the previous poll, in
 * time order, without reading the arena again from its start.  `ringtrace
 * tail` and `ringtrace log -f` print what it hands them.
 *
 * A passive reader: the arena is mapped read-only and never written.
 * Every poll reads each ring's head, reads the tables again when they grew
 * (threads, sites, modules, strings) or a thread was renamed, and takes
 * each ring's records published since (a ring stream, below).  Records
 * the writer overwrote before a poll took them are a loss item with their
 * count.  A record a slow thread published late may sort before items an
 * earlier poll handed out: it comes in the next batch, never dropped.
 *
 * Memory follows the number of rings, not of records: a poll reads each
 * ring a window at a time, in the file (not a copy), and merges the rings'
 * windows by time (read/merge.h); rt_follower_run() hands the items out in
 * batches of at most RT_FOLLOW_BATCH, so that the first poll of an arena
 * whose rings hold millions of records holds a window of each, never all
 * of them.  A first look at each ring's window (no payloads kept) tells
 * first whether the tables must be read again, and whether the ring's
 * records and losses come in time order as the merge needs them; a ring
 * whose do not (a clock that stepped back before a loss, owners whose
 * times overlap, records no thread claims) is read whole and sorted, as
 * every ring was before.
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
/* The most items rt_follower_run() hands out at once. */
#define RT_FOLLOW_BATCH 4096u
/* The records the rings' windows hold together, each between the two bounds. */
#define RT_FOLLOW_WINDOWS_BUDGET 65536u
#define RT_FOLLOW_WINDOW_MIN 64u
#define RT_FOLLOW_WINDOW_MAX 4096u

/*
 * One ring's records from a follower's cursor up to a head, checked and
 * decoded as rt_reader_open() decodes them, each given to its thread, with
 * the losses found on the way, a window at a time: what
 * rt_reader_follow_ring() appends to a batch, without holding the ring.
 * The follower's own (rt_reader_follow_ring() is the same in one batch).
 */
struct rt_ring_stream;

/*
 * A stream of `ring` from *cursor to head, decoding up to window records
 * at a time (0: 1024).  0 with *out NULL when there is nothing to read
 * (head not past the cursor, a file cut short), 0 with *out, or -ENOMEM.
 */
int rt_ring_stream_open(struct rt_reader *reader, uint32_t ring, uint64_t head,
			const struct rt_ring_cursor *cursor, size_t window,
			struct rt_ring_stream **out);
/*
 * The next items, up to `most` and a few more (the losses around the
 * records), in the stream's own arrays: *items (log payloads gathered when
 * payloads is nonzero, else NULL) and *ranks (when ranks is not NULL), good
 * until the next fill.  Each ring's records come in record order with each
 * gap's loss just before the record after it (the hole's before the first
 * record); a rank breaks the ties of time, tid and seq between items of one
 * stream: records first, in record order, then the losses in the order
 * they were found, the hole's last.  Returns how many, 0 when the stream
 * is at head, or -ENOMEM.
 */
long rt_ring_stream_fill(struct rt_ring_stream *s, int payloads, size_t most,
			 struct rt_item **items, const uint64_t **ranks);
/* Back to the stream's start, to read it again as the first time. */
void rt_ring_stream_rewind(struct rt_ring_stream *s);
/* Records of a site or thread the tables did not hold were read: reload and read again. */
int rt_ring_stream_stale(const struct rt_ring_stream *s);
/* Where the stream stands: at its end, where the next poll starts. */
void rt_ring_stream_cursor(const struct rt_ring_stream *s, struct rt_ring_cursor *cursor);
void rt_ring_stream_free(struct rt_ring_stream *s);

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
	uint64_t *heads;		/* each ring's head as a poll took it */
	struct rt_follow_table_marks marks;
	uint64_t *latest;  /* per thread entry: the latest counter of its records taken */
	uint64_t *scratch; /* per thread entry, for a pass over a poll (item_key) */
	uint32_t *mark;	   /* the pass that last took the entry's scratch */
	uint32_t latest_count, pass;
	int keep;			  /* the pass moves latest[] */
	struct rt_follow_source *sources; /* a poll's: one per ring read */
	size_t source_count, source_capacity;
	size_t window; /* records each ring's window holds */
	int error;     /* a source failed in the merge */
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
 * in time order (its log payloads live until rt_follower_forget()), all of
 * it at once (rt_follower_run() hands it out a bounded batch at a time).  0, or
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
 * What a command does with each batch of a poll's items, in time order
 * from one batch to the next (up to RT_FOLLOW_BATCH items each): 0 to go
 * on, or -errno.  Called for every batch, also for an empty one when the
 * tables were read again and nothing else came (f->tables_reloaded, set
 * only for the poll's first batch), so that what it took of them is taken
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
