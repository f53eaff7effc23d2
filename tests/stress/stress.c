/*
 * stress.c - many threads, many events, then the real `ringtrace dump
 * --json` on the arena: every event must be accounted for (check_dump.c).
 *
 *   stress --tool PATH [--mode flight|stream] [--threads N] [--rings N]
 *          [--together N] [--events N] [--buffer BYTES] [--dir DIR --room BYTES]
 *
 * A child process records (so the arena is written and closed by a process
 * that then exits, as in real use); this process runs the tool and checks
 * its output.  Thread t emits about --events events (each thread a
 * different count, up to a quarter fewer, so that counts cannot be swapped
 * unnoticed); --together threads run at a time, each group joined before the
 * next starts, so with more threads than --rings later groups take over the
 * rings of earlier ones.
 *
 * --dir puts the arena in DIR; --room then fills DIR's file system, once the
 * arena exists, until only BYTES are free (a ballast file, removed before
 * the dump), so that the rings run out of pages while the threads trace:
 * they must lose events, counted, and never die of a SIGBUS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ringtrace.h"

#include "../lib/check.h"
#include "check_dump.h"

#define MAX_THREADS 256

struct options {
	const char *tool;
	int mode;
	uint32_t threads, rings, together, events;
	uint64_t buffer;
	const char *dir; /* where the arena goes (default: a new directory in /tmp) */
	uint64_t room;	 /* with dir: bytes left free once the arena exists, 0: no limit */
};

/* Written by the recording child, read by this process: shared memory. */
struct shared {
	uint32_t small_line, large_line;
	struct stress_thread threads[MAX_THREADS];
};

static struct shared *shared;

/* The trace sites.  Each tells the checker its line, once per thread. */
static void emit_small(uint32_t t, uint32_t i)
{
	RT_TRACE("stress", t, i);
	if (i == 0)
		__atomic_store_n(&shared->small_line, __LINE__ - 2, __ATOMIC_RELAXED);
}

static void emit_large(uint32_t t, uint32_t i)
{
	RT_TRACE("stress6", t, i, ~i, -(int32_t)t - 1, (uint64_t)i << 20 | t, -(int64_t)i);
	if (i == 7)
		__atomic_store_n(&shared->large_line, __LINE__ - 2, __ATOMIC_RELAXED);
}

static void *emitter(void *arg)
{
	struct stress_thread *x = arg;
	uint32_t t = (uint32_t)(x - shared->threads);
	x->tid = (pid_t)syscall(SYS_gettid);
	ringtrace_set_thread_name(x->name);
	for (uint32_t i = 0; i < x->events; i++) {
		if (stress_is_large(i))
			emit_large(t, i);
		else
			emit_small(t, i);
	}
	return NULL;
}

static double seconds_since(const struct timespec *start)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - start->tv_sec) + (double)(now.tv_nsec - start->tv_nsec) / 1e9;
}

/* The recording child: returns its exit status. */
static int record(const struct options *o, const char *arena)
{
	struct ringtrace_options ro = {.size = sizeof(ro),
				       .arena_path = arena,
				       .buffer_bytes = o->buffer,
				       .mode = o->mode,
				       .rings = o->rings};
	if (ringtrace_init(&ro) != 0)
		return 3;
	char ballast[4200];
	if (o->room) {
		struct statvfs fs;
		snprintf(ballast, sizeof(ballast), "%s/ballast", o->dir);
		int fd = open(ballast, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || fstatvfs(fd, &fs) != 0 ||
		    (uint64_t)fs.f_bavail * fs.f_frsize <= o->room ||
		    posix_fallocate(fd, 0,
				    (off_t)((uint64_t)fs.f_bavail * fs.f_frsize - o->room)) != 0) {
			perror("the ballast file");
			return 4;
		}
		close(fd);
	}
	static pthread_t threads[MAX_THREADS];
	for (uint32_t first = 0; first < o->threads; first += o->together) {
		uint32_t end = first + o->together < o->threads ? first + o->together : o->threads;
		for (uint32_t t = first; t < end; t++)
			pthread_create(&threads[t], NULL, emitter, &shared->threads[t]);
		for (uint32_t t = first; t < end; t++)
			pthread_join(threads[t], NULL);
	}
	if (o->room)
		unlink(ballast);
	return 0;
}

