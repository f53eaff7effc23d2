/*
 * test_collect.c - the collector and the trace writer against real arenas:
 * producer threads record known events (tests/lib/event_pattern.h) while
 * the collector drains them, and the files it wrote are walked block by
 * block (tests/lib/trace_walk.h) and every event accounted for.
 *
 * The library starts at most once per process, so every case runs in a
 * forked child.
 *
 *   test_collect [CASE]	(all cases without one)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "collect/collector.h"
#include "collect/trace_writer.h"
#include "format/crc32c.h"
#include "record/record.h"

#include "../lib/check.h"
#include "../lib/event_pattern.h"
#include "../lib/trace_walk.h"

#define MAX_THREADS 8
#define MAX_RINGS 8

static char dir[PATH_MAX];
/* the writer's background thread (set by the *_background cases) */
static int background;
static char out_path[PATH_MAX + 32];

/* ---- what a recording's files hold, from the walk ------------------------ */

struct tally {
	uint32_t threads;	    /* test threads */
	uint32_t events;	    /* per test thread */
	unsigned char *seen;	    /* threads x events flags */
	uint64_t present, repeated; /* pattern events found, found twice */
	uint64_t records;	    /* records in SLOTS blocks */
	uint64_t noted;		    /* counts of LOST records */
	uint64_t loss[4];	    /* LOSS blocks' counts by reason */
	uint64_t next[MAX_RINGS];   /* per ring: the record after the last one seen */
	int have_next[MAX_RINGS];
	uint64_t gaps;		     /* stream: blocks not contiguous with the one before */
	uint64_t covered[MAX_RINGS]; /* records in SLOTS plus records in LOSS (flight) */
	uint64_t no_ring[64];	     /* newest THREADS copy's lost_no_ring, by index */
	char tags[64][16];	     /* site tags from SITES blocks */
	int stream;
	int prev_final;		/* the block before was a RINGS block with RT_BLOCK_F_FINAL */
	uint64_t final_ends;	/* END blocks right after one */
	uint64_t final_entries; /* entries of those blocks for rings with records */
};

static void tally_block(void *context, const struct rt_block_header *h, const unsigned char *p)
{
	struct tally *t = context;
	if (h->type == RT_BLOCK_END)
		t->final_ends += t->prev_final;
	t->prev_final = h->type == RT_BLOCK_RINGS && (h->flags & RT_BLOCK_F_FINAL);
	if (h->type != RT_BLOCK_RINGS)
		CHECK_EQ(h->flags, 0);
	switch (h->type) {
	case RT_BLOCK_SITES:
		for (uint32_t k = 0, at = 0; k < h->count; k++) {
			struct rt_block_site s;
			memcpy(&s, p + at, sizeof(s));
			const char *text = (const char *)p + at + sizeof(s);
			if (CHECK(s.index < 64))
				snprintf(t->tags[s.index], sizeof(t->tags[0]), "%s",
					 text + s.entry.tag_offset);
			CHECK_EQ(text[s.entry.tag_offset + s.entry.tag_length], 0);
			at += s.size;
		}
		break;
	case RT_BLOCK_THREADS:
		for (uint32_t k = 0; k < h->count; k++) {
			struct rt_block_thread th;
			memcpy(&th, p + k * sizeof(th), sizeof(th));
			if (CHECK(th.index < 64))
				t->no_ring[th.index] = th.entry.lost_no_ring;
		}
		break;
	case RT_BLOCK_RINGS:
		for (uint32_t k = 0; k < h->count; k++) {
			struct rt_block_ring r;
			memcpy(&r, p + k * sizeof(r), sizeof(r));
			if (h->flags & RT_BLOCK_F_FINAL) {
				/* where the file ends: right after the ring's last record in it */
				if (r.index < MAX_RINGS && t->have_next[r.index]) {
					CHECK_EQ(r.record, t->next[r.index]);
					t->final_entries++;
				}
				continue;
			}
			/* a file's rings begin where the files before it stopped */
			if (r.index < MAX_RINGS && t->have_next[r.index] && t->stream)
				CHECK_EQ(r.record, t->next[r.index]);
		}
		break;
	case RT_BLOCK_LOSS:
		for (uint32_t k = 0; k < h->count; k++) {
			struct rt_block_loss l;
			memcpy(&l, p + k * sizeof(l), sizeof(l));
			if (!CHECK(l.reason >= 1 && l.reason <= 3))
				continue;
			t->loss[l.reason] += l.count;
			if (l.reason == 1 && CHECK(l.ring < MAX_RINGS)) {
				/* overwritten: exactly the records before the window, none twice */
				CHECK_EQ(l.first_record, t->next[l.ring]);
				t->next[l.ring] = l.first_record + l.count;
				t->have_next[l.ring] = 1;
				t->covered[l.ring] += l.count;
			}
		}
		break;
	case RT_BLOCK_SLOTS: {
		if (!CHECK(h->ring < MAX_RINGS))
			break;
		if (t->have_next[h->ring] && h->first_record != t->next[h->ring])
			t->gaps++;
		const union rt_slot *slots = (const union rt_slot *)p;
		uint32_t at = 0;
		for (uint32_t k = 0; k < h->count; k++) {
			struct rt_slot_head s = slots[at].head;
			CHECK_EQ(s.seq, (uint32_t)(h->first + at));
			CHECK_EQ(s.record, (uint32_t)(h->first_record + k));
			if (k == 0)
				CHECK_EQ(s.counter, h->counter_first);
			if (k + 1 == h->count)
				CHECK_EQ(s.counter, h->counter_last);
			struct rt_slot_cont c;
			memset(&c, 0, sizeof(c));
			if (s.nslots == 2)
				c = slots[at + 1].cont;
			if (s.kind == RT_REC_LOST) {
				t->noted += c.a4;
			} else if (CHECK(s.kind == RT_REC_TRACE) && CHECK(s.a0 < t->threads) &&
				   CHECK(s.a1 < t->events)) {
				uint32_t i = s.a1;
				const char *want = i % 4 == 2	? "pattern six"
						   : i % 4 == 3 ? "pattern two"
								: "pattern one";
				CHECK(s.site < 64 && strcmp(t->tags[s.site], want) == 0);
				if (i % 4 == 2) {
					CHECK_EQ(c.a2, ~i);
					CHECK_EQ(c.a4, (uint64_t)s.a0 << 32 | i);
				}
				unsigned char *f = &t->seen[(size_t)s.a0 * t->events + i];
				if (*f)
					t->repeated++;
				*f = 1;
				t->present++;
			}
			at += s.nslots;
		}
		CHECK_EQ(at * RT_SLOT_SIZE, h->size - RT_BLOCK_HEADER_SIZE);
		t->next[h->ring] = h->first_record + h->count;
		t->have_next[h->ring] = 1;
		t->covered[h->ring] += h->count;
		t->records += h->count;
		break;
	}
	}
}

