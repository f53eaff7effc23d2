/*
 * first_event.c - what a new thread's first RT_TRACE costs: the slow path
 * that gives the thread its thread-table entry and a ring it never had.
 *
 *     bench_first_event DIR RING_BYTES flight|stream SAMPLES
 *
 * Each sample is one thread that times its first RT_TRACE, and nothing
 * else, with the monotonic clock (measure.h), then exits.  The threads run
 * one after the other, in child processes of PER_PROCESS threads each: a
 * child starts tracing into an arena of its own under DIR (rings of
 * RING_BYTES, one more ring than threads, so that every thread takes a ring
 * that no thread had before, as the threads of a growing server do), records
 * one event from its main thread so that the arena already exists, runs its
 * threads, and deletes its arena.  A warm-up thread before the timed ones
 * takes the library's first-time costs that are not a thread's.
 * Prints, in nanoseconds:
 *   first_p50, first_p99, first_max   over all SAMPLES threads
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ringtrace.h>

#include "measure.h"

#define PER_PROCESS 16u
#define SAMPLES_MAX 100000u

/* The samples, shared with the children that take them. */
static double *samples;

static void *timed_thread(void *arg)
{
	double *out = arg;
	uint64_t start = bench_now_ns();
	RT_TRACE("first event", 1);
	uint64_t end = bench_now_ns();
	if (out)
		*out = (double)(end - start);
	return NULL;
}

static int run_thread(double *out)
{
	pthread_t t;
	if (pthread_create(&t, NULL, timed_thread, out) != 0)
		return -1;
	return pthread_join(t, NULL) == 0 ? 0 : -1;
}

/* One child: its own arena, `count` timed threads into samples[first...]. */
static int child(const char *dir, uint64_t ring_bytes, int mode, unsigned first, unsigned count)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/first-event.%d.arena", dir, (int)getpid());
	struct ringtrace_options options = {.size = sizeof(options),
					    .arena_path = path,
					    .buffer_bytes = ring_bytes,
					    .mode = mode,
					    .rings = PER_PROCESS + 2,
					    .crash_events = RINGTRACE_CRASH_EVENTS_NONE,
					    .sync_ms = RINGTRACE_SYNC_OFF};
	int err = ringtrace_init(&options);
	if (err) {
		fprintf(stderr, "bench_first_event: ringtrace_init failed (%d)\n", err);
		return 1;
	}
	RT_TRACE("first event", 0); /* the main thread's: the arena exists from here on */
	int status = run_thread(NULL);
	for (unsigned i = 0; status == 0 && i < count; i++)
		status = run_thread(&samples[first + i]);
	if (!ringtrace_enabled())
		status = -1;
	ringtrace_shutdown();
	unlink(path);
	return status == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s DIR RING_BYTES flight|stream SAMPLES\n", argv[0]);
		return 2;
	}
	uint64_t ring_bytes = strtoull(argv[2], NULL, 0);
	int mode = strcmp(argv[3], "stream") == 0   ? RINGTRACE_STREAM
		   : strcmp(argv[3], "flight") == 0 ? RINGTRACE_FLIGHT
						    : 0;
	unsigned n = (unsigned)strtoul(argv[4], NULL, 0);
	if (ring_bytes < 4096 || (ring_bytes & (ring_bytes - 1)) || !mode || n == 0 ||
	    n > SAMPLES_MAX) {
		fprintf(stderr, "%s: RING_BYTES a power of two >= 4096, a mode, 1..%u samples\n",
			argv[0], SAMPLES_MAX);
		return 2;
	}
	samples = mmap(NULL, n * sizeof(double), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
		       -1, 0);
	if (samples == MAP_FAILED) {
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	for (unsigned first = 0; first < n; first += PER_PROCESS) {
		unsigned count = n - first < PER_PROCESS ? n - first : PER_PROCESS;
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "%s: fork: %s\n", argv[0], strerror(errno));
			return 1;
		}
		if (pid == 0)
			_exit(child(argv[1], ring_bytes, mode, first, count));
		int status;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0) {
			fprintf(stderr, "%s: a child failed\n", argv[0]);
			return 1;
		}
	}
	double p50 = bench_quantile(samples, n, 0.50);
	double p99 = bench_quantile(samples, n, 0.99);
	double max = bench_quantile(samples, n, 1.0);
	bench_note("first RT_TRACE of a thread, %s mode, ring %llu bytes, %u threads: "
		   "p50 %.1f us, p99 %.1f us, max %.1f us",
		   argv[3], (unsigned long long)ring_bytes, n, p50 / 1e3, p99 / 1e3, max / 1e3);
	bench_result("first_p50", p50);
	bench_result("first_p99", p99);
	bench_result("first_max", max);
	return 0;
}
