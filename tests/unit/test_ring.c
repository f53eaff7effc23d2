/*
 * test_ring.c - unit tests of the rings inside the recording library: what
 * RT_TRACE stores, slot by slot, in flight and stream mode, how rings pass
 * between threads, the arena's counters, and what bad configuration does.
 *
 * The library starts at most once per process, so every case runs in a
 * child forked from a parent that never traces (a child of a process that
 * had started it would begin an arena of its own).  A case reads
 * the arena through the library's own view of it (rt_arena), so a failure
 * names the exact field that is wrong.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record/record.h"

#include "../lib/check.h"
#include "../lib/ring_view.h"
#include "../lib/last_event.h"

#define RING_BYTES 4096u /* the smallest ring: 128 slots, laps come quickly */
#define RING_SLOTS (RING_BYTES / RT_SLOT_SIZE)
#define CASE_TIMEOUT_SECONDS 30

/* ---- running cases in children ----------------------------------------- */

/* Lives in memory shared by parent and child, so a child can leave a note. */
struct case_env {
	char dir[PATH_MAX];	   /* a fresh directory for this case */
	char arena[PATH_MAX + 32]; /* dir/test.arena */
	char note[PATH_MAX];	   /* written by the child for after_exit */
	pid_t child;
	const void *param;
};

struct test_case {
	const char *name;
	void (*run)(struct case_env *env);		      /* in the child */
	void (*after_exit)(struct case_env *env, int status); /* in the parent, or NULL */
	const void *param;
};

static void clear_ringtrace_environment(void)
{
	unsetenv("RINGTRACE_ARENA");
	unsetenv("RINGTRACE_BUFFER");
	unsetenv("RINGTRACE_MODE");
	unsetenv("RINGTRACE_RINGS");
}

static void remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	char path[PATH_MAX + 256];
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		struct stat st;
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(path);
		else
			unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Runs one case; returns 1 when it passed. */
static int run_case(const struct test_case *tc, const char *top, struct case_env *env)
{
	memset(env, 0, sizeof(*env));
	snprintf(env->dir, sizeof(env->dir), "%s/%s", top, tc->name);
	if (mkdir(env->dir, 0700) != 0) {
		fprintf(stderr, "cannot create %s: %s\n", env->dir, strerror(errno));
		return 0;
	}
	snprintf(env->arena, sizeof(env->arena), "%s/test.arena", env->dir);
	env->param = tc->param;

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "fork: %s\n", strerror(errno));
		return 0;
	}
	if (pid == 0) {
		alarm(CASE_TIMEOUT_SECONDS); /* a hang fails the case instead of the suite */
		check_failures = 0;	     /* the parent's count is not this case's */
		clear_ringtrace_environment();
		tc->run(env);
		/* exit, not _exit: the library's destructor closes the arena, as in real use */
		exit(check_failure_count() ? 1 : 0);
	}
	env->child = pid;
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int failed_before = check_failure_count();
	if (tc->after_exit)
		tc->after_exit(env, status);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		check_failures++;
	if (!tc->after_exit && WIFSIGNALED(status))
		fprintf(stderr, "%s: child killed by signal %d\n", tc->name, WTERMSIG(status));
	return check_failure_count() == failed_before;
}

/* Child exited 0: what most after_exit hooks want first. */
static int child_passed(const struct case_env *env, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	check_fail(__FILE__, __LINE__, "child %d: status 0x%x", (int)env->child, status);
	return 0;
}

/* ---- helpers for the cases ------------------------------------------------ */

static int start_tracing(const struct case_env *env, int mode, uint64_t bytes, uint32_t rings)
{
	struct ringtrace_options o;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.arena_path = env->arena;
	o.buffer_bytes = bytes;
	o.mode = mode;
	o.rings = rings;
	int r = ringtrace_init(&o);
	CHECK_EQ(r, 0);
	return r == 0 && CHECK(rt_arena_on());
}

static pid_t current_tid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* The ring the calling thread writes into: 0 (and a failed check) when it has none. */
static int my_ring(uint32_t *ring)
{
	if (!CHECK(ringtrace__tls_writer.state == RT_WRITER_ATTACHED && ringtrace__tls_writer.ring))
		return 0;
	*ring = (uint32_t)(ringtrace__tls_writer.ring - rt_arena.rings);
	return 1;
}

static const char *site_string(uint32_t offset)
{
	return rt_arena.strings + offset;
}

/* All records of a ring's readable window, in order; returns how many. */
static size_t read_window(uint32_t ring, struct ring_view_record *out, size_t max,
			  uint64_t *skipped)
{
	struct ring_view v;
	ring_view_open(&v, ring);
	size_t n = 0;
	while (n < max && ring_view_next(&v, &out[n]))
		n++;
	*skipped = v.skipped;
	return n;
}

/* Redirects stderr into a file, so a case can count the lines the library writes. */
struct captured_stderr {
	int saved;
	char path[PATH_MAX + 16];
};

static void capture_stderr(struct captured_stderr *c, const struct case_env *env)
{
	snprintf(c->path, sizeof(c->path), "%s/stderr", env->dir);
	fflush(stderr);
	c->saved = dup(STDERR_FILENO);
	int fd = open(c->path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fd, STDERR_FILENO);
	close(fd);
}

/* Restores stderr; returns the number of lines written meanwhile, text in text. */
static int end_capture(struct captured_stderr *c, char *text, size_t size)
{
	fflush(stderr);
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	text[0] = 0;
	int fd = open(c->path, O_RDONLY);
	ssize_t n = fd >= 0 ? read(fd, text, size - 1) : -1;
	if (fd >= 0)
		close(fd);
	text[n > 0 ? n : 0] = 0;
	int lines = 0;
	for (const char *p = text; *p; p++)
		lines += *p == '\n';
	return lines;
}

struct file_fingerprint {
	struct stat st;
	char content[256];
	ssize_t length;
};

static void fingerprint(const char *path, struct file_fingerprint *f)
{
	memset(f, 0, sizeof(*f));
	lstat(path, &f->st);
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	f->length = fd >= 0 ? read(fd, f->content, sizeof(f->content)) : -1;
	if (fd >= 0)
		close(fd);
}

static void check_same_file(const struct file_fingerprint *a, const struct file_fingerprint *b)
{
	CHECK_EQ(a->st.st_ino, b->st.st_ino);
	CHECK_EQ(a->st.st_size, b->st.st_size);
	CHECK_EQ(a->st.st_mode, b->st.st_mode);
	CHECK_EQ(a->st.st_mtim.tv_sec, b->st.st_mtim.tv_sec);
	CHECK_EQ(a->st.st_mtim.tv_nsec, b->st.st_mtim.tv_nsec);
	CHECK_EQ(a->length, b->length);
	CHECK(memcmp(a->content, b->content, sizeof(a->content)) == 0);
}

static void write_file(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (CHECK(fd >= 0)) {
		CHECK_EQ(write(fd, data, size), size);
		close(fd);
	}
}

/* Reads the arena header of a file some other process wrote. */
static int read_header(const char *path, struct rt_arena_header *h)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, h, sizeof(*h));
	close(fd);
	return n == (ssize_t)sizeof(*h) ? 0 : -1;
}

/* ---- what one record must look like -------------------------------------- */

struct expected_event {
	const char *tag;
	uint32_t line;
	uint8_t nargs;
	uint8_t types[RT_MAX_ARGS];
	uint32_t a32[4];
	uint64_t a64[2];
};

/*
 * One event record against what the source said: the slot header, the site
 * the library copied into the arena, and every argument field.
 */
