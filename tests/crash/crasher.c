/*
 * crasher.c - a traced program that dies of a fatal signal, for
 * tests/crash/crash.sh.  Built twice: with ringtrace, and with
 * -DRINGTRACE_DISABLE to show how the same program dies without it.
 *
 *   crasher MODE THREAD HANDLER
 *     MODE     segv (NULL store), abort, fpe (integer division by zero),
 *              ill (trap instruction), overflow (unbounded recursion),
 *              truncate (the arena file cut to its header, then segv)
 *     THREAD   main, or worker: the thread that crashes; or late: a thread
 *              started once crash-w2 has exited, which takes the alternate
 *              signal stack crash-w2 left
 *     HANDLER  none; before: its own SIGSEGV handler, installed before
 *              tracing starts; after: installed once tracing runs; chain:
 *              installed once tracing runs, and passing the signal on to
 *              the action it replaced; shutdown: ringtrace_shutdown()
 *              before the crash
 *
 * Main traces once (starting the library), then three workers (crash-w0..2)
 * trace; crash-w2 exits, the others wait.
 * Then main traces, and the chosen thread traces "crashing" and crashes.
 * On stdout, as it goes (flushed before the crash):
 *
 *   last TID TAG      the last event of each thread that traced
 *   crash_tid TID     the thread that crashes
 *   events N          events traced in all
 *
 * The program's own SIGSEGV handler writes "crasher: own handler" to stderr
 * and _exit(3)s.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ringtrace.h>

#define WORKERS 3
#define WORKER_EVENTS 40
#define MAIN_EVENTS 25

#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 8)
#define NO_UBSAN __attribute__((no_sanitize("undefined")))
#else
#define NO_UBSAN
#endif

static const char *mode;
static int events;
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t crash_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t crash_cond = PTHREAD_COND_INITIALIZER;
static int workers_done; /* workers that traced all their events and wait */
static int worker_crashes;
static volatile uintptr_t null_address;
static volatile int dividend = 7, divisor;
static volatile int keep_recursing = 1;

static long tid(void)
{
	return (long)syscall(SYS_gettid);
}

static void say(const char *what, long value, const char *text)
{
	pthread_mutex_lock(&print_lock);
	if (text)
		printf("%s %ld %s\n", what, value, text);
	else
		printf("%s %ld\n", what, value);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

static void own_handler(int sig)
{
	static const char text[] = "crasher: own handler\n";
	ssize_t ignored = write(STDERR_FILENO, text, sizeof(text) - 1);
	(void)ignored;
	(void)sig;
	_exit(3);
}

static void install_own_handler(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = own_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
}

/* A handler that passes the signal on to the action it replaced, as a library would. */
static struct sigaction replaced;

static void chaining_handler(int sig, siginfo_t *info, void *context)
{
	static const char text[] = "crasher: own handler, passing on\n";
	ssize_t ignored = write(STDERR_FILENO, text, sizeof(text) - 1);
	(void)ignored;
	if (replaced.sa_flags & SA_SIGINFO) {
		replaced.sa_sigaction(sig, info, context);
	} else if (replaced.sa_handler == SIG_DFL) {
		signal(sig, SIG_DFL); /* the fault happens again on return, and kills */
	} else if (replaced.sa_handler != SIG_IGN) {
		replaced.sa_handler(sig);
	}
}

static void install_chaining_handler(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = chaining_handler;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &replaced);
}

__attribute__((noinline)) NO_UBSAN static int recurse(int depth)
{
	volatile char pad[512];
	pad[0] = (char)depth;
	if (!keep_recursing)
		return pad[0];
	return recurse(depth + 1) + pad[depth & 1];
}

__attribute__((noinline)) NO_UBSAN static void crash(void)
{
	if (strcmp(mode, "segv") == 0) {
		*(volatile int *)null_address = 1;
	} else if (strcmp(mode, "abort") == 0) {
		abort();
	} else if (strcmp(mode, "fpe") == 0) {
#if defined(__x86_64__) || defined(__i386__)
		volatile int x = dividend / divisor; /* 1 / x would compile to no division */
		(void)x;
#else
		raise(SIGFPE); /* integer division does not trap here */
#endif
	} else if (strcmp(mode, "ill") == 0) {
#if defined(__aarch64__)
		__asm__ volatile(".inst 0x00000000"); /* udf: brk would be SIGTRAP */
#else
		__builtin_trap();
#endif
	} else if (strcmp(mode, "overflow") == 0) {
		recurse(0);
	} else if (strcmp(mode, "truncate") == 0) {
		const char *path = ringtrace_arena_path();
		int fd = path ? open(path, O_WRONLY) : -1;
		if (fd >= 0 && ftruncate(fd, 4096) != 0)
			perror("ftruncate");
		*(volatile int *)null_address = 1;
	}
	fprintf(stderr, "crasher: mode %s did not crash\n", mode);
	exit(1);
}

