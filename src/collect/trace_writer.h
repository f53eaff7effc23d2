/*
 * trace_writer.h - writing blocks into a trace file, with rotation.
 *
 * The writer hands out a block buffer, the caller fills the header fields
 * that belong to it (type, source, ring, count, first, first_record,
 * counters) and the payload, and commits it: the writer numbers it
 * (file_id, file_seq, block_seq), seals it (format/trace_block.h) and
 * queues it for one large write().  With a size limit, a file that reached
 * it is closed with an END block (ROTATED) and the next one opened; its
 * first blocks are the FILE block and whatever the rundown callback writes
 * (the collector's metadata), so every file decodes alone.  Files of a
 * rotating set are named OUT.000000, OUT.000001, ... (sorting in time
 * order); with a file limit the oldest is deleted.  Without a size limit
 * the output is exactly OUT.
 *
 * A write that fails (disk full) truncates the file back to its last
 * complete block, tries to append an END block (STOPPED), and makes every
 * later call fail with the same error: the file stays valid.
 */
#ifndef RT_COLLECT_TRACE_WRITER_H
#define RT_COLLECT_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/format.h"

struct rt_trace_writer_options {
	const char *path;   /* OUT */
	uint64_t max_size;  /* bytes per file, about (within one block); 0: one file */
	uint32_t max_files; /* files kept with max_size; 0: all */
	uint64_t file_id;   /* 0: a random one */
	int background;	    /* write() from a thread of the writer's own (see trace_writer.c) */
	/*
	 * background: keep that thread off CPU `cpu` (the one the caller drains
	 * rings on), when the process may run on another one.
	 */
	int keep_off_cpu;
	int cpu;
};

struct rt_trace_writer;

/* Writes the metadata a new file starts with; returns 0 or -errno. */
typedef int (*rt_trace_rundown_fn)(void *context, struct rt_trace_writer *w);

/*
 * Writes what a file ends with before its END block (the collector's final
 * RINGS blocks), at rotation and at rt_trace_writer_end(); 0 or -errno.
 */
typedef int (*rt_trace_ending_fn)(void *context, struct rt_trace_writer *w);

/*
 * Create the (first) output file, refusing nothing but what cannot be
 * written: the error comes back before any program runs.  0, or -errno
 * with message.
 */
int rt_trace_writer_open(struct rt_trace_writer **out, const struct rt_trace_writer_options *o,
			 rt_trace_rundown_fn rundown, void *context, char *message,
			 size_t message_size);

/*
 * Have ending called before every END block but the one of a failed write
 * (NULL: none).  A file that rotates keeps one block's room for what it
 * writes.
 */
void rt_trace_writer_set_ending(struct rt_trace_writer *w, rt_trace_ending_fn ending,
				void *context);

/*
 * Have copy write the metadata again inside every file, so that damage to
 * one copy leaves another (docs/FORMAT.md, "Copies of the metadata"): it is
 * called when a block is asked for (never inside a commit, never while the
 * rundown, the ending or a copy is being written) once the file grew by
 * every bytes since its rundown or the last copy; every 0: by at least
 * 1 MiB, and by at least 64 times the size of the last copy, so that the
 * copies cost at most about 1.6 % of the file.  NULL: no copies.
 */
void rt_trace_writer_set_copies(struct rt_trace_writer *w, rt_trace_rundown_fn copy, void *context,
				uint64_t every);

/*
 * A zeroed buffer of RT_BLOCK_MAX_BYTES for the next block (8-byte
 * aligned), or NULL after a failure.
 */
void *rt_trace_writer_block(struct rt_trace_writer *w);

/* Seal and queue the block last handed out, size bytes of it.  0 or -errno. */
int rt_trace_writer_commit(struct rt_trace_writer *w, uint32_t size);

/* Write out what is queued, and wait until it is written.  0 or -errno. */
int rt_trace_writer_flush(struct rt_trace_writer *w);

/*
 * Start writing what is queued without waiting for it (a background
 * writer whose thread is idle; while it is busy, what is queued waits for
 * the next call or a full buffer; without background, the same as flush).
 * A failure shows at a later call.  0 or -errno.
 */
int rt_trace_writer_submit(struct rt_trace_writer *w);

/*
 * END block (reason: enum rt_file_end), flush, close the file; w stays, so
 * that rt_trace_writer_error() can say what failed.  Later calls fail.
 * 0 or -errno.
 */
int rt_trace_writer_end(struct rt_trace_writer *w, uint32_t reason);

/*
 * rt_trace_writer_end() unless it already ran, then free w (NULL is
 * allowed).  0 or -errno.
 */
int rt_trace_writer_close(struct rt_trace_writer *w, uint32_t reason);

/* Why the writer failed, "" while it has not. */
const char *rt_trace_writer_error(const struct rt_trace_writer *w);

uint64_t rt_trace_writer_bytes(const struct rt_trace_writer *w); /* all files */
/* Records (SLOTS) in the files: committed, less those a failed write kept out. */
uint64_t rt_trace_writer_records(const struct rt_trace_writer *w);
uint64_t rt_trace_writer_files(const struct rt_trace_writer *w);
/* The current file's name. */
const char *rt_trace_writer_path(const struct rt_trace_writer *w);

#endif /* RT_COLLECT_TRACE_WRITER_H */