static void check_event(const struct ring_view_record *r, const struct expected_event *x,
			const char *func)
{
	CHECK_EQ(r->head.kind, RT_REC_TRACE);
	CHECK_EQ(r->head.nslots, RT_TRACE_SLOTS(x->nargs));
	CHECK(r->head.cpu == RT_CPU_UNKNOWN || r->head.cpu < get_nprocs_conf());
	CHECK(r->head.counter >= rt_arena.header->start.counter);
	const struct rt_site_entry *s = &rt_arena.sites[r->head.site];
	CHECK_EQ(s->valid, 1);
	CHECK_EQ(s->kind, RT_SITE_TRACE);
	CHECK_STR(site_string(s->tag_offset), x->tag);
	CHECK_EQ(s->tag_length, strlen(x->tag));
	CHECK_STR(site_string(s->file_offset), __FILE__);
	CHECK_EQ(s->file_length, strlen(__FILE__));
	CHECK_STR(site_string(s->func_offset), func);
	CHECK_EQ(s->func_length, strlen(func));
	CHECK_EQ(s->line, x->line);
	CHECK_EQ(s->nargs, x->nargs);
	for (unsigned i = 0; i < RT_MAX_ARGS; i++)
		CHECK_EQ(s->arg_types[i], i < x->nargs ? x->types[i] : 0);
	CHECK_EQ(r->head.a0, x->a32[0]);
	CHECK_EQ(r->head.a1, x->a32[1]);
	if (r->head.nslots == 2) {
		CHECK_EQ(r->cont.reserved, 0);
		CHECK_EQ(r->cont.a2, x->a32[2]);
		CHECK_EQ(r->cont.a3, x->a32[3]);
		CHECK_EQ(r->cont.a4, x->a64[0]);
		CHECK_EQ(r->cont.a5, x->a64[1]);
	}
}

/* Events recorded in order from position 0 of a fresh ring. */
static void check_events_from_start(const struct expected_event *x, size_t n, const char *func)
{
	uint32_t ring;
	if (!my_ring(&ring))
		return;
	struct ring_view_record r[16];
	uint64_t skipped;
	size_t got = read_window(ring, r, 16, &skipped);
	CHECK_EQ(got, n);
	CHECK_EQ(skipped, 0);
	uint64_t pos = 0, counter = 0;
	for (size_t i = 0; i < got && i < n; i++) {
		CHECK_EQ(r[i].seq, pos);
		CHECK_EQ(r[i].record, i);
		CHECK(r[i].head.counter >= counter); /* one thread: time never runs back */
		counter = r[i].head.counter;
		check_event(&r[i], &x[i], func);
		pos += r[i].head.nslots;
	}
	const struct rt_ring_desc *d = &rt_arena.rings[ring];
	CHECK_EQ(d->head, pos);
	CHECK_EQ(d->reserve, d->head);
	CHECK_EQ(d->records, n);
	CHECK_EQ(d->dropped, 0);
	CHECK_EQ(rt_arena.header->sites_used, 1 + n); /* every event here has its own site */
}

#define CHAR_TYPE (((char)-1 < 0 ? RT_ARG_SIGNED : RT_ARG_UNSIGNED) | 1)

/* ---- the cases ------------------------------------------------------------- */

/*
 * A process forked before its parent ever traced starts its own arena, and
 * its forking thread records like any other.  Every case here runs in such
 * a child; this one tests it by name, one generation further down.
 */
static void test_fork_before_tracing(struct case_env *env)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		check_failures = 0;
		if (start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 0)) {
			RT_TRACE("after fork", 1);
			CHECK_EQ(ringtrace__tls_writer.state, RT_WRITER_ATTACHED);
			CHECK_EQ(rt_arena.header->threads_used, 1);
			CHECK_EQ(rt_arena.header->lost_untracked, 0);
			CHECK_EQ(rt_arena.rings[0].records, 1);
		}
		exit(check_failure_count() ? 1 : 0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Events of 0 to 2 arguments: one slot each, values stored exactly. */
static void test_one_slot_records(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 0))
		return;
	unsigned u32max = UINT32_MAX;
	int minus_one = -1;
	int32_t int_min = INT32_MIN;
	short minus_two = -2;
	unsigned char uc = 255;
	_Bool yes = 1;
	char c = 'x';
	uint64_t wide = 0x100000002ull; /* arguments 1-4 keep their low 32 bits */

	/* each lineN names the line above it: the line of its RT_TRACE */
	RT_TRACE("no args");
	const uint32_t line0 = __LINE__ - 1;
	RT_TRACE("one arg", u32max);
	const uint32_t line1 = __LINE__ - 1;
	RT_TRACE("two signed", minus_one, int_min);
	const uint32_t line2 = __LINE__ - 1;
	RT_TRACE("small types", minus_two, uc);
	const uint32_t line3 = __LINE__ - 1;
	RT_TRACE("bool and char", yes, c);
	const uint32_t line4 = __LINE__ - 1;
	RT_TRACE("wide in narrow", wide);
	const uint32_t line5 = __LINE__ - 1;

	const struct expected_event x[] = {
	    {"no args", line0, 0, {0}, {0}, {0}},
	    {"one arg", line1, 1, {RT_ARG_UNSIGNED | 4}, {UINT32_MAX}, {0}},
	    {"two signed",
	     line2,
	     2,
	     {RT_ARG_SIGNED | 4, RT_ARG_SIGNED | 4},
	     {0xffffffffu, 0x80000000u},
	     {0}},
	    {"small types",
	     line3,
	     2,
	     {RT_ARG_SIGNED | 2, RT_ARG_UNSIGNED | 1},
	     {0xfffffffeu, 255},
	     {0}},
	    {"bool and char", line4, 2, {RT_ARG_UNSIGNED | 1, CHAR_TYPE}, {1, 'x'}, {0}},
	    {"wide in narrow", line5, 1, {RT_ARG_UNSIGNED | 8}, {2}, {0}},
	};
	check_events_from_start(x, sizeof(x) / sizeof(x[0]), __func__);
}

/* Events of 3 to 6 arguments: two slots, 32-bit fields 1-4, 64-bit fields 5-6. */
static void test_two_slot_records(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 0))
		return;
	unsigned top = 0xfffffffeu;
	int minus_seven = -7;
	int64_t i64_min = INT64_MIN;
	uint64_t u64_max = UINT64_MAX;
	void *pointer = &top;
	long minus_big = -0x123456789abcll;

	/* each lineN names the line above it: the line of its RT_TRACE */
	RT_TRACE("three", 1, 2, 3);
	const uint32_t line0 = __LINE__ - 1;
	RT_TRACE("four", top, minus_seven, INT32_MAX, INT32_MIN);
	const uint32_t line1 = __LINE__ - 1;
	RT_TRACE("five", 1u, 2u, 3u, 4u, u64_max);
	const uint32_t line2 = __LINE__ - 1;
	RT_TRACE("six", top, minus_seven, -1, 0u, i64_min, pointer);
	const uint32_t line3 = __LINE__ - 1;
	RT_TRACE("six negative", 0, 0, 0, 0, minus_big, minus_seven);
	const uint32_t line4 = __LINE__ - 1;

	const uint8_t s4 = RT_ARG_SIGNED | 4, u4 = RT_ARG_UNSIGNED | 4;
	const uint8_t ptr = RT_ARG_POINTER | sizeof(void *);
	const struct expected_event x[] = {
	    {"three", line0, 3, {s4, s4, s4}, {1, 2, 3}, {0}},
	    {"four",
	     line1,
	     4,
	     {u4, s4, s4, s4},
	     {0xfffffffeu, 0xfffffff9u, 0x7fffffffu, 0x80000000u},
	     {0}},
	    {"five", line2, 5, {u4, u4, u4, u4, RT_ARG_UNSIGNED | 8}, {1, 2, 3, 4}, {UINT64_MAX}},
	    {"six",
	     line3,
	     6,
	     {u4, s4, s4, u4, RT_ARG_SIGNED | 8, ptr},
	     {0xfffffffeu, 0xfffffff9u, 0xffffffffu, 0},
	     {0x8000000000000000ull, (uint64_t)(uintptr_t)&top}},
	    {"six negative",
	     line4,
	     6,
	     {s4, s4, s4, s4, RT_ARG_SIGNED | sizeof(long), s4},
	     {0, 0, 0, 0},
	     {(uint64_t)-0x123456789abcll, (uint64_t)-7}},
	};
	check_events_from_start(x, sizeof(x) / sizeof(x[0]), __func__);
}

