/*
 * test_crash.c - unit tests of the crash handler's bookkeeping, without a
 * crash (tests/crash/crash.sh crashes for real): which signal actions it
 * takes over and gives back, the alternate signal stacks it hands threads
 * and takes back, how the arena says the process ended on a clean close,
 * that an exec which fails leaves that as it was (tests/losses/losses.sh
 * execs for real), and how RINGTRACE_CRASH_EVENTS and
 * ringtrace_options.crash_events are read.
 *
 * The library starts once per process, so every case runs in a forked child.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/record.h"

#include "../lib/check.h"

static char arena_path[PATH_MAX];

static void program_handler(int sig)
{
	(void)sig;
}

static void set_action(int sig, void (*handler)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static struct sigaction action_of(int sig)
{
	struct sigaction sa;
	sigaction(sig, NULL, &sa);
	return sa;
}

static int is_handler(const struct sigaction *sa, void (*handler)(int))
{
	return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == handler;
}

static int start(void)
{
	struct ringtrace_options o;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.arena_path = arena_path;
	o.buffer_bytes = 4096;
	return CHECK(ringtrace_init(&o) == 0);
}

/* The library's handler on a signal: SA_SIGINFO, on the alternate stack, re-entrant. */
static int taken_over(int sig)
{
	struct sigaction sa = action_of(sig);
	int flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	return (sa.sa_flags & flags) == flags && !is_handler(&sa, SIG_DFL);
}

static int mapped(const void *p)
{
	unsigned char v;
	long page = sysconf(_SC_PAGESIZE);
	void *start_of_page = (void *)((uintptr_t)p & ~((uintptr_t)page - 1));
	return mincore(start_of_page, (size_t)page, &v) == 0;
}

/* ---- cases -------------------------------------------------------------- */

/* Taken over when tracing starts; given back (not the ignored one) at shutdown. */
static void case_actions(void)
{
	set_action(SIGBUS, SIG_IGN);
	set_action(SIGFPE, program_handler);
	struct sigaction segv = action_of(SIGSEGV);
	CHECK(is_handler(&segv, SIG_DFL));
	if (!start())
		return;
	CHECK(taken_over(SIGSEGV));
	CHECK(taken_over(SIGILL));
	CHECK(taken_over(SIGABRT));
	CHECK(taken_over(SIGFPE));
	struct sigaction bus = action_of(SIGBUS);
	CHECK(is_handler(&bus, SIG_IGN));
	ringtrace_shutdown();
	segv = action_of(SIGSEGV);
	CHECK(is_handler(&segv, SIG_DFL));
	struct sigaction fpe = action_of(SIGFPE);
	CHECK(is_handler(&fpe, program_handler));
	bus = action_of(SIGBUS);
	CHECK(is_handler(&bus, SIG_IGN));
	CHECK_EQ(rt_arena.header->end_reason, RT_END_EXIT);
	CHECK(rt_arena.header->end_counter >= rt_arena.header->start.counter);
	CHECK_EQ(rt_arena.header->end_signal, 0);
}

/* A handler the program installs after ours stays, shutdown or not. */
static void case_program_handler_after(void)
{
	if (!start())
		return;
	set_action(SIGSEGV, program_handler);
	ringtrace_shutdown();
	struct sigaction segv = action_of(SIGSEGV);
	CHECK(is_handler(&segv, program_handler));
	CHECK(taken_over(SIGILL) == 0);
}

static void *thread_stack_of(void *arg)
{
	stack_t *out = arg;
	RT_TRACE("attach", 1);
	sigaltstack(NULL, out);
	return NULL;
}

/* Threads that hold their alternate stacks at the same time. */
static pthread_barrier_t together_line;
struct together_arg {
	stack_t stack;
};

static void *thread_stack_together(void *arg)
{
	struct together_arg *out = arg;
	RT_TRACE("attach", 3);
	sigaltstack(NULL, &out->stack);
	pthread_barrier_wait(&together_line);
	return NULL;
}

/*
 * Every thread that traces gets its own alternate stack; when it exits, the
 * stack is kept for a thread that starts later, up to 16 of them, and the
 * rest are unmapped.
 */
