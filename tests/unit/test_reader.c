/*
 * test_reader.c - the reading side on synthetic arenas.
 *
 * A small builder below writes arenas the way the recording library does
 * (ring protocol of ringtrace/format.h), including the awkward cases:
 * wraparound, two-slot records, a ring that passed between threads, a
 * record torn by a dead writer, stream-mode LOST records, damage.  Each
 * test reads the arena back through rt_reader_open() and checks the items,
 * losses and counts; a few check the exact text and JSON lines.
 */
#define _GNU_SOURCE /* SEEK_HOLE */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "collect/collector.h"
#include "common/output.h"
#include "common/parse.h"
#include "decode/clock.h"
#include "format/arena_layout.h"
#include "present/json.h"
#include "present/text.h"
#include "decode/log_args.h"
#include "format/records.h"
#include "read/arena_cursor.h"
#include "read/arena_follow.h"
#include "read/arena_reader.h"
#include "read/entry_checks.h"
#include "read/merge.h"
#include "read/trace_set.h"
#include "../lib/io_payload.h"

static int passed, failed;

/*
 * A thread's items as one array, read through its cursor once and kept
 * until its reader is closed: the checks below look at them by index.
 */
struct items_kept {
	const struct rt_reader *rd;
	uint32_t thread;
	struct rt_item *items;
	struct items_kept *next;
};
static struct items_kept *kept_items;

static const struct rt_item *items_of(const struct rt_reader *rd, const struct rt_reader_thread *t)
{
	uint32_t thread = (uint32_t)(t - rd->threads);
	for (struct items_kept *k = kept_items; k; k = k->next)
		if (k->rd == rd && k->thread == thread)
			return k->items;
	struct items_kept *k = calloc(1, sizeof(*k));
	size_t count;
	if (!k || rt_arena_thread_items(rd, thread, &k->items, &count) != 0 ||
	    count != t->item_count) {
		fprintf(stderr, "cannot read the items of thread %u again\n", thread);
		exit(1);
	}
	k->rd = rd;
	k->thread = thread;
	k->next = kept_items;
	kept_items = k;
	return k->items;
}

static void close_reader(struct rt_reader *rd)
{
	for (struct items_kept **at = &kept_items; *at;) {
		struct items_kept *k = *at;
		if (k->rd != rd) {
			at = &k->next;
			continue;
		}
		*at = k->next;
		free(k->items);
		free(k);
	}
	rt_reader_close(rd);
}
#define rt_reader_close(rd) close_reader(rd)

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			passed++;                                                                  \
		} else {                                                                           \
			failed++;                                                                  \
			fprintf(stderr, "%s:%d: %s: failed: %s\n", __FILE__, __LINE__, __func__,   \
				#cond);                                                            \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);     \
		if (a_ == b_) {                                                                    \
			passed++;                                                                  \
		} else {                                                                           \
			failed++;                                                                  \
			fprintf(stderr, "%s:%d: %s: %s == %llu, expected %s == %llu\n", __FILE__,  \
				__LINE__, __func__, #a, a_, #b, b_);                               \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (a_ && b_ && strcmp(a_, b_) == 0) {                                             \
			passed++;                                                                  \
		} else {                                                                           \
			failed++;                                                                  \
			fprintf(stderr, "%s:%d: %s:\n  got      [%s]\n  expected [%s]\n",          \
				__FILE__, __LINE__, __func__, a_ ? a_ : "(null)",                  \
				b_ ? b_ : "(null)");                                               \
		}                                                                                  \
	} while (0)

/* ---- the arena builder ------------------------------------------------ */

#define START_COUNTER 1000000000ull /* raw clock at the trace's start */

struct builder {
	unsigned char *mem;
	size_t size;
	struct rt_arena_header *h;
	uint64_t ring_slots;
};

struct spec {
	uint32_t mode;
	uint64_t ring_bytes;
	uint32_t rings;
	uint32_t threads;
	uint32_t sites;
	uint64_t strings;
	uint32_t fds; /* descriptor table entries, 0: none */
};

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint64_t own_start_time(void)
{
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	int field = 2;
	for (; p && *p && field < 22; p++)
		if (*p == ' ')
			field++;
	return p ? strtoull(p, NULL, 10) : 0;
}

static void b_init(struct builder *b, const struct spec *s)
{
	struct rt_arena_header plan;
	memset(&plan, 0, sizeof(plan));
	uint64_t at = RT_ARENA_HEADER_SIZE;
	plan.thread_table_offset = at;
	at = align_up(at + (uint64_t)s->threads * sizeof(struct rt_thread_entry), 64);
	plan.site_table_offset = at;
	at = align_up(at + (uint64_t)s->sites * sizeof(struct rt_site_entry), 64);
	plan.string_area_offset = at;
	at = align_up(at + s->strings, 64);
	if (s->fds) {
		plan.fd_capacity = s->fds;
		plan.fd_table_offset = at;
		at = align_up(at + (uint64_t)s->fds * sizeof(struct rt_fd_entry), 64);
	}
	plan.ring_desc_offset = at;
	at = align_up(at + (uint64_t)s->rings * sizeof(struct rt_ring_desc), 4096);
	plan.ring_area_offset = at;
	at += (uint64_t)s->rings * s->ring_bytes;

	b->size = at;
	b->mem = calloc(1, b->size);
	b->h = (struct rt_arena_header *)b->mem;
	*b->h = plan;
	struct rt_arena_header *h = b->h;
	memcpy(h->magic, RT_ARENA_MAGIC, sizeof(h->magic));
	h->header_size = RT_ARENA_HEADER_SIZE;
	h->version = RT_FORMAT_VERSION;
	h->compat_version = RT_FORMAT_VERSION;
	h->byte_order = RT_BYTE_ORDER_MARK;
	h->state = RT_ARENA_RUNNING;
	h->arena_size = b->size;
	h->ring_bytes_requested = s->ring_bytes;
	h->ring_bytes = s->ring_bytes;
	h->slot_size = RT_SLOT_SIZE;
	h->mode = s->mode;
	h->ring_count = s->rings;
	h->thread_capacity = s->threads;
	h->site_capacity = s->sites;
	h->string_capacity = s->strings;
	/* this process, but started at another time: a dead writer */
	h->pid = getpid();
	h->process_start = 1;
	snprintf(h->program, sizeof(h->program), "/usr/bin/synthetic");
	h->build_id_size = 4;
	memcpy(h->build_id, "\xde\xad\xbe\xef", 4);
	/* a 1 GHz counter: one tick is one nanosecond, easy to check */
	h->clock_source = RT_CLOCK_TSC;
	h->counter_hz = 1000000000;
	h->start.counter = START_COUNTER;
	h->start.mono_ns = 5000000000ull;
	h->sync.pair = h->start;
	h->sites_used = 1; /* site 0 is never valid */
	b->ring_slots = s->ring_bytes / RT_SLOT_SIZE;
}

static void b_free(struct builder *b)
{
	free(b->mem);
	b->mem = NULL;
}

static void b_make_alive(struct builder *b)
{
	b->h->pid = getpid();
	b->h->process_start = own_start_time();
}

static uint32_t b_string(struct builder *b, const char *s)
{
	uint32_t off = (uint32_t)b->h->strings_used;
	size_t n = strlen(s) + 1;
	memcpy(b->mem + b->h->string_area_offset + off, s, n);
	b->h->strings_used += n;
	return off;
}

static uint32_t b_site(struct builder *b, const char *tag, const char *file, const char *func,
		       uint32_t line, unsigned nargs, const uint8_t *types)
{
	uint32_t index = b->h->sites_used++;
	struct rt_site_entry *e =
	    (struct rt_site_entry *)(b->mem + b->h->site_table_offset) + index;
	e->line = line;
	e->tag_offset = b_string(b, tag);
	e->tag_length = (uint32_t)strlen(tag);
	e->file_offset = b_string(b, file);
	e->file_length = (uint32_t)strlen(file);
	e->func_offset = b_string(b, func);
	e->func_length = (uint32_t)strlen(func);
	e->kind = RT_SITE_TRACE;
	e->nargs = (uint8_t)nargs;
	for (unsigned i = 0; i < nargs; i++)
		e->arg_types[i] = types ? types[i] : (RT_ARG_UNSIGNED | 4);
	e->valid = 1;
	return index;
}

static struct rt_ring_desc *b_ring(struct builder *b, uint32_t ring)
{
	return (struct rt_ring_desc *)(b->mem + b->h->ring_desc_offset) + ring;
}

static struct rt_thread_entry *b_entry(struct builder *b, uint32_t index)
{
	return (struct rt_thread_entry *)(b->mem + b->h->thread_table_offset) + index;
}

/* A new thread-table entry on ring (or RT_NO_RING); returns its index. */
static uint32_t b_thread(struct builder *b, int32_t tid, const char *name, uint32_t ring)
{
	uint32_t index = b->h->threads_used++;
	struct rt_thread_entry *e = b_entry(b, index);
	e->tid = tid;
	e->ring = ring;
	e->end_record = UINT64_MAX;
	e->start_counter = START_COUNTER + 10;
	snprintf(e->name, sizeof(e->name), "%s", name);
	if (ring != RT_NO_RING) {
		struct rt_ring_desc *d = b_ring(b, ring);
		if (d->state == RT_RING_UNUSED)
			b->h->rings_used++;
		else
			b->h->ring_reuses++;
		d->state = RT_RING_OWNED;
		d->owner = index;
		d->reserve = d->head;
		e->first_record = d->records;
	}
	e->state = RT_THREAD_LIVE;
	return index;
}

static void b_exit(struct builder *b, uint32_t index, uint64_t counter)
{
	struct rt_thread_entry *e = b_entry(b, index);
	e->exit_counter = counter;
	if (e->ring != RT_NO_RING) {
		struct rt_ring_desc *d = b_ring(b, e->ring);
		e->end_record = d->records;
		d->state = RT_RING_RELEASED;
		d->released_counter = counter;
	}
	e->state = RT_THREAD_EXITED;
}

static union rt_slot *b_slot(struct builder *b, uint32_t ring, uint64_t seq)
{
	return (union rt_slot *)(b->mem + b->h->ring_area_offset + ring * b->h->ring_bytes) +
	       (seq & (b->ring_slots - 1));
}

/* Write one record as the writer does; commit = 0 stops before records and head. */
static void b_record(struct builder *b, uint32_t ring, uint8_t kind, unsigned nslots, uint32_t site,
		     uint64_t counter, uint16_t cpu, const uint32_t a32[4], const uint64_t a64[2],
		     int commit)
{
	struct rt_ring_desc *d = b_ring(b, ring);
	uint64_t h = d->head;
	d->reserve = h + nslots;
	struct rt_slot_head *s = &b_slot(b, ring, h)->head;
	s->seq = (uint32_t)h;
	s->kind = kind;
	s->nslots = (uint8_t)nslots;
	s->cpu = cpu;
	s->record = (uint32_t)d->records;
	s->site = site;
	s->counter = counter;
	s->a0 = a32[0];
	s->a1 = a32[1];
	if (nslots > 1) {
		struct rt_slot_cont *c = &b_slot(b, ring, h + 1)->cont;
		c->seq = (uint32_t)(h + 1);
		c->kind = RT_REC_CONT;
		c->index = 1;
		c->reserved = 0;
		c->a2 = a32[2];
		c->a3 = a32[3];
		c->a4 = a64[0];
		c->a5 = a64[1];
	}
	if (commit) {
		d->records++;
		d->head = h + nslots;
	}
}

static void b_event(struct builder *b, uint32_t ring, uint32_t site, unsigned nargs,
		    uint64_t counter, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
		    uint64_t a4, uint64_t a5)
{
	const uint32_t a32[4] = {a0, a1, a2, a3};
	const uint64_t a64[2] = {a4, a5};
	b_record(b, ring, RT_REC_TRACE, RT_TRACE_SLOTS(nargs), site, counter, 2, a32, a64, 1);
}

static void b_lost(struct builder *b, uint32_t ring, uint32_t reason, uint64_t count,
		   uint64_t first, uint64_t last)
{
	const uint32_t a32[4] = {reason, 0, 0, 0};
	const uint64_t a64[2] = {count, last};
	b_record(b, ring, RT_REC_LOST, 2, 0, first, RT_CPU_UNKNOWN, a32, a64, 1);
}

static const char *arena_path(void)
{
	static char path[64];
	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/test_reader.%d.arena", (int)getpid());
	return path;
}

static void write_bytes(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		perror(path);
		exit(2);
	}
	close(fd);
}

/* Write the arena out and read it back; NULL (and a failed check) if it does not open. */
static struct rt_reader *b_read(struct builder *b)
{
	struct rt_reader *rd;
	struct rt_read_error error;
	write_bytes(arena_path(), b->mem, b->size);
	int rc = rt_reader_open(arena_path(), &rd, &error);
	if (rc) {
		fprintf(stderr, "open failed: byte %llu: %s\n", (unsigned long long)error.offset,
			error.message);
		CHECK(rc == 0);
		return NULL;
	}
	return rd;
}

static const struct spec small_flight = {RT_MODE_FLIGHT, 4096, 4, 16, 32, 4096, 0};

/* The thread with this tid. */
static const struct rt_reader_thread *thread_of(const struct rt_reader *rd, int32_t tid)
{
	for (uint32_t i = 0; i < rd->thread_count; i++)
		if (rd->threads[i].tid == tid)
			return &rd->threads[i];
	return NULL;
}

/* The loss with this tid and reason, or NULL. */
static const struct rt_item *loss_of(const struct rt_reader *rd, int32_t tid, uint32_t reason)
{
	for (size_t i = 0; i < rd->loss_count; i++)
		if (rd->losses[i].tid == tid && rd->losses[i].loss.reason == reason)
			return &rd->losses[i];
	return NULL;
}

/* ---- tests ------------------------------------------------------------- */

static void test_parse(void)
{
	uint64_t v = 0;
	int64_t i = 0;
	CHECK(rt_parse_size("4096", &v) == 0 && v == 4096);
	CHECK(rt_parse_size("64K", &v) == 0 && v == 65536);
	CHECK(rt_parse_size("1m", &v) == 0 && v == 1048576);
	CHECK(rt_parse_size("2GiB", &v) == 0 && v == 2ull << 30);
	CHECK(rt_parse_size("3KB", &v) == 0 && v == 3072);
	CHECK(rt_parse_size("512B", &v) == 0 && v == 512);
	CHECK(rt_parse_size("", &v) == -EINVAL);
	CHECK(rt_parse_size("K", &v) == -EINVAL);
	CHECK(rt_parse_size("-1", &v) == -EINVAL);
	CHECK(rt_parse_size("12 K", &v) == -EINVAL);
	CHECK(rt_parse_size("1Ki", &v) == -EINVAL);
	CHECK(rt_parse_size("1X", &v) == -EINVAL);
	CHECK(rt_parse_size("99999999999999999999", &v) == -ERANGE);
	CHECK(rt_parse_size("99999999999999999999x", &v) == -EINVAL);
	CHECK(rt_parse_size("16777216T", &v) == -ERANGE);
	CHECK(rt_parse_size("16777215T", &v) == 0 && v == 16777215ull << 40);
	CHECK(rt_parse_u64("18446744073709551615", &v) == 0 && v == UINT64_MAX);
	CHECK(rt_parse_u64("18446744073709551616", &v) == -ERANGE);
	CHECK(rt_parse_i64("-9223372036854775808", &i) == 0 && i == INT64_MIN);
	CHECK(rt_parse_i64("9223372036854775808", &i) == -ERANGE);
	CHECK(rt_parse_i64("-12", &i) == 0 && i == -12);
	CHECK(rt_parse_i64("-", &i) == -EINVAL);
	CHECK_STR(rt_path_basename("/a/b/c.c"), "c.c");
	CHECK_STR(rt_path_basename("c.c"), "c.c");
	CHECK(rt_parse_duration("2.5s", &v) == 0 && v == 2500000000ull);
	CHECK(rt_parse_duration("150ms", &v) == 0 && v == 150000000ull);
	CHECK(rt_parse_duration("40us", &v) == 0 && v == 40000ull);
	CHECK(rt_parse_duration("7ns", &v) == 0 && v == 7);
	CHECK(rt_parse_duration("3min", &v) == 0 && v == 180000000000ull);
	CHECK(rt_parse_duration("1h", &v) == 0 && v == 3600000000000ull);
	CHECK(rt_parse_duration("0.000000001s", &v) == 0 && v == 1);
	CHECK(rt_parse_duration("1.50000000000000000000s", &v) == 0 && v == 1500000000ull);
	CHECK(rt_parse_duration("1.5ns", &v) == -EINVAL);
	CHECK(rt_parse_duration("12", &v) == -EINVAL);
	CHECK(rt_parse_duration("s", &v) == -EINVAL);
	CHECK(rt_parse_duration("1.s", &v) == -EINVAL);
	CHECK(rt_parse_duration("-1s", &v) == -EINVAL);
	CHECK(rt_parse_duration("1 s", &v) == -EINVAL);
	CHECK(rt_parse_duration("1sec", &v) == -EINVAL);
	CHECK(rt_parse_duration("18446744073709551615ns", &v) == 0 && v == UINT64_MAX);
	CHECK(rt_parse_duration("18446744074s", &v) == -ERANGE);
	CHECK(rt_parse_duration("99999999999999999999s", &v) == -ERANGE);
}

/* rt_fmt_u64 against snprintf: every length, each side of every power of ten, and a spread. */
static void test_decimal_numbers(void)
{
	char got[32], want[32];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < 20000; i++) {
		uint64_t v;
		if (i < 20 * 3) {
			v = rt_powers_of_ten[i / 3] + (i % 3) - 1; /* 10^k - 1, 10^k, 10^k + 1 */
		} else {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v = x >> (x % 64); /* every magnitude */
		}
		*rt_fmt_u64(got, v) = 0;
		snprintf(want, sizeof(want), "%llu", (unsigned long long)v);
		if (strcmp(got, want) != 0) {
			CHECK_STR(got, want);
			return;
		}
	}
}

