/*
 * metadata.c - what a trace file needs besides records: the process
 * (SOURCE), where each ring stands (RINGS), the thread table (THREADS),
 * the site table with its strings (SITES), the module map (MODULES) and
 * the descriptors open when the file began (FDS, of a program traced with
 * --io: a rundown only, never updated; the records say the rest).
 *
 * All of it is written at the head of every file (the rundown), again,
 * entry by entry, when it changes, and all but RINGS again every so many
 * bytes of the file (a copy, trace_writer.h), so that damage to one copy
 * leaves another.  A record may only be written after the
 * metadata it needs: the writer of an arena publishes a site, or a thread's
 * claim on a ring, before any record that uses it, so a pass that runs
 * after the heads were loaded (drain.c) sees everything the records below
 * those heads need.
 *
 * Everything is read from the live mapping with word-sized atomic loads
 * and checked before it is used: an entry whose strings lie outside the
 * string area is not written at all (its records then name a site the
 * file does not hold, and the reader says so).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <time.h>

#include "collect/source.h"
#include "decode/fd_seeds.h"
#include "format/arena_layout.h"
#include "format/trace_block.h"

/* Strings longer than this are cut: a site record must fit one block. */
#define RT_SITE_STRING_MAX 1024u
/*
 * A clock sync alone makes a new SOURCE block at most this often, and so
 * does a change of loss counters alone (in the header, or a ringless
 * thread's, which may count every event): they are written at the end
 * anyway, this keeps a file that ends early close to them.
 */
#define RT_SOURCE_SYNC_INTERVAL_NS 1000000000ull

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rt_source_counter_now(const struct rt_source *s)
{
	switch (s->header.clock_source) {
#if defined(__x86_64__) || defined(__i386__)
	case RT_CLOCK_TSC:
		return __builtin_ia32_rdtsc();
#endif
#if defined(__aarch64__)
	case RT_CLOCK_CNTVCT: {
		uint64_t v;
		__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
		return v;
	}
#endif
	case RT_CLOCK_MONOTONIC:
		return monotonic_ns();
	default:
		return 0;
	}
}

uint32_t rt_source_rings_used(const struct rt_source *s)
{
	struct rt_arena_header h = s->header;
	h.rings_used = __atomic_load_n(&rt_source_live(s)->rings_used, __ATOMIC_ACQUIRE);
	return rt_layout_ring_count_used(&h);
}

/* Copy n bytes (a multiple of 8) that a live writer may be changing, word by word. */
static void copy_live(void *to, const void *from, size_t n)
{
	const uint64_t *src = from;
	unsigned char *dst = to;
	for (size_t i = 0; i < n / 8; i++) {
		uint64_t v = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
		memcpy(dst + i * 8, &v, 8);
	}
}

/* ---- blocks of entries ------------------------------------------------- */

void rt_builder_begin(struct rt_builder *b, struct rt_trace_writer *w, const struct rt_source *s,
		      uint8_t type)
{
	memset(b, 0, sizeof(*b));
	b->w = w;
	b->source = s;
	b->type = type;
}

static int builder_commit(struct rt_builder *b)
{
	if (!b->block)
		return b->rc;
	struct rt_block_header *h = (struct rt_block_header *)b->block;
	h->type = b->type;
	h->flags = b->flags;
	h->source = (uint32_t)b->source->index;
	h->count = b->count;
	h->counter_first = h->counter_last = rt_source_counter_now(b->source);
	int rc = rt_trace_writer_commit(b->w, b->used);
	b->block = NULL;
	if (rc && !b->rc)
		b->rc = rc;
	return b->rc;
}

void *rt_builder_add(struct rt_builder *b, uint32_t size)
{
	if (b->rc)
		return NULL;
	if (b->block && b->used + size > RT_BLOCK_MAX_BYTES && builder_commit(b))
		return NULL;
	if (!b->block) {
		b->block = rt_trace_writer_block(b->w);
		if (!b->block) {
			b->rc = -EIO;
			return NULL;
		}
		b->used = RT_BLOCK_HEADER_SIZE;
		b->count = 0;
	}
	void *entry = b->block + b->used;
	b->used += size;
	b->count++;
	return entry;
}