static void tally_init(struct tally *t, uint32_t threads, uint32_t events, int stream)
{
	memset(t, 0, sizeof(*t));
	t->threads = threads;
	t->events = events;
	t->stream = stream;
	t->seen = calloc((size_t)threads * events, 1);
}

static uint64_t tally_no_ring(const struct tally *t)
{
	uint64_t n = 0;
	for (int i = 0; i < 64; i++)
		n += t->no_ring[i];
	return n;
}

/* ---- producers and a collector thread ------------------------------------- */

struct producers {
	pthread_t thread[MAX_THREADS];
	uint32_t count, events;
	pthread_barrier_t start;
	const uint64_t *passes; /* a collector thread's passes: wait for it now and then */
};

/*
 * Events a producer emits before it waits for two passes of the collector
 * thread: the rings still overflow (a batch is far larger than a 4 KiB
 * ring), but every batch leaves whole rings in the files however slow the
 * machine, so what the files hold does not depend on the scheduler.
 */
#define PRODUCER_BATCH 1000u

struct producer_arg {
	struct producers *p;
	uint32_t t;
};
static struct producer_arg producer_args[MAX_THREADS];

static void *produce(void *arg)
{
	struct producer_arg *a = arg;
	pthread_barrier_wait(&a->p->start);
	for (uint32_t i = 0; i < a->p->events; i++) {
		pattern_emit(a->t, i);
		if (a->p->passes && i % PRODUCER_BATCH == PRODUCER_BATCH - 1) {
			uint64_t until = __atomic_load_n(a->p->passes, __ATOMIC_ACQUIRE) + 2;
			while (__atomic_load_n(a->p->passes, __ATOMIC_ACQUIRE) < until)
				sched_yield();
		}
	}
	return NULL;
}

static void producers_start(struct producers *p, uint32_t count, uint32_t events)
{
	p->count = count;
	p->events = events;
	pthread_barrier_init(&p->start, NULL, count);
	for (uint32_t t = 0; t < count; t++) {
		producer_args[t].p = p;
		producer_args[t].t = t;
		pthread_create(&p->thread[t], NULL, produce, &producer_args[t]);
	}
}

