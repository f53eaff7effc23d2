/*
 * arena_last.c - keeping the previous run's arena as PATH.last.
 *
 * A program that starts with a path that already holds an arena (its own
 * previous run, or a crashed process whose pid it now has) does not
 * destroy that record: it renames it to PATH.last, replacing an older last
 * arena, and creates its own at PATH.  `ringtrace dump --last PATH` reads
 * it, as ACRN keeps the logs of the last crashed run apart from the current
 * ones and JTRACE's `k jtrace -r` shows the recovered buffer.
 *
 * An exec keeps the pid, and so the arena's name: the new image finds the
 * old image's arena at PATH and sets it aside the same way.  Under
 * `ringtrace record`, which scans for PATH.last too, a process that execs
 * twice between two scans would have its second image's arena replace the
 * first one's at PATH.last before record attached it: those events would
 * be gone, and no loss counted anywhere.  So when the PATH.last about to be
 * replaced holds our own pid and start time (an earlier image of this very
 * process) and no collector_pid (not attached yet), and the recorder that
 * RINGTRACE_COLLECTOR names runs (and started before us: not a pid reused
 * since it ended), it is first renamed to PATH.last.N, the first N from 1
 * to RT_ARENA_KEPT_MAX whose name is free or holds an arena a collector
 * has attached (mapped by it: the name is no longer what it reads).  What
 * this keeps is bounded: at most RT_ARENA_KEPT_MAX files per PATH, and
 * only while a recorder runs that attaches them and removes them when it
 * ends.  Outside `record` (a daemon that re-execs itself to upgrade, say)
 * nothing changes: one PATH.last, replaced by the next.  When every N
 * holds an arena not yet attached, PATH.last is replaced as it would be
 * outside `record`, with one line on stderr, and the events its arena
 * held are counted into the new arena's header (images_replaced,
 * lost_replaced), so that the trace file says what is missing: the
 * library, which is the last to see that arena, counts it; the collector
 * never sees it at all.
 *
 * What may be renamed or replaced, and what never is:
 *  - PATH must hold a ringtrace arena (its magic) or an empty file (which
 *    is only unlinked, as before).  PATH.last must hold an arena or
 *    nothing.  Anything else - another file, a symbolic link, a directory,
 *    a FIFO - is never renamed, replaced or truncated: tracing turns off
 *    with one line on stderr and the program runs on.
 *  - An arena whose process is still running (its pid exists and was
 *    started at the time the header says, so a reused pid is not taken
 *    for it) is never taken from it, at PATH, PATH.last or PATH.last.N.
 *    A header with our own pid is from an image of this process before an
 *    exec: that one has ended.
 *  - PATH.last.N is replaced only when it holds an arena a collector has
 *    attached, never anything else; a name made there meanwhile is never
 *    replaced (RENAME_NOREPLACE, as below): the next N is tried.
 *  - Both files are looked at through descriptors opened with O_NOFOLLOW,
 *    and the name is checked to still lead to the same file just before
 *    the rename; rename() itself never follows a symbolic link.  When
 *    there is no PATH.last, the rename refuses to replace one made in the
 *    meantime (RENAME_NOREPLACE, or link+unlink where the file system has
 *    no such rename).  Someone who can write the directory can still swap
 *    a name between that check and the rename; what such a race can do is
 *    bounded by rename() itself: it replaces a directory entry, never
 *    writes into a file, and never follows a link.
 *
 * This runs once, in the thread that starts the arena (maybe in a signal
 * handler on a small stack): static buffers, a few system calls, no stdio
 * but snprintf for the reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/arena_names.h"
#include "common/proc_stat.h"
#include "record/record.h"

/* What a descriptor leads to, as far as replacing it is concerned. */
struct found {
	dev_t dev;
	ino_t ino;
	int empty;	       /* a regular file of 0 bytes */
	int32_t running_pid;   /* an arena whose process still runs: its pid */
	int32_t pid;	       /* an arena's header: its process, */
	uint64_t start;	       /* that process's start time, */
	int32_t collector_pid; /* and the collector draining it, 0 if none */
};

/*
 * As the tool's rt_process_alive(), without its look at every task (no
 * opendir here): a process whose main thread is a zombie counts as ended.
 */
static int owner_running(int32_t pid, uint64_t start)
{
	char path[64];
	struct rt_proc_stat st;
	if (pid <= 0 || pid == getpid())
		return 0; /* ourselves: an image of this process before an exec */
	rt_proc_stat_path(path, sizeof(path), pid, 0);
	if (rt_proc_stat_read(path, &st) != 0)
		return 0;
	return (start == 0 || st.start_time == start) && st.state != 'Z' && st.state != 'X';
}

static int read_field(int fd, void *field, size_t size, size_t offset)
{
	return pread(fd, field, size, (off_t)offset) == (ssize_t)size;
}

