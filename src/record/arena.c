/*
 * arena.c - creating, publishing and closing the arena file.
 *
 * The arena is a file mapped shared, so that everything stored into it is in
 * the page cache the moment it is stored and outlives the process however it
 * dies.  It is created on the first event (or by ringtrace_init), exactly
 * once: the thread that wins the start (RT_OFF_NOT_STARTED -> RT_STARTING)
 * does the work, publishes RT_ON or RT_OFF and wakes the threads that
 * traced meanwhile: they wait for it on a futex of the state, so that
 * threads starting together lose nothing.  The wait is bounded
 * (RT_START_WAIT_NS); an event of the creating thread itself during
 * creation cannot wait, and an event past the bound does not: both are
 * counted as lost while starting, and the arena reports them.
 *
 * Nothing stops the creator half-way: from before it wins until its
 * rundowns are done it has cancellation disabled and every asynchronous
 * signal blocked (pthread_setcancelstate, pthread_sigmask; both may be
 * called in a signal handler, where a first event can come from), so a
 * pending cancellation or a signal handler that longjmps acts only after
 * the state is final.  Creation ends with tracing on, or off with one line
 * on stderr saying why.
 *
 * A first event may come before this library's constructors (from a
 * .preinit_array entry of the program, or a constructor of a library
 * initialised earlier): the configuration is read through rt_getenv
 * (config.c), which finds the variables even before the C library has set
 * up environ, and the fork handler is registered by the start itself.
 *
 * A path is never clobbered: an arena of a previous run found there is kept
 * as PATH.last (arena_last.c), an empty file is replaced, anything else is
 * left alone; files are created with O_EXCL | O_NOFOLLOW, mode 0600.  A
 * user path held by a running process (the program is the exec'd child of
 * a traced one) is taken with the pid: P.PID.arena, or P.PID (config.c).
 *
 * fork(): a child of a tracing process traces on, into an arena of its own
 * with its own pid, made on its first event.  The fork handler runs in the
 * child, where only async-signal-safe calls are allowed: it forgets the
 * parent's threads and arena and keeps only the parent's mapping.  The
 * child's sites cache their ids (statics of the program, copied by
 * fork), so its new arena starts with a copy of the parent's site table
 * and strings at the same indices; then the parent's mapping goes.  The
 * child's path: the default name with its pid, or the user path with its
 * pid (config.c), so the parent's arena is never touched.
 *
 * Children made without the fork handler: _Fork(), clone() or a clone
 * system call without CLONE_VM (fork in all but name), and vfork().  A child
 * of the first two has a copy of its parent's memory, the forking thread's
 * writer included, and nothing tells it that it is another process: on its
 * fast path, which pays for no check, it would go on writing the parent's
 * ring at the parent's next sequence numbers, through the shared mapping.
 * So the library stands in front of the C library's _Fork, clone and
 * syscall (clone.c), and in such a child does what the fork handler does
 * (rt_arena_start_over_in_child) before the program runs on: the child
 * traces on into an arena of its own.  Not caught: a child made by a
 * `syscall` instruction of the program's own, a clone or clone3 system
 * call through syscall() that gives the child a stack of its own (it starts
 * there, with nothing of a wrapper's to return to), and every such call of
 * a program that loaded the library with dlopen (its calls go to the C
 * library): such a child writes into its parent's ring.
 *
 * A vfork() child shares its parent's memory, writer included, and the
 * parent's thread waits until the child execs or exits: no page differs.
 * vfork.c stands in front of the C library's vfork and gives the child a
 * writer of its own for the time of the call, in the calling thread's
 * place: the child records into its parent's arena as one more thread of
 * it, whose tid is the child's pid, never into the parent's ring.  The
 * wrapper exists for x86-64 and AArch64 only: elsewhere, and for a vfork
 * system call through syscall(), the child's events go into its parent's
 * ring as its parent's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/arena_names.h"
#include "record/record.h"

struct rt_arena rt_arena = {.fd = -1};

static dev_t arena_dev;
static ino_t arena_ino;

/*
 * In a forked child: the arena of the process it was forked from, mapped
 * until the child's own arena has copied its sites (never written).
 */