/*
 * A prefix kept between numbers writes them as rt_fmt_u64 does, whatever
 * comes: numbers that share their digits above the last four, that do
 * not, below 10^4, and one cache shared by unrelated numbers.
 */
static void test_prefixed_numbers(void)
{
	static const uint64_t values[] = {123456789,
					  123456790,
					  123459999,
					  123460000,
					  123460001,
					  5,
					  9999,
					  10000,
					  10001,
					  19999,
					  20000,
					  999999999,
					  1000000000,
					  1000000000,
					  42,
					  UINT64_MAX,
					  UINT64_MAX - 1,
					  18446744073709550000ull,
					  1844674407370000ull,
					  0,
					  99999999,
					  100000000,
					  100009999,
					  100010000};
	struct rt_fmt_prefix prefix;
	memset(&prefix, 0, sizeof(prefix));
	char got[48], want[32];
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		memset(got, 'x', sizeof(got));
		char *end = rt_fmt_u64_prefixed(got, values[i], &prefix);
		*end = 0;
		*rt_fmt_u64(want, values[i]) = 0;
		CHECK_STR(got, want);
	}
	/* a time that moves on by small steps, as a dense trace's do */
	uint64_t t = 9999000;
	for (unsigned i = 0; i < 5000; i++, t += 7) {
		*rt_fmt_u64_prefixed(got, t, &prefix) = 0;
		*rt_fmt_u64(want, t) = 0;
		if (strcmp(got, want) != 0) {
			CHECK_STR(got, want);
			return;
		}
	}
}

static void test_formatting(void)
{
	char buf[256];
	*rt_fmt_u64(buf, 0) = 0;
	CHECK_STR(buf, "0");
	*rt_fmt_u64(buf, UINT64_MAX) = 0;
	CHECK_STR(buf, "18446744073709551615");
	*rt_fmt_i64(buf, INT64_MIN) = 0;
	CHECK_STR(buf, "-9223372036854775808");
	*rt_fmt_u64_right(buf, 42, 5) = 0;
	CHECK_STR(buf, "   42");
	*rt_fmt_u64_zero(buf, 42, 5) = 0;
	CHECK_STR(buf, "00042");
	/* eight digits at a time, then padding */
	*rt_fmt_u64_zero(buf, 12345678901ull, 14) = 0;
	CHECK_STR(buf, "00012345678901");
	*rt_fmt_u64_zero(buf, 0, 3) = 0;
	CHECK_STR(buf, "000");
	*rt_fmt_u64_right(buf, 100000000, 12) = 0;
	CHECK_STR(buf, "   100000000");
	*rt_fmt_hex(buf, 0xffffffff0024c720ull, 16) = 0;
	CHECK_STR(buf, "ffffffff0024c720");
	*rt_fmt_hex(buf, 0x123456789ull, 8) = 0;
	CHECK_STR(buf, "23456789");
	const char raw[] = "a\"b\\c\n\x01\x7f\xc3\xa9\xff\xe2\x82";
	*rt_fmt_json_escaped(buf, raw, sizeof(raw) - 1) = 0;
	CHECK_STR(buf, "a\\\"b\\\\c\\n\\u0001\\u007f\xc3\xa9\\u00ff\\u00e2\\u0082");
	*rt_text_format_timestamp(buf, 7718998976ll) = 0;
	CHECK_STR(buf, "   7.718998976");
	*rt_text_format_timestamp(buf, -1000) = 0;
	CHECK_STR(buf, "  -0.000001000");
	*rt_text_format_timestamp(buf, 12345000000000ll) = 0;
	CHECK_STR(buf, "12345.000000000");
}

static void test_timebase(void)
{
	struct rt_timebase tb;
	struct rt_clock_pair start = {1000, 2000000000ull, 0};
	struct rt_clock_pair sync = {1000 + 2600000000ull, 3000000000ull, 0};
	/* a sync 1 s after start at 2.6 GHz */
	CHECK(rt_timebase_init(&tb, RT_CLOCK_TSC, 1, &start, &sync) == 0);
	CHECK_EQ(tb.basis, RT_TIMEBASE_SYNC);
	CHECK_EQ(rt_timebase_hz(&tb), 2600000000ull);
	CHECK_EQ(rt_timebase_ns(&tb, 1000 + 2600000000ull), 1000000000);
	CHECK_EQ(rt_timebase_ns(&tb, 1000 + 26), 10);
	CHECK(rt_timebase_ns(&tb, 1000 - 26) == -10);
	/* an hour of ticks stays within a nanosecond of the exact quotient */
	uint64_t ticks = 2600000000ull * 3600 + 123457;
	int64_t exact = (int64_t)((unsigned __int128)ticks * 1000000000ull / 2600000000ull);
	int64_t got = rt_timebase_ns(&tb, 1000 + ticks);
	CHECK(got - exact <= 1 && exact - got <= 1);
	/* a sync too close to the start is ignored: counter_hz */
	sync.mono_ns = start.mono_ns + 999999;
	CHECK(rt_timebase_init(&tb, RT_CLOCK_TSC, 2000000000ull, &start, &sync) == 0);
	CHECK_EQ(tb.basis, RT_TIMEBASE_ESTIMATE);
	CHECK_EQ(rt_timebase_ns(&tb, 1000 + 2000000000ull), 1000000000);
	CHECK(rt_timebase_init(&tb, RT_CLOCK_TSC, 0, &start, NULL) == -EINVAL);
	CHECK(rt_timebase_init(&tb, RT_CLOCK_MONOTONIC, 0, &start, NULL) == 0);
	CHECK_EQ(rt_timebase_ns(&tb, 1000 + 123456789), 123456789);
	/* a slow counter (24 MHz) */
	CHECK(rt_timebase_init(&tb, RT_CLOCK_CNTVCT, 24000000, &start, NULL) == 0);
	CHECK_EQ(rt_timebase_ns(&tb, 1000 + 24000000ull * 100000), 100000000000000ull);
	/* a torn sync pair is refused */
	struct rt_clock_sync live = {3, sync};
	struct rt_clock_pair pair;
	CHECK(rt_timebase_read_sync(&live, &pair) == 0);
	live.sequence = 4;
	CHECK(rt_timebase_read_sync(&live, &pair) == 1 && pair.counter == sync.counter);
}

static void test_basic_two_threads(void)
{
	struct builder b;
	b_init(&b, &small_flight);
	const uint8_t types6[6] = {RT_ARG_UNSIGNED | 4, RT_ARG_SIGNED | 4,  RT_ARG_UNSIGNED | 4,
				   RT_ARG_UNSIGNED | 4, RT_ARG_POINTER | 8, RT_ARG_SIGNED | 8};
	const uint8_t types2[2] = {RT_ARG_SIGNED | 4, RT_ARG_SIGNED | 1};
	uint32_t s0 = b_site(&b, "start", "src/app.c", "main", 10, 0, NULL);
	uint32_t s2 = b_site(&b, "pair", "src/app.c", "work", 20, 2, types2);
	uint32_t s6 = b_site(&b, "before send", "/home/u/app.c", "main", 12, 6, types6);
	uint32_t t1 = b_thread(&b, 3702, "main", 0);
	uint32_t t2 = b_thread(&b, 3703, "", 1);
	(void)t1;
	(void)t2;
	b_event(&b, 0, s0, 0, START_COUNTER + 100, 0, 0, 0, 0, 0, 0);
	b_event(&b, 1, s2, 2, START_COUNTER + 150, (uint32_t)-5, (uint32_t)-1, 0, 0, 0, 0);
	b_event(&b, 0, s6, 6, START_COUNTER + 200, 2, (uint32_t)-7, 1, 0, 0xffffffff0024c720ull,
		(uint64_t)-123);
	/* a tie on the counter: tid breaks it */
	b_event(&b, 1, s0, 0, START_COUNTER + 200, 0, 0, 0, 0, 0, 0);
	b.h->state = RT_ARENA_CLOSED;

	struct rt_reader *rd = b_read(&b);
	if (!rd)
		goto out;
	CHECK_EQ(rd->writer, RT_WRITER_CLOSED);
	CHECK_EQ(rd->thread_count, 2);
	CHECK_EQ(rd->totals.present, 4);
	CHECK_EQ(rd->totals.committed, 4);
	CHECK_EQ(rt_counts_lost(&rd->totals), 0);
	CHECK_EQ(rd->loss_count, 0);
	const struct rt_reader_thread *a = thread_of(rd, 3702);
	CHECK(a && a->item_count == 2);
	if (a && a->item_count == 2) {
		CHECK_EQ(items_of(rd, a)[0].seq, 0);
		CHECK_EQ(items_of(rd, a)[1].seq, 1);
		CHECK_EQ(items_of(rd, a)[1].args.a64[0], 0xffffffff0024c720ull);
		CHECK_EQ(a->last.counter, START_COUNTER + 200);
	}

	/* merged order: by counter, then tid */
	struct rt_merge_source sources[3] = {0};
	for (uint32_t i = 0; i < 2; i++) {
		sources[i].items = items_of(rd, &rd->threads[i]);
		sources[i].count = rd->threads[i].item_count;
	}
	sources[2].items = rd->losses;
	sources[2].count = rd->loss_count;
	struct rt_merge m;
	CHECK(rt_merge_init(&m, sources, 3) == 0);
	const struct rt_item *it;
	int32_t tids[8];
	int n = 0;
	while ((it = rt_merge_next(&m)) != NULL && n < 8)
		tids[n++] = it->tid;
	rt_merge_free(&m);
	CHECK_EQ(n, 4);
	CHECK(tids[0] == 3702 && tids[1] == 3703 && tids[2] == 3702 && tids[3] == 3703);

	/* argument decoding: signed 32-bit fields come back negative */
	const struct rt_site *site = rt_site_lookup(&rd->sites, s6);
	CHECK(site != NULL);
	if (site && a && a->item_count == 2) {
		uint64_t values[6] = {0}; /* the site has six: all are written */
		rt_site_decode_args(site, items_of(rd, a)[1].args.a32, items_of(rd, a)[1].args.a64,
				    values);
		CHECK((int64_t)values[1] == -7);
		CHECK((int64_t)values[5] == -123);
		CHECK_EQ(values[4], 0xffffffff0024c720ull);
		CHECK_STR(site->file_base, "app.c");
	}
	rt_reader_close(rd);
out:
	b_free(&b);
}

