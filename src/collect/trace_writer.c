/*
 * trace_writer.c - blocks into trace files: numbering, sealing, buffering,
 * rotation, and keeping the file valid when the disk fills up.
 *
 * Blocks are built in place in one large buffer (RT_WRITER_BUFFER bytes)
 * and leave it in one write(): the caller fills the block it was handed,
 * commit seals it where it lies, and the buffer goes out when the next block
 * would not fit or when the caller flushes.  The buffer only ever holds
 * whole, sealed blocks, so whatever reached the file before a failed write
 * ends on a block boundary once the file is cut back to the last whole
 * block that write left.
 *
 * With options.background (the collector), full buffers go to a thread of
 * the writer's own, which does the write()s while the caller fills the next
 * buffer: a write() that takes milliseconds (a busy disk, page-cache pages
 * the system is slow to hand out) then does not hold up the caller, who has
 * rings to drain.  RT_WRITER_BUFFERS buffers take turns: the caller fills
 * one, the thread writes the queued ones in order; the caller waits only
 * when all the others are queued.  rt_trace_writer_submit() queues a
 * partly filled buffer; rt_trace_writer_flush() waits until all is written.
 * A failed write stops the thread with the failing buffer still queued, and
 * the caller handles it at its next call exactly as without the thread.
 *
 * Rotation happens when a block is asked for, never inside a commit: the
 * caller has then updated its own state for everything committed so far,
 * and the rundown it writes for the new file says exactly where its data
 * resumes.  It waits until everything queued is written.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/trace_writer.h"
#include "common/out_file.h"
#include "format/packed_slots.h"
#include "format/trace_block.h"

#define RT_WRITER_BUFFER (1u << 20)
#define RT_WRITER_BUFFERS 8 /* with a background thread; else 1 */
#define RT_WRITER_NICE 5    /* the background thread's nice value */
#define RT_ROTATION_DIGITS 6
#define RT_END_BLOCK_BYTES (RT_BLOCK_HEADER_SIZE + sizeof(struct rt_block_end))
/* Metadata copies: at least this far apart, and this many times their own size. */
#define RT_COPY_MIN_BYTES (1u << 20)
#define RT_COPY_FACTOR 64

/* One per recording: fields grouped by what they serve, not packed for size. */
// NOLINTNEXTLINE(clang-analyzer-optin.performance.Padding)
struct rt_trace_writer {
	char *path;	   /* OUT as given */
	char *file_path;   /* the current file */
	uint64_t max_size; /* 0: no rotation */
	uint32_t max_files;
	rt_trace_rundown_fn rundown;
	rt_trace_ending_fn ending;
	void *ending_context;
	int in_ending;
	/* metadata copies inside a file (rt_trace_writer_set_copies) */
	rt_trace_rundown_fn copy;
	void *copy_context;
	uint64_t copy_every; /* 0: by the size of the copies */
	uint64_t copy_at;    /* file_bytes where the rundown or the last copy ended */
	uint64_t copy_size;  /* bytes of the last copy */
	int in_copy;
	void *context;

	int fd;
	int regular; /* the output is a regular file: it can be checked and cut back */
	int reserve; /* regular, and its file system reserves room (write_reserved) */
	uint64_t file_id;
	uint32_t file_seq;
	uint64_t recording_wall_ns;

	unsigned char *buffer; /* the buffer being filled: buffers[filling] */
	size_t buffered;       /* sealed blocks in it, waiting for write() */
	int handed_out;	       /* a block at buffer + buffered was handed out */
	uint64_t file_bytes;   /* bytes of the current file committed (written or queued) */