static struct {
	uint8_t *base;
	uint64_t size;
} inherited;
/* This process was forked by a tracing one: its user path takes its pid. */
static int forked_from_tracer;
/*
 * The configuration the arena was made with; static, so a forked child
 * inherits it (options of ringtrace_init included).  Not a signal stack's
 * worth: PATH_MAX twice.
 */
static struct rt_config arena_config;
static int config_loaded; /* config holds a whole configuration */

/*
 * How long a thread waits for another that is creating the arena before it
 * counts its event as lost: three orders of magnitude above what creation
 * takes.  That is about a millisecond on a busy machine (0.8 ms with the
 * default and with 16 MiB rings, 1.6 ms with 4096 rings of 64 MiB, on a
 * 2-vCPU VM at load 5), and what it does is bounded: one file made and
 * sized, a mapping, a few reads of /proc.  A wait this long means that the
 * file system itself stalls (a network file system gone away), and then
 * the program's threads must go on; every event of theirs is counted.  The
 * bound also ends a wait that could not end otherwise: a signal handler's
 * first event waiting while its thread holds a lock the creator needs
 * (malloc's, which pthread_create takes for RINGTRACE_SYNC's thread).
 */
#define RT_START_WAIT_NS (2000u * 1000000ull)

/* The start, while the state is RT_STARTING (see rt_arena_ensure_started). */
static struct {
	pthread_t creator; /* the thread creating the arena, once creator_known */
	int creator_known;
	uint64_t began_ns; /* CLOCK_MONOTONIC when creation began, 0 before */
	int fork_handler;  /* registered */
} start;

/* The configuration: the parent's in a forked child (with its own path), else loaded. */
static int load_config(const struct ringtrace_options *options, char *why, size_t why_size)
{
	if (!(forked_from_tracer && config_loaded && !options)) {
		config_loaded = 0;
		int err = rt_config_load(&arena_config, options, why, why_size);
		if (err != 0)
			return err;
		config_loaded = 1;
		if (!forked_from_tracer || !arena_config.user_path)
			return 0;
	} else if (!arena_config.user_path) {
		rt_config_default_path(arena_config.path, sizeof(arena_config.path));
		return 0;
	}
	if (rt_config_path_with_pid(arena_config.path, sizeof(arena_config.path),
				    arena_config.chosen_path, getpid()) != 0) {
		snprintf(why, why_size, "%s is too long a path to add a pid to",
			 arena_config.chosen_path);
		return -ENAMETOOLONG;
	}
	return 0;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* Where each table goes; all offsets are multiples of 64, rings of 4096. */
static void plan_layout(struct rt_arena_header *h, const struct rt_config *config)
{
	h->ring_count = config->rings;
	h->thread_capacity =
	    config->rings * 4 > RT_MIN_THREAD_CAPACITY ? config->rings * 4 : RT_MIN_THREAD_CAPACITY;
	h->site_capacity = RT_SITE_CAPACITY;
	h->string_capacity = RT_STRING_CAPACITY;
	uint64_t off = RT_ARENA_HEADER_SIZE;
	h->thread_table_offset = off;
	off = align_up(off + (uint64_t)h->thread_capacity * sizeof(struct rt_thread_entry), 64);
	h->site_table_offset = off;
	off = align_up(off + (uint64_t)h->site_capacity * sizeof(struct rt_site_entry), 64);
	h->string_area_offset = off;
	off = align_up(off + h->string_capacity, 64);
	if (config->modules) {
		h->module_capacity = config->modules;
		h->module_table_offset = off;
		off = align_up(off + (uint64_t)h->module_capacity * sizeof(struct rt_module_entry),
			       64);
	}
	if (config->fds) {
		h->fd_capacity = config->fds;
		h->fd_table_offset = off;
		off = align_up(off + (uint64_t)h->fd_capacity * sizeof(struct rt_fd_entry), 64);
	}
	h->ring_desc_offset = off;
	off = align_up(off + (uint64_t)h->ring_count * sizeof(struct rt_ring_desc), 4096);
	h->ring_area_offset = off;
	h->ring_bytes_requested = config->ring_bytes_requested;
	h->ring_bytes = config->ring_bytes;
	h->arena_size = off + (uint64_t)h->ring_count * h->ring_bytes;
}

static int create_file(const char *path, int32_t collector, char *why, size_t why_size)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST) {
			snprintf(why, why_size, "cannot create arena %s: %s", path,
				 strerror(errno));
			return -1;
		}
		int old = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (old < 0 && errno == ENOENT)
			continue; /* gone meanwhile */
		if (old < 0) {
			snprintf(why, why_size, "%s exists and cannot be checked (%s): not touched",
				 path, strerror(errno));
			return -1;
		}
		int set_aside = rt_arena_set_aside(path, old, collector, why, why_size);
		int err = errno;
		close(old);
		if (set_aside != 0) {
			errno = err;
			return -1;
		}
	}
	snprintf(why, why_size, "%s keeps being recreated by someone else: not touched", path);
	return -1;
}