/* Which events of the wrap test take two slots: an odd period, so one straddles the end. */
static int wrap_is_two_slot(uint64_t k)
{
	return k % 4 == 3;
}

/*
 * Flight mode: the ring laps several times; the newest records stay, the
 * record and slot sequence numbers keep running, every slot carries its
 * own position, and a two-slot record may straddle the ring's end.
 */
static void test_flight_wraps(struct case_env *env)
{
	enum { EVENTS = 900 };
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 0))
		return;
	for (uint64_t k = 0; k < EVENTS; k++) {
		if (wrap_is_two_slot(k))
			RT_TRACE("wrap two", k, 0, 0, 0, k << 32 | k, ~k);
		else
			RT_TRACE("wrap one", k);
	}
	/* where each event went, by the rules of the protocol */
	static uint64_t pos_of[EVENTS];
	uint64_t head = 0;
	for (uint64_t k = 0; k < EVENTS; k++) {
		pos_of[k] = head;
		head += wrap_is_two_slot(k) ? 2 : 1;
	}
	uint32_t ring;
	if (!my_ring(&ring))
		return;
	const struct rt_ring_desc *d = &rt_arena.rings[ring];
	CHECK_EQ(d->head, head);
	CHECK_EQ(d->reserve, head);
	CHECK_EQ(d->records, EVENTS);
	CHECK_EQ(d->dropped, 0);

	/* every slot of the ring is tagged with the newest position it holds */
	const union rt_slot *slots = rt_arena_ring_slots(ring);
	for (uint64_t p = head - RING_SLOTS; p < head; p++)
		CHECK_EQ(slots[p % RING_SLOTS].head.seq, (uint32_t)p);

	static struct ring_view_record r[RING_SLOTS];
	uint64_t skipped;
	size_t got = read_window(ring, r, RING_SLOTS, &skipped);
	uint64_t first = 0; /* the oldest event whose first slot survived */
	while (pos_of[first] < head - RING_SLOTS)
		first++;
	CHECK_EQ(got, EVENTS - first);
	/* the one slot before it is the second half of an overwritten record, or nothing */
	CHECK_EQ(skipped, pos_of[first] - (head - RING_SLOTS));
	CHECK(skipped <= 1);
	int straddles = 0;
	for (size_t i = 0; i < got; i++) {
		uint64_t k = first + i;
		CHECK_EQ(r[i].seq, pos_of[k]);
		CHECK_EQ(r[i].record, k);
		CHECK_EQ(r[i].head.a0, (uint32_t)k);
		if (wrap_is_two_slot(k)) {
			CHECK_EQ(r[i].head.nslots, 2);
			CHECK_EQ(r[i].cont.a4, k << 32 | k);
			CHECK_EQ(r[i].cont.a5, ~k);
			straddles += pos_of[k] % RING_SLOTS == RING_SLOTS - 1;
		} else {
			CHECK_EQ(r[i].head.nslots, 1);
		}
	}
	/* guards the test itself: the pattern must put a record across the ring's end */
	CHECK_EQ(straddles, 1);
}

/*
 * Stream mode with a collector that does not keep up: the ring fills, later
 * events are dropped and counted, nothing is overwritten; once the test (as
 * the collector) consumes slots, a lost note with the count and the first and
 * last dropped times comes before the next event - but only when both fit.
 */
static void test_stream_drops(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_STREAM, RING_BYTES, 0))
		return;
	enum { FILL = 200 };
	for (uint32_t k = 0; k < FILL; k++)
		RT_TRACE("stream", k);
	uint32_t ring;
	if (!my_ring(&ring))
		return;
	struct rt_ring_desc *d = &rt_arena.rings[ring];
	struct rt_thread_entry *me = &rt_arena.threads[ringtrace__tls_writer.thread];
	CHECK_EQ(d->head, RING_SLOTS);
	CHECK_EQ(d->records, RING_SLOTS);
	CHECK_EQ(d->dropped, FILL - RING_SLOTS);
	/* the dropped events' newest is kept outside the ring */
	CHECK(rt_test_last(me).valid != 0);
	CHECK_EQ(rt_test_last(me).a32[0], FILL - 1);

	static struct ring_view_record r[RING_SLOTS];
	uint64_t skipped;
	size_t got = read_window(ring, r, RING_SLOTS, &skipped);
	CHECK_EQ(got, RING_SLOTS);
	CHECK_EQ(skipped, 0);
	for (size_t i = 0; i < got; i++)
		CHECK_EQ(r[i].head.a0, i); /* the oldest kept: nothing was overwritten */
	uint64_t last_kept_counter = r[got - 1].head.counter;

	/* two free slots: a lost note (2) and the event (1) do not fit, so drop again */
	__atomic_store_n(&d->tail, 2, __ATOMIC_RELEASE);
	RT_TRACE("stream", FILL);
	CHECK_EQ(d->head, RING_SLOTS);
	CHECK_EQ(d->dropped, FILL - RING_SLOTS + 1);

	__atomic_store_n(&d->tail, RING_SLOTS, __ATOMIC_RELEASE);
	RT_TRACE("stream", FILL + 1);
	CHECK_EQ(d->head, RING_SLOTS + 3);
	CHECK_EQ(d->records, RING_SLOTS + 2);
	CHECK_EQ(d->dropped, FILL - RING_SLOTS + 1); /* counted once, not again by the note */

	struct ring_view_record lost, event;
	const union rt_slot *slots = rt_arena_ring_slots(ring);
	if (CHECK(ring_view_parse(slots, RING_SLOTS - 1, RING_SLOTS, d->head, &lost))) {
		CHECK_EQ(lost.head.kind, RT_REC_LOST);
		CHECK_EQ(lost.head.nslots, 2);
		CHECK_EQ(lost.head.site, 0);
		CHECK_EQ(lost.head.record, RING_SLOTS);
		CHECK_EQ(lost.head.a0, RT_LOST_DROPPED);
		CHECK_EQ(lost.cont.a4, FILL - RING_SLOTS + 1); /* the count */
		uint64_t first = lost.head.counter, last = lost.cont.a5;
		CHECK(last_kept_counter <= first);
		CHECK(first <= last);
		if (CHECK(
			ring_view_parse(slots, RING_SLOTS - 1, RING_SLOTS + 2, d->head, &event))) {
			CHECK_EQ(event.head.kind, RT_REC_TRACE);
			CHECK_EQ(event.head.record, RING_SLOTS + 1);
			CHECK_EQ(event.head.a0, FILL + 1);
			CHECK(last <= event.head.counter);
		}
	}

	/* no note before the next event: nothing was dropped since */
	RT_TRACE("stream", FILL + 2);
	CHECK_EQ(d->head, RING_SLOTS + 4);
	CHECK_EQ(slots[(RING_SLOTS + 3) % RING_SLOTS].head.kind, RT_REC_TRACE);
	CHECK_EQ(slots[(RING_SLOTS + 3) % RING_SLOTS].head.a0, FILL + 2);
}

/*
 * A coarse counter (AArch64's ticks at tens of MHz) can stamp a thread's
 * last record and the events dropped after it alike: when the thread ends,
 * its last event is the one it emitted last, whatever the counters say.
 */
enum { TIE_FILL = 200 };
static uint32_t tie_thread = UINT32_MAX;
static uint64_t tie_ring_records;

static void *drop_behind_a_tie(void *arg)
{
	(void)arg;
	for (uint32_t k = 0; k < TIE_FILL; k++)
		RT_TRACE("tie", k);
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (w->state != RT_WRITER_ATTACHED || w->dropped == 0)
		return NULL;
	tie_thread = w->thread;
	tie_ring_records = w->records;
	/* both copies of the kept (dropped) event take the ring's last record's stamp */
	uint64_t last_in_ring = w->slots[(w->head - 1) & w->mask].head.counter;
	struct rt_thread_entry *e = &rt_arena.threads[w->thread];
	for (int i = 0; i < 2; i++)
		e->last[i].counter = last_in_ring;
	return NULL;
}

