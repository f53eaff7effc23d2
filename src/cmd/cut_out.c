/*
 * cut_out.c - writing `ringtrace cut`'s output (cmd/cut_out.h).
 *
 * Blocks go through the collector's writer (collect/trace_writer.h), which
 * numbers, seals and writes them; this file only fills them.  A block being
 * filled lives in a buffer of its own (one per source for LOSS entries,
 * one per ring for records) and is copied into the writer's block when it
 * is complete, since the writer hands out one block at a time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cut_out.h"
#include "collect/trace_writer.h"
#include "format/trace_block.h"

/* Site strings are cut to this when the three do not fit one block together. */
#define CUT_SITE_STRING_CUT 1024u
/* Bounds on the indices kept in tables here (the reader's own bounds are lower). */
#define CUT_MAX_SOURCES (1u << 16)
#define CUT_MAX_RINGS (1u << 20)

/* A block being filled with entries of one type. */
struct pending {
	union {
		unsigned char bytes[RT_BLOCK_MAX_BYTES];
		struct rt_block_header header;
	} block;
	uint32_t used; /* bytes, header included */
	uint32_t count;
};

/* Where a ring of the output stands, and its block of records being filled. */
struct ring_out {
	uint64_t next_slot;   /* seq tag of the next slot */
	uint64_t next_record; /* the record seq that may join the pending block */
	struct pending *records;
	struct rt_block_ring listed; /* its RINGS entry (state, owner, counters) */
	int used;		     /* listed, or a record written */
};

struct source_out {
	struct ring_out *rings;
	size_t ring_count;
	struct pending *losses;
	uint64_t counter; /* stamps its metadata and LOSS blocks */
	/* what its metadata is written from, at the head and in every copy */
	const struct rt_reader *rd;
	int has_header;
	int32_t parent_pid;
	int head_written; /* copies hold it once its head is whole */
};

struct rt_cut_out {
	struct rt_trace_writer *w;
	struct source_out *sources;
	size_t source_count;
	struct pending *copy; /* the block a copy of the metadata is filled in */
	uint64_t records;
	int failed;
};

static int write_copy(void *context, struct rt_trace_writer *w);

int rt_cut_out_open(struct rt_cut_out **out, const char *path, char *message, size_t size)
{
	*out = NULL;
	struct rt_cut_out *o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(message, size, "out of memory");
		return -ENOMEM;
	}
	struct rt_trace_writer_options options = {.path = path};
	int rc = rt_trace_writer_open(&o->w, &options, NULL, NULL, message, size);
	if (rc) {
		free(o);
		return rc;
	}
	/* the collector's spacing: 1 MiB apart at least, 1/64 of the file at most */
	rt_trace_writer_set_copies(o->w, write_copy, o, 0);
	*out = o;
	return 0;
}

static struct source_out *source_of(struct rt_cut_out *o, uint32_t source)
{
	if (source >= CUT_MAX_SOURCES)
		return NULL;
	if (source >= o->source_count) {
		size_t n = (size_t)source + 1;
		struct source_out *bigger = realloc(o->sources, n * sizeof(*bigger));
		if (!bigger)
			return NULL;
		memset(bigger + o->source_count, 0, (n - o->source_count) * sizeof(*bigger));
		o->sources = bigger;
		o->source_count = n;
	}
	return &o->sources[source];
}

static struct ring_out *ring_of(struct source_out *s, uint32_t ring)
{
	if (ring >= CUT_MAX_RINGS)
		return NULL;
	if (ring >= s->ring_count) {
		size_t n = (size_t)ring + 1;
		struct ring_out *bigger = realloc(s->rings, n * sizeof(*bigger));
		if (!bigger)
			return NULL;
		memset(bigger + s->ring_count, 0, (n - s->ring_count) * sizeof(*bigger));
		s->rings = bigger;
		s->ring_count = n;
	}
	return &s->rings[ring];
}

/* The writer's error, remembered: every later call fails with it. */
static int failed(struct rt_cut_out *o, int rc)
{
	if (rc && !o->failed)
		o->failed = rc;
	return o->failed;
}

/* Hand a filled block to the writer (the caller set its header fields but the writer's). */
static int commit(struct rt_cut_out *o, struct pending *p)
{
	if (o->failed)
		return o->failed;
	if (p->count == 0)
		return 0;
	void *b = rt_trace_writer_block(o->w);
	if (!b)
		return failed(o, -EIO);
	p->block.header.count = p->count;
	memcpy(b, p->block.bytes, p->used);
	int rc = rt_trace_writer_commit(o->w, p->used);
	if (!rc && p->block.header.type == RT_BLOCK_SLOTS)
		o->records += p->count;
	p->used = 0;
	p->count = 0;
	return failed(o, rc);
}