/*
 * Create the arena file at config->path; a user path held by a running
 * process is taken with our pid instead (config->path is then updated).
 */
static int create_arena_file(struct rt_config *config, char *why, size_t why_size)
{
	if (!config->user_path) {
		/* the default directory: the user's own, made if missing (arena_names.h) */
		char dir[PATH_MAX];
		int err = rt_arena_dir_from(rt_getenv(RT_ARENA_DIR_ENV), dir, sizeof(dir));
		if (err) {
			snprintf(why, why_size, "the arena directory's path is too long");
			errno = -err;
			return -1;
		}
		err = rt_arena_dir_check(dir, 1, why, why_size);
		if (err) {
			errno = -err;
			return -1;
		}
	}
	int fd = create_file(config->path, config->collector, why, why_size);
	if (fd >= 0 || errno != EBUSY || !config->user_path || forked_from_tracer)
		return fd;
	if (rt_config_path_with_pid(config->path, sizeof(config->path), config->chosen_path,
				    getpid()) != 0) {
		errno = EBUSY;
		return -1;
	}
	return create_file(config->path, config->collector, why, why_size);
}

/*
 * A forked child's arena starts with the parent's sites at the same
 * indices: the ids its site structs cached stay valid.
 */
static void copy_inherited_sites(struct rt_arena_header *h)
{
	const struct rt_arena_header *p = (const struct rt_arena_header *)inherited.base;
	if (!p || p->site_capacity > h->site_capacity || p->string_capacity > h->string_capacity)
		return;
	uint32_t sites = __atomic_load_n(&p->sites_used, __ATOMIC_ACQUIRE);
	uint64_t strings = __atomic_load_n(&p->strings_used, __ATOMIC_ACQUIRE);
	if (sites > p->site_capacity)
		sites = p->site_capacity;
	if (strings > p->string_capacity)
		strings = p->string_capacity;
	uint8_t *base = (uint8_t *)h;
	memcpy(base + h->site_table_offset, inherited.base + p->site_table_offset,
	       (size_t)sites * sizeof(struct rt_site_entry));
	memcpy(base + h->string_area_offset, inherited.base + p->string_area_offset, strings);
	if (sites > h->sites_used)
		h->sites_used = sites;
	h->strings_used = strings;
}

static void drop_inherited(void)
{
	if (inherited.base)
		munmap(inherited.base, inherited.size);
	inherited.base = NULL;
	inherited.size = 0;
}

/*
 * The arena's descriptor, moved from the lowest free number (3, usually)
 * to one near the top of the first 1024: programs count on the numbers
 * they open (a shell's `exec 3>file`, close_range(3, ...) then open), and
 * the program's own files must not shift because it is traced.  Not above
 * 1024, so that the kernel's descriptor table does not grow for it; kept
 * where it is when the limit is small.
 */
static int move_out_of_the_way(int fd)
{
	struct rlimit limit;
	if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur < 128)
		return fd;
	rlim_t top = limit.rlim_cur < 1024 ? limit.rlim_cur : 1024;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - 32));
	if (high < 0)
		return fd;
	close(fd);
	return high;
}

