/*
 * trace_gen.h - a small trace-file writer for tests and benchmarks.
 *
 * It writes what a collector writes (docs/FORMAT.md, "Trace files"): a
 * FILE block, the rundown (SOURCE, THREADS, SITES, RINGS) of every source,
 * SLOTS blocks of whole records copied as a ring holds them, LOSS blocks
 * and an END block, every block sealed by rt_block_seal().  The rings are
 * modelled, not real: each (source, ring) has its next slot seq and record
 * seq, and tg_event() appends a record to the ring's pending SLOTS block.
 * The clock is CLOCK_MONOTONIC nanoseconds, so a counter is a time.
 *
 * Links with the tool's objects (format/trace_block.c).  Header only: each
 * test includes it once.
 */
#ifndef RT_TEST_TRACE_GEN_H
#define RT_TEST_TRACE_GEN_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/records.h"
#include "format/trace_block.h"
#include "ringtrace/format.h"

#define TG_MAX_SOURCES 4
#define TG_MAX_RINGS 16
#define TG_MAX_SITES 16
#define TG_MAX_THREADS 32
#define TG_START_NS 1000000000ull /* the sources' time zero, as a counter */

struct tg_ring {
	uint64_t slot;	 /* next slot seq */
	uint64_t record; /* next record seq */
	/* the pending SLOTS block */
	union rt_slot slots[RT_BLOCK_MAX_SLOTS];
	uint32_t used, count;
	uint64_t first, first_record, counter_first, counter_last;
};

struct tg_site {
	int used;
	uint8_t kind; /* enum rt_site_kind; 0 is RT_SITE_TRACE */
	uint8_t nargs;
	uint32_t line;
	char tag[64], file[64], func[64];
	/* log sites (tg_add_log_site): level and the types string, ntypes codes */
	uint8_t level, ntypes;
	uint8_t types[RT_LOG_MAX_ARGS + 1];
	int io; /* the I/O site (tg_add_io_site) */
};

struct tg_source {
	int used;
	int32_t pid, parent_pid;
	uint32_t mode;
	uint64_t start; /* counter at time zero */
	struct rt_thread_entry threads[TG_MAX_THREADS];
	uint32_t thread_count;
	struct tg_site sites[TG_MAX_SITES];
	struct tg_ring rings[TG_MAX_RINGS];
};

struct tg {
	FILE *f;
	uint64_t file_id;
	uint32_t file_seq, block_seq;
	uint64_t bytes, blocks, records;
	int final; /* tg_close writes a RINGS block with RT_BLOCK_F_FINAL per source */
	struct tg_source sources[TG_MAX_SOURCES];
	unsigned char block[RT_BLOCK_MAX_BYTES];
};

static inline struct rt_block_header *tg_begin(struct tg *g, uint32_t type, uint32_t source)
{
	memset(g->block, 0, sizeof(g->block));
	struct rt_block_header *h = (struct rt_block_header *)g->block;
	h->type = (uint8_t)type;
	h->file_id = g->file_id;
	h->file_seq = g->file_seq;
	h->block_seq = g->block_seq;
	h->source = source;
	return h;
}

/* Seal and write the block begun, payload bytes after the header. */
static inline void tg_commit(struct tg *g, size_t payload)
{
	uint32_t size = (uint32_t)((RT_BLOCK_HEADER_SIZE + payload + 7) / 8 * 8);
	rt_block_seal(g->block, size);
	if (fwrite(g->block, 1, size, g->f) != size) {
		perror("trace_gen: write");
		exit(2);
	}
	g->block_seq++;
	g->blocks++;
	g->bytes += size;
}

static inline void tg_raw(struct tg *g, const void *bytes, size_t n)
{
	if (fwrite(bytes, 1, n, g->f) != n) {
		perror("trace_gen: write");
		exit(2);
	}
	g->bytes += n;
}

static inline void tg_file_block(struct tg *g)
{
	tg_begin(g, RT_BLOCK_FILE, 0);
	struct rt_block_file *fb = (struct rt_block_file *)(g->block + RT_BLOCK_HEADER_SIZE);
	fb->created_wall_ns = 1700000000000000000ull + g->file_seq;
	fb->recording_wall_ns = 1700000000000000000ull;
	fb->collector_pid = 4242;
	strcpy(fb->host, "testhost");
	tg_commit(g, sizeof(*fb));
}

