/*
 * test_packed_read.c - a PACKED block reads as the SLOTS block it packs.
 *
 *   test_packed_read DIR    (a scratch directory; the files are left there)
 *
 * The reader decodes a PACKED block of compact entries record by record
 * without expanding it, expands one that holds a raw entry, and takes a
 * block's place from its prelude alone when the set is opened for reading
 * (read/trace_set_decode.c, format/packed_walk.h).  So:
 *
 *  - a trace file of every kind of record (one and two slots, logs over
 *    many slots, LOST records, records of no site, records their site does
 *    not describe, gaps, a ring taken over by another thread), written as
 *    SLOTS blocks and again with each block packed, gives the same items,
 *    losses and skipped counts, with and without a thread filter and a
 *    skip filter; and a walk that counts as it reads (a PACKED block's
 *    events tallied as they are decoded, undone when the block turns out
 *    to hold a raw entry) counts the same: events, sites, span, totals,
 *    each thread's events and last event;
 *  - a packed payload changed (one byte, bits flipped) and sealed again
 *    gives, when it still expands, exactly the items of the file with that
 *    block expanded into SLOTS; when it does not, its records are counted
 *    lost: events shown plus records counted lost (a LOST record is one)
 *    stay what the clean file gives;
 *  - either way, a set that walks runs of blocks (read/trace_set_private.h,
 *    RUN_GAP_MAX) reads what one with every block in its index reads;
 *  - a set opened to check names a block that does not expand a damaged
 *    region, after other damage too; one opened to read, a gap.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/check.h"
#include "../lib/trace_gen.h"
#include "format/packed_slots.h"
#include "format/packed_walk.h"
#include "read/trace_set.h"

#define MAX_ITEMS 40000
#define MAX_BLOCKS 4096
#define SEEDS 600

static const char *dir;

static char *path_of(const char *name)
{
	static char buf[4][512];
	static int next;
	char *p = buf[next++ % 4];
	snprintf(p, 512, "%s/%s", dir, name);
	return p;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* ---- the file as written: SLOTS blocks ------------------------------------ */

enum { TICK = 1, WIDE, ENTER, EXIT, BEGIN, END, NOTE, UNKNOWN = 15 };

static size_t log_payload(unsigned char *p, int64_t n, const char *s)
{
	uint32_t len = (uint32_t)strlen(s), flags = 0;
	uint64_t pointer = 0x1234;
	memcpy(p, &n, 8);
	memcpy(p + 8, &pointer, 8);
	memcpy(p + 16, &len, 4);
	memcpy(p + 20, &flags, 4);
	memcpy(p + 24, s, len);
	return 24 + len;
}

