/*
 * forks_program.c - children made without fork()'s handlers, for forks.sh.
 *
 *   forks_program HOW EVENTS [SELF]
 *       the parent traces EVENTS events "parent" (0, i), makes a child, waits
 *       for it, then traces EVENTS more "parent" (1, i); the child traces
 *       EVENTS events "child" (2, i) and _exits.  HOW makes the child:
 *         _Fork   glibc's _Fork(), which runs no pthread_atfork handler;
 *         clone   a clone system call through syscall(), without CLONE_VM
 *                 (SIGCHLD only) and with no stack of the child's own;
 *         clone-fn   glibc's clone(): the child runs a function on a stack
 *                 of its own, without CLONE_VM;
 *         clone3  a clone3 system call through syscall(), as clone;
 *         SYS_fork   a fork system call through syscall() (x86-64 only);
 *         vfork   vfork(): the child runs on the parent's memory;
 *         vfork-exec   vfork(), and the child execs SELF ("none") after tracing;
 *         vfork-nested   vfork(); the child traces its events, raises SIGUSR1
 *                 (its handler traces one "handler" (3, 0)), then makes a
 *                 vfork child of its own that traces EVENTS "grandchild"
 *                 (4, i) and _exits, waits for it and _exits;
 *         vfork-quiet   vfork(); the child traces nothing and _exits.
 *       Every process prints "ROLE PID" on stdout (a child before it traces),
 *       and the parent "made PID", its child's pid, once the child ended.
 *   forks_program none
 *       traces nothing, exits 0.
 *
 * Built with FORKS_FUNCTIONS (forks_preloaded), the program is not linked
 * with the library but compiled with -finstrument-functions, for `record`
 * to preload the library: each event is then a call of event(), one
 * function entry and exit.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef FORKS_FUNCTIONS
__attribute__((noinline)) static void event(unsigned what, unsigned i)
{
	__asm__ volatile("" : : "r"(what), "r"(i));
}
#define TRACE(tag, what, i) event(what, i)
#else
#include <ringtrace.h>
#define TRACE(tag, what, i) RT_TRACE(tag, what, i)
#endif

/*
 * Async-signal-safe: a child of _Fork or clone may not use stdio.  Never
 * inlined, as no function the children call: the function hooks of an
 * inlined function are given its caller's call site (functions.c), and
 * the calls a child makes must be those a _Fork child makes.
 */
__attribute__((noinline)) static void say_pid(const char *role, pid_t pid)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%s %d\n", role, (int)pid);
	if (n > 0 && write(1, line, (size_t)n) != n)
		_exit(3);
}

__attribute__((noinline)) static void say(const char *role)
{
	say_pid(role, getpid());
}

__attribute__((noinline)) static void child_traces(unsigned events)
{
	say("child");
	for (unsigned i = 0; i < events; i++)
		TRACE("child", 2, i);
}

static void on_usr1(int sig)
{
	(void)sig;
	TRACE("handler", 3, 0);
}

/* vfork-nested's child, after its own events. */
__attribute__((noinline)) static void child_nests(unsigned events)
{
	signal(SIGUSR1, on_usr1);
	raise(SIGUSR1);
	pid_t pid = vfork();
	if (pid == 0) {
		say("grandchild");
		for (unsigned i = 0; i < events; i++)
			TRACE("grandchild", 4, i);
		_exit(0);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
		_exit(4);
}

static int clone_child(void *events)
{
	child_traces(*(unsigned *)events);
	return 0;
}

static pid_t make_child(const char *how, unsigned events, const char *self)
{
	pid_t pid;
	if (strcmp(how, "_Fork") == 0) {
		pid = _Fork();
	} else if (strcmp(how, "clone") == 0) {
		pid = (pid_t)syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	} else if (strcmp(how, "clone-fn") == 0) {
		/*
		 * The function hooks look up to 4 KiB above a frame for its return
		 * address (functions.c): the child's stack starts below that much of
		 * the array, never at the end of the program's memory.
		 */
		static char stack[256 * 1024] __attribute__((aligned(16)));
		return clone(clone_child, stack + sizeof(stack) - 4096, SIGCHLD, &events);
	} else if (strcmp(how, "clone3") == 0) {
		/* struct clone_args, first version: flags, pidfd, child_tid, parent_tid,
		   exit_signal, stack, stack_size, tls */
		uint64_t args[8] = {0, 0, 0, 0, SIGCHLD, 0, 0, 0};
		pid = (pid_t)syscall(SYS_clone3, args, sizeof(args));
#ifdef SYS_fork
	} else if (strcmp(how, "SYS_fork") == 0) {
		pid = (pid_t)syscall(SYS_fork);
#endif
	} else if (strcmp(how, "vfork-quiet") == 0) {
		pid = vfork();
		if (pid == 0)
			_exit(0);
		return pid;
	} else if (strncmp(how, "vfork", 5) == 0) {
		pid = vfork();
		if (pid == 0) {
			child_traces(events);
			if (strcmp(how, "vfork-exec") == 0 && self)
				execl(self, self, "none", (char *)NULL);
			else if (strcmp(how, "vfork-nested") == 0)
				child_nests(events);
			_exit(0);
		}
		return pid;
	} else {
		return -2;
	}
	if (pid == 0) {
		child_traces(events);
		_exit(0);
	}
	return pid;
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "none") == 0)
		return 0;
	if (argc < 3) {
		fprintf(stderr,
			"usage: forks_program "
			"_Fork|clone|clone-fn|clone3|SYS_fork|vfork|vfork-exec|vfork-nested|"
			"vfork-quiet EVENTS "
			"[SELF]\n");
		return 2;
	}
	unsigned events = (unsigned)strtoul(argv[2], NULL, 10);
	for (unsigned i = 0; i < events; i++)
		TRACE("parent", 0, i);
	say("parent");
	pid_t child = make_child(argv[1], events, argc > 3 ? argv[3] : NULL);
	if (child < 0) {
		fprintf(stderr, "forks_program: cannot make a child with %s\n", argv[1]);
		return 1;
	}
	int status = 0;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "forks_program: the child failed (status %d)\n", status);
		return 1;
	}
	say_pid("made", child);
	for (unsigned i = 0; i < events; i++)
		TRACE("parent", 1, i);
	return 0;
}