int rt_builder_end(struct rt_builder *b)
{
	return builder_commit(b);
}

/* ---- SOURCE ------------------------------------------------------------ */

/* Events a header counts lost outside the rings (the live one, or a copy). */
static uint64_t header_lost(const struct rt_arena_header *h)
{
	return __atomic_load_n(&h->lost_untracked, __ATOMIC_RELAXED) +
	       __atomic_load_n(&h->lost_no_site, __ATOMIC_RELAXED) +
	       __atomic_load_n(&h->lost_replaced, __ATOMIC_RELAXED);
}

int rt_metadata_write_source(struct rt_source *s, struct rt_trace_writer *w)
{
	struct rt_builder b;
	rt_builder_begin(&b, w, s, RT_BLOCK_SOURCE);
	struct rt_block_source *src = rt_builder_add(&b, sizeof(struct rt_block_source));
	if (src) {
		src->parent_pid = s->parent_pid;
		copy_live(src->header, s->map, RT_SOURCE_HEADER_BYTES);
		struct rt_arena_header h;
		memcpy(&h, src->header, RT_SOURCE_HEADER_BYTES);
		s->sync_sequence = h.sync.sequence;
		s->state = h.state;
		s->end_reason = h.end_reason;
		s->header_lost = header_lost(&h);
		s->source_written_ns = monotonic_ns();
	}
	return rt_builder_end(&b);
}

/* Whether the header changed enough for a new SOURCE block. */
static int source_changed(const struct rt_source *s)
{
	const struct rt_arena_header *live = rt_source_live(s);
	if (__atomic_load_n(&live->state, __ATOMIC_ACQUIRE) != s->state ||
	    __atomic_load_n(&live->end_reason, __ATOMIC_ACQUIRE) != s->end_reason)
		return 1;
	if (monotonic_ns() - s->source_written_ns < RT_SOURCE_SYNC_INTERVAL_NS)
		return 0;
	uint64_t seq = __atomic_load_n(&live->sync.sequence, __ATOMIC_ACQUIRE);
	return (seq != s->sync_sequence && !(seq & 1)) || header_lost(live) != s->header_lost;
}

/* ---- RINGS ------------------------------------------------------------- */

static int write_rings(struct rt_source *s, struct rt_trace_writer *w, uint32_t flags)
{
	struct rt_builder b;
	uint32_t used = rt_source_rings_used(s);
	rt_builder_begin(&b, w, s, RT_BLOCK_RINGS);
	b.flags = flags;
	for (uint32_t r = rt_source_next_ring(s, 0, used); r < used;
	     r = rt_source_next_ring(s, r + 1, used)) {
		const struct rt_ring_desc *d = rt_source_desc(s, r);
		struct rt_block_ring *e = rt_builder_add(&b, sizeof(*e));
		if (!e)
			break;
		e->index = r;
		e->state = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
		e->owner = __atomic_load_n(&d->owner, __ATOMIC_RELAXED);
		e->slot = s->rings[r].next_slot;
		e->record = s->rings[r].next_record;
		e->dropped = __atomic_load_n(&d->dropped, __ATOMIC_RELAXED);
		e->noted = __atomic_load_n(&d->noted, __ATOMIC_RELAXED);
	}
	return rt_builder_end(&b);
}

/* next_slot and next_record are past the last block committed: the file's end. */
int rt_metadata_final(struct rt_source *s, struct rt_trace_writer *w)
{
	return write_rings(s, w, RT_BLOCK_F_FINAL);
}

/* ---- THREADS ----------------------------------------------------------- */