static void producers_join(struct producers *p)
{
	for (uint32_t t = 0; t < p->count; t++)
		pthread_join(p->thread[t], NULL);
	pthread_barrier_destroy(&p->start);
}

struct polling {
	struct rt_collector *c;
	int stop;
	int64_t failed;
	uint64_t passes;
};

static void *poll_loop(void *arg)
{
	struct polling *pl = arg;
	char message[512];
	while (!__atomic_load_n(&pl->stop, __ATOMIC_ACQUIRE)) {
		int64_t n = rt_collector_poll(pl->c, message, sizeof(message));
		__atomic_fetch_add(&pl->passes, 1, __ATOMIC_RELEASE);
		if (n < 0) {
			pl->failed = n;
			fprintf(stderr, "poll: %s\n", message);
			break;
		}
		/* a sleep may last milliseconds on a busy machine: yield instead */
		if (n < 100)
			sched_yield();
	}
	return NULL;
}

static void start_arena(int mode, uint64_t buffer, uint32_t rings)
{
	char arena[PATH_MAX + 32];
	snprintf(arena, sizeof(arena), "%s/test.arena", dir);
	struct ringtrace_options o = {.size = sizeof(o),
				      .arena_path = strdup(arena),
				      .buffer_bytes = buffer,
				      .mode = mode,
				      .rings = rings};
	if (ringtrace_init(&o) != 0) {
		check_fail(__FILE__, __LINE__, "ringtrace_init failed");
		exit(1);
	}
}

static struct rt_collector *collector_open(uint64_t max_size, uint32_t max_files)
{
	struct rt_trace_writer_options o = {.path = out_path,
					    .max_size = max_size,
					    .max_files = max_files,
					    .background = background};
	struct rt_collector *c = NULL;
	char message[512];
	int rc = rt_collector_open(&c, &o, message, sizeof(message));
	if (rc) {
		check_fail(__FILE__, __LINE__, "open: %s", message);
		exit(1);
	}
	rc = rt_collector_attach(c, ringtrace_arena_path(), 0, message, sizeof(message));
	if (!CHECK(rc == 0))
		fprintf(stderr, "attach: %s\n", message);
	return c;
}

