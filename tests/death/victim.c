/*
 * victim.c - the traced program the death tests kill, crash or deadlock.
 *
 *   death_victim flat     ARENA MODE BUFFER THREADS
 *   death_victim abort    ARENA MODE BUFFER THREADS CRASH_AT
 *   death_victim segv     ARENA MODE BUFFER THREADS CRASH_AT
 *   death_victim fork     ARENA MODE BUFFER THREADS CRASH_AT
 *   death_victim ringless ARENA MODE BUFFER THREADS
 *   death_victim deadlock ARENA MODE BUFFER
 *
 * MODE is flight or stream, BUFFER the per-thread ring size in bytes.
 * Tracer thread t (named "victim-t") records event i = 0, 1, 2, ... of the
 * pattern in death_pattern.h as fast as it can, until the process dies:
 *   flat      never ends by itself: the test kills it with SIGKILL;
 *   abort     tracer 0 calls abort() right after event CRASH_AT (it starts
 *             once every other tracer recorded DEATH_UNDER_WAY events);
 *   segv      tracer 0 writes through a null pointer right after event CRASH_AT;
 *   fork      forks before anything is traced; the child records into
 *             ARENA.child (RINGTRACE_ARENA set in the child only) and its
 *             tracer 0 calls _exit(DEATH_CHILD_STATUS) right after event
 *             CRASH_AT, while the parent records a fixed number of events per
 *             thread into ARENA and exits normally once the child is gone;
 *   ringless  as flat, but the main thread records an event first, so that
 *             with RINGTRACE_RINGS=1 it holds the only ring and the tracers
 *             have none: each keeps only its last event, in its thread entry;
 *   deadlock  see deadlock() below.
 * Tracing starts with ringtrace_init() before any tracer runs, so that no
 * event is lost while the arena is being created.  A victim never outlives
 * the test: it dies with its parent (PR_SET_PDEATHSIG) and after
 * DEATH_VICTIM_SECONDS at the latest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ringtrace.h"

#include "death_pattern.h"

#define MAX_TRACERS 16

enum ending {
	END_NEVER,  /* killed from outside */
	END_ABORT,  /* abort() */
	END_SEGV,   /* a write through a null pointer */
	END_EXIT,   /* _exit() */
	END_FINISH, /* the thread returns after CRASH_AT + 1 events */
};

/* A null pointer the compiler cannot see through. */
static volatile uintptr_t null_address = 0;

struct tracer {
	uint32_t index;
	enum ending ending;
	uint32_t crash_at;
	pthread_t thread;
};