static inline void tg_source_block(struct tg *g, uint32_t s)
{
	struct tg_source *src = &g->sources[s];
	tg_begin(g, RT_BLOCK_SOURCE, s);
	struct rt_block_source *b = (struct rt_block_source *)(g->block + RT_BLOCK_HEADER_SIZE);
	struct rt_arena_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, RT_ARENA_MAGIC, sizeof(h.magic));
	h.header_size = RT_ARENA_HEADER_SIZE;
	h.version = RT_FORMAT_VERSION;
	h.compat_version = RT_FORMAT_VERSION;
	h.byte_order = RT_BYTE_ORDER_MARK;
	h.state = RT_ARENA_RUNNING;
	h.ring_bytes = h.ring_bytes_requested = 65536;
	h.slot_size = RT_SLOT_SIZE;
	h.mode = src->mode;
	h.ring_count = TG_MAX_RINGS;
	h.thread_capacity = TG_MAX_THREADS;
	h.site_capacity = TG_MAX_SITES;
	h.pid = src->pid;
	snprintf(h.program, sizeof(h.program), "/usr/bin/prog%u", s);
	h.clock_source = RT_CLOCK_MONOTONIC;
	h.counter_hz = 1000000000ull;
	h.start.counter = src->start;
	h.start.mono_ns = src->start;
	h.start.wall_ns = 1700000000000000000ull + src->start;
	b->parent_pid = src->parent_pid;
	memcpy(b->header, &h, RT_SOURCE_HEADER_BYTES);
	tg_commit(g, sizeof(*b));
}

static inline void tg_threads_block(struct tg *g, uint32_t s)
{
	struct tg_source *src = &g->sources[s];
	struct rt_block_header *h = tg_begin(g, RT_BLOCK_THREADS, s);
	struct rt_block_thread *t = (struct rt_block_thread *)(g->block + RT_BLOCK_HEADER_SIZE);
	uint32_t n = 0;
	for (uint32_t i = 0; i < src->thread_count; i++) {
		if (n == (RT_BLOCK_MAX_BYTES - RT_BLOCK_HEADER_SIZE) / sizeof(*t)) {
			h->count = n;
			tg_commit(g, n * sizeof(*t));
			h = tg_begin(g, RT_BLOCK_THREADS, s);
			n = 0;
		}
		t[n].index = i;
		t[n].entry = src->threads[i];
		n++;
	}
	h->count = n;
	tg_commit(g, n * sizeof(*t));
}

static inline void tg_sites_block(struct tg *g, uint32_t s)
{
	struct tg_source *src = &g->sources[s];
	struct rt_block_header *h = tg_begin(g, RT_BLOCK_SITES, s);
	size_t at = 0;
	for (uint32_t i = 0; i < TG_MAX_SITES; i++) {
		const struct tg_site *site = &src->sites[i];
		if (!site->used)
			continue;
		size_t lt = strlen(site->tag), lf = strlen(site->file), lu = strlen(site->func);
		size_t ly = site->level ? (size_t)site->ntypes + 1 : 0;
		size_t size = (sizeof(struct rt_block_site) + lt + lf + lu + 3 + ly + 7) / 8 * 8;
		if (RT_BLOCK_HEADER_SIZE + at + size > RT_BLOCK_MAX_BYTES) {
			tg_commit(g, at);
			h = tg_begin(g, RT_BLOCK_SITES, s);
			at = 0;
		}
		unsigned char *p = g->block + RT_BLOCK_HEADER_SIZE + at;
		struct rt_block_site r;
		memset(&r, 0, sizeof(r));
		r.index = i;
		r.size = (uint32_t)size;
		r.entry.valid = 1;
		r.entry.line = site->line;
		r.entry.kind = site->kind ? site->kind : RT_SITE_TRACE;
		r.entry.nargs = site->nargs;
		for (unsigned k = 0; k < site->nargs; k++)
			r.entry.arg_types[k] = k == 1 ? RT_ARG_SIGNED | 4 : RT_ARG_UNSIGNED | 4;
		if (site->kind == RT_SITE_ENTER || site->kind == RT_SITE_EXIT)
			/* the library's own: depth, flags, two zeros, function, call site */
			for (unsigned k = 0; k < RT_MAX_ARGS; k++)
				r.entry.arg_types[k] =
				    k < 4 ? RT_ARG_UNSIGNED | 4 : RT_ARG_POINTER | 8;
		r.entry.tag_offset = 0;
		r.entry.tag_length = (uint32_t)lt;
		r.entry.file_offset = (uint32_t)(lt + 1);
		r.entry.file_length = (uint32_t)lf;
		r.entry.func_offset = (uint32_t)(lt + lf + 2);
		r.entry.func_length = (uint32_t)lu;
		memcpy(p, &r, sizeof(r));
		char *str = (char *)p + sizeof(r);
		memcpy(str, site->tag, lt + 1);
		memcpy(str + lt + 1, site->file, lf + 1);
		memcpy(str + lt + lf + 2, site->func, lu + 1);
		if (site->level) {
			struct rt_block_site *w = (struct rt_block_site *)p;
			w->entry.kind = RT_SITE_LOG;
			memset(w->entry.arg_types, 0, sizeof(w->entry.arg_types));
			w->entry.level = site->level;
			w->entry.types_offset = (uint32_t)(lt + lf + lu + 3);
			w->entry.types_length = site->ntypes;
			memcpy(str + lt + lf + lu + 3, site->types, site->ntypes);
			str[lt + lf + lu + 3 + site->ntypes] = 0;
		}
		if (site->io) {
			struct rt_block_site *w = (struct rt_block_site *)p;
			w->entry.kind = RT_SITE_IO;
		}
		at += size;
		h->count++;
	}
	tg_commit(g, at);
}