static void test_stream_last_after_tie(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_STREAM, RING_BYTES, 0))
		return;
	pthread_t t;
	pthread_create(&t, NULL, drop_behind_a_tie, NULL);
	pthread_join(t, NULL);
	if (!CHECK(tie_thread != UINT32_MAX))
		return;
	const struct rt_thread_entry *e = &rt_arena.threads[tie_thread];
	CHECK_EQ(e->state, RT_THREAD_EXITED);
	CHECK(rt_test_last(e).valid != 0);
	CHECK_EQ(rt_test_last(e).a32[0], TIE_FILL - 1);
	/* dropped after every record the ring had: its count is kept beside it */
	CHECK(rt_test_last(e).flags & RT_LAST_F_RING_RECORDS);
	CHECK_EQ(rt_test_last(e).ring_records, tie_ring_records);
}

struct worker {
	pthread_t thread;
	int index;
	pid_t tid;
	uint32_t events;     /* how many events it records */
	uint32_t thread_idx; /* its thread-table index */
	const char *kernel_name;
	const char *trace_name;	 /* for ringtrace_set_thread_name, or NULL */
	const char *late_name;	 /* kernel name set after its first event, or NULL */
	pthread_barrier_t *hold; /* wait here twice (before finishing) when set */
};

/* One site shared by every thread. */
static void trace_shared(uint32_t index, uint32_t i)
{
	RT_TRACE("shared", index, i);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	w->tid = current_tid();
	if (w->kernel_name)
		pthread_setname_np(pthread_self(), w->kernel_name);
	if (w->trace_name)
		ringtrace_set_thread_name(w->trace_name);
	for (uint32_t i = 0; i < w->events; i++) {
		trace_shared((uint32_t)w->index, i);
		if (i == 0 && w->late_name)
			pthread_setname_np(pthread_self(), w->late_name);
	}
	w->thread_idx = ringtrace__tls_writer.thread;
	if (w->hold) {
		pthread_barrier_wait(w->hold);
		pthread_barrier_wait(w->hold);
	}
	return NULL;
}

static void run_worker(struct worker *w)
{
	pthread_create(&w->thread, NULL, worker_main, w);
	pthread_join(w->thread, NULL);
}

/* The header and the live counters after a main thread and three workers traced. */
static void test_counters(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, 5000, 8))
		return;
	const struct rt_arena_header *h = rt_arena.header;
	CHECK(memcmp(h->magic, RT_ARENA_MAGIC, 8) == 0);
	CHECK_EQ(h->version, RT_FORMAT_VERSION);
	CHECK_EQ(h->header_size, RT_ARENA_HEADER_SIZE);
	CHECK_EQ(h->state, RT_ARENA_RUNNING);
	CHECK_EQ(h->ring_bytes_requested, 5000);
	CHECK_EQ(h->ring_bytes, 4096); /* the largest power of two not above */
	CHECK_EQ(h->slot_size, RT_SLOT_SIZE);
	CHECK_EQ(h->mode, RT_MODE_FLIGHT);
	CHECK_EQ(h->flags, RT_ARENA_F_USER_PATH);
	CHECK_EQ(h->ring_count, 8);
	CHECK_EQ(h->pid, getpid());
	struct stat st;
	CHECK(stat(env->arena, &st) == 0 && (uint64_t)st.st_size == h->arena_size);
	char exe[RT_PROGRAM_MAX] = "";
	CHECK(readlink("/proc/self/exe", exe, sizeof(exe) - 1) > 0);
	CHECK_STR(h->program, exe);
	CHECK_STR(ringtrace_arena_path(), env->arena);
	CHECK(ringtrace_enabled());
	CHECK_EQ(h->rings_used, 0); /* tracing on takes no ring until a thread traces */
	CHECK_EQ(h->threads_used, 0);
	CHECK_EQ(h->sites_used, 1); /* id 0 means unregistered */

	RT_TRACE("main", 1);
	uint32_t ring;
	CHECK(my_ring(&ring) && ring == 0);
	struct worker w[3] = {
	    {.index = 0, .events = 5, .kernel_name = "worker-0"},
	    {.index = 1, .events = 6, .kernel_name = "worker-1", .trace_name = "renamed-1"},
	    {.index = 2, .events = 7, .kernel_name = "worker-2", .late_name = "late-name-2"},
	};
	for (int i = 0; i < 3; i++)
		run_worker(&w[i]);
	trace_shared(99, 0); /* a site registered by a worker: no new entry */

	CHECK_EQ(h->sites_used, 1 + 2);
	CHECK_EQ(h->threads_used, 4);
	CHECK_EQ(h->rings_used, 4);
	CHECK_EQ(h->ring_reuses, 0);
	CHECK_EQ(h->threads_untracked, 0);
	CHECK_EQ(h->lost_untracked, 0);
	CHECK_EQ(h->sites_refused, 0);
	CHECK_EQ(rt_arena.rings[0].records, 2);

	const struct rt_thread_entry *main_entry = &rt_arena.threads[0];
	CHECK_EQ(main_entry->tid, current_tid());
	CHECK_EQ(main_entry->state, RT_THREAD_LIVE);
	CHECK_EQ(main_entry->ring, 0);
	CHECK_EQ(main_entry->end_record, UINT64_MAX);
	const char *want_names[3] = {"worker-0", "renamed-1", "late-name-2"};
	for (int i = 0; i < 3; i++) {
		const struct rt_thread_entry *e = &rt_arena.threads[w[i].thread_idx];
		CHECK_EQ(w[i].thread_idx, i + 1);
		CHECK_EQ(e->tid, w[i].tid);
		CHECK_EQ(e->state, RT_THREAD_EXITED);
		CHECK_EQ(e->ring, i + 1);
		CHECK_EQ(e->first_record, 0);
		CHECK_EQ(e->end_record, w[i].events);
		CHECK_EQ(rt_arena.rings[i + 1].records, w[i].events);
		CHECK_EQ(rt_arena.rings[i + 1].state, RT_RING_RELEASED);
		CHECK(e->start_counter <= e->exit_counter);
		CHECK_STR(e->name, want_names[i]);
		CHECK(rt_test_last(e).valid !=
		      0); /* its newest event, kept before the ring may pass on */
		CHECK_EQ(rt_test_last(e).a32[0], i);
		CHECK_EQ(rt_test_last(e).a32[1], w[i].events - 1);
		/* a copy of its ring's last record names that record */
		CHECK(rt_test_last(e).flags & RT_LAST_F_RING_RECORDS);
		CHECK_EQ(rt_test_last(e).ring_records, w[i].events - 1);
	}
	CHECK_EQ(rt_arena.rings[0].state, RT_RING_OWNED);
	CHECK_EQ(rt_arena.rings[4].state, RT_RING_UNUSED);
}

/*
 * Six threads, one after the other, through two rings: the third thread
 * on takes the ring released longest ago, the ring's record numbers run on,
 * and the thread entries split each ring's records between its owners.
 */
