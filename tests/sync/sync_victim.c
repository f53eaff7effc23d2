/*
 * sync_victim.c - the traced program of the RINGTRACE_SYNC tests.
 *
 *   sync_victim record THREADS EVENTS PAUSE_US
 *       THREADS threads each record EVENTS events (0: until killed), one
 *       every PAUSE_US microseconds: RT_TRACE("sync test", t, i, 0, 0, c),
 *       c being the raw counter read just before.  Prints "ready" once
 *       every thread recorded its first event and, when all are done,
 *       "recorded"; then waits for stdin to close and exits normally.
 *   sync_victim thread
 *       RINGTRACE_SYNC and RINGTRACE_ARENA (a disk file) come from the
 *       environment: checks the write-back thread from inside (its name, its
 *       signal mask, that fork leaves it behind, that ringtrace_shutdown
 *       stops it after a last write-back).
 *   sync_victim option-on | option-off | none
 *       ringtrace_init with sync_ms 30 / RINGTRACE_SYNC_OFF / 0, then checks
 *       whether a write-back thread runs and what the header says.
 *
 * Each mode prints what it checked; the exit status is 0 when all held.  A
 * victim never outlives its test: it dies with its parent and after 60 s.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ringtrace.h"
#include "ringtrace/format.h"

#include "../lib/check.h"

#define MAX_THREADS 8

static uint32_t events_per_thread;
static uint32_t pause_us;
static uint32_t threads_ready;

static void pause_for(uint32_t us)
{
	struct timespec ts = {us / 1000000u, (long)(us % 1000000u) * 1000L};
	nanosleep(&ts, NULL);
}

static void *tracer(void *arg)
{
	uint32_t t = (uint32_t)(uintptr_t)arg;
	for (uint32_t i = 0; events_per_thread == 0 || i < events_per_thread; i++) {
		uint64_t c = ringtrace__counter();
		RT_TRACE("sync test", t, i, 0, 0, c);
		if (i == 0)
			__atomic_fetch_add(&threads_ready, 1, __ATOMIC_RELEASE);
		if (pause_us)
			pause_for(pause_us);
	}
	return NULL;
}

static int record(uint32_t nthreads)
{
	if (ringtrace_init(NULL) != 0)
		return 1;
	pthread_t threads[MAX_THREADS];
	for (uint32_t t = 0; t < nthreads; t++)
		pthread_create(&threads[t], NULL, tracer, (void *)(uintptr_t)t);
	while (__atomic_load_n(&threads_ready, __ATOMIC_ACQUIRE) < nthreads)
		pause_for(1000);
	printf("ready\n");
	fflush(stdout);
	for (uint32_t t = 0; t < nthreads; t++)
		pthread_join(threads[t], NULL);
	printf("recorded\n");
	fflush(stdout);
	char buf[64];
	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
	return 0;
}

/* ---- looking at ourselves ---------------------------------------------- */

/* Threads of this process named "ringtrace-sync"; the tid of the last one. */
static int sync_threads(pid_t *tid)
{
	int n = 0;
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], name[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(name, sizeof(name), f) && strcmp(name, "ringtrace-sync\n") == 0) {
			n++;
			*tid = atoi(e->d_name);
		}
		fclose(f);
	}
	closedir(d);
	return n;
}

/* The SigBlk mask of one of our threads. */
static unsigned long long blocked_signals(pid_t tid)
{
	char path[64], line[128];
	unsigned long long mask = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "SigBlk: %llx", &mask) == 1)
			break;
	fclose(f);
	return mask;
}

static struct rt_arena_header read_header(void)
{
	struct rt_arena_header h;
	memset(&h, 0, sizeof(h));
	const char *path = getenv("RINGTRACE_ARENA");
	int fd = path ? open(path, O_RDONLY) : -1;
	if (!CHECK(fd >= 0) || !CHECK(pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h)))
		memset(&h, 0, sizeof(h));
	if (fd >= 0)
		close(fd);
	return h;
}

static uint32_t header_sync_ms(void)
{
	return read_header().sync_ms;
}