static inline void tg_rings_flags(struct tg *g, uint32_t s, uint32_t flags)
{
	struct tg_source *src = &g->sources[s];
	struct rt_block_header *h = tg_begin(g, RT_BLOCK_RINGS, s);
	h->flags = flags;
	struct rt_block_ring *r = (struct rt_block_ring *)(g->block + RT_BLOCK_HEADER_SIZE);
	for (uint32_t i = 0; i < TG_MAX_RINGS; i++) {
		r[h->count].index = i;
		r[h->count].state = RT_RING_OWNED;
		r[h->count].slot = src->rings[i].slot;
		r[h->count].record = src->rings[i].record;
		h->count++;
	}
	tg_commit(g, h->count * sizeof(*r));
}

static inline void tg_rings_block(struct tg *g, uint32_t s)
{
	tg_rings_flags(g, s, 0);
}

/* Where every ring of source s ends now (flush its rings first). */
static inline void tg_final_block(struct tg *g, uint32_t s)
{
	tg_rings_flags(g, s, RT_BLOCK_F_FINAL);
}

/* FILE, then the rundown of every source in use. */
/* An FDS block of source s: n descriptors fds[i] named names[i], open since counter. */
static inline void tg_fds_block(struct tg *g, uint32_t s, unsigned n, const uint32_t *fds,
				const char *const *names, uint64_t counter)
{
	struct rt_block_header *h = tg_begin(g, RT_BLOCK_FDS, s);
	size_t at = 0;
	for (unsigned i = 0; i < n; i++) {
		uint16_t len = (uint16_t)strlen(names[i]);
		uint32_t size = rt_block_fd_size(len);
		if (RT_BLOCK_HEADER_SIZE + at + size > RT_BLOCK_MAX_BYTES) {
			tg_commit(g, at);
			h = tg_begin(g, RT_BLOCK_FDS, s);
			at = 0;
		}
		rt_block_fd_fill((struct rt_block_fd *)(g->block + RT_BLOCK_HEADER_SIZE + at),
				 fds[i], counter, 0, RT_IO_OPEN, 0, names[i], len);
		at += size;
		h->count++;
	}
	tg_commit(g, at);
}

static inline void tg_file_head(struct tg *g)
{
	tg_file_block(g);
	for (uint32_t s = 0; s < TG_MAX_SOURCES; s++) {
		if (!g->sources[s].used)
			continue;
		tg_source_block(g, s);
		tg_threads_block(g, s);
		tg_sites_block(g, s);
		tg_rings_block(g, s);
	}
}

