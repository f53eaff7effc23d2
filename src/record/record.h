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

/* The library is built with hidden visibility; this marks its ABI. */
#define RT_EXPORT __attribute__((visibility("default")))

/* ---- configuration (config.c) ---------------------------------------- */

#define RT_DEFAULT_RING_BYTES (1u << 20)
#define RT_DEFAULT_RINGS 64u
#define RT_MAX_RINGS 4096u
#define RT_MIN_THREAD_CAPACITY 1024u
#define RT_SITE_CAPACITY 8192u
#define RT_STRING_CAPACITY (1u << 20)

struct rt_config {
	char path[PATH_MAX];
	int user_path; /* the user chose the path: never delete it */
	uint64_t ring_bytes_requested;
	uint64_t ring_bytes; /* largest power of two <= requested */
	int mode;	     /* enum rt_mode */
	uint32_t rings;
};

/*
 * Fill config from options (may be NULL) and the environment.  On error
 * returns -EINVAL and writes the reason into why.
 */
int rt_config_load(struct rt_config *config, const struct ringtrace_options *options, char *why,
		   size_t why_size);

/* ---- the process (process.c) ----------------------------------------- */

pid_t rt_gettid(void);
void rt_process_program(char *out, size_t size);       /* /proc/self/exe or "" */
size_t rt_process_build_id(uint8_t *out, size_t size); /* main program's, 0 if none */
uint64_t rt_process_start_time(pid_t pid);	       /* /proc/PID/stat starttime */

/* One line on stderr, "ringtrace: " + parts; async-signal-safe. */
void rt_warn(const char *a, const char *b, const char *c, const char *d);

/* ---- the clock (clock.c) --------------------------------------------- */

void rt_clock_read(struct rt_clock_pair *pair);
/* Estimate the counter's frequency by watching CLOCK_MONOTONIC briefly. */
uint64_t rt_clock_estimate_hz(void);
/* Refresh header->sync if the last refresh is old enough (or force). */
void rt_clock_refresh(struct rt_arena_header *header, int force);
uint32_t rt_clock_source(void);

/* ---- the arena (arena.c) --------------------------------------------- */

enum rt_global_state {
	RT_OFF_NOT_STARTED = 0,
	RT_STARTING = 1,
	RT_ON = 2,
	RT_OFF = 3, /* failed, shut down, or a forked child */
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
	char *strings;
	struct rt_ring_desc *rings;
	uint8_t *ring_area;
	uint64_t ring_slots;
	uint64_t lost_while_starting; /* events of other threads during creation */
};

extern struct rt_arena rt_arena;

/* Start tracing once (first event or ringtrace_init); returns 1 when on. */
int rt_arena_ensure_started(const struct ringtrace_options *options, int *result);
static inline int rt_arena_on(void)
{
	return __atomic_load_n(&rt_arena.state, __ATOMIC_ACQUIRE) == RT_ON;
}
/* Move events lost while the arena was being created into its header. */
void rt_arena_account_start_losses(void);
/* Make sure the pages of ring `index` exist (they are allocated lazily). */
int rt_arena_allocate_ring(uint32_t index);
static inline union rt_slot *rt_arena_ring_slots(uint32_t index)
{
	return (union rt_slot *)(rt_arena.ring_area +
				 (uint64_t)index * rt_arena.header->ring_bytes);
}

/* ---- sites (sites.c) ------------------------------------------------- */

/* Copy the site into the arena if needed; returns its id, 0 if refused. */
uint32_t rt_site_register(struct ringtrace__site *site);

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
/* Try again to get a ring for a thread that had none. */
void rt_thread_retry_ring(struct ringtrace__writer *w);
/* Keep ev as the thread's last event in its thread-table entry. */
void rt_thread_keep_last(struct ringtrace__writer *w, const struct rt_last_event *ev);
/* Stop every attached writer: they fall into the slow path and record nothing. */
void rt_threads_stop_all(void);
/* Called in a forked child: the parent's arena is not ours. */
void rt_threads_forget_after_fork(void);
/* The calling thread is the last one: finish its entry (clean exit). */
void rt_thread_finish_current(void);

/* ---- the slow path (emit_slow.c) ------------------------------------- */

/* Recompute how far the fast path may write before coming back. */
void rt_writer_set_limit(struct ringtrace__writer *w);

#endif /* RT_RECORD_H */