/*
 * Whether a thread entry is worth writing again: 1 when a field the
 * records need changed, 2 when only its count of events lost for want of a
 * ring did (written at most once per RT_SOURCE_SYNC_INTERVAL_NS), else 0.
 */
static int thread_differs(const struct rt_thread_entry *a, const struct rt_thread_entry *b)
{
	if (a->state != b->state || a->tid != b->tid || a->ring != b->ring ||
	    a->first_record != b->first_record || a->end_record != b->end_record ||
	    a->start_counter != b->start_counter || a->exit_counter != b->exit_counter ||
	    memcmp(a->name, b->name, sizeof(a->name)) != 0)
		return 1;
	return a->lost_no_ring != b->lost_no_ring ? 2 : 0;
}

/*
 * A consistent copy of live entry i into e: 0 if a thread is taking the
 * entry over (FREE, or its serial changed while we copied).
 */
static int copy_thread(const struct rt_source *s, uint32_t i, struct rt_thread_entry *e)
{
	const struct rt_thread_entry *live = rt_source_thread(s, i);
	/* state is published last when the entry is claimed */
	if (__atomic_load_n(&live->state, __ATOMIC_ACQUIRE) == RT_THREAD_FREE)
		return 0;
	uint32_t serial = __atomic_load_n(&live->serial, __ATOMIC_RELAXED);
	copy_live(e, live, sizeof(*e));
	RT_FENCE_ACQUIRE(); /* the copy is complete before state and serial are read again */
	return e->state != RT_THREAD_FREE && e->serial == serial &&
	       __atomic_load_n(&live->state, __ATOMIC_RELAXED) != RT_THREAD_FREE &&
	       __atomic_load_n(&live->serial, __ATOMIC_RELAXED) == serial;
}

uint32_t rt_metadata_thread_number(const struct rt_source *s, uint32_t index)
{
	if (index >= s->header.thread_capacity || !s->thread_written[index] ||
	    __atomic_load_n(&rt_source_thread(s, index)->serial, __ATOMIC_RELAXED) !=
		s->threads[index].serial)
		return RT_NO_RING;
	return s->thread_number[index];
}

/*
 * Tell the library which ended threads it may give the entries of to new
 * ones: those whose last copy (ended) is written and, in stream mode, whose
 * records are all written too.
 */
static void release_ended(struct rt_source *s, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++) {
		const struct rt_thread_entry *e = &s->threads[i];
		if (!s->thread_written[i] || e->state != RT_THREAD_EXITED)
			continue;
		struct rt_thread_entry *live = (struct rt_thread_entry *)rt_source_thread(s, i);
		if (__atomic_load_n(&live->collected, __ATOMIC_RELAXED) == e->serial + 1 ||
		    __atomic_load_n(&live->serial, __ATOMIC_RELAXED) != e->serial)
			continue;
		if (s->header.mode == RT_MODE_STREAM && e->ring < s->ring_count &&
		    s->rings[e->ring].next_record < e->end_record)
			continue; /* records of it not written yet */
		/* publishes: this thread is in the file, its entry may go to another */
		__atomic_store_n(&live->collected, e->serial + 1, __ATOMIC_RELEASE);
	}
}