/* Runs `TOOL dump --json ARENA` and feeds every line to the checker. */
static void check_with_tool(const struct options *o, const char *arena, const char *errors,
			    struct dump_check *check)
{
	int out[2];
	if (pipe(out) != 0) {
		perror("pipe");
		exit(2);
	}
	pid_t pid = fork();
	if (pid == 0) {
		int err = open(errors, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(out[1], STDOUT_FILENO);
		dup2(err, STDERR_FILENO);
		close(out[0]);
		close(out[1]);
		execl(o->tool, o->tool, "dump", "--json", arena, (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", o->tool, strerror(errno));
		_exit(127);
	}
	close(out[1]);
	FILE *f = fdopen(out[0], "r");
	char *text = NULL;
	size_t size = 0;
	ssize_t n;
	uint64_t number = 0;
	while ((n = getline(&text, &size, f)) > 0) {
		number++;
		if (!CHECK(text[n - 1] == '\n'))
			continue;
		text[n - 1] = 0;
		struct dump_line line;
		char why[256];
		if (dump_json_parse(text, &line, why, sizeof(why)) != 0) {
			check_fail(__FILE__, __LINE__, "dump line %llu: %s: %.200s",
				   (unsigned long long)number, why, text);
			continue;
		}
		dump_check_line(check, &line);
	}
	free(text);
	fclose(f);
	int status;
	waitpid(pid, &status, 0);
	if (!CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		fprintf(stderr, "  %s dump --json %s: status 0x%x; its stderr:\n", o->tool, arena,
			status);
		char cmd[4200];
		snprintf(cmd, sizeof(cmd), "cat '%s' >&2", errors);
		if (system(cmd) != 0)
			fprintf(stderr, "  (cannot show it)\n");
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: stress --tool PATH [--mode flight|stream] [--threads N] "
			"[--rings N] [--together N] [--events N] [--buffer BYTES] "
			"[--dir DIR --room BYTES]\n");
	exit(2);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
	    {"tool", required_argument, NULL, 't'},	{"mode", required_argument, NULL, 'm'},
	    {"threads", required_argument, NULL, 'n'},	{"rings", required_argument, NULL, 'r'},
	    {"together", required_argument, NULL, 'g'}, {"events", required_argument, NULL, 'e'},
	    {"buffer", required_argument, NULL, 'b'},	{"dir", required_argument, NULL, 'd'},
	    {"room", required_argument, NULL, 'R'},	{NULL, 0, NULL, 0},
	};
	*o = (struct options){NULL, RINGTRACE_FLIGHT, 4, 64, 0, 2000000, 1 << 20, NULL, 0};
	int c;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 't':
			o->tool = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "flight") == 0)
				o->mode = RINGTRACE_FLIGHT;
			else if (strcmp(optarg, "stream") == 0)
				o->mode = RINGTRACE_STREAM;
			else
				usage();
			break;
		case 'n':
			o->threads = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'r':
			o->rings = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'g':
			o->together = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'e':
			o->events = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'b':
			o->buffer = strtoull(optarg, NULL, 10);
			break;
		case 'd':
			o->dir = optarg;
			break;
		case 'R':
			o->room = strtoull(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (!o->tool || optind != argc || o->threads < 1 || o->threads > MAX_THREADS ||
	    o->rings < 1 || o->events < 16 || o->buffer < 4096 || (o->room && !o->dir))
		usage();
	if (o->together == 0 || o->together > o->threads)
		o->together = o->threads;
}

int main(int argc, char **argv)
{
	struct options o;
	parse_options(argc, argv, &o);
	shared =
	    mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	for (uint32_t t = 0; t < o.threads; t++) {
		struct stress_thread *x = &shared->threads[t];
		x->events = o.events - (uint32_t)(((uint64_t)t * 7919) % (o.events / 4 + 1));
		snprintf(x->name, sizeof(x->name), "stress-%u", t % 1000);
	}
	char dir[] = "/tmp/ringtrace-stress.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	char arena[4200], errors[sizeof(dir) + 16];
	snprintf(arena, sizeof(arena), "%s/stress.arena", o.dir ? o.dir : dir);
	snprintf(errors, sizeof(errors), "%s/dump.stderr", dir);

	struct timespec start;
	clock_gettime(CLOCK_MONOTONIC, &start);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		exit(record(&o, arena)); /* exit: the library closes the arena */
	int status;
	waitpid(pid, &status, 0);
	double record_seconds = seconds_since(&start);
	if (!CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		fprintf(stderr, "recording child: status 0x%x\n", status);
	} else {
		uint64_t ring_bytes = 1;
		while (ring_bytes <= o.buffer / 2)
			ring_bytes *= 2;
		struct stress_run run = {
		    .mode = o.mode,
		    .ring_slots = ring_bytes / 32,
		    .own_rings = o.threads <= o.rings,
		    .limited_room = o.room != 0,
		    .file = __FILE__,
		    .small_line = shared->small_line,
		    .large_line = shared->large_line,
		    .nthreads = o.threads,
		    .threads = shared->threads,
		};
		clock_gettime(CLOCK_MONOTONIC, &start);
		struct dump_check *check = dump_check_begin(&run);
		check_with_tool(&o, arena, errors, check);
		int failed = dump_check_end(check);
		check_failures += failed;
		printf("recorded in %.2f s, dumped and checked in %.2f s\n", record_seconds,
		       seconds_since(&start));
	}
	unlink(arena);
	unlink(errors);
	rmdir(dir);
	int failed = check_failure_count() != 0;
	printf("%d passed, %d failed\n", !failed, failed);
	return failed;
}