/* Run rt_tool_main with stdout sent to a file; returns the output (static). */
static const char *run_tool(int *status, int argc, const char **argv)
{
	static char text[65536];
	char path[64];
	snprintf(path, sizeof(path), "/tmp/test_reader.%d.out", (int)getpid());
	fflush(stdout);
	int saved = dup(1);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	dup2(fd, 1);
	*status = rt_tool_main(argc, (char **)argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	unlink(path);
	text[n > 0 ? n : 0] = 0;
	return text;
}

static void test_output_lines(void)
{
	struct builder b;
	b_init(&b, &small_flight);
	const uint8_t types6[6] = {RT_ARG_UNSIGNED | 4, RT_ARG_UNSIGNED | 4, RT_ARG_UNSIGNED | 4,
				   RT_ARG_UNSIGNED | 4, RT_ARG_POINTER | 8,  RT_ARG_SIGNED | 8};
	const uint8_t types1[1] = {RT_ARG_SIGNED | 4};
	uint32_t s6 = b_site(&b, "before send", "/src/app.c", "main", 12, 6, types6);
	uint32_t s1 = b_site(&b, "q\"uote", "app.c", "f", 7, 1, types1);
	b_thread(&b, 3702, "name", 0);
	b_event(&b, 0, s6, 6, START_COUNTER + 7718998976ull, 2, 6, 1, 0, 0xffffffff0024c720ull,
		0xffffff9519077e60ull);
	b_event(&b, 0, s1, 1, START_COUNTER + 7718999284ull, (uint32_t)-123, 0, 0, 0, 0, 0);
	b_slot(&b, 0, 2)->head.cpu = RT_CPU_UNKNOWN;
	b.h->state = RT_ARENA_CLOSED;
	write_bytes(arena_path(), b.mem, b.size);

	int status;
	const char *dump[] = {"ringtrace", "dump", arena_path()};
	const char *text = run_tool(&status, 3, dump);
	char expected[2048];
	/* one argument, padded as if all six were there */
	snprintf(expected, sizeof(expected),
		 "ringtrace: recovered 2/2 events from 1 thread (0 lost)\n"
		 "[   7.718998976][cpu 2 tid 3702 name] : 00000002 00000006 00000001 00000000 "
		 "ffffffff0024c720 ffffff9519077e60 : (       0.000 uSec) : app.c:main:12 (before "
		 "send)\n"
		 "[   7.718999284][cpu ? tid 3702 name] : %-69s : (       0.308 uSec) : "
		 "app.c:f:7 (q\"uote)\n"
		 "\n"
		 "Last recorded per-thread events\n"
		 "[   7.718999284][cpu ? tid 3702 name] : %-69s : (       0.000 uSec) : "
		 "app.c:f:7 (q\"uote)\n"
		 "\n"
		 "Last timestamp [   7.718999284]\n",
		 "ffffff85", "ffffff85");
	CHECK_EQ(status, 0);
	CHECK_STR(text, expected);

	const char *json[] = {"ringtrace", "dump", "--json", arena_path()};
	text = run_tool(&status, 4, json);
	CHECK_EQ(status, 0);
	CHECK_STR(
	    text,
	    "{\"kind\":\"trace\",\"ts_ns\":7718998976,\"tid\":3702,\"thread\":\"name\",\"cpu\":"
	    "2,\"seq\":0,\"tag\":\"before send\",\"file\":\"/src/app.c\",\"line\":12,\"func\":"
	    "\"main\",\"args\":[2,6,1,0,18446744069416994592,-459141579168]}\n"
	    "{\"kind\":\"trace\",\"ts_ns\":7718999284,\"tid\":3702,\"thread\":\"name\",\"cpu\":"
	    "-1,\"seq\":1,\"tag\":\"q\\\"uote\",\"file\":\"app.c\",\"line\":7,\"func\":\"f\","
	    "\"args\":[-123]}\n"
	    "{\"kind\":\"last_event\",\"ts_ns\":7718999284,\"tid\":3702,\"thread\":\"name\","
	    "\"cpu\":-1,\"seq\":1,\"tag\":\"q\\\"uote\",\"file\":\"app.c\",\"line\":7,\"func\":"
	    "\"f\",\"args\":[-123]}\n");

	const char *tail[] = {"ringtrace", "dump", "--tail", "1", arena_path()};
	text = run_tool(&status, 5, tail);
	CHECK(strstr(text, "before send") == NULL && strstr(text, "uote") != NULL);
	const char *last[] = {"ringtrace", "dump", "--last-events", arena_path()};
	text = run_tool(&status, 4, last);
	CHECK(strncmp(text, "\nLast recorded per-thread events\n", 33) == 0);
	const char *tid[] = {"ringtrace", "dump", "--tid=99", arena_path()};
	text = run_tool(&status, 4, tid);
	CHECK(strncmp(text, "ringtrace: recovered 0/0 events from 0 threads", 46) == 0);
	const char *info[] = {"ringtrace", "info", arena_path()};
	text = run_tool(&status, 3, info);
	CHECK_EQ(status, 0);
	CHECK(strstr(text, "State                  : closed") != NULL);
	CHECK(strstr(text, "Build-id               : deadbeef") != NULL);
	const char *info_json[] = {"ringtrace", "info", "--json", arena_path()};
	text = run_tool(&status, 4, info_json);
	CHECK(text[0] == '{' && strstr(text, "\"events_present\":2") != NULL);
	const char *bad[] = {"ringtrace", "dump", "--bogus", arena_path()};
	fflush(stderr);
	int saved_err = dup(2);
	int devnull = open("/dev/null", O_WRONLY);
	dup2(devnull, 2);
	run_tool(&status, 4, bad);
	CHECK_EQ(status, 2);
	const char *unknown[] = {"ringtrace", "frobnicate"};
	run_tool(&status, 2, unknown);
	CHECK_EQ(status, 2);
	dup2(saved_err, 2);
	close(saved_err);
	close(devnull);
	const char *help[] = {"ringtrace", "dump", "--help"};
	text = run_tool(&status, 3, help);
	CHECK(status == 0 && strncmp(text, "usage: ringtrace dump", 21) == 0);
	b_free(&b);
}

/* A small ring wraps: the newest records survive, the rest are overwritten. */
static void test_wraparound(void)
{
	struct builder b;
	b_init(&b, &small_flight); /* 128 slots per ring */
	uint32_t s1 = b_site(&b, "one", "a.c", "f", 1, 1, NULL);
	uint32_t s4 = b_site(&b, "four", "a.c", "f", 2, 4, NULL);
	b_thread(&b, 10, "w", 0);
	for (uint32_t i = 0; i < 300; i++) {
		if (i % 3 == 0)
			b_event(&b, 0, s4, 4, START_COUNTER + 1000 + i, i, 0, 0, 0, 0, 0);
		else
			b_event(&b, 0, s1, 1, START_COUNTER + 1000 + i, i, 0, 0, 0, 0, 0);
	}
	struct rt_reader *rd = b_read(&b);
	if (!rd)
		goto out;
	CHECK_EQ(rd->writer, RT_WRITER_CRASHED);
	const struct rt_reader_thread *t = thread_of(rd, 10);
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ(t->counts.committed, 300);
		CHECK(t->item_count > 80 && t->item_count < 128);
		CHECK_EQ(t->counts.present + t->counts.overwritten, 300);
		CHECK_EQ(items_of(rd, t)[t->item_count - 1].seq, 299);
		CHECK_EQ(items_of(rd, t)[t->item_count - 1].args.a32[0], 299);
		for (size_t i = 1; i < t->item_count; i++)
			CHECK(items_of(rd, t)[i].seq == items_of(rd, t)[i - 1].seq + 1);
		const struct rt_item *l = loss_of(rd, 10, RT_LOSS_OVERWRITTEN);
		CHECK(l && l->loss.count == t->counts.overwritten && l->seq == 0);
		CHECK(l && l->counter == items_of(rd, t)[0].counter && !(l->flags & RT_ITEM_TIMED));
	}
	size_t dead_count = t ? t->item_count : 0;
	rt_reader_close(rd);

	/* a live writer: the window is copied (across the ring's end) and reads the same */
	b_make_alive(&b);
	rd = b_read(&b);
	if (rd) {
		CHECK_EQ(rd->writer, RT_WRITER_RUNNING);
		t = thread_of(rd, 10);
		CHECK(t && t->item_count == dead_count &&
		      items_of(rd, t)[t->item_count - 1].seq == 299);
		CHECK(t && t->counts.present + t->counts.overwritten == 300);
		rt_reader_close(rd);
	}
out:
	b_free(&b);
}

/* Ring 0 passes from thread A to thread B; B's records wrap over A's oldest. */
static void test_ring_reuse(void)
{
	struct builder b;
	b_init(&b, &small_flight);
	uint32_t s2 = b_site(&b, "two", "a.c", "f", 1, 2, NULL);
	uint32_t a = b_thread(&b, 20, "a", 0);
	for (uint32_t i = 0; i < 100; i++)
		b_event(&b, 0, s2, 2, START_COUNTER + i, i, 1, 0, 0, 0, 0);
	b_exit(&b, a, START_COUNTER + 100);
	b_thread(&b, 21, "b", 0);
	for (uint32_t i = 0; i < 60; i++)
		b_event(&b, 0, s2, 2, START_COUNTER + 200 + i, i, 2, 0, 0, 0, 0);
	b.h->state = RT_ARENA_CLOSED;
	struct rt_reader *rd = b_read(&b);
	if (!rd)
		goto out;
	const struct rt_reader_thread *ta = thread_of(rd, 20), *tb = thread_of(rd, 21);
	CHECK(ta && tb);
	if (ta && tb) {
		CHECK_EQ(ta->counts.committed, 100);
		CHECK_EQ(tb->counts.committed, 60);
		/* 128 slots: B's 60 plus A's newest 68 */
		CHECK_EQ(tb->item_count, 60);
		CHECK_EQ(ta->item_count, 68);
		CHECK_EQ(ta->counts.overwritten, 32);
		CHECK_EQ(tb->counts.overwritten, 0);
		for (size_t i = 0; i < ta->item_count; i++)
			CHECK(items_of(rd, ta)[i].args.a32[1] == 1 &&
			      items_of(rd, ta)[i].tid == 20);
		for (size_t i = 0; i < tb->item_count; i++)
			CHECK(items_of(rd, tb)[i].args.a32[1] == 2 &&
			      items_of(rd, tb)[i].seq >= 100);
		CHECK_EQ(items_of(rd, tb)[0].seq, 100);
	}
	CHECK_EQ(rd->totals.present, 128);
	CHECK_EQ(rd->totals.overwritten, 32);
	rt_reader_close(rd);
out:
	b_free(&b);
}

/* A dead writer left a record half-written: torn, with the thread's tid. */
static void test_torn(void)
{
	for (int counted = 0; counted < 2; counted++) {
		struct builder b;
		b_init(&b, &small_flight);
		uint32_t s4 = b_site(&b, "four", "a.c", "f", 1, 4, NULL);
		b_thread(&b, 30, "t", 0);
		for (uint32_t i = 0; i < 10; i++)
			b_event(&b, 0, s4, 4, START_COUNTER + i, i, 0, 0, 0, 0, 0);
		const uint32_t a32[4] = {0};
		const uint64_t a64[2] = {0};
		b_record(&b, 0, RT_REC_TRACE, 2, s4, START_COUNTER + 50, 0, a32, a64, 0);
		if (counted)
			b_ring(&b, 0)->records++; /* died between steps 4 and 5 */
		struct rt_reader *rd = b_read(&b);
		if (!rd) {
			b_free(&b);
			continue;
		}
		const struct rt_reader_thread *t = thread_of(rd, 30);
		CHECK(t && t->item_count == 10 && t->counts.torn == 1);
		CHECK(t && t->counts.overwritten == 0 && t->counts.damaged == 0);
		const struct rt_item *l = loss_of(rd, 30, RT_LOSS_TORN);
		CHECK(l && l->loss.count == 1 && (l->flags & RT_ITEM_TIMED) &&
		      l->counter == START_COUNTER + 50);
		CHECK_EQ(rd->totals.torn, 1);
		rt_reader_close(rd);

		/* the same ring, writer alive: the record is in progress, not lost */
		b_make_alive(&b);
		rd = b_read(&b);
		if (rd) {
			CHECK_EQ(rd->writer, RT_WRITER_RUNNING);
			CHECK_EQ(rd->totals.torn, 0);
			CHECK_EQ(rd->totals.present, 10);
			CHECK(loss_of(rd, 30, RT_LOSS_TORN) == NULL);
			rt_reader_close(rd);
		}
		b_free(&b);
	}
}

