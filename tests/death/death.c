/*
 * death.c - the record survives any death of the traced process.
 *
 *   death kill     --tool T --victim V [--mode flight|stream] [--drain] [--runs N]
 *   death crash    --tool T --victim V --how abort|segv|fork [--runs N]
 *   death deadlock --tool T --victim V [--mode flight|stream] [--rings N]
 *   death ringless --tool T --victim V [--runs N]
 *   death torn     --tool T --victim V
 *   death rejects  --tool T --victim V
 *   death oom      --tool T --victim V
 * and for every one [--seed S] [--first K] [--threads N].
 *
 * kill      the victim's threads trace flat out; once the arena shows each of
 *           them recording, a random delay later it gets SIGKILL.  --drain
 *           (stream mode) moves every ring's tail while it runs, as a
 *           collector would, so that its rings keep taking records.
 * crash     tracer 0 of the victim calls abort(), writes through a null
 *           pointer, or (fork) is a child forked before anything was traced
 *           that calls _exit() while its siblings trace; random moments too.
 * deadlock  threads deadlock on two mutexes and a condition variable while
 *           a busy thread traces; killed with -9, each stuck thread's last
 *           event must be listed as its last (text and JSON); in stream
 *           mode, or with fewer rings than threads, where no ring keeps it.
 * ringless  SIGKILL at random moments while the victim's tracers have no
 *           ring: each must still show its last event, kept in its thread
 *           entry.
 * torn      a SIGKILLed arena is edited to hold what a writer that died in
 *           the middle of a record leaves behind, four ways; each must give
 *           one `torn` loss and never that record as an event.
 * rejects   the check of kill and crash must fail on a dump with an event
 *           removed, duplicated, reordered or altered.
 * oom       the OOM killer: only with a memory cgroup to run the victim in.
 *
 * After every death the real `ringtrace dump --json` is checked against the
 * arena (check_survivors.h).  Random choices come from --seed (default: the
 * clock), printed first; run K uses seed + K, so `--seed S --first K
 * --runs 1` replays run K alone.  DEATH_KEEP=1 keeps the arenas.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/check.h"
#include "../stress/dump_json.h"
#include "arena_file.h"
#include "check_survivors.h"
#include "death_pattern.h"

#define SKIPPED 77 /* ctest SKIP_RETURN_CODE */

struct options {
	const char *what;
	const char *tool, *victim, *how;
	int mode;
	int drain;
	uint32_t runs, first, threads;
	uint32_t rings; /* deadlock: RINGTRACE_RINGS for the victim, 0: its default */
	uint64_t seed;
};

static char dir[64];
static char command_line[4096]; /* how this test was started, without --seed --first --runs */
static int keep;
static int failed_checks; /* those counted by check_survivors.c */

/* ---- small helpers ------------------------------------------------------ */

/* splitmix64: the run's random choices, replayable from its seed */
static uint64_t next_random(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double uniform(uint64_t *state)
{
	return (double)(next_random(state) >> 11) / 9007199254740992.0;
}

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_us(double us)
{
	struct timespec t = {(time_t)(us / 1e6), (long)(fmod(us, 1e6) * 1000)};
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

static const char *mode_name(int mode)
{
	return mode == RT_MODE_STREAM ? "stream" : "flight";
}

static void remove_file(const char *path)
{
	if (!keep)
		unlink(path);
}

/* The test's directory and whatever a failed run left in it. */
static void remove_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		char name[512];
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(name, sizeof(name), "%s/%s", path, e->d_name);
		unlink(name);
	}
	if (d)
		closedir(d);
	if (rmdir(path) != 0)
		fprintf(stderr, "%s: %s (left behind)\n", path, strerror(errno));
}

/* Start the victim with argv; its stdout goes to *out_fd when out_fd is given. */
static pid_t spawn_victim(char *const argv[], int *out_fd)
{
	int p[2] = {-1, -1};
	if (out_fd && pipe2(p, O_CLOEXEC) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		if (out_fd)
			dup2(p[1], STDOUT_FILENO);
		/* the crash handler, where there is one, need not print: the test reads the arena
		 */
		setenv("RINGTRACE_CRASH_EVENTS", "0", 1);
		/* under ASan, die of the signal itself rather than of ASan's report */
		char sanitizer[512];
		const char *given = getenv("ASAN_OPTIONS");
		snprintf(sanitizer, sizeof(sanitizer), "%s%shandle_segv=0:handle_abort=0",
			 given ? given : "", given && *given ? ":" : "");
		setenv("ASAN_OPTIONS", sanitizer, 1);
		/* its threads spin: this process (the timer, the collector) must still run */
		if (nice(10) == -1)
			perror("nice");
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (out_fd) {
		close(p[1]);
		*out_fd = p[0];
	}
	return pid;
}

static int reap(pid_t pid)
{
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return status;
}

static void kill_and_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	reap(pid);
}

static void describe_status(char *buf, size_t size, int status)
{
	if (WIFSIGNALED(status))
		snprintf(buf, size, "killed by signal %d", WTERMSIG(status));
	else if (WIFEXITED(status))
		snprintf(buf, size, "exit status %d", WEXITSTATUS(status));
	else
		snprintf(buf, size, "wait status 0x%x", status);
}

/* Threads named victim-* that recorded min_records (or lost them for want of a ring). */
static uint32_t tracers_under_way(const struct arena_file *a, uint64_t min_records)
{
	uint32_t ready = 0, used = arena_threads_used(a);
	for (uint32_t k = 0; k < used; k++) {
		const struct rt_thread_entry *e = arena_thread(a, k);
		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != RT_THREAD_LIVE ||
		    strncmp(e->name, "victim-", 7) != 0)
			continue;
		uint64_t done = __atomic_load_n(&e->lost_no_ring, __ATOMIC_RELAXED);
		if (e->ring < a->header->ring_count) {
			struct ring_words w;
			arena_ring_words(a, e->ring, &w);
			done += w.records;
		}
		ready += done >= min_records;
	}
	return ready;
}

/*
 * Wait until the victim's arena shows `tracers` threads named victim-*, each
 * with at least min_records records (or events lost for want of a ring):
 * proof it is tracing.  Leaves the arena
 * mapped in *a (writable if asked).  Returns 0, or -1 if the victim died or
 * nothing happened within 30 s.
 */