/* The rotated files OUT.NNNNNN, sorted: their count, names in names[]. */
static int list_rotated(char names[][PATH_MAX + 300], int max)
{
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);
	int found = 0;
	for (int i = 0; i < n; i++) {
		if (strncmp(list[i]->d_name, "out.rt.", 7) == 0 && found < max)
			snprintf(names[found++], PATH_MAX + 300, "%s/%s", dir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return found;
}

/* ---- cases --------------------------------------------------------------- */

/* Bitwise CRC-32C: the definition, to hold the fast versions to. */
static uint32_t crc_reference(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

static void case_crc(void)
{
	CHECK_EQ(rt_crc32c(0, "123456789", 9), 0xe3069283u);
	CHECK_EQ(rt_crc32c(0, "", 0), 0);
	unsigned char buffer[4200];
	srand(7);
	for (size_t i = 0; i < sizeof(buffer); i++)
		buffer[i] = (unsigned char)rand();
	/*
	 * Every length at every alignment: the hardware path runs three
	 * interleaved streams on rounds of 768 bytes and a single one on the
	 * rest, so each length exercises a different split.  The reference
	 * grows one byte at a time, so checking every prefix costs one pass.
	 */
	for (size_t start = 0; start < 9; start++) {
		uint32_t reference = 0xffffffffu;
		size_t failures = 0;
		for (size_t n = 0; n + start <= sizeof(buffer); n++) {
			if (rt_crc32c(0, buffer + start, n) != ~reference)
				failures++;
			if (n + start < sizeof(buffer)) {
				reference ^= buffer[start + n];
				for (int k = 0; k < 8; k++)
					reference = (reference >> 1) ^
						    (0x82f63b78u & (0u - (reference & 1)));
			}
		}
		CHECK_EQ(failures, 0);
		CHECK_EQ(rt_crc32c(0, buffer + start, 4000), crc_reference(buffer + start, 4000));
	}
	/* continuing a CRC equals computing it at once */
	CHECK_EQ(rt_crc32c(rt_crc32c(0, buffer, 1000), buffer + 1000, 3000),
		 rt_crc32c(0, buffer, 4000));
}

/* A rundown of one marker block, so files can be told to start with it. */
static int marker_rundown(void *context, struct rt_trace_writer *w)
{
	(*(int *)context)++;
	struct rt_block_header *h = rt_trace_writer_block(w);
	if (!h)
		return -EIO;
	h->type = RT_BLOCK_RINGS;
	return rt_trace_writer_commit(w, RT_BLOCK_HEADER_SIZE);
}

/* Fill a SLOTS block of n one-slot records starting at record seq. */
static int fake_slots(struct rt_trace_writer *w, uint64_t seq, uint32_t n)
{
	struct rt_block_header *h = rt_trace_writer_block(w);
	if (!h)
		return rt_trace_writer_flush(w); /* the writer's failure */
	union rt_slot *s = (union rt_slot *)(h + 1);
	for (uint32_t i = 0; i < n; i++) {
		s[i].head.seq = (uint32_t)(seq + i);
		s[i].head.kind = RT_REC_TRACE;
		s[i].head.nslots = 1;
		s[i].head.record = (uint32_t)(seq + i);
	}
	h->type = RT_BLOCK_SLOTS;
	h->count = n;
	h->first = h->first_record = seq;
	return rt_trace_writer_commit(w, RT_BLOCK_HEADER_SIZE + n * RT_SLOT_SIZE);
}

static void case_writer(void)
{
	unsetenv("RINGTRACE_PACK");
	char message[512];
	struct rt_trace_writer *w;
	struct rt_trace_writer_options o = {.path = out_path, .background = background};
	int rundowns = 0;

	/* a file that is not a trace file is never overwritten */
	FILE *f = fopen(out_path, "w");
	fputs("precious notes\n", f);
	fclose(f);
	CHECK_EQ(rt_trace_writer_open(&w, &o, marker_rundown, &rundowns, message, sizeof(message)),
		 -EEXIST);
	CHECK(strstr(message, out_path) && strstr(message, "not a trace file"));
	uint64_t size;
	unsigned char *kept = trace_walk_read(out_path, &size);
	CHECK(kept && size == 15 && memcmp(kept, "precious", 8) == 0);
	free(kept);

	/* an empty file is fine; a symbolic link is not followed */
	truncate(out_path, 0);
	char link_path[PATH_MAX + 32];
	snprintf(link_path, sizeof(link_path), "%s/link.rt", dir);
	symlink(out_path, link_path);
	struct rt_trace_writer_options lo = {.path = link_path, .background = background};
	CHECK(rt_trace_writer_open(&w, &lo, NULL, NULL, message, sizeof(message)) < 0);
	CHECK(strstr(message, "symbolic link") != NULL);

	CHECK_EQ(rt_trace_writer_open(&w, &o, marker_rundown, &rundowns, message, sizeof(message)),
		 0);
	CHECK_EQ(rundowns, 1);
	for (uint32_t i = 0; i < 1000; i++)
		CHECK_EQ(fake_slots(w, (uint64_t)i * 100, 100), 0);
	CHECK_EQ(rt_trace_writer_files(w), 1);
	CHECK_STR(rt_trace_writer_path(w), out_path);
	CHECK_EQ(rt_trace_writer_close(w, RT_FILE_END_FINISHED), 0);
	struct trace_walk walk = {0};
	CHECK_EQ(trace_walk_file(out_path, &walk, NULL, NULL), 0);
	CHECK_EQ(walk.blocks, 1000 + 3);
	CHECK(walk.ended && walk.end_reason == RT_FILE_END_FINISHED);
	CHECK_EQ(walk.types[RT_BLOCK_SLOTS], 1000);
	CHECK_EQ(walk.packed, 1000); /* every one PACKED on disk, read back as the slots given */

	/* rotation: names, sizes, limits, every file with FILE + rundown ... END (blocks of
	 * 4 KiB: slots as given, not PACKED) */
	setenv("RINGTRACE_PACK", "0", 1);
	char stale[PATH_MAX + 48];
	snprintf(stale, sizeof(stale), "%s.000099", out_path);
	f = fopen(stale, "w");
	fclose(f); /* an empty OUT.000099 of an earlier recording: removed */
	const uint64_t max_size = 64 * 1024;
	struct rt_trace_writer_options ro = {
	    .path = out_path, .max_size = max_size, .max_files = 3, .background = background};
	rundowns = 0;
	CHECK_EQ(rt_trace_writer_open(&w, &ro, marker_rundown, &rundowns, message, sizeof(message)),
		 0);
	CHECK(access(stale, F_OK) != 0);
	for (uint32_t i = 0; i < 200; i++)
		CHECK_EQ(fake_slots(w, (uint64_t)i * 125, 125), 0);
	uint64_t files = rt_trace_writer_files(w);
	CHECK_EQ(rt_trace_writer_close(w, RT_FILE_END_FINISHED), 0);
	CHECK_EQ(rundowns, files);
	CHECK(files >= 12); /* 200 blocks of 4 KiB in files of 64 KiB */
	char names[16][PATH_MAX + 300];
	int n = list_rotated(names, 16);
	CHECK_EQ(n, 3);
	for (int i = 0; i < n; i++) {
		char want[PATH_MAX + 48];
		uint32_t seq = (uint32_t)(files - 3 + i);
		snprintf(want, sizeof(want), "%s.%06u", out_path, seq);
		CHECK_STR(names[i], want);
		struct trace_walk fw = {.file_seq = seq};
		CHECK_EQ(trace_walk_file(names[i], &fw, NULL, NULL), 0);
		CHECK(fw.size <= max_size);
		CHECK(fw.rundown_types & (1u << RT_BLOCK_RINGS));
		CHECK(fw.ended);
		CHECK_EQ(fw.end_reason, i + 1 < n ? RT_FILE_END_ROTATED : RT_FILE_END_FINISHED);
		if (i + 1 < n)
			CHECK(fw.size + RT_BLOCK_MAX_BYTES + 200 > max_size);
	}
}

/* The disk fills up (a file-size limit: EFBIG): the file stays valid and says so. */
static void case_disk_full(void)
{
	char message[512];
	struct rt_trace_writer *w;
	struct rt_trace_writer_options o = {.path = out_path, .background = background};
	setenv("RINGTRACE_PACK", "0", 1); /* the limit counts blocks of 4 KiB */
	signal(SIGXFSZ, SIG_IGN);
	const rlim_t limit = 3 * 1024 * 1024 + 1000;
	struct rlimit rl = {limit, limit};
	CHECK_EQ(setrlimit(RLIMIT_FSIZE, &rl), 0);
	CHECK_EQ(rt_trace_writer_open(&w, &o, NULL, NULL, message, sizeof(message)), 0);
	int rc = 0;
	uint32_t i;
	for (i = 0; i < 2000 && rc == 0; i++) {
		rc = fake_slots(w, (uint64_t)i * 125, 125);
		if (!rc && i % 50 == 49)
			rc = rt_trace_writer_submit(w); /* as the collector does after each pass */
	}
	if (rc == 0)
		rc = rt_trace_writer_flush(w);
	CHECK_EQ(rc, -EFBIG);
	const char *error = rt_trace_writer_error(w);
	CHECK(strstr(error, out_path) && strstr(error, "File too large") &&
	      strstr(error, "valid up to"));
	/* every later call fails the same way */
	CHECK(rt_trace_writer_block(w) == NULL);
	CHECK_EQ(rt_trace_writer_flush(w), -EFBIG);
	CHECK_EQ(rt_trace_writer_close(w, RT_FILE_END_FINISHED), -EFBIG);
	struct trace_walk walk = {0};
	CHECK_EQ(trace_walk_file(out_path, &walk, NULL, NULL), 0);
	CHECK(walk.size <= limit);
	CHECK(walk.size > limit - 2 * 1024 * 1024);
	/* the END block fits when the limit leaves room for it after a whole block */
	CHECK(walk.ended && walk.end_reason == RT_FILE_END_STOPPED);
}

/* Stream mode, rotating files: every event is in the files once, or counted lost. */
static void stream_case(uint64_t buffer, uint32_t threads, uint32_t events, uint64_t max_size,
			int poll)
{
	start_arena(RINGTRACE_STREAM, buffer, 4);
	/* rotation into several files: blocks as the rings hold them, not PACKED (smaller) */
	if (max_size)
		setenv("RINGTRACE_PACK", "0", 1);
	struct rt_collector *c = collector_open(max_size, 0);
	struct polling pl = {.c = c};
	pthread_t poller;
	if (poll)
		pthread_create(&poller, NULL, poll_loop, &pl);
	struct producers p = {.passes = poll ? &pl.passes : NULL};
	producers_start(&p, threads, events);
	producers_join(&p);
	if (poll) {
		__atomic_store_n(&pl.stop, 1, __ATOMIC_RELEASE);
		pthread_join(poller, NULL);
		CHECK_EQ(pl.failed, 0);
	}
	ringtrace_shutdown();
	char message[512];
	struct rt_collector_stats st;
	CHECK_EQ(rt_collector_finish_source(c, 0, message, sizeof(message)), 0);
	rt_collector_stats(c, &st);
	CHECK_EQ(rt_collector_close(c, NULL, message, sizeof(message)), 0);

	struct tally t;
	tally_init(&t, threads, events, 1);
	char names[400][PATH_MAX + 300];
	int n = 1;
	if (max_size) {
		n = list_rotated(names, 400);
		CHECK_EQ(n, st.files);
		CHECK(n > 2);
	} else {
		snprintf(names[0], sizeof(names[0]), "%s", out_path);
	}
	uint64_t file_id = 0;
	for (int i = 0; i < n; i++) {
		struct trace_walk w = {.file_id = file_id, .file_seq = (uint32_t)i};
		CHECK_EQ(trace_walk_file(names[i], &w, tally_block, &t), 0);
		file_id = w.file_id;
		CHECK(w.ended);
		CHECK_EQ(w.end_reason, i + 1 < n ? RT_FILE_END_ROTATED : RT_FILE_END_FINISHED);
		/* (the first file began before any ring was in use) */
		uint32_t rundown = 1u << RT_BLOCK_SOURCE | (i ? 1u << RT_BLOCK_RINGS : 0) |
				   1u << RT_BLOCK_THREADS | 1u << RT_BLOCK_SITES;
		CHECK_EQ(w.rundown_types & rundown, rundown);
		if (max_size)
			CHECK(w.size <= max_size + RT_BLOCK_MAX_BYTES);
		/* every file says where its rings end, right before END */
		CHECK_EQ(t.final_ends, (uint64_t)i + 1);
	}
	CHECK(t.final_entries >= (uint64_t)n);
	uint64_t emitted = (uint64_t)threads * events;
	CHECK_EQ(t.repeated, 0);
	CHECK_EQ(t.gaps, 0);
	CHECK_EQ(t.loss[1] + t.loss[3], 0);
	CHECK_EQ(t.present + t.noted + t.loss[2] + tally_no_ring(&t), emitted);
	CHECK_EQ(st.records, t.records);
	printf("stream: %llu events: %llu in the files, %llu noted dropped, %llu dropped at the "
	       "end, %llu without a ring; %d files\n",
	       (unsigned long long)emitted, (unsigned long long)t.present,
	       (unsigned long long)t.noted, (unsigned long long)t.loss[2],
	       (unsigned long long)tally_no_ring(&t), n);
	free(t.seen);
}

static void case_stream(void)
{
	/* rings big enough and a collector quick enough that little or nothing drops */
	stream_case(1u << 16, 3, 200000, 0, 1);
}

static void case_writer_background(void)
{
	background = 1;
	case_writer();
}

/* Threads of this process whose allowed CPUs leave out cpu (listed in /proc). */
static int threads_kept_off(int cpu)
{
	int count = 0;
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		cpu_set_t set;
		if (sched_getaffinity((pid_t)atoi(e->d_name), sizeof(set), &set) == 0 &&
		    !CPU_ISSET(cpu, &set))
			count++;
	}
	closedir(d);
	return count;
}

/* The writing thread keeps off the draining CPU when there is another one. */
static void case_writer_keeps_off_cpu(void)
{
	cpu_set_t allowed;
	CHECK_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
	int cpu = 0;
	while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &allowed))
		cpu++;
	char message[512];
	struct rt_trace_writer *w;
	struct rt_trace_writer_options o = {
	    .path = out_path, .background = 1, .keep_off_cpu = 1, .cpu = cpu};
	CHECK_EQ(threads_kept_off(cpu), 0);
	CHECK_EQ(rt_trace_writer_open(&w, &o, NULL, NULL, message, sizeof(message)), 0);
	/* the thread sets its affinity first thing: give it the time to start */
	int kept = 0;
	for (int i = 0; i < 1000 && kept == 0 && CPU_COUNT(&allowed) >= 2; i++) {
		kept = threads_kept_off(cpu);
		if (!kept)
			usleep(1000);
	}
	if (CPU_COUNT(&allowed) >= 2)
		CHECK_EQ(kept, 1);
	else
		CHECK_EQ(threads_kept_off(cpu), 0); /* nowhere else to go: left alone */
	CHECK_EQ(fake_slots(w, 0, 10), 0);
	CHECK_EQ(rt_trace_writer_close(w, RT_FILE_END_FINISHED), 0);
	struct trace_walk walk = {0};
	CHECK_EQ(trace_walk_file(out_path, &walk, NULL, NULL), 0);
	CHECK_EQ(walk.types[RT_BLOCK_SLOTS], 1);
}