static void test_ring_reuse_oldest_first(struct case_env *env)
{
	enum { THREADS = 6, RINGS = 2 };
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, RINGS))
		return;
	struct worker w[THREADS];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < THREADS; i++) {
		w[i].index = i;
		w[i].events = 10 + 7 * (uint32_t)i; /* distinct, so a wrong split shows */
		if (i == 3)
			w[i].events = 300; /* laps the ring: some of its records are overwritten */
		run_worker(&w[i]);
	}
	const struct rt_arena_header *h = rt_arena.header;
	CHECK_EQ(h->rings_used, RINGS);
	CHECK_EQ(h->ring_reuses, THREADS - RINGS);
	CHECK_EQ(h->threads_used, THREADS);

	for (int i = 0; i < THREADS; i++) {
		const struct rt_thread_entry *e = &rt_arena.threads[w[i].thread_idx];
		CHECK_EQ(e->tid, w[i].tid);
		CHECK_EQ(e->ring, i % RINGS); /* oldest released first */
		CHECK_EQ(e->state, RT_THREAD_EXITED);
		CHECK_EQ(e->end_record - e->first_record, w[i].events);
		CHECK(rt_test_last(e).valid != 0);
		CHECK_EQ(rt_test_last(e).a32[1], w[i].events - 1);
		/* the next owner of the ring starts where this one ended */
		if (i + RINGS < THREADS)
			CHECK_EQ(rt_arena.threads[w[i + RINGS].thread_idx].first_record,
				 e->end_record);
		if (i < RINGS)
			CHECK_EQ(e->first_record, 0);
	}
	for (uint32_t ring = 0; ring < RINGS; ring++) {
		const struct rt_ring_desc *d = &rt_arena.rings[ring];
		const struct rt_thread_entry *newest =
		    &rt_arena.threads[w[THREADS - RINGS + ring].thread_idx];
		CHECK_EQ(d->records, newest->end_record);
		CHECK_EQ(d->state, RT_RING_RELEASED);
		/* every surviving record belongs to the thread whose range holds it */
		struct ring_view v;
		struct ring_view_record r;
		ring_view_open(&v, ring);
		uint64_t seen = 0;
		while (ring_view_next(&v, &r)) {
			int owner = -1;
			for (int i = (int)ring; i < THREADS; i += RINGS) {
				const struct rt_thread_entry *e =
				    &rt_arena.threads[w[i].thread_idx];
				if (r.record >= e->first_record && r.record < e->end_record)
					owner = i;
			}
			if (CHECK(owner >= 0)) {
				const struct rt_thread_entry *e =
				    &rt_arena.threads[w[owner].thread_idx];
				CHECK_EQ(r.head.a0, owner);
				CHECK_EQ(r.head.a1, r.record - e->first_record);
			}
			seen++;
		}
		CHECK_EQ(v.skipped, 0);
		CHECK_EQ(seen, d->head < RING_SLOTS ? d->head : RING_SLOTS);
	}
}

/* A released ring is kept readable while a never-used ring is left. */
static void test_unused_ring_before_reuse(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 3))
		return;
	struct worker w[3] = {
	    {.index = 0, .events = 4}, {.index = 1, .events = 4}, {.index = 2, .events = 4}};
	for (int i = 0; i < 3; i++)
		run_worker(&w[i]);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(rt_arena.threads[w[i].thread_idx].ring, i);
		CHECK_EQ(rt_arena.rings[i].records, 4);
	}
	CHECK_EQ(rt_arena.header->ring_reuses, 0);
}

/*
 * More live threads than rings: the thread without a ring keeps an entry,
 * counts its lost events and keeps its last one; every 1024 lost events it
 * looks again, and takes a ring freed meanwhile.
 */
static void test_no_ring_threads(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 1))
		return;
	pthread_barrier_t hold;
	pthread_barrier_init(&hold, NULL, 2);
	struct worker owner = {.index = 0, .events = 3, .hold = &hold};
	pthread_create(&owner.thread, NULL, worker_main, &owner);
	pthread_barrier_wait(&hold); /* the owner has its ring and keeps it */

	/* the main thread finds no ring */
	for (uint32_t i = 0; i < 500; i++)
		trace_shared(1, i);
	struct rt_thread_entry *me = &rt_arena.threads[ringtrace__tls_writer.thread];
	CHECK_EQ(ringtrace__tls_writer.state, RT_WRITER_NO_RING);
	CHECK_EQ(me->ring, RT_NO_RING);
	CHECK_EQ(me->lost_no_ring, 500);
	CHECK_EQ(me->state, RT_THREAD_LIVE);
	CHECK(rt_test_last(me).valid != 0);
	CHECK_EQ(rt_test_last(me).a32[0], 1);
	CHECK_EQ(rt_test_last(me).a32[1], 499);
	CHECK_EQ(rt_arena.rings[0].records, 3);

	pthread_barrier_wait(&hold);
	pthread_join(owner.thread, NULL); /* ring 0 is released */
	for (uint32_t i = 500; i < 1500; i++)
		trace_shared(1, i);
	/* the 1024th lost event looked again: events from there on are recorded */
	CHECK_EQ(me->lost_no_ring, 1023);
	CHECK_EQ(me->ring, 0);
	CHECK_EQ(me->first_record, 3);
	CHECK_EQ(rt_arena.rings[0].records, 3 + 1500 - 1023);
	const union rt_slot *slots = rt_arena_ring_slots(0);
	struct ring_view_record r;
	uint64_t at = rt_arena.rings[0].head - 1;
	if (CHECK(ring_view_parse(slots, RING_SLOTS - 1, at, at + 1, &r)))
		CHECK_EQ(r.head.a1, 1499);
	CHECK_EQ(rt_arena.header->ring_reuses, 1);
	pthread_barrier_destroy(&hold);
}

/* After ringtrace_shutdown() the arena is closed and final; events are ignored. */
static void test_shutdown(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 0))
		return;
	for (int i = 0; i < 3; i++)
		RT_TRACE("before", i);
	uint32_t ring;
	if (!my_ring(&ring))
		return;
	const struct rt_ring_desc *d = &rt_arena.rings[ring];
	ringtrace_shutdown();
	CHECK_EQ(rt_arena.header->state, RT_ARENA_CLOSED);
	CHECK_EQ(rt_arena.threads[0].end_record, 3);
	for (int i = 0; i < 3; i++)
		RT_TRACE("after", i);
	CHECK_EQ(d->head, 3);
	CHECK_EQ(d->records, 3);
	CHECK(!ringtrace_enabled());
	CHECK(ringtrace_arena_path() == NULL);
	CHECK_EQ(ringtrace_init(NULL), -EALREADY);
	ringtrace_shutdown(); /* twice is harmless */
	CHECK_EQ(rt_arena.header->state, RT_ARENA_CLOSED);
}

/*
 * A child forked by a tracing process traces into an arena of its own
 * (PATH.PID.arena: PATH ends in .arena), made on its first event, with the
 * parent's sites at the same indices; the parent's arena is left alone.
 */
static void trace_parent_site(int i)
{
	RT_TRACE("parent", i);
}

static void test_forked_child_traces(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 0))
		return;
	trace_parent_site(1);
	uint32_t ring;
	if (!my_ring(&ring))
		return;
	const struct rt_ring_desc *d = &rt_arena.rings[ring];
	uint32_t parent_sites = rt_arena.header->sites_used;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int bad = 0;
		for (int i = 0; i < 10; i++)
			trace_parent_site(i); /* the site's id came with the fork */
		RT_TRACE("child, new site", 1, 2, 3);
		char want[PATH_MAX + 64];
		snprintf(want, sizeof(want), "%s/test.%d.arena", env->dir, (int)getpid());
		bad |= !ringtrace_enabled() || strcmp(ringtrace_arena_path(), want) != 0;
		bad |= rt_arena.header->pid != getpid();
		bad |= rt_arena.header->sites_used != parent_sites + 1;
		uint32_t r = rt_arena.threads[0].ring;
		bad |= rt_arena.header->threads_used != 1 || r == RT_NO_RING;
		bad |= r != RT_NO_RING && rt_arena.rings[r].records != 11;
		exit(bad ? 3 : 0); /* the destructor closes the child's arena, not the parent's */
	}
	int status = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(d->head, 1);
	CHECK_EQ(rt_arena.header->state, RT_ARENA_RUNNING);
	CHECK_EQ(rt_arena.header->sites_used, parent_sites);
	CHECK(access(env->arena, F_OK) == 0);
	char child_arena[PATH_MAX + 64];
	snprintf(child_arena, sizeof(child_arena), "%s/test.%d.arena", env->dir, (int)pid);
	CHECK(access(child_arena, F_OK) == 0);
	trace_parent_site(2);
	CHECK_EQ(d->head, 2);
}

