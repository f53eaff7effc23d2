/*
 * trace_set_windows.c - the bytes of a ring cursor's blocks, read from the
 * file a window at a time.
 *
 * Each ring cursor reads ahead into a window of its own.  A file's rings
 * interleave their blocks, so the block a cursor wants next often lies in
 * a window another cursor read just before: the recent windows are looked
 * in first, and a block found there costs no read and no copy.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include <errno.h>
#include <unistd.h>

#include "read/trace_set_private.h"

/* Whether the cursor's read-ahead holds all RT_BLOCK_MAX_BYTES a block at ref may take. */
static int window_holds(const struct ring_cursor *c, const struct block_ref *ref)
{
	return ref->file == c->readahead_file && ref->offset >= c->readahead_offset &&
	       ref->offset + RT_BLOCK_MAX_BYTES <= c->readahead_offset + c->readahead_length;
}

/* c read a window: first among the recent ones, once. */
static void note_window(struct set_private *p, struct ring_cursor *c)
{
	size_t i = 0;
	while (i + 1 < RECENT_WINDOWS && p->recent_windows[i] && p->recent_windows[i] != c)
		i++;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	memmove(&p->recent_windows[1], &p->recent_windows[0], i * sizeof(p->recent_windows[0]));
	p->recent_windows[0] = c;
}

/* (read/trace_set_private.h) */
const unsigned char *rt_set_cursor_bytes(struct ring_cursor *c, const struct block_ref *ref,
					 uint64_t *avail, int *error)
{
	const struct rt_trace_file *f = &c->set->files[ref->file].file;
	if (c->readahead_capacity < RT_BLOCK_MAX_BYTES) {
		struct rt_block_header h;
		int rc = rt_trace_file_read_block(f, ref->offset, c->block, &h);
		if (rc < 0)
			*error = rc;
		*avail = RT_BLOCK_MAX_BYTES;
		return rc == RT_BLOCK_OK ? c->block : NULL;
	}
	if (!window_holds(c, ref)) {
		/* a window another cursor read may hold it: no read, no copy */
		struct set_private *p = priv_of(c->set);
		for (size_t i = 0; i < RECENT_WINDOWS && p->recent_windows[i]; i++) {
			const struct ring_cursor *other = p->recent_windows[i];
			if (other != c && window_holds(other, ref)) {
				*avail =
				    other->readahead_offset + other->readahead_length - ref->offset;
				return other->readahead + (ref->offset - other->readahead_offset);
			}
		}
		size_t done = 0;
		while (done < c->readahead_capacity) {
			ssize_t got =
			    pread(f->fd, c->readahead + done, c->readahead_capacity - done,
				  (off_t)(ref->offset + done));
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				*error = -errno;
				c->readahead_length = 0;
				return NULL;
			}
			if (got == 0)
				break;
			done += (size_t)got;
		}
		c->readahead_file = ref->file;
		c->readahead_offset = ref->offset;
		c->readahead_length = done;
		note_window(p, c);
	}
	*avail = c->readahead_offset + c->readahead_length - ref->offset;
	return c->readahead + (ref->offset - c->readahead_offset);
}