static void case_disk_full_background(void)
{
	background = 1;
	case_disk_full();
}

static void case_stream_background(void)
{
	/* the collector as `ringtrace record` runs it: writes from a thread of their own */
	background = 1;
	stream_case(4096, 3, 100000, 64 * 1024, 1);
}

static void case_stream_rotate(void)
{
	/* small rings: drops and LOST notes; small files: many rotations */
	stream_case(4096, 3, 100000, 256 * 1024, 1);
}

static void case_stream_unnoted(void)
{
	/* nobody drains until the end: the ring fills, and the drops were never noted */
	stream_case(4096, 1, 5000, 0, 0);
}

/* Flight mode: snapshots, overlapping ones, and what was overwritten, add up. */
static void case_flight(void)
{
	start_arena(RINGTRACE_FLIGHT, 4096, 2);
	struct rt_collector *c = collector_open(0, 0);
	char message[512];
	uint32_t i = 0;
	for (; i < 1000; i++)
		pattern_emit(0, i);
	CHECK_EQ(rt_collector_snapshot(c, message, sizeof(message)), 0);
	for (; i < 1030; i++)
		pattern_emit(0, i); /* the next window overlaps the last one */
	CHECK_EQ(rt_collector_snapshot(c, message, sizeof(message)), 0);
	for (; i < 3000; i++)
		pattern_emit(0, i);
	/* `ringtrace snapshot` asks through the header */
	struct rt_arena_header *h = rt_arena.header;
	__atomic_fetch_add(&h->snapshot_requests, 1, __ATOMIC_RELEASE);
	CHECK(rt_collector_poll(c, message, sizeof(message)) > 0);
	CHECK_EQ(h->snapshots_taken, h->snapshot_requests);
	CHECK_EQ(h->collector_pid, getpid());
	for (; i < 3100; i++)
		pattern_emit(0, i);
	uint64_t records = rt_arena.rings[0].records;
	/* a writer that died mid-record: reserve past head */
	__atomic_store_n(&rt_arena.rings[0].reserve, rt_arena.rings[0].head + 1, __ATOMIC_RELAXED);
	struct rt_collector_stats st;
	CHECK_EQ(rt_collector_finish_source(c, 0, message, sizeof(message)), 0);
	CHECK_EQ(h->collector_pid, 0);
	rt_collector_stats(c, &st);
	CHECK_EQ(rt_collector_close(c, NULL, message, sizeof(message)), 0);

	struct tally t;
	tally_init(&t, 1, i, 0);
	struct trace_walk w = {0};
	CHECK_EQ(trace_walk_file(out_path, &w, tally_block, &t), 0);
	CHECK(w.ended && w.end_reason == RT_FILE_END_FINISHED);
	CHECK_EQ(t.final_ends, 1);
	CHECK_EQ(t.final_entries, 1); /* ring 0's end: records, as t.next below */
	CHECK_EQ(t.repeated, 0);
	CHECK_EQ(t.gaps, 0); /* each snapshot went on where the last stopped, or after a loss */
	CHECK_EQ(t.covered[0], records);
	CHECK_EQ(t.next[0], records);
	CHECK_EQ(t.present + t.loss[1], records);
	CHECK(t.loss[1] > 0);
	CHECK_EQ(t.loss[3], 1);
	CHECK_EQ(st.overwritten, t.loss[1]);
	CHECK_EQ(st.torn, 1);
	printf("flight: %llu records, %llu written, %llu overwritten\n",
	       (unsigned long long)records, (unsigned long long)t.present,
	       (unsigned long long)t.loss[1]);
	free(t.seen);
}