/* ---- configuration ---------------------------------------------------------- */

struct bad_config {
	const char *variable;
	const char *value; /* "@" + name: a path in the case's directory */
	int error;	   /* what ringtrace_init returns */
	const char *says;  /* the stderr line contains this */
};

static const struct bad_config bad_buffer = {"RINGTRACE_BUFFER", "abc", -EINVAL,
					     "RINGTRACE_BUFFER=abc"};
static const struct bad_config small_buffer = {"RINGTRACE_BUFFER", "100", -EINVAL,
					       "RINGTRACE_BUFFER=100"};
static const struct bad_config bad_mode = {"RINGTRACE_MODE", "bogus", -EINVAL,
					   "RINGTRACE_MODE=bogus"};
static const struct bad_config bad_rings = {"RINGTRACE_RINGS", "0", -EINVAL, "RINGTRACE_RINGS"};
static const struct bad_config missing_dir = {"RINGTRACE_ARENA", "@no-such-dir/x.arena", -ENOENT,
					      "no-such-dir/x.arena"};

static void apply_bad_config(const struct case_env *env, const struct bad_config *b, char *value,
			     size_t size)
{
	if (b->value[0] == '@')
		snprintf(value, size, "%s/%s", env->dir, b->value + 1);
	else
		snprintf(value, size, "%s", b->value);
	setenv("RINGTRACE_ARENA", env->arena, 1);
	setenv(b->variable, value, 1);
}

/* Events after tracing turned itself off: no crash, no output, no file. */
static void check_tracing_stays_off(const struct case_env *env)
{
	struct captured_stderr c;
	char text[4096];
	capture_stderr(&c, env);
	for (int i = 0; i < 3; i++) {
		RT_TRACE("off", i);
		RT_TRACE("off six", i, 2, 3, 4, 5, 6);
	}
	ringtrace_set_thread_name("still off");
	CHECK(!ringtrace_enabled());
	CHECK_EQ(ringtrace_init(NULL), -EALREADY);
	CHECK_EQ(end_capture(&c, text, sizeof(text)), 0);
	CHECK(ringtrace_arena_path() == NULL);
}

/* ringtrace_init() with a bad environment: an error, one line on stderr, tracing off. */
static void test_bad_config_init(struct case_env *env)
{
	const struct bad_config *b = env->param;
	char value[PATH_MAX + 64];
	apply_bad_config(env, b, value, sizeof(value));
	struct captured_stderr c;
	char text[4096];
	capture_stderr(&c, env);
	int r = ringtrace_init(NULL);
	int lines = end_capture(&c, text, sizeof(text));
	CHECK_EQ(r, b->error);
	CHECK_EQ(lines, 1);
	CHECK(strncmp(text, "ringtrace: ", 11) == 0);
	if (!CHECK(strstr(text, b->says) != NULL))
		fprintf(stderr, "  the line was: %s", text);
	CHECK(access(env->arena, F_OK) != 0);
	check_tracing_stays_off(env);
}

/* The same through the first event, with no set-up call. */
static void test_bad_config_first_event(struct case_env *env)
{
	const struct bad_config *b = env->param;
	char value[PATH_MAX + 64];
	apply_bad_config(env, b, value, sizeof(value));
	struct captured_stderr c;
	char text[4096];
	capture_stderr(&c, env);
	for (int i = 0; i < 5; i++)
		RT_TRACE("first events", i);
	int lines = end_capture(&c, text, sizeof(text));
	CHECK_EQ(lines, 1);
	CHECK(strstr(text, b->says) != NULL);
	check_tracing_stays_off(env);
}

/* An options struct that claims to be too small to hold even its size. */
static void test_bad_options_size(struct case_env *env)
{
	struct ringtrace_options o;
	memset(&o, 0, sizeof(o));
	o.size = 2;
	o.arena_path = env->arena;
	struct captured_stderr c;
	char text[4096];
	capture_stderr(&c, env);
	CHECK_EQ(ringtrace_init(&o), -EINVAL);
	CHECK_EQ(end_capture(&c, text, sizeof(text)), 1);
	check_tracing_stays_off(env);
}

/* A file at the arena path that is not an arena is never modified, nor what a link points to. */
static void test_foreign_file_untouched(struct case_env *env)
{
	const char *kind = env->param;
	char target[PATH_MAX + 16];
	snprintf(target, sizeof(target), "%s/target", env->dir);
	if (strcmp(kind, "symlink") == 0) {
		/* even a link to an arena: the library must not follow links */
		char data[64] = RT_ARENA_MAGIC;
		write_file(target, data, sizeof(data));
		CHECK(symlink(target, env->arena) == 0);
	} else {
		const char data[] = "precious data, not an arena\n";
		write_file(env->arena, data, sizeof(data) - 1);
	}
	struct file_fingerprint before, before_target, after, after_target;
	fingerprint(env->arena, &before);
	fingerprint(target, &before_target);
	struct captured_stderr c;
	char text[4096];
	struct ringtrace_options o = {.size = sizeof(o), .arena_path = env->arena};
	capture_stderr(&c, env);
	int r = ringtrace_init(&o);
	int lines = end_capture(&c, text, sizeof(text));
	CHECK(r < 0 && r != -EALREADY);
	CHECK_EQ(lines, 1);
	CHECK(strstr(text, env->arena) != NULL);
	fingerprint(env->arena, &after);
	fingerprint(target, &after_target);
	check_same_file(&before, &after);
	check_same_file(&before_target, &after_target);
	check_tracing_stays_off(env);
}

/* An arena left by an earlier run (or an empty file) is replaced by the new one. */
static void test_old_arena_replaced(struct case_env *env)
{
	const char *kind = env->param;
	if (strcmp(kind, "empty") == 0) {
		write_file(env->arena, "", 0);
	} else {
		static char old[8192];
		memset(old, 0xaa, sizeof(old));
		memcpy(old, RT_ARENA_MAGIC, 8);
		write_file(env->arena, old, sizeof(old));
	}
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 0))
		return;
	RT_TRACE("new run", 1);
	struct rt_arena_header h;
	if (CHECK(read_header(env->arena, &h) == 0)) {
		struct stat st;
		CHECK(stat(env->arena, &st) == 0);
		CHECK_EQ(h.pid, getpid());
		CHECK_EQ(h.version, RT_FORMAT_VERSION);
		CHECK_EQ(h.state, RT_ARENA_RUNNING);
		CHECK_EQ(h.arena_size, st.st_size);
		CHECK_EQ(st.st_mode & 0777, 0600);
	}
	uint32_t ring;
	if (my_ring(&ring))
		CHECK_EQ(rt_arena.rings[ring].records, 1);
}

/*
 * No RINGTRACE_ARENA: a private file named after program and pid, in the
 * user's own directory (RINGTRACE_DIR when set), mode 0700.
 */
static void test_default_path(struct case_env *env)
{
	RT_TRACE("default path", 1);
	const char *path = ringtrace_arena_path();
	if (!CHECK(path != NULL))
		return;
	char exe[PATH_MAX] = "";
	CHECK(readlink("/proc/self/exe", exe, sizeof(exe) - 1) > 0);
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	char dir[PATH_MAX];
	const char *env_dir = getenv("RINGTRACE_DIR");
	if (env_dir && env_dir[0])
		snprintf(dir, sizeof(dir), "%s", env_dir);
	else
		snprintf(dir, sizeof(dir), "/dev/shm/ringtrace-%lu", (unsigned long)geteuid());
	char expected[2 * PATH_MAX + 64];
	snprintf(expected, sizeof(expected), "%s/ringtrace-%s.%d.arena", dir, base, (int)getpid());
	CHECK_STR(path, expected);
	struct stat st;
	CHECK(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700 &&
	      st.st_uid == geteuid());
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	CHECK_EQ(rt_arena.header->flags & RT_ARENA_F_USER_PATH, 0);
	snprintf(env->note, sizeof(env->note), "%s", path);
	if (env->param)
		raise(SIGKILL); /* a crash: no destructor runs */
}