static void case_alternate_stacks(void)
{
	if (!start())
		return;
	stack_t main_stack;
	CHECK(sigaltstack(NULL, &main_stack) == 0);
	CHECK(!(main_stack.ss_flags & SS_DISABLE));
	CHECK(main_stack.ss_size >= 64 * 1024);
	stack_t first, second;
	memset(&first, 0, sizeof(first));
	memset(&second, 0, sizeof(second));
	pthread_t t;
	if (!CHECK(pthread_create(&t, NULL, thread_stack_of, &first) == 0))
		return;
	pthread_join(t, NULL);
	CHECK(!(first.ss_flags & SS_DISABLE));
	CHECK(first.ss_sp != main_stack.ss_sp);
	CHECK(first.ss_size >= 64 * 1024);
	CHECK(mapped(first.ss_sp)); /* kept at the thread's exit */
	CHECK(mapped(main_stack.ss_sp));
	/* the next thread takes the kept one */
	if (!CHECK(pthread_create(&t, NULL, thread_stack_of, &second) == 0))
		return;
	pthread_join(t, NULL);
	CHECK(second.ss_sp == first.ss_sp);
	CHECK_EQ(second.ss_size, first.ss_size);

	/* twenty threads that hold their stacks at once: sixteen are kept, four unmapped */
	enum { TOGETHER = 20, KEPT = 16 };
	static struct together_arg args[TOGETHER];
	pthread_t threads[TOGETHER];
	pthread_barrier_init(&together_line, NULL, TOGETHER);
	for (unsigned i = 0; i < TOGETHER; i++)
		if (!CHECK(pthread_create(&threads[i], NULL, thread_stack_together, &args[i]) == 0))
			return;
	unsigned mapped_after = 0, distinct = 0;
	for (unsigned i = 0; i < TOGETHER; i++)
		pthread_join(threads[i], NULL);
	for (unsigned i = 0; i < TOGETHER; i++) {
		CHECK(!(args[i].stack.ss_flags & SS_DISABLE));
		mapped_after += mapped(args[i].stack.ss_sp);
		unsigned same = 0;
		for (unsigned j = 0; j < i; j++)
			same += args[j].stack.ss_sp == args[i].stack.ss_sp;
		distinct += same == 0;
	}
	CHECK_EQ(distinct, TOGETHER);
	CHECK_EQ(mapped_after, KEPT);
	pthread_barrier_destroy(&together_line);
}

static void *thread_with_own_stack(void *arg)
{
	static char own[128 * 1024];
	stack_t ss = {.ss_sp = own, .ss_size = sizeof(own), .ss_flags = 0};
	stack_t *out = arg;
	sigaltstack(&ss, NULL);
	RT_TRACE("attach", 2);
	sigaltstack(NULL, out);
	return NULL;
}

/* A thread that has an alternate stack of its own keeps it. */
static void case_program_stack_kept(void)
{
	if (!start())
		return;
	stack_t seen;
	memset(&seen, 0, sizeof(seen));
	pthread_t t;
	if (!CHECK(pthread_create(&t, NULL, thread_with_own_stack, &seen) == 0))
		return;
	pthread_join(t, NULL);
	CHECK_EQ(seen.ss_size, 128 * 1024);
}

/* RINGTRACE_CRASH_EVENTS and the option: 0 means "from the environment". */
static void case_config(void)
{
	static struct rt_config c;
	struct ringtrace_options o;
	char why[256];
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.crash_events, RT_DEFAULT_CRASH_EVENTS);
	setenv("RINGTRACE_CRASH_EVENTS", "7", 1);
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.crash_events, 7);
	setenv("RINGTRACE_CRASH_EVENTS", "0", 1);
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.crash_events, 0);
	setenv("RINGTRACE_CRASH_EVENTS", "1000", 1);
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.crash_events, 1000);
	o.crash_events = 12; /* options win */
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.crash_events, 12);
	o.crash_events = RINGTRACE_CRASH_EVENTS_NONE;
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.crash_events, 0);
	o.crash_events = 1001;
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "crash_events") != NULL);
	o.crash_events = 0;
	setenv("RINGTRACE_CRASH_EVENTS", "1001", 1);
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), -EINVAL);
	CHECK(strstr(why, "RINGTRACE_CRASH_EVENTS=1001") != NULL);
	setenv("RINGTRACE_CRASH_EVENTS", "-1", 1);
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), -EINVAL);
	/* an options struct from before the field: the environment decides */
	setenv("RINGTRACE_CRASH_EVENTS", "3", 1);
	o.crash_events = 99;
	o.size = offsetof(struct ringtrace_options, crash_events);
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.crash_events, 3);
	unsetenv("RINGTRACE_CRASH_EVENTS");
}