/* 1 if fd is a ringtrace arena (or an empty regular file), with *f filled; 0 if not. */
static int inspect(int fd, struct found *f)
{
	struct stat st;
	memset(f, 0, sizeof(*f));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	if (st.st_size == 0) {
		f->empty = 1;
		return 1;
	}
	char magic[8];
	if (!read_field(fd, magic, sizeof(magic), 0) ||
	    memcmp(magic, RT_ARENA_MAGIC, sizeof(magic)) != 0)
		return 0;
	uint32_t state;
	/* a file too short for these is a damaged arena: nobody writes into it */
	if (!read_field(fd, &state, sizeof(state), offsetof(struct rt_arena_header, state)) ||
	    !read_field(fd, &f->pid, sizeof(f->pid), offsetof(struct rt_arena_header, pid)) ||
	    !read_field(fd, &f->start, sizeof(f->start),
			offsetof(struct rt_arena_header, process_start))) {
		f->pid = 0;
		f->start = 0;
		return 1;
	}
	if (!read_field(fd, &f->collector_pid, sizeof(f->collector_pid),
			offsetof(struct rt_arena_header, collector_pid)))
		f->collector_pid = 0;
	if (state != RT_ARENA_CLOSED && owner_running(f->pid, f->start))
		f->running_pid = f->pid;
	return 1;
}

/* Does path (not followed) still name the file inspected? */
static int still_there(const char *path, const struct found *f)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == f->dev &&
	       st.st_ino == f->ino;
}

/* "PATH WHAT[ process PID, which is still running]: HOW": the reason, errno EEXIST. */
static int refuse(char *why, size_t why_size, const char *path, const char *what, int32_t pid,
		  const char *how)
{
	if (pid)
		snprintf(why, why_size, "%s %s process %d, which is still running: %s", path, what,
			 (int)pid, how);
	else
		snprintf(why, why_size, "%s %s: %s", path, what, how);
	errno = EEXIST;
	return -1;
}

