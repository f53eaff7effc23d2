/*
 * record.h - internals of the recording library (the code that runs inside
 * the traced program).  Everything here depends on libc and pthreads only,
 * never writes to stdout, never calls exit or abort, and never blocks on a
 * lock that a signal handler could need.
 */
#ifndef RT_RECORD_H
#define RT_RECORD_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "ringtrace.h"
#include "ringtrace/format.h"
#include "record/payload_record.h"

/* The library is built with hidden visibility; this marks its ABI. */
#define RT_EXPORT __attribute__((visibility("default")))

/* One pause of a spin-wait: tells the CPU, and an SMT sibling, that this thread waits. */
#if defined(__x86_64__) || defined(__i386__)
#define RT_CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define RT_CPU_RELAX() __asm__ __volatile__("yield" ::: "memory")
#else
#define RT_CPU_RELAX() __asm__ __volatile__("" ::: "memory")
#endif

/* ---- configuration (config.c) ---------------------------------------- */

#define RT_DEFAULT_RING_BYTES (1u << 20)
/*
 * Stream mode's default is larger: its ring only has to bridge the time
 * until the collector next runs, but a collector that lost its CPU must
 * not cost events.  On a shared 2-vCPU virtual machine single passes of
 * the collector were seen to take 12-20 ms of what the guest counts as
 * its CPU time (the host had taken the vCPU), which a 4 MiB ring - 13 ms
 * of a thread emitting 10 million events per second - did not bridge in
 * about one run in three.  16 MiB holds 52 ms; a ring's pages are
 * claimed only as its thread fills it (threads.c).
 */
#define RT_DEFAULT_STREAM_RING_BYTES (16u << 20)
#define RT_DEFAULT_RINGS 64u
#define RT_MAX_RINGS 4096u
#define RT_MIN_THREAD_CAPACITY 1024u
#define RT_SITE_CAPACITY 8192u
#define RT_STRING_CAPACITY (1u << 20)
#define RT_DEFAULT_CRASH_EVENTS 50u
#define RT_CRASH_EVENTS_MAX 1000u
#define RT_SYNC_MS_MAX 3600000u /* an hour */

struct rt_config {
	char path[PATH_MAX];
	char chosen_path[PATH_MAX]; /* the user's path, before a pid was added to it */
	int user_path;		    /* the user chose the path: never delete it */
	uint64_t ring_bytes_requested;
	uint64_t ring_bytes; /* largest power of two <= requested */
	int mode;	     /* enum rt_mode */
	uint32_t rings;
	uint32_t crash_events; /* events the crash handler prints, 0: none */
	uint32_t sync_ms;      /* RINGTRACE_SYNC period, 0: no write-back thread */
	uint32_t modules;      /* module-table entries (RINGTRACE_MODULES), 0: no module map */
	uint32_t fds;	       /* descriptor-table entries (RINGTRACE_FDS) when I/O is traced */
	int32_t collector;     /* RINGTRACE_COLLECTOR: the `ringtrace record` looking for
				  arenas, 0: none (arena_last.c) */
	uint32_t full_wait_us; /* RINGTRACE_FULL_WAIT_US: the header's full_wait_us at start */
};

/*
 * Fill config from options (may be NULL) and the environment (none in a
 * privileged process).  On error returns -EINVAL (a bad value) or -EPERM
 * (a privileged process with no arena path of the program's own) and
 * writes the reason into why.
 */
int rt_config_load(struct rt_config *config, const struct ringtrace_options *options, char *why,
		   size_t why_size);

/*
 * The name a process that is not the path's first taker records into:
 * path with ".PID" inserted before a trailing RT_ARENA_SUFFIX, or appended
 * when there is none.  0, or -ENAMETOOLONG.  (A forked child with a user
 * path, and a program that finds its path held by a running process.)
 */
int rt_config_path_with_pid(char *out, size_t size, const char *path, pid_t pid);
/*
 * getenv(name), also before the C library has set up environ (an event
 * from a .preinit_array entry): then from the environment the process was
 * started with.  In a privileged process (rt_privileged()) it finds
 * nothing.  Every variable the library reads goes through it.
 */
const char *rt_getenv(const char *name);
/*
 * Whether the process runs with privileges its caller lacks (AT_SECURE:
 * set-user-ID, set-group-ID, file capabilities).  Then rt_getenv() finds
 * nothing, and the process's environment is never handed on (config.c).
 */