static void die(const char *what)
{
	fprintf(stderr, "death_victim: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* The pattern's two sites: the test recognises them by tag and function. */
static void trace_small(uint32_t t, uint32_t i)
{
	RT_TRACE("kill", t, i);
}

static void trace_large(uint32_t t, uint32_t i)
{
	RT_TRACE("kill6", t, i, death_arg2(i), death_arg3(t), death_arg4(t, i), death_arg5(i));
}

static void crash(enum ending ending)
{
	switch (ending) {
	case END_ABORT:
		abort();
	case END_SEGV:
		*(volatile int *)null_address = 1;
		break;
	case END_EXIT:
		_exit(DEATH_CHILD_STATUS);
	default:
		break;
	}
	abort(); /* not reached */
}

/* tracers 1.. that are well under way: tracer 0 starts when all are */
static uint32_t tracers_running, tracers_wanted;

static void *tracer_main(void *arg)
{
	struct tracer *x = arg;
	char name[16];
	snprintf(name, sizeof(name), "victim-%u", x->index);
	ringtrace_set_thread_name(name);
	/* so that tracer 0 cannot end the process before the others trace */
	while (x->index == 0 &&
	       __atomic_load_n(&tracers_running, __ATOMIC_ACQUIRE) + 1 < tracers_wanted)
		sched_yield();
	for (uint32_t i = 0;; i++) {
		if (death_is_large(i))
			trace_large(x->index, i);
		else
			trace_small(x->index, i);
		if (i == DEATH_UNDER_WAY && x->index != 0)
			__atomic_add_fetch(&tracers_running, 1, __ATOMIC_RELEASE);
		if (x->ending != END_NEVER && i == x->crash_at) {
			if (x->ending == END_FINISH)
				return NULL;
			crash(x->ending);
		}
	}
}

static void start_tracing(const char *arena, int mode, uint64_t buffer)
{
	struct ringtrace_options o = {
	    .size = sizeof(o), .arena_path = arena, .buffer_bytes = buffer, .mode = mode};
	int rc = ringtrace_init(&o);
	if (rc != 0) {
		fprintf(stderr, "death_victim: ringtrace_init: %s\n", strerror(-rc));
		exit(3);
	}
}

/* Tracers 1.. never end (or end as `rest` says); tracer 0 ends as `first` says. */
static void run_tracers(uint32_t count, enum ending first, enum ending rest, uint32_t crash_at)
{
	static struct tracer tracers[MAX_TRACERS];
	tracers_wanted = count;
	for (uint32_t t = 0; t < count; t++) {
		tracers[t] = (struct tracer){t, t == 0 ? first : rest, crash_at, 0};
		if (pthread_create(&tracers[t].thread, NULL, tracer_main, &tracers[t]) != 0)
			die("pthread_create");
	}
	for (uint32_t t = 0; t < count; t++)
		pthread_join(tracers[t].thread, NULL);
}

/*
 * fork: the child is forked before the parent traced anything, so it starts
 * with tracing not yet started and makes an arena of its own.
 */
static int fork_and_trace(const char *arena, int mode, uint64_t buffer, uint32_t threads,
			  uint32_t crash_at)
{
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(DEATH_VICTIM_SECONDS);
		char path[4096];
		snprintf(path, sizeof(path), "%s.child", arena);
		char size[32];
		snprintf(size, sizeof(size), "%llu", (unsigned long long)buffer);
		if (setenv("RINGTRACE_ARENA", path, 1) != 0 ||
		    setenv("RINGTRACE_MODE", mode == RINGTRACE_STREAM ? "stream" : "flight", 1) ||
		    setenv("RINGTRACE_BUFFER", size, 1))
			die("setenv");
		if (ringtrace_init(NULL) != 0)
			_exit(3);
		run_tracers(threads, END_EXIT, END_NEVER, crash_at);
		_exit(4); /* tracer 0 exits the process first */
	}
	start_tracing(arena, mode, buffer);
	run_tracers(threads, END_FINISH, END_FINISH, DEATH_PARENT_EVENTS - 1);
	int status;
	if (waitpid(child, &status, 0) != child)
		die("waitpid");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != DEATH_CHILD_STATUS) {
		fprintf(stderr, "death_victim: child: status 0x%x\n", status);
		return 5;
	}
	return 0;
}

/* ---- deadlock ------------------------------------------------------------ */

static pthread_mutex_t lock_a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_b = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never = PTHREAD_COND_INITIALIZER;
static pthread_barrier_t both_hold_one;
static int blocking; /* stuck threads past their last event */
static int stuck_tids[DEADLOCK_STUCK];

static void *busy_main(void *arg)
{
	(void)arg;
	ringtrace_set_thread_name("busy");
	for (uint32_t i = 0;; i++)
		RT_TRACE("busy", i);
	return NULL;
}

/*
 * Before its last event, each stuck thread records DEADLOCK_WARMUP events of
 * its own: in stream mode (nobody drains) more than its ring holds, so that
 * its last event is dropped from the ring and only its thread entry keeps it.
 */
static void warm_up(uint32_t who)
{
	for (uint32_t i = 0; i < DEADLOCK_WARMUP; i++)
		RT_TRACE("warm up", who, i);
}

static void announce_block(uint32_t who)
{
	stuck_tids[who] = (int)syscall(SYS_gettid);
	__atomic_add_fetch(&blocking, 1, __ATOMIC_RELEASE);
}

static void *holder_a_main(void *arg)
{
	(void)arg;
	ringtrace_set_thread_name("holds-A");
	warm_up(DEADLOCK_HOLDER_A);
	pthread_mutex_lock(&lock_a);
	pthread_barrier_wait(&both_hold_one);
	RT_TRACE("about to lock B", DEADLOCK_HOLDER_A, DEADLOCK_MAGIC_A);
	announce_block(DEADLOCK_HOLDER_A);
	pthread_mutex_lock(&lock_b);
	RT_TRACE("got B", DEADLOCK_HOLDER_A); /* never */
	return NULL;
}