static int wait_tracing(pid_t pid, const char *arena, uint32_t tracers, uint64_t min_records,
			int writable, struct arena_file *a)
{
	char why[512] = "";
	/* generous: a sanitizer build beside other tests can take seconds to start */
	double deadline = now_seconds() + 30;
	int opened = 0;
	while (now_seconds() < deadline) {
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			char what[64];
			describe_status(what, sizeof(what), status);
			fprintf(stderr, "victim died before it traced: %s\n", what);
			if (opened)
				arena_file_close(a);
			return -1;
		}
		if (!opened) {
			int rc = arena_file_open(a, arena, writable, why, sizeof(why));
			if (rc == -1)
				break;
			opened = rc == 0;
		}
		if (opened && tracers_under_way(a, min_records) >= tracers)
			return 0;
		sleep_us(100);
	}
	fprintf(stderr, "victim did not start tracing within 30 s %s\n", why);
	if (opened)
		arena_file_close(a);
	return -1;
}

/* ---- a collector, for stream mode: consumes whatever the rings hold ---- */

struct collector {
	struct arena_file *arena;
	int stop;
	pthread_t thread;
	uint64_t passes, consumed; /* slots it let the writers reuse */
};

static void *collector_main(void *arg)
{
	struct collector *c = arg;
	const struct rt_arena_header *h = c->arena->header;
	while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
		for (uint32_t r = 0; r < h->ring_count; r++) {
			struct rt_ring_desc *d = arena_ring(c->arena, r);
			if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) != RT_RING_OWNED)
				continue;
			uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
			uint64_t tail = __atomic_load_n(&d->tail, __ATOMIC_RELAXED);
			/* publishes: these slots are consumed, the writer may reuse them */
			__atomic_store_n(&d->tail, head, __ATOMIC_RELEASE);
			c->consumed += head - tail;
		}
		c->passes++;
		sched_yield();
	}
	return NULL;
}

/* ---- kill: SIGKILL at random moments ---------------------------------- */

static int run_kill(const struct options *o, uint32_t k, struct survivors_stats *stats)
{
	uint64_t seed = o->seed + k, rng = seed;
	static const uint64_t flight_rings[] = {4096, 8192, 65536};
	static const uint64_t stream_rings[] = {4096, 65536, 1 << 20};
	const uint64_t *rings = o->mode == RT_MODE_STREAM ? stream_rings : flight_rings;
	uint64_t buffer = rings[next_random(&rng) % 3];
	/* 200 us .. 100 ms, spread evenly on a log scale */
	double delay_us = 200.0 * pow(500.0, uniform(&rng));

	char arena[128], bytes[32], threads[16], label[160];
	snprintf(arena, sizeof(arena), "%s/kill-%u.arena", dir, k);
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)buffer);
	snprintf(threads, sizeof(threads), "%u", o->threads);
	snprintf(label, sizeof(label), "run %u (seed %llu, %s, ring %llu bytes, delay %.0f us)", k,
		 (unsigned long long)seed, mode_name(o->mode), (unsigned long long)buffer,
		 delay_us);
	char *argv[] = {(char *)o->victim, "flat", arena, (char *)mode_name(o->mode), bytes,
			threads,	   NULL};
	pid_t pid = spawn_victim(argv, NULL);
	if (!CHECK(pid > 0))
		return 1;
	struct arena_file a;
	if (!CHECK(wait_tracing(pid, arena, o->threads, 64, o->drain, &a) == 0)) {
		kill_and_reap(pid);
		fprintf(stderr, "%s: the victim never traced\n", label);
		return 1;
	}
	struct collector collector = {&a, 0, 0, 0, 0};
	int collecting =
	    o->drain && pthread_create(&collector.thread, NULL, collector_main, &collector) == 0;
	CHECK(collecting == o->drain);

	sleep_us(delay_us);
	kill(pid, SIGKILL);
	int status = reap(pid);
	if (collecting) {
		__atomic_store_n(&collector.stop, 1, __ATOMIC_RELEASE);
		pthread_join(collector.thread, NULL);
	}
	arena_file_close(&a);
	if (!CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
		char what[64];
		describe_status(what, sizeof(what), status);
		fprintf(stderr, "%s: the victim was not killed by SIGKILL: %s\n", label, what);
	}

	struct survivors_expect e = {.mode = o->mode,
				     .drained = o->drain,
				     .tracers = o->threads,
				     .state = RT_ARENA_RUNNING,
				     .known_thread = -1};
	struct survivors_stats here = {0};
	int failed = survivors_check(o->tool, arena, &e, label, &here);
	char drained[96] = "";
	if (o->drain)
		snprintf(drained, sizeof(drained), " (%llu slots consumed in %llu passes)",
			 (unsigned long long)collector.consumed,
			 (unsigned long long)collector.passes);
	printf("%s: %llu present, %llu overwritten, %llu dropped%s, %u torn%s\n", label,
	       (unsigned long long)here.present, (unsigned long long)here.overwritten,
	       (unsigned long long)here.dropped, drained, here.torn, failed ? ": FAILED" : "");
	stats->present += here.present;
	stats->overwritten += here.overwritten;
	stats->dropped += here.dropped;
	stats->torn += here.torn;
	stats->torn_mid += here.torn_mid;
	remove_file(arena);
	return failed;
}

/* ---- crash: abort, SIGSEGV, _exit of a forked child ------------------- */