/* Stream mode: a LOST record is a dropped loss in its place; drained records are not lost. */
static void test_stream_lost(void)
{
	struct builder b;
	struct spec s = small_flight;
	s.mode = RT_MODE_STREAM;
	b_init(&b, &s);
	uint32_t s1 = b_site(&b, "one", "a.c", "f", 1, 1, NULL);
	b_thread(&b, 40, "s", 0);
	/* 200 one-slot records: a collector drained the oldest 72 */
	for (uint32_t i = 0; i < 150; i++)
		b_event(&b, 0, s1, 1, START_COUNTER + i * 10, i, 0, 0, 0, 0, 0);
	b_lost(&b, 0, RT_LOST_DROPPED, 17, START_COUNTER + 1500, START_COUNTER + 1600);
	for (uint32_t i = 150; i < 198; i++)
		b_event(&b, 0, s1, 1, START_COUNTER + 2000 + i, i, 0, 0, 0, 0, 0);
	b_ring(&b, 0)->tail = b_ring(&b, 0)->head;
	b.h->state = RT_ARENA_CLOSED;
	struct rt_reader *rd = b_read(&b);
	if (!rd)
		goto out;
	const struct rt_reader_thread *t = thread_of(rd, 40);
	CHECK(t != NULL);
	if (t) {
		CHECK_EQ(t->counts.committed, 199);
		CHECK_EQ(t->counts.overwritten, 0);
		CHECK_EQ(t->counts.dropped, 17);
		CHECK_EQ(t->counts.present + t->counts.consumed + 1, 199);
		size_t lost_at = t->item_count;
		for (size_t i = 0; i < t->item_count; i++)
			if (items_of(rd, t)[i].kind == RT_ITEM_LOSS)
				lost_at = i;
		CHECK(lost_at < t->item_count);
		if (lost_at < t->item_count) {
			const struct rt_item *l = &items_of(rd, t)[lost_at];
			CHECK_EQ(l->loss.count, 17);
			CHECK_EQ(l->loss.reason, RT_LOSS_DROPPED);
			CHECK_EQ(l->loss.note, RT_NOTE_RING_FULL);
			CHECK_EQ(l->counter, START_COUNTER + 1500);
			CHECK_EQ(l->loss.last_counter, START_COUNTER + 1600);
			CHECK_EQ(items_of(rd, t)[lost_at + 1].args.a32[0], 150);
		}
	}
	CHECK(loss_of(rd, 40, RT_LOSS_OVERWRITTEN) == NULL);
	rt_reader_close(rd);
	int status;
	const char *json[] = {"ringtrace", "dump", "--json", arena_path()};
	const char *text = run_tool(&status, 4, json);
	CHECK(strstr(text, "{\"kind\":\"lost\",\"tid\":40,\"count\":17,\"reason\":\"dropped\","
			   "\"ts_ns\":1500,\"ts_last_ns\":1600,\"note\":\"ring full\"}\n") != NULL);
out:
	b_free(&b);
}

/* Events that never reached a ring are counted where the arena says. */
static void test_global_losses(void)
{
	struct builder b;
	b_init(&b, &small_flight);
	uint32_t s1 = b_site(&b, "one", "a.c", "f", 1, 1, NULL);
	uint32_t t = b_thread(&b, 50, "noring", RT_NO_RING);
	b_entry(&b, t)->lost_no_ring = 7;
	/* its last event is kept in its entry */
	struct rt_last_event *last = &b_entry(&b, t)->last[0];
	last->site = s1;
	last->counter = START_COUNTER + 77;
	last->kind = RT_REC_TRACE;
	last->cpu = 1;
	last->a32[0] = 0xabc;
	last->valid = 1;
	b.h->lost_untracked = 3;
	b.h->lost_no_site = 4;
	struct rt_reader *rd = b_read(&b);
	if (!rd)
		goto out;
	CHECK_EQ(rd->totals.dropped, 14);
	CHECK_EQ(rd->loss_count, 3);
	const struct rt_item *l = loss_of(rd, 50, RT_LOSS_DROPPED);
	CHECK(l && l->loss.count == 7 && l->loss.note == RT_NOTE_NO_RING);
	/* the global ones sort first */
	CHECK(rd->losses[0].tid == 0 && rd->losses[1].tid == 0);
	const struct rt_reader_thread *th = thread_of(rd, 50);
	CHECK(th && th->last.kind == RT_ITEM_TRACE && th->last.args.a32[0] == 0xabc &&
	      (th->last.flags & RT_ITEM_NO_SEQ));
	rt_reader_close(rd);
out:
	b_free(&b);
}

/* The entry's copy of the last event wins when it is newer than the ring's. */
static void test_last_event_choice(void)
{
	struct builder b;
	b_init(&b, &small_flight);
	uint32_t s1 = b_site(&b, "one", "a.c", "f", 1, 1, NULL);
	uint32_t t = b_thread(&b, 60, "x", 0);
	b_event(&b, 0, s1, 1, START_COUNTER + 100, 1, 0, 0, 0, 0, 0);
	struct rt_last_event *last = &b_entry(&b, t)->last[0];
	last->site = s1;
	last->counter = START_COUNTER + 50; /* older than the ring's: ignored */
	last->kind = RT_REC_TRACE;
	last->valid = 1;
	struct rt_reader *rd = b_read(&b);
	if (rd) {
		CHECK_EQ(rd->threads[0].last.counter, START_COUNTER + 100);
		CHECK(!(rd->threads[0].last.flags & RT_ITEM_NO_SEQ));
		rt_reader_close(rd);
	}
	/*
	 * A coarse counter stamps both alike: a live thread's ring may hold the
	 * later one, an ended thread's entry holds its last (threads.c keeps it).
	 */
	last->counter = START_COUNTER + 100;
	last->a32[0] = 7;
	rd = b_read(&b);
	if (rd) {
		CHECK(!(rd->threads[0].last.flags & RT_ITEM_NO_SEQ));
		rt_reader_close(rd);
	}
	uint32_t was = b_entry(&b, t)->state;
	b_entry(&b, t)->state = RT_THREAD_EXITED;
	rd = b_read(&b);
	if (rd) {
		CHECK(rd->threads[0].last.flags & RT_ITEM_NO_SEQ);
		CHECK_EQ(rd->threads[0].last.args.a32[0], 7);
		rt_reader_close(rd);
	}
	b_entry(&b, t)->state = was;
	/* the ring's record count kept with the copy decides, live or ended */
	last->flags = RT_LAST_F_RING_RECORDS;
	last->ring_records = 1; /* dropped after record 0, the ring's newest */
	rd = b_read(&b);
	if (rd) {
		CHECK(rd->threads[0].last.flags & RT_ITEM_NO_SEQ);
		CHECK_EQ(rd->threads[0].last.args.a32[0], 7);
		rt_reader_close(rd);
	}
	last->ring_records = 0; /* kept before record 0 was written */
	b_entry(&b, t)->state = RT_THREAD_EXITED;
	rd = b_read(&b);
	if (rd) {
		CHECK(!(rd->threads[0].last.flags & RT_ITEM_NO_SEQ));
		rt_reader_close(rd);
	}
	b_entry(&b, t)->state = was;
	last->flags = 0;
	last->ring_records = 0;
	last->counter = START_COUNTER + 500;
	rd = b_read(&b);
	if (rd) {
		CHECK_EQ(rd->threads[0].last.counter, START_COUNTER + 500);
		rt_reader_close(rd);
	}
	/* of the two copies, the one with the newer generation counts... */
	struct rt_last_event *other = &b_entry(&b, t)->last[1];
	*other = *last;
	other->counter = START_COUNTER + 700;
	other->valid = 2;
	rd = b_read(&b);
	if (rd) {
		CHECK_EQ(rd->threads[0].last.counter, START_COUNTER + 700);
		rt_reader_close(rd);
	}
	/* ...unless it was being rewritten when the writer died: then the other */
	other->valid = 0;
	rd = b_read(&b);
	if (rd) {
		CHECK_EQ(rd->threads[0].last.counter, START_COUNTER + 500);
		rt_reader_close(rd);
	}
	b_free(&b);
}

/* Damage inside the window costs only the records it touched. */
static void test_damage(void)
{
	struct builder b;
	b_init(&b, &small_flight);
	uint32_t s1 = b_site(&b, "one", "a.c", "f", 1, 1, NULL);
	uint32_t s4 = b_site(&b, "four", "a.c", "f", 2, 4, NULL);
	b_thread(&b, 70, "d", 0);
	for (uint32_t i = 0; i < 40; i++)
		b_event(&b, 0, i % 2 ? s4 : s1, i % 2 ? 4 : 1, START_COUNTER + i, i, 0, 0, 0, 0, 0);
	/* record 5 (slots 7-8): a bad continuation; record 10 (slot 15): a bad site */
	b_slot(&b, 0, 8)->cont.index = 3;
	b_slot(&b, 0, 15)->head.site = 999;
	/* record 20 (slot 30): a stale seq */
	b_slot(&b, 0, 30)->head.seq += 128;
	/* a bad site entry: its string runs past the string area */
	struct rt_site_entry *e = (struct rt_site_entry *)(b.mem + b.h->site_table_offset) + s4;
	(void)e;
	b.h->state = RT_ARENA_CLOSED;
	struct rt_reader *rd = b_read(&b);
	if (!rd)
		goto out;
	const struct rt_reader_thread *t = thread_of(rd, 70);
	CHECK(t && t->item_count == 37);
	CHECK(t && t->counts.damaged == 3 && t->counts.overwritten == 0);
	size_t gaps = 0;
	for (size_t i = 0; i < rd->loss_count; i++)
		gaps += rd->losses[i].loss.reason == RT_LOSS_DAMAGED;
	CHECK_EQ(gaps, 3);
	rt_reader_close(rd);

	/* a site whose tag is not NUL-terminated is invalid: its records are skipped */
	e = (struct rt_site_entry *)(b.mem + b.h->site_table_offset) + s1;
	e->tag_length = 1;
	rd = b_read(&b);
	if (rd) {
		CHECK(rt_site_lookup(&rd->sites, s1) == NULL);
		CHECK_EQ(rd->totals.present, 19); /* the 4-argument events but record 5 */
		rt_reader_close(rd);
	}
	e->tag_length = 3;
	e->tag_offset = (uint32_t)b.h->string_capacity - 2; /* runs past the string area */
	rd = b_read(&b);
	if (rd) {
		CHECK(rt_site_lookup(&rd->sites, s1) == NULL);
		rt_reader_close(rd);
	}
out:
	b_free(&b);
}

/* Expect rt_reader_open to fail at byte offset with a message containing what. */
static void expect_open_error(struct builder *b, size_t size, int rc, uint64_t offset,
			      const char *what)
{
	struct rt_reader *rd;
	struct rt_read_error error;
	write_bytes(arena_path(), b->mem, size);
	int got = rt_reader_open(arena_path(), &rd, &error);
	CHECK_EQ(got, rc);
	if (got == 0) {
		rt_reader_close(rd);
		return;
	}
	CHECK(error.has_offset);
	CHECK_EQ(error.offset, offset);
	if (!strstr(error.message, what)) {
		failed++;
		fprintf(stderr, "%s: message [%s] lacks [%s]\n", __func__, error.message, what);
	} else {
		passed++;
	}
}

/*
 * Expect rt_reader_open to read the arena with damage: a damaged region
 * that covers byte offset, whose words contain what, and every event of
 * the arena (count) still there.
 */
static void expect_damaged(struct builder *b, size_t size, uint64_t offset, const char *what,
			   uint64_t count)
{
	struct rt_reader *rd;
	struct rt_read_error error;
	write_bytes(arena_path(), b->mem, size);
	int got = rt_reader_open(arena_path(), &rd, &error);
	CHECK_EQ(got, 0);
	if (got != 0) {
		fprintf(stderr, "%s: [%s] refused: byte %llu: %s\n", __func__, what,
			(unsigned long long)error.offset, error.message);
		return;
	}
	CHECK(rt_reader_damaged(rd));
	const struct rt_damage *found = NULL;
	for (size_t i = 0; i < rd->damage.count && !found; i++) {
		const struct rt_damage *d = &rd->damage.items[i];
		if (d->offset <= offset && offset < d->offset + (d->length ? d->length : 1) &&
		    strstr(d->what, what))
			found = d;
	}
	if (found) {
		passed++;
	} else {
		failed++;
		fprintf(stderr, "%s: no damaged region at byte %llu with [%s]; found:\n", __func__,
			(unsigned long long)offset, what);
		for (size_t i = 0; i < rd->damage.count; i++)
			fprintf(stderr, "  bytes %llu+%llu: %s\n",
				(unsigned long long)rd->damage.items[i].offset,
				(unsigned long long)rd->damage.items[i].length,
				rd->damage.items[i].what);
	}
	CHECK_EQ(rd->totals.present, count);
	rt_reader_close(rd);
}