static void *holder_b_main(void *arg)
{
	(void)arg;
	ringtrace_set_thread_name("holds-B");
	warm_up(DEADLOCK_HOLDER_B);
	pthread_mutex_lock(&lock_b);
	pthread_barrier_wait(&both_hold_one);
	RT_TRACE("about to lock A", DEADLOCK_HOLDER_B, DEADLOCK_MAGIC_B);
	announce_block(DEADLOCK_HOLDER_B);
	pthread_mutex_lock(&lock_a);
	RT_TRACE("got A", DEADLOCK_HOLDER_B); /* never */
	return NULL;
}

static void *waiter_main(void *arg)
{
	(void)arg;
	ringtrace_set_thread_name("waiter");
	warm_up(DEADLOCK_WAITER);
	pthread_mutex_lock(&cond_lock);
	RT_TRACE("about to wait", DEADLOCK_WAITER, DEADLOCK_MAGIC_W);
	announce_block(DEADLOCK_WAITER);
	for (;;)
		pthread_cond_wait(&never, &cond_lock); /* nobody signals */
	return NULL;
}

/*
 * Two threads take two mutexes in opposite order (the barrier makes sure
 * each holds its first before either asks for its second), a third waits on
 * a condition variable nobody signals, and a busy thread records flat out.
 * Once the three have recorded their last event, one line goes to stdout:
 * "stuck TID_A TID_B TID_W"; then the test kills the process with -9.
 */
static _Noreturn void deadlock(const char *arena, int mode, uint64_t buffer)
{
	start_tracing(arena, mode, buffer);
	if (pthread_barrier_init(&both_hold_one, NULL, 2) != 0)
		die("pthread_barrier_init");
	pthread_t threads[4];
	void *(*mains[4])(void *) = {holder_a_main, holder_b_main, waiter_main, busy_main};
	for (int k = 0; k < 4; k++)
		if (pthread_create(&threads[k], NULL, mains[k], NULL) != 0)
			die("pthread_create");
	while (__atomic_load_n(&blocking, __ATOMIC_ACQUIRE) < DEADLOCK_STUCK)
		usleep(1000);
	printf("stuck %d %d %d\n", stuck_tids[0], stuck_tids[1], stuck_tids[2]);
	fflush(stdout);
	for (;;)
		pause();
}

/* ---- main ----------------------------------------------------------------- */

static uint64_t number(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end) {
		fprintf(stderr, "death_victim: '%s' is not a number\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	/* never outlive the test, never leave a core file behind */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 2;
	alarm(DEATH_VICTIM_SECONDS);
	struct rlimit no_core = {0, 0};
	setrlimit(RLIMIT_CORE, &no_core);

	if (argc < 5) {
		fprintf(stderr, "usage: death_victim flat|abort|segv|fork|ringless|deadlock ARENA "
				"flight|stream BUFFER [THREADS [CRASH_AT]]\n");
		return 2;
	}
	const char *what = argv[1], *arena = argv[2];
	int mode = strcmp(argv[3], "stream") == 0 ? RINGTRACE_STREAM : RINGTRACE_FLIGHT;
	uint64_t buffer = number(argv[4]);
	if (strcmp(what, "deadlock") == 0)
		deadlock(arena, mode, buffer);

	uint32_t threads = argc > 5 ? (uint32_t)number(argv[5]) : 4;
	uint32_t crash_at = argc > 6 ? (uint32_t)number(argv[6]) : 0;
	if (threads < 1 || threads > MAX_TRACERS)
		return 2;
	if (strcmp(what, "fork") == 0)
		return fork_and_trace(arena, mode, buffer, threads, crash_at);
	enum ending first = END_NEVER;
	if (strcmp(what, "abort") == 0)
		first = END_ABORT;
	else if (strcmp(what, "segv") == 0)
		first = END_SEGV;
	else if (strcmp(what, "flat") != 0 && strcmp(what, "ringless") != 0)
		return 2;
	start_tracing(arena, mode, buffer);
	if (strcmp(what, "ringless") == 0)
		RT_TRACE("main takes a ring");
	run_tracers(threads, first, END_NEVER, crash_at);
	return 0;
}