	/* the buffers, and with background, the thread (under lock) */
	unsigned char *buffers[RT_WRITER_BUFFERS];
	size_t sizes[RT_WRITER_BUFFERS]; /* bytes of each queued buffer */
	unsigned buffer_count, filling;
	unsigned queued; /* buffers before filling (round) waiting for the thread, oldest first */
	int background, stop;
	int keep_off_cpu, cpu; /* rt_trace_writer_options */
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	int write_rc;		/* the thread's failed write: -errno, the buffer stays queued */
	size_t write_done;	/* bytes of that buffer that reached the file */
	uint64_t on_disk;	/* bytes of the current file written */
	uint32_t block_seq;	/* blocks of the current file so far */
	uint64_t records;	/* records in SLOTS blocks of the current file */
	uint64_t all_records;	/* records committed, all files */
	uint64_t lost_records;	/* of those, the ones a failed write kept out of the file */
	uint32_t after_rundown; /* blocks committed since the rundown ended */
	int in_rundown;
	int pack; /* SLOTS blocks go to the file PACKED when that is smaller */
	unsigned char packed[RT_BLOCK_MAX_BYTES];
	int ended; /* rt_trace_writer_end() ran: end_rc is what it returned */
	int end_rc;

	uint64_t total_bytes; /* every file, written or queued */
	uint64_t files;
	int failed; /* -errno once the output failed */
	char error[512];
};

static uint64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t random_id(void)
{
	uint64_t id = 0;
	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id))
		id = wall_ns() ^ ((uint64_t)getpid() << 40);
	return id ? id : 1;
}

static void say(char *message, size_t size, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static void say(char *message, size_t size, const char *format, ...)
{
	if (!message || !size)
		return;
	va_list ap;
	va_start(ap, format);
	vsnprintf(message, size, format, ap);
	va_end(ap);
}

/* OUT.NNNNNN: the name of file seq of a rotating set. */
static char *rotation_name(const char *path, uint32_t seq)
{
	char *name = NULL;
	if (asprintf(&name, "%s.%0*u", path, RT_ROTATION_DIGITS, seq) < 0)
		return NULL;
	return name;
}

/* An existing output of the caller's may be replaced when it is empty or a trace file. */
static int replaceable_trace(int fd, const struct stat *st, char *why, size_t why_size)
{
	char magic[sizeof(RT_BLOCK_MAGIC)];
	if (st->st_size == 0 || (pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
				 rt_block_magic_at(magic)))
		return 1;
	snprintf(why, why_size, "is not a trace file (it does not start with %s)", RT_BLOCK_MAGIC);
	return 0;
}

/*
 * Open path for a new trace file (common/out_file.h): created new, or an
 * empty or trace file of the caller's replaced by a new one.  Anything
 * else that exists is refused: a file of another user, which they could
 * read; a symbolic link; a file that is not a trace file, which the user
 * named by mistake and is not ours to destroy.  A device (/dev/null) or
 * the caller's FIFO is written as it is.
 */
static int open_output(struct rt_trace_writer *w, const char *path, char *message, size_t size)
{
	int regular = 0;
	int fd = rt_out_file_open(path, replaceable_trace, &regular, message, size);
	if (fd < 0)
		return fd;
	w->regular = regular;
	w->reserve = regular;
	w->fd = fd;
	return 0;
}

/* Whether the file at path is the caller's, and empty or starts like a trace file. */
static int is_trace_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	struct stat st;
	char magic[sizeof(RT_BLOCK_MAGIC)];
	int yes =
	    fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (st.st_size == 0 || (pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
				 rt_block_magic_at(magic)));
	close(fd);
	return yes;
}

/*
 * Files OUT.NNNNNN left by an earlier recording into the same OUT would be
 * taken for part of this one (or this one for theirs): remove those that
 * are trace files of the caller's, except keep (the file just opened).
 */
static void remove_stale_rotations(const char *path, const char *keep)
{
	char *copy = strdup(path);
	if (!copy)
		return;
	char *slash = strrchr(copy, '/');
	const char *dir = ".", *base = copy;
	if (slash) {
		*slash = 0;
		dir = slash == copy ? "/" : copy;
		base = slash + 1;
	}
	size_t base_len = strlen(base);
	DIR *d = opendir(dir);
	if (!d) {
		free(copy);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		const char *name = e->d_name;
		if (strncmp(name, base, base_len) != 0 || name[base_len] != '.')
			continue;
		const char *digits = name + base_len + 1;
		size_t n = strspn(digits, "0123456789");
		if (n < RT_ROTATION_DIGITS || digits[n] != 0)
			continue;
		char *full = NULL;
		if (asprintf(&full, "%s/%s", dir, name) < 0)
			break;
		char *keep_copy = strdup(keep);
		char *keep_base = keep_copy ? strrchr(keep_copy, '/') : NULL;
		const char *kb = keep_base ? keep_base + 1 : keep;
		if (strcmp(kb, name) != 0 && is_trace_file(full))
			unlink(full);
		free(keep_copy);
		free(full);
	}
	closedir(d);
	free(copy);
}