static void fill_header(struct rt_arena_header *h, const struct rt_config *config)
{
	memcpy(h->magic, RT_ARENA_MAGIC, sizeof(h->magic));
	h->header_size = RT_ARENA_HEADER_SIZE;
	h->version = RT_FORMAT_VERSION;
	h->compat_version = RT_FORMAT_VERSION;
	h->byte_order = RT_BYTE_ORDER_MARK;
	h->slot_size = RT_SLOT_SIZE;
	h->mode = (uint32_t)config->mode;
	h->full_wait_us = config->mode == RT_MODE_STREAM ? config->full_wait_us : 0;
	h->flags = config->user_path ? RT_ARENA_F_USER_PATH : 0;
	h->pid = getpid();
	h->process_start = rt_process_start_time(h->pid);
	rt_process_program(h->program, sizeof(h->program));
	h->build_id_size = (uint32_t)rt_process_build_id(h->build_id, sizeof(h->build_id));
	h->clock_source = rt_clock_source();
	h->counter_hz = rt_clock_estimate_hz();
	rt_clock_read(&h->start);
	h->sync.pair = h->start;
	h->sites_used = 1; /* site id 0 means "not registered" */
	rt_arena_replaced(&h->images_replaced, &h->lost_replaced);
}

static int arena_create(const struct ringtrace_options *options)
{
	char why[PATH_MAX + 128];
	int loaded = load_config(options, why, sizeof(why));
	if (loaded != 0) {
		rt_warn("tracing off: ", why, NULL, NULL);
		return loaded;
	}
	struct rt_arena_header plan;
	memset(&plan, 0, sizeof(plan));
	plan_layout(&plan, &arena_config);

	int fd = create_arena_file(&arena_config, why, sizeof(why));
	if (fd < 0) {
		int err = errno ? errno : EEXIST;
		rt_warn("tracing off: ", why, NULL, NULL);
		return -err;
	}
	fd = move_out_of_the_way(fd);
	int err = 0;
	const char *step = NULL;
	void *base = MAP_FAILED;
	if (ftruncate(fd, (off_t)plan.arena_size) != 0) {
		err = errno;
		step = "cannot size arena ";
	} else if ((err = posix_fallocate(fd, 0, (off_t)plan.ring_area_offset)) != 0) {
		step = "no space for arena ";
	} else if ((base = mmap(NULL, plan.arena_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				0)) == MAP_FAILED) {
		err = errno;
		step = "cannot map arena ";
	}
	if (step) {
		unlink(arena_config.path);
		close(fd);
		snprintf(why, sizeof(why), "%s%s: %s", step, arena_config.path, strerror(err));
		rt_warn("tracing off: ", why, NULL, NULL);
		return -err;
	}
	struct stat st;
	if (fstat(fd, &st) == 0) {
		arena_dev = st.st_dev;
		arena_ino = st.st_ino;
	}

	struct rt_arena_header *h = base;
	memcpy(h, &plan, sizeof(plan));
	fill_header(h, &arena_config);
	copy_inherited_sites(h);

	rt_arena.fd = fd;
	rt_arena.owner = h->pid;
	memcpy(rt_arena.path, arena_config.path, sizeof(rt_arena.path));
	rt_arena.user_path = arena_config.user_path;
	rt_arena.base = base;
	rt_arena.size = plan.arena_size;
	rt_arena.header = h;
	rt_arena.threads = (struct rt_thread_entry *)((uint8_t *)base + h->thread_table_offset);
	rt_arena.sites = (struct rt_site_entry *)((uint8_t *)base + h->site_table_offset);
	rt_arena.strings = (char *)base + h->string_area_offset;
	rt_arena.modules =
	    h->module_capacity
		? (struct rt_module_entry *)((uint8_t *)base + h->module_table_offset)
		: NULL;
	rt_arena.fds =
	    h->fd_capacity ? (struct rt_fd_entry *)((uint8_t *)base + h->fd_table_offset) : NULL;
	rt_arena.rings = (struct rt_ring_desc *)((uint8_t *)base + h->ring_desc_offset);
	rt_arena.ring_area = (uint8_t *)base + h->ring_area_offset;
	rt_arena.ring_slots = h->ring_bytes / RT_SLOT_SIZE;
	rt_arena.collector = arena_config.collector;

	/* RT_LOG reads its threshold from the arena from now on (`ringtrace level`) */
	rt_log_attach_arena(h);
	/* publishes: a complete header; readers ignore an arena still CREATING */
	__atomic_store_n(&h->state, RT_ARENA_RUNNING, __ATOMIC_RELEASE);
	rt_crash_install(arena_config.crash_events);
	rt_sync_start(arena_config.sync_ms);
	return 0;
}