static void default_path_removed(struct case_env *env, int status)
{
	child_passed(env, status);
	if (CHECK(env->note[0] != 0) && !CHECK(access(env->note, F_OK) != 0))
		unlink(env->note);
}

/* The record outlives a crash: the default-path arena is still there, RUNNING. */
static void default_path_kept_after_crash(struct case_env *env, int status)
{
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	struct rt_arena_header h;
	if (CHECK(env->note[0] != 0) && CHECK(read_header(env->note, &h) == 0)) {
		CHECK_EQ(h.state, RT_ARENA_RUNNING);
		CHECK_EQ(h.pid, env->child);
	}
	if (env->note[0])
		unlink(env->note);
}

static void test_user_path(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, RING_BYTES, 0))
		return;
	RT_TRACE("user path", 1);
}

/* An arena at a path the user chose is kept at exit, closed cleanly. */
static void user_path_kept(struct case_env *env, int status)
{
	child_passed(env, status);
	struct rt_arena_header h;
	if (CHECK(read_header(env->arena, &h) == 0)) {
		CHECK_EQ(h.state, RT_ARENA_CLOSED);
		CHECK_EQ(h.flags & RT_ARENA_F_USER_PATH, RT_ARENA_F_USER_PATH);
		CHECK_EQ(h.pid, env->child);
	}
}

/* ---- main ----------------------------------------------------------------------- */

/* ---- RT_LOG ------------------------------------------------------------- */

/* The payload of the log record at slot seq of ring (format.h), into out; its slots. */
static unsigned log_payload(uint32_t ring, uint64_t seq, uint8_t *out, size_t size)
{
	const union rt_slot *slots =
	    (const union rt_slot *)(rt_arena.ring_area +
				    (uint64_t)ring * rt_arena.header->ring_bytes);
	uint64_t mask = rt_arena.ring_slots - 1;
	const struct rt_slot_head *h = &slots[seq & mask].head;
	if (!CHECK(h->kind == RT_REC_LOG))
		return 0;
	unsigned n = h->nslots;
	memset(out, 0, size);
	memcpy(out, &h->a0, 4);
	memcpy(out + 4, &h->a1, 4);
	for (unsigned k = 1; k < n && 8 + 24 * k <= size; k++) {
		const union rt_slot *c = &slots[(seq + k) & mask];
		CHECK_EQ(c->cont.seq, (uint32_t)(seq + k));
		CHECK_EQ(c->cont.kind, RT_REC_CONT);
		CHECK_EQ(c->cont.index, k);
		memcpy(out + 8 + 24 * (k - 1), c->bytes + 8, 24);
	}
	return n;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t u32_at(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* What one RT_LOG call stores: its site, and every argument in the payload. */
static void test_log_record(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, 65536, 0))
		return;
	char text[] = "hello";
	const char *none = NULL;
	long double ld = -2.5L;
	double d = 0.125;
	void *tp = text;
	/* one line: compilers disagree on the __LINE__ of a macro call spread over several */
	RT_LOG(RT_LOG_WARN, "mix %d %u %s %f %Lf %p %s %c", -3, 7u, text, d, ld, tp, none, 'x');
	const uint32_t line = __LINE__ - 1;
	uint32_t ring;
	if (!my_ring(&ring))
		return;
	const struct rt_ring_desc *desc = &rt_arena.rings[ring];
	if (!CHECK(desc->records == 1))
		return;
	uint8_t p[RT_LOG_MAX_SLOTS * RT_SLOT_SIZE];
	const union rt_slot *slots =
	    (const union rt_slot *)(rt_arena.ring_area +
				    (uint64_t)ring * rt_arena.header->ring_bytes);
	uint32_t id = slots[0].head.site;
	const struct rt_site_entry *e = &rt_arena.sites[id];
	CHECK_EQ(e->kind, RT_SITE_LOG);
	CHECK_EQ(e->level, RT_LOG_WARN);
	CHECK_EQ(e->line, line);
	CHECK_EQ(e->nargs, 8);
	CHECK_STR(site_string(e->tag_offset), "mix %d %u %s %f %Lf %p %s %c");
	const uint8_t types[] = {RT_ARG_SIGNED | 4,  RT_ARG_UNSIGNED | 4,
				 RT_ARG_STRING | 8,  RT_ARG_FLOAT | 8,
				 RT_ARG_LONG_DOUBLE, RT_ARG_POINTER | sizeof(void *),
				 RT_ARG_STRING | 8,  RT_ARG_SIGNED | 4};
	CHECK_EQ(e->types_length, sizeof(types));
	CHECK(memcmp(site_string(e->types_offset), types, sizeof(types)) == 0);
	/* fixed parts: 8 + 8 + 16 + 8 + 16 + 8 + 16 + 8 = 88 bytes, then "hello" */
	unsigned n = log_payload(ring, 0, p, sizeof(p));
	CHECK_EQ(n, RT_LOG_SLOTS(88 + 5));
	CHECK_EQ(desc->head, n);
	CHECK_EQ(u64_at(p), (uint64_t)-3);
	CHECK_EQ(u64_at(p + 8), 7);
	CHECK_EQ(u64_at(p + 16), (uint64_t)(uintptr_t)text);
	CHECK_EQ(u32_at(p + 24), 5);
	CHECK_EQ(u32_at(p + 28), 0);
	double d2;
	memcpy(&d2, p + 32, 8);
	CHECK(d2 == d);
	long double ld2 = 0;
	memcpy(&ld2, p + 40, sizeof(ld2) < 16 ? sizeof(ld2) : 16);
	CHECK(ld2 == ld);
	CHECK_EQ(u64_at(p + 56), (uint64_t)(uintptr_t)tp);
	CHECK_EQ(u64_at(p + 64), 0);
	CHECK_EQ(u32_at(p + 72), 0);
	CHECK_EQ(u32_at(p + 76), RT_LOG_STR_NULL);
	CHECK_EQ(u64_at(p + 80), 'x');
	CHECK(memcmp(p + 88, "hello", 5) == 0);
	/* the rest of the last slot is zero */
	for (unsigned i = 93; i < 8 + 24 * (n - 1); i++)
		if (!CHECK(p[i] == 0))
			break;
}

/* The strings of a call keep 320 bytes in all; a string cut short says so. */
static void test_log_strings_cut(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, 65536, 0))
		return;
	char a[301], b[101];
	memset(a, 'a', 300);
	a[300] = 0;
	memset(b, 'b', 100);
	b[100] = 0;
	RT_LOG(RT_LOG_ERROR, "%s|%s|%s", a, b, "");
	uint32_t ring;
	if (!my_ring(&ring))
		return;
	uint8_t p[RT_LOG_MAX_SLOTS * RT_SLOT_SIZE];
	unsigned n = log_payload(ring, 0, p, sizeof(p));
	CHECK_EQ(n, RT_LOG_SLOTS(48 + RT_LOG_STRINGS_DEFAULT));
	CHECK_EQ(u32_at(p + 8), 300);
	CHECK_EQ(u32_at(p + 12), 0);
	CHECK_EQ(u32_at(p + 24), RT_LOG_STRINGS_DEFAULT - 300);
	CHECK_EQ(u32_at(p + 28), RT_LOG_STR_TRUNCATED);
	CHECK_EQ(u32_at(p + 40), 0);
	CHECK_EQ(u32_at(p + 44), 0); /* an empty string that fit: not cut */
	CHECK(memcmp(p + 48, a, 300) == 0);
	CHECK(memcmp(p + 348, b, RT_LOG_STRINGS_DEFAULT - 300) == 0);
}

/*
 * The inline paths lay out the payload the library would: one site called
 * twice writes its first record through the library (the site has no id
 * yet) and its second inline, for strings of every length about the inline
 * bound, two strings, a string among integers and pointers, a NULL one, and
 * a string limit below the string.  The two payloads must be equal, byte
 * for byte, slot count included.
 */