/* Thread entries: all used ones (all), or those that changed since written. */
static int write_threads(struct rt_source *s, struct rt_trace_writer *w, int all)
{
	uint64_t now = monotonic_ns();
	int losses_due = now - s->threads_lost_ns >= RT_SOURCE_SYNC_INTERVAL_NS;
	int losses_written = 0;
	struct rt_arena_header h = s->header;
	h.threads_used = __atomic_load_n(&rt_source_live(s)->threads_used, __ATOMIC_ACQUIRE);
	uint32_t count = rt_layout_thread_count(&h);
	struct rt_builder b;
	rt_builder_begin(&b, w, s, RT_BLOCK_THREADS);
	const uint64_t each = sizeof(struct rt_thread_entry);
	/* an entry in a hole is free: not read */
	for (uint32_t i =
		 (uint32_t)rt_file_data_next_entry(&s->data, h.thread_table_offset, each, 0, count);
	     i < count; i = (uint32_t)rt_file_data_next_entry(&s->data, h.thread_table_offset, each,
							      i + 1ull, count)) {
		struct rt_thread_entry e;
		if (!copy_thread(s, i, &e))
			continue;
		if (s->thread_written[i] && s->threads[i].serial != e.serial) {
			/* a later thread took the entry: the copies written stand for the old one
			 */
			s->retired_lost += s->threads[i].lost_no_ring;
			s->thread_written[i] = 0;
		}
		if (!s->thread_written[i]) {
			if (e.serial != 0 && s->next_thread_number == RT_NO_RING)
				continue; /* every index is taken */
			s->thread_number[i] = e.serial == 0 ? i : s->next_thread_number++;
		} else if (!all) {
			int differs = thread_differs(&e, &s->threads[i]);
			if (!differs || (differs == 2 && !losses_due))
				continue;
			losses_written |= differs == 2;
		}
		struct rt_block_thread *t = rt_builder_add(&b, sizeof(*t));
		if (!t)
			break;
		t->index = s->thread_number[i];
		t->entry = e;
		t->entry.collected = 0; /* the collector's word to the library, not the thread's */
		s->threads[i] = e;
		s->thread_written[i] = 1;
	}
	if (losses_written || all)
		s->threads_lost_ns = now;
	int rc = rt_builder_end(&b);
	if (!rc)
		release_ended(s, count);
	return rc;
}

int rt_metadata_file_end(struct rt_source *s, struct rt_trace_writer *w)
{
	int rc = rt_metadata_write_source(s, w);
	if (!rc)
		rc = write_threads(s, w, 1);
	if (!rc)
		rc = rt_metadata_final(s, w);
	return rc;
}

uint64_t rt_metadata_lost(const struct rt_source *s)
{
	uint64_t lost = s->header_lost;
	lost += s->retired_lost;
	for (uint32_t i = 0; i < s->header.thread_capacity; i++)
		if (s->thread_written[i])
			lost += s->threads[i].lost_no_ring;
	return lost;
}

/* ---- SITES ------------------------------------------------------------- */

enum { SITE_PENDING = 0, SITE_WRITTEN = 1, SITE_BAD = 2 };

/* A string of a site entry, if it lies whole in the string area and ends with its NUL. */
static const char *site_string(const struct rt_source *s, uint32_t offset, uint32_t length)
{
	const uint64_t capacity = s->header.string_capacity;
	if ((uint64_t)offset + length >= capacity)
		return NULL;
	const char *p = (const char *)s->map + s->header.string_area_offset + offset;
	return p[length] == 0 ? p : NULL;
}

/*
 * Site i as a SITES record into b, if it is published and sound: 1 written,
 * 0 not published yet, -1 never to be written (unsound), or b's error.
 */
static int write_site(struct rt_source *s, struct rt_builder *b, uint32_t i)
{
	const struct rt_site_entry *live =
	    (const struct rt_site_entry *)(s->map + rt_layout_site_offset(&s->header, i));
	/* valid is published after the entry and its strings, which never change again */
	uint32_t valid = __atomic_load_n(&live->valid, __ATOMIC_ACQUIRE);
	if (valid == 0)
		return 0;
	struct rt_site_entry e;
	memcpy(&e, live, sizeof(e));
	if (valid != 1 ||
	    (e.kind == RT_SITE_LOG ? e.nargs > RT_LOG_MAX_ARGS : e.nargs > RT_MAX_ARGS))
		return -1;
	const unsigned n = rt_block_site_strings(e.kind);
	uint32_t offsets[RT_SITE_STRINGS] = {e.tag_offset, e.file_offset, e.func_offset,
					     e.types_offset};
	uint32_t lengths[RT_SITE_STRINGS] = {e.tag_length, e.file_length, e.func_length,
					     e.types_length};
	const char *strings[RT_SITE_STRINGS] = {"", "", "", ""};
	for (unsigned k = 0; k < n; k++) {
		strings[k] = site_string(s, offsets[k], lengths[k]);
		if (!strings[k])
			return -1;
		if (lengths[k] > RT_SITE_STRING_MAX)
			lengths[k] = RT_SITE_STRING_MAX;
	}
	struct rt_block_site *out = rt_builder_add(b, rt_block_site_size(e.kind, lengths));
	if (!out)
		return b->rc;
	rt_block_site_fill(out, i, &e, strings, lengths);
	return 1;
}