/* Start p as an empty block of type for source. */
static void begin(struct pending *p, uint8_t type, uint32_t source, uint64_t counter)
{
	memset(&p->block.header, 0, sizeof(p->block.header));
	p->block.header.type = type;
	p->block.header.source = source;
	p->block.header.counter_first = counter;
	p->block.header.counter_last = counter;
	p->used = RT_BLOCK_HEADER_SIZE;
	p->count = 0;
}

/* Room for an entry of size bytes in p, committing p first when it is full; NULL on error. */
static void *add(struct rt_cut_out *o, struct pending *p, uint32_t size)
{
	if (p->used + size > RT_BLOCK_MAX_BYTES) {
		struct rt_block_header h = p->block.header;
		if (commit(o, p))
			return NULL;
		begin(p, h.type, h.source, h.counter_first);
		p->block.header.flags = h.flags;
	}
	void *entry = p->block.bytes + p->used;
	memset(entry, 0, size);
	p->used += size;
	p->count++;
	return entry;
}

/* ---- metadata ------------------------------------------------------------ */

static int write_header(struct rt_cut_out *o, struct pending *p, uint32_t source,
			const struct rt_reader *rd, int32_t parent_pid, uint64_t counter)
{
	begin(p, RT_BLOCK_SOURCE, source, counter);
	struct rt_block_source *s = add(o, p, sizeof(*s));
	if (!s)
		return o->failed;
	s->parent_pid = parent_pid;
	/* the losses its counters count are LOSS entries of the cut, as the threads' are */
	struct rt_arena_header h = rd->header;
	h.lost_untracked = h.lost_no_site = h.lost_replaced = 0;
	memcpy(s->header, &h, RT_SOURCE_HEADER_BYTES);
	return commit(o, p);
}

static int write_rings(struct rt_cut_out *o, struct pending *p, struct source_out *so,
		       uint32_t source, const struct rt_block_ring *rings, size_t count,
		       uint64_t counter)
{
	begin(p, RT_BLOCK_RINGS, source, counter);
	for (size_t i = 0; i < count; i++) {
		struct ring_out *r = ring_of(so, rings[i].index);
		if (!r)
			return failed(o, -ENOMEM);
		r->next_slot = rings[i].slot;
		r->next_record = rings[i].record;
		r->listed = rings[i];
		r->used = 1;
		struct rt_block_ring *e = add(o, p, sizeof(*e));
		if (!e)
			return o->failed;
		*e = rings[i];
	}
	return commit(o, p);
}

static int write_threads(struct rt_cut_out *o, struct pending *p, uint32_t source,
			 const struct rt_reader *rd, uint64_t counter)
{
	begin(p, RT_BLOCK_THREADS, source, counter);
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		struct rt_block_thread *e = add(o, p, sizeof(*e));
		if (!e)
			return o->failed;
		e->index = t->entry;
		e->entry.state = t->state;
		e->entry.tid = t->tid;
		e->entry.ring = t->ring;
		e->entry.first_record = t->first_record;
		e->entry.end_record = t->end_record;
		e->entry.start_counter = t->start_counter;
		e->entry.exit_counter = t->exit_counter;
		memcpy(e->entry.name, t->name, sizeof(e->entry.name));
		e->entry.name[sizeof(e->entry.name) - 1] = 0;
	}
	return commit(o, p);
}

static int write_sites(struct rt_cut_out *o, struct pending *p, uint32_t source,
		       const struct rt_reader *rd, uint64_t counter)
{
	begin(p, RT_BLOCK_SITES, source, counter);
	for (uint32_t i = 0; i < rd->sites.count; i++) {
		const struct rt_site *site = rt_site_lookup(&rd->sites, i);
		if (!site)
			continue;
		const char *strings[RT_SITE_STRINGS] = {site->tag, site->file, site->func,
							site->types ? (const char *)site->types
								    : ""};
		uint32_t lengths[RT_SITE_STRINGS] = {site->tag_length, site->file_length,
						     site->func_length,
						     site->types ? site->nargs : 0};
		if (RT_BLOCK_HEADER_SIZE + rt_block_site_size(site->kind, lengths) >
		    RT_BLOCK_MAX_BYTES) {
			/* the argument types (at most RT_LOG_MAX_ARGS bytes) are never cut */
			for (int k = 0; k < 3; k++)
				if (lengths[k] > CUT_SITE_STRING_CUT)
					lengths[k] = CUT_SITE_STRING_CUT;
		}
		struct rt_site_entry entry;
		memset(&entry, 0, sizeof(entry));
		entry.valid = 1;
		entry.line = site->line;
		entry.kind = site->kind;
		entry.nargs = site->nargs;
		entry.level = site->level;
		memcpy(entry.arg_types, site->arg_types, sizeof(entry.arg_types));
		struct rt_block_site *e = add(o, p, rt_block_site_size(site->kind, lengths));
		if (!e)
			return o->failed;
		rt_block_site_fill(e, i, &entry, strings, lengths);
	}
	return commit(o, p);
}