static int same_payload_twice(uint32_t ring, uint64_t *seq)
{
	uint8_t first[RT_LOG_MAX_SLOTS * RT_SLOT_SIZE], second[RT_LOG_MAX_SLOTS * RT_SLOT_SIZE];
	unsigned a = log_payload(ring, *seq, first, sizeof(first));
	unsigned b = log_payload(ring, *seq + a, second, sizeof(second));
	*seq += a + b;
	return CHECK(a == b && a > 0) && CHECK(memcmp(first, second, 8 + 24 * (a - 1)) == 0);
}

static void test_log_inline_same_payload(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, 1 << 20, 0))
		return;
	char text[80];
	for (unsigned i = 0; i < sizeof(text); i++)
		text[i] = (char)('A' + i % 26);
	uint32_t ring;
	uint64_t seq = 0;
	for (unsigned len = 0; len <= 70; len++) {
		char s[80];
		memcpy(s, text, len);
		s[len] = 0;
		for (int twice = 0; twice < 2; twice++)
			RT_LOG(RT_LOG_ERROR, "one %s", s);
		if (len == 0 && !my_ring(&ring))
			return;
		if (!same_payload_twice(ring, &seq))
			return;
		for (int twice = 0; twice < 2; twice++)
			RT_LOG(RT_LOG_ERROR, "mixed %d %s %p %s %llu", -(int)len, s, (void *)s,
			       s + len / 2, (unsigned long long)len << 40);
		if (!same_payload_twice(ring, &seq))
			return;
	}
	const char *nothing = NULL;
	for (int twice = 0; twice < 2; twice++)
		RT_LOG(RT_LOG_ERROR, "null %s %d", nothing, 3);
	if (!same_payload_twice(ring, &seq))
		return;
	for (unsigned n = 0; n <= 7; n++) {
		for (int twice = 0; twice < 2; twice++)
			RT_LOG(RT_LOG_ERROR, "%d %d %d %d %d %d %d", 1 + (int)n, -2, 3, -4, 5, -6,
			       7);
		if (!same_payload_twice(ring, &seq))
			return;
	}
	/* a limit below the string: cut, and said so, by the library in both calls */
	uint32_t limit = ringtrace__log_string_limit;
	ringtrace__log_string_limit = 5;
	for (int twice = 0; twice < 2; twice++)
		RT_LOG(RT_LOG_ERROR, "cut %s", "twenty bytes of text");
	ringtrace__log_string_limit = limit;
	uint8_t p[RT_LOG_MAX_SLOTS * RT_SLOT_SIZE];
	CHECK_EQ(log_payload(ring, seq, p, sizeof(p)), RT_LOG_SLOTS(16 + 5));
	CHECK_EQ(u32_at(p + 8), 5);
	CHECK_EQ(u32_at(p + 12), RT_LOG_STR_TRUNCATED);
	same_payload_twice(ring, &seq);
}

/* The threshold: info by default, set by the API, or by a store into the arena's header. */
static void test_log_threshold(struct case_env *env)
{
	if (!start_tracing(env, RINGTRACE_FLIGHT, 65536, 0))
		return;
	RT_LOG(RT_LOG_INFO, "kept %d", 1);
	uint32_t ring;
	if (!my_ring(&ring))
		return;
	const struct rt_ring_desc *d = &rt_arena.rings[ring];
	CHECK_EQ(ringtrace_get_level(), RT_LOG_INFO);
	CHECK_EQ(rt_arena.header->log_threshold, RT_LOG_INFO);
	RT_LOG(RT_LOG_DEBUG, "not kept %d", 2);
	CHECK_EQ(d->records, 1);
	CHECK_EQ(ringtrace_set_level(RT_LOG_DEBUG), RT_LOG_INFO);
	CHECK_EQ(rt_arena.header->log_threshold, RT_LOG_DEBUG);
	RT_LOG(RT_LOG_DEBUG, "kept now %d", 3);
	CHECK_EQ(d->records, 2);
	CHECK_EQ(ringtrace_set_level(0), -EINVAL);
	CHECK_EQ(ringtrace_set_level(7), -EINVAL);
	/* what `ringtrace level ARENA error` does */
	__atomic_store_n(&rt_arena.header->log_threshold, (uint32_t)RT_LOG_ERROR, __ATOMIC_RELAXED);
	CHECK_EQ(ringtrace_get_level(), RT_LOG_ERROR);
	RT_LOG(RT_LOG_WARN, "not kept %d", 4);
	RT_LOG(RT_LOG_ERROR, "kept %d", 5);
	RT_LOG(RT_LOG_FATAL, "kept %d", 6);
	CHECK_EQ(d->records, 4);
}

static const struct test_case cases[] = {
    {"fork_before_tracing", test_fork_before_tracing, NULL, NULL},
    {"one_slot_records", test_one_slot_records, NULL, NULL},
    {"two_slot_records", test_two_slot_records, NULL, NULL},
    {"flight_wraps", test_flight_wraps, NULL, NULL},
    {"stream_drops", test_stream_drops, NULL, NULL},
    {"stream_last_after_tie", test_stream_last_after_tie, NULL, NULL},
    {"counters", test_counters, NULL, NULL},
    {"ring_reuse_oldest_first", test_ring_reuse_oldest_first, NULL, NULL},
    {"unused_ring_before_reuse", test_unused_ring_before_reuse, NULL, NULL},
    {"no_ring_threads", test_no_ring_threads, NULL, NULL},
    {"shutdown", test_shutdown, NULL, NULL},
    {"forked_child_traces", test_forked_child_traces, NULL, NULL},
    {"bad_buffer_init", test_bad_config_init, NULL, &bad_buffer},
    {"small_buffer_init", test_bad_config_init, NULL, &small_buffer},
    {"bad_mode_init", test_bad_config_init, NULL, &bad_mode},
    {"bad_rings_init", test_bad_config_init, NULL, &bad_rings},
    {"missing_dir_init", test_bad_config_init, NULL, &missing_dir},
    {"bad_buffer_first_event", test_bad_config_first_event, NULL, &bad_buffer},
    {"bad_mode_first_event", test_bad_config_first_event, NULL, &bad_mode},
    {"missing_dir_first_event", test_bad_config_first_event, NULL, &missing_dir},
    {"bad_options_size", test_bad_options_size, NULL, NULL},
    {"foreign_file_untouched", test_foreign_file_untouched, NULL, "file"},
    {"symlink_untouched", test_foreign_file_untouched, NULL, "symlink"},
    {"old_arena_replaced", test_old_arena_replaced, NULL, "arena"},
    {"empty_file_replaced", test_old_arena_replaced, NULL, "empty"},
    {"default_path_removed_at_exit", test_default_path, default_path_removed, NULL},
    {"default_path_kept_after_crash", test_default_path, default_path_kept_after_crash, "crash"},
    {"user_path_kept_at_exit", test_user_path, user_path_kept, NULL},
    {"log_record", test_log_record, NULL, NULL},
    {"log_strings_cut", test_log_strings_cut, NULL, NULL},
    {"log_inline_same_payload", test_log_inline_same_payload, NULL, NULL},
    {"log_threshold", test_log_threshold, NULL, NULL},
};

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL; /* run one case by name */
	char top[] = "/tmp/ringtrace-test-ring.XXXXXX";
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		return 2;
	}
	struct case_env *env =
	    mmap(NULL, sizeof(*env), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (env == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	int passed = 0, failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (only && strcmp(only, cases[i].name) != 0)
			continue;
		int ok = run_case(&cases[i], top, env);
		printf("%s %s\n", ok ? "PASS" : "FAIL", cases[i].name);
		fflush(stdout);
		if (ok)
			passed++;
		else
			failed++;
	}
	remove_tree(top);
	printf("%d passed, %d failed\n", passed, failed);
	return failed || passed == 0 ? 1 : 0;
}