/* Sites: every published one (all), or those not written yet. */
static int write_sites(struct rt_source *s, struct rt_trace_writer *w, int all)
{
	struct rt_arena_header h = s->header;
	h.sites_used = __atomic_load_n(&rt_source_live(s)->sites_used, __ATOMIC_ACQUIRE);
	uint32_t count = rt_layout_site_count(&h);
	struct rt_builder b;
	rt_builder_begin(&b, w, s, RT_BLOCK_SITES);
	const uint64_t each = sizeof(struct rt_site_entry);
	/* an entry in a hole is not published yet: not read, and pending */
	for (uint32_t i = (uint32_t)rt_file_data_next_entry(&s->data, h.site_table_offset, each,
							    all ? 0 : s->sites_scanned, count);
	     i < count && !b.rc; i = (uint32_t)rt_file_data_next_entry(
				     &s->data, h.site_table_offset, each, i + 1ull, count)) {
		if (s->site_written[i] == SITE_BAD || (!all && s->site_written[i] == SITE_WRITTEN))
			continue;
		int rc = write_site(s, &b, i);
		if (rc == 1)
			s->site_written[i] = SITE_WRITTEN;
		else if (rc == -1)
			s->site_written[i] = SITE_BAD;
	}
	while (s->sites_scanned < count && s->site_written[s->sites_scanned] != SITE_PENDING)
		s->sites_scanned++;
	return rt_builder_end(&b);
}

/* ---- MODULES ----------------------------------------------------------- */

/*
 * Module i as a MODULES record into b, if it is published and sound: 1
 * written, 0 not published yet, -1 not to be written (unsound), or b's error.
 */
static int write_module(struct rt_source *s, struct rt_builder *b, uint32_t i)
{
	const struct rt_module_entry *live =
	    (const struct rt_module_entry *)(s->map + rt_layout_module_offset(&s->header, i));
	/* valid is published after the entry and its path; unload_counter may come later */
	uint32_t valid = __atomic_load_n(&live->valid, __ATOMIC_ACQUIRE);
	if (valid == 0)
		return 0;
	struct rt_module_entry e;
	copy_live(&e, live, sizeof(e));
	const char *path = site_string(s, e.path_offset, e.path_length);
	if (valid != 1 || !path || e.path_length > RT_MODULE_PATH_MAX)
		return -1;
	struct rt_block_module *out = rt_builder_add(b, rt_block_module_size(e.path_length));
	if (!out)
		return b->rc;
	rt_block_module_fill(out, i, &e, path);
	s->module_unload[i] = e.unload_counter;
	return 1;
}