int rt_privileged(void);
/* DIR/RT_ARENA_PREFIX PROGRAM.PID RT_ARENA_SUFFIX for this process (common/arena_names.h). */
void rt_config_default_path(char *out, size_t size);

/* ---- the process (process.c) ----------------------------------------- */

pid_t rt_gettid(void);
void rt_process_program(char *out, size_t size);       /* /proc/self/exe or "" */
size_t rt_process_build_id(uint8_t *out, size_t size); /* main program's, 0 if none */
uint64_t rt_process_start_time(pid_t pid);	       /* /proc/PID/stat starttime */
/* The NT_GNU_BUILD_ID in len bytes of ELF notes at p into out; its size, 0 if none. */
size_t rt_build_id_from_notes(const uint8_t *p, size_t len, uint8_t *out, size_t size);

/* One line on stderr, "ringtrace: " + parts; async-signal-safe. */
void rt_warn(const char *a, const char *b, const char *c, const char *d);

/* ---- the clock (clock.c) --------------------------------------------- */

void rt_clock_read(struct rt_clock_pair *pair);
/* Estimate the counter's frequency by watching CLOCK_MONOTONIC briefly. */
uint64_t rt_clock_estimate_hz(void);
/* CLOCK_MONOTONIC in nanoseconds: async-signal-safe (a vDSO call, or a system call). */
uint64_t rt_monotonic_ns(void);

/*
 * An RT_TRACE event of site written as if it happened at the raw counter
 * at (the function hooks' held enters: functions.c), through the slow path.
 */
void rt_emit_trace_at(struct ringtrace__site_body *site, uint64_t at, const uint32_t a32[4],
		      const uint64_t a64[2]);
/* Refresh header->sync if the last refresh is old enough (or force). */
void rt_clock_refresh(struct rt_arena_header *header, int force);
uint32_t rt_clock_source(void);

/* ---- the last arena (arena_last.c) ------------------------------------ */

/*
 * path exists and fd (opened O_NOFOLLOW) is what it held: keep an arena of
 * a previous run there as path.last (replacing an older last arena), or
 * unlink an empty file.  With collector (a running `ringtrace record`'s
 * pid, else 0), a path.last of an earlier image of this process that no
 * collector has attached is not replaced but kept as path.last.N.
 * Returns 0 when path should be tried again (moved, or changed meanwhile),
 * or -1 with errno and a reason in why when it is not to be touched: not
 * an arena, an arena whose process still runs (errno EBUSY), a path.last
 * that is not an arena.
 */
int rt_arena_set_aside(const char *path, int fd, int32_t collector, char *why, size_t why_size);
/*
 * What rt_arena_set_aside() replaced unread: earlier images of this process
 * and their events (0 and 0 when nothing), for the new arena's header;
 * told once.
 */
void rt_arena_replaced(uint64_t *images, uint64_t *events);

/* ---- the arena (arena.c) --------------------------------------------- */

enum rt_global_state {
	RT_OFF_NOT_STARTED = 0,
	RT_STARTING = 1,
	RT_ON = 2,
	RT_OFF = 3, /* failed or shut down (a forked child starts over: arena.c) */
};

struct rt_arena {
	int state; /* enum rt_global_state, atomic */
	int fd;
	pid_t owner;
	char path[PATH_MAX];
	int user_path;
	uint8_t *base;
	uint64_t size;
	struct rt_arena_header *header;
	struct rt_thread_entry *threads;
	struct rt_site_entry *sites;
	struct rt_module_entry *modules; /* NULL without a module table */
	struct rt_fd_entry *fds;	 /* NULL without a descriptor table */
	char *strings;
	struct rt_ring_desc *rings;
	uint8_t *ring_area;
	uint64_t ring_slots;
	uint64_t lost_while_starting; /* events of other threads during creation */
	int32_t collector;	      /* RINGTRACE_COLLECTOR: a collector announced, 0 if none */
};

extern struct rt_arena rt_arena;

/* Start tracing once (first event or ringtrace_init); returns 1 when on. */
int rt_arena_ensure_started(const struct ringtrace_options *options, int *result);
static inline int rt_arena_on(void)
{
	return __atomic_load_n(&rt_arena.state, __ATOMIC_ACQUIRE) == RT_ON;
}
/*
 * In a child made without fork()'s handlers (clone.c): forget the parent's
 * threads and arena as the fork handler does (async-signal-safe).
 */
