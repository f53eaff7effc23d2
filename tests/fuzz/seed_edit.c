/*
 * seed_edit.c - make fuzz seeds out of real arenas (tests/fuzz/make_corpus.sh).
 *
 *   seed_edit shrink IN OUT         the arena with its tables cut to what is used
 *   seed_edit variant KIND IN OUT   a shrunk arena changed in one way:
 *     header-only  the header alone: no threads, sites, strings or rings
 *     live         the writer looks alive (pid 1, start time 0) and mid-record
 *     torn         the writer died inside a two-slot record
 *     slots        slots that do not fit their place: seq, kind, size, site,
 *                  continuation
 *     sites        site entries with strings out of bounds or unterminated,
 *                  too many arguments, an unknown kind
 *     threads      thread entries that overlap on a ring, point past the
 *                  rings, end before they start, have an unterminated name
 *     counters     ring counters and table counts far beyond what is there
 *     clock        a sync pair a writer died in, a 1 Hz counter, a start
 *                  after every event
 *     truncated    the first half of the file
 *     header-fields  header fields overwritten (magic, ring count, an offset, the
 *                  counter frequency, threads_used, mode): repaired from the rest
 *     geometry     table sizes and ring size gone (zeroed): refused, nothing fits
 *     tables       a thread entry overwritten and one zeroed, a site entry and a
 *                  string zeroed, a ring descriptor zeroed
 *     cut-slots    a run of slots zeroed in a ring window, and the file cut
 *                  inside the last ring
 *
 * The library's arenas have room for thousands of threads and sites: a
 * megabyte and a half of zeros, which a fuzzer would spend its time mutating.
 * The capacities are fields of the header, so an arena cut down to what
 * its writer used reads exactly as the original does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/arena_layout.h"

struct arena {
	unsigned char *bytes;
	size_t size;
	struct rt_arena_header *h;
};

static void die(const char *what, const char *path)
{
	fprintf(stderr, "seed_edit: %s: %s\n", path, what);
	exit(1);
}

static void load(struct arena *a, const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die(strerror(errno), path);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	a->size = size > 0 ? (size_t)size : 0;
	a->bytes = malloc(a->size + 1);
	if (!a->bytes || fread(a->bytes, 1, a->size, f) != a->size)
		die("cannot read", path);
	fclose(f);
	a->h = (struct rt_arena_header *)a->bytes;
	struct rt_arena_header checked;
	struct rt_layout_error error;
	if (rt_layout_check(a->bytes, a->size, &checked, &error) != 0)
		die(error.message, path);
}

static void save(const struct arena *a, size_t size, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(a->bytes, 1, size, f) != size || fclose(f) != 0)
		die("cannot write", path);
}

static uint64_t align8(uint64_t v)
{
	return (v + 7) / 8 * 8;
}

static struct rt_thread_entry *thread_entry(struct arena *a, uint32_t i)
{
	return (struct rt_thread_entry *)(a->bytes + rt_layout_thread_offset(a->h, i));
}

static struct rt_site_entry *site_entry(struct arena *a, uint32_t i)
{
	return (struct rt_site_entry *)(a->bytes + rt_layout_site_offset(a->h, i));
}

static struct rt_ring_desc *ring_desc(struct arena *a, uint32_t ring)
{
	return (struct rt_ring_desc *)(a->bytes + rt_layout_ring_desc_offset(a->h, ring));
}

static union rt_slot *slot(struct arena *a, uint32_t ring, uint64_t seq)
{
	union rt_slot *slots = (union rt_slot *)(a->bytes + rt_layout_ring_offset(a->h, ring));
	return &slots[seq & (rt_layout_ring_slots(a->h) - 1)];
}

/* The tables one after another, each as large as its used part. */
static void shrink(const char *in, const char *out)
{
	struct arena a, b;
	load(&a, in);
	const struct rt_arena_header *h = a.h;
	uint32_t threads = rt_layout_thread_count(h);
	uint32_t sites = rt_layout_site_count(h);
	uint64_t strings = rt_layout_string_bytes(h);
	uint32_t modules = rt_layout_module_count(h);
	uint64_t at = RT_ARENA_HEADER_SIZE;
	struct rt_arena_header n = *h;
	n.thread_capacity = threads;
	n.thread_table_offset = at;
	at += (uint64_t)threads * sizeof(struct rt_thread_entry);
	n.site_capacity = sites;
	n.site_table_offset = at;
	at += (uint64_t)sites * sizeof(struct rt_site_entry);
	n.string_capacity = align8(strings);
	n.string_area_offset = at;
	at += n.string_capacity;
	n.module_capacity = modules;
	n.module_table_offset = modules ? at : 0;
	at += (uint64_t)modules * sizeof(struct rt_module_entry);
	n.ring_desc_offset = at;
	at += (uint64_t)h->ring_count * sizeof(struct rt_ring_desc);
	n.ring_area_offset = at;
	at += h->ring_count * h->ring_bytes;
	n.arena_size = at;

	b.size = (size_t)at;
	b.bytes = calloc(1, b.size);
	if (!b.bytes)
		die("out of memory", out);
	memcpy(b.bytes, &n, sizeof(n));
	memcpy(b.bytes + n.thread_table_offset, a.bytes + h->thread_table_offset,
	       (size_t)threads * sizeof(struct rt_thread_entry));
	memcpy(b.bytes + n.site_table_offset, a.bytes + h->site_table_offset,
	       (size_t)sites * sizeof(struct rt_site_entry));
	memcpy(b.bytes + n.string_area_offset, a.bytes + h->string_area_offset, (size_t)strings);
	if (modules)
		memcpy(b.bytes + n.module_table_offset, a.bytes + h->module_table_offset,
		       (size_t)modules * sizeof(struct rt_module_entry));
	memcpy(b.bytes + n.ring_desc_offset, a.bytes + h->ring_desc_offset,
	       (size_t)h->ring_count * sizeof(struct rt_ring_desc));
	memcpy(b.bytes + n.ring_area_offset, a.bytes + h->ring_area_offset,
	       (size_t)(h->ring_count * h->ring_bytes));
	save(&b, b.size, out);
	free(a.bytes);
	free(b.bytes);
}

