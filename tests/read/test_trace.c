/*
 * test_trace.c - reading trace files: the trace set (read/trace_set.h),
 * `dump` and `summary` over files written by the test writer
 * (tests/lib/trace_gen.h) as the collector writes them.
 *
 *   test_trace DIR    (a scratch directory; the files are left there)
 *
 * Every test writes its files, reads them back and compares what comes out
 * with what was written: events in time order with their threads and
 * arguments, every loss with its cause and count, damage reported where
 * it was made and nothing invented.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/check.h"
#include "../lib/trace_gen.h"
#include "../lib/io_payload.h"
#include "cmd/cmd.h"
#include "common/output.h"
#include "decode/log_args.h"
#include "read/trace_set.h"

static const char *dir;

static char *path_of(const char *name)
{
	static char buf[8][512];
	static int next;
	char *p = buf[next++ % 8];
	snprintf(p, 512, "%s/%s", dir, name);
	return p;
}

/* What a read gave back: items in merge order, with their source. */
struct got {
	struct rt_item items[200000];
	uint32_t sources[200000];
	size_t count;
	uint64_t events;
	uint64_t lost[5]; /* by enum rt_loss_reason */
};

static struct got got;

static struct rt_trace_set *open_set(char **paths, size_t n)
{
	struct rt_trace_set *set = NULL;
	char message[512];
	int rc = rt_trace_set_open(paths, n, &set, message, sizeof(message));
	if (rc) {
		fprintf(stderr, "open: %s\n", message);
		CHECK_EQ(rc, 0);
		return NULL;
	}
	CHECK_EQ(rt_trace_set_count(set), 0);
	return set;
}

/*
 * The same walk again, its items taken a run at a time (rt_trace_set_run),
 * some runs only in part (rt_trace_set_took, none taken too): the same
 * items from the same sources as one at a time, in got.
 */
static void same_by_runs(struct rt_trace_set *set, int32_t tid, int64_t from_ns)
{
	static struct rt_item items[200000];
	static uint32_t sources[200000];
	size_t count = 0, runs = 0;
	uint64_t part = 0x9e3779b97f4a7c15ull;
	CHECK_EQ(rt_trace_set_start_from(set, tid, from_ns), 0);
	const struct rt_item *run;
	uint32_t source;
	size_t n;
	while ((n = rt_trace_set_run(set, &source, &run)) > 0) {
		runs++;
		part = part * 6364136223846793005ull + 1442695040888963407ull;
		if (runs % 3 == 0) {
			n = (size_t)(part >> 33) % (n + 1);
			rt_trace_set_took(set, n);
		}
		for (size_t i = 0; i < n; i++, count++)
			if (count < sizeof(items) / sizeof(items[0])) {
				items[count] = run[i];
				sources[count] = source;
			}
	}
	CHECK_EQ(count, got.count);
	int same = count == got.count;
	for (size_t i = 0; same && i < count && i < sizeof(items) / sizeof(items[0]); i++) {
		const struct rt_item *a = &got.items[i], *b = &items[i];
		same = a->kind == b->kind && a->counter == b->counter && a->seq == b->seq &&
		       a->thread == b->thread && a->tid == b->tid && a->flags == b->flags &&
		       a->site == b->site && got.sources[i] == sources[i] &&
		       memcmp(&a->args, &b->args, sizeof(a->args)) == 0;
		if (!CHECK(same))
			fprintf(stderr, "  by runs: item %zu of %zu differs\n", i, count);
	}
}

/* The items of a walk from from_ns (rt_trace_set_start_from), into got. */
static void read_from(struct rt_trace_set *set, int32_t tid, int64_t from_ns)
{
	memset(&got, 0, sizeof(got));
	CHECK_EQ(rt_trace_set_start_from(set, tid, from_ns), 0);
	const struct rt_item *it;
	uint32_t source;
	while ((it = rt_trace_set_next(set, &source)) != NULL) {
		if (got.count < sizeof(got.items) / sizeof(got.items[0])) {
			got.items[got.count] = *it;
			got.sources[got.count] = source;
		}
		got.count++;
		if (it->kind == RT_ITEM_TRACE)
			got.events++;
		else if (it->loss.reason < 5)
			got.lost[it->loss.reason] += it->loss.count;
	}
	same_by_runs(set, tid, from_ns);
}

static void read_all(struct rt_trace_set *set, int32_t tid)
{
	read_from(set, tid, INT64_MIN);
}

/* Items come out in time order. */
static void check_order(void)
{
	for (size_t i = 1; i < got.count && i < 200000; i++)
		if (!CHECK(rt_item_compare(&got.items[i - 1], &got.items[i]) <= 0))
			break;
}