static int write_modules(struct rt_cut_out *o, struct pending *p, uint32_t source,
			 const struct rt_reader *rd, uint64_t counter)
{
	begin(p, RT_BLOCK_MODULES, source, counter);
	for (uint32_t i = 0; i < rd->modules.count; i++) {
		const struct rt_reader_module *m = &rd->modules.items[i];
		struct rt_module_entry e;
		rt_reader_module_entry(m, &e);
		/* the reader keeps only entries that check: a path of at most RT_MODULE_PATH_MAX */
		struct rt_block_module *r = add(o, p, rt_block_module_size(e.path_length));
		if (!r)
			return o->failed;
		rt_block_module_fill(r, m->index, &e, m->path);
	}
	return commit(o, p);
}

/*
 * The descriptors the reader was seeded with that were open: each keeps the
 * time its name holds from, so a cut that ends before one was opened still
 * resolves its records by time (decode/fd_names.h).
 */
static int write_fds(struct rt_cut_out *o, struct pending *p, uint32_t source,
		     const struct rt_reader *rd, uint64_t counter)
{
	begin(p, RT_BLOCK_FDS, source, counter);
	for (uint32_t i = 0; i < rd->fds.count; i++) {
		const struct rt_fd_seed *f = &rd->fds.items[i];
		if (f->state != RT_FD_OPEN)
			continue;
		struct rt_block_fd *r = add(o, p, rt_block_fd_size(f->name_length));
		if (!r)
			return o->failed;
		rt_block_fd_fill(r, (uint32_t)f->fd, f->counter, f->open_flags, f->op, f->flags,
				 f->name, f->name_length);
	}
	return commit(o, p);
}

/*
 * The metadata of a source: SOURCE, RINGS (rings: at the head only, NULL in
 * a copy), THREADS, SITES, MODULES, and at the head FDS.
 */
static int write_metadata(struct rt_cut_out *o, struct pending *p, uint32_t source,
			  struct source_out *so, const struct rt_block_ring *rings,
			  size_t ring_count)
{
	int rc =
	    so->has_header ? write_header(o, p, source, so->rd, so->parent_pid, so->counter) : 0;
	if (!rc && rings)
		rc = write_rings(o, p, so, source, rings, ring_count, so->counter);
	if (!rc)
		rc = write_threads(o, p, source, so->rd, so->counter);
	if (!rc)
		rc = write_sites(o, p, source, so->rd, so->counter);
	if (!rc)
		rc = write_modules(o, p, source, so->rd, so->counter);
	if (!rc && rings && so->rd->fds.count)
		rc = write_fds(o, p, source, so->rd, so->counter);
	return rc;
}

int rt_cut_out_source(struct rt_cut_out *o, uint32_t source, const struct rt_reader *rd,
		      int has_header, int32_t parent_pid, const struct rt_block_ring *rings,
		      size_t ring_count, uint64_t counter)
{
	if (o->failed)
		return o->failed;
	struct source_out *so = source_of(o, source);
	struct pending *p = malloc(sizeof(*p));
	if (!so || !p) {
		free(p);
		return failed(o, -ENOMEM);
	}
	so->counter = counter;
	so->has_header = has_header;
	so->parent_pid = parent_pid;
	so->rd = rd;
	int rc = write_metadata(o, p, source, so, rings, ring_count);
	so->head_written = !rc;
	free(p);
	return failed(o, rc);
}

/*
 * The writer's copy callback: the metadata of every source written so far
 * again (not RINGS: only the head says where the records begin), so that
 * damage to the head leaves the events their threads, sites and names.
 * Between two blocks: the blocks being filled are not touched.
 */
static int write_copy(void *context, struct rt_trace_writer *w)
{
	(void)w;
	struct rt_cut_out *o = context;
	if (!o->copy && !(o->copy = malloc(sizeof(*o->copy))))
		return failed(o, -ENOMEM);
	for (size_t s = 0; s < o->source_count && !o->failed; s++)
		if (o->sources[s].head_written)
			failed(o, write_metadata(o, o->copy, (uint32_t)s, &o->sources[s], NULL, 0));
	return o->failed;
}

/* ---- records and losses ------------------------------------------------- */