/* The failure every later call reports. */
static int fail(struct rt_trace_writer *w, int err, const char *format, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct rt_trace_writer *w, int err, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	vsnprintf(w->error, sizeof(w->error), format, ap);
	va_end(ap);
	w->failed = -err;
	return -err;
}

/* Whole blocks among the first n bytes of the buffer. */
static size_t whole_blocks(const unsigned char *buffer, size_t n)
{
	size_t at = 0;
	while (at + RT_BLOCK_HEADER_SIZE <= n) {
		struct rt_block_header h;
		memcpy(&h, buffer + at, sizeof(h));
		if (at + h.size > n || h.size == 0)
			break;
		at += h.size;
	}
	return at;
}

static int write_all(int fd, const unsigned char *p, size_t n, size_t *done)
{
	*done = 0;
	while (*done < n) {
		ssize_t k = write(fd, p + *done, n - *done);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (k == 0)
			return -EIO;
		*done += (size_t)k;
	}
	return 0;
}

/* Set aside room for n bytes at offset at, and for END after them: 0 or -errno. */
static int reserve(int fd, uint64_t at, size_t n)
{
	while (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)at, (off_t)(n + RT_END_BLOCK_BYTES)) != 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int out_of_room(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EFBIG;
}

/*
 * Write the n bytes of whole blocks at p, which go to the file at offset at
 * (its end).  A regular file first gets room for them and for the END block
 * after them, so that on a disk about to fill END always fits after the last
 * whole block written.  Cutting the file back to that block frees nothing
 * when the block ends in a page (or huge page) the file keeps, and END would
 * then compete for space there is none of.  When the room for all n bytes is
 * refused, the longest run of whole blocks that gets room is written and the
 * write fails there.  A file system that cannot reserve just gets the write.
 */
static int write_reserved(struct rt_trace_writer *w, int fd, uint64_t at, const unsigned char *p,
			  size_t n, size_t *done)
{
	*done = 0;
	int rc = w->reserve ? reserve(fd, at, n) : 0;
	if (rc && !out_of_room(rc)) { /* EOPNOTSUPP and the like */
		w->reserve = 0;
		rc = 0;
	}
	if (!rc)
		return write_all(fd, p, n, done);
	/* search the block boundaries for the longest run that gets room */
	size_t fits = 0, over = n;
	for (;;) {
		size_t mid = whole_blocks(p, fits + (over - fits) / 2);
		if (mid <= fits)
			break;
		if (reserve(fd, at, mid) == 0)
			fits = mid;
		else
			over = mid;
	}
	/* a refused allocation may have given back what an earlier one got */
	if (reserve(fd, at, fits) == 0 && fits)
		write_all(fd, p, fits, done);
	return rc;
}

/* Blocks and records of the blocks in data[from, size): they never reach the file. */
static void discount(const unsigned char *data, size_t from, size_t size, uint32_t *blocks,
		     uint64_t *records)
{
	for (size_t at = from; at < size;) {
		struct rt_block_header h;
		memcpy(&h, data + at, sizeof(h));
		at += h.size;
		(*blocks)--;
		if (h.type == RT_BLOCK_SLOTS || h.type == RT_BLOCK_PACKED)
			*records -= h.count;
	}
}

/*
 * A write of the buffer data (size bytes: the oldest queued, or the one
 * being filled) failed after `written` bytes reached the file: cut the file
 * back to the last whole block, drop every buffer after it, append END
 * (STOPPED) if the disk takes it, and fail from now on.  The thread, if
 * any, is idle.
 */