/*
 * Wait until the creator has published its outcome, or the limit has
 * passed since it began; returns the state then (RT_STARTING: gave up).
 * The thread creating the arena never waits for itself: an event of its
 * own during creation (a signal its mask lets through, such as SIGSEGV, or
 * a function of the program interposed on a call the creation makes)
 * returns at once.
 */
static int wait_for_creator(void)
{
	/* acquire: creator_known's 1 publishes creator */
	if (__atomic_load_n(&start.creator_known, __ATOMIC_ACQUIRE) &&
	    pthread_equal(start.creator, pthread_self()))
		return RT_STARTING;
	uint64_t first_seen = 0;
	for (;;) {
		int state = __atomic_load_n(&rt_arena.state, __ATOMIC_ACQUIRE);
		if (state != RT_STARTING)
			return state;
		/* the creator writes its start just after winning: until then, our own */
		uint64_t began = __atomic_load_n(&start.began_ns, __ATOMIC_RELAXED);
		uint64_t now = rt_monotonic_ns();
		if (!first_seen)
			first_seen = now;
		if (!began || began > now)
			began = first_seen;
		if (now - began >= RT_START_WAIT_NS)
			return RT_STARTING;
		uint64_t left = RT_START_WAIT_NS - (now - began);
		struct timespec timeout = {(time_t)(left / 1000000000u),
					   (long)(left % 1000000000u)};
		/* sleeps only while the state is still RT_STARTING; EINTR, EAGAIN: look again */
		syscall(SYS_futex, &rt_arena.state, FUTEX_WAIT_PRIVATE, RT_STARTING, &timeout, NULL,
			0);
	}
}

