/*
 * sync.c - writing the arena back to disk every RINGTRACE_SYNC milliseconds,
 * so that a machine crash, a power loss or a reboot loses at most the last
 * period of the trace.
 *
 * A process death needs none of this: the arena is a shared file mapping,
 * so every committed record is in the page cache and stays there.  Only the
 * disk survives the machine, and the kernel writes a dirty page back when it
 * pleases (vm.dirty_expire_centisecs, 30 s by default).
 *
 * Design:
 *  - One helper thread, started when the arena is created, wakes every
 *    period and calls msync(MS_SYNC) on the whole mapping.  On Linux that is
 *    fdatasync() limited to the mapped range: it writes the dirty pages,
 *    commits the metadata needed to read them back (the arena's size; on
 *    ext4, the conversion of the extents posix_fallocate() reserved, which
 *    would otherwise read back as zeros) and flushes the device's write
 *    cache.
 *    sync_file_range() does none of the last two, so it would not survive a
 *    power loss.  msync rather than fdatasync(fd): the program may close
 *    our descriptor and reuse its number; the mapping cannot be taken away.
 *  - Until it has once succeeded, a write-back also fsyncs the arena's
 *    directory: POSIX asks for that before a new file's name is durable.
 *  - Before each write-back the thread reads the raw counter; after the
 *    write-back succeeded it raises header->synced_counter to it.  So every
 *    record committed before that counter reading is on disk, and the
 *    on-disk copy of synced_counter (written back one period later) never
 *    claims more than is there.
 *  - Write-backs start every period, or right after the previous one when
 *    that took longer than the period; never two in a row to catch up.
 *  - The thread takes nothing the recording threads need: its only lock is
 *    its own, held around the wait, never across a system call.  It traces
 *    nothing, so it has no thread-table entry and no ring.  All signals are
 *    blocked in it from its first instruction (they are blocked around
 *    pthread_create), so the program's signals always go to the program's
 *    threads.  It is named "ringtrace-sync".
 *  - What the recording threads still pay is the kernel's doing: it
 *    write-protects each page it writes back, so the next store into it
 *    takes a page fault (once per page written to, per period).  Every
 *    shared mapping of a disk file pays that; RINGTRACE_SYNC only makes the
 *    write-backs more frequent.
 *  - A write-back that fails (EIO, for one) stops the thread for good with
 *    one line on stderr: after an error the kernel may have dropped the
 *    pages it could not write, and a later msync that succeeds would make
 *    synced_counter claim them.
 *  - A clean close (exit, ringtrace_shutdown) tells the thread to stop and
 *    writes the arena back one last time from the closing thread, without
 *    waiting for the helper: it is detached, and at exit it may be in the
 *    middle of a write-back that the closing thread need not wait for.
 *  - Threads do not survive fork(); the child forgets there was one.
 *  - An arena on tmpfs or ramfs has no disk to go to: no thread, one line
 *    on stderr.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"

#define SYNC_STACK_BYTES ((size_t)64 * 1024)

static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_wake; /* CLOCK_MONOTONIC; set up in rt_sync_start */
static int sync_stop;		 /* under sync_lock */
static int sync_started;	 /* atomic: a thread was started in this process */
static int sync_failed;		 /* atomic: a write-back failed; claim nothing more */
static uint32_t sync_period_ms;	 /* set before the thread starts */
static int directory_synced;	 /* atomic: the arena's name is on disk too */

/* synced_counter := max(synced_counter, counter): the closer and the thread may race. */
static void raise_synced_counter(uint64_t counter)
{
	uint64_t *synced = &rt_arena.header->synced_counter;
	uint64_t old = __atomic_load_n(synced, __ATOMIC_RELAXED);
	while (old < counter && !__atomic_compare_exchange_n(synced, &old, counter, 0,
							     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* POSIX asks for the directory to be synced too before a new file's name is durable. */
static void sync_directory(void)
{
	char dir[PATH_MAX];
	memcpy(dir, rt_arena.path, sizeof(dir));
	char *slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		memcpy(dir, ".", 2);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) == 0)
			__atomic_store_n(&directory_synced, 1, __ATOMIC_RELAXED);
		close(fd);
	}
}

