/*
 * loss_program.c - a traced program whose events are lost in known numbers,
 * for tests/losses/losses.sh.  Every mode prints "emitted N" (the events it
 * traced, all of them, lost or not) on stdout at its end, and only the
 * lines said below besides.
 *
 *   loss_program together THREADS EVENTS
 *       one event "start" in main, then THREADS threads that wait for each
 *       other, each trace EVENTS events "tick" (thread, i), and wait for each
 *       other again before they end: all hold their thread entry (and a ring,
 *       if they found one) at once, so with fewer rings than threads the
 *       threads that found none lose all their events, a known number.
 *   loss_program sites EVENTS
 *       300 sites with a 4 KiB tag each trace EVENTS events: the string
 *       area fills and the sites past it are refused, their events lost.
 *   loss_program stopped-exec LEFT EVENTS
 *       stop the parent (`ringtrace record`) with SIGSTOP; then trace EVENTS
 *       events "image" (LEFT, i) and exec itself with LEFT - 1 while LEFT > 0:
 *       a chain of LEFT + 1 images of one process that record cannot see.
 *       The last image prints "emitted N" (N for the whole chain) and lets
 *       the parent go on with SIGCONT.
 *   loss_program end exit CODE | end segv
 *       main traces, renames itself "renamed-main" and starts a thread that
 *       traces, renames itself "renamed-live" and stays alive; then main
 *       exits with CODE, or crashes with SIGSEGV (a store through a null
 *       pointer).
 *   loss_program end exec HOW FIRST SECOND
 *       traces FIRST events "first", then replaces its image by HOW (execve,
 *       execv, execl, execle, execvp, execlp, execvpe, fexecve, execveat)
 *       with "loss_program end second FIRST SECOND": that image traces
 *       SECOND events "second" and exits 0.
 *   loss_program end exec-busy FIRST SECOND
 *       as exec with execv, while another thread traces "busy" events
 *       without end (how many is not known: the exec ends it), after it
 *       traced at least one.
 *   loss_program end exec-fails EVENTS
 *       traces EVENTS events "first"; then execve, execv, execl and execvp
 *       of a program that does not exist, each failing, and after each
 *       prints "failed exec: end_reason R end_counter C" as the header of
 *       its arena (RINGTRACE_ARENA) says them then; then traces EVENTS
 *       events "second" and exits 0.
 *   loss_program end vfork EVENTS
 *       traces EVENTS events "first"; then a vfork() child execs
 *       "loss_program end child EVENTS", which traces EVENTS events "child"
 *       in an arena of its own and exits 0; once it is reaped, prints
 *       "after vfork: end_reason R end_counter C" as its own arena's header
 *       says them, traces EVENTS events "second" and exits 0.
 *   loss_program end exec-left EVENTS GO
 *       traces one event "main" and forks a child that traces EVENTS events
 *       "child", then execs "loss_program wait GO", which traces nothing,
 *       waits for the file GO (30 s at most) and exits 0; prints "child PID"
 *       and exits 0 at once.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ringtrace.h>
#include <ringtrace/format.h>

static pthread_barrier_t barrier;

struct ticker {
	pthread_t thread;
	unsigned index;
	unsigned events;
};

static void *tick(void *arg)
{
	const struct ticker *t = arg;
	pthread_barrier_wait(&barrier);
	for (unsigned i = 0; i < t->events; i++)
		RT_TRACE("tick", t->index, i);
	pthread_barrier_wait(&barrier);
	return NULL;
}

static int together(unsigned threads, unsigned events)
{
	struct ticker *t = calloc(threads, sizeof(*t));
	if (!t || pthread_barrier_init(&barrier, NULL, threads) != 0)
		return 1;
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
	printf("emitted %llu\n", 1 + (unsigned long long)threads * events);
	return 0;
}

/* 4 KiB of tag: the library keeps at most 4096 bytes of a string */
#define X16 "xxxxxxxxxxxxxxxx"
#define X256 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16
#define X4K X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256
#define SITE(n) RT_TRACE(X4K, n, i)
#define SITES10(n)                                                                                 \
	SITE(n##0);                                                                                \
	SITE(n##1);                                                                                \
	SITE(n##2);                                                                                \
	SITE(n##3);                                                                                \
	SITE(n##4);                                                                                \
	SITE(n##5);                                                                                \
	SITE(n##6);                                                                                \
	SITE(n##7);                                                                                \
	SITE(n##8);                                                                                \
	SITE(n##9)

/* 300 sites of 4 KiB strings: more than the 1 MiB string area holds */
static unsigned long long many_sites(unsigned events)
{
	for (unsigned i = 0; i < events; i++) {
		SITES10(1);
		SITES10(2);
		SITES10(3);
		SITES10(4);
		SITES10(5);
		SITES10(6);
		SITES10(7);
		SITES10(8);
		SITES10(9);
		SITES10(10);
		SITES10(11);
		SITES10(12);
		SITES10(13);
		SITES10(14);
		SITES10(15);
		SITES10(16);
		SITES10(17);
		SITES10(18);
		SITES10(19);
		SITES10(20);
		SITES10(21);
		SITES10(22);
		SITES10(23);
		SITES10(24);
		SITES10(25);
		SITES10(26);
		SITES10(27);
		SITES10(28);
		SITES10(29);
		SITES10(30);
	}
	return 300ull * events;
}

/* Stop the parent (`ringtrace record`) and return once it is stopped (5 s at most). */
static void stop_parent(void)
{
	char path[64], stat[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)getppid());
	kill(getppid(), SIGSTOP);
	for (int tries = 0; tries < 5000; tries++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(stat, 1, sizeof(stat) - 1, f) : 0;
		if (f)
			fclose(f);
		stat[n] = 0;
		const char *state = strrchr(stat, ')');
		if (state && state[1] == ' ' && state[2] == 'T')
			return;
		usleep(1000);
	}
}

static int chain(const char *self, unsigned left, unsigned events, unsigned long long before,
		 int stopped)
{
	if (stopped == 1) {
		stop_parent();
		stopped = 2;
	}
	for (unsigned i = 0; i < events; i++)
		RT_TRACE("image", left, i);
	unsigned long long emitted = before + events;
	if (left == 0) {
		printf("emitted %llu\n", emitted);
		fflush(stdout);
		if (stopped)
			kill(getppid(), SIGCONT);
		return 0;
	}
	char l[32], e[32], b[32], s[8];
	snprintf(l, sizeof(l), "%u", left - 1);
	snprintf(e, sizeof(e), "%u", events);
	snprintf(b, sizeof(b), "%llu", emitted);
	snprintf(s, sizeof(s), "%d", stopped);
	execl(self, self, "exec", l, e, b, s, (char *)NULL);
	return 127;
}

static volatile int live_ready;

static void *live(void *arg)
{
	(void)arg;
	/* named after its first event: its entry took the name it had then */
	RT_TRACE("live");
	pthread_setname_np(pthread_self(), "renamed-live");
	__atomic_store_n(&live_ready, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

static int end(const char *how, int code)
{
	RT_TRACE("main");
	pthread_setname_np(pthread_self(), "renamed-main");
	pthread_t t;
	if (pthread_create(&t, NULL, live, NULL) != 0)
		return 1;
	while (!__atomic_load_n(&live_ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	printf("emitted 2\n");
	fflush(stdout);
	if (strcmp(how, "segv") == 0)
		*(volatile int *)0 = 1;
	exit(code);
}

/* ---- images replaced by exec --------------------------------------------- */

static void trace_n(const char *what, unsigned events)
{
	for (unsigned i = 0; i < events; i++) {
		if (what[0] == 'f')
			RT_TRACE("first", i);
		else if (what[0] == 's')
			RT_TRACE("second", i);
		else
			RT_TRACE("child", i);
	}
}

/* "WHEN: end_reason R end_counter C" as this process's arena header says them now. */
static void print_end(const char *when)
{
	const char *path = getenv("RINGTRACE_ARENA");
	uint32_t reason = UINT32_MAX;
	uint64_t counter = UINT64_MAX;
	int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		if (pread(fd, &reason, sizeof(reason),
			  offsetof(struct rt_arena_header, end_reason)) != sizeof(reason) ||
		    pread(fd, &counter, sizeof(counter),
			  offsetof(struct rt_arena_header, end_counter)) != sizeof(counter))
			reason = UINT32_MAX;
		close(fd);
	}
	printf("%s: end_reason %u end_counter %llu\n", when, (unsigned)reason,
	       (unsigned long long)counter);
	fflush(stdout);
}

static int exec_by(const char *how, const char *self, char *const argv[])
{
	char *const *envp = environ;
	if (strcmp(how, "execve") == 0)
		return execve(self, argv, envp);
	if (strcmp(how, "execv") == 0)
		return execv(self, argv);
	if (strcmp(how, "execl") == 0)
		return execl(self, argv[0], argv[1], argv[2], argv[3], argv[4], (char *)NULL);
	if (strcmp(how, "execle") == 0)
		return execle(self, argv[0], argv[1], argv[2], argv[3], argv[4], (char *)NULL,
			      envp);
	if (strcmp(how, "execvp") == 0)
		return execvp(self, argv);
	if (strcmp(how, "execlp") == 0)
		return execlp(self, argv[0], argv[1], argv[2], argv[3], argv[4], (char *)NULL);
	if (strcmp(how, "execvpe") == 0)
		return execvpe(self, argv, envp);
	if (strcmp(how, "fexecve") == 0) {
		int fd = open(self, O_RDONLY | O_CLOEXEC);
		return fd < 0 ? -1 : fexecve(fd, argv, envp);
	}
	if (strcmp(how, "execveat") == 0)
		return execveat(AT_FDCWD, self, argv, envp, 0);
	fprintf(stderr, "loss_program: no exec called %s\n", how);
	return -1;
}

static void *busy(void *arg)
{
	for (unsigned i = 0;; i++) {
		RT_TRACE("busy", i);
		if (i == 0)
			__atomic_store_n((int *)arg, 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static int exec_image(const char *self, const char *how, const char *first, const char *second)
{
	trace_n("first", (unsigned)atoi(first));
	if (strcmp(how, "exec-busy") == 0) {
		static int started;
		pthread_t t;
		if (pthread_create(&t, NULL, busy, &started) != 0)
			return 1;
		while (!__atomic_load_n(&started, __ATOMIC_ACQUIRE))
			usleep(1000);
		how = "execv";
	}
	fflush(NULL);
	char *argv[] = {(char *)self, "end", "second", (char *)first, (char *)second, NULL};
	exec_by(how, self, argv);
	perror("loss_program: exec");
	return 127;
}

static int second_image(unsigned first, unsigned second)
{
	trace_n("second", second);
	printf("emitted %llu\n", (unsigned long long)first + second);
	return 0;
}

static int exec_fails(unsigned events)
{
	static const char *const hows[] = {"execve", "execv", "execl", "execvp"};
	const char *missing = "/nonexistent/loss_program";
	char *argv[] = {(char *)missing, "end", "second", "0", "0", NULL};
	trace_n("first", events);
	for (size_t i = 0; i < sizeof(hows) / sizeof(hows[0]); i++) {
		exec_by(hows[i], missing, argv);
		print_end("failed exec");
	}
	trace_n("second", events);
	printf("emitted %llu\n", 2ull * events);
	return 0;
}

static int vfork_child(const char *self, const char *events)
{
	trace_n("first", (unsigned)atoi(events));
	fflush(NULL);
	pid_t pid = vfork();
	if (pid == 0) {
		execl(self, self, "end", "child", events, (char *)NULL);
		_exit(127);
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 1;
	print_end("after vfork");
	trace_n("second", (unsigned)atoi(events));
	printf("emitted %llu\n", 3ull * (unsigned)atoi(events));
	return 0;
}

static int exec_left(const char *self, const char *events, const char *go)
{
	RT_TRACE("main");
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		trace_n("child", (unsigned)atoi(events));
		execl(self, self, "wait", go, (char *)NULL);
		_exit(127);
	}
	printf("child %d\n", (int)pid);
	printf("emitted %llu\n", 1ull + (unsigned)atoi(events));
	return 0;
}

static int wait_for(const char *path)
{
	struct stat st;
	for (int waited = 0; stat(path, &st) != 0 && waited < 30000; waited++)
		usleep(1000);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "together") == 0)
		return together((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], "sites") == 0) {
		unsigned long long emitted = many_sites((unsigned)atoi(argv[2]));
		printf("emitted %llu\n", emitted);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "stopped-exec") == 0)
		return chain(argv[0], (unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]), 0, 1);
	if (argc == 6 && strcmp(argv[1], "exec") == 0)
		return chain(argv[0], (unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]),
			     strtoull(argv[4], NULL, 10), atoi(argv[5]));
	if (argc == 6 && strcmp(argv[1], "end") == 0 && strcmp(argv[2], "exec") == 0)
		return exec_image(argv[0], argv[3], argv[4], argv[5]);
	if (argc == 5 && strcmp(argv[1], "end") == 0 && strcmp(argv[2], "exec-busy") == 0)
		return exec_image(argv[0], argv[2], argv[3], argv[4]);
	if (argc == 5 && strcmp(argv[1], "end") == 0 && strcmp(argv[2], "second") == 0)
		return second_image((unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	if (argc == 4 && strcmp(argv[1], "end") == 0 && strcmp(argv[2], "exec-fails") == 0)
		return exec_fails((unsigned)atoi(argv[3]));
	if (argc == 4 && strcmp(argv[1], "end") == 0 && strcmp(argv[2], "vfork") == 0)
		return vfork_child(argv[0], argv[3]);
	if (argc == 4 && strcmp(argv[1], "end") == 0 && strcmp(argv[2], "child") == 0) {
		trace_n("child", (unsigned)atoi(argv[3]));
		return 0;
	}
	if (argc == 5 && strcmp(argv[1], "end") == 0 && strcmp(argv[2], "exec-left") == 0)
		return exec_left(argv[0], argv[3], argv[4]);
	if (argc == 3 && strcmp(argv[1], "wait") == 0)
		return wait_for(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "end") == 0)
		return end(argv[2], argc >= 4 ? atoi(argv[3]) : 0);
	fprintf(stderr, "usage: loss_program together|sites|stopped-exec|end ...\n");
	return 2;
}