/* Wait up to 2 s for there to be `want` of them (a new thread names itself). */
static int sync_threads_become(int want, pid_t *tid)
{
	int n = -1;
	for (int i = 0; i < 200; i++) {
		if ((n = sync_threads(tid)) == want)
			break;
		pause_for(10000);
	}
	return n;
}

static int thread_checks(void)
{
	const char *env = getenv("RINGTRACE_SYNC");
	uint32_t period = env ? (uint32_t)atoi(env) : 0;
	CHECK(period > 0);
	RT_TRACE("sync check start");
	CHECK(ringtrace_enabled());

	pid_t tid = 0;
	int n = sync_threads_become(1, &tid);
	CHECK_EQ(n, 1);
	printf("write-back thread: %d named ringtrace-sync\n", n);
	CHECK_EQ(header_sync_ms(), period);

	/* every signal the kernel lets a thread block, but glibc's own two */
	unsigned long long want = ~0ull;
	int keep[] = {SIGKILL, SIGSTOP, 32, 33};
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		want &= ~(1ull << (keep[i] - 1));
	unsigned long long mask = n == 1 ? blocked_signals(tid) : 0;
	CHECK_EQ(mask & want, want);
	printf("its blocked signals: %016llx\n", mask);

	/* it writes back, periodically */
	uint64_t before = ringtrace__counter();
	int synced = 0;
	for (int i = 0; i < 300 && !synced; i++) {
		pause_for(10000);
		synced = read_header().synced_counter > before;
	}
	CHECK(synced);
	printf("a periodic write-back began after the first event: %s\n", synced ? "yes" : "no");

	/*
	 * A forked child has no write-back thread and closes nothing
	 * (ringtrace_shutdown is what exit's destructor runs; _exit, because
	 * LeakSanitizer at the exit of a child forked from threads is noise).
	 */
	fflush(stdout);
	pid_t child = fork();
	if (child == 0) {
		pid_t ignored;
		int bad = sync_threads(&ignored) != 0;
		ringtrace_shutdown();
		_exit(bad ? 3 : 0);
	}
	int status = -1;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(sync_threads(&tid), 1);
	CHECK_EQ(read_header().state, RT_ARENA_RUNNING);
	printf("after fork: the child had none, the parent still has one\n");

	/* shutdown: a last write-back from the closing thread, and the thread ends */
	uint64_t last = ringtrace__counter();
	ringtrace_shutdown();
	struct rt_arena_header h = read_header();
	CHECK_EQ(h.state, RT_ARENA_CLOSED);
	CHECK(h.synced_counter > last);
	CHECK_EQ(sync_threads_become(0, &tid), 0);
	printf("after ringtrace_shutdown: closed, written back, no write-back thread\n");
	return 0;
}

static int option_checks(int sync_ms, int want_thread)
{
	struct ringtrace_options o;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.sync_ms = sync_ms;
	CHECK_EQ(ringtrace_init(&o), 0);
	pid_t tid;
	int n = sync_threads_become(want_thread, &tid);
	CHECK_EQ(n, want_thread);
	CHECK_EQ(header_sync_ms(), want_thread ? (uint32_t)sync_ms : 0);
	printf("sync_ms %d: %d write-back thread(s), header sync_ms %u\n", sync_ms, n,
	       header_sync_ms());
	return 0;
}

int main(int argc, char **argv)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	alarm(60);
	if (argc == 5 && strcmp(argv[1], "record") == 0) {
		uint32_t nthreads = (uint32_t)atoi(argv[2]);
		events_per_thread = (uint32_t)atoi(argv[3]);
		pause_us = (uint32_t)atoi(argv[4]);
		if (nthreads < 1 || nthreads > MAX_THREADS)
			return 2;
		return record(nthreads);
	}
	if (argc == 2 && strcmp(argv[1], "thread") == 0)
		thread_checks();
	else if (argc == 2 && strcmp(argv[1], "option-on") == 0)
		option_checks(30, 1);
	else if (argc == 2 && strcmp(argv[1], "option-off") == 0)
		option_checks(RINGTRACE_SYNC_OFF, 0);
	else if (argc == 2 && strcmp(argv[1], "none") == 0)
		option_checks(0, 0);
	else {
		fprintf(stderr, "usage: see the top of sync_victim.c\n");
		return 2;
	}
	return check_failure_count() ? 1 : 0;
}
