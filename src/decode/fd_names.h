/*
 * fd_names.h - what each descriptor of one traced process named, over time,
 * and where its file position stood, as far as the records make it certain.
 *
 * The records of a process reach the table in the order of an output
 * stream: by completion, since a record is stamped with the head counter
 * taken when its call returned; each also carries the counter taken when
 * the call began (start).  A descriptor number is reused as soon as the
 * kernel frees it, possibly by another thread while the close that freed
 * it has not returned yet, so a name is a version valid from a time on:
 *
 *  - a name takes effect when the call that made it completed: an open or
 *    fopen (its result), a dup (the new descriptor shares the old one's
 *    name), a RUNDOWN from 0 (before every record), a NAMED from its start;
 *  - a close ends a name at the close's START: a "closed" marker at
 *    start + 1, so that the close itself, and calls that began before it,
 *    still resolve to the old name, while an open on another thread that
 *    got the same number after the kernel freed it (and may have completed
 *    before the close did) takes effect at its own completion, after the
 *    marker;
 *  - each descriptor keeps its versions sorted by the time they take
 *    effect; a record arrives in completion order, not in that order, so
 *    a version is inserted where it belongs, not appended;
 *  - a call resolves its descriptor at its START: the latest version that
 *    took effect at or before it.  None (or a closed marker) gives
 *    "unknown" with a reason, never another file's name;
 *  - memory is bounded: at most RT_FD_NAMES_VERSIONS versions per
 *    descriptor, the oldest dropped first; a call older than what was kept
 *    resolves to "unknown" (forgotten);
 *  - seeds (decode/fd_seeds.h: an arena's descriptor table, a trace file's
 *    FDS rundown) enter as versions from their counter (0: before tracing),
 *    a closed one with its closed marker;
 *  - rename changes no descriptor's name (a descriptor names the file it
 *    opened, under the path it was opened by).
 *
 * File positions, shown as a derived offset for read, write, readv, writev
 * and the stdio calls, only when certain:
 *  - a descriptor opened in this process starts at 0, one from the rundown
 *    at the offset it carries; a seeded or NAMED one is unknown;
 *  - results move it (read/write: by the bytes done), an lseek sets it to
 *    its result; pread/pwrite/preadv/pwritev name their own offset and do
 *    not move it; a write to an O_APPEND descriptor makes it unknown;
 *  - dup'd descriptors share one open file description, so one position;
 *  - two calls on one description that overlapped in time (one began
 *    before the other returned) leave it unknown: their order is not known;
 *  - a stdio stream has its own position (fopen: 0, fseek SEEK_SET: its
 *    offset); a stream call makes its descriptor's position unknown (the
 *    buffer reads ahead and writes late) and a call on the descriptor
 *    makes its streams' positions unknown; copy_file_range and sendfile
 *    make both descriptors' unknown;
 *  - positions are never derived for a process that forked a traced child
 *    of the same input, or was forked from a traced one
 *    (rt_fd_names_positions(t, 0)): parent and child share them.
 */
#ifndef RT_DECODE_FD_NAMES_H
#define RT_DECODE_FD_NAMES_H

#include <stdint.h>

#include "decode/fd_seeds.h"
#include "decode/io_event.h"

#define RT_FD_NAMES_VERSIONS 16	     /* versions kept per descriptor */
#define RT_FD_NAMES_FD_MAX (1 << 20) /* descriptors at or above: unknown */
#define RT_FD_NAMES_STREAMS 64	     /* stdio streams whose position is followed */

/* A descriptor's name as resolved for one call. */
struct rt_fd_name {
	int known;
	const char *name; /* known: name_length bytes, NUL-terminated, valid until the next call */
	uint32_t name_length;
	const char *why; /* not known: "unseen", "closed", "forgotten", "none" */
};

/* What the table says about one call. */
struct rt_fd_resolved {
	struct rt_fd_name fd;  /* the call's descriptor, at its start */
	struct rt_fd_name fd2; /* copy_file_range, sendfile: the output descriptor (aux[0]) */
	int offset_derived;    /* offset below is the file position before the call */
	int64_t offset;
};

struct rt_fd_names;

/* A new, empty table (positions followed), or NULL. */
struct rt_fd_names *rt_fd_names_new(void);
void rt_fd_names_free(struct rt_fd_names *t);

/* Whether positions are derived (never for a process with a traced child). */
void rt_fd_names_positions(struct rt_fd_names *t, int on);

/* Add the seeds as versions; 0 or -ENOMEM. */
int rt_fd_names_seed(struct rt_fd_names *t, const struct rt_fd_seeds *seeds);

/*
 * One call, completed at counter done: resolve its descriptors at its
 * start into *out, then apply what it did.  Returns 0 or -ENOMEM (*out is
 * filled either way).
 */
int rt_fd_names_call(struct rt_fd_names *t, const struct rt_io_event *ev, uint64_t done,
		     struct rt_fd_resolved *out);

/*
 * Resolve a call's descriptors without applying it (a call shown twice,
 * such as a thread's last event): no position is derived.
 */
void rt_fd_names_resolve(struct rt_fd_names *t, const struct rt_io_event *ev,
			 struct rt_fd_resolved *out);

#endif /* RT_DECODE_FD_NAMES_H */