static int run_crash(const struct options *o, uint32_t k, struct survivors_stats *stats)
{
	uint64_t seed = o->seed + k, rng = seed;
	uint64_t buffer = next_random(&rng) % 2 ? 4096 : 65536;
	/* tracer 0 dies after event crash_at: about 20 us to 100 ms into tracing */
	uint32_t crash_at = (uint32_t)(1000.0 * pow(3000.0, uniform(&rng)));
	int fork_case = strcmp(o->how, "fork") == 0;

	char arena[128], child_arena[160], bytes[32], threads[16], at[16], label[200];
	snprintf(arena, sizeof(arena), "%s/%s-%u.arena", dir, o->how, k);
	snprintf(child_arena, sizeof(child_arena), "%s.child", arena);
	snprintf(bytes, sizeof(bytes), "%llu", (unsigned long long)buffer);
	snprintf(threads, sizeof(threads), "%u", o->threads);
	snprintf(at, sizeof(at), "%u", crash_at);
	snprintf(label, sizeof(label),
		 "run %u (seed %llu, %s, %s, ring %llu bytes, after event %u)", k,
		 (unsigned long long)seed, o->how, mode_name(o->mode), (unsigned long long)buffer,
		 crash_at);
	char *argv[] = {(char *)o->victim,
			(char *)o->how,
			arena,
			(char *)mode_name(o->mode),
			bytes,
			threads,
			at,
			NULL};
	pid_t pid = spawn_victim(argv, NULL);
	if (!CHECK(pid > 0))
		return 1;
	int status = reap(pid);
	int expected_signal = strcmp(o->how, "abort") == 0 ? SIGABRT : SIGSEGV;
	int as_expected = fork_case ? WIFEXITED(status) && WEXITSTATUS(status) == 0
				    : WIFSIGNALED(status) && WTERMSIG(status) == expected_signal;
	if (!CHECK(as_expected)) {
		char what[64];
		describe_status(what, sizeof(what), status);
		fprintf(stderr, "%s: victim %s\n", label, what);
		remove_file(arena);
		remove_file(child_arena);
		return 1;
	}

	int before = failed_checks;
	struct survivors_stats here = {0};
	struct survivors_expect e = {
	    .mode = o->mode, .tracers = o->threads, .known_thread = 0, .known_last = crash_at};
	if (!fork_case) {
		failed_checks += survivors_check(o->tool, arena, &e, label, &here);
	} else {
		/* the child, dead by _exit: an arena of its own, left RUNNING */
		e.state = RT_ARENA_RUNNING;
		failed_checks += survivors_check(o->tool, child_arena, &e, label, &here);
		/* the parent: every thread ran to its end, and the arena was closed */
		struct survivors_expect parent = {.mode = o->mode,
						  .tracers = o->threads,
						  .state = RT_ARENA_CLOSED,
						  .known_thread = -1,
						  .known_last = DEATH_PARENT_EVENTS - 1,
						  .all_known = 1};
		struct survivors_stats ignored = {0};
		failed_checks += survivors_check(o->tool, arena, &parent, label, &ignored);
		struct arena_file pa, ca;
		char why[512];
		if (CHECK(arena_file_open(&pa, arena, 0, why, sizeof(why)) == 0)) {
			if (CHECK(arena_file_open(&ca, child_arena, 0, why, sizeof(why)) == 0)) {
				CHECK_EQ(pa.header->pid, pid);
				CHECK(ca.header->pid > 0 && ca.header->pid != pid);
				arena_file_close(&ca);
			}
			arena_file_close(&pa);
		}
	}
	int failed = failed_checks - before;
	printf("%s: %llu present, %llu overwritten, %llu dropped, %u torn%s\n", label,
	       (unsigned long long)here.present, (unsigned long long)here.overwritten,
	       (unsigned long long)here.dropped, here.torn, failed ? ": FAILED" : "");
	stats->present += here.present;
	stats->overwritten += here.overwritten;
	stats->dropped += here.dropped;
	stats->torn += here.torn;
	stats->torn_mid += here.torn_mid;
	remove_file(arena);
	remove_file(child_arena);
	return failed;
}

static int repeat(const struct options *o,
		  int (*run)(const struct options *, uint32_t, struct survivors_stats *))
{
	struct survivors_stats stats = {0};
	double start = now_seconds();
	uint32_t failed_runs = 0;
	for (uint32_t k = o->first; k < o->first + o->runs; k++) {
		if (run(o, k, &stats) != 0) {
			failed_runs++;
			fprintf(stderr, "replay:%s --seed %llu --first %u --runs 1\n", command_line,
				(unsigned long long)o->seed, k);
		}
	}
	/* SIGKILL lands inside a record in about a quarter of the runs: if it never
	 * did, this test would not be exercising what it claims to */
	if (run == run_kill && o->mode == RT_MODE_FLIGHT && o->runs >= 50 && !CHECK(stats.torn > 0))
		fprintf(stderr, "no kill of %u landed inside a record\n", o->runs);
	printf("%u runs in %.1f s: %llu events present, %llu overwritten, %llu dropped; "
	       "%u torn records (%u with slots partly written); %u runs failed\n",
	       o->runs, now_seconds() - start, (unsigned long long)stats.present,
	       (unsigned long long)stats.overwritten, (unsigned long long)stats.dropped, stats.torn,
	       stats.torn_mid, failed_runs);
	if (stats.no_last_event)
		printf("%u threads without a last event\n", stats.no_last_event);
	return failed_runs != 0 || check_failure_count() != 0;
}

/* ---- deadlock killed with -9 ------------------------------------------- */

static const struct stuck_thread {
	const char *name, *tag;
	uint32_t who, magic;
} stuck_threads[DEADLOCK_STUCK] = {
    {"holds-A", "about to lock B", DEADLOCK_HOLDER_A, DEADLOCK_MAGIC_A},
    {"holds-B", "about to lock A", DEADLOCK_HOLDER_B, DEADLOCK_MAGIC_B},
    {"waiter", "about to wait", DEADLOCK_WAITER, DEADLOCK_MAGIC_W},
};