/*
 * What is refused (exit status 2 in the tool), and what is read with the
 * damage reported: a header whose fields contradict each other is repaired
 * from the rest (read/header_recovery.h) and loses no event.
 */
static void test_bad_headers(void)
{
	struct builder b;
	b_init(&b, &small_flight);
	uint32_t s1 = b_site(&b, "one", "a.c", "f", 1, 1, NULL);
	b_thread(&b, 40, "h", 0);
	for (uint32_t i = 0; i < 10; i++)
		b_event(&b, 0, s1, 1, START_COUNTER + 20 + i, i, 0, 0, 0, 0, 0);
	b.h->state = RT_ARENA_CLOSED;
	struct rt_arena_header good = *b.h;

	/* refused: not an arena, shorter than a header, another version, byte order, creating */
	expect_open_error(&b, 0, -EINVAL, 0, "truncated");
	expect_open_error(&b, 100, -EINVAL, 100, "truncated");
	memset(b.mem, 0, 64);
	expect_open_error(&b, b.size, -EINVAL, 0, "not a ringtrace arena");
	*b.h = good;
	b.h->version = 7;
	b.h->compat_version = 7;
	expect_open_error(&b, b.size, -EPROTONOSUPPORT, 12,
			  "unknown format version 7 (this reader knows 2)");
	/* a newer writer that older readers may still read, but its header overlaps a table */
	b.h->compat_version = 1;
	b.h->header_size = 8192;
	expect_open_error(&b, b.size, -EINVAL,
			  offsetof(struct rt_arena_header, thread_table_offset),
			  "overlaps the header");
	*b.h = good;
	b.h->byte_order = __builtin_bswap32(RT_BYTE_ORDER_MARK);
	expect_open_error(&b, b.size, -EINVAL, 16, "byte order");
	*b.h = good;
	b.h->state = RT_ARENA_CREATING;
	expect_open_error(&b, b.size, -EINVAL, 20, "not complete");

	/* read, damaged: the file cut short loses what is past its end, and says so */
	*b.h = good;
	expect_damaged(&b, b.size - 1, b.size - 1, "the rest is missing", 10);
	b.h->magic[0] = 'X';
	expect_damaged(&b, b.size, 0, "magic", 10);
	*b.h = good;
	b.h->ring_bytes = 5000;
	expect_damaged(&b, b.size, 40, "ring_bytes 5000", 10);
	*b.h = good;
	b.h->ring_count = 0xffffffffu;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, ring_count),
		       "ring_count 4294967295", 10);
	*b.h = good;
	b.h->site_table_offset = b.h->thread_table_offset + 64;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, site_table_offset),
		       "site_table_offset", 10);
	*b.h = good;
	b.h->string_area_offset = UINT64_MAX - 10;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, string_area_offset),
		       "string_area_offset", 10);
	*b.h = good;
	b.h->thread_table_offset += 4;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, thread_table_offset),
		       "thread_table_offset", 10);
	*b.h = good;
	memset(b.h->program, 'x', sizeof(b.h->program));
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, program), "NUL", 10);
	*b.h = good;
	b.h->arena_size = b.size + 1;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, arena_size), "arena_size", 10);
	*b.h = good;
	b.h->thread_capacity = 3;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, thread_capacity),
		       "thread_capacity 3", 10);
	*b.h = good;
	b.h->mode = 9;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, mode), "mode 9", 10);
	*b.h = good;
	b.h->counter_hz = 0;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, counter_hz), "counter_hz", 10);
	*b.h = good;
	b.h->start.counter = UINT64_MAX / 2;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, start.counter), "start.counter",
		       10);
	*b.h = good;
	b.h->threads_used = 0;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, threads_used), "threads_used",
		       10);
	*b.h = good;
	b.h->sites_used = 1;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, sites_used), "sites_used", 10);
	*b.h = good;
	b.h->strings_used = 0;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, strings_used), "strings_used",
		       10);
	*b.h = good;
	b.h->lost_untracked = UINT64_MAX;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, lost_untracked),
		       "lost_untracked", 10);
	*b.h = good;
	b.h->reserved_tail[100] = 1;
	expect_damaged(&b, b.size, offsetof(struct rt_arena_header, reserved_tail) + 100,
		       "reserved", 10);
	/* counters above their capacity are clamped, not damage */
	*b.h = good;
	b.h->threads_used = 1000;
	b.h->sites_used = 1000;
	b.h->rings_used = 1000;
	b.h->strings_used = 1u << 30;
	expect_open_error(&b, b.size, 0, 0, "");
	*b.h = good;

	/* a missing file: errno text, no offset */
	struct rt_reader *rd;
	struct rt_read_error error;
	CHECK(rt_reader_open("/nonexistent/x.arena", &rd, &error) == -ENOENT);
	CHECK(!error.has_offset && strstr(error.message, "No such file") != NULL);
	b_free(&b);
}

/* rt_reader_open_memory decodes a buffer as rt_reader_open decodes a file. */
static void test_open_memory(void)
{
	struct builder b;
	b_init(&b, &small_flight);
	uint32_t s1 = b_site(&b, "one", "a.c", "f", 1, 1, NULL);
	b_thread(&b, 90, "mem", 0);
	for (uint32_t i = 0; i < 5; i++)
		b_event(&b, 0, s1, 1, START_COUNTER + i, i, 0, 0, 0, 0, 0);
	struct rt_reader *rd;
	struct rt_read_error error;
	CHECK_EQ(rt_reader_open_memory(b.mem, b.size, "in memory", &rd, &error), 0);
	if (rd) {
		CHECK_STR(rd->path, "in memory");
		CHECK_EQ(rd->thread_count, 1);
		CHECK_EQ(rd->threads[0].item_count, 5);
		CHECK_EQ(rd->totals.present, 5);
		rt_reader_close(rd); /* leaves the caller's buffer alone */
	}
	CHECK_EQ(b.h->magic[0], 'R');
	/* a misaligned buffer is refused rather than read with misaligned atomics */
	unsigned char *shifted = malloc(b.size + 1);
	memcpy(shifted + 1, b.mem, b.size);
	CHECK_EQ(rt_reader_open_memory(shifted + 1, b.size, "shifted", &rd, &error), -EINVAL);
	CHECK(rd == NULL && strstr(error.message, "aligned") != NULL);
	free(shifted);
	/* no bytes at all (not even a pointer) is a truncated arena */
	CHECK_EQ(rt_reader_open_memory(NULL, 0, "nothing", &rd, &error), -EINVAL);
	CHECK(error.has_offset && error.offset == 0 && strstr(error.message, "truncated"));
	b_free(&b);
}

/* Hostile bytes anywhere: the reader must never crash, hang or overrun. */
static void test_mutations(void)
{
	struct builder b;
	struct spec s = small_flight;
	b_init(&b, &s);
	uint32_t s1 = b_site(&b, "one", "a.c", "f", 1, 1, NULL);
	uint32_t s6 = b_site(&b, "six", "a.c", "f", 1, 6, NULL);
	uint32_t a = b_thread(&b, 80, "m", 0);
	for (uint32_t i = 0; i < 90; i++)
		b_event(&b, 0, i % 2 ? s6 : s1, i % 2 ? 6 : 1, START_COUNTER + i, i, 0, 0, 0, 0, 0);
	b_exit(&b, a, START_COUNTER + 100);
	b_thread(&b, 81, "n", 0);
	b_thread(&b, 82, "o", 1);
	for (uint32_t i = 0; i < 90; i++)
		b_event(&b, i % 2, s6, 6, START_COUNTER + 200 + i, i, 0, 0, 0, 0, 0);
	b_lost(&b, 1, RT_LOST_DROPPED, 3, START_COUNTER + 400, START_COUNTER + 401);
	unsigned char *pristine = malloc(b.size);
	memcpy(pristine, b.mem, b.size);
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	int opened = 0;
	const uint64_t interesting[] = {0, 1, 0xff, 0x7fffffff, 0xffffffff, UINT64_MAX};
	for (int round = 0; round < 3000; round++) {
		memcpy(b.mem, pristine, b.size);
		int flips = 1 + round % 4;
		for (int f = 0; f < flips; f++) {
			rng ^= rng << 13;
			rng ^= rng >> 7;
			rng ^= rng << 17;
			/* half the time hit the metadata, which is small and dense */
			uint64_t limit = (rng & 1) ? b.h->ring_area_offset : b.size;
			if (round & 1)
				limit = b.h->ring_area_offset;
			uint64_t at = (rng >> 8) % limit & ~7ull;
			uint64_t v = (rng >> 40) % 4 == 0 ? interesting[(rng >> 20) % 6] : rng;
			size_t n = (rng >> 30) % 2 ? 8 : 4;
			if (at + n <= b.size)
				memcpy(b.mem + at, &v, n);
		}
		write_bytes(arena_path(), b.mem, b.size);
		struct rt_reader *rd;
		struct rt_read_error error;
		if (rt_reader_open(arena_path(), &rd, &error) != 0)
			continue;
		opened++;
		/* everything decoded must make sense */
		for (uint32_t i = 0; i < rd->thread_count; i++) {
			const struct rt_reader_thread *t = &rd->threads[i];
			for (size_t k = 0; k < t->item_count; k++) {
				const struct rt_item *it = &items_of(rd, t)[k];
				if (it->kind == RT_ITEM_TRACE &&
				    !rt_site_lookup(&rd->sites, it->site)) {
					failed++;
					fprintf(stderr, "round %d: an event with an invalid site\n",
						round);
				}
				if (k && it->seq <= items_of(rd, t)[k - 1].seq) {
					failed++;
					fprintf(stderr, "round %d: seqs out of order\n", round);
				}
			}
		}
		int devnull = open("/dev/null", O_WRONLY);
		struct rt_out out;
		rt_out_open(&out, devnull);
		struct rt_json_printer jp;
		struct rt_text_printer tp;
		if (rt_json_printer_init(&jp, &out, rd) == 0 &&
		    rt_text_printer_init(&tp, &out, rd) == 0) {
			for (uint32_t i = 0; i < rd->thread_count; i++) {
				for (size_t k = 0; k < rd->threads[i].item_count; k++) {
					rt_json_print_item(&jp, &items_of(rd, &rd->threads[i])[k]);
					rt_text_print_item(&tp, &items_of(rd, &rd->threads[i])[k]);
				}
				if (rd->threads[i].last.kind)
					rt_json_print_last_event(&jp, &rd->threads[i].last);
			}
			for (size_t k = 0; k < rd->loss_count; k++)
				rt_text_print_item(&tp, &rd->losses[k]);
			rt_json_printer_free(&jp);
			rt_text_printer_free(&tp);
		}
		rt_out_close(&out);
		close(devnull);
		rt_reader_close(rd);
	}
	CHECK(opened > 100);
	free(pristine);
	b_free(&b);
}

/* ---- log messages ------------------------------------------------------- */

/* A log site: its argument types in the string area, like its other strings. */
static uint32_t b_log_site(struct builder *b, const char *format, uint32_t line, uint8_t level,
			   unsigned nargs, const uint8_t *types, uint32_t types_length)
{
	uint32_t index = b_site(b, format, "src/app.c", "handle", line, 0, NULL);
	struct rt_site_entry *e =
	    (struct rt_site_entry *)(b->mem + b->h->site_table_offset) + index;
	e->kind = RT_SITE_LOG;
	e->nargs = (uint8_t)nargs;
	e->level = level;
	char t[RT_LOG_MAX_ARGS + 2];
	memcpy(t, types, types_length);
	t[types_length] = 0;
	e->types_offset = b_string(b, t);
	e->types_length = types_length;
	return index;
}

/* One log or I/O record as the writer lays it out: the payload over head and continuations. */
static void b_payload_record(struct builder *b, uint32_t ring, uint8_t kind, uint32_t site,
			     uint64_t counter, const unsigned char *payload, size_t length)
{
	unsigned nslots = RT_LOG_SLOTS(length);
	unsigned char padded[RT_LOG_PAYLOAD_MAX];
	memset(padded, 0, sizeof(padded));
	memcpy(padded, payload, length);
	struct rt_ring_desc *d = b_ring(b, ring);
	uint64_t h = d->head;
	d->reserve = h + nslots;
	union rt_slot *head = b_slot(b, ring, h);
	memset(head, 0, sizeof(*head));
	head->head.seq = (uint32_t)h;
	head->head.kind = kind;
	head->head.nslots = (uint8_t)nslots;
	head->head.cpu = 1;
	head->head.record = (uint32_t)d->records;
	head->head.site = site;
	head->head.counter = counter;
	memcpy(head->bytes + 24, padded, 8);
	for (unsigned k = 1; k < nslots; k++) {
		union rt_slot *c = b_slot(b, ring, h + k);
		memset(c, 0, sizeof(*c));
		c->cont.seq = (uint32_t)(h + k);
		c->cont.kind = RT_REC_CONT;
		c->cont.index = (uint8_t)k;
		memcpy(c->bytes + 8, padded + 8 + 24 * (k - 1), 24);
	}
	d->records++;
	d->head = h + nslots;
}

static void b_log(struct builder *b, uint32_t ring, uint32_t site, uint64_t counter,
		  const unsigned char *payload, size_t length)
{
	b_payload_record(b, ring, RT_REC_LOG, site, counter, payload, length);
}