/* Rename path to last, which did not exist: never replace one made meanwhile. */
static int rename_to_free_name(const char *path, const char *last)
{
	if (renameat2(AT_FDCWD, path, AT_FDCWD, last, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	/* a file system without RENAME_NOREPLACE: link() never replaces either */
	if (link(path, last) != 0)
		return -1;
	unlink(path);
	return 0;
}

/* Events of an image replaced unread, for the new arena's header (arena.c). */
static uint64_t replaced_images, replaced_events;

void rt_arena_replaced(uint64_t *images, uint64_t *events)
{
	*images = replaced_images;
	*events = replaced_events;
	/* the next arena of this process (after a fork, say) replaced nothing */
	replaced_images = replaced_events = 0;
}

static uint64_t add_bounded(uint64_t a, uint64_t b)
{
	uint64_t sum;
	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

/*
 * The events the arena in fd held or counted lost: every ring's records
 * but its lost notes, plus its drops, plus a record torn by the exec that
 * ended the image; every thread's events lost for want of a ring; the
 * header's lost events (its own replaced images' among them).  Read with
 * pread and bounded by the header's own geometry: a damaged arena costs an
 * undercount, never a fault.
 */
static void count_image(int fd, uint64_t *images, uint64_t *events)
{
	static struct rt_arena_header h;
	*images = 0;
	*events = 0;
	if (!read_field(fd, &h, sizeof(h), 0) ||
	    memcmp(h.magic, RT_ARENA_MAGIC, sizeof(h.magic)) != 0)
		return;
	uint64_t n = add_bounded(h.lost_untracked, h.lost_no_site);
	n = add_bounded(n, h.lost_replaced);
	n = add_bounded(n, h.lost_reused);
	uint32_t rings = h.rings_used < h.ring_count ? h.rings_used : h.ring_count;
	for (uint32_t r = 0; r < rings && r < RT_MAX_RINGS; r++) {
		struct rt_ring_desc d;
		if (!read_field(fd, &d, sizeof(d), h.ring_desc_offset + (uint64_t)r * sizeof(d)))
			break;
		uint64_t records = d.records > d.notes ? d.records - d.notes : 0;
		n = add_bounded(n, add_bounded(records, d.dropped) + (d.reserve != d.head));
	}
	uint32_t threads = h.threads_used < h.thread_capacity ? h.threads_used : h.thread_capacity;
	for (uint32_t t = 0; t < threads; t++) {
		uint64_t lost;
		if (!read_field(fd, &lost, sizeof(lost),
				h.thread_table_offset +
				    (uint64_t)t * sizeof(struct rt_thread_entry) +
				    offsetof(struct rt_thread_entry, lost_no_ring)))
			break;
		n = add_bounded(n, lost);
	}
	*images = add_bounded(h.images_replaced, 1);
	*events = n;
}

/* Does the `ringtrace record` with this pid run, started no later than we were? */
static int collector_running(int32_t pid, uint64_t our_start)
{
	char path[64];
	struct rt_proc_stat st;
	if (pid <= 0 || pid == getpid())
		return 0;
	rt_proc_stat_path(path, sizeof(path), pid, 0);
	/* a pid reused after the recorder ended started after us */
	return rt_proc_stat_read(path, &st) == 0 && st.start_time <= our_start && st.state != 'Z' &&
	       st.state != 'X';
}

/*
 * Is prev (at PATH.last) an earlier image's record, of this very process,
 * that the recorder named by collector has not attached, and may never
 * have seen?
 */
static int unattached_image(const struct found *prev, int32_t collector)
{
	if (!collector || prev->collector_pid || prev->pid != getpid() || !prev->start)
		return 0;
	uint64_t our_start = rt_process_start_time(getpid());
	return prev->start == our_start && collector_running(collector, our_start);
}

/*
 * Move last, which holds prev, to the first LAST.N that is free or holds
 * an arena a collector has attached (the collector maps the file: the name
 * is not what it reads).  0 when moved; 1 when something changed
 * meanwhile (look again); -1 when every N holds something to keep.
 */
static int keep_image(const char *last, const struct found *prev)
{
	static char kept[PATH_MAX];
	for (int n = 1; n <= RT_ARENA_KEPT_MAX; n++) {
		if ((size_t)snprintf(kept, sizeof(kept), "%s.%d", last, n) >= sizeof(kept))
			return -1;
		struct found slot;
		int kfd = open(kept, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (kfd < 0 && errno != ENOENT)
			continue; /* a symbolic link, or not ours to look at: never replaced */
		int replaceable = kfd < 0 || (inspect(kfd, &slot) && !slot.empty &&
					      !slot.running_pid && slot.collector_pid != 0);
		if (kfd >= 0)
			close(kfd);
		if (!replaceable || (kfd >= 0 && !still_there(kept, &slot)))
			continue;
		if (!still_there(last, prev))
			return 1;
		if ((kfd < 0 ? rename_to_free_name(last, kept) : rename(last, kept)) == 0)
			return 0;
		if (errno == ENOENT)
			return 1; /* last went meanwhile */
		if (errno != EEXIST)
			return -1;
		/* LAST.N made meanwhile: the next one */
	}
	return -1;
}

int rt_arena_set_aside(const char *path, int fd, int32_t collector, char *why, size_t why_size)
{
	static char last[PATH_MAX];
	struct found cur, prev;

	if (!inspect(fd, &cur))
		return refuse(why, why_size, path, "holds something that is not a ringtrace arena",
			      0, "not touched");
	if (cur.running_pid) {
		refuse(why, why_size, path, "is the arena of", cur.running_pid, "not touched");
		errno = EBUSY; /* held, not foreign: the caller may take the name with its pid */
		return -1;
	}
	if (!still_there(path, &cur))
		return 0; /* replaced meanwhile: look again */
	if (cur.empty) {
		if (unlink(path) != 0 && errno != ENOENT) {
			snprintf(why, why_size, "cannot replace the empty file %s: %s", path,
				 strerror(errno));
			return -1;
		}
		return 0;
	}

	if ((size_t)snprintf(last, sizeof(last), "%s" RT_ARENA_LAST_SUFFIX, path) >= sizeof(last))
		return refuse(why, why_size, path,
			      "is too long a path to keep the last arena beside it", 0,
			      "not touched");
	int lfd = open(last, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (lfd < 0 && errno == ELOOP)
		return refuse(why, why_size, last, "is a symbolic link", 0,
			      "the last arena cannot go there; neither file is touched");
	if (lfd < 0 && errno != ENOENT) {
		int err = errno;
		snprintf(why, why_size,
			 "%s exists and cannot be checked (%s): the last arena cannot go there; "
			 "neither file is touched",
			 last, strerror(err));
		errno = err;
		return -1;
	}
	int rc;
	if (lfd < 0) {
		rc = rename_to_free_name(path, last);
	} else {
		int is_arena = inspect(lfd, &prev) && !prev.empty;
		close(lfd);
		if (!is_arena)
			return refuse(why, why_size, last,
				      "holds something that is not a ringtrace arena", 0,
				      "the last arena cannot go there; neither file is touched");
		if (prev.running_pid)
			return refuse(why, why_size, last, "is the arena of", prev.running_pid,
				      "neither file is touched");
		if (!still_there(last, &prev) || !still_there(path, &cur))
			return 0; /* changed meanwhile: look again */
		int kept = unattached_image(&prev, collector) ? keep_image(last, &prev) : -2;
		if (kept == 1)
			return 0; /* changed meanwhile: look again */
		if (kept == 0) {
			rc = rename_to_free_name(path, last);
		} else {
			uint64_t images = 0, events = 0;
			if (kept == -1) {
				rt_warn(
				    "the arena at ", last,
				    " of an earlier image of this process is replaced before "
				    "ringtrace record read it: ",
				    "no free name to keep it under; its events are counted lost");
				lfd = open(last, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
				struct found again;
				if (lfd >= 0 && inspect(lfd, &again) && again.dev == prev.dev &&
				    again.ino == prev.ino)
					count_image(lfd, &images, &events);
				if (lfd >= 0)
					close(lfd);
			}
			rc = rename(path, last);
			if (rc == 0 && images) {
				replaced_images = images;
				replaced_events = events;
			}
		}
	}
	if (rc != 0 && errno != EEXIST && errno != ENOENT) {
		int err = errno;
		snprintf(why, why_size, "cannot keep the arena at %s as %s: %s", path, last,
			 strerror(err));
		errno = err;
		return -1;
	}
	return 0; /* moved, or something changed meanwhile: look again */
}