void rt_arena_start_over_in_child(void);
/* clone.c: find the C library's _Fork, clone and syscall behind the library's own. */
void rt_clone_resolve(void);
/*
 * vfork.c: an event of a vfork child that has no thread state of its own
 * (its parent's writer was lent to it), or an I/O call of a vfork child,
 * counted lost.
 */
void rt_vfork_count_event(void);
/* Move events lost while the arena was being created into its header. */
void rt_arena_account_start_losses(void);
/*
 * Make the bytes [from, to) of ring `index` exist in the arena file (from a
 * multiple of the page size); 0, or -errno when the file system has no room
 * (threads.c claims a ring's pages as it fills).
 */
int rt_arena_claim_ring(uint32_t index, uint64_t from, uint64_t to);
static inline union rt_slot *rt_arena_ring_slots(uint32_t index)
{
	return (union rt_slot *)(rt_arena.ring_area +
				 (uint64_t)index * rt_arena.header->ring_bytes);
}

/* ---- sites (sites.c) ------------------------------------------------- */

/* Copy the site into the arena if needed; returns its id, 0 if refused. */
uint32_t rt_site_register(struct ringtrace__site_body *site);
/* Claim n bytes of the string area (lock-free); their offset, UINT32_MAX when full. */
uint32_t rt_strings_claim(uint64_t n);

/* ---- the module map (modules.c) --------------------------------------- */

/*
 * The objects loaded when tracing starts; called once the arena is on.
 * Never waits for the lock dlopen and dlclose take: if one of them is
 * recording, its own pass takes the start's place.
 */
void rt_modules_rundown(void);

/* ---- threads (threads.c) --------------------------------------------- */

enum rt_writer_state {
	RT_WRITER_NEW = 0,	 /* not attached yet */
	RT_WRITER_ATTACHED = 1,	 /* has an entry and a ring */
	RT_WRITER_NO_RING = 2,	 /* has an entry, no ring was free */
	RT_WRITER_UNTRACKED = 3, /* the thread table was full */
	RT_WRITER_DETACHED = 4,	 /* the thread is exiting */
};

/* Attach the calling thread: thread-table entry, ring, writer state. */
void rt_thread_attach(struct ringtrace__writer *w);
/*
 * The writer's limit cut to the ring's claimed pages, claiming the next
 * ones when the limit reaches past them (threads.c, "Claiming pages").
 */
uint64_t rt_thread_claimed_limit(struct ringtrace__writer *w, uint64_t limit);
/* Try again to get a ring for a thread that had none. */
void rt_thread_retry_ring(struct ringtrace__writer *w);
/* Keep ev as the thread's last event in its thread-table entry. */
void rt_thread_keep_last(struct ringtrace__writer *w, const struct rt_last_event *ev);
/*
 * Stop every attached writer: they fall into the slow path and record
 * nothing.  The entries of threads still alive take their latest names
 * (they never detach, which is when a thread's name is refreshed).
 */
void rt_threads_stop_all(void);
/*
 * Called in a forked child (async-signal-safe): the parent's threads are
 * gone and its arena is not ours; the calling thread attaches anew.
 */
void rt_threads_forget_after_fork(void);
/* The calling thread is the last one: finish its entry (clean exit). */
void rt_thread_finish_current(void);
/*
 * In the parent's thread, once its vfork child exec'd or exited: end the
 * child's entry as a thread's exit would, and release its ring (vfork.c).
 */
void rt_thread_end_vfork_child(struct ringtrace__writer *w);

/* ---- the crash handler (crash.c, crash_format.c) --------------------- */

/*
 * Install the handlers of the fatal signals, keeping the program's, and
 * give the calling thread an alternate signal stack.  Called once, when the
 * arena is created.
 */
void rt_crash_install(uint32_t events);
/* Put the program's handlers back where ours are still installed. */
void rt_crash_uninstall(void);
/* An alternate signal stack for the calling thread, if it has none. */
void rt_crash_thread_start(void);
/* Unmap the calling thread's alternate signal stack if it is ours. */
void rt_crash_thread_end(void);

/*
 * emit_slow.c: a log or I/O record through the slow path, stamped at (0:
 * now, once the slow path's work is done); a nested event counted
 */
void rt_record_payload(struct ringtrace__writer *w, struct ringtrace__site_body *site, uint8_t kind,
		       const uint8_t *payload, uint32_t bytes, uint64_t at);