/* The ring of the last thread entry that has one. */
static uint32_t last_ring(struct arena *a)
{
	for (uint32_t i = rt_layout_thread_count(a->h); i > 0; i--) {
		uint32_t ring = thread_entry(a, i - 1)->ring;
		if (ring < a->h->ring_count)
			return ring;
	}
	die("no thread has a ring", "input");
	return 0;
}

static void header_only(struct arena *a)
{
	struct rt_arena_header *h = a->h;
	h->thread_capacity = h->site_capacity = h->ring_count = 0;
	h->string_capacity = 0;
	h->thread_table_offset = h->site_table_offset = h->string_area_offset =
	    h->ring_desc_offset = h->ring_area_offset = RT_ARENA_HEADER_SIZE;
	h->arena_size = RT_ARENA_HEADER_SIZE;
	a->size = RT_ARENA_HEADER_SIZE;
}

/* A record of two slots at head: reserved and its first slot written. */
static void half_record(struct arena *a, uint32_t ring)
{
	struct rt_ring_desc *d = ring_desc(a, ring);
	struct rt_slot_head *s = &slot(a, ring, d->head)->head;
	uint64_t previous = slot(a, ring, d->head - 1)->head.counter;
	d->reserve = d->head + 2;
	memset(s, 0, sizeof(*s));
	s->seq = (uint32_t)d->head;
	s->kind = RT_REC_TRACE;
	s->nslots = 2;
	s->record = (uint32_t)d->records;
	s->site = 1;
	s->counter = previous + 1;
}

static void live(struct arena *a)
{
	a->h->state = RT_ARENA_RUNNING;
	a->h->pid = 1; /* exists wherever the corpus is replayed */
	a->h->process_start = 0;
	half_record(a, last_ring(a));
}

static void torn(struct arena *a)
{
	a->h->state = RT_ARENA_RUNNING;
	a->h->pid = 0; /* no such process */
	uint32_t ring = last_ring(a);
	half_record(a, ring);
	ring_desc(a, ring)->records++; /* died between steps 4 and 5 */
}

static void slots(struct arena *a)
{
	uint32_t ring = last_ring(a);
	const struct rt_ring_desc *d = ring_desc(a, ring);
	uint64_t n = rt_layout_ring_slots(a->h);
	uint64_t from = d->head > n ? d->head - n : 0;
	unsigned k = 0;
	for (uint64_t s = from; s < d->head; s += 9) {
		union rt_slot *u = slot(a, ring, s);
		switch (k++ % 6) {
		case 0:
			u->head.seq ^= 1;
			break;
		case 1:
			u->head.kind = 0x55;
			break;
		case 2:
			u->head.nslots = 3;
			break;
		case 3:
			u->head.site = 999;
			break;
		case 4:
			u->head.record += 7;
			break;
		default:
			/* a continuation slot where a record should start, and the reverse */
			u->cont.kind = RT_REC_CONT;
			u->cont.index = 2;
			break;
		}
	}
}

static void sites(struct arena *a)
{
	uint32_t count = rt_layout_site_count(a->h);
	if (count < 8)
		die("too few sites", "input");
	site_entry(a, 1)->tag_length = UINT32_MAX;
	site_entry(a, 2)->file_length -= 1; /* its NUL is not where its length says */
	site_entry(a, 3)->nargs = RT_MAX_ARGS + 1;
	site_entry(a, 4)->kind = 0;
	site_entry(a, 5)->func_offset = (uint32_t)a->h->strings_used;
	site_entry(a, 6)->valid = 2;
	site_entry(a, 7)->tag_offset = UINT32_MAX - 2;
	site_entry(a, 7)->tag_length = 1;
}