static inline void tg_open(struct tg *g, const char *path, uint64_t file_id, uint32_t file_seq)
{
	g->f = fopen(path, "wb");
	if (!g->f) {
		perror(path);
		exit(2);
	}
	g->file_id = file_id;
	g->file_seq = file_seq;
	g->block_seq = 0;
	g->bytes = g->blocks = g->records = 0;
}

/* Zero the model; then add sources, sites and threads, then tg_open and tg_file_head. */
static inline void tg_init(struct tg *g)
{
	memset(g, 0, sizeof(*g));
}

static inline void tg_add_source(struct tg *g, uint32_t s, int32_t pid, int32_t parent,
				 uint32_t mode, uint64_t start)
{
	struct tg_source *src = &g->sources[s];
	src->used = 1;
	src->pid = pid;
	src->parent_pid = parent;
	src->mode = mode;
	src->start = start;
}

static inline void tg_add_site(struct tg *g, uint32_t s, uint32_t index, const char *tag,
			       uint8_t nargs, uint32_t line)
{
	struct tg_site *site = &g->sources[s].sites[index];
	site->used = 1;
	site->nargs = nargs;
	site->line = line;
	snprintf(site->tag, sizeof(site->tag), "%s", tag);
	snprintf(site->file, sizeof(site->file), "src/app%u.c", s);
	snprintf(site->func, sizeof(site->func), "func%u", index);
}

/*
 * The library's enter and exit sites (-finstrument-functions), at enter and
 * enter + 1: write their events with tg_call().
 */
static inline void tg_add_function_sites(struct tg *g, uint32_t s, uint32_t enter)
{
	tg_add_site(g, s, enter, "enter", RT_MAX_ARGS, 0);
	tg_add_site(g, s, enter + 1, "exit", RT_MAX_ARGS, 0);
	g->sources[s].sites[enter].kind = RT_SITE_ENTER;
	g->sources[s].sites[enter + 1].kind = RT_SITE_EXIT;
}

/* A site of kind (RT_SITE_BEGIN or RT_SITE_END: a span's start or end) without arguments. */
static inline void tg_add_span_site(struct tg *g, uint32_t s, uint32_t index, const char *tag,
				    uint8_t kind, uint32_t line)
{
	tg_add_site(g, s, index, tag, 0, line);
	g->sources[s].sites[index].kind = kind;
}

/* A log site: format, level, nargs, and a types string of ntypes codes (ntypes != nargs: unusable).
 */
static inline void tg_add_log_site(struct tg *g, uint32_t s, uint32_t index, const char *format,
				   uint8_t level, uint8_t nargs, const uint8_t *types,
				   uint8_t ntypes, uint32_t line)
{
	tg_add_site(g, s, index, format, nargs, line);
	struct tg_site *site = &g->sources[s].sites[index];
	site->level = level;
	site->ntypes = ntypes;
	memcpy(site->types, types, ntypes);
}

/* The I/O interposer's site: RT_REC_IO records (tg_io). */
static inline void tg_add_io_site(struct tg *g, uint32_t s, uint32_t index)
{
	tg_add_site(g, s, index, "FileIO", 0, 0);
	g->sources[s].sites[index].io = 1;
}

/* A thread that owns ring from its current record on; returns its index. */
static inline uint32_t tg_add_thread(struct tg *g, uint32_t s, int32_t tid, const char *name,
				     uint32_t ring, uint64_t counter)
{
	struct tg_source *src = &g->sources[s];
	uint32_t i = src->thread_count++;
	struct rt_thread_entry *e = &src->threads[i];
	memset(e, 0, sizeof(*e));
	e->state = RT_THREAD_LIVE;
	e->tid = tid;
	e->ring = ring;
	e->first_record = src->rings[ring].record;
	e->end_record = UINT64_MAX;
	e->start_counter = counter;
	snprintf(e->name, sizeof(e->name), "%s", name);
	/* the previous owner of the ring stops here */
	for (uint32_t k = 0; k < i; k++)
		if (src->threads[k].ring == ring && src->threads[k].end_record == UINT64_MAX)
			src->threads[k].end_record = e->first_record;
	return i;
}