void rt_count_nested(struct ringtrace__writer *w);

/*
 * The slow path's work behind the entry points of every ABI version (abi.c,
 * which checked the site's head): one trace event (emit_slow.c), one RT_LOG
 * call whose level passed the threshold (log.c), and an event of a site the
 * check refused, counted lost (emit_slow.c).
 */
void rt_emit_trace(struct ringtrace__site_body *site, uint32_t a0, uint32_t a1, uint32_t a2,
		   uint32_t a3, uint64_t a4, uint64_t a5);
void rt_log_call(struct ringtrace__log_site_body *site, const struct ringtrace__log_arg *args);
void rt_count_refused_event(void);

/*
 * Enter a record of the calling thread: 0 (the event counted as nested)
 * when a signal handler interrupted the thread inside one, else 1 with the
 * thread marked busy until rt_writer_leave().
 */
static inline int rt_writer_enter(struct ringtrace__writer *w)
{
	if (w->busy) {
		rt_count_nested(w);
		return 0;
	}
	w->busy = 1;
	RT__COMPILER_BARRIER();
	return 1;
}

static inline void rt_writer_leave(struct ringtrace__writer *w)
{
	RT__COMPILER_BARRIER();
	w->busy = 0;
}

/*
 * A payload record (RT_REC_LOG, RT_REC_IO) of site, stamped at (0: now):
 * written at once when the site is registered and the record fits below
 * the limit, as RT_TRACE's fast path does, else through the slow path,
 * which starts, registers, attaches and counts.  Always inline, so that a
 * caller whose payload size is a constant gets the record without a loop.
 */
__attribute__((always_inline)) static inline void
rt_emit_payload(struct ringtrace__writer *w, struct ringtrace__site_body *site, uint8_t kind,
		const uint8_t *payload, uint32_t bytes, uint64_t at)
{
	if (!rt_try_write_payload(w, kind, __atomic_load_n(&site->id, __ATOMIC_RELAXED), payload,
				  bytes, at))
		rt_record_payload(w, site, kind, payload, bytes, at);
}

/* log.c: the threshold's word moves into the arena when it exists, and back in a forked child */
struct rt_arena_header;
void rt_log_attach_arena(struct rt_arena_header *h);
void rt_log_detach_arena(void);

/*
 * File I/O (io/): whether `record --io`'s interposer turned it on; the
 * descriptor table's entries (NULL without one); the rundown of the
 * descriptors open when an arena starts (io_rundown.c), run with the
 * thread marked internal.
 */
extern int rt_io_on;
void rt_io_rundown(void);
/* One descriptor of the rundown: its table entry and its record (position -1: none). */
void rt_io_write_rundown(int fd, const char *name, uint32_t length, int64_t position,
			 uint32_t flags);

/* functions.c: close the calls left open when a thread or the program ends */
void rt_fn_thread_end(void);
void rt_fn_program_exit(void);
/* The calling thread's call depth, set back after a vfork child ran on it (vfork.c). */
uint32_t rt_fn_depth(void);
void rt_fn_set_depth(uint32_t depth);

/* What the dump's heading says about the signal. */
struct rt_crash_info {
	int signal;
	int has_address;
	uint64_t address;
	pid_t tid;
	uint32_t thread; /* thread-table index of the crashing thread, or UINT32_MAX */
};

/*
 * Write the crash dump to fd: a heading, the last `events` events of all
 * threads merged by time, every thread's last event and the last timestamp,
 * in the `ringtrace dump` text format.  Async-signal-safe: reads only the
 * arena mapping (bounds-checked), formats into static buffers, write(2)s.
 * One caller at a time (the crash handler serialises).
 */
void rt_crash_write_dump(int fd, const struct rt_crash_info *info, uint32_t events);

/* ---- writing the arena back to disk (sync.c) ------------------------- */

/* Start the write-back thread (period_ms 0: none).  After the arena is made. */
void rt_sync_start(uint32_t period_ms);
/* Clean close: stop the thread, write the arena back one last time. */
void rt_sync_stop(void);
/* Called in a forked child: the thread stayed in the parent. */
void rt_sync_forget_after_fork(void);

/* ---- the slow path (emit_slow.c) ------------------------------------- */

/* Recompute how far the fast path may write before coming back. */
void rt_writer_set_limit(struct ringtrace__writer *w);

#endif /* RT_RECORD_H */