/* The calling thread's last event, then its death. */
static void trace_and_crash(void)
{
	RT_TRACE("crashing", (unsigned)strlen(mode));
	__atomic_fetch_add(&events, 1, __ATOMIC_RELAXED);
	say("last", tid(), "crashing");
	say("crash_tid", tid(), NULL);
	say("events", __atomic_load_n(&events, __ATOMIC_RELAXED), NULL);
	crash();
}

static void *late_worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "crash-late");
	trace_and_crash();
	return NULL;
}

static void *worker(void *arg)
{
	unsigned k = (unsigned)(uintptr_t)arg;
	const char *tag = NULL;
	char name[16];
	snprintf(name, sizeof(name), "crash-w%u", k);
	pthread_setname_np(pthread_self(), name); /* before its first event names it */
	for (unsigned i = 0; i < WORKER_EVENTS; i++) {
		if (i % 3 == 2) {
			RT_TRACE("work wide", k, i, 3u, 4u, (uint64_t)i << 40, (void *)&print_lock);
			tag = "work wide";
		} else {
			RT_TRACE("work", k, i);
			tag = "work";
		}
		__atomic_fetch_add(&events, 1, __ATOMIC_RELAXED);
	}
	say("last", tid(), tag);
	if (k == WORKERS - 1)
		return NULL; /* this one exits: its entry says so */
	pthread_mutex_lock(&crash_lock);
	workers_done++;
	pthread_cond_broadcast(&crash_cond);
	while (!(worker_crashes && k == 0))
		pthread_cond_wait(&crash_cond, &crash_lock);
	pthread_mutex_unlock(&crash_lock);
	trace_and_crash();
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr,
			"usage: crasher MODE main|worker|late none|before|after|chain|shutdown\n");
		return 2;
	}
	mode = argv[1];
	int in_worker = strcmp(argv[2], "worker") == 0;
	int in_late = strcmp(argv[2], "late") == 0;
	const char *handler = argv[3];
	if (strcmp(handler, "before") == 0)
		install_own_handler();

	/* the first event starts tracing: events of threads racing the start are lost */
	RT_TRACE("start", argc);
	__atomic_fetch_add(&events, 1, __ATOMIC_RELAXED);
	pthread_t threads[WORKERS];
	for (unsigned k = 0; k < WORKERS; k++) {
		if (pthread_create(&threads[k], NULL, worker, (void *)(uintptr_t)k) != 0) {
			perror("pthread_create");
			return 1;
		}
	}
	pthread_join(threads[WORKERS - 1], NULL);
	pthread_mutex_lock(&crash_lock);
	while (workers_done < WORKERS - 1)
		pthread_cond_wait(&crash_cond, &crash_lock);
	pthread_mutex_unlock(&crash_lock);

	/* the others are waiting: main's events are the newest until the crash */
	for (unsigned i = 0; i < MAIN_EVENTS; i++) {
		RT_TRACE("main step", i, -(int)i);
		__atomic_fetch_add(&events, 1, __ATOMIC_RELAXED);
	}
	if (strcmp(handler, "after") == 0)
		install_own_handler();
	if (strcmp(handler, "chain") == 0)
		install_chaining_handler();
	if (strcmp(handler, "shutdown") == 0)
		ringtrace_shutdown();
	if (in_late) {
		say("last", tid(), "main step");
		pthread_t late;
		if (pthread_create(&late, NULL, late_worker, NULL) != 0) {
			perror("pthread_create");
			return 1;
		}
		pthread_join(late, NULL);
		return 1;
	}
	if (!in_worker) {
		trace_and_crash();
		return 1;
	}
	say("last", tid(), "main step");
	pthread_mutex_lock(&crash_lock);
	worker_crashes = 1;
	pthread_cond_broadcast(&crash_cond);
	pthread_mutex_unlock(&crash_lock);
	pthread_join(threads[0], NULL);
	return 1;
}