/* The state letter of /proc/PID/task/TID/stat, or 0. */
static char task_state(pid_t pid, int tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* What thread tid did: records and drops of its ring, events lost for want of one. */
static uint64_t thread_progress(const struct arena_file *a, int tid)
{
	uint32_t used = arena_threads_used(a);
	for (uint32_t k = 0; k < used; k++) {
		const struct rt_thread_entry *e = arena_thread(a, k);
		if (e->tid != tid)
			continue;
		uint64_t done = __atomic_load_n(&e->lost_no_ring, __ATOMIC_RELAXED);
		uint32_t ring = __atomic_load_n(&e->ring, __ATOMIC_RELAXED);
		if (ring < a->header->ring_count) {
			struct ring_words w;
			arena_ring_words(a, ring, &w);
			done += w.records + w.dropped;
		}
		return done;
	}
	return UINT64_MAX;
}

static int busy_tid(const struct arena_file *a)
{
	uint32_t used = arena_threads_used(a);
	for (uint32_t k = 0; k < used; k++)
		if (strcmp(arena_thread(a, k)->name, "busy") == 0)
			return arena_thread(a, k)->tid;
	return 0;
}

/*
 * The deadlock is certain once the stuck threads have announced themselves;
 * wait until the kernel has all three asleep, then see them stay asleep
 * with their rings standing still for 100 ms while the busy thread's moves.
 */
static int wait_deadlocked(pid_t pid, const struct arena_file *a, const int tids[])
{
	double deadline = now_seconds() + 10;
	while (now_seconds() < deadline) {
		int asleep = 0;
		for (int s = 0; s < DEADLOCK_STUCK; s++)
			asleep += task_state(pid, tids[s]) == 'S';
		int busy = busy_tid(a);
		if (asleep < DEADLOCK_STUCK || !busy) {
			sleep_us(1000);
			continue;
		}
		uint64_t before[DEADLOCK_STUCK], busy_before = thread_progress(a, busy);
		for (int s = 0; s < DEADLOCK_STUCK; s++)
			before[s] = thread_progress(a, tids[s]);
		sleep_us(100000);
		int still = 1;
		for (int s = 0; s < DEADLOCK_STUCK; s++)
			still &= task_state(pid, tids[s]) == 'S' &&
				 thread_progress(a, tids[s]) == before[s];
		if (!still)
			return -1; /* a stuck thread moved: no deadlock */
		/* the busy thread may be short of CPU on a loaded machine: give it time */
		while (thread_progress(a, busy) == busy_before && now_seconds() < deadline)
			sleep_us(1000);
		return thread_progress(a, busy) != busy_before ? 0 : -1;
	}
	return -1;
}

static int deadlock(const struct options *o)
{
	char arena[128];
	snprintf(arena, sizeof(arena), "%s/deadlock.arena", dir);
	char *argv[] = {(char *)o->victim,	    "deadlock", arena,
			(char *)mode_name(o->mode), "4096",	NULL};
	int out;
	char rings[16];
	snprintf(rings, sizeof(rings), "%u", o->rings);
	if (o->rings)
		setenv("RINGTRACE_RINGS", rings, 1); /* the victim's options leave rings to it */
	pid_t pid = spawn_victim(argv, &out);
	unsetenv("RINGTRACE_RINGS");
	if (!CHECK(pid > 0))
		return 1;
	/* the handshake: "stuck TID_A TID_B TID_W" once all three recorded their last */
	char line[128] = "";
	size_t n = 0;
	struct pollfd pfd = {out, POLLIN, 0};
	while (n < sizeof(line) - 1 && !memchr(line, '\n', n) && poll(&pfd, 1, 10000) > 0) {
		ssize_t r = read(out, line + n, sizeof(line) - 1 - n);
		if (r <= 0)
			break;
		n += (size_t)r;
		line[n] = 0;
	}
	close(out);
	int tids[DEADLOCK_STUCK];
	if (!CHECK(sscanf(line, "stuck %d %d %d", &tids[0], &tids[1], &tids[2]) == 3)) {
		kill_and_reap(pid);
		return 1;
	}
	struct arena_file a;
	char why[512];
	if (!CHECK(arena_file_open(&a, arena, 0, why, sizeof(why)) == 0)) {
		fprintf(stderr, "%s\n", why);
		kill_and_reap(pid);
		return 1;
	}
	int locked = wait_deadlocked(pid, &a, tids);
	arena_file_close(&a);
	if (!CHECK(locked == 0))
		fprintf(stderr, "the threads did not settle into the deadlock\n");
	kill(pid, SIGKILL);
	int status = reap(pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

	/* text: each stuck thread's last event under the heading */
	char *targv[] = {(char *)o->tool, "dump", arena, NULL};
	char *text = NULL, *err = NULL;
	size_t length;
	status = run_capture(targv, &text, &length, &err);
	CHECK_EQ(status, 0);
	const char *heading = "\nLast recorded per-thread events\n";
	const char *section = strstr(text, heading);
	if (CHECK(section != NULL)) {
		section += strlen(heading);
		for (int s = 0; s < DEADLOCK_STUCK; s++) {
			const struct stuck_thread *x = &stuck_threads[s];
			char who[64], args[32], tag[64];
			snprintf(who, sizeof(who), "tid %d %s] : ", tids[s], x->name);
			snprintf(args, sizeof(args), "] : %08x %08x ", x->who, x->magic);
			snprintf(tag, sizeof(tag), " (%s)\n", x->tag);
			const char *at = strstr(section, who);
			const char *eol = at ? strchr(at, '\n') : NULL;
			if (!CHECK(at && eol)) {
				fprintf(stderr, "no last event of tid %d %s in:\n%s", tids[s],
					x->name, section);
				continue;
			}
			if (!CHECK(strstr(at, args) == at + strlen(who) - 4 &&
				   strncmp(eol + 1 - strlen(tag), tag, strlen(tag)) == 0))
				fprintf(stderr, "tid %d: last event not \"%s\" (%x, %x): %.*s\n",
					tids[s], x->tag, x->who, x->magic, (int)(eol - at), at);
		}
		/* the busy thread's last event: its ring keeps one, whatever the copy says */
		if (!o->rings)
			CHECK(strstr(section, "busy] : ") != NULL);
	}
	free(text);
	free(err);

	/* JSON: the same, and in stream mode from outside the ring alone */
	char *jargv[] = {(char *)o->tool, "dump", "--json", arena, NULL};
	status = run_capture(jargv, &text, &length, &err);
	CHECK_EQ(status, 0);
	uint32_t last_lines[DEADLOCK_STUCK] = {0}, in_ring[DEADLOCK_STUCK] = {0};
	uint64_t dropped[DEADLOCK_STUCK] = {0};
	for (char *p = text, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = 0;
		struct dump_line l;
		char why_line[256];
		if (!CHECK(dump_json_parse(p, &l, why_line, sizeof(why_line)) == 0)) {
			fprintf(stderr, "%s: %s\n", why_line, p);
			continue;
		}
		for (int s = 0; s < DEADLOCK_STUCK; s++) {
			const struct stuck_thread *x = &stuck_threads[s];
			if (l.tid != tids[s])
				continue;
			int is_last = strcmp(l.tag, x->tag) == 0 && l.nargs == 2 &&
				      l.args[0].bits == x->who && l.args[1].bits == x->magic &&
				      !l.args[0].negative && !l.args[1].negative;
			if (strcmp(l.kind, "last_event") == 0) {
				last_lines[s]++;
				CHECK(is_last);
				CHECK_STR(l.thread, x->name);
			} else if (strcmp(l.kind, "trace") == 0) {
				in_ring[s] += is_last;
			} else if (strcmp(l.kind, "lost") == 0 &&
				   strcmp(l.reason, "dropped") == 0) {
				dropped[s] += l.count;
			}
		}
	}
	uint32_t with_ring = 0;
	for (int s = 0; s < DEADLOCK_STUCK; s++) {
		CHECK_EQ(last_lines[s], 1);
		with_ring += in_ring[s];
		if (o->rings) {
			/* too few rings: those without one kept only their last event */
			CHECK(in_ring[s] == 1 || dropped[s] > 0);
		} else if (o->mode == RT_MODE_FLIGHT) {
			CHECK_EQ(in_ring[s], 1);
		} else {
			/* its ring filled during the warm-up: the last event was dropped */
			CHECK_EQ(in_ring[s], 0);
			CHECK(dropped[s] > 0);
		}
	}
	if (o->rings)
		CHECK(with_ring <= o->rings);
	free(text);
	free(err);
	remove_file(arena);
	int failed = check_failure_count() != 0;
	printf("deadlock (%s, %u of %d stuck threads with their last event in a ring): %s\n",
	       mode_name(o->mode), with_ring, DEADLOCK_STUCK, failed ? "FAILED" : "passed");
	return failed;
}

/* ---- ringless: the last event of a thread that has no ring -------------- */

/*
 * With one ring, taken by the victim's main thread, its tracers record
 * nothing into rings: each thread entry keeps the thread's last event and
 * counts the rest as lost.  Killed at a random moment, every tracer must
 * still show a last event: the one it counted last, or the one after it
 * (killed between keeping it and counting it).
 */
struct ringless_tracer {
	int32_t tid;
	uint64_t lost; /* the thread entry's count */
	uint32_t last_lines, last_i, trace_lines;
	uint64_t dropped; /* what the dump says was lost */
};

static void ringless_line(struct ringless_tracer *tracers, uint32_t count,
			  const struct dump_line *l)
{
	for (uint32_t t = 0; t < count; t++) {
		struct ringless_tracer *x = &tracers[t];
		uint32_t i;
		if (l->tid != x->tid)
			continue;
		if (strcmp(l->kind, "last_event") == 0) {
			x->last_lines++;
			if (CHECK(survivors_is_event(l, t, &i)))
				x->last_i = i;
		} else if (strcmp(l->kind, "trace") == 0) {
			x->trace_lines++;
		} else if (strcmp(l->reason, "dropped") == 0) {
			x->dropped += l->count;
		}
	}
}

static int run_ringless(const struct options *o, uint32_t k, struct survivors_stats *stats)
{
	uint64_t seed = o->seed + k, rng = seed;
	double delay_us = 1000.0 * pow(50.0, uniform(&rng)); /* 1 .. 50 ms */
	char arena[128], threads[16], label[160];
	snprintf(arena, sizeof(arena), "%s/ringless-%u.arena", dir, k);
	snprintf(threads, sizeof(threads), "%u", o->threads);
	snprintf(label, sizeof(label), "run %u (seed %llu, no rings, delay %.0f us)", k,
		 (unsigned long long)seed, delay_us);
	char *argv[] = {(char *)o->victim, "ringless", arena, "flight", "4096", threads, NULL};
	setenv("RINGTRACE_RINGS", "1", 1);
	pid_t pid = spawn_victim(argv, NULL);
	unsetenv("RINGTRACE_RINGS");
	struct arena_file a;
	if (!CHECK(pid > 0) || !CHECK(wait_tracing(pid, arena, o->threads, 1000, 0, &a) == 0)) {
		if (pid > 0)
			kill_and_reap(pid);
		return 1;
	}
	sleep_us(delay_us);
	kill_and_reap(pid);

	int before = check_failure_count();
	struct ringless_tracer tracers[16];
	uint32_t count = o->threads, found = 0;
	memset(tracers, 0, sizeof(tracers));
	for (uint32_t e = 0; e < arena_threads_used(&a); e++) {
		const struct rt_thread_entry *x = arena_thread(&a, e);
		unsigned t;
		if (sscanf(x->name, "victim-%u", &t) != 1 || !CHECK(t < count && !tracers[t].tid))
			continue;
		CHECK_EQ(x->ring, RT_NO_RING);
		tracers[t] = (struct ringless_tracer){x->tid, x->lost_no_ring, 0, 0, 0, 0};
		found++;
	}
	arena_file_close(&a);
	CHECK_EQ(found, count);

	char *jargv[] = {(char *)o->tool, "dump", "--json", arena, NULL};
	char *text = NULL, *err = NULL;
	size_t length;
	CHECK_EQ(run_capture(jargv, &text, &length, &err), 0);
	for (char *p = text, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = 0;
		struct dump_line l;
		char why[256];
		if (CHECK(dump_json_parse(p, &l, why, sizeof(why)) == 0))
			ringless_line(tracers, count, &l);
	}
	uint32_t missing = 0;
	for (uint32_t t = 0; t < count; t++) {
		const struct ringless_tracer *x = &tracers[t];
		CHECK_EQ(x->trace_lines, 0);
		CHECK_EQ(x->dropped, x->lost);
		if (!CHECK(x->last_lines == 1)) {
			missing++;
			fprintf(stderr,
				"%s: victim-%u (tid %d) lost %llu events, and no last event "
				"is shown\n",
				label, t, (int)x->tid, (unsigned long long)x->lost);
			continue;
		}
		CHECK(x->last_i + 1 == x->lost || x->last_i == x->lost);
	}
	free(text);
	free(err);
	int failed = check_failure_count() - before;
	printf("%s: %u of %u threads without a last event%s\n", label, missing, count,
	       failed ? ": FAILED" : "");
	stats->no_last_event += missing;
	remove_file(arena);
	return failed;
}

/* ---- torn: a writer that died in the middle of a record ---------------- */

static int copy_file(const char *from, const char *to)
{
	char *argv[] = {"/bin/cp", "--sparse=always", (char *)from, (char *)to, NULL};
	char *out = NULL, *err = NULL;
	size_t n;
	int status = run_capture(argv, &out, &n, &err);
	if (status != 0)
		fprintf(stderr, "cp %s %s: %s\n", from, to, err ? err : "");
	free(out);
	free(err);
	return status == 0 ? 0 : -1;
}

enum torn_kind {
	TORN_RESERVED,	/* reserve moved, no slot written yet */
	TORN_SEQ_ONLY,	/* the first slot's seq written, the rest still the old record */
	TORN_UNCOUNTED, /* every slot written, records and head not */
	TORN_COUNTED,	/* every slot written and records counted, head not */
	TORN_KINDS,
};

static const char *const torn_names[TORN_KINDS] = {"reserve only", "first seq only",
						   "slots written", "slots written and counted"};

/* The site ids of the victim's two sites, from records in a ring. */
static void find_sites(const struct arena_file *a, uint32_t ring, uint32_t *small, uint32_t *large)
{
	const union rt_slot *slots = arena_slots(a, ring);
	for (uint64_t s = 0; s < arena_ring_slots(a); s++) {
		const struct rt_slot_head *h = &slots[s].head;
		if (h->kind != RT_REC_TRACE)
			continue;
		if (h->nslots == 1 && !death_is_large(h->a1))
			*small = h->site;
		if (h->nslots == 2 && death_is_large(h->a1))
			*large = h->site;
	}
}

/* Make ring `ring` look as if its writer died while writing its next record. */
static void forge_torn(struct arena_file *a, uint32_t ring, enum torn_kind kind)
{
	struct ring_record newest;
	CHECK(arena_newest_record(a, ring, &newest) == 0);
	struct rt_ring_desc *d = arena_ring(a, ring);
	union rt_slot *slots = arena_slots(a, ring);
	const uint64_t mask = arena_ring_slots(a) - 1, h = d->head;
	uint32_t t = newest.head.a0, i = newest.head.a1 + 1, small = 0, large = 0;
	find_sites(a, ring, &small, &large);
	CHECK(small && large);
	unsigned n = death_is_large(i) ? 2 : 1;
	d->reserve = h + n;
	if (kind == TORN_RESERVED)
		return;
	struct rt_slot_head *first = &slots[h & mask].head;
	first->seq = (uint32_t)h;
	if (kind == TORN_SEQ_ONLY)
		return;
	first->kind = RT_REC_TRACE;
	first->nslots = (uint8_t)n;
	first->cpu = 0;
	first->record = (uint32_t)d->records;
	first->site = n == 2 ? large : small;
	first->counter = newest.head.counter + 1000;
	first->a0 = t;
	first->a1 = i;
	if (n == 2) {
		struct rt_slot_cont *c = &slots[(h + 1) & mask].cont;
		c->seq = (uint32_t)(h + 1);
		c->kind = RT_REC_CONT;
		c->index = 1;
		c->reserved = 0;
		c->a2 = death_arg2(i);
		c->a3 = (uint32_t)death_arg3(t);
		c->a4 = death_arg4(t, i);
		c->a5 = (uint64_t)death_arg5(i);
	}
	if (kind == TORN_COUNTED)
		d->records++;
}

static int torn(const struct options *o)
{
	char arena[128];
	struct survivors_expect e = {.mode = RT_MODE_FLIGHT,
				     .tracers = o->threads,
				     .state = RT_ARENA_RUNNING,
				     .known_thread = -1};
	/* a SIGKILLed victim with a thread whose ring was between records */
	uint32_t ring = RT_NO_RING;
	int32_t tid = 0;
	for (int attempt = 0; attempt < 5 && ring == RT_NO_RING; attempt++) {
		/* a file of its own each time: never the arena a victim killed before left */
		snprintf(arena, sizeof(arena), "%s/torn%d.arena", dir, attempt);
		char threads[16];
		snprintf(threads, sizeof(threads), "%u", o->threads);
		char *argv[] = {(char *)o->victim, "flat", arena, "flight", "4096", threads, NULL};
		pid_t pid = spawn_victim(argv, NULL);
		struct arena_file a;
		if (!CHECK(pid > 0) ||
		    !CHECK(wait_tracing(pid, arena, o->threads, 1000, 0, &a) == 0)) {
			if (pid > 0)
				kill_and_reap(pid);
			return 1;
		}
		sleep_us(20000);
		kill_and_reap(pid);
		/*
		 * Only a kill after every tracer wrote into a ring of its own will
		 * do (a tracer that had none yet, on a loaded machine, leaves
		 * nothing to forge beside); then a ring between two records.
		 */
		int all_recorded = 1;
		for (uint32_t k = 0; k < arena_threads_used(&a); k++) {
			const struct rt_thread_entry *t = arena_thread(&a, k);
			struct ring_words w = {0};
			if (t->ring < a.header->ring_count)
				arena_ring_words(&a, t->ring, &w);
			if (strncmp(t->name, "victim-", 7) == 0 && w.records == 0)
				all_recorded = 0;
		}
		for (uint32_t k = 0;
		     all_recorded && k < arena_threads_used(&a) && ring == RT_NO_RING; k++) {
			const struct rt_thread_entry *t = arena_thread(&a, k);
			struct ring_words w;
			if (t->ring >= a.header->ring_count)
				continue;
			arena_ring_words(&a, t->ring, &w);
			if (w.head == w.reserve && w.records > 0) {
				ring = t->ring;
				tid = t->tid;
			}
		}
		arena_file_close(&a);
	}
	if (!CHECK(ring != RT_NO_RING))
		return 1;
	struct survivors_stats original = {0};
	failed_checks += survivors_check(o->tool, arena, &e, "as killed", &original);

	for (int kind = 0; kind < TORN_KINDS; kind++) {
		char copy[160], label[160];
		snprintf(copy, sizeof(copy), "%s/torn-%d.arena", dir, kind);
		snprintf(label, sizeof(label), "torn (%s) in the ring of tid %d", torn_names[kind],
			 (int)tid);
		struct arena_file a;
		char why[512];
		if (!CHECK(copy_file(arena, copy) == 0) ||
		    !CHECK(arena_file_open(&a, copy, 1, why, sizeof(why)) == 0))
			return 1;
		forge_torn(&a, ring, (enum torn_kind)kind);
		arena_file_close(&a);
		/* the generic check asks exactly one torn loss of the forged ring, and
		 * that its events end at the newest committed record, not the forged one */
		struct survivors_stats here = {0};
		int failed = survivors_check(o->tool, copy, &e, label, &here);
		failed_checks += failed;
		CHECK_EQ(here.torn, original.torn + 1);
		/* the window moved by the forged record's slots: at most two records left it */
		CHECK(here.present <= original.present && here.present + 2 >= original.present);
		printf("%s: %u torn, %llu present (%llu before)%s\n", label, here.torn,
		       (unsigned long long)here.present, (unsigned long long)original.present,
		       failed ? ": FAILED" : "");
		remove_file(copy);
	}
	remove_file(arena);
	return check_failure_count() != 0 || failed_checks != 0;
}

/* ---- rejects: the check can fail --------------------------------------- */

struct text {
	char **lines;
	size_t count;
};

static void split_lines(char *text, struct text *t)
{
	t->count = 0;
	t->lines = NULL;
	size_t capacity = 0;
	for (char *p = text, *nl; (nl = strchr(p, '\n')) != NULL; p = nl + 1) {
		*nl = 0;
		if (t->count == capacity) {
			capacity = capacity ? capacity * 2 : 1024;
			t->lines = realloc(t->lines, capacity * sizeof(*t->lines));
		}
		t->lines[t->count++] = p;
	}
}

enum edit { LEAVE_OUT, TWICE, SWAP, REPLACE, INSERT };

/* One wrong dump: the real one with one edit to line a (and b, or text). */
struct mutation {
	const char *what;
	enum edit edit;
	long a, b;
	const char *text;
};

static char *mutate(const struct text *t, const struct mutation *m, size_t *length)
{
	const char **lines = malloc((t->count + 1) * sizeof(*lines));
	size_t n = 0, size = 1 + (m->text ? strlen(m->text) + 1 : 0);
	for (size_t k = 0; k < t->count; k++) {
		size += 2 * (strlen(t->lines[k]) + 1);
		if ((long)k == m->a && m->edit == INSERT)
			lines[n++] = m->text;
		if ((long)k == m->a && m->edit == LEAVE_OUT)
			continue;
		lines[n++] = (long)k == m->a && m->edit == REPLACE ? m->text : t->lines[k];
		if ((long)k == m->a && m->edit == TWICE)
			lines[n++] = t->lines[k];
	}
	if (m->edit == SWAP) {
		const char *a = lines[m->a];
		lines[m->a] = lines[m->b];
		lines[m->b] = a;
	}
	char *out = malloc(size), *p = out;
	for (size_t k = 0; k < n; k++)
		p += sprintf(p, "%s\n", lines[k]);
	free(lines);
	*length = (size_t)(p - out);
	return out;
}

/* Line index of the n-th trace line of tid (n < 0: from the end), or -1. */
static long find_trace(const struct text *t, int64_t tid, long n)
{
	long seen = 0, total = 0;
	struct dump_line l;
	char why[256];
	for (size_t k = 0; k < t->count; k++)
		if (dump_json_parse(t->lines[k], &l, why, sizeof(why)) == 0 &&
		    strcmp(l.kind, "trace") == 0 && l.tid == tid)
			total++;
	long want = n >= 0 ? n : total + n;
	for (size_t k = 0; k < t->count; k++)
		if (dump_json_parse(t->lines[k], &l, why, sizeof(why)) == 0 &&
		    strcmp(l.kind, "trace") == 0 && l.tid == tid && seen++ == want)
			return (long)k;
	return -1;
}

static int rejects(const struct options *o)
{
	char arena[128];
	snprintf(arena, sizeof(arena), "%s/rejects.arena", dir);
	char *argv[] = {(char *)o->victim, "flat", arena, "flight", "4096", "4", NULL};
	pid_t pid = spawn_victim(argv, NULL);
	struct arena_file a;
	if (!CHECK(pid > 0) || !CHECK(wait_tracing(pid, arena, 4, 1000, 0, &a) == 0)) {
		if (pid > 0)
			kill_and_reap(pid);
		return 1;
	}
	arena_file_close(&a);
	sleep_us(10000);
	kill_and_reap(pid);

	char *jargv[] = {(char *)o->tool, "dump", "--json", arena, NULL};
	char *dump = NULL, *err = NULL;
	size_t length;
	CHECK_EQ(run_capture(jargv, &dump, &length, &err), 0);
	struct survivors_expect e = {
	    .mode = RT_MODE_FLIGHT, .tracers = 4, .state = RT_ARENA_RUNNING, .known_thread = -1};
	struct survivors_stats stats = {0};
	int clean = survivors_check_text(dump, length, arena, &e, "the dump as it is", &stats);
	CHECK_EQ(clean, 0);

	struct text t;
	split_lines(dump, &t);
	/* a tracer's tid, and a six-argument event of it in the middle of its run */
	struct dump_line l;
	char why[256];
	int64_t tid = 0;
	long large = -1;
	for (size_t k = 0; k < t.count && large < 0; k++)
		if (dump_json_parse(t.lines[k], &l, why, sizeof(why)) == 0 &&
		    strcmp(l.kind, "trace") == 0 && l.nargs == 6 && k > t.count / 4) {
			tid = l.tid;
			large = (long)k;
		}
	long middle = find_trace(&t, tid, 20), next = find_trace(&t, tid, 21);
	long newest = find_trace(&t, tid, -1);
	if (!CHECK(large >= 0 && middle >= 0 && next >= 0 && newest >= 0))
		return 1;
	/* the fifth argument gets one more digit */
	char altered[1024];
	snprintf(altered, sizeof(altered), "%s", t.lines[large]);
	char *fifth = strstr(altered, "\"args\":[");
	for (int commas = 0; fifth && commas < 4; commas++)
		fifth = strchr(fifth + 1, ',');
	if (!CHECK(fifth != NULL))
		return 1;
	memmove(fifth + 2, fifth + 1, strlen(fifth + 1) + 1);
	fifth[1] = '9';
	char torn_line[128];
	snprintf(torn_line, sizeof(torn_line),
		 "{\"kind\":\"lost\",\"tid\":%lld,\"count\":1,\"reason\":\"torn\"}",
		 (long long)tid);

	const struct mutation mutations[] = {
	    {"an event left out", LEAVE_OUT, middle, 0, NULL},
	    {"an event twice", TWICE, middle, 0, NULL},
	    {"two events of a thread swapped", SWAP, middle, next, NULL},
	    {"the newest committed event left out", LEAVE_OUT, newest, 0, NULL},
	    {"an argument altered", REPLACE, large, 0, altered},
	    {"a torn loss where nothing was torn", INSERT, newest, 0, torn_line},
	};
	/* the checker's complaints about the mutants are expected: keep them off stderr */
	int saved = dup(STDERR_FILENO), devnull = open("/dev/null", O_WRONLY);
	for (size_t m = 0; m < sizeof(mutations) / sizeof(mutations[0]); m++) {
		const struct mutation *x = &mutations[m];
		size_t n;
		char *mutant = mutate(&t, x, &n);
		struct survivors_stats ignored = {0};
		dup2(devnull, STDERR_FILENO);
		int complaints = survivors_check_text(mutant, n, arena, &e, x->what, &ignored);
		dup2(saved, STDERR_FILENO);
		printf("%s: %d failed checks\n", x->what, complaints);
		if (!CHECK(complaints > 0))
			fprintf(stderr, "the check accepted a dump with %s\n", x->what);
		free(mutant);
	}
	close(devnull);
	close(saved);
	free(t.lines);
	free(dump);
	free(err);
	remove_file(arena);
	return check_failure_count() != 0;
}

/* ---- the OOM killer ------------------------------------------------------ */

/*
 * The OOM killer ends its victim with SIGKILL, which `kill` covers at random
 * moments.  A real OOM kill needs a memory cgroup to confine it (the test
 * must not make the whole machine run out of memory): without one that this
 * test may create children in, it is skipped.
 */
static int oom(const struct options *o)
{
	(void)o;
	printf("skipped: a real OOM kill needs a memory cgroup this test may use, and none is "
	       "delegated here; the OOM killer delivers SIGKILL, which `death kill` covers at "
	       "random moments\n");
	return SKIPPED;
}

/* ---- main ----------------------------------------------------------------- */

static _Noreturn void usage(void)
{
	fprintf(
	    stderr,
	    "usage: death kill|crash|ringless|deadlock|torn|rejects|oom --tool PATH --victim PATH "
	    "[--mode flight|stream] [--drain] [--how abort|segv|fork] [--runs N] "
	    "[--first K] [--seed S] [--threads N]\n");
	exit(2);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
	    {"tool", required_argument, NULL, 't'},
	    {"victim", required_argument, NULL, 'v'},
	    {"mode", required_argument, NULL, 'm'},
	    {"drain", no_argument, NULL, 'd'},
	    {"how", required_argument, NULL, 'h'},
	    {"runs", required_argument, NULL, 'r'},
	    {"first", required_argument, NULL, 'f'},
	    {"seed", required_argument, NULL, 's'},
	    {"threads", required_argument, NULL, 'n'},
	    {"rings", required_argument, NULL, 'g'},
	    {NULL, 0, NULL, 0},
	};
	*o = (struct options){.mode = RT_MODE_FLIGHT, .runs = 1, .threads = 4, .how = "abort"};
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	o->seed = (uint64_t)now.tv_sec * 1000003u ^ (uint64_t)now.tv_nsec ^ (uint64_t)getpid();
	int c;
	while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
		switch (c) {
		case 't':
			o->tool = optarg;
			break;
		case 'v':
			o->victim = optarg;
			break;
		case 'm':
			if (strcmp(optarg, "flight") && strcmp(optarg, "stream"))
				usage();
			o->mode = strcmp(optarg, "stream") == 0 ? RT_MODE_STREAM : RT_MODE_FLIGHT;
			break;
		case 'd':
			o->drain = 1;
			break;
		case 'h':
			o->how = optarg;
			break;
		case 'r':
			o->runs = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'f':
			o->first = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 's':
			o->seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			o->threads = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		case 'g':
			o->rings = (uint32_t)strtoul(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (optind + 1 == argc)
		o->what = argv[optind]; /* the test, before or after the options */
	if (!o->what || !o->tool || !o->victim || o->threads < 1 || o->threads > 16 ||
	    (o->drain && o->mode != RT_MODE_STREAM) ||
	    (strcmp(o->how, "abort") && strcmp(o->how, "segv") && strcmp(o->how, "fork")))
		usage();
}

int main(int argc, char **argv)
{
	struct options o;
	parse_options(argc, argv, &o);
	size_t used = 0;
	for (int k = 0; k < argc && used < sizeof(command_line); k++) {
		int skip = strcmp(argv[k], "--seed") == 0 || strcmp(argv[k], "--first") == 0 ||
			   strcmp(argv[k], "--runs") == 0;
		if (skip) {
			k++;
			continue;
		}
		used += (size_t)snprintf(command_line + used, sizeof(command_line) - used, " %s",
					 argv[k]);
	}
	keep = getenv("DEATH_KEEP") && strcmp(getenv("DEATH_KEEP"), "1") == 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/ringtrace-death.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (strlen(dir) >= sizeof(dir) - 1 || !mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/ringtrace-death.XXXXXX");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 2;
		}
	}
	printf("death %s: seed %llu, in %s\n", o.what, (unsigned long long)o.seed, dir);

	int rc;
	if (strcmp(o.what, "kill") == 0)
		rc = repeat(&o, run_kill);
	else if (strcmp(o.what, "crash") == 0)
		rc = repeat(&o, run_crash);
	else if (strcmp(o.what, "ringless") == 0)
		rc = repeat(&o, run_ringless);
	else if (strcmp(o.what, "deadlock") == 0)
		rc = deadlock(&o);
	else if (strcmp(o.what, "torn") == 0)
		rc = torn(&o);
	else if (strcmp(o.what, "rejects") == 0)
		rc = rejects(&o);
	else if (strcmp(o.what, "oom") == 0)
		rc = oom(&o);
	else
		usage();
	if (rc == 0 && check_failure_count() != 0)
		rc = 1;
	if (keep)
		printf("arenas kept in %s\n", dir);
	else
		remove_dir(dir);
	printf("%s\n", rc == SKIPPED ? "skipped" : rc ? "FAILED" : "passed");
	return rc;
}