struct payload {
	unsigned char fixed[RT_LOG_PAYLOAD_MAX], strings[RT_LOG_PAYLOAD_MAX];
	size_t nfixed, nstrings;
};

static void p_u64(struct payload *p, uint64_t v)
{
	memcpy(p->fixed + p->nfixed, &v, 8);
	p->nfixed += 8;
}

static void p_double(struct payload *p, double v)
{
	memcpy(p->fixed + p->nfixed, &v, 8);
	p->nfixed += 8;
}

static void p_string(struct payload *p, const char *s, uint32_t flags)
{
	uint32_t n = s ? (uint32_t)strlen(s) : 0;
	p_u64(p, (uint64_t)(uintptr_t)s);
	memcpy(p->fixed + p->nfixed, &n, 4);
	memcpy(p->fixed + p->nfixed + 4, &flags, 4);
	p->nfixed += 8;
	memcpy(p->strings + p->nstrings, s ? s : "", n);
	p->nstrings += n;
}

static size_t p_bytes(const struct payload *p, unsigned char *out)
{
	memcpy(out, p->fixed, p->nfixed);
	memcpy(out + p->nfixed, p->strings, p->nstrings);
	return p->nfixed + p->nstrings;
}

/* The message the reader renders for item: 0, 1 when damaged, -1 without a site. */
static int render_item(const struct rt_reader *rd, const struct rt_item *it, char *out, size_t size)
{
	const struct rt_site *site = rt_site_lookup(&rd->sites, it->site);
	int damaged = -1;
	if (!site)
		return -1;
	rt_log_render(out, size, site, it->log.payload, it->log.length, &damaged);
	return damaged;
}

/* Print every item of t with the text and JSON printers; counts their damaged messages. */
static void print_both(const struct rt_reader *rd, const struct rt_reader_thread *t, char **text,
		       char **json, uint64_t *damaged)
{
	*text = *json = NULL;
	char tpath[64], jpath[64];
	snprintf(tpath, sizeof(tpath), "/tmp/test_reader.%d.text", (int)getpid());
	snprintf(jpath, sizeof(jpath), "/tmp/test_reader.%d.json", (int)getpid());
	int tf = open(tpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	int jf = open(jpath, O_RDWR | O_CREAT | O_TRUNC, 0600);
	struct rt_out out, jout;
	CHECK(tf >= 0 && jf >= 0);
	if (tf < 0 || jf < 0 || rt_out_open(&out, tf) != 0 || rt_out_open(&jout, jf) != 0)
		return;
	struct rt_text_printer tp;
	struct rt_json_printer jp;
	CHECK(rt_text_printer_init(&tp, &out, rd) == 0);
	CHECK(rt_json_printer_init(&jp, &jout, rd) == 0);
	for (size_t i = 0; i < t->item_count; i++) {
		rt_text_print_item(&tp, &items_of(rd, t)[i]);
		rt_json_print_item(&jp, &items_of(rd, t)[i]);
	}
	damaged[0] = tp.log_damaged;
	damaged[1] = jp.log_damaged;
	rt_text_printer_free(&tp);
	rt_json_printer_free(&jp);
	rt_out_close(&out);
	rt_out_close(&jout);
	const int fds[2] = {tf, jf};
	char **dst[2] = {text, json};
	for (int k = 0; k < 2; k++) {
		off_t size = lseek(fds[k], 0, SEEK_END);
		*dst[k] = calloc(1, (size_t)size + 1);
		if (*dst[k] && pread(fds[k], *dst[k], (size_t)size, 0) != size)
			CHECK(0);
		close(fds[k]);
	}
	unlink(tpath);
	unlink(jpath);
}

static void test_log_records(void)
{
	struct builder b;
	b_init(&b, &small_flight);
	const uint8_t t3[3] = {RT_ARG_SIGNED | 4, RT_ARG_STRING | 8, RT_ARG_FLOAT | 8};
	uint32_t s3 = b_log_site(&b, "request %d from %s took %.1f us", 88, RT_LOG_INFO, 3, t3, 3);
	uint8_t t16[16];
	char f16[256] = "";
	for (unsigned i = 0; i < 16; i++) {
		t16[i] = i % 4 == 0   ? RT_ARG_UNSIGNED | 8
			 : i % 4 == 1 ? RT_ARG_SIGNED | 2
			 : i % 4 == 2 ? RT_ARG_STRING | 8
				      : RT_ARG_POINTER | 8;
		strcat(f16, i % 4 == 0	 ? "%llu "
			    : i % 4 == 1 ? "%hd "
			    : i % 4 == 2 ? "%s "
					 : "%p ");
	}
	uint32_t s16 = b_log_site(&b, f16, 90, RT_LOG_WARN, 16, t16, 16);
	/* unusable: a types string shorter than nargs, and an unknown type code */
	uint32_t bad_len = b_log_site(&b, "%d %d", 91, RT_LOG_INFO, 2, t3, 1);
	const uint8_t unknown[1] = {0x70};
	uint32_t bad_code = b_log_site(&b, "%d", 92, RT_LOG_INFO, 1, unknown, 1);
	uint32_t trace = b_site(&b, "tick", "src/app.c", "main", 10, 1, NULL);
	b_thread(&b, 100, "worker", 0);

	unsigned char bytes[RT_LOG_PAYLOAD_MAX], bytes16[RT_LOG_PAYLOAD_MAX];
	struct payload p;
	memset(&p, 0, sizeof(p));
	p_u64(&p, (uint64_t)(int64_t)42);
	p_string(&p, "alice", 0);
	p_double(&p, 17.25);
	size_t n3 = p_bytes(&p, bytes);
	b_event(&b, 0, trace, 1, START_COUNTER + 100, 7, 0, 0, 0, 0, 0);
	b_log(&b, 0, s3, START_COUNTER + 200, bytes, n3);

	/* 16 arguments with a 300-byte string and a NULL one */
	char big[301];
	memset(big, 'x', 300);
	big[300] = 0;
	memset(&p, 0, sizeof(p));
	char expect16[8192];
	size_t e = 0;
	for (unsigned i = 0; i < 16; i++) {
		if (i % 4 == 0) {
			p_u64(&p, 1000u + i);
			e += (size_t)snprintf(expect16 + e, sizeof(expect16) - e, "%llu ",
					      1000ull + i);
		} else if (i % 4 == 1) {
			p_u64(&p, (uint64_t)(int64_t)-5);
			e +=
			    (size_t)snprintf(expect16 + e, sizeof(expect16) - e, "%hd ", (short)-5);
		} else if (i % 4 == 2) {
			const char *str = i == 2 ? big : i == 6 ? NULL : "s";
			p_string(&p, str, str ? 0 : RT_LOG_STR_NULL);
			e += (size_t)snprintf(expect16 + e, sizeof(expect16) - e, "%s ",
					      str ? str : "(null)");
		} else {
			p_u64(&p, 0x1000u * i);
			e += (size_t)snprintf(expect16 + e, sizeof(expect16) - e, "%p ",
					      (void *)(uintptr_t)(0x1000u * i));
		}
	}
	size_t n16 = p_bytes(&p, bytes16);
	CHECK(RT_LOG_SLOTS(n16) > 10);
	for (unsigned i = 0; i < 80; i++)
		b_event(&b, 0, trace, 1, START_COUNTER + 300 + i, i, 0, 0, 0, 0, 0);
	b_log(&b, 0, s16, START_COUNTER + 500, bytes16, n16);
	/* a hostile payload: a string longer than the record */
	memset(&p, 0, sizeof(p));
	p_u64(&p, 1);
	p_string(&p, "bob", 0);
	p_double(&p, 1.0);
	size_t nh = p_bytes(&p, bytes);
	uint32_t huge = 1000;
	memcpy(bytes + 16, &huge, 4);
	b_log(&b, 0, s3, START_COUNTER + 600, bytes, nh);
	/* records of unusable sites */
	b_log(&b, 0, bad_len, START_COUNTER + 700, bytes, 16);
	b_log(&b, 0, bad_code, START_COUNTER + 710, bytes, 8);
	b_event(&b, 0, trace, 1, START_COUNTER + 800, 99, 0, 0, 0, 0, 0);
	b.h->state = RT_ARENA_CLOSED;

	struct rt_reader *rd = b_read(&b);
	CHECK(rd != NULL);
	if (rd) {
		CHECK(rd->long_records);
		CHECK(rt_site_lookup(&rd->sites, s3) && rt_site_lookup(&rd->sites, s16));
		CHECK(!rt_site_lookup(&rd->sites, bad_len));
		CHECK(!rt_site_lookup(&rd->sites, bad_code));
		const struct rt_reader_thread *t = thread_of(rd, 100);
		CHECK(t != NULL);
		unsigned logs = 0, damaged_msgs = 0;
		for (size_t i = 0; t && i < t->item_count; i++) {
			const struct rt_item *it = &items_of(rd, t)[i];
			if (it->kind != RT_ITEM_LOG)
				continue;
			char msg[8192];
			int damaged = render_item(rd, it, msg, sizeof(msg));
			logs++;
			if (it->counter == START_COUNTER + 200) {
				char want[256];
				snprintf(want, sizeof(want), "request %d from %s took %.1f us", 42,
					 "alice", 17.25);
				CHECK_STR(msg, want);
				CHECK(damaged == 0);
			} else if (it->counter == START_COUNTER + 500) {
				CHECK_STR(msg, expect16);
				CHECK(damaged == 0);
				CHECK_EQ(it->log.nslots, RT_LOG_SLOTS(n16));
			} else if (it->counter == START_COUNTER + 600) {
				CHECK(damaged == 1);
				CHECK(strstr(msg, RT_LOG_DAMAGED_MARK) != NULL);
				damaged_msgs++;
			}
		}
		CHECK_EQ(logs, 3);
		CHECK_EQ(damaged_msgs, 1);
		/* the two records of unusable sites: damaged, never events */
		CHECK(t && t->counts.damaged == 2);
		CHECK(t && t->counts.present == 3 + 82);
		char *text = NULL, *json = NULL;
		uint64_t marked[2] = {0, 0};
		if (t)
			print_both(rd, t, &text, &json, marked);
		CHECK_EQ(marked[0], 1);
		CHECK_EQ(marked[1], 1);
		/* the message stands where an event's tag does */
		CHECK(text &&
		      strstr(text, " : INFO request 42 from alice took 17.2 us (app.c:88)\n"));
		CHECK(text && strstr(text, " : WARN 1000 -5 xxxx"));
		CHECK(json && strstr(json, "{\"kind\":\"log\",\"ts_ns\":200,\"tid\":100,"));
		CHECK(json &&
		      strstr(json, "\"level\":\"info\",\"msg\":\"request 42 from alice took "
				   "17.2 us\",\"format\":\"request %d from %s took %.1f "
				   "us\",\"file\":\"src/app.c\",\"line\":88,\"func\":"
				   "\"handle\"}\n"));
		CHECK(json && strstr(json, "\"damaged\":true"));
		free(text);
		free(json);
		rt_reader_close(rd);
	}

	/* the big record across the ring's end (slots 121..140 of 128) */
	for (unsigned i = 0; i < 10; i++)
		b_event(&b, 0, trace, 1, START_COUNTER + 900 + i, i, 0, 0, 0, 0, 0);
	CHECK_EQ(b_ring(&b, 0)->head, 121);
	b_log(&b, 0, s16, START_COUNTER + 1000, bytes16, n16);
	rd = b_read(&b);
	if (rd) {
		const struct rt_reader_thread *t = thread_of(rd, 100);
		int found = 0;
		for (size_t i = 0; t && i < t->item_count; i++) {
			if (items_of(rd, t)[i].counter != START_COUNTER + 1000)
				continue;
			char msg[8192];
			CHECK(render_item(rd, &items_of(rd, t)[i], msg, sizeof(msg)) == 0);
			CHECK_STR(msg, expect16);
			found = 1;
		}
		CHECK(found);
		/* what the ring lost to wrapping is overwritten, not damaged */
		CHECK(t && t->counts.damaged == 2);
		CHECK(t && t->counts.overwritten > 0);
		rt_reader_close(rd);
	}

	/* a continuation slot with a wrong index: the record is damage, not an event */
	struct rt_ring_desc *d = b_ring(&b, 0);
	memset(&p, 0, sizeof(p));
	p_u64(&p, 5);
	p_string(&p, "carol", 0);
	p_double(&p, 2.0);
	n3 = p_bytes(&p, bytes);
	uint64_t at = d->head;
	b_log(&b, 0, s3, START_COUNTER + 2000, bytes, n3);
	b_slot(&b, 0, at + 2)->cont.index = 1;
	b_event(&b, 0, trace, 1, START_COUNTER + 2100, 1, 0, 0, 0, 0, 0);
	rd = b_read(&b);
	if (rd) {
		const struct rt_reader_thread *t = thread_of(rd, 100);
		int found = 0;
		for (size_t i = 0; t && i < t->item_count; i++)
			found |= items_of(rd, t)[i].counter == START_COUNTER + 2000;
		CHECK(!found);
		CHECK(t && t->counts.damaged == 3);
		rt_reader_close(rd);
	}
	/* a dead writer inside a long record: torn, one record */
	at = d->head;
	b_log(&b, 0, s16, START_COUNTER + 3000, bytes16, n16);
	d->head = at;
	d->records--;
	rd = b_read(&b);
	if (rd) {
		const struct rt_reader_thread *t = thread_of(rd, 100);
		CHECK(t && t->counts.torn == 1);
		rt_reader_close(rd);
	}
	b_free(&b);

	/* a record longer than its site's arguments can make it: damage, not a message */
	b_init(&b, &small_flight);
	const uint8_t t1[1] = {RT_ARG_SIGNED | 4};
	uint32_t s1 = b_log_site(&b, "one %d", 5, RT_LOG_ERROR, 1, t1, 1);
	uint32_t tick = b_site(&b, "tick", "src/app.c", "main", 10, 1, NULL);
	b_thread(&b, 200, "one", 0);
	memset(bytes, 0, sizeof(bytes));
	bytes[0] = 9;
	b_log(&b, 0, s1, START_COUNTER + 10, bytes, 8);
	b_log(&b, 0, s1, START_COUNTER + 20, bytes, 32); /* two slots: one is all it takes */
	b_event(&b, 0, tick, 1, START_COUNTER + 30, 1, 0, 0, 0, 0, 0);
	b.h->state = RT_ARENA_CLOSED;
	rd = b_read(&b);
	if (rd) {
		const struct rt_reader_thread *t = thread_of(rd, 200);
		CHECK(t && t->counts.present == 2 && t->counts.damaged == 1);
		CHECK(t && t->item_count >= 1 && items_of(rd, t)[0].kind == RT_ITEM_LOG);
		rt_reader_close(rd);
	}
	b_free(&b);
}

/* ---- file I/O records ---------------------------------------------------- */

/* The I/O interposer's one site. */
/* ---- following a live arena (read/arena_follow.h) ----------------------- */

/* Message "m N" of thread ring's at counter START_COUNTER + at. */
static void b_numbered_log(struct builder *b, uint32_t ring, uint32_t site, uint64_t at, int n)
{
	unsigned char bytes[RT_LOG_PAYLOAD_MAX];
	struct payload p;
	memset(&p, 0, sizeof(p));
	p_u64(&p, (uint64_t)(int64_t)n);
	b_log(b, ring, site, START_COUNTER + at, bytes, p_bytes(&p, bytes));
}

/* An arena of small rings with the site of b_numbered_log's messages: its index. */
static uint32_t b_numbered_arena(struct builder *b)
{
	b_init(b, &small_flight);
	const uint8_t types[1] = {RT_ARG_SIGNED | 4};
	return b_log_site(b, "m %d", 7, RT_LOG_INFO, 1, types, 1);
}

/* The messages of the follower's last batch: "tid:at" of each, in its order. */
static const char *batch_order(const struct rt_follower *f)
{
	static char text[512];
	size_t n = 0;
	text[0] = 0;
	for (size_t i = 0; i < f->batch.count && n < sizeof(text) - 32; i++) {
		const struct rt_item *it = &f->batch.items[i];
		if (it->kind == RT_ITEM_LOG)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%d:%llu", n ? " " : "",
					      (int)it->tid,
					      (unsigned long long)(it->counter - START_COUNTER));
	}
	return text;
}

