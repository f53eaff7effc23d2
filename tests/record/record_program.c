/*
 * record_program.c - a traced program for the tests in tests/record.
 *
 *   record_program threads THREADS EVENTS [wait]
 *       one event "start" (THREADS, EVENTS), then THREADS threads each trace
 *       EVENTS events "tick" (thread, i) and are joined; with "wait", then
 *       print "traced" and wait until killed.
 *   record_program fork EVENTS SELF
 *       a process tree, each process tracing EVENTS events "event" (role, i)
 *       through one site the parent registered before forking, and
 *       EVENTS events of a site of its own:
 *         parent (role 0) forks child (role 1) and exec-child;
 *         child forks grandchild (role 2);
 *         exec-child execs SELF ("exec" EVENTS): role 3, traced afresh.
 *       Every process prints "ROLE PID" on stdout; the parent waits for all.
 *   record_program exec EVENTS
 *       role 3 of the above.
 *   record_program stdio CODE
 *       copies stdin to stdout, writes "to stderr" on stderr, traces one
 *       event, exits with CODE.
 *   record_program sleep SECONDS
 *       traces one event, prints "traced", sleeps; exits 0 (a signal ends it
 *       with that signal).
 *   record_program notrace CODE
 *       traces nothing, exits with CODE.
 *   record_program spin THREADS
 *       THREADS threads trace "spin" (thread, i) without end, so that at any
 *       instant some ring has a record in the making; once each has traced,
 *       print "traced" and wait until killed.
 *   record_program orphan THREADS
 *       fork a child that runs "spin THREADS"; once it has traced, print
 *       "orphan PID" and exit 0, leaving the child running.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pthread.h>
#include <ringtrace.h>

static const char *role_names[] = {"parent", "child", "grandchild", "exec"};

static void emit(unsigned role, unsigned events)
{
	for (unsigned i = 0; i < events; i++)
		RT_TRACE("event", role, i);
}

static void emit_own(unsigned role, unsigned events)
{
	/* one site per role, registered by that process only */
	for (unsigned i = 0; i < events; i++) {
		switch (role) {
		case 0:
			RT_TRACE("parent only", i);
			break;
		case 1:
			RT_TRACE("child only", i);
			break;
		case 2:
			RT_TRACE("grandchild only", i);
			break;
		default:
			RT_TRACE("exec only", i);
			break;
		}
	}
}

static void say(unsigned role)
{
	printf("%s %d\n", role_names[role], (int)getpid());
	fflush(stdout);
}

static int wait_ok(pid_t pid)
{
	int status = 0;
	if (waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int run_fork(unsigned events, const char *self)
{
	emit(0, events); /* registers the shared site in the parent's arena */
	say(0);
	fflush(NULL);
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		say(1);
		emit(1, events);
		emit_own(1, events);
		fflush(NULL);
		pid_t grandchild = fork();
		if (grandchild < 0)
			_exit(1);
		if (grandchild == 0) {
			say(2);
			emit(2, events);
			emit_own(2, events);
			exit(0);
		}
		exit(wait_ok(grandchild) ? 0 : 1);
	}
	pid_t exec_child = fork();
	if (exec_child < 0)
		return 1;
	if (exec_child == 0) {
		char count[32];
		snprintf(count, sizeof(count), "%u", events);
		execl(self, self, "exec", count, (char *)NULL);
		_exit(127);
	}
	emit_own(0, events);
	int ok = wait_ok(child) & wait_ok(exec_child);
	return ok ? 0 : 1;
}

struct ticker {
	pthread_t thread;
	unsigned index;
	unsigned events;
};

static void *tick(void *arg)
{
	const struct ticker *t = arg;
	for (unsigned i = 0; i < t->events; i++)
		RT_TRACE("tick", t->index, i);
	return NULL;
}

static int run_threads(unsigned threads, unsigned events, int wait)
{
	struct ticker *t = calloc(threads ? threads : 1, sizeof(*t));
	if (!t)
		return 1;
	/* the arena is made here: events of threads racing its creation would be lost */
	RT_TRACE("start", threads, events);
	for (unsigned i = 0; i < threads; i++) {
		t[i].index = i;
		t[i].events = events;
		if (pthread_create(&t[i].thread, NULL, tick, &t[i]) != 0)
			return 1;
	}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i].thread, NULL);
	free(t);
	if (wait) {
		printf("traced\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;
}

static unsigned spinning;

static void *spin(void *arg)
{
	unsigned index = (unsigned)(uintptr_t)arg;
	RT_TRACE("spin", index, 0, 0, 0, (uint64_t)0, (uint64_t)0);
	__atomic_add_fetch(&spinning, 1, __ATOMIC_RELEASE);
	/* six arguments: two slots, the longest time in the making */
	for (unsigned i = 1;; i++)
		RT_TRACE("spin", index, i, i, i, (uint64_t)i, (uint64_t)i);
	return NULL;
}

/* Start the spinning threads; returns once each has traced. */
static int start_spinning(unsigned threads)
{
	for (unsigned i = 0; i < threads; i++) {
		pthread_t t;
		if (pthread_create(&t, NULL, spin, (void *)(uintptr_t)i) != 0)
			return 1;
	}
	while (__atomic_load_n(&spinning, __ATOMIC_ACQUIRE) < threads)
		usleep(1000);
	return 0;
}

static int run_orphan(unsigned threads)
{
	int ready[2];
	if (pipe(ready) != 0)
		return 1;
	fflush(NULL);
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		close(ready[0]);
		if (start_spinning(threads))
			_exit(1);
		char c = 1;
		if (write(ready[1], &c, 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(ready[1]);
	char c;
	if (read(ready[0], &c, 1) != 1)
		return 1;
	printf("orphan %d\n", (int)child);
	return 0;
}

static int run_stdio(int code)
{
	char buf[4096];
	size_t n;
	RT_TRACE("stdio", code);
	while ((n = fread(buf, 1, sizeof(buf), stdin)) > 0)
		fwrite(buf, 1, n, stdout);
	fprintf(stderr, "to stderr\n");
	return code;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && strcmp(argv[1], "threads") == 0 && argc >= 4)
		return run_threads((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]),
				   argc > 4 && strcmp(argv[4], "wait") == 0);
	if (argc == 4 && strcmp(argv[1], "fork") == 0)
		return run_fork((unsigned)atoi(argv[2]), argv[3]);
	if (argc == 3 && strcmp(argv[1], "exec") == 0) {
		unsigned events = (unsigned)atoi(argv[2]);
		say(3);
		emit(3, events);
		emit_own(3, events);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "stdio") == 0)
		return run_stdio(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "sleep") == 0) {
		RT_TRACE("sleeping", atoi(argv[2]));
		printf("traced\n");
		fflush(stdout);
		sleep((unsigned)atoi(argv[2]));
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "notrace") == 0)
		return atoi(argv[2]);
	if (argc == 3 && strcmp(argv[1], "spin") == 0) {
		if (start_spinning((unsigned)atoi(argv[2])))
			return 1;
		printf("traced\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	if (argc == 3 && strcmp(argv[1], "orphan") == 0)
		return run_orphan((unsigned)atoi(argv[2]));
	fprintf(stderr,
		"usage: record_program threads|fork|exec|stdio|sleep|notrace|spin|orphan ...\n");
	return 2;
}