static int write_failed(struct rt_trace_writer *w, int err, const unsigned char *data, size_t size,
			size_t written)
{
	size_t kept = whole_blocks(data, written);
	uint64_t good = w->on_disk + kept;
	uint32_t blocks = w->block_seq;
	uint64_t records = w->records;
	uint64_t dropped = size - kept;
	/* the blocks queued after those: they never reached the file */
	discount(data, kept, size, &blocks, &records);
	for (unsigned k = 1; k < w->queued; k++) {
		unsigned i = (w->filling + w->buffer_count - w->queued + k) % w->buffer_count;
		discount(w->buffers[i], 0, w->sizes[i], &blocks, &records);
		dropped += w->sizes[i];
	}
	if (data != w->buffer) {
		discount(w->buffer, 0, w->buffered, &blocks, &records);
		dropped += w->buffered;
	}
	w->queued = 0;
	w->lost_records += w->records - records;
	w->total_bytes -= dropped;
	w->buffered = 0;
	int cut = !w->regular || ftruncate(w->fd, (off_t)good) == 0;
	const char *ended = "";
	if (cut && w->regular) {
		unsigned char end_block[RT_END_BLOCK_BYTES];
		memset(end_block, 0, sizeof(end_block));
		struct rt_block_header h;
		memset(&h, 0, sizeof(h));
		h.type = RT_BLOCK_END;
		h.file_id = w->file_id;
		h.file_seq = w->file_seq;
		h.block_seq = blocks;
		struct rt_block_end end = {.reason = RT_FILE_END_STOPPED,
					   .blocks = blocks,
					   .records = records,
					   .bytes = good};
		memcpy(end_block, &h, sizeof(h));
		memcpy(end_block + RT_BLOCK_HEADER_SIZE, &end, sizeof(end));
		rt_block_seal(end_block, sizeof(end_block));
		ssize_t k = pwrite(w->fd, end_block, sizeof(end_block), (off_t)good);
		if (k == (ssize_t)sizeof(end_block)) {
			ended = ", closed with an end block";
			good += sizeof(end_block);
			w->total_bytes += sizeof(end_block);
		} else if (ftruncate(w->fd, (off_t)good) != 0) {
			cut = 0;
		}
	}
	w->on_disk = good;
	w->file_bytes = good;
	if (!cut)
		return fail(w, -err,
			    "%s: writing stopped at byte %llu: %s (and the file could not be cut "
			    "back to its last whole block)",
			    w->file_path, (unsigned long long)good, strerror(-err));
	return fail(w, -err,
		    "%s: writing stopped at byte %llu: %s; the file is valid up to there%s",
		    w->file_path, (unsigned long long)good, strerror(-err), ended);
}

/* ---- the background thread --------------------------------------------- */

/*
 * Leave CPU cpu to the thread that drains the rings.  The kernel may not
 * preempt a write() into the page cache (a kernel built without forced
 * preemption runs a system call until it returns or yields), and one that
 * has to find memory can take tens of milliseconds: on the drainer's CPU
 * that stops the draining while rings fill.  Measured on 2 vCPUs, a
 * producer at 10 M events/s with a 4 MiB ring: 0.1-6 % of the events lost
 * in half the runs with both threads free to share a CPU, none in 8 of 8
 * runs with them apart.  Nothing changes when no other CPU is allowed.
 */
static void keep_off(int cpu)
{
	cpu_set_t allowed;
	if (cpu < 0 || cpu >= CPU_SETSIZE || sched_getaffinity(0, sizeof(allowed), &allowed) != 0 ||
	    !CPU_ISSET(cpu, &allowed) || CPU_COUNT(&allowed) < 2)
		return;
	CPU_CLR(cpu, &allowed);
	sched_setaffinity(0, sizeof(allowed), &allowed);
}

static void *write_thread(void *arg)
{
	struct rt_trace_writer *w = arg;
	/*
	 * On Linux nice is per thread: the caller, who drains rings that fill in
	 * milliseconds, comes first when both want the same CPU.
	 */
	setpriority(PRIO_PROCESS, (id_t)gettid(), RT_WRITER_NICE);
	if (w->keep_off_cpu)
		keep_off(w->cpu);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->stop && (!w->queued || w->write_rc))
			pthread_cond_wait(&w->work, &w->lock);
		if (w->stop)
			break;
		unsigned i = (w->filling + w->buffer_count - w->queued) % w->buffer_count;
		const unsigned char *data = w->buffers[i];
		size_t size = w->sizes[i];
		int fd = w->fd;
		uint64_t at = w->on_disk;
		pthread_mutex_unlock(&w->lock);
		size_t done;
		int rc = write_reserved(w, fd, at, data, size, &done);
		pthread_mutex_lock(&w->lock);
		if (rc) {
			/* the buffer stays queued: the caller cuts the file back */
			w->write_rc = rc;
			w->write_done = done;
		} else {
			w->on_disk += size;
			w->queued--;
		}
		pthread_cond_broadcast(&w->done);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Background: wait (under lock) until at most `most` buffers are queued or a write failed. */