/*
 * A thread whose clock steps back keeps its own order: its message is put
 * at its latest time so far, in the poll that takes it and across polls;
 * `log -f` prints what `log` prints of the same arena.
 */
static void test_follow_clock_backwards(void)
{
	struct builder b;
	uint32_t site = b_numbered_arena(&b);
	b_thread(&b, 100, "a", 0);
	b_thread(&b, 200, "b", 1);
	b_numbered_log(&b, 0, site, 100, 1);
	b_numbered_log(&b, 0, site, 300, 2);
	b_numbered_log(&b, 1, site, 250, 3);

	struct rt_reader *rd;
	struct rt_read_error error;
	CHECK(rt_reader_open_live_memory(b.mem, b.size, "live", &rd, &error) == 0);
	struct rt_follower f;
	CHECK(rt_follower_init(&f, rd) == 0);
	CHECK(rt_follower_poll(&f, &error) == 0);
	CHECK_STR(batch_order(&f), "100:100 200:250 100:300");
	rt_follower_forget(&f);
	/* thread a's clock steps back from 300 to 200: after its 300, before b's 350 */
	b_numbered_log(&b, 0, site, 200, 4);
	b_numbered_log(&b, 0, site, 400, 5);
	b_numbered_log(&b, 1, site, 350, 6);
	CHECK(rt_follower_poll(&f, &error) == 0);
	CHECK_STR(batch_order(&f), "100:200 200:350 100:400");
	rt_follower_forget(&f);
	CHECK(rt_follower_poll(&f, &error) == 0);
	CHECK(f.batch.count == 0);
	rt_follower_free(&f);
	rt_reader_close(rd);

	/* one poll over all of it: the order `log` merges the threads in */
	b.h->state = RT_ARENA_CLOSED;
	write_bytes(arena_path(), b.mem, b.size);
	int status;
	char followed[4096];
	const char *follow_argv[] = {"ringtrace", "log", "-f", arena_path(), NULL};
	snprintf(followed, sizeof(followed), "%s", run_tool(&status, 4, follow_argv));
	CHECK(status == RT_EXIT_OK);
	const char *log_argv[] = {"ringtrace", "log", arena_path(), NULL};
	CHECK_STR(followed, run_tool(&status, 3, log_argv));
	CHECK(status == RT_EXIT_OK);
	const char *messages = followed;
	char order[64] = "";
	size_t n = 0;
	while ((messages = strstr(messages, " m ")) != NULL && n < sizeof(order) - 2) {
		order[n++] = messages[3];
		messages += 3;
	}
	order[n] = 0;
	CHECK_STR(order, "132465");
	b_free(&b);
}

/*
 * The arena tail and log -f follow is opened once, when it is chosen: its
 * name removed then (a recording removes the arena it collected as its
 * program ends), the reader still reads what the program writes into it.
 */
static void test_follow_removed_arena(void)
{
	struct builder b;
	uint32_t site = b_numbered_arena(&b);
	b_thread(&b, 100, "a", 0);
	b_numbered_log(&b, 0, site, 100, 1);
	write_bytes(arena_path(), b.mem, b.size);
	/* the program's side: the file it goes on writing into, by another descriptor */
	int writer = open(arena_path(), O_RDWR);
	CHECK(writer >= 0);

	struct rt_reader *rd = NULL;
	char *path = rt_cmd_follow_target("tail", arena_path(), &rd);
	CHECK(path != NULL && rd != NULL);
	CHECK(unlink(arena_path()) == 0);
	if (path && rd) {
		struct rt_read_error error;
		struct rt_follower f;
		CHECK(rt_follower_init(&f, rd) == 0);
		CHECK(rt_follower_poll(&f, &error) == 0);
		CHECK_STR(batch_order(&f), "100:100");
		rt_follower_forget(&f);
		b_numbered_log(&b, 0, site, 200, 2);
		CHECK(pwrite(writer, b.mem, b.size, 0) == (ssize_t)b.size);
		CHECK(rt_follower_poll(&f, &error) == 0);
		CHECK_STR(batch_order(&f), "100:200");
		rt_follower_free(&f);
		rt_reader_close(rd);
	}
	free(path);
	close(writer);

	/* a descriptor that is no arena: refused, and closed */
	int fd = open("/dev/null", O_RDONLY);
	struct rt_read_error error;
	CHECK(fd >= 0 && rt_reader_open_live_fd(fd, "/dev/null", &rd, &error) == -EINVAL);
	CHECK(fcntl(fd, F_GETFD) == -1 && errno == EBADF);
	/* a path that names nothing: said, no reader */
	CHECK(rt_cmd_follow_target("tail", arena_path(), &rd) == NULL);
	b_free(&b);
}

static uint32_t b_io_site(struct builder *b)
{
	uint32_t index = b_site(b, "FileIO", "<io>", "<io>", 0, 0, NULL);
	struct rt_site_entry *e =
	    (struct rt_site_entry *)(b->mem + b->h->site_table_offset) + index;
	e->kind = RT_SITE_IO;
	return index;
}

static void b_io(struct builder *b, uint32_t ring, uint32_t site, uint64_t counter,
		 const struct tio *call, unsigned char *payload, size_t *length)
{
	*length = tio_payload(call, payload);
	b_payload_record(b, ring, RT_REC_IO, site, counter, payload, *length);
}

static struct rt_fd_entry *b_fd(struct builder *b, uint32_t fd, uint32_t state, uint8_t op,
				uint64_t counter, const char *name)
{
	struct rt_fd_entry *e = (struct rt_fd_entry *)(b->mem + b->h->fd_table_offset) + fd;
	e->state = state;
	e->op = op;
	e->counter = counter;
	e->closed_counter = state == RT_FD_CLOSED ? counter + 50 : 0;
	e->open_flags = 02;
	e->name_length = (uint16_t)strlen(name);
	memcpy(e->name, name, e->name_length);
	e->sequence = 2;
	return e;
}

static const struct rt_fd_seed *seed_of(const struct rt_reader *rd, int32_t fd)
{
	for (uint32_t i = 0; i < rd->fds.count; i++)
		if (rd->fds.items[i].fd == fd)
			return &rd->fds.items[i];
	return NULL;
}

/* The descriptor table: whole, checking entries only; the header's layout stays tight. */
static void test_fd_table(void)
{
	struct builder b;
	const struct spec spec = {RT_MODE_FLIGHT, 1u << 14, 2, 4, 8, 4096, 16};
	b_init(&b, &spec);
	b_io_site(&b);
	b_thread(&b, 400, "main", 0);
	b_fd(&b, 0, RT_FD_OPEN, RT_IO_RUNDOWN, 0, "/dev/pts/0");
	b_fd(&b, 3, RT_FD_OPEN, RT_IO_OPEN, START_COUNTER + 100, "/etc/hosts");
	b_fd(&b, 4, RT_FD_OPEN, RT_IO_OPEN, START_COUNTER + 110, "/tmp/half")->sequence = 3;
	b_fd(&b, 5, RT_FD_CLOSED, RT_IO_OPEN, START_COUNTER + 120, "/tmp/gone");
	b_fd(&b, 6, RT_FD_OPEN, RT_IO_OPEN, START_COUNTER + 130, "/tmp/long")->name_length =
	    RT_FD_NAME_MAX;
	b_fd(&b, 7, RT_FD_OPEN, RT_IO_OPEN, START_COUNTER + 140, "/tmp/nul")->name[2] = 0;
	b_fd(&b, 8, RT_FD_OPEN, 0, START_COUNTER + 150, "/tmp/no-op");
	b.h->state = RT_ARENA_CLOSED;
	struct rt_reader *rd = b_read(&b);
	CHECK(rd != NULL);
	if (rd) {
		CHECK_EQ(rd->damage.count, 0);
		CHECK_EQ(rd->fds.count, 3);
		CHECK_EQ(rd->fds.skipped, 4);
		const struct rt_fd_seed *f0 = seed_of(rd, 0), *f3 = seed_of(rd, 3),
					*f5 = seed_of(rd, 5);
		CHECK(f0 && f0->counter == 0 && f0->op == RT_IO_RUNDOWN &&
		      strcmp(f0->name, "/dev/pts/0") == 0);
		CHECK(f3 && f3->state == RT_FD_OPEN && f3->counter == START_COUNTER + 100 &&
		      f3->name_length == 10 && strcmp(f3->name, "/etc/hosts") == 0);
		CHECK(f5 && f5->state == RT_FD_CLOSED && f5->closed_counter == START_COUNTER + 170);
		rt_reader_close(rd);
	}
	/* a table that does not fit the arena: refused by the layout check... */
	const struct rt_arena_header saved = *b.h;
	b.h->fd_capacity = RT_FD_CAPACITY_MAX + 1;
	struct rt_arena_header h;
	struct rt_layout_error why;
	CHECK(rt_layout_check(b.mem, b.size, &h, &why) != 0);
	/* ...and repaired from its neighbours, as a damaged offset is */
	for (int which = 0; which < 2; which++) {
		*b.h = saved;
		if (which)
			b.h->fd_table_offset = 1ull << 40;
		else
			b.h->fd_capacity = 0xffff;
		rd = b_read(&b);
		CHECK(rd != NULL);
		if (rd) {
			CHECK(rd->damage.count >= 1);
			CHECK_EQ(rd->header.fd_capacity, 16);
			CHECK_EQ(rd->header.fd_table_offset, saved.fd_table_offset);
			CHECK_EQ(rd->fds.count, 3);
			rt_reader_close(rd);
		}
	}
	b_free(&b);
}