static void write_slots_file(const char *path)
{
	static struct tg g;
	const uint8_t types[2] = {RT_ARG_SIGNED | 8, RT_ARG_STRING | 8};
	tg_init(&g);
	tg_add_source(&g, 0, 300, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(&g, 0, TICK, "tick", 1, 10);
	tg_add_site(&g, 0, WIDE, "wide", RT_MAX_ARGS, 11);
	tg_add_function_sites(&g, 0, ENTER);
	tg_add_span_site(&g, 0, BEGIN, "request", RT_SITE_BEGIN, 12);
	tg_add_span_site(&g, 0, END, "request", RT_SITE_END, 13);
	tg_add_log_site(&g, 0, NOTE, "n=%ld s=%s", RT_LOG_INFO, 2, types, 2, 14);
	for (uint32_t r = 0; r < 3; r++)
		tg_add_thread(&g, 0, 301 + (int32_t)r, "worker", r, TG_START_NS);
	g.final = 1; /* the rings' ends, as the collector writes them at close */
	tg_open(&g, path, 91, 0);
	tg_file_head(&g);
	uint64_t t = TG_START_NS + 1000;
	uint32_t depth[3] = {0, 0, 0};
	unsigned char payload[RT_LOG_PAYLOAD_MAX];
	for (int i = 0; i < 9000; i++) {
		const uint32_t ring = next_random() % 3, pick = next_random() % 100;
		/* a thread that takes ring 2 over midway: a block of two owners' records */
		if (i == 4500) {
			tg_add_thread(&g, 0, 304, "late", 2, t);
			tg_threads_block(&g, 0);
		}
		/* mostly small clock steps, now and then a long one */
		t += pick < 90 ? 1 + next_random() % 40 : 100000 + next_random();
		if (pick < 30) {
			tg_event(&g, 0, ring, TICK, t, i % 7 ? (uint32_t)i : 0xffffffffu);
		} else if (pick < 50) {
			const uint32_t a32[4] = {(uint32_t)i, next_random(), 7, (uint32_t)-i};
			const uint64_t a64[2] = {(uint64_t)i << 33, next_random() % 5};
			tg_record(&g, 0, ring, RT_REC_TRACE, WIDE, 2, t, a32, a64);
		} else if (pick < 75) {
			/* calls: enter and exit, the depth one step at a time */
			const int enter = depth[ring] == 0 || next_random() % 2;
			depth[ring] += enter ? 1 : 0;
			tg_call(&g, 0, ring, enter ? ENTER : EXIT, t, depth[ring], 0,
				0x401000 + (next_random() % 64) * 16);
			depth[ring] -= enter ? 0 : 1;
		} else if (pick < 82) {
			tg_event(&g, 0, ring, pick % 2 ? BEGIN : END, t, 0);
		} else if (pick < 87) {
			/* a log of one to dozens of slots: a raw entry when packed */
			const char *s = pick % 3 ? "short" : "a message long enough for many slots";
			tg_log(&g, 0, ring, NOTE, t, payload, log_payload(payload, i, s));
		} else if (pick < 89) {
			tg_lost_record(&g, 0, ring, t, 1 + next_random() % 9, t - 5);
		} else if (pick < 94) {
			/* a site no metadata describes: shown marked */
			tg_event(&g, 0, ring, UNKNOWN, t, 3);
		} else if (pick < 97) {
			/* whole, but two slots where its site says one: a gap */
			const uint32_t a32[4] = {1, 2, 3, 4};
			const uint64_t a64[2] = {5, 6};
			tg_record(&g, 0, ring, RT_REC_TRACE, TICK, 2, t, a32, a64);
		} else if (pick < 98) {
			tg_skip(&g, 0, ring, 1 + next_random() % 3);
		} else {
			tg_event(&g, 0, ring, TICK, t, (uint32_t)i);
		}
	}
	tg_close(&g, RT_FILE_END_FINISHED);
}

/* ---- the same file packed, and blocks made SLOTS again ------------------------ */

struct file_bytes {
	unsigned char *b;
	size_t size;
};

static struct file_bytes slurp(const char *path)
{
	struct file_bytes f = {NULL, 0};
	FILE *in = fopen(path, "rb");
	if (!CHECK(in != NULL))
		return f;
	fseek(in, 0, SEEK_END);
	f.size = (size_t)ftell(in);
	fseek(in, 0, SEEK_SET);
	f.b = malloc(f.size + 1);
	CHECK(f.b && fread(f.b, 1, f.size, in) == f.size);
	fclose(in);
	return f;
}

static void spit(const char *path, const unsigned char *b, size_t size)
{
	FILE *out = fopen(path, "wb");
	CHECK(out && fwrite(b, 1, size, out) == size);
	if (out)
		fclose(out);
}

/* Where the PACKED blocks of a file are, and how many hold a raw entry. */
struct packed_blocks {
	size_t offsets[MAX_BLOCKS];
	size_t count, with_raw;
};

/*
 * The blocks of in (checked, as a scan checks them) written to *out, each
 * SLOTS block packed as the collector packs it (pack) or each PACKED block
 * expanded into a sealed SLOTS block (!pack).  Returns 0, or -1 when a
 * block does not check or expand.
 */
static int rewrite(const struct file_bytes *in, struct file_bytes *out, int pack,
		   struct packed_blocks *where)
{
	/* at most a whole block for each block of in, the smallest a header and 8 bytes */
	out->b = malloc((in->size / (RT_BLOCK_HEADER_SIZE + 8) + 1) * RT_BLOCK_MAX_BYTES);
	out->size = 0;
	if (where)
		where->count = where->with_raw = 0;
	for (size_t at = 0; at < in->size;) {
		struct rt_block_header h;
		if (rt_block_check(in->b + at, in->size - at, &h) != RT_BLOCK_OK)
			return -1;
		/* rt_block_check hands a PACKED block over as the SLOTS block it packs */
		struct rt_block_header disk;
		memcpy(&disk, in->b + at, sizeof(disk));
		unsigned char *to = out->b + out->size;
		if (pack && disk.type == RT_BLOCK_SLOTS && disk.size > RT_BLOCK_HEADER_SIZE) {
			const uint32_t slots = (disk.size - RT_BLOCK_HEADER_SIZE) / RT_SLOT_SIZE;
			unsigned char packed[RT_BLOCK_MAX_BYTES];
			union rt_slot copy[RT_BLOCK_MAX_SLOTS];
			memcpy(copy, in->b + at + RT_BLOCK_HEADER_SIZE, slots * RT_SLOT_SIZE);
			size_t n =
			    rt_packed_encode(&disk, copy, slots, packed,
					     disk.size - RT_BLOCK_HEADER_SIZE - RT_BLOCK_ALIGN);
			if (n) {
				struct rt_block_header ph = disk;
				ph.type = RT_BLOCK_PACKED;
				memcpy(to, &ph, sizeof(ph));
				memcpy(to + RT_BLOCK_HEADER_SIZE, packed, n);
				rt_block_seal(to, (uint32_t)(RT_BLOCK_HEADER_SIZE + n));
				if (where && where->count < MAX_BLOCKS) {
					where->offsets[where->count++] = out->size;
					ph.size = (uint16_t)(RT_BLOCK_HEADER_SIZE + n);
					struct rt_packed_walk w;
					int step = rt_packed_walk_start(&w, &ph, packed, n) == 0
						       ? 1
						       : RT_PACKED_WALK_BAD;
					while (step > 0)
						step = rt_packed_walk_next(&w, NULL);
					where->with_raw += step == RT_PACKED_WALK_RAW;
				}
				out->size += RT_BLOCK_HEADER_SIZE + n;
				at += disk.size;
				continue;
			}
		}
		if (!pack && disk.type == RT_BLOCK_PACKED) {
			struct rt_block_header x;
			if (rt_packed_to_slots(in->b + at, &disk, to, &x) != 0)
				return -1;
			out->size += x.size;
			at += disk.size;
			continue;
		}
		memcpy(to, in->b + at, disk.size);
		out->size += disk.size;
		at += disk.size;
	}
	return 0;
}

/* ---- what a read gives --------------------------------------------------------- */

struct read_result {
	struct rt_item items[MAX_ITEMS];
	uint64_t payload_sums[MAX_ITEMS];
	size_t count;
	uint64_t events, lost, skipped;
	/* records accounted for: events, records a damaged loss counts, LOST records */
	uint64_t records;
	uint64_t unknown_records, lost_records; /* the set's counts, per source summed */
	/* unfiltered: what the walk counted as it read (rt_trace_set_count_while_reading) */
	int counted;
	uint64_t set_events, first_counter, last_counter, site_sum;
	struct rt_counts totals;
	uint32_t thread_count;
	uint64_t present[8], last_counter_of[8], last_seq_of[8];
	int ok;
};

static int skips_tick(void *state, const struct rt_site *site)
{
	(void)state;
	return site && site->line == 10;
}

/* Every item of path, opened for reading; filtered: --tid 302 and TICK skipped. */
static void read_file(const char *path, int filtered, struct read_result *r)
{
	r->count = r->events = r->lost = r->skipped = r->records = 0;
	r->ok = 0;
	char *paths[1] = {(char *)path};
	struct rt_trace_set *set = NULL;
	char message[512];
	if (rt_trace_set_open_reading(paths, 1, &set, message, sizeof(message)) != 0) {
		fprintf(stderr, "open %s: %s\n", path, message);
		return;
	}
	if (filtered)
		rt_trace_set_skip_trace(set, skips_tick, NULL);
	else
		rt_trace_set_count_while_reading(set);
	if (rt_trace_set_start(set, filtered ? 302 : 0) != 0) {
		rt_trace_set_close(set);
		return;
	}
	const struct rt_item *it;
	uint32_t source;
	while ((it = rt_trace_set_next(set, &source)) != NULL && r->count < MAX_ITEMS) {
		uint64_t sum = 0;
		if (rt_item_has_payload(it->kind))
			for (uint32_t i = 0; i < it->log.length; i++)
				sum = sum * 131 + it->log.payload[i] + 1;
		r->payload_sums[r->count] = sum;
		r->items[r->count++] = *it;
		if (rt_item_kind_is_event(it->kind)) {
			r->events++;
			r->records++;
		} else if (it->kind == RT_ITEM_LOSS) {
			r->lost += it->loss.count;
			r->records += it->loss.reason == RT_LOSS_DAMAGED   ? it->loss.count
				      : it->loss.reason == RT_LOSS_DROPPED ? 1
									   : 0;
		}
	}
	r->skipped = rt_trace_set_skipped(set);
	r->unknown_records = r->lost_records = 0;
	for (size_t i = 0; i < set->source_count; i++) {
		r->unknown_records += set->sources[i].unknown_records;
		r->lost_records += set->sources[i].lost_records;
	}
	r->ok = rt_trace_set_error(set) == 0;
	r->counted = rt_trace_set_counted_while_reading(set);
	/* the file's source (a recording's context source holds its damage only) */
	const struct rt_set_source *s = NULL;
	for (size_t i = 0; i < set->source_count && !s; i++)
		if (!set->sources[i].context)
			s = &set->sources[i];
	if (r->counted && CHECK(s != NULL)) {
		r->set_events = set->events;
		r->first_counter = set->first_counter;
		r->last_counter = set->last_counter;
		r->totals = set->totals;
		r->site_sum = 0;
		for (uint32_t k = 0; k < s->reader->sites.count; k++)
			r->site_sum += (k + 1) * s->site_counts[k];
		r->thread_count = s->reader->thread_count;
		for (uint32_t k = 0; k < r->thread_count && k < 8; k++) {
			const struct rt_reader_thread *t = &s->reader->threads[k];
			r->present[k] = t->counts.present;
			r->last_counter_of[k] = t->last.counter;
			r->last_seq_of[k] = t->last.seq;
		}
	}
	rt_trace_set_skip_trace(set, NULL, NULL);
	rt_trace_set_close(set);
}

/* Whether two items are the same: every field a reader shows. */
static int same_item(const struct rt_item *x, uint64_t x_sum, const struct rt_item *y,
		     uint64_t y_sum)
{
	if (x->kind != y->kind || x->counter != y->counter || x->seq != y->seq ||
	    x->site != y->site || x->thread != y->thread || x->tid != y->tid || x->cpu != y->cpu ||
	    x->flags != y->flags || x_sum != y_sum)
		return 0;
	if (x->kind == RT_ITEM_LOSS)
		return x->loss.count == y->loss.count && x->loss.reason == y->loss.reason &&
		       x->loss.note == y->loss.note;
	if (x->kind == RT_ITEM_TRACE)
		return memcmp(&x->args, &y->args, sizeof(x->args)) == 0;
	return 1;
}

static int same_items(const struct read_result *a, const struct read_result *b)
{
	if (!CHECK(a->ok && b->ok) || !CHECK(a->count == b->count) ||
	    !CHECK(a->skipped == b->skipped) || !CHECK(a->unknown_records == b->unknown_records) ||
	    !CHECK(a->lost_records == b->lost_records)) {
		fprintf(stderr, "  %zu items, %zu; skipped %llu, %llu\n", a->count, b->count,
			(unsigned long long)a->skipped, (unsigned long long)b->skipped);
		return 0;
	}
	for (size_t i = 0; i < a->count; i++)
		if (!CHECK(same_item(&a->items[i], a->payload_sums[i], &b->items[i],
				     b->payload_sums[i]))) {
			fprintf(stderr,
				"  item %zu of %zu differs (kinds %d, %d; seqs %llu, %llu)\n", i,
				a->count, a->items[i].kind, b->items[i].kind,
				(unsigned long long)a->items[i].seq,
				(unsigned long long)b->items[i].seq);
			return 0;
		}
	return 1;
}

/*
 * Whether two unfiltered reads counted the same as they read: the set's
 * events, span and totals, each site's and each thread's count, and each
 * thread's last event (a PACKED block's events are tallied as they are
 * decoded; a SLOTS block's, from its items).
 */
static int same_counts(const struct read_result *a, const struct read_result *b)
{
	if (!CHECK(a->counted && b->counted))
		return 0;
	int same = a->set_events == b->set_events && a->first_counter == b->first_counter &&
		   a->last_counter == b->last_counter && a->site_sum == b->site_sum &&
		   memcmp(&a->totals, &b->totals, sizeof(a->totals)) == 0 &&
		   a->thread_count == b->thread_count;
	for (uint32_t k = 0; same && k < a->thread_count && k < 8; k++)
		same = a->present[k] == b->present[k] &&
		       a->last_counter_of[k] == b->last_counter_of[k] &&
		       a->last_seq_of[k] == b->last_seq_of[k];
	if (!CHECK(same))
		fprintf(stderr, "  counted while reading: %llu events, %llu\n",
			(unsigned long long)a->set_events, (unsigned long long)b->set_events);
	return same;
}

static struct read_result want, got;

/* ---- the cases ------------------------------------------------------------------- */

static void test_packed_as_written(const struct file_bytes *slots, struct file_bytes *packed,
				   struct packed_blocks *where)
{
	CHECK_EQ(rewrite(slots, packed, 1, where), 0);
	spit(path_of("packed.rt"), packed->b, packed->size);
	/* both kinds of block: compact entries only, and with a raw entry */
	CHECK(where->count > 40);
	CHECK(where->with_raw > 0 && where->with_raw < where->count);
	for (int filtered = 0; filtered < 2; filtered++) {
		read_file(path_of("slots.rt"), filtered, &want);
		read_file(path_of("packed.rt"), filtered, &got);
		CHECK(want.events > 1000);
		CHECK(want.lost > 0);
		CHECK(filtered ? want.skipped > 0 : want.skipped == 0);
		if (!same_items(&want, &got))
			fprintf(stderr, "  packed file, filtered %d\n", filtered);
		if (!filtered) {
			/* every event counted, of the four threads, the late one too */
			CHECK_EQ(want.set_events, want.events);
			CHECK_EQ(want.thread_count, 4);
			CHECK(want.present[2] > 0 && want.present[3] > 0);
			if (!same_counts(&want, &got))
				fprintf(stderr, "  packed file\n");
		}
	}
	printf("packed as written: %zu PACKED blocks (%zu with a raw entry), %llu events, "
	       "%llu lost\n",
	       where->count, where->with_raw, (unsigned long long)want.events,
	       (unsigned long long)want.lost);
}

/* Where in the payload of the PACKED block at b (header h) one of its compact entries starts. */
static size_t entry_at(const unsigned char *b, const struct rt_block_header *h, uint32_t pick)
{
	const unsigned char *payload = b + RT_BLOCK_HEADER_SIZE;
	size_t starts[RT_BLOCK_MAX_SLOTS], n = 0;
	struct rt_packed_walk w;
	if (rt_packed_walk_start(&w, h, payload, h->size - RT_BLOCK_HEADER_SIZE) != 0)
		return 0;
	for (;;) {
		const size_t start = (size_t)(w.in.at - payload);
		int step = rt_packed_walk_next(&w, NULL);
		if (step == RT_PACKED_WALK_RAW)
			step = rt_packed_walk_raw(&w, NULL);
		else if (step > 0 && n < RT_BLOCK_MAX_SLOTS)
			starts[n++] = start;
		if (step <= 0)
			break;
	}
	return n ? starts[pick % n] : 0;
}

static void test_changed_payloads(const struct file_bytes *packed,
				  const struct packed_blocks *where)
{
	static struct read_result clean;
	read_file(path_of("packed.rt"), 0, &clean);
	unsigned expanded = 0, refused = 0;
	unsigned char *copy = malloc(packed->size);
	for (int seed = 0; seed < SEEDS && where->count; seed++) {
		memcpy(copy, packed->b, packed->size);
		const size_t at = where->offsets[next_random() % where->count];
		struct rt_block_header h;
		memcpy(&h, copy + at, sizeof(h));
		const size_t bytes = h.size - RT_BLOCK_HEADER_SIZE;
		/*
		 * The prelude now and then, an entry's kind (a record no site
		 * describes included) as often, any byte mostly.
		 */
		size_t i;
		unsigned char flip = (unsigned char)(1 + next_random() % 255);
		if (seed % 8 == 0) {
			i = next_random() % sizeof(struct rt_packed_prelude);
		} else if (seed % 8 < 3) {
			i = entry_at(copy + at, &h, next_random());
			flip = (unsigned char)((1 + next_random() % 7) << RT_PACKED_TAG_KIND_SHIFT);
		} else {
			i = next_random() % bytes;
		}
		copy[at + RT_BLOCK_HEADER_SIZE + i] ^= flip;
		rt_block_seal(copy + at, h.size);
		const struct file_bytes changed = {copy, packed->size};
		spit(path_of("changed.rt"), copy, packed->size);
		/* read with every block in the index, and walking runs: the same */
		setenv("RINGTRACE_RUNS", "0", 1);
		read_file(path_of("changed.rt"), 0, &want);
		unsetenv("RINGTRACE_RUNS");
		read_file(path_of("changed.rt"), 0, &got);
		if (!same_items(&want, &got))
			fprintf(stderr, "  seed %d: runs walked, byte %zu of the block at %zu\n",
				seed, i, at);
		unsigned char slots[RT_BLOCK_MAX_BYTES];
		struct rt_block_header x;
		if (rt_packed_to_slots(copy + at, &h, slots, &x) == 0) {
			/* it still expands: read as that expansion, item for item */
			struct file_bytes as_slots;
			if (!CHECK(rewrite(&changed, &as_slots, 0, NULL) == 0)) {
				free(as_slots.b);
				continue;
			}
			spit(path_of("changed_slots.rt"), as_slots.b, as_slots.size);
			free(as_slots.b);
			for (int filtered = 0; filtered < 2; filtered++) {
				read_file(path_of("changed_slots.rt"), filtered, &want);
				read_file(path_of("changed.rt"), filtered, &got);
				if (!same_items(&want, &got))
					fprintf(stderr, "  seed %d: byte %zu of the block at %zu\n",
						seed, i, at);
			}
			expanded++;
		} else {
			/* it does not: its records are lost, counted, never shown (got: read) */
			if (!CHECK(got.ok) || !CHECK(got.records == clean.records) ||
			    !CHECK(got.events + h.count >= clean.events)) {
				fprintf(stderr, "  seed %d: byte %zu of the block at %zu refused\n",
					seed, i, at);
				char name[64];
				snprintf(name, sizeof(name), "failed-%d.rt", seed);
				spit(path_of(name), copy, packed->size);
			}
			refused++;
		}
	}
	free(copy);
	CHECK(expanded > SEEDS / 10 && refused > SEEDS / 10);
	printf("changed payloads: %u still expand (read as their expansion), %u do not "
	       "(counted lost)\n",
	       expanded, refused);
}

/*
 * A set opened to check (rt_trace_set_open, as check, info, summary and dump
 * open one) names a packed block that does not expand a damaged region
 * wherever it lies, after other damage too; one opened to read counts its
 * records as a gap.  The same records are lost either way.
 */
static void test_refused_region_when_checked(const struct file_bytes *packed,
					     const struct packed_blocks *where)
{
	if (!CHECK(where->count >= 2))
		return;
	unsigned char *copy = malloc(packed->size);
	memcpy(copy, packed->b, packed->size);
	/* damage first: the first packed block's checksum no longer matches */
	copy[where->offsets[0] + RT_BLOCK_HEADER_SIZE] ^= 0xff;
	/* then the last packed block, changed and sealed again until it does not expand */
	const size_t at = where->offsets[where->count - 1];
	struct rt_block_header h;
	memcpy(&h, copy + at, sizeof(h));
	int refused = 0;
	/* past the prelude: a prelude that does not read is a region to every scan */
	for (size_t i = sizeof(struct rt_packed_prelude);
	     i < (size_t)h.size - RT_BLOCK_HEADER_SIZE && !refused; i++) {
		copy[at + RT_BLOCK_HEADER_SIZE + i] ^= 0xff;
		rt_block_seal(copy + at, h.size);
		refused = rt_packed_expand(&h, copy + at + RT_BLOCK_HEADER_SIZE,
					   h.size - RT_BLOCK_HEADER_SIZE, NULL) == 0;
		if (!refused)
			memcpy(copy + at, packed->b + at, h.size);
	}
	spit(path_of("refused.rt"), copy, packed->size);
	free(copy);
	if (!CHECK(refused))
		return;
	char *paths[] = {path_of("refused.rt")};
	char message[256];
	for (int reading = 0; reading < 2; reading++) {
		struct rt_trace_set *set = NULL;
		int rc = reading
			     ? rt_trace_set_open_reading(paths, 1, &set, message, sizeof(message))
			     : rt_trace_set_open(paths, 1, &set, message, sizeof(message));
		if (!CHECK(rc == 0)) {
			fprintf(stderr, "  %s\n", message);
			continue;
		}
		CHECK(rt_trace_set_file_region(set, 0, where->offsets[0]) != NULL);
		const struct rt_damage *d = rt_trace_set_file_region(set, 0, at);
		if (reading) {
			CHECK(d == NULL);
		} else if (CHECK(d != NULL)) {
			CHECK_EQ(d->length, h.size);
			CHECK(strstr(d->what, "contents do not fit the block") != NULL);
		}
		rt_trace_set_close(set);
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_packed_read DIR\n");
		return 2;
	}
	dir = argv[1];
	mkdir(dir, 0755);
	write_slots_file(path_of("slots.rt"));
	struct file_bytes slots = slurp(path_of("slots.rt")), packed = {NULL, 0};
	static struct packed_blocks where;
	if (slots.b) {
		test_packed_as_written(&slots, &packed, &where);
		test_changed_payloads(&packed, &where);
		test_refused_region_when_checked(&packed, &where);
	}
	free(slots.b);
	free(packed.b);
	int failures = check_failure_count();
	printf("test_packed_read: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