/* A forked child of a tracing process inherits the handlers, and they stay harmless there. */
/* The ring's default size follows the mode; an explicit size wins in both. */
static void case_ring_default_by_mode(void)
{
	static struct rt_config c;
	struct ringtrace_options o;
	char why[256];
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	unsetenv("RINGTRACE_BUFFER");
	unsetenv("RINGTRACE_MODE");
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.ring_bytes, RT_DEFAULT_RING_BYTES);
	setenv("RINGTRACE_MODE", "stream", 1);
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.mode, RT_MODE_STREAM);
	CHECK_EQ(c.ring_bytes, RT_DEFAULT_STREAM_RING_BYTES);
	setenv("RINGTRACE_BUFFER", "64K", 1);
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.ring_bytes, 65536);
	unsetenv("RINGTRACE_BUFFER");
	unsetenv("RINGTRACE_MODE");
	o.mode = RT_MODE_STREAM;
	o.buffer_bytes = 8192;
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.ring_bytes, 8192);
	o.buffer_bytes = 0;
	CHECK_EQ(rt_config_load(&c, &o, why, sizeof(why)), 0);
	CHECK_EQ(c.ring_bytes, RT_DEFAULT_STREAM_RING_BYTES);
}

static void case_fork_child_keeps_handlers(void)
{
	if (!start())
		return;
	RT_TRACE("parent", 1);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		/* the child's exit must not touch the parent's handlers' arena */
		_exit(taken_over(SIGSEGV) ? 0 : 1);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(rt_arena.header->end_reason, RT_END_UNKNOWN);
}

/* An exec that fails leaves the end another writer wrote as it was: a signal's here. */
static void case_failed_exec_keeps_signal(void)
{
	if (!start())
		return;
	RT_TRACE("before", 1);
	struct rt_arena_header *h = rt_arena.header;
	/* as the crash handler leaves it when the program's own handler took the signal over */
	__atomic_store_n(&h->end_signal, SIGUSR1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->end_counter, 42, __ATOMIC_RELAXED);
	__atomic_store_n(&h->end_reason, (uint32_t)RT_END_SIGNAL, __ATOMIC_RELEASE);
	char *argv[] = {"missing", NULL};
	CHECK_EQ(execv("/nonexistent/missing", argv), -1);
	CHECK_EQ(errno, ENOENT);
	CHECK_EQ(h->end_reason, RT_END_SIGNAL);
	CHECK_EQ(h->end_counter, 42);
	CHECK_EQ(h->end_signal, SIGUSR1);
}

static volatile sig_atomic_t handler_errno;

static void exec_in_handler(int sig)
{
	(void)sig;
	char *argv[] = {"missing", NULL};
	char *envp[] = {NULL};
	int saved = errno;
	execve("/nonexistent/missing", argv, envp);
	handler_errno = errno;
	errno = saved;
}

/* execve is async-signal-safe: one that fails in a handler leaves the header as it was. */
static void case_failed_exec_in_handler(void)
{
	if (!start())
		return;
	RT_TRACE("before", 1);
	set_action(SIGUSR1, exec_in_handler);
	raise(SIGUSR1);
	CHECK_EQ(handler_errno, ENOENT);
	CHECK_EQ(rt_arena.header->end_reason, RT_END_UNKNOWN);
	CHECK_EQ(rt_arena.header->end_counter, 0);
	CHECK_EQ(rt_arena.header->state, RT_ARENA_RUNNING);
}

/* After a shutdown the arena is closed: an exec, failed or not, writes nothing into it. */
static void case_exec_after_shutdown(void)
{
	if (!start())
		return;
	RT_TRACE("before", 1);
	ringtrace_shutdown();
	uint64_t end = rt_arena.header->end_counter;
	char *argv[] = {"missing", NULL};
	CHECK_EQ(execvp("/nonexistent/missing", argv), -1);
	CHECK_EQ(rt_arena.header->end_reason, RT_END_EXIT);
	CHECK_EQ(rt_arena.header->end_counter, end);
}

static const struct {
	const char *name;
	void (*run)(void);
} cases[] = {
    {"actions", case_actions},
    {"program_handler_after", case_program_handler_after},
    {"alternate_stacks", case_alternate_stacks},
    {"program_stack_kept", case_program_stack_kept},
    {"config", case_config},
    {"ring_default_by_mode", case_ring_default_by_mode},
    {"fork_child_keeps_handlers", case_fork_child_keeps_handlers},
    {"failed_exec_keeps_signal", case_failed_exec_keeps_signal},
    {"failed_exec_in_handler", case_failed_exec_in_handler},
    {"exec_after_shutdown", case_exec_after_shutdown},
};

int main(void)
{
	char dir[] = "/tmp/ringtrace-test-crash.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	int failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(arena_path, sizeof(arena_path), "%s/%s.arena", dir, cases[i].name);
		fflush(NULL);
		pid_t pid = fork();
		if (pid == 0) {
			unsetenv("RINGTRACE_CRASH_EVENTS");
			cases[i].run();
			exit(check_failure_count() ? 1 : 0);
		}
		int status = 0;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
		printf("%s %s\n", ok ? "PASS" : "FAIL", cases[i].name);
		failed += !ok;
		unlink(arena_path);
	}
	rmdir(dir);
	printf("%d failed\n", failed);
	return failed ? 1 : 0;
}