/* Run `ringtrace` (this build's objects) on argv, output to a file; returns its exit status. */
static int run_tool(const char *out_name, int argc, char **argv, char **output)
{
	char *out_path = path_of(out_name);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int null = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(null, 2);
		_exit(rt_tool_main(argc, argv));
	}
	int status;
	waitpid(pid, &status, 0);
	if (output) {
		FILE *f = fopen(out_path, "rb");
		static char buf[1 << 22];
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		buf[n] = 0;
		if (f)
			fclose(f);
		*output = buf;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static size_t count_lines(const char *text, const char *needle)
{
	size_t n = 0;
	for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/* ---- a simple recording: one source, two threads, several blocks ---------- */

static void two_threads(struct tg *g, const char *name, uint64_t events)
{
	tg_init(g);
	tg_add_source(g, 0, 100, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(g, 0, 1, "one", 1, 10);
	tg_add_site(g, 0, 2, "six", 6, 20);
	tg_add_thread(g, 0, 101, "main", 0, TG_START_NS);
	tg_add_thread(g, 0, 102, "worker", 1, TG_START_NS);
	tg_open(g, path_of(name), 0x1234, 0);
	tg_file_head(g);
	for (uint64_t i = 0; i < events; i++) {
		/* interleaved in time: even counters main, odd worker */
		uint32_t ring = (uint32_t)(i & 1);
		tg_event(g, 0, ring, i % 3 == 0 ? 2 : 1, TG_START_NS + 1000 + i * 10, (uint32_t)i);
	}
	tg_close(g, RT_FILE_END_FINISHED);
}

/* rt_trace_set_skip_trace: drop the events of the site tagged "six" */
static int skips_six(void *state, const struct rt_site *site)
{
	(void)state;
	return site && site->tag_length == 3 && memcmp(site->tag, "six", 3) == 0;
}

static void test_basic(void)
{
	struct tg *g = malloc(sizeof(*g));
	two_threads(g, "basic.rt", 1000);
	char *paths[] = {path_of("basic.rt")};
	struct rt_trace_set *set = open_set(paths, 1);
	if (!set)
		return;
	CHECK_EQ(set->totals.present, 1000);
	CHECK_EQ(rt_counts_lost(&set->totals), 0);
	CHECK(!rt_trace_set_damaged(set));
	read_all(set, 0);
	CHECK_EQ(got.events, 1000);
	CHECK_EQ(got.count, 1000);
	check_order();
	for (size_t i = 0; i < got.count; i++) {
		const struct rt_item *it = &got.items[i];
		CHECK_EQ(it->counter, TG_START_NS + 1000 + i * 10);
		CHECK_EQ(it->tid, i & 1 ? 102 : 101);
		CHECK_EQ(it->args.a32[0], i);
		CHECK_EQ(it->seq, i / 2);
		if (i % 3 == 0)
			CHECK_EQ(it->args.a64[1], 6);
	}
	/* one thread */
	read_all(set, 102);
	CHECK_EQ(got.events, 500);

	/* a reader that drops "six" events: the rest as before, the dropped counted */
	rt_trace_set_skip_trace(set, skips_six, NULL);
	read_all(set, 0);
	CHECK_EQ(got.events, 666);
	CHECK_EQ(rt_trace_set_skipped(set), 334);
	check_order();
	for (size_t i = 0; i < got.count; i++) {
		/* the i-th event kept is event 3 * (i / 2) + 1 + i % 2 of all of them */
		uint64_t n = 3 * (i / 2) + 1 + i % 2;
		CHECK_EQ(got.items[i].counter, TG_START_NS + 1000 + n * 10);
		CHECK_EQ(got.items[i].tid, n & 1 ? 102 : 101);
	}
	read_all(set, 102); /* the worker's: i odd, i % 3 == 0 */
	CHECK_EQ(got.events, 333);
	CHECK_EQ(rt_trace_set_skipped(set), 167);
	CHECK_EQ(rt_trace_set_count(set), 0); /* a count drops nothing */
	CHECK_EQ(set->totals.present, 1000);
	rt_trace_set_skip_trace(set, NULL, NULL);
	read_all(set, 0);
	CHECK_EQ(got.events, 1000);
	CHECK_EQ(rt_trace_set_skipped(set), 0);
	rt_trace_set_close(set);

	/* the command: text and JSON */
	char *out;
	char *argv[] = {"ringtrace", "dump", path_of("basic.rt"), NULL};
	CHECK_EQ(run_tool("basic.txt", 3, argv, &out), 0);
	CHECK(strstr(out, "ringtrace: recovered 1000/1000 events from 2 threads (0 lost)") != NULL);
	CHECK(strstr(out, "[   0.000001000][cpu 0 tid 101 main] : 00000000 00000000 ") != NULL);
	CHECK_EQ(count_lines(out, "app0.c:func1:10 (one)\n"), 667 + 2 * 0);
	char *argj[] = {"ringtrace", "dump", "--json", path_of("basic.rt"), NULL};
	CHECK_EQ(run_tool("basic.json", 4, argj, &out), 0);
	CHECK_EQ(count_lines(out, "{\"kind\":\"trace\""), 1000);
	CHECK(strstr(out,
		     "{\"kind\":\"trace\",\"ts_ns\":1000,\"tid\":101,\"thread\":\"main\",\"cpu\":0,"
		     "\"seq\":0,\"tag\":\"six\",\"file\":\"src/app0.c\",\"line\":20,\"func\":"
		     "\"func2\",\"args\":[0,0,2,3,0,6]}") != NULL);
	CHECK(strstr(out, "\"pid\"") == NULL);
	char *argt[] = {"ringtrace", "dump", "--json", "--tail", "10", path_of("basic.rt"), NULL};
	CHECK_EQ(run_tool("tail.json", 6, argt, &out), 0);
	CHECK_EQ(count_lines(out, "{\"kind\":\"trace\""), 10);
	CHECK(strstr(out, "\"ts_ns\":10990,") != NULL);
	CHECK_EQ(count_lines(out, "{\"kind\":\"last_event\""), 2);
	free(g);
}

/* ---- file surgery --------------------------------------------------------- */

static unsigned char *slurp(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*size = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *b = malloc(*size + 1);
	if (fread(b, 1, *size, f) != *size)
		*size = 0;
	fclose(f);
	return b;
}

static void spit(const char *path, const unsigned char *b, size_t size)
{
	FILE *f = fopen(path, "wb");
	fwrite(b, 1, size, f);
	fclose(f);
}

/* Offset of the n-th SLOTS block (0-based) of a file's bytes, and its header. */
static size_t nth_slots_block(const unsigned char *b, size_t size, int n,
			      struct rt_block_header *out)
{
	size_t at = 0;
	while (at + RT_BLOCK_HEADER_SIZE <= size) {
		struct rt_block_header h;
		memcpy(&h, b + at, sizeof(h));
		if (h.type == RT_BLOCK_SLOTS && n-- == 0) {
			*out = h;
			return at;
		}
		at += h.size;
	}
	return SIZE_MAX;
}

/* ---- several sources, rotation, two recordings ------------------------------ */

static void test_rotation_and_sources(void)
{
	struct tg *g = malloc(sizeof(*g));
	char sub[512];
	snprintf(sub, sizeof(sub), "%s/rotated", dir);
	mkdir(sub, 0755);
	tg_init(g);
	tg_add_source(g, 0, 200, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_source(g, 1, 201, 200, RT_MODE_STREAM, TG_START_NS + 500);
	tg_add_site(g, 0, 1, "parent", 1, 1);
	tg_add_site(g, 1, 1, "child", 2, 2);
	tg_add_thread(g, 0, 200, "parent", 0, TG_START_NS);
	tg_add_thread(g, 1, 201, "child", 0, TG_START_NS);
	uint64_t t = TG_START_NS + 10;
	for (uint32_t f = 0; f < 3; f++) {
		char name[600];
		snprintf(name, sizeof(name), "%s/OUT.%06u", sub, f);
		tg_open(g, name, 0xabcdef, f);
		tg_file_head(g);
		for (int i = 0; i < 700; i++) {
			tg_event(g, 0, 0, 1, t, (uint32_t)(f * 1000 + i));
			tg_event(g, 1, 0, 1, t + 1, (uint32_t)(f * 1000 + i));
			t += 3;
		}
		tg_close(g, f < 2 ? RT_FILE_END_ROTATED : RT_FILE_END_FINISHED);
	}
	/* another recording, another process, in the same directory */
	struct tg *g2 = malloc(sizeof(*g2));
	tg_init(g2);
	tg_add_source(g2, 0, 300, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(g2, 0, 0, "other", 0, 3);
	tg_add_thread(g2, 0, 300, "other", 2, TG_START_NS);
	char name[600];
	snprintf(name, sizeof(name), "%s/zz-other.rt", sub);
	tg_open(g2, name, 0x777, 0);
	tg_file_head(g2);
	for (int i = 0; i < 100; i++)
		tg_event(g2, 0, 2, 0, TG_START_NS + 10 + (uint64_t)i * 60, 0);
	tg_close(g2, RT_FILE_END_FINISHED);

	char *paths[] = {sub};
	struct rt_trace_set *set = open_set(paths, 1);
	if (set) {
		CHECK_EQ(set->file_count, 4);
		CHECK_EQ(set->totals.present, 3 * 1400 + 100);
		CHECK_EQ(rt_counts_lost(&set->totals), 0);
		CHECK_EQ(set->processes, 3);
		CHECK(!rt_trace_set_damaged(set));
		read_all(set, 0);
		CHECK_EQ(got.events, 4300);
		check_order();
		/* per process, the values come back in order, each once */
		uint32_t next[3] = {0, 0, 0};
		for (size_t i = 0; i < got.count; i++) {
			const struct rt_item *it = &got.items[i];
			int k = it->tid == 200 ? 0 : it->tid == 201 ? 1 : 2;
			if (k == 2)
				continue;
			uint32_t want = (next[k] / 700) * 1000 + next[k] % 700;
			if (!CHECK(it->args.a32[0] == want))
				break;
			next[k]++;
		}
		CHECK_EQ(next[0], 2100);
		CHECK_EQ(next[1], 2100);
		rt_trace_set_close(set);
	}
	/* the last two files alone: the first file's records are earlier, not lost */
	char f1[600], f2[600];
	snprintf(f1, sizeof(f1), "%s/OUT.000001", sub);
	snprintf(f2, sizeof(f2), "%s/OUT.000002", sub);
	char *two[] = {f2, f1};
	set = open_set(two, 2);
	if (set) {
		CHECK_EQ(set->totals.present, 2 * 1400);
		CHECK_EQ(rt_counts_lost(&set->totals), 0);
		CHECK_EQ(set->sources[1].earlier_records + set->sources[2].earlier_records, 1400);
		rt_trace_set_close(set);
	}
	/* JSON of several processes carries pid */
	char *out;
	char *argv[] = {"ringtrace", "dump", "--json", sub, NULL};
	CHECK_EQ(run_tool("rotated.json", 4, argv, &out), 0);
	CHECK_EQ(count_lines(out, "{\"kind\":\"trace\""), 4300);
	CHECK_EQ(count_lines(out, "\"pid\":201,\"tid\":201,\"thread\":\"child\""), 2100 + 1);
	/* the child started 500 ns after the parent: one zero for both */
	CHECK(strstr(out, "{\"kind\":\"trace\",\"ts_ns\":11,\"pid\":201,") != NULL);
	char *args[] = {"ringtrace", "summary", "--json", sub, NULL};
	CHECK_EQ(run_tool("rotated.summary", 4, args, &out), 0);
	CHECK(strstr(out, "\"events\":4300,") != NULL);
	CHECK(strstr(out, "{\"tag\":\"parent\",\"events\":2100}") != NULL);
	CHECK(strstr(out, "{\"tag\":\"other\",\"events\":100}") != NULL);
	CHECK(strstr(out, "{\"pid\":200,\"parent_pid\":0,") != NULL);
	CHECK(strstr(out, "{\"pid\":201,\"parent_pid\":200,") != NULL);
	free(g);
	free(g2);
}

/* ---- losses: LOST records, LOSS blocks, gaps --------------------------------- */

static void test_losses(void)
{
	struct tg *g = malloc(sizeof(*g));
	tg_init(g);
	tg_add_source(g, 0, 400, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(g, 0, 1, "ev", 1, 5);
	tg_add_thread(g, 0, 1234, "worker", 0, TG_START_NS);
	tg_add_thread(g, 0, 1235, "other", 1, TG_START_NS);
	tg_open(g, path_of("losses.rt"), 0x55, 0);
	tg_file_head(g);
	for (int i = 0; i < 100; i++)
		tg_event(g, 0, 0, 1, TG_START_NS + 1000 + (uint64_t)i, (uint32_t)i);
	/* 5000 dropped while the ring was full, reported by a LOST record */
	tg_lost_record(g, 0, 0, 1234567890ull + TG_START_NS, 5000, 1240000000ull + TG_START_NS);
	for (int i = 0; i < 100; i++)
		tg_event(g, 0, 0, 1, TG_START_NS + 1240000100ull + (uint64_t)i, (uint32_t)i);
	/* 30 records vanish without a word: a gap, damaged */
	tg_skip(g, 0, 0, 30);
	for (int i = 0; i < 10; i++)
		tg_event(g, 0, 0, 1, TG_START_NS + 1300000000ull + (uint64_t)i, (uint32_t)i);
	/* 20 more vanish, but a LOSS block says they were overwritten: no gap */
	uint64_t at = g->sources[0].rings[0].record;
	tg_skip(g, 0, 0, 20);
	tg_loss_block(g, 0, 0, 0, 1, at, 20, TG_START_NS + 1300000100ull, 0);
	for (int i = 0; i < 10; i++)
		tg_event(g, 0, 0, 1, TG_START_NS + 1400000000ull + (uint64_t)i, (uint32_t)i);
	/* the other thread: torn at its end, and 7 drops nobody noted */
	for (int i = 0; i < 10; i++)
		tg_event(g, 0, 1, 1, TG_START_NS + 2000 + (uint64_t)i, (uint32_t)i);
	tg_flush_all(g);
	tg_loss_block(g, 0, 1, 1, 3, g->sources[0].rings[1].record, 1, TG_START_NS + 3000, 0);
	tg_loss_block(g, 0, 1, 1, 2, 0, 7, TG_START_NS + 2500, TG_START_NS + 2900);
	tg_close(g, RT_FILE_END_FINISHED);

	char *paths[] = {path_of("losses.rt")};
	struct rt_trace_set *set = open_set(paths, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 230);
		CHECK_EQ(set->totals.dropped, 5007);
		CHECK_EQ(set->totals.overwritten, 20);
		CHECK_EQ(set->totals.torn, 1);
		CHECK_EQ(set->totals.damaged, 30);
		CHECK(rt_trace_set_damaged(set));
		CHECK_EQ(rt_trace_set_damage_regions(set), 0);
		const struct rt_reader *rd = set->sources[1].reader;
		CHECK_EQ(rd->thread_count, 2);
		CHECK_EQ(rd->threads[0].counts.damaged, 30);
		CHECK_EQ(rd->threads[0].counts.dropped, 5000);
		CHECK_EQ(rd->threads[1].counts.torn, 1);
		CHECK_EQ(rd->threads[1].counts.dropped, 7);
		CHECK_EQ(set->sources[1].lost_records, 1);
		read_all(set, 0);
		check_order();
		CHECK_EQ(got.lost[RT_LOSS_DAMAGED], 30);
		/* the gap names where it began */
		for (size_t i = 0; i < got.count; i++)
			if (got.items[i].kind == RT_ITEM_LOSS &&
			    got.items[i].loss.reason == RT_LOSS_DAMAGED) {
				CHECK_EQ(got.items[i].seq, 201);
				CHECK_EQ(got.items[i].tid, 1234);
			}
		rt_trace_set_close(set);
	}
	char *out;
	char *argv[] = {"ringtrace", "dump", path_of("losses.rt"), NULL};
	CHECK_EQ(run_tool("losses.txt", 3, argv, &out), 3);
	CHECK(strstr(out, "--- lost: tid 1234 worker, 5000 events dropped between 1.234567890 "
			  "and 1.240000000 (ring full) ---\n") != NULL);
	CHECK(strstr(out, "--- lost: tid 1234 worker, 30 events damaged at 1.300000000 (records "
			  "missing between recovered ones) ---\n") != NULL);
	CHECK(
	    strstr(out, "--- lost: tid 1234 worker, 20 events overwritten at 1.300000100 ---\n") !=
	    NULL);
	CHECK(strstr(out, "--- lost: tid 1235 other, 1 event torn at 0.000003000") != NULL);
	CHECK(strstr(out, "ringtrace: recovered 230/5288 events from 2 threads (5058 lost)") !=
	      NULL);
	char *argj[] = {"ringtrace", "dump", "--json", path_of("losses.rt"), NULL};
	CHECK_EQ(run_tool("losses.json", 4, argj, &out), 3);
	CHECK(strstr(out,
		     "{\"kind\":\"lost\",\"tid\":1234,\"count\":5000,\"reason\":\"dropped\","
		     "\"ts_ns\":1234567890,\"ts_last_ns\":1240000000,\"note\":\"ring full\"}") !=
	      NULL);
	char *args[] = {"ringtrace", "summary", path_of("losses.rt"), NULL};
	CHECK_EQ(run_tool("losses.summary", 3, args, &out), 3);
	CHECK(strstr(out, "        5007  dropped\n") != NULL);
	CHECK(strstr(out, "          30  damaged") != NULL);
	free(g);
}

/* ---- flight snapshots that overlap: each record once ---------------------------- */

static void test_flight_overlap(void)
{
	struct tg *g = malloc(sizeof(*g));
	tg_init(g);
	tg_add_source(g, 0, 500, 0, RT_MODE_FLIGHT, TG_START_NS);
	tg_add_site(g, 0, 1, "ev", 3, 5); /* two slots */
	tg_add_thread(g, 0, 501, "flyer", 0, TG_START_NS);
	tg_open(g, path_of("flight.rt"), 0x99, 0);
	/* the first snapshot: records 100..399 (older ones overwritten) */
	struct tg_ring *r = &g->sources[0].rings[0];
	r->record = 100;
	r->slot = 200;
	tg_file_head(g);
	tg_loss_block(g, 0, 0, 0, 1, 0, 100, TG_START_NS + 100, 0);
	for (uint64_t i = 100; i < 400; i++)
		tg_event(g, 0, 0, 1, TG_START_NS + 100 + i, (uint32_t)i);
	tg_flush_all(g);
	/* the second: records 250..599, 250..399 again */
	r->record = 250;
	r->slot = 200 + 2 * 150;
	for (uint64_t i = 250; i < 600; i++)
		tg_event(g, 0, 0, 1, TG_START_NS + 100 + i, (uint32_t)i);
	tg_close(g, RT_FILE_END_FINISHED);
	char *paths[] = {path_of("flight.rt")};
	struct rt_trace_set *set = open_set(paths, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 500);
		CHECK_EQ(set->totals.overwritten, 100);
		CHECK_EQ(set->totals.damaged, 0);
		read_all(set, 0);
		check_order();
		uint64_t seq = 100;
		for (size_t i = 0; i < got.count; i++)
			if (got.items[i].kind == RT_ITEM_TRACE)
				if (!CHECK(got.items[i].seq == seq++))
					break;
		rt_trace_set_close(set);
	}
	free(g);
}

/* ---- damage: a cut block, garbage between blocks, a flipped bit ----------------- */

static void test_damage(void)
{
	struct tg *g = malloc(sizeof(*g));
	two_threads(g, "clean.rt", 3000);
	free(g);
	size_t size;
	unsigned char *b = slurp(path_of("clean.rt"), &size);
	if (!CHECK(b != NULL))
		return;
	struct rt_block_header h;
	char *out;

	/* cut short in the middle of its last SLOTS block (no END then) */
	int last = 0;
	while (nth_slots_block(b, size, last + 1, &h) != SIZE_MAX)
		last++;
	size_t at = nth_slots_block(b, size, last, &h);
	spit(path_of("cut.rt"), b, at + h.size / 2);
	char *paths[] = {path_of("cut.rt")};
	struct rt_trace_set *set = open_set(paths, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 3000 - h.count);
		CHECK_EQ(rt_trace_set_damage_regions(set), 1);
		const struct rt_damage *d = &set->sources[0].reader->damage.items[0];
		CHECK_EQ(d->offset, at);
		CHECK_EQ(d->length, h.size / 2);
		CHECK_EQ(d->part, RT_DAMAGE_MISSING);
		rt_trace_set_close(set);
	}
	char *argv[] = {"ringtrace", "dump", path_of("cut.rt"), NULL};
	CHECK_EQ(run_tool("cut.txt", 3, argv, &out), 3);
	char expect[256];
	snprintf(expect, sizeof(expect), "--- damaged: bytes %zu..%zu (%zu B): ", at,
		 at + h.size / 2, (size_t)h.size / 2);
	CHECK(strstr(out, expect) != NULL);

	/* garbage between two blocks: every event still there, the garbage reported */
	at = nth_slots_block(b, size, 5, &h);
	unsigned char *bad = malloc(size + 1000);
	memcpy(bad, b, at);
	for (int i = 0; i < 1000; i++)
		bad[at + (size_t)i] = (unsigned char)(i * 37 + 11);
	memcpy(bad + at + 1000, RT_BLOCK_MAGIC, 8); /* a false start inside, too */
	memcpy(bad + at + 1000 - 200, RT_BLOCK_MAGIC, 8);
	memcpy(bad + at + 1000, b + at, size - at);
	spit(path_of("garbage.rt"), bad, size + 1000);
	char *gpaths[] = {path_of("garbage.rt")};
	set = open_set(gpaths, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 3000);
		CHECK_EQ(set->totals.damaged, 0);
		CHECK_EQ(rt_trace_set_damage_regions(set), 1);
		const struct rt_damage *d = &set->sources[0].reader->damage.items[0];
		CHECK_EQ(d->offset, at);
		CHECK_EQ(d->length, 1000);
		read_all(set, 0);
		CHECK_EQ(got.events, 3000);
		check_order();
		rt_trace_set_close(set);
	}

	/* one bit flipped in a SLOTS block: that block's records lost, no others */
	at = nth_slots_block(b, size, 7, &h);
	memcpy(bad, b, size);
	bad[at + RT_BLOCK_HEADER_SIZE + 100] ^= 0x10;
	spit(path_of("flip.rt"), bad, size);
	char *fpaths[] = {path_of("flip.rt")};
	set = open_set(fpaths, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 3000 - h.count);
		CHECK_EQ(set->totals.damaged, h.count);
		CHECK_EQ(rt_trace_set_damage_regions(set), 1);
		const struct rt_damage *d = &set->sources[0].reader->damage.items[0];
		CHECK_EQ(d->offset, at);
		CHECK_EQ(d->length, h.size);
		CHECK(strstr(d->what, "checksum mismatch") != NULL);
		read_all(set, 0);
		check_order();
		CHECK_EQ(got.events, 3000 - h.count);
		CHECK_EQ(got.lost[RT_LOSS_DAMAGED], h.count);
		/* nothing invented: every event's value is its own counter's */
		for (size_t i = 0; i < got.count; i++)
			if (got.items[i].kind == RT_ITEM_TRACE)
				CHECK_EQ(TG_START_NS + 1000 + got.items[i].args.a32[0] * 10ull,
					 got.items[i].counter);
		rt_trace_set_close(set);
	}
	char *fargv[] = {"ringtrace", "summary", path_of("flip.rt"), NULL};
	CHECK_EQ(run_tool("flip.summary", 3, fargv, &out), 3);
	free(bad);
	free(b);
}

/* ---- an arena and a trace file together; bad inputs ------------------------------- */

static void test_inputs(void)
{
	char *out;
	spit(path_of("notrace.bin"), (const unsigned char *)"hello, world, not a trace", 25);
	char *argv[] = {"ringtrace", "dump", path_of("basic.rt"), path_of("notrace.bin"), NULL};
	CHECK_EQ(run_tool("bad.txt", 4, argv, &out), 2);
	char *argm[] = {"ringtrace", "summary", path_of("no-such-file"), NULL};
	CHECK_EQ(run_tool("bad.txt", 3, argm, &out), 2);
	char *argu[] = {"ringtrace", "summary", NULL};
	CHECK_EQ(run_tool("bad.txt", 2, argu, &out), 2);
	/* the same file twice is one recording read twice: each record once */
	char *paths[] = {path_of("basic.rt"), path_of("basic.rt")};
	struct rt_trace_set *set = open_set(paths, 2);
	if (set) {
		CHECK_EQ(set->totals.present, 1000);
		rt_trace_set_close(set);
	}
}

/* ---- memory: bounded whatever the file's size ---------------------------------------- */

static void test_bounded_memory(void)
{
	const uint64_t events = 2000000;
	struct tg *g = malloc(sizeof(*g));
	tg_init(g);
	tg_add_source(g, 0, 600, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(g, 0, 1, "big", 1, 1);
	for (uint32_t t = 0; t < 4; t++)
		tg_add_thread(g, 0, (int32_t)(601 + t), "big", t, TG_START_NS);
	tg_open(g, path_of("big.rt"), 0xb16, 0);
	tg_file_head(g);
	for (uint64_t i = 0; i < events; i++)
		tg_event(g, 0, (uint32_t)(i % 4), 1, TG_START_NS + i, (uint32_t)i);
	tg_close(g, RT_FILE_END_FINISHED);
	free(g);
	/* in a child, so that its peak RSS is the reading alone */
	int pipefd[2];
	if (pipe(pipefd) != 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		char *paths[] = {path_of("big.rt")};
		struct rt_trace_set *set = NULL;
		char message[256];
		uint64_t seen = 0;
		if (rt_trace_set_open(paths, 1, &set, message, sizeof(message)) == 0 &&
		    rt_trace_set_count(set) == 0 && rt_trace_set_start(set, 0) == 0) {
			uint32_t source;
			while (rt_trace_set_next(set, &source))
				seen++;
		}
		rt_trace_set_close(set);
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		uint64_t report[2] = {seen, (uint64_t)ru.ru_maxrss * 1024};
		if (write(pipefd[1], report, sizeof(report)) != sizeof(report))
			_exit(1);
		_exit(0);
	}
	close(pipefd[1]);
	uint64_t report[2] = {0, 0};
	CHECK_EQ(read(pipefd[0], report, sizeof(report)), sizeof(report));
	close(pipefd[0]);
	waitpid(pid, NULL, 0);
	CHECK_EQ(report[0], events);
	/* every item held at once would be 128 MB; the reader holds blocks */
	uint64_t all_items = events * sizeof(struct rt_item);
	printf("test_trace: %llu events read with a peak RSS of %llu KB (all items: %llu KB)\n",
	       (unsigned long long)report[0], (unsigned long long)report[1] / 1024,
	       (unsigned long long)all_items / 1024);
	CHECK(report[1] < all_items / 3);
}

/* ---- counting during the scan: the same counts as the count pass ------------------- */

/* The counts rt_trace_set_count gives for paths, with counting during the scan on or off. */
static struct rt_trace_set *count_with(char **paths, size_t n, int in_scan)
{
	struct rt_trace_set *set = NULL;
	char message[512];
	if (!in_scan)
		setenv("RINGTRACE_COUNT_IN_SCAN", "0", 1);
	/* opened for reading only (in_scan 2): no count in the scan, the count pass when asked */
	int rc = in_scan == 2 ? rt_trace_set_open_reading(paths, n, &set, message, sizeof(message))
			      : rt_trace_set_open(paths, n, &set, message, sizeof(message));
	unsetenv("RINGTRACE_COUNT_IN_SCAN");
	if (!CHECK(rc == 0))
		return NULL;
	CHECK_EQ(rt_trace_set_count(set), 0);
	return set;
}

static void same_item(const struct rt_item *a, const struct rt_item *b)
{
	CHECK_EQ(a->kind, b->kind);
	CHECK_EQ(a->counter, b->counter);
	CHECK_EQ(a->seq, b->seq);
	CHECK_EQ(a->site, b->site);
	CHECK_EQ(a->thread, b->thread);
	CHECK_EQ(a->tid, b->tid);
	CHECK_EQ(a->cpu, b->cpu);
	CHECK(memcmp(&a->args, &b->args, sizeof(a->args)) == 0);
}

/* Every item of a set opened for reading, into g (runs: its index may hold runs). */
static void read_reading(char **paths, size_t n, int runs, struct got *g)
{
	struct rt_trace_set *set = NULL;
	char message[512];
	if (!runs)
		setenv("RINGTRACE_RUNS", "0", 1);
	int rc = rt_trace_set_open_reading(paths, n, &set, message, sizeof(message));
	unsetenv("RINGTRACE_RUNS");
	g->count = 0;
	if (!CHECK(rc == 0) || !CHECK(rt_trace_set_start(set, 0) == 0)) {
		rt_trace_set_close(set);
		return;
	}
	const struct rt_item *it;
	uint32_t source;
	while ((it = rt_trace_set_next(set, &source)) != NULL && g->count < 200000) {
		g->sources[g->count] = source;
		g->items[g->count++] = *it;
	}
	CHECK_EQ(rt_trace_set_error(set), 0);
	rt_trace_set_close(set);
}

/* A set that walks runs of blocks reads what one with every block in its index reads. */
static void same_with_runs(const char *what, char **paths, size_t n)
{
	static struct got walked;
	read_reading(paths, n, 0, &got);
	read_reading(paths, n, 1, &walked);
	int same = got.count == walked.count;
	for (size_t i = 0; same && i < got.count; i++) {
		const struct rt_item *a = &got.items[i], *b = &walked.items[i];
		same = a->kind == b->kind && a->counter == b->counter && a->seq == b->seq &&
		       a->thread == b->thread && a->flags == b->flags &&
		       got.sources[i] == walked.sources[i] &&
		       (a->kind != RT_ITEM_LOSS || a->loss.count == b->loss.count);
	}
	if (!CHECK(same))
		fprintf(stderr, "  runs walked: %s (%zu items, %zu)\n", what, got.count,
			walked.count);
}

/*
 * A set opened for reading that counts what one walk of everything hands
 * out (rt_trace_set_count_while_reading) counts what slow counted; a walk
 * filtered by thread, or stopped before its end, says it did not count.
 */
static void same_counted_while_reading(const char *what, char **paths, size_t n,
				       const struct rt_trace_set *slow)
{
	struct rt_trace_set *set = NULL;
	char message[512];
	if (!CHECK(rt_trace_set_open_reading(paths, n, &set, message, sizeof(message)) == 0))
		return;
	rt_trace_set_count_while_reading(set);
	uint32_t source;
	/* filtered, then cut short: no count claimed */
	CHECK_EQ(rt_trace_set_start(set, 1), 0);
	while (rt_trace_set_next(set, &source))
		;
	CHECK_EQ(rt_trace_set_counted_while_reading(set), 0);
	CHECK_EQ(rt_trace_set_start(set, 0), 0);
	if (rt_trace_set_next(set, &source))
		CHECK_EQ(rt_trace_set_counted_while_reading(set), 0);
	/* read twice whole: the second walk counts anew, not on top */
	for (int round = 0; round < 2; round++) {
		CHECK_EQ(rt_trace_set_start(set, 0), 0);
		while (rt_trace_set_next(set, &source))
			;
	}
	if (!CHECK(rt_trace_set_counted_while_reading(set))) {
		rt_trace_set_close(set);
		return;
	}
	int same = set->events == slow->events &&
		   memcmp(&set->totals, &slow->totals, sizeof(set->totals)) == 0 &&
		   set->have_span == slow->have_span && set->first_counter == slow->first_counter &&
		   set->last_counter == slow->last_counter && set->processes == slow->processes &&
		   set->source_count == slow->source_count;
	for (size_t i = 0; same && i < set->source_count; i++) {
		const struct rt_set_source *a = &set->sources[i], *b = &slow->sources[i];
		same = a->unknown_records == b->unknown_records &&
		       a->lost_records == b->lost_records &&
		       a->earlier_records == b->earlier_records &&
		       a->reader->sites.count == b->reader->sites.count &&
		       memcmp(a->site_counts, b->site_counts,
			      (a->reader->sites.count + 1) * sizeof(uint64_t)) == 0 &&
		       a->reader->thread_count == b->reader->thread_count;
		for (uint32_t t = 0; same && t < a->reader->thread_count; t++) {
			const struct rt_reader_thread *x = &a->reader->threads[t];
			const struct rt_reader_thread *y = &b->reader->threads[t];
			same = memcmp(&x->counts, &y->counts, sizeof(x->counts)) == 0 &&
			       x->last.kind == y->last.kind && x->last.seq == y->last.seq &&
			       x->last.counter == y->last.counter;
		}
	}
	if (!CHECK(same))
		fprintf(stderr, "  counted while reading: %s (%llu events, %llu counted)\n", what,
			(unsigned long long)set->events, (unsigned long long)slow->events);
	rt_trace_set_close(set);
}

/*
 * paths counted both ways give the same counts and the same `summary
 * --json`; in_scan: whether the scan is expected to count (-1: either).
 */
static void same_both_ways(const char *what, char **paths, size_t n, int in_scan)
{
	struct rt_trace_set *fast = count_with(paths, n, 1);
	struct rt_trace_set *slow = count_with(paths, n, 0);
	struct rt_trace_set *reading = count_with(paths, n, 2);
	if (reading && slow) {
		/* a set opened for reading counts the same, by the count pass */
		CHECK_EQ(rt_trace_set_counted_in_scan(reading), 0);
		CHECK_EQ(reading->events, slow->events);
		CHECK(memcmp(&reading->totals, &slow->totals, sizeof(reading->totals)) == 0);
		CHECK_EQ(reading->first_counter, slow->first_counter);
		CHECK_EQ(reading->last_counter, slow->last_counter);
	}
	if (reading)
		rt_trace_set_close(reading);
	if (slow)
		same_counted_while_reading(what, paths, n, slow);
	same_with_runs(what, paths, n);
	if (fast && slow) {
		if (in_scan >= 0 && !CHECK(rt_trace_set_counted_in_scan(fast) == in_scan))
			fprintf(stderr, "  counted in the scan: %s\n", what);
		CHECK_EQ(rt_trace_set_counted_in_scan(slow), 0);
		CHECK_EQ(fast->events, slow->events);
		CHECK(memcmp(&fast->totals, &slow->totals, sizeof(fast->totals)) == 0);
		CHECK_EQ(fast->have_span, slow->have_span);
		CHECK_EQ(fast->first_counter, slow->first_counter);
		CHECK_EQ(fast->last_counter, slow->last_counter);
		CHECK_EQ(fast->first_source, slow->first_source);
		CHECK_EQ(fast->last_source, slow->last_source);
		CHECK_EQ(fast->processes, slow->processes);
		CHECK_EQ(fast->source_count, slow->source_count);
		for (size_t i = 0; i < fast->source_count && i < slow->source_count; i++) {
			const struct rt_set_source *a = &fast->sources[i], *b = &slow->sources[i];
			CHECK_EQ(a->unknown_records, b->unknown_records);
			CHECK_EQ(a->lost_records, b->lost_records);
			CHECK_EQ(a->earlier_records, b->earlier_records);
			CHECK_EQ(a->reader->sites.count, b->reader->sites.count);
			if (a->reader->sites.count == b->reader->sites.count)
				CHECK(memcmp(a->site_counts, b->site_counts,
					     (a->reader->sites.count + 1) * sizeof(uint64_t)) == 0);
			CHECK(memcmp(&a->reader->totals, &b->reader->totals,
				     sizeof(a->reader->totals)) == 0);
			if (!CHECK(a->reader->thread_count == b->reader->thread_count))
				continue;
			for (uint32_t t = 0; t < a->reader->thread_count; t++) {
				const struct rt_reader_thread *x = &a->reader->threads[t];
				const struct rt_reader_thread *y = &b->reader->threads[t];
				CHECK(memcmp(&x->counts, &y->counts, sizeof(x->counts)) == 0);
				same_item(&x->last, &y->last);
			}
		}
	}
	rt_trace_set_close(fast);
	rt_trace_set_close(slow);
	/* and what the command prints */
	char *argv[16] = {"ringtrace", "summary", "--json"};
	size_t argc = 3;
	for (size_t i = 0; i < n && argc < 15; i++)
		argv[argc++] = paths[i];
	char *out;
	run_tool("in-scan.json", (int)argc, argv, &out);
	char *on = strdup(out);
	setenv("RINGTRACE_COUNT_IN_SCAN", "0", 1);
	run_tool("in-scan.json", (int)argc, argv, &out);
	unsetenv("RINGTRACE_COUNT_IN_SCAN");
	if (!CHECK(strlen(on) > 10 && strcmp(on, out) == 0))
		fprintf(stderr, "  summary --json differs: %s\n", what);
	free(on);
}

/* ---- a walk from a time: it skips blocks, and gives the same from there on ---- */

static struct got whole;

static int64_t ns_of(const struct rt_trace_set *set, const struct got *g, size_t i)
{
	return rt_timebase_ns(&set->sources[g->sources[i]].reader->timebase, g->items[i].counter);
}

/*
 * The items at or after from_ns of a walk from there are those of a walk
 * from the start, one by one; the walk from there gives fewer items in all
 * when fewer is set (it skipped blocks).
 */
static void same_from(const char *what, struct rt_trace_set *set, int64_t from_ns, int fewer)
{
	read_all(set, 0);
	whole = got;
	read_from(set, 0, from_ns);
	check_order();
	size_t i = 0, k = 0, compared = 0;
	for (;; i++, k++, compared++) {
		while (i < whole.count && ns_of(set, &whole, i) < from_ns)
			i++;
		while (k < got.count && ns_of(set, &got, k) < from_ns)
			k++;
		if (i == whole.count || k == got.count)
			break;
		same_item(&whole.items[i], &got.items[k]);
		CHECK_EQ(whole.sources[i], got.sources[k]);
	}
	if (!CHECK(i == whole.count && k == got.count) ||
	    (fewer && !CHECK(got.count < whole.count)))
		fprintf(stderr, "  %s from %lld ns: %zu of %zu items, %zu compared\n", what,
			(long long)from_ns, got.count, whole.count, compared);
}

static void test_seek(void)
{
	struct tg *g = malloc(sizeof(*g));
	two_threads(g, "seek.rt", 20000);
	char *paths[] = {path_of("seek.rt")};
	struct rt_trace_set *set = open_set(paths, 1);
	if (set) {
		same_from("two threads", set, INT64_MIN, 0);
		same_from("two threads", set, 0, 0);
		same_from("two threads", set, 1000 + 10 * 10000, 1);	 /* the middle */
		same_from("two threads", set, 1000 + 10 * 10000 + 5, 1); /* between two events */
		same_from("two threads", set, 1000 + 10 * 19999, 1);	 /* the last event */
		same_from("two threads", set, 1000 + 10 * 20000, 1);	 /* after it */
		rt_trace_set_close(set);
	}
	/* losses of every kind, gaps and LOSS blocks between blocks (test_losses' file) */
	char *lpaths[] = {path_of("losses.rt")};
	set = open_set(lpaths, 1);
	if (set) {
		const int64_t from[] = {0,	    1500,	1234567890, 1240000050, 1300000000,
					1300000005, 1300000100, 1400000000, 1400000009, 2000000000};
		for (size_t i = 0; i < sizeof(from) / sizeof(from[0]); i++)
			same_from("losses", set, from[i], 0);
		rt_trace_set_close(set);
	}
	/* the command: the same output with and without seeking */
	char *out;
	char *argv[] = {"ringtrace",	    "dump", "--json", "--since", "150us",
			path_of("seek.rt"), NULL};
	CHECK_EQ(run_tool("seek.json", 6, argv, &out), 0);
	char *seeking = strdup(out);
	CHECK_EQ(count_lines(seeking, "{\"kind\":\"trace\""), 20000 - 14900);
	setenv("RINGTRACE_SEEK", "0", 1);
	CHECK_EQ(run_tool("seek.json", 6, argv, &out), 0);
	unsetenv("RINGTRACE_SEEK");
	CHECK(strcmp(seeking, out) == 0);
	free(seeking);
	free(g);
}

/* A stream whose metadata grows as it goes: threads, a handed-over ring, sites, a second source. */
static void growing(struct tg *g, const char *name)
{
	tg_init(g);
	tg_add_source(g, 0, 700, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_source(g, 1, 710, 700, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(g, 0, 1, "one", 1, 10);
	tg_add_site(g, 1, 1, "child", 2, 11);
	tg_add_thread(g, 0, 701, "main", 0, TG_START_NS);
	tg_add_thread(g, 1, 711, "kid", 0, TG_START_NS);
	tg_open(g, path_of(name), 0x6207, 0);
	tg_file_head(g);
	uint64_t t = TG_START_NS + 1000;
	for (uint64_t i = 0; i < 3000; i++, t += 10) {
		if (i == 1000) {
			/* a new thread on a new ring, and one taking ring 0 over */
			tg_flush_all(g);
			tg_add_thread(g, 0, 702, "worker", 1, t);
			tg_add_thread(g, 0, 703, "heir", 0, t);
			tg_threads_block(g, 0);
		}
		if (i == 2000) {
			tg_add_site(g, 0, 2, "late", 3, 12);
			tg_sites_block(g, 0);
			tg_threads_block(g, 0);			      /* the same entries again */
			tg_loss_block(g, 0, 1, 2, 2, 0, 5, t, t + 5); /* dropped: no cover */
			tg_lost_record(g, 0, 0, t, 5, t + 5);
		}
		uint32_t ring = i >= 1000 ? (uint32_t)(i & 1) : 0;
		tg_event(g, 0, ring, i >= 2000 && i % 3 == 0 ? 2 : 1, t, (uint32_t)i);
		if (i % 4 == 0)
			tg_event(g, 1, 0, 1, t + 1, (uint32_t)i);
	}
	tg_close(g, RT_FILE_END_FINISHED);
}

static void test_count_in_scan(void)
{
	struct tg *g = malloc(sizeof(*g));
	char *one[1];

	growing(g, "growing.rt");
	one[0] = path_of("growing.rt");
	same_both_ways("growing.rt", one, 1, 1);

	/* records of a site no entry describes; late: it comes after them */
	for (int late = 0; late < 2; late++) {
		const char *name = late ? "late-site.rt" : "unknown-site.rt";
		tg_init(g);
		tg_add_source(g, 0, 720, 0, RT_MODE_STREAM, TG_START_NS);
		tg_add_site(g, 0, 1, "one", 1, 10);
		tg_add_thread(g, 0, 721, "main", 0, TG_START_NS);
		tg_open(g, path_of(name), 0x6208, 0);
		tg_file_head(g);
		for (uint64_t i = 0; i < 900; i++)
			tg_event(g, 0, 0, i >= 800 ? 4 : 1, TG_START_NS + 10 * i, (uint32_t)i);
		tg_flush_all(g);
		if (late) {
			tg_add_site(g, 0, 4, "four", 1, 14);
			tg_sites_block(g, 0);
		}
		for (uint64_t i = 900; i < 1000; i++)
			tg_event(g, 0, 0, 1, TG_START_NS + 10 * i, (uint32_t)i);
		tg_close(g, RT_FILE_END_FINISHED);
		one[0] = path_of(name);
		same_both_ways(name, one, 1, !late);
		struct rt_trace_set *set = count_with(one, 1, 1);
		if (set) {
			CHECK_EQ(set->sources[1].unknown_records, late ? 0 : 100);
			/* events of a site no copy describes are events all the same, marked */
			CHECK_EQ(set->events, 1000);
			rt_trace_set_close(set);
		}
	}

	/* a thread entry again, now owning fewer of the records counted */
	tg_init(g);
	tg_add_source(g, 0, 730, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(g, 0, 1, "one", 1, 10);
	tg_add_thread(g, 0, 731, "main", 0, TG_START_NS);
	tg_add_thread(g, 0, 732, "side", 1, TG_START_NS);
	tg_open(g, path_of("reowned.rt"), 0x6209, 0);
	tg_file_head(g);
	for (uint64_t i = 0; i < 2000; i++)
		tg_event(g, 0, (uint32_t)(i & 1), 1, TG_START_NS + 10 * i, (uint32_t)i);
	tg_flush_all(g);
	g->sources[0].threads[0].end_record = 300;
	tg_threads_block(g, 0);
	for (uint64_t i = 2000; i < 2400; i++)
		tg_event(g, 0, (uint32_t)(i & 1), 1, TG_START_NS + 10 * i, (uint32_t)i);
	tg_close(g, RT_FILE_END_FINISHED);
	one[0] = path_of("reowned.rt");
	same_both_ways("reowned.rt", one, 1, 0);

	/* the files of the other tests: streams, losses, snapshots, damage */
	static const struct {
		const char *name;
		int in_scan;
	} files[] = {
	    {"basic.rt", 1},  {"big.rt", 1},	 {"clean.rt", 1}, {"losses.rt", -1},
	    {"flight.rt", 0}, {"garbage.rt", 0}, {"flip.rt", 0},  {"cut.rt", 0},
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		one[0] = path_of(files[i].name);
		same_both_ways(files[i].name, one, 1, files[i].in_scan);
	}
	/* every file at once: rotated sets, several recordings */
	char *all[] = {(char *)dir};
	same_both_ways("the directory", all, 1, 0);
	free(g);
}

/* ---- where each ring ends: RINGS blocks with RT_BLOCK_F_FINAL ------------------------ */

/* two_threads with a final RINGS block; skip: ring 1's last records vanish first. */
static void final_file(struct tg *g, const char *name, uint64_t events, uint64_t skip)
{
	tg_init(g);
	g->final = 1;
	tg_add_source(g, 0, 100, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(g, 0, 1, "one", 1, 10);
	tg_add_thread(g, 0, 101, "main", 0, TG_START_NS);
	tg_add_thread(g, 0, 102, "worker", 1, TG_START_NS);
	tg_open(g, path_of(name), 0x1240, 0);
	tg_file_head(g);
	for (uint64_t i = 0; i < events; i++)
		tg_event(g, 0, (uint32_t)(i & 1), 1, TG_START_NS + 1000 + i * 10, (uint32_t)i);
	if (skip)
		tg_skip(g, 0, 1, skip);
	tg_close(g, RT_FILE_END_FINISHED);
}

/* Offset of the last SLOTS block of ring, and its header. */
static size_t last_slots_of(const unsigned char *b, size_t size, uint32_t ring,
			    struct rt_block_header *out)
{
	size_t found = SIZE_MAX;
	struct rt_block_header h;
	for (int n = 0; nth_slots_block(b, size, n, &h) != SIZE_MAX; n++)
		if (h.ring == ring) {
			found = nth_slots_block(b, size, n, out);
		}
	return found;
}

/* The gaps read (not the regions): their total, and whether all are the worker's (tid 102). */
static uint64_t damaged_of_worker(int *all_worker)
{
	uint64_t n = 0;
	*all_worker = 1;
	for (size_t i = 0; i < got.count; i++)
		if (got.items[i].kind == RT_ITEM_LOSS &&
		    got.items[i].loss.reason == RT_LOSS_DAMAGED &&
		    !(got.items[i].flags & RT_ITEM_DAMAGE)) {
			n += got.items[i].loss.count;
			*all_worker &= got.items[i].tid == 102;
		}
	return n;
}

static void test_final(void)
{
	struct tg *g = malloc(sizeof(*g));
	char *one[1];
	int worker;

	/* a clean file: the final block changes nothing, and the scan still counts */
	final_file(g, "final.rt", 3000, 0);
	one[0] = path_of("final.rt");
	struct rt_trace_set *set = open_set(one, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 3000);
		CHECK_EQ(rt_counts_lost(&set->totals), 0);
		read_all(set, 0);
		CHECK_EQ(got.events, 3000);
		CHECK_EQ(got.count, 3000);
		rt_trace_set_close(set);
	}
	same_both_ways("final.rt", one, 1, 1);

	/* records the file says the ring had, no block holds and no LOSS entry covers */
	final_file(g, "final-gap.rt", 3000, 7);
	one[0] = path_of("final-gap.rt");
	set = open_set(one, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 3000);
		CHECK_EQ(set->totals.damaged, 7);
		if (CHECK(set->source_count == 2 && set->sources[1].reader->thread_count == 2))
			CHECK_EQ(set->sources[1].reader->threads[1].counts.damaged, 7);
		read_all(set, 0);
		check_order();
		CHECK_EQ(damaged_of_worker(&worker), 7);
		CHECK(worker);
		/* timed at the ring's last record */
		CHECK_EQ(got.items[got.count - 1].kind, RT_ITEM_LOSS);
		CHECK_EQ(got.items[got.count - 1].counter, TG_START_NS + 1000 + 2999 * 10);
		CHECK_EQ(got.items[got.count - 1].seq, 1500);
		rt_trace_set_close(set);
	}
	same_both_ways("final-gap.rt", one, 1, 0);

	final_file(g, "final-clean.rt", 3000, 0);
	size_t size;
	unsigned char *b = slurp(path_of("final-clean.rt"), &size);
	if (!CHECK(b != NULL))
		goto out;
	struct rt_block_header h;

	/* the ring's last block damaged: nothing after it in the ring, still a loss */
	size_t at = last_slots_of(b, size, 1, &h);
	b[at + RT_BLOCK_HEADER_SIZE + 40] ^= 0x08;
	spit(path_of("final-flip.rt"), b, size);
	b[at + RT_BLOCK_HEADER_SIZE + 40] ^= 0x08;
	one[0] = path_of("final-flip.rt");
	set = open_set(one, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 3000 - h.count);
		CHECK_EQ(set->totals.damaged, h.count);
		read_all(set, 0);
		check_order();
		CHECK_EQ(damaged_of_worker(&worker), h.count);
		CHECK(worker);
		rt_trace_set_close(set);
	}
	same_both_ways("final-flip.rt", one, 1, 0);

	/* cut short before the final block: read as before, the tail is not known lost */
	spit(path_of("final-short.rt"), b, at);
	one[0] = path_of("final-short.rt");
	set = open_set(one, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 3000 - h.count);
		CHECK_EQ(set->totals.damaged, 0);
		rt_trace_set_close(set);
	}
	free(b);

	/* a ring whose only block is damaged: no cursor would have seen it */
	final_file(g, "final-one.rt", 100, 0);
	b = slurp(path_of("final-one.rt"), &size);
	if (!CHECK(b != NULL))
		goto out;
	at = last_slots_of(b, size, 1, &h);
	CHECK_EQ(h.count, 50);
	b[at + RT_BLOCK_HEADER_SIZE + 8] ^= 0x01;
	spit(path_of("final-one.rt"), b, size);
	one[0] = path_of("final-one.rt");
	set = open_set(one, 1);
	if (set) {
		CHECK_EQ(set->totals.present, 50);
		CHECK_EQ(set->totals.damaged, 50);
		read_all(set, 0);
		CHECK_EQ(damaged_of_worker(&worker), 50);
		CHECK(worker);
		rt_trace_set_close(set);
	}
	same_both_ways("final-one.rt", one, 1, 0);
	free(b);
out:
	free(g);
}

/* Log records in trace files: whole, hostile, of an unusable site, and through a cut. */
static void put_u64(unsigned char *p, size_t *at, uint64_t v)
{
	memcpy(p + *at, &v, 8);
	*at += 8;
}

static size_t log_payload(unsigned char *p, int64_t n, const char *str, uint32_t flags)
{
	size_t at = 0;
	uint32_t len = (uint32_t)strlen(str);
	put_u64(p, &at, (uint64_t)n);
	put_u64(p, &at, 0x1234);
	memcpy(p + at, &len, 4);
	memcpy(p + at + 4, &flags, 4);
	at += 8;
	memcpy(p + at, str, len);
	return at + len;
}

static void test_logs(void)
{
	static struct tg g;
	const uint8_t types[2] = {RT_ARG_SIGNED | 4, RT_ARG_STRING | 8};
	tg_init(&g);
	tg_add_source(&g, 0, 100, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(&g, 0, 1, "tick", 1, 10);
	tg_add_log_site(&g, 0, 2, "n=%d s=%s", RT_LOG_WARN, 2, types, 2, 20);
	tg_add_log_site(&g, 0, 3, "bad %d %s", RT_LOG_INFO, 2, types, 1, 30);
	tg_add_thread(&g, 0, 101, "main", 0, TG_START_NS);
	tg_open(&g, path_of("logs.rt"), 77, 0);
	tg_file_head(&g);
	unsigned char p[RT_LOG_PAYLOAD_MAX];
	char big[1001];
	memset(big, 'q', 1000);
	big[1000] = 0;
	uint64_t t = TG_START_NS + 100;
	/* enough records that the long ones meet block ends: none spans two */
	for (int i = 0; i < 40; i++) {
		tg_event(&g, 0, 0, 1, t++, (uint32_t)i);
		tg_log(&g, 0, 0, 2, t++, p, log_payload(p, i, i % 3 ? "short" : big, 0));
	}
	size_t n = log_payload(p, -1, "hostile", 0);
	uint32_t huge = 5000;
	memcpy(p + 16, &huge, 4);
	tg_log(&g, 0, 0, 2, t++, p, n);
	n = log_payload(p, 7, "flags", 0x80);
	tg_log(&g, 0, 0, 2, t++, p, n);
	tg_log(&g, 0, 0, 3, t++, p, log_payload(p, 1, "x", 0));
	tg_close(&g, RT_FILE_END_FINISHED);

	char *paths[1] = {path_of("logs.rt")};
	struct rt_trace_set *set = open_set(paths, 1);
	if (!set)
		return;
	CHECK_EQ(rt_trace_set_start(set, 0), 0);
	const struct rt_item *it;
	uint32_t source;
	unsigned good = 0, marked = 0, no_site = 0, events = 0, i = 0;
	while ((it = rt_trace_set_next(set, &source)) != NULL) {
		events += rt_item_kind_is_event(it->kind);
		if (it->kind != RT_ITEM_LOG)
			continue;
		const struct rt_reader *rd = set->sources[source].reader;
		if (it->flags & RT_ITEM_NO_SITE) {
			no_site++;
			CHECK_EQ(it->site, 3);
			continue;
		}
		const struct rt_site *site = rt_site_lookup(&rd->sites, it->site);
		CHECK(site && site->kind == RT_SITE_LOG && site->level == RT_LOG_WARN);
		if (!site)
			continue;
		char msg[2048], want[2048];
		int damaged = -1;
		rt_log_render(msg, sizeof(msg), site, it->log.payload, it->log.length, &damaged);
		if (damaged) {
			marked++;
			CHECK(strstr(msg, RT_LOG_DAMAGED_MARK) != NULL);
			continue;
		}
		/* the string limit is the writer's: the reader shows what the record holds */
		snprintf(want, sizeof(want), "n=%d s=%s", (int)i, i % 3 ? "short" : big);
		CHECK_STR(msg, want);
		i++;
		good++;
	}
	CHECK_EQ(good, 40);
	CHECK_EQ(marked, 2);
	CHECK_EQ(no_site, 1);
	CHECK_EQ(events, 40 + 40 + 3);
	CHECK_EQ(set->totals.present, 40 + 40 + 3);
	CHECK_EQ(rt_trace_set_damaged(set), 0);
	rt_trace_set_close(set);

	/* a cut keeps the records and the sites' types: the same messages */
	char *argv[] = {"ringtrace",	       "cut", "-q", "--from", "0s", path_of("logs.rt"),
			path_of("logs-cut.rt")};
	CHECK_EQ(run_tool("cut.out", 7, argv, NULL), 0);
	char *json1, *json2;
	char *dump1[] = {"ringtrace", "dump", "--json", path_of("logs.rt")};
	char *dump2[] = {"ringtrace", "dump", "--json", path_of("logs-cut.rt")};
	/* exit 3: two messages with damaged payloads */
	CHECK_EQ(run_tool("dump1.out", 4, dump1, &json1), 3);
	char *copy = strdup(json1);
	CHECK_EQ(run_tool("dump2.out", 4, dump2, &json2), 3);
	CHECK(copy && strcmp(copy, json2) == 0);
	CHECK_EQ(count_lines(json2, "{\"kind\":\"log\","), 43);
	CHECK_EQ(count_lines(json2, "\"damaged\":true"), 2);
	CHECK_EQ(count_lines(json2, "\"metadata\":\"lost\",\"site_id\":3}"), 1);
	free(copy);
}

/* I/O records read like log records; the newest file's FDS rundown seeds the source. */
static void test_io(void)
{
	static struct tg g;
	tg_init(&g);
	tg_add_source(&g, 0, 100, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(&g, 0, 1, "tick", 1, 10);
	tg_add_io_site(&g, 0, 2);
	tg_add_thread(&g, 0, 101, "main", 0, TG_START_NS);
	unsigned char p[RT_LOG_PAYLOAD_MAX];
	const uint32_t fds0[1] = {3}, fds1[2] = {3, 4};
	const char *const names0[1] = {"/old/three"};
	const char *const names1[2] = {"/etc/hosts", "pipe:[77]"};
	char *paths[2] = {strdup(path_of("io0.rt")), strdup(path_of("io1.rt"))};
	uint64_t t = TG_START_NS + 100;
	for (uint32_t f = 0; f < 2; f++) {
		tg_open(&g, paths[f], 78, f);
		tg_file_head(&g);
		tg_fds_block(&g, 0, f ? 2 : 1, f ? fds1 : fds0, f ? names1 : names0, t);
		for (int i = 0; i < 30; i++) {
			const struct tio call = {.op = RT_IO_READ,
						 .fd = 3,
						 .start = t,
						 .size = 100,
						 .result = i,
						 .path =
						     i % 2 ? NULL : "/a/path/to/make/it/longer"};
			tg_event(&g, 0, 0, 1, t++, (uint32_t)i);
			tg_io(&g, 0, 0, 2, t++, p, tio_payload(&call, p));
		}
		tg_close(&g, f ? RT_FILE_END_FINISHED : RT_FILE_END_ROTATED);
	}
	struct rt_trace_set *set = open_set(paths, 2);
	free(paths[0]);
	free(paths[1]);
	if (!set)
		return;
	CHECK_EQ(rt_trace_set_start(set, 0), 0);
	const struct rt_item *it;
	uint32_t source;
	unsigned ios = 0, events = 0;
	while ((it = rt_trace_set_next(set, &source)) != NULL) {
		events += rt_item_kind_is_event(it->kind);
		if (it->kind != RT_ITEM_IO)
			continue;
		struct rt_io_payload head;
		CHECK(it->log.payload && it->log.length >= sizeof(head));
		if (!it->log.payload)
			continue;
		memcpy(&head, it->log.payload, sizeof(head));
		CHECK(head.op == RT_IO_READ && head.fd == 3 && head.result == (int64_t)(ios % 30));
		ios++;
	}
	CHECK_EQ(ios, 60);
	CHECK_EQ(events, 120);
	const struct rt_reader *rd = NULL;
	for (size_t i = 0; i < set->source_count; i++)
		if (set->sources[i].reader->header.pid == 100)
			rd = set->sources[i].reader;
	CHECK(rd != NULL);
	CHECK(rd && rd->fds.count == 2);
	for (uint32_t i = 0; rd && i < rd->fds.count && i < 2; i++) {
		CHECK_EQ(rd->fds.items[i].fd, fds1[i]);
		CHECK(strcmp(rd->fds.items[i].name, names1[i]) == 0);
	}
	rt_trace_set_close(set);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_trace DIR\n");
		return 2;
	}
	dir = argv[1];
	mkdir(dir, 0755);
	test_basic();
	test_rotation_and_sources();
	test_losses();
	test_flight_overlap();
	test_damage();
	test_inputs();
	test_bounded_memory();
	test_count_in_scan();
	test_final();
	test_seek();
	test_logs();
	test_io();
	int failures = check_failure_count();
	printf("test_trace: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