static void threads(struct arena *a)
{
	uint32_t count = rt_layout_thread_count(a->h);
	if (count < 4)
		die("too few threads", "input");
	struct rt_thread_entry *e0 = thread_entry(a, 0), *e1 = thread_entry(a, 1);
	memset(e0->name, 'x', sizeof(e0->name));
	e0->tid = -e0->tid;
	thread_entry(a, 2)->ring = a->h->ring_count + 5;
	/* the last one claims part of the records of the one before it, backwards */
	struct rt_thread_entry *e3 = thread_entry(a, count - 1);
	e3->ring = e1->ring;
	e3->first_record = e1->first_record + 3;
	e3->end_record = e3->first_record - 1;
	e1->end_record = UINT64_MAX;
}

static void counters(struct arena *a)
{
	struct rt_arena_header *h = a->h;
	struct rt_ring_desc *d0 = ring_desc(a, 0), *d1 = ring_desc(a, h->ring_count - 1);
	d0->records |= 0xffffffff00000000ull;
	d0->dropped = UINT64_MAX;
	d1->head = d1->reserve + 1000;
	d1->tail = UINT64_MAX;
	h->threads_used = h->thread_capacity + 3;
	h->sites_used = UINT32_MAX;
	h->rings_used = 99;
	h->strings_used = UINT64_MAX;
	h->lost_untracked = UINT64_MAX;
	h->lost_no_site = UINT64_MAX - 1;
}

static void clock_damage(struct arena *a)
{
	struct rt_arena_header *h = a->h;
	h->sync.sequence = 3; /* odd: a writer died inside */
	h->counter_hz = 1;
	h->start.counter = UINT64_MAX - 10;
}

/* Header fields a stray write overwrote: each one can be recomputed from the others. */
static void header_fields(struct arena *a)
{
	struct rt_arena_header *h = a->h;
	h->magic[0] = 'X';
	h->ring_count = 0xffffffffu;
	h->site_table_offset = 0x7fffffffffff0000ull;
	h->counter_hz = 0;
	h->threads_used = 0;
	h->mode = 77;
}

/* The geometry zeroed: no layout fits, the file is refused. */
static void geometry(struct arena *a)
{
	struct rt_arena_header *h = a->h;
	h->ring_bytes = h->ring_bytes_requested = 0;
	h->ring_count = h->thread_capacity = h->site_capacity = 0;
	h->string_capacity = 0;
}

/* Table entries damaged one by one: each costs its own records only. */
static void tables(struct arena *a)
{
	uint32_t threads = rt_layout_thread_count(a->h), sites = rt_layout_site_count(a->h);
	if (threads < 3 || sites < 4)
		die("too few threads or sites", "input");
	memset(thread_entry(a, 0), 0xa5, 40); /* state, tid, ring, records: garbage */
	memset(thread_entry(a, 1), 0, sizeof(struct rt_thread_entry));
	memset(site_entry(a, 2), 0, sizeof(struct rt_site_entry));
	struct rt_site_entry *e = site_entry(a, 3);
	a->bytes[a->h->string_area_offset + e->tag_offset] = 0; /* a NUL inside its tag */
	memset(ring_desc(a, last_ring(a)), 0, sizeof(struct rt_ring_desc));
}

/* Zeroed slots in a ring window; the file ends inside the last ring. */
static void cut_slots(struct arena *a)
{
	uint32_t ring = last_ring(a);
	const struct rt_ring_desc *d = ring_desc(a, ring);
	for (uint64_t s = d->head > 20 ? d->head - 20 : 0; s + 10 < d->head; s++)
		memset(slot(a, ring, s), 0, RT_SLOT_SIZE);
	a->size = (size_t)(rt_layout_ring_offset(a->h, a->h->ring_count - 1) + 1000);
}

static void variant(const char *kind, const char *in, const char *out)
{
	struct arena a;
	load(&a, in);
	if (strcmp(kind, "header-only") == 0)
		header_only(&a);
	else if (strcmp(kind, "live") == 0)
		live(&a);
	else if (strcmp(kind, "torn") == 0)
		torn(&a);
	else if (strcmp(kind, "slots") == 0)
		slots(&a);
	else if (strcmp(kind, "sites") == 0)
		sites(&a);
	else if (strcmp(kind, "threads") == 0)
		threads(&a);
	else if (strcmp(kind, "counters") == 0)
		counters(&a);
	else if (strcmp(kind, "clock") == 0)
		clock_damage(&a);
	else if (strcmp(kind, "truncated") == 0)
		a.size /= 2;
	else if (strcmp(kind, "header-fields") == 0)
		header_fields(&a);
	else if (strcmp(kind, "geometry") == 0)
		geometry(&a);
	else if (strcmp(kind, "tables") == 0)
		tables(&a);
	else if (strcmp(kind, "cut-slots") == 0)
		cut_slots(&a);
	else
		die("unknown variant", kind);
	save(&a, a.size, out);
	free(a.bytes);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "shrink") == 0) {
		shrink(argv[2], argv[3]);
		return 0;
	}
	if (argc == 5 && strcmp(argv[1], "variant") == 0) {
		variant(argv[2], argv[3], argv[4]);
		return 0;
	}
	fprintf(stderr, "usage: seed_edit shrink IN OUT\n"
			"       seed_edit variant KIND IN OUT\n");
	return 2;
}