static int wait_queued(struct rt_trace_writer *w, unsigned most)
{
	while (w->queued > most && !w->write_rc)
		pthread_cond_wait(&w->done, &w->lock);
	if (!w->write_rc)
		return 0;
	unsigned i = (w->filling + w->buffer_count - w->queued) % w->buffer_count;
	int rc = w->write_rc;
	w->write_rc = 0;
	return write_failed(w, rc, w->buffers[i], w->sizes[i], w->write_done);
}

/*
 * Background: queue the buffer being filled and take the next; wait for one
 * if none is free.  With only_idle, only if the thread has nothing to do:
 * else the buffer goes on filling, rather than use up the buffers in small
 * pieces while the thread is slow.
 */
static int submit(struct rt_trace_writer *w, int only_idle)
{
	pthread_mutex_lock(&w->lock);
	if (only_idle && (w->queued || w->write_rc)) {
		pthread_mutex_unlock(&w->lock);
		return 0;
	}
	int rc = wait_queued(w, w->buffer_count - 2);
	if (!rc && w->buffered) {
		w->sizes[w->filling] = w->buffered;
		w->queued++;
		w->filling = (w->filling + 1) % w->buffer_count;
		w->buffer = w->buffers[w->filling];
		w->buffered = 0;
		pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

int rt_trace_writer_submit(struct rt_trace_writer *w)
{
	if (w->failed)
		return w->failed;
	return w->background ? submit(w, 1) : rt_trace_writer_flush(w);
}

/* A full buffer: queued for the thread (waiting for a free one), or written now. */
static int buffer_full(struct rt_trace_writer *w)
{
	if (w->failed)
		return w->failed;
	return w->background ? submit(w, 0) : rt_trace_writer_flush(w);
}

int rt_trace_writer_flush(struct rt_trace_writer *w)
{
	if (w->failed)
		return w->failed;
	if (w->background) {
		int rc = submit(w, 0);
		if (rc)
			return rc;
		pthread_mutex_lock(&w->lock);
		rc = wait_queued(w, 0);
		pthread_mutex_unlock(&w->lock);
		return rc;
	}
	if (!w->buffered)
		return 0;
	size_t done;
	int rc = write_reserved(w, w->fd, w->on_disk, w->buffer, w->buffered, &done);
	if (rc)
		return write_failed(w, rc, w->buffer, w->buffered, done);
	w->on_disk += w->buffered;
	w->buffered = 0;
	return 0;
}

/* The next block, without rotating: zeroed room at the end of the buffer. */
static void *next_block(struct rt_trace_writer *w)
{
	if (w->failed)
		return NULL;
	if (RT_WRITER_BUFFER - w->buffered < RT_BLOCK_MAX_BYTES && buffer_full(w))
		return NULL;
	void *b = w->buffer + w->buffered;
	memset(b, 0, RT_BLOCK_MAX_BYTES);
	w->handed_out = 1;
	return b;
}

/* The SLOTS block h (size bytes) made PACKED in place when that saves bytes: its new size. */
static uint32_t pack(struct rt_trace_writer *w, struct rt_block_header *h, uint32_t size)
{
	const uint32_t slots = (size - RT_BLOCK_HEADER_SIZE) / RT_SLOT_SIZE;
	if (!slots)
		return size;
	const unsigned char *payload = (const unsigned char *)h + RT_BLOCK_HEADER_SIZE;
	size_t n = rt_packed_encode(h, (const union rt_slot *)payload, slots, w->packed,
				    size - RT_BLOCK_HEADER_SIZE - RT_BLOCK_ALIGN);
	if (!n)
		return size;
	memcpy((unsigned char *)h + RT_BLOCK_HEADER_SIZE, w->packed, n);
	h->type = RT_BLOCK_PACKED;
	return RT_BLOCK_HEADER_SIZE + (uint32_t)n;
}

static int commit(struct rt_trace_writer *w, uint32_t size)
{
	if (w->failed)
		return w->failed;
	if (!w->handed_out || size < RT_BLOCK_HEADER_SIZE || size > RT_BLOCK_MAX_BYTES ||
	    size % RT_BLOCK_ALIGN)
		return -EINVAL;
	struct rt_block_header *h = (struct rt_block_header *)(w->buffer + w->buffered);
	h->file_id = w->file_id;
	h->file_seq = w->file_seq;
	h->block_seq = w->block_seq++;
	if (h->type == RT_BLOCK_SLOTS) {
		w->records += h->count;
		w->all_records += h->count;
		if (w->pack)
			size = pack(w, h, size);
	}
	rt_block_seal(h, size);
	w->handed_out = 0;
	w->buffered += size;
	w->file_bytes += size;
	w->total_bytes += size;
	if (!w->in_rundown)
		w->after_rundown++;
	return 0;
}

static int write_file_block(struct rt_trace_writer *w)
{
	struct rt_block_header *h = next_block(w);
	if (!h)
		return w->failed;
	struct rt_block_file f;
	memset(&f, 0, sizeof(f));
	f.created_wall_ns = wall_ns();
	f.recording_wall_ns = w->recording_wall_ns;
	f.max_size = w->max_size;
	f.max_files = w->max_files;
	f.collector_pid = getpid();
	gethostname(f.host, sizeof(f.host) - 1);
	h->type = RT_BLOCK_FILE;
	memcpy(h + 1, &f, sizeof(f));
	return commit(w, RT_BLOCK_HEADER_SIZE + sizeof(f));
}

static int write_end_block(struct rt_trace_writer *w, uint32_t reason)
{
	struct rt_block_header *h = next_block(w);
	if (!h)
		return w->failed;
	struct rt_block_end end;
	memset(&end, 0, sizeof(end));
	end.reason = reason;
	end.blocks = w->block_seq;
	end.records = w->records;
	end.bytes = w->file_bytes;
	h->type = RT_BLOCK_END;
	memcpy(h + 1, &end, sizeof(end));
	return commit(w, RT_BLOCK_HEADER_SIZE + sizeof(end));
}

/* FILE, then the caller's rundown: the head of every file. */
static int start_file(struct rt_trace_writer *w)
{
	w->on_disk = 0;
	w->file_bytes = 0;
	w->block_seq = 0;
	w->records = 0;
	w->files++;
	int rc = write_file_block(w);
	if (rc)
		return rc;
	w->in_rundown = 1;
	rc = w->rundown ? w->rundown(w->context, w) : 0;
	w->in_rundown = 0;
	w->after_rundown = 0;
	w->copy_at = w->file_bytes;
	if (rc && !w->failed)
		return fail(w, -rc, "%s: writing the rundown failed: %s", w->file_path,
			    strerror(-rc));
	return rc;
}

/* The caller's ending, then END: the tail of every file closed properly. */
static int end_file(struct rt_trace_writer *w, uint32_t reason)
{
	if (w->ending) {
		w->in_ending = 1;
		int rc = w->ending(w->ending_context, w);
		w->in_ending = 0;
		if (rc && !w->failed)
			return fail(w, -rc, "%s: writing the end of the file failed: %s",
				    w->file_path, strerror(-rc));
		if (rc)
			return rc;
	}
	return write_end_block(w, reason);
}

/* Close the current file with END (ROTATED), open the next one, drop the oldest. */
static int rotate(struct rt_trace_writer *w)
{
	int rc = end_file(w, RT_FILE_END_ROTATED);
	if (!rc)
		rc = rt_trace_writer_flush(w);
	if (rc)
		return rc;
	if (close(w->fd) != 0)
		return fail(w, errno, "%s: closing the file failed: %s", w->file_path,
			    strerror(errno));
	w->fd = -1;
	uint32_t seq = w->file_seq + 1;
	char *name = rotation_name(w->path, seq);
	if (!name)
		return fail(w, ENOMEM, "%s: out of memory", w->path);
	char message[sizeof(w->error)];
	rc = open_output(w, name, message, sizeof(message));
	if (rc) {
		free(name);
		snprintf(w->error, sizeof(w->error), "%s", message);
		w->failed = rc;
		return rc;
	}
	free(w->file_path);
	w->file_path = name;
	w->file_seq = seq;
	if (w->max_files && seq >= w->max_files) {
		char *oldest = rotation_name(w->path, seq - w->max_files);
		if (oldest)
			unlink(oldest);
		free(oldest);
	}
	return start_file(w);
}

/*
 * Whether the current file is full: one more block and the END block might
 * not fit under max_size.  A file holding only its rundown never is (a
 * limit smaller than the rundown would rotate forever).
 */
static int file_full(const struct rt_trace_writer *w)
{
	if (!w->max_size || w->in_rundown || w->in_ending || w->after_rundown == 0)
		return 0;
	uint64_t tail = RT_END_BLOCK_BYTES + (w->ending ? RT_BLOCK_MAX_BYTES : 0);
	return w->file_bytes + RT_BLOCK_MAX_BYTES + tail > w->max_size;
}

/*
 * Whether the file is due a copy of the metadata: RT_COPY_MIN_BYTES since
 * the last one, or RT_COPY_FACTOR times its size when that is more, so that
 * copies cost at most 1/RT_COPY_FACTOR of the file.
 */
static int copy_due(const struct rt_trace_writer *w)
{
	if (!w->copy || w->in_copy || w->in_rundown || w->in_ending)
		return 0;
	uint64_t every = w->copy_every;
	if (!every) {
		every = RT_COPY_FACTOR * w->copy_size;
		if (every < RT_COPY_MIN_BYTES)
			every = RT_COPY_MIN_BYTES;
	}
	return w->file_bytes - w->copy_at >= every;
}

/* The caller's copy of its metadata, between two blocks (as a rotation is). */
static int write_copy(struct rt_trace_writer *w)
{
	uint64_t before = w->total_bytes;
	w->in_copy = 1;
	int rc = w->copy(w->copy_context, w);
	w->in_copy = 0;
	if (rc && !w->failed)
		return fail(w, -rc, "%s: writing a copy of the metadata failed: %s", w->file_path,
			    strerror(-rc));
	if (rc)
		return rc;
	w->copy_size = w->total_bytes - before;
	w->copy_at = w->file_bytes;
	return 0;
}

void *rt_trace_writer_block(struct rt_trace_writer *w)
{
	if (w->failed)
		return NULL;
	if (file_full(w) && rotate(w))
		return NULL;
	if (copy_due(w) && write_copy(w))
		return NULL;
	return next_block(w);
}

int rt_trace_writer_commit(struct rt_trace_writer *w, uint32_t size)
{
	return commit(w, size);
}

static void writer_free(struct rt_trace_writer *w)
{
	if (w->background) {
		pthread_mutex_lock(&w->lock);
		w->stop = 1;
		pthread_cond_signal(&w->work);
		pthread_mutex_unlock(&w->lock);
		pthread_join(w->thread, NULL);
		pthread_cond_destroy(&w->work);
		pthread_cond_destroy(&w->done);
		pthread_mutex_destroy(&w->lock);
	}
	if (w->fd >= 0)
		close(w->fd);
	for (unsigned i = 0; i < w->buffer_count; i++)
		free(w->buffers[i]);
	free(w->file_path);
	free(w->path);
	free(w);
}

int rt_trace_writer_open(struct rt_trace_writer **out, const struct rt_trace_writer_options *o,
			 rt_trace_rundown_fn rundown, void *context, char *message,
			 size_t message_size)
{
	*out = NULL;
	say(message, message_size, "%s", "");
	if (!o->path || !*o->path) {
		say(message, message_size, "no output file named");
		return -EINVAL;
	}
	struct rt_trace_writer *w = calloc(1, sizeof(*w));
	if (!w) {
		say(message, message_size, "out of memory");
		return -ENOMEM;
	}
	w->fd = -1;
	w->path = strdup(o->path);
	w->max_size = o->max_size;
	w->max_files = o->max_size ? o->max_files : 0;
	w->rundown = rundown;
	w->context = context;
	w->file_id = o->file_id ? o->file_id : random_id();
	w->recording_wall_ns = wall_ns();
	/* RINGTRACE_PACK=0: slots as the rings hold them, for comparing and debugging */
	const char *pack = getenv("RINGTRACE_PACK");
	w->pack = !pack || strcmp(pack, "0") != 0;
	w->file_path = w->max_size ? rotation_name(o->path, 0) : strdup(o->path);
	w->buffer_count = o->background ? RT_WRITER_BUFFERS : 1;
	int have_buffers = 1;
	for (unsigned i = 0; i < w->buffer_count; i++)
		if (posix_memalign((void **)&w->buffers[i], 4096, RT_WRITER_BUFFER) != 0) {
			w->buffers[i] = NULL;
			have_buffers = 0;
		}
	w->buffer = w->buffers[0];
	if (!w->path || !w->file_path || !have_buffers) {
		writer_free(w);
		say(message, message_size, "out of memory");
		return -ENOMEM;
	}
	int rc = open_output(w, w->file_path, message, message_size);
	if (rc) {
		writer_free(w);
		return rc;
	}
	remove_stale_rotations(o->path, w->file_path);
	w->keep_off_cpu = o->keep_off_cpu;
	w->cpu = o->cpu;
	if (o->background) {
		pthread_mutex_init(&w->lock, NULL);
		pthread_cond_init(&w->work, NULL);
		pthread_cond_init(&w->done, NULL);
		rc = pthread_create(&w->thread, NULL, write_thread, w);
		if (rc) {
			pthread_cond_destroy(&w->work);
			pthread_cond_destroy(&w->done);
			pthread_mutex_destroy(&w->lock);
			say(message, message_size, "cannot start the writing thread: %s",
			    strerror(rc));
			writer_free(w);
			return -rc;
		}
		w->background = 1;
	}
	rc = start_file(w);
	if (!rc)
		rc = rt_trace_writer_flush(w);
	if (rc) {
		say(message, message_size, "%s", w->error);
		writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void rt_trace_writer_set_ending(struct rt_trace_writer *w, rt_trace_ending_fn ending, void *context)
{
	w->ending = ending;
	w->ending_context = context;
}

void rt_trace_writer_set_copies(struct rt_trace_writer *w, rt_trace_rundown_fn copy, void *context,
				uint64_t every)
{
	w->copy = copy;
	w->copy_context = context;
	w->copy_every = every;
}

int rt_trace_writer_end(struct rt_trace_writer *w, uint32_t reason)
{
	if (w->ended)
		return w->end_rc;
	int rc = w->failed;
	if (!rc)
		rc = end_file(w, reason);
	if (!rc)
		rc = rt_trace_writer_flush(w);
	if (w->fd >= 0 && close(w->fd) != 0 && !rc)
		rc = fail(w, errno, "%s: closing the file failed: %s", w->file_path,
			  strerror(errno));
	w->fd = -1;
	w->ended = 1;
	w->end_rc = rc;
	if (!w->failed) {
		/* nothing may follow END */
		w->failed = -EBADF;
		snprintf(w->error, sizeof(w->error), "%s: already closed", w->file_path);
	}
	return rc;
}

int rt_trace_writer_close(struct rt_trace_writer *w, uint32_t reason)
{
	if (!w)
		return 0;
	int rc = rt_trace_writer_end(w, reason);
	writer_free(w);
	return rc;
}

const char *rt_trace_writer_error(const struct rt_trace_writer *w)
{
	return w->error;
}

uint64_t rt_trace_writer_records(const struct rt_trace_writer *w)
{
	return w->all_records - w->lost_records;
}

uint64_t rt_trace_writer_bytes(const struct rt_trace_writer *w)
{
	return w->total_bytes;
}

uint64_t rt_trace_writer_files(const struct rt_trace_writer *w)
{
	return w->files;
}

const char *rt_trace_writer_path(const struct rt_trace_writer *w)
{
	return w->file_path;
}
