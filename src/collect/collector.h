/*
 * collector.h - draining arenas into trace files while programs run.
 *
 * A collector owns one output (a trace file, or a rotating set of them:
 * collect/trace_writer.h) and any number of arenas, one per traced process
 * (a program and the children it forked).  Each arena becomes a "source"
 * of the output, numbered in the order attached.
 *
 * Stream mode: every rt_collector_poll() copies what each ring committed
 * since the last pass into SLOTS blocks and then advances the ring's tail,
 * which frees the space for the writer; metadata that changed (new sites,
 * new or renamed or exited threads, the clock, how the process ended) is
 * written before the records that need it.  Flight mode: rings overwrite,
 * the tail never moves, and rt_collector_snapshot() writes what each ring
 * holds right now (at exit, at a crash, or when `ringtrace snapshot` asks
 * through the arena header).
 *
 * The collector never trusts the arena: a header or ring that does not
 * check out is skipped with a message, never followed out of the mapping.
 */
#ifndef RT_COLLECT_COLLECTOR_H
#define RT_COLLECT_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/trace_writer.h"

struct rt_collector;

/* Open the output (see rt_trace_writer_open).  0, or -errno with message. */
int rt_collector_open(struct rt_collector **out, const struct rt_trace_writer_options *options,
		      char *message, size_t message_size);

/*
 * Stream-mode arenas attached from now on ask their writers to wait up to
 * us microseconds for room when a ring is full, rather than drop the record
 * (the arena header's full_wait_us); 0, the default, leaves them dropping.
 * It is taken back (0) when the collector leaves an arena.
 */
void rt_collector_set_full_wait(struct rt_collector *c, uint32_t us);

/*
 * Start draining the arena at path (mapped read-write: stream mode moves
 * the tails) and write its rundown.  parent_pid: the traced process it was
 * forked from, or 0.  Marks the arena's collector_pid.  Returns the source
 * number (>= 0), or -errno with message (not an arena, not ready yet:
 * -EAGAIN while its header is still being created).
 */
int rt_collector_attach(struct rt_collector *c, const char *path, int32_t parent_pid, char *message,
			size_t message_size);

/*
 * As rt_collector_attach, but only the file identified by dev and ino: a
 * file that replaced it at path (an exec'd image's new arena, the old one
 * set aside), or none there any more, gives -EAGAIN rather than being taken
 * for it or refused.
 */
int rt_collector_attach_file(struct rt_collector *c, const char *path, dev_t dev, ino_t ino,
			     int32_t parent_pid, char *message, size_t message_size);

/* Whether an arena at this path (or of this pid) is already attached. */
int rt_collector_has_path(const struct rt_collector *c, const char *path);

/*
 * Whether the arena of source, attached, says now that its image was
 * replaced by exec (end_reason RT_END_EXEC in the mapping): once the exec
 * is done it has no writer left, though its pid may run on as another
 * image.  Until then the exec may still fail and take it back.
 */
int rt_collector_source_replaced(const struct rt_collector *c, int source);

/*
 * One pass over every attached arena: changed metadata, committed records
 * (stream mode), and a snapshot for every arena whose snapshot_requests
 * moved (flight mode).  Returns the records written (>= 0), or -errno when
 * the output failed (message says why; the collector then only keeps the
 * file valid, it writes nothing more).
 */
int64_t rt_collector_poll(struct rt_collector *c, char *message, size_t message_size);

/* Flight mode: write every ring's current contents of every arena now. */
int rt_collector_snapshot(struct rt_collector *c, char *message, size_t message_size);

/*
 * The process of source ended (exited, crashed, killed; the caller knows,
 * e.g. from waitpid): drain the last records, account for a record torn by
 * its death and for drops no LOST record reports, write its final header,
 * and stop watching it.  Flight mode: its rings are written here (the
 * snapshot at exit).
 */
int rt_collector_finish_source(struct rt_collector *c, int source, char *message,
			       size_t message_size);

/*
 * Stop collecting source while its process may still run (a child that
 * outlives the program, the end of `ringtrace snapshot`): as finish, but a
 * record in the making is not torn, only not committed yet, and the file
 * simply ends before it.  Drops that no LOST record in the file reports are
 * still a dropped loss: they happened.
 */
int rt_collector_detach_source(struct rt_collector *c, int source, char *message,
			       size_t message_size);

/*
 * The parent pid written for source from its next SOURCE block on (one is
 * written now if it changed): the caller learns it from outside the arena.
 * 0, or -errno (message).
 */
int rt_collector_set_parent(struct rt_collector *c, int source, int32_t parent_pid, char *message,
			    size_t message_size);

/*
 * Whether the arena of source shrank while the collector read it (another
 * process truncated it): 1 with *offset, the first byte found missing,
 * else 0.  Its missing bytes read as zeros (read/map_guard.h), never as a
 * crash; the pass that finds it detaches the source, so nothing more of it
 * is written (its last pass, if it was one, is in the file as read).
 */
int rt_collector_source_shrunk(const struct rt_collector *c, int source, uint64_t *offset);

/*
 * How long the caller may wait before the next rt_collector_poll(), in ns:
 * a quarter of the time the fastest-filling stream ring took lately to fill
 * from empty (0 while data comes in fast; it grows while none comes).
 */
uint64_t rt_collector_wait_ns(const struct rt_collector *c);

/* Totals for the closing report and the benchmarks. */
struct rt_collector_stats {
	uint64_t records;   /* records in the files */
	uint64_t unwritten; /* records taken from the rings that a failed write (a full
			       disk) kept out of the files: lost */
	uint64_t bytes;	    /* bytes written, all files */
	uint64_t files;	    /* files opened (rotation) */
	uint64_t dropped;   /* records the rings dropped (stream: ring full) */
	uint64_t overwritten;
	uint64_t torn;
};
void rt_collector_stats(const struct rt_collector *c, struct rt_collector_stats *stats);

/*
 * End every source still attached (finished when its process is gone, by
 * the pid and start time its arena names, or its image replaced by exec,
 * else detached), write the END
 * block and close the output.  stats (may be NULL): the final totals.
 * Returns 0 or -errno (message).  Frees c in every case; NULL is allowed.
 */
int rt_collector_close(struct rt_collector *c, struct rt_collector_stats *stats, char *message,
		       size_t message_size);

#endif /* RT_COLLECT_COLLECTOR_H */