/* Write the pending SLOTS block of a ring, if any. */
static inline void tg_flush_ring(struct tg *g, uint32_t s, uint32_t ring)
{
	struct tg_ring *r = &g->sources[s].rings[ring];
	if (!r->count)
		return;
	struct rt_block_header *h = tg_begin(g, RT_BLOCK_SLOTS, s);
	h->ring = ring;
	h->count = r->count;
	h->first = r->first;
	h->first_record = r->first_record;
	h->counter_first = r->counter_first;
	h->counter_last = r->counter_last;
	memcpy(g->block + RT_BLOCK_HEADER_SIZE, r->slots, r->used * sizeof(union rt_slot));
	g->records += r->count;
	tg_commit(g, r->used * sizeof(union rt_slot));
	r->used = r->count = 0;
}

static inline void tg_flush_all(struct tg *g)
{
	for (uint32_t s = 0; s < TG_MAX_SOURCES; s++)
		for (uint32_t r = 0; r < TG_MAX_RINGS; r++)
			if (g->sources[s].used)
				tg_flush_ring(g, s, r);
}

/* Append a record (kind TRACE or LOST) of nslots slots to a ring's pending block. */
static inline void tg_record(struct tg *g, uint32_t s, uint32_t ring, uint8_t kind, uint32_t site,
			     unsigned nslots, uint64_t counter, const uint32_t a32[4],
			     const uint64_t a64[2])
{
	struct tg_ring *r = &g->sources[s].rings[ring];
	if (r->used + nslots > RT_BLOCK_MAX_SLOTS)
		tg_flush_ring(g, s, ring);
	if (r->count == 0) {
		r->first = r->slot;
		r->first_record = r->record;
		r->counter_first = counter;
	}
	union rt_slot *sl = &r->slots[r->used];
	memset(sl, 0, nslots * sizeof(*sl));
	sl[0].head.seq = (uint32_t)r->slot;
	sl[0].head.kind = kind;
	sl[0].head.nslots = (uint8_t)nslots;
	sl[0].head.cpu = (uint16_t)(r->record % 4);
	sl[0].head.record = (uint32_t)r->record;
	sl[0].head.site = site;
	sl[0].head.counter = counter;
	sl[0].head.a0 = a32[0];
	sl[0].head.a1 = a32[1];
	if (nslots == 2) {
		sl[1].cont.seq = (uint32_t)(r->slot + 1);
		sl[1].cont.kind = RT_REC_CONT;
		sl[1].cont.index = 1;
		sl[1].cont.a2 = a32[2];
		sl[1].cont.a3 = a32[3];
		sl[1].cont.a4 = a64[0];
		sl[1].cont.a5 = a64[1];
	}
	r->used += nslots;
	r->count++;
	r->slot += nslots;
	r->record++;
	r->counter_last = counter;
}

/* An RT_LOG or RT_REC_IO record of site: the payload spread over as many slots as it needs. */
static inline void tg_payload_record(struct tg *g, uint32_t s, uint32_t ring, uint8_t kind,
				     uint32_t site, uint64_t counter, const unsigned char *payload,
				     size_t length)
{
	const uint32_t a32[4] = {0, 0, 0, 0};
	const uint64_t a64[2] = {0, 0};
	unsigned nslots = RT_LOG_SLOTS(length);
	struct tg_ring *r = &g->sources[s].rings[ring];
	if (r->used + nslots > RT_BLOCK_MAX_SLOTS)
		tg_flush_ring(g, s, ring);
	union rt_slot *sl = &r->slots[r->used];
	tg_record(g, s, ring, kind, site, 1, counter, a32, a64);
	/* tg_record wrote a one-slot head: make it the record's whole slots */
	r->used += nslots - 1;
	r->slot += nslots - 1;
	sl[0].head.nslots = (uint8_t)nslots;
	unsigned char padded[RT_LOG_PAYLOAD_BYTES(RT_LOG_MAX_SLOTS)];
	memset(padded, 0, sizeof(padded));
	memcpy(padded, payload, length);
	memcpy(sl[0].bytes + 24, padded, 8);
	for (unsigned k = 1; k < nslots; k++) {
		memset(&sl[k], 0, sizeof(sl[k]));
		sl[k].cont.seq = sl[0].head.seq + k;
		sl[k].cont.kind = RT_REC_CONT;
		sl[k].cont.index = (uint8_t)k;
		memcpy(sl[k].bytes + 8, padded + 8 + 24 * (k - 1), 24);
	}
}