/* The parent_pid of the newest SOURCE block. */
static void newest_parent(void *context, const struct rt_block_header *h, const unsigned char *p)
{
	if (h->type == RT_BLOCK_SOURCE)
		memcpy(context, p + offsetof(struct rt_block_source, parent_pid), sizeof(int32_t));
}

/*
 * A record in the making in a process that runs on (this one) is not torn:
 * not when the collector closes with the source still attached, not when
 * it detaches the source; finishing it (the caller says the process is
 * gone) is what declares it torn.  The arena is given back either way.
 */
static void detach_case(int mode)
{
	start_arena(mode, 4096, 2);
	struct rt_arena_header *h = rt_arena.header;
	char message[512];
	uint32_t i = 0;
	for (; i < 50; i++)
		pattern_emit(0, i);
	struct rt_ring_desc *d = &rt_arena.rings[0];
	uint64_t head = d->head, records = d->records;
	/* a record in the making: reserve past head, as the writer leaves it mid-record */
	__atomic_store_n(&d->reserve, head + 1, __ATOMIC_RELAXED);

	/* closed with the source attached: the process (this one) is alive */
	struct rt_collector *c = collector_open(0, 0);
	CHECK_EQ(h->collector_pid, getpid());
	struct rt_collector_stats st;
	CHECK_EQ(rt_collector_close(c, &st, message, sizeof(message)), 0);
	CHECK_EQ(h->collector_pid, 0);
	CHECK_EQ(st.torn, 0);
	CHECK_EQ(st.records, records);
	CHECK(st.bytes > 0 && st.files == 1);
	struct tally t;
	tally_init(&t, 1, i, mode == RINGTRACE_STREAM);
	struct trace_walk w = {0};
	CHECK_EQ(trace_walk_file(out_path, &w, tally_block, &t), 0);
	CHECK(w.ended);
	CHECK_EQ(t.loss[3], 0);
	CHECK_EQ(t.present, i);
	free(t.seen);

	/* detached explicitly, with a parent given after attaching */
	for (; i < 80; i++)
		pattern_emit(0, i);
	head = d->head;
	__atomic_store_n(&d->reserve, head + 1, __ATOMIC_RELAXED);
	c = collector_open(0, 0);
	CHECK_EQ(rt_collector_set_parent(c, 0, 4242, message, sizeof(message)), 0);
	CHECK_EQ(rt_collector_detach_source(c, 0, message, sizeof(message)), 0);
	CHECK_EQ(h->collector_pid, 0);
	CHECK_EQ(rt_collector_detach_source(c, 0, message, sizeof(message)), -ENOENT);
	CHECK_EQ(rt_collector_close(c, &st, message, sizeof(message)), 0);
	CHECK_EQ(st.torn, 0);
	int32_t parent = -1;
	struct trace_walk w2 = {0};
	CHECK_EQ(trace_walk_file(out_path, &w2, newest_parent, &parent), 0);
	CHECK_EQ(parent, 4242);
	tally_init(&t, 1, i, 0);
	struct trace_walk w3 = {0};
	CHECK_EQ(trace_walk_file(out_path, &w3, tally_block, &t), 0);
	CHECK_EQ(t.loss[3], 0);
	CHECK_EQ(t.present, mode == RINGTRACE_FLIGHT ? i : i - 50);
	free(t.seen);

	/* finished: the caller says the process is gone, so the record is torn */
	c = collector_open(0, 0);
	CHECK_EQ(rt_collector_finish_source(c, 0, message, sizeof(message)), 0);
	CHECK_EQ(rt_collector_close(c, &st, message, sizeof(message)), 0);
	CHECK_EQ(st.torn, 1);
	__atomic_store_n(&d->reserve, head, __ATOMIC_RELAXED);
}