/* Module entries: every published one (all), or those new or unloaded since written. */
static int write_modules(struct rt_source *s, struct rt_trace_writer *w, int all)
{
	const struct rt_arena_header *live = rt_source_live(s);
	uint32_t used = __atomic_load_n(&live->modules_used, __ATOMIC_ACQUIRE);
	uint32_t unloads = __atomic_load_n(&live->module_unloads, __ATOMIC_ACQUIRE);
	if (!s->header.module_capacity ||
	    (!all && used == s->modules_seen && unloads == s->module_unloads_seen))
		return 0;
	struct rt_arena_header h = s->header;
	h.modules_used = used;
	uint32_t count = rt_layout_module_count(&h);
	int pending = 0;
	struct rt_builder b;
	rt_builder_begin(&b, w, s, RT_BLOCK_MODULES);
	const uint64_t each = sizeof(struct rt_module_entry);
	for (uint32_t i = 0; i < count && !b.rc; i++) {
		/* an entry in a hole is claimed, not yet published: not read, looked at again */
		uint32_t next = (uint32_t)rt_file_data_next_entry(&s->data, h.module_table_offset,
								  each, i, count);
		if (next > i) {
			pending = 1;
			i = next - 1;
			continue;
		}
		const struct rt_module_entry *e =
		    (const struct rt_module_entry *)(s->map + rt_layout_module_offset(&h, i));
		uint64_t unload = __atomic_load_n(&e->unload_counter, __ATOMIC_RELAXED);
		if (!all && s->module_unload[i] == unload)
			continue;
		pending |= write_module(s, &b, i) == 0;
	}
	/* an entry claimed but not yet published: look again next time */
	if (!pending) {
		s->modules_seen = used;
		s->module_unloads_seen = unloads;
	}
	return rt_builder_end(&b);
}

/* ---- FDS --------------------------------------------------------------- */

/*
 * The descriptor table's open entries, whole and checked (decode/fd_seeds.h
 * copies each under its sequence count): a reader of this file alone then
 * names descriptors opened before it began.
 */
static int write_fds(struct rt_source *s, struct rt_trace_writer *w)
{
	if (!s->header.fd_capacity)
		return 0;
	struct rt_fd_seeds seeds = {0};
	int rc = rt_fd_seeds_read_table(&seeds, s->map, &s->header, &s->data);
	struct rt_builder b;
	rt_builder_begin(&b, w, s, RT_BLOCK_FDS);
	for (uint32_t i = 0; !rc && i < seeds.count && !b.rc; i++) {
		const struct rt_fd_seed *f = &seeds.items[i];
		if (f->state != RT_FD_OPEN)
			continue;
		struct rt_block_fd *out = rt_builder_add(&b, rt_block_fd_size(f->name_length));
		if (out)
			rt_block_fd_fill(out, (uint32_t)f->fd, f->counter, f->open_flags, f->op,
					 f->flags, f->name, f->name_length);
	}
	rt_fd_seeds_free(&seeds);
	int end = rt_builder_end(&b);
	return rc ? rc : end;
}

/* ---- putting it together ----------------------------------------------- */

int rt_metadata_rundown(struct rt_collector *c, struct rt_source *s, struct rt_trace_writer *w)
{
	(void)c;
	int rc = rt_metadata_write_source(s, w);
	if (!rc)
		rc = write_rings(s, w, 0);
	if (!rc)
		rc = write_threads(s, w, 1);
	if (!rc)
		rc = write_sites(s, w, 1);
	if (!rc)
		rc = write_modules(s, w, 1);
	if (!rc)
		rc = write_fds(s, w);
	return rc;
}

/*
 * A copy inside the file: everything the records need (the clock, every
 * thread entry with its ring ownership, every site), but not RINGS, which
 * only the head of a file may say (where the file's records begin).
 */
int rt_metadata_copy(struct rt_source *s, struct rt_trace_writer *w)
{
	int rc = rt_metadata_write_source(s, w);
	if (!rc)
		rc = write_threads(s, w, 1);
	if (!rc)
		rc = write_sites(s, w, 1);
	if (!rc)
		rc = write_modules(s, w, 1);
	return rc;
}

int rt_metadata_update(struct rt_collector *c, struct rt_source *s, int final)
{
	int rc = write_sites(s, c->writer, 0);
	if (!rc)
		rc = write_modules(s, c->writer, 0);
	if (!rc)
		rc = write_threads(s, c->writer, final);
	if (!rc && (final || source_changed(s)))
		rc = rt_metadata_write_source(s, c->writer);
	return rc;
}