static inline void tg_log(struct tg *g, uint32_t s, uint32_t ring, uint32_t site, uint64_t counter,
			  const unsigned char *payload, size_t length)
{
	tg_payload_record(g, s, ring, RT_REC_LOG, site, counter, payload, length);
}

static inline void tg_io(struct tg *g, uint32_t s, uint32_t ring, uint32_t site, uint64_t counter,
			 const unsigned char *payload, size_t length)
{
	tg_payload_record(g, s, ring, RT_REC_IO, site, counter, payload, length);
}

/* An event of site (its argument count decides the slots); a0 = value, a1 = -value. */
static inline void tg_event(struct tg *g, uint32_t s, uint32_t ring, uint32_t site,
			    uint64_t counter, uint32_t value)
{
	const struct tg_site *st = &g->sources[s].sites[site];
	uint32_t a32[4] = {value, (uint32_t) - (int32_t)value, value + 2, value + 3};
	uint64_t a64[2] = {(uint64_t)value << 32, 6};
	tg_record(g, s, ring, RT_REC_TRACE, site, RT_TRACE_SLOTS(st->nargs), counter, a32, a64);
}

/*
 * An enter or exit of the function at addr (site: one of tg_add_function_sites'),
 * at depth, with flags (RT_FUNC_F_*) as the library writes them.
 */
static inline void tg_call(struct tg *g, uint32_t s, uint32_t ring, uint32_t site, uint64_t counter,
			   uint32_t depth, uint32_t flags, uint64_t addr)
{
	uint32_t a32[4] = {depth, flags, 0, 0};
	uint64_t a64[2] = {addr, flags ? 0 : addr + 0x40};
	tg_record(g, s, ring, RT_REC_TRACE, site, 2, counter, a32, a64);
}

/* A LOST record: count records dropped, the last at last_counter. */
static inline void tg_lost_record(struct tg *g, uint32_t s, uint32_t ring, uint64_t counter,
				  uint64_t count, uint64_t last_counter)
{
	uint32_t a32[4] = {RT_LOST_DROPPED, 0, 0, 0};
	uint64_t a64[2] = {count, last_counter};
	tg_record(g, s, ring, RT_REC_LOST, 0, 2, counter, a32, a64);
}

/* Records skipped without a trace (flight: overwritten before a snapshot), slots too. */
static inline void tg_skip(struct tg *g, uint32_t s, uint32_t ring, uint64_t records)
{
	struct tg_ring *r = &g->sources[s].rings[ring];
	tg_flush_ring(g, s, ring);
	r->record += records;
	r->slot += records;
}

static inline void tg_loss_block(struct tg *g, uint32_t s, uint32_t ring, uint32_t thread,
				 uint32_t reason, uint64_t first_record, uint64_t count,
				 uint64_t from, uint64_t to)
{
	struct rt_block_header *h = tg_begin(g, RT_BLOCK_LOSS, s);
	struct rt_block_loss *l = (struct rt_block_loss *)(g->block + RT_BLOCK_HEADER_SIZE);
	l->ring = ring;
	l->thread = thread;
	l->reason = reason;
	l->first_record = first_record;
	l->count = count;
	l->counter_from = from;
	l->counter_to = to;
	h->count = 1;
	tg_commit(g, sizeof(*l));
}

static inline void tg_close(struct tg *g, uint32_t reason)
{
	tg_flush_all(g);
	for (uint32_t s = 0; s < TG_MAX_SOURCES && g->final; s++)
		if (g->sources[s].used)
			tg_final_block(g, s);
	tg_begin(g, RT_BLOCK_END, 0);
	struct rt_block_end *e = (struct rt_block_end *)(g->block + RT_BLOCK_HEADER_SIZE);
	e->reason = reason;
	e->blocks = g->blocks;
	e->records = g->records;
	e->bytes = g->bytes;
	tg_commit(g, sizeof(*e));
	fclose(g->f);
	g->f = NULL;
}

/* Close without an END block (a collector that was killed). */
static inline void tg_abandon(struct tg *g)
{
	fclose(g->f);
	g->f = NULL;
}

#endif /* RT_TEST_TRACE_GEN_H */