static void case_detach_flight(void)
{
	detach_case(RINGTRACE_FLIGHT);
}

static void case_detach_stream(void)
{
	detach_case(RINGTRACE_STREAM);
}

/* ---- running cases in children ------------------------------------------- */

struct test_case {
	const char *name;
	void (*run)(void);
};

static const struct test_case cases[] = {
    {"crc", case_crc},
    {"writer", case_writer},
    {"writer_keeps_off_cpu", case_writer_keeps_off_cpu},
    {"disk_full", case_disk_full},
    {"writer_background", case_writer_background},
    {"disk_full_background", case_disk_full_background},
    {"stream", case_stream},
    {"stream_rotate", case_stream_rotate},
    {"stream_unnoted", case_stream_unnoted},
    {"stream_background", case_stream_background},
    {"flight", case_flight},
    {"detach_flight", case_detach_flight},
    {"detach_stream", case_detach_stream},
};

static void remove_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[PATH_MAX + 300];
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.')
			unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static int run_case(const struct test_case *tc)
{
	snprintf(dir, sizeof(dir), "%s/ringtrace-collect.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(out_path, sizeof(out_path), "%s/out.rt", dir);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(120);
		tc->run();
		fflush(stdout);
		_exit(check_failure_count() ? 1 : 0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	remove_dir();
	int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
	printf("%s: %s\n", tc->name, ok ? "ok" : "FAILED");
	return !ok;
}

int main(int argc, char **argv)
{
	unsetenv("RINGTRACE_ARENA");
	unsetenv("RINGTRACE_MODE");
	unsetenv("RINGTRACE_BUFFER");
	unsetenv("RINGTRACE_RINGS");
	int passed = 0, failed = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (argc > 1 && strcmp(argv[1], cases[i].name) != 0)
			continue;
		if (run_case(&cases[i]))
			failed++;
		else
			passed++;
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0 || passed == 0;
}