int rt_cut_out_record(struct rt_cut_out *o, uint32_t source, uint32_t ring, uint64_t seq,
		      union rt_slot *slots, unsigned nslots)
{
	if (o->failed)
		return o->failed;
	struct source_out *so = source_of(o, source);
	struct ring_out *r = so ? ring_of(so, ring) : NULL;
	if (!r)
		return failed(o, -ENOMEM);
	if (!r->records && !(r->records = calloc(1, sizeof(*r->records))))
		return failed(o, -ENOMEM);
	struct pending *p = r->records;
	/* a block holds consecutive records only: record i is first_record + i */
	if (p->count &&
	    (seq != r->next_record || p->used + nslots * RT_SLOT_SIZE > RT_BLOCK_MAX_BYTES) &&
	    commit(o, p))
		return o->failed;
	if (p->count == 0) {
		begin(p, RT_BLOCK_SLOTS, source, slots[0].head.counter);
		p->block.header.ring = ring;
		p->block.header.first = r->next_slot;
		p->block.header.first_record = seq;
	}
	for (unsigned i = 0; i < nslots; i++) {
		slots[i].head.seq = (uint32_t)r->next_slot++;
		memcpy(p->block.bytes + p->used, &slots[i], RT_SLOT_SIZE);
		p->used += RT_SLOT_SIZE;
	}
	p->count++;
	p->block.header.counter_last = slots[0].head.counter;
	r->next_record = seq + 1;
	r->used = 1;
	return 0;
}

int rt_cut_out_loss(struct rt_cut_out *o, uint32_t source, const struct rt_block_loss *loss)
{
	if (o->failed)
		return o->failed;
	struct source_out *so = source_of(o, source);
	if (!so)
		return failed(o, -ENOMEM);
	if (!so->losses) {
		if (!(so->losses = malloc(sizeof(*so->losses))))
			return failed(o, -ENOMEM);
		begin(so->losses, RT_BLOCK_LOSS, source, so->counter);
	}
	struct rt_block_loss *e = add(o, so->losses, sizeof(*e));
	if (!e)
		return o->failed;
	*e = *loss;
	return 0;
}

int rt_cut_out_flush(struct rt_cut_out *o)
{
	for (size_t s = 0; s < o->source_count && !o->failed; s++) {
		struct source_out *so = &o->sources[s];
		for (size_t r = 0; r < so->ring_count && !o->failed; r++)
			if (so->rings[r].records)
				commit(o, so->rings[r].records);
		if (so->losses)
			commit(o, so->losses);
	}
	if (!o->failed)
		failed(o, rt_trace_writer_flush(o->w));
	return o->failed;
}

/* RINGS with RT_BLOCK_F_FINAL for every source: where each ring's records in the cut end. */
static int write_final(struct rt_cut_out *o)
{
	struct pending *p = malloc(sizeof(*p));
	if (!p)
		return failed(o, -ENOMEM);
	for (size_t s = 0; s < o->source_count && !o->failed; s++) {
		struct source_out *so = &o->sources[s];
		begin(p, RT_BLOCK_RINGS, (uint32_t)s, so->counter);
		p->block.header.flags = RT_BLOCK_F_FINAL;
		for (size_t i = 0; i < so->ring_count; i++) {
			const struct ring_out *r = &so->rings[i];
			if (!r->used)
				continue;
			struct rt_block_ring *e = add(o, p, sizeof(*e));
			if (!e)
				break;
			*e = r->listed;
			e->index = (uint32_t)i;
			e->slot = r->next_slot;
			e->record = r->next_record;
		}
		commit(o, p);
	}
	free(p);
	return o->failed;
}

int rt_cut_out_close(struct rt_cut_out *o, uint32_t reason, char *message, size_t size)
{
	if (!o)
		return 0;
	int rc = reason == RT_FILE_END_STOPPED ? 0 : rt_cut_out_flush(o);
	if (!rc && reason != RT_FILE_END_STOPPED)
		rc = write_final(o);
	int closed = rt_trace_writer_end(o->w, reason);
	if (!rc)
		rc = closed;
	if (rc && message)
		snprintf(message, size, "%s", rt_cut_out_error(o));
	rt_trace_writer_close(o->w, reason);
	for (size_t s = 0; s < o->source_count; s++) {
		for (size_t r = 0; r < o->sources[s].ring_count; r++)
			free(o->sources[s].rings[r].records);
		free(o->sources[s].rings);
		free(o->sources[s].losses);
	}
	free(o->sources);
	free(o->copy);
	free(o);
	return rc;
}

const char *rt_cut_out_error(const struct rt_cut_out *o)
{
	const char *e = rt_trace_writer_error(o->w);
	if (*e)
		return e;
	return o->failed == -ENOMEM ? "out of memory" : o->failed ? "writing failed" : "";
}

uint64_t rt_cut_out_records(const struct rt_cut_out *o)
{
	return o->records;
}

uint64_t rt_cut_out_bytes(const struct rt_cut_out *o)
{
	return rt_trace_writer_bytes(o->w);
}