/* RT_REC_IO records read like log records: whole payloads, only of the I/O site. */
static void test_io_records(void)
{
	struct builder b;
	const struct spec spec = {RT_MODE_FLIGHT, 1u << 14, 2, 4, 8, 4096, 0};
	b_init(&b, &spec);
	uint32_t io = b_io_site(&b);
	uint32_t tick = b_site(&b, "tick", "src/app.c", "main", 10, 1, NULL);
	b_thread(&b, 300, "main", 0);
	unsigned char p1[RT_LOG_PAYLOAD_MAX], p2[RT_LOG_PAYLOAD_MAX], junk[RT_LOG_PAYLOAD_MAX];
	size_t n1, n2, nj;
	const struct tio open_call = {.op = RT_IO_OPEN,
				      .flags = RT_IO_F_AUX,
				      .fd = -1,
				      .start = START_COUNTER + 90,
				      .result = 3,
				      .path = "/etc/hosts"};
	const struct tio read_call = {
	    .op = RT_IO_READ, .fd = 3, .start = START_COUNTER + 150, .size = 4096, .result = 516};
	b_io(&b, 0, io, START_COUNTER + 100, &open_call, p1, &n1);
	b_io(&b, 0, io, START_COUNTER + 200, &read_call, p2, &n2);
	/* an I/O record of a trace site, and a log-kind record of the I/O site: not events */
	b_io(&b, 0, tick, START_COUNTER + 300, &read_call, junk, &nj);
	b_payload_record(&b, 0, RT_REC_LOG, io, START_COUNTER + 310, junk, nj);
	b_event(&b, 0, tick, 1, START_COUNTER + 400, 7, 0, 0, 0, 0, 0);
	b.h->state = RT_ARENA_CLOSED;

	struct rt_reader *rd = b_read(&b);
	CHECK(rd != NULL);
	if (rd) {
		CHECK(rd->long_records);
		CHECK_EQ(rd->max_slots, RT_LOG_MAX_SLOTS);
		const struct rt_reader_thread *t = thread_of(rd, 300);
		CHECK(t != NULL);
		unsigned ios = 0;
		for (size_t i = 0; t && i < t->item_count; i++) {
			const struct rt_item *it = &items_of(rd, t)[i];
			if (it->kind != RT_ITEM_IO)
				continue;
			CHECK(rt_item_kind_is_event(it->kind));
			const unsigned char *want = ios == 0 ? p1 : p2;
			size_t n = ios == 0 ? n1 : n2;
			CHECK_EQ(it->log.nslots, RT_LOG_SLOTS(n));
			CHECK_EQ(it->log.length, RT_LOG_PAYLOAD_BYTES(it->log.nslots));
			CHECK(it->log.payload && memcmp(it->log.payload, want, n) == 0);
			ios++;
		}
		CHECK_EQ(ios, 2);
		CHECK(t && t->counts.present == 3 && t->counts.damaged == 2);
		rt_reader_close(rd);
	}
	b_free(&b);
}

/*
 * The collector writes the descriptor table's open entries as an FDS
 * rundown at the head of its file; the trace set gives them as the
 * source's seeds, and the I/O records come through whole.
 */
static void test_collect_fds(void)
{
	struct builder b;
	const struct spec spec = {RT_MODE_FLIGHT, 1u << 14, 2, 4, 8, 4096, 16};
	b_init(&b, &spec);
	uint32_t io = b_io_site(&b);
	b_thread(&b, 600, "main", 0);
	b_fd(&b, 0, RT_FD_OPEN, RT_IO_RUNDOWN, 0, "/dev/pts/0");
	b_fd(&b, 3, RT_FD_OPEN, RT_IO_OPEN, START_COUNTER + 10, "/etc/hosts");
	b_fd(&b, 4, RT_FD_CLOSED, RT_IO_OPEN, START_COUNTER + 20, "/tmp/gone");
	b_fd(&b, 5, RT_FD_OPEN, RT_IO_OPEN, START_COUNTER + 30, "/tmp/half")->sequence = 5;
	unsigned char p[RT_LOG_PAYLOAD_MAX];
	size_t n;
	const struct tio c = {
	    .op = RT_IO_READ, .fd = 3, .start = START_COUNTER + 40, .size = 8, .result = 8};
	b_io(&b, 0, io, START_COUNTER + 50, &c, p, &n);
	b.h->state = RT_ARENA_CLOSED;
	write_bytes(arena_path(), b.mem, b.size);

	char out[80];
	snprintf(out, sizeof(out), "/tmp/test_reader.%d.rt", (int)getpid());
	struct rt_trace_writer_options o = {.path = out};
	struct rt_collector *col = NULL;
	char message[512];
	CHECK(rt_collector_open(&col, &o, message, sizeof(message)) == 0);
	if (col) {
		CHECK(rt_collector_attach(col, arena_path(), 0, message, sizeof(message)) == 0);
		CHECK(rt_collector_poll(col, message, sizeof(message)) >= 0);
		CHECK(rt_collector_close(col, NULL, message, sizeof(message)) == 0);
	}
	char *paths[1] = {out};
	struct rt_trace_set *set = NULL;
	CHECK(rt_trace_set_open(paths, 1, &set, message, sizeof(message)) == 0);
	const struct rt_reader *rd = NULL;
	for (size_t i = 0; set && i < set->source_count; i++)
		if (set->sources[i].reader->header.pid == b.h->pid)
			rd = set->sources[i].reader;
	CHECK(rd != NULL);
	if (rd) {
		/* open entries only: the closed one and the half-written one are not */
		CHECK_EQ(rd->fds.count, 2);
		CHECK(seed_of(rd, 0) && strcmp(seed_of(rd, 0)->name, "/dev/pts/0") == 0);
		CHECK(seed_of(rd, 3) && strcmp(seed_of(rd, 3)->name, "/etc/hosts") == 0 &&
		      seed_of(rd, 3)->counter == START_COUNTER + 10);
	}
	unsigned ios = 0;
	if (set && rt_trace_set_start(set, 0) == 0) {
		const struct rt_item *it;
		uint32_t source;
		while ((it = rt_trace_set_next(set, &source)) != NULL)
			ios += it->kind == RT_ITEM_IO && it->log.payload &&
			       memcmp(it->log.payload, p, n) == 0;
	}
	CHECK_EQ(ios, 1);
	rt_trace_set_close(set);
	unlink(out);
	b_free(&b);
}

/* dump and dump --json of I/O calls: names by time, seeds, errors, a malformed record. */
static void test_io_output(void)
{
	struct builder b;
	const struct spec spec = {RT_MODE_FLIGHT, 1u << 14, 2, 4, 8, 4096, 16};
	b_init(&b, &spec);
	uint32_t io = b_io_site(&b);
	b_thread(&b, 500, "main", 0);
	b_fd(&b, 0, RT_FD_OPEN, RT_IO_RUNDOWN, 0, "/dev/pts/0");
	unsigned char p[RT_LOG_PAYLOAD_MAX];
	size_t n;
	const uint64_t t0 = START_COUNTER + 1000;
	struct tio c = {.op = RT_IO_OPEN,
			.flags = RT_IO_F_AUX,
			.fd = -1,
			.start = t0,
			.result = 3,
			.aux = {O_RDONLY | O_CLOEXEC, 0},
			.path = "/etc/hosts"};
	b_io(&b, 0, io, t0 + 10, &c, p, &n);
	c = (struct tio){.op = RT_IO_READ, .fd = 3, .start = t0 + 20, .size = 4096, .result = 516};
	b_io(&b, 0, io, t0 + 70, &c, p, &n);
	c = (struct tio){.op = RT_IO_READ, .fd = 7, .start = t0 + 80, .size = 1, .result = 1};
	b_io(&b, 0, io, t0 + 90, &c, p, &n);
	c = (struct tio){.op = RT_IO_READ, .fd = 0, .start = t0 + 91, .size = 1, .result = 1};
	b_io(&b, 0, io, t0 + 92, &c, p, &n);
	c = (struct tio){.op = RT_IO_OPEN,
			 .flags = RT_IO_F_AUX,
			 .fd = -1,
			 .start = t0 + 100,
			 .result = -ENOENT,
			 .path = "/nope"};
	b_io(&b, 0, io, t0 + 2100, &c, p, &n);
	c = (struct tio){.op = RT_IO_CLOSE, .fd = 3, .start = t0 + 3000, .result = 0};
	b_io(&b, 0, io, t0 + 3010, &c, p, &n);
	c = (struct tio){
	    .op = RT_IO_RENAME, .fd = -1, .start = t0 + 4000, .path = "/a", .path2 = "/b"};
	b_io(&b, 0, io, t0 + 4010, &c, p, &n);
	c = (struct tio){.op = RT_IO_FSYNC, .fd = 3, .start = t0 + 5000};
	n = tio_payload(&c, p);
	p[0] = 0x7f; /* no such operation */
	b_payload_record(&b, 0, RT_REC_IO, io, t0 + 5010, p, n);
	b.h->state = RT_ARENA_CLOSED;
	write_bytes(arena_path(), b.mem, b.size);

	int status;
	const char *dump[] = {"ringtrace", "dump", arena_path()};
	const char *text = run_tool(&status, 3, dump);
	CHECK_EQ(status, RT_EXIT_DAMAGED);
	CHECK(strstr(text, ": FileIO/Open '/etc/hosts' O_RDONLY|O_CLOEXEC -> fd 3 10ns\n"));
	CHECK(strstr(text, ": FileIO/Read fd 3 '/etc/hosts' pos=0x0 516/4096b 50ns\n"));
	CHECK(strstr(text, ": FileIO/Read fd 7 '?' (unseen) 1b 10ns\n"));
	CHECK(strstr(text, ": FileIO/Read fd 0 '/dev/pts/0' 1b 1ns\n"));
	CHECK(strstr(text, ": FileIO/Open '/nope' O_RDONLY ENOENT 2.0us\n"));
	CHECK(strstr(text, ": FileIO/Close fd 3 '/etc/hosts' 10ns\n"));
	CHECK(strstr(text, ": FileIO/Rename '/a' -> '/b' 10ns\n"));
	CHECK(strstr(text, ": FileIO/? malformed io record (unknown operation)\n"));
	if (getenv("SHOW_IO"))
		fprintf(stderr, "%s", text);

	const char *json[] = {"ringtrace", "dump", "--json", arena_path()};
	text = run_tool(&status, 4, json);
	CHECK_EQ(status, RT_EXIT_DAMAGED);
	CHECK(strstr(text, "\"op\":\"read\",\"fd\":3,\"path\":\"/etc/hosts\",\"offset\":0,"
			   "\"offset_derived\":true,\"size\":4096,\"result\":516,\"errno\":0,"
			   "\"dur_ns\":50}\n"));
	CHECK(strstr(text, "\"op\":\"read\",\"fd\":7,\"path_unknown\":true,\"path_why\":"
			   "\"unseen\","));
	CHECK(strstr(text, "\"op\":\"open\",\"path\":\"/nope\",\"aux\":[0,0],\"size\":0,"
			   "\"result\":-2,\"errno\":2,\"error\":\"ENOENT\",\"dur_ns\":2000}"));
	CHECK(strstr(text, "\"op\":\"rename\",\"path\":\"/a\",\"path2\":\"/b\""));
	CHECK(strstr(text, "{\"kind\":\"io\",") && strstr(text, "\"malformed\":true"));
	if (getenv("SHOW_IO"))
		fprintf(stderr, "%s", text);
	b_free(&b);
}

/*
 * A ring whose slots do not start on page boundaries (a crafted header can
 * say so) in a file with a hole: the slot that starts in data and ends in
 * the hole is not held, and the next slot held is the first whole one after
 * the hole; a walk asking for it from the cut slot once went nowhere.
 */
static void test_view_across_hole(void)
{
	char path[] = "/tmp/ringtrace-hole-XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	unlink(path);
	unsigned char page[4096];
	memset(page, 0x11, sizeof(page));
	int written = pwrite(fd, page, sizeof(page), 0) == (ssize_t)sizeof(page) &&
		      pwrite(fd, page, sizeof(page), 8192) == (ssize_t)sizeof(page);
	CHECK(written);
	/* [4096, 8192) was never written: a hole, where the file system keeps one */
	if (!written || lseek(fd, 0, SEEK_HOLE) != 4096) {
		close(fd);
		return;
	}
	struct rt_file_data data;
	rt_file_data_init(&data, fd);
	/* slot k is [56 + k * RT_SLOT_SIZE, 56 + (k + 1) * RT_SLOT_SIZE) */
	const uint64_t offset = 56, cut = (4096 - offset) / RT_SLOT_SIZE;
	const uint64_t after = (8192 - offset + RT_SLOT_SIZE - 1) / RT_SLOT_SIZE;
	struct rt_ring_view v = {.slots = NULL,
				 .ring_slots = 1024,
				 .readable = (12288 - offset) / RT_SLOT_SIZE,
				 .data = &data,
				 .offset = offset};
	CHECK(offset + cut * RT_SLOT_SIZE < 4096 && offset + (cut + 1) * RT_SLOT_SIZE > 4096);
	CHECK(rt_ring_view_has_slow(&v, cut - 1));
	CHECK(!rt_ring_view_has_slow(&v, cut));
	CHECK_EQ(rt_ring_view_next(&v, cut - 1), cut - 1);
	/* from the cut slot and from inside the hole: the first whole slot after it */
	CHECK_EQ(rt_ring_view_next(&v, cut), after);
	CHECK_EQ(rt_ring_view_next(&v, cut + 1), after);
	CHECK(rt_ring_view_has_slow(&v, after));
	CHECK_EQ(rt_ring_view_next(&v, v.readable - 1), v.readable - 1);
	CHECK_EQ(rt_ring_view_next(&v, v.readable), v.readable);
	close(fd);
}

int main(void)
{
	test_parse();
	test_formatting();
	test_decimal_numbers();
	test_prefixed_numbers();
	test_timebase();
	test_basic_two_threads();
	test_output_lines();
	test_wraparound();
	test_ring_reuse();
	test_torn();
	test_stream_lost();
	test_global_losses();
	test_last_event_choice();
	test_damage();
	test_bad_headers();
	test_open_memory();
	test_mutations();
	test_log_records();
	test_follow_clock_backwards();
	test_follow_removed_arena();
	test_io_records();
	test_fd_table();
	test_io_output();
	test_collect_fds();
	test_view_across_hole();
	unlink(arena_path());
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