/* Register the fork handler once: from the constructor, or from a start that came before it. */
static void register_fork_handler(void)
{
	int expected = 0;
	if (__atomic_compare_exchange_n(&start.fork_handler, &expected, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		pthread_atfork(NULL, NULL, rt_arena_start_over_in_child);
}

/*
 * The creator's work, state RT_STARTING won: create, publish, wake the
 * waiters, then the rundowns.  With cancellation disabled and the
 * asynchronous signals blocked, from before the state was won until it
 * is over (see the top of this file).
 */
static int create_and_publish(const struct ringtrace_options *options)
{
	start.creator = pthread_self();
	__atomic_store_n(&start.creator_known, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&start.began_ns, rt_monotonic_ns(), __ATOMIC_RELAXED);
	/* the first event came before the constructors ran (a .preinit_array entry, say) */
	if (!__atomic_load_n(&start.fork_handler, __ATOMIC_ACQUIRE))
		register_fork_handler();
	/* the arena's own files are not the program's I/O */
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	w->internal++;
	int r = arena_create(options);
	__atomic_store_n(&start.creator_known, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&start.began_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&rt_arena.state, r == 0 ? RT_ON : RT_OFF, __ATOMIC_RELEASE);
	syscall(SYS_futex, &rt_arena.state, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	drop_inherited();
	if (r == 0) {
		rt_arena_account_start_losses();
		rt_modules_rundown();
		if (rt_arena.fds || rt_io_on)
			rt_io_rundown();
	}
	w->internal--;
	return r;
}

int rt_arena_ensure_started(const struct ringtrace_options *options, int *result)
{
	/*
	 * A plain load first: a failed compare-and-swap still takes the cache
	 * line exclusively, and every thread's slow path comes through here.
	 */
	int state = __atomic_load_n(&rt_arena.state, __ATOMIC_ACQUIRE);
	if (state == RT_OFF_NOT_STARTED) {
		/*
		 * Nothing may stop the creator half-way: a pending cancellation
		 * would act at the open() of the arena, a signal handler could
		 * longjmp out of it, and the state would stay RT_STARTING for
		 * good.  Synchronous signals stay unblocked: blocked, a fault
		 * would kill the process without its handler.  pthread_sigmask
		 * leaves alone the signals the C library keeps for itself.
		 */
		int cancel_state;
		sigset_t blocked, mask;
		sigfillset(&blocked);
		sigdelset(&blocked, SIGSEGV);
		sigdelset(&blocked, SIGBUS);
		sigdelset(&blocked, SIGFPE);
		sigdelset(&blocked, SIGILL);
		sigdelset(&blocked, SIGTRAP);
		sigdelset(&blocked, SIGSYS);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel_state);
		pthread_sigmask(SIG_BLOCK, &blocked, &mask);
		int won = __atomic_compare_exchange_n(&rt_arena.state, &state, RT_STARTING, 0,
						      __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE);
		int r = won ? create_and_publish(options) : 0;
		/* cancellation first: a signal let through now may longjmp and never come back */
		pthread_setcancelstate(cancel_state, NULL);
		pthread_sigmask(SIG_SETMASK, &mask, NULL);
		if (won) {
			if (result)
				*result = r;
			return r == 0;
		}
	}
	/* another thread is creating the arena: wait for it, bounded */
	if (state == RT_STARTING)
		state = wait_for_creator();
	if (result)
		*result = -EALREADY;
	return state == RT_ON;
}

/*
 * The pages [from, to) of ring `index` (byte offsets in the ring, from a
 * multiple of the page size), made to exist in the file before any store
 * may reach them (threads.c says when): a store into a page the file system
 * cannot provide would be a SIGBUS.  A claim that fails (no space) gives
 * back what it got, says so once, and the caller counts the events lost.
 */
int rt_arena_claim_ring(uint32_t index, uint64_t from, uint64_t to)
{
	static int warned;
	uint64_t off = rt_arena.header->ring_area_offset +
		       (uint64_t)index * rt_arena.header->ring_bytes + from;
	uint64_t bytes = to - from;
	int err = EBADF;
	/* the program may have closed our descriptor and reused its number */
	struct stat st;
	if (rt_arena.fd >= 0 && fstat(rt_arena.fd, &st) == 0 && st.st_dev == arena_dev &&
	    st.st_ino == arena_ino) {
		err = posix_fallocate(rt_arena.fd, (off_t)off, (off_t)bytes);
		if (err == 0)
			return 0;
		/* nothing lives there yet: the writer's head is below from */
		fallocate(rt_arena.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
			  (off_t)bytes);
	}
#ifdef MADV_POPULATE_WRITE
	else if (madvise(rt_arena.base + off, bytes, MADV_POPULATE_WRITE) == 0) {
		return 0;
	} else {
		err = errno;
	}
#endif
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		rt_warn("no room for ring pages in ", rt_arena.path, ": ", strerror(err));
	return -err;
}

void rt_arena_account_start_losses(void)
{
	uint64_t n = __atomic_exchange_n(&rt_arena.lost_while_starting, 0, __ATOMIC_RELAXED);
	if (n)
		__atomic_fetch_add(&rt_arena.header->lost_untracked, n, __ATOMIC_RELAXED);
}

/* Close the arena for good: the clock's last reading, state CLOSED. */
static void arena_close(void)
{
	/* a vfork child's exit() runs its parent's destructors: the arena is the parent's */
	if (ringtrace__tls_writer.vfork_child || ringtrace__tls_writer.lent)
		return;
	int expected = RT_ON;
	if (!__atomic_compare_exchange_n(&rt_arena.state, &expected, RT_OFF, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	if (getpid() != rt_arena.owner)
		return;			  /* a forked child must not close its parent's arena */
	ringtrace__tls_writer.internal++; /* unlinking the arena is not the program's I/O */
	rt_crash_uninstall();
	rt_threads_stop_all();
	rt_thread_finish_current();
	rt_arena_account_start_losses(); /* late counts of threads that saw STARTING */
	rt_clock_refresh(rt_arena.header, 1);
	__atomic_store_n(&rt_arena.header->end_counter, ringtrace__counter(), __ATOMIC_RELAXED);
	__atomic_store_n(&rt_arena.header->end_reason, (uint32_t)RT_END_EXIT, __ATOMIC_RELAXED);
	/* publishes: every record and counter before it; the arena is final */
	__atomic_store_n(&rt_arena.header->state, RT_ARENA_CLOSED, __ATOMIC_RELEASE);
	rt_sync_stop(); /* after CLOSED, so that the disk has it too */
	if (!rt_arena.user_path)
		unlink(rt_arena.path);
	ringtrace__tls_writer.internal--;
}

__attribute__((destructor)) static void rt_arena_at_exit(void)
{
	rt_fn_program_exit();
	arena_close();
}

/*
 * Runs in the child of fork() (the handler), of _Fork() or of a clone
 * without CLONE_VM (clone.c): async-signal-safe calls only (see the top).
 */
void rt_arena_start_over_in_child(void)
{
	int state = __atomic_load_n(&rt_arena.state, __ATOMIC_ACQUIRE);
	if (state == RT_OFF_NOT_STARTED)
		return; /* a child of a child that never traced keeps what it inherited */
	rt_threads_forget_after_fork();
	rt_sync_forget_after_fork();
	rt_log_detach_arena(); /* the parent's word is not ours to change */
	if (state == RT_OFF)
		return; /* failed or shut down in the parent: off here too */
	if (state == RT_ON) {
		inherited.base = rt_arena.base;
		inherited.size = rt_arena.size;
		/*
		 * Only if the number still holds the arena: the program may have
		 * closed it and opened a file of its own there.  Not the
		 * program's I/O: recorded, it would go into the parent's arena.
		 */
		struct stat st;
		ringtrace__tls_writer.internal++;
		if (rt_arena.fd >= 0 && fstat(rt_arena.fd, &st) == 0 && st.st_dev == arena_dev &&
		    st.st_ino == arena_ino)
			close(rt_arena.fd);
		ringtrace__tls_writer.internal--;
	}
	/* RT_STARTING: the thread creating the arena stayed in the parent; start afresh */
	if (state == RT_STARTING) {
		config_loaded = 0; /* maybe half-loaded */
		start.creator_known = 0;
		start.began_ns = 0;
	}
	forked_from_tracer = 1;
	rt_arena.fd = -1;
	rt_arena.owner = 0;
	rt_arena.path[0] = 0;
	rt_arena.base = NULL;
	rt_arena.size = 0;
	rt_arena.header = NULL;
	rt_arena.threads = NULL;
	rt_arena.sites = NULL;
	rt_arena.modules = NULL;
	rt_arena.fds = NULL;
	rt_arena.strings = NULL;
	rt_arena.rings = NULL;
	rt_arena.ring_area = NULL;
	rt_arena.ring_slots = 0;
	rt_arena.lost_while_starting = 0;
	rt_arena.collector = 0;
	__atomic_store_n(&rt_arena.state, RT_OFF_NOT_STARTED, __ATOMIC_RELEASE);
}

/*
 * The only start-up work: registering the fork handler here rather than on
 * the first event keeps malloc (which pthread_atfork uses) out of a first
 * event that might come from a signal handler, and so does finding the
 * functions clone.c's wrappers call (dlsym).  It creates no file.  A first
 * event before this constructor registers the fork handler itself.
 */
__attribute__((constructor)) static void rt_arena_register_fork_handler(void)
{
	register_fork_handler();
	rt_clone_resolve();
}

RT_EXPORT int ringtrace_init(const struct ringtrace_options *options)
{
	int result = 0;
	rt_arena_ensure_started(options, &result);
	return result;
}

RT_EXPORT void ringtrace_shutdown(void)
{
	arena_close();
}

RT_EXPORT int ringtrace_enabled(void)
{
	return rt_arena_ensure_started(NULL, NULL);
}

RT_EXPORT const char *ringtrace_arena_path(void)
{
	return rt_arena_on() ? rt_arena.path : NULL;
}