/* Write the whole arena back; on success every record committed before is on disk. */
static int write_back(void)
{
	uint64_t start = ringtrace__counter();
	RT__COMPILER_BARRIER(); /* the counter is read before the write-back begins */
	if (msync(rt_arena.base, rt_arena.size, MS_SYNC) != 0)
		return errno;
	if (!__atomic_load_n(&directory_synced, __ATOMIC_RELAXED))
		sync_directory();
	raise_synced_counter(start);
	return 0;
}

static void add_ms(struct timespec *t, uint32_t ms)
{
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static int earlier(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void *sync_main(void *arg)
{
	uint32_t period_ms = sync_period_ms;
	/* its write-backs are the library's, not the program's I/O */
	ringtrace__tls_writer.internal = 1;
	pthread_setname_np(pthread_self(), "ringtrace-sync");
	struct timespec next, now;
	clock_gettime(CLOCK_MONOTONIC, &next);
	add_ms(&next, period_ms);
	pthread_mutex_lock(&sync_lock);
	for (;;) {
		/* 0: woken or a spurious wake-up; ETIMEDOUT (or any error): time to write */
		while (!sync_stop && pthread_cond_timedwait(&sync_wake, &sync_lock, &next) == 0)
			;
		if (sync_stop)
			break;
		pthread_mutex_unlock(&sync_lock);
		int err = write_back();
		/* the next one a period after this one began, or now if that has passed */
		add_ms(&next, period_ms);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (earlier(&next, &now))
			next = now;
		pthread_mutex_lock(&sync_lock);
		if (err) {
			__atomic_store_n(&sync_failed, 1, __ATOMIC_RELAXED);
			rt_warn("RINGTRACE_SYNC stopped: cannot write ", rt_arena.path,
				" back: ", strerror(err));
			break;
		}
	}
	pthread_mutex_unlock(&sync_lock);
	return NULL;
}

static int in_memory_only(int fd)
{
	struct statfs fs;
	return fstatfs(fd, &fs) == 0 && (fs.f_type == (__typeof__(fs.f_type))TMPFS_MAGIC ||
					 fs.f_type == (__typeof__(fs.f_type))RAMFS_MAGIC);
}

/*
 * Called by the thread that created the arena.  Like the rest of arena
 * creation, pthread_create is not async-signal-safe: an arena first created
 * by an event in a signal handler that interrupted malloc could hang here.
 */
void rt_sync_start(uint32_t period_ms)
{
	if (!period_ms)
		return;
	if (in_memory_only(rt_arena.fd)) {
		rt_warn("RINGTRACE_SYNC ignored: ", rt_arena.path,
			" is in memory (tmpfs), with no disk to write it back to", NULL);
		return;
	}
	pthread_condattr_t cattr;
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&sync_wake, &cattr);
	pthread_condattr_destroy(&cattr);

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, SYNC_STACK_BYTES); /* keeps the default if refused */
	/* the thread inherits the mask: no signal can reach it, even before it runs */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	sync_period_ms = period_ms;
	__atomic_store_n(&rt_arena.header->sync_ms, period_ms, __ATOMIC_RELAXED);
	pthread_t thread;
	int err = pthread_create(&thread, &attr, sync_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		__atomic_store_n(&rt_arena.header->sync_ms, 0, __ATOMIC_RELAXED);
		rt_warn("RINGTRACE_SYNC ignored: cannot start its thread: ", strerror(err), NULL,
			NULL);
		return;
	}
	__atomic_store_n(&sync_started, 1, __ATOMIC_RELEASE);
}

void rt_sync_stop(void)
{
	if (!__atomic_load_n(&sync_started, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&sync_lock);
	sync_stop = 1;
	pthread_cond_signal(&sync_wake);
	pthread_mutex_unlock(&sync_lock);
	if (__atomic_load_n(&sync_failed, __ATOMIC_RELAXED))
		return;
	/* the last write-back, then the header again so that its synced_counter is the last */
	int err = write_back();
	if (!err && msync(rt_arena.base, RT_ARENA_HEADER_SIZE, MS_SYNC) != 0)
		err = errno;
	if (err)
		rt_warn("RINGTRACE_SYNC: the last write-back of ", rt_arena.path,
			" failed: ", strerror(err));
}

void rt_sync_forget_after_fork(void)
{
	/* the thread stayed in the parent, maybe holding the lock */
	__atomic_store_n(&sync_started, 0, __ATOMIC_RELAXED);
	pthread_mutex_init(&sync_lock, NULL);
}
