/*
 * trace_set.c - arenas and trace files as one time line (read/trace_set.h).
 *
 * Opening: inputs are expanded (a directory is its arenas and trace files,
 * by name), arenas go to the arena reader, trace files are sorted by
 * recording and file sequence and scanned once each.  The scan keeps, per
 * recording and source: the newest copy of the source's header, of every
 * thread entry and of every site; the first RINGS entry of every ring (where
 * its records begin in the first file read); the LOSS entries; and, per
 * ring, one index entry per SLOTS block.  Damaged regions go to the
 * recording's context reader.  When it can be sure of the same result, the
 * scan also counts every SLOTS block it passes, so that counting reads no
 * file again ("counting during the scan" below).
 *
 * Reading: one cursor per ring holds the items of one block at a time.  Its
 * blocks are taken in record order (a stable sort of the index: snapshots
 * may overlap, and the first copy of a record wins); each record is checked
 * as the arena reader checks one, and its full seq must lie in the block's
 * range and rise.  A record seq that is neither read nor covered by a LOSS
 * entry is a gap: a damaged loss.  The k-way merge (read/merge.h) over all
 * cursors (trace-file ring cursors, arena thread cursors that read a window
 * at a time, loss lists) gives the time line.
 *
 * Long because: its jobs (input grouping, the scan, rebuilding each
 * source's metadata, gap attribution, block decoding, counting, counting
 * during the scan, the merge) share one private state, struct set_private
 * and the per-recording tables below; each should become a file of its
 * own once that state has a private header.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/packed_slots.h"
#include "format/records.h"
#include "read/arena_cursor.h"
#include "read/entry_checks.h"
#include "read/input_dir.h"
#include "read/merge.h"
#include "read/trace_set.h"

/* Bounds on indices a file may name: past them an entry is ignored. */
#define MAX_SOURCES (1u << 16)
#define MAX_RINGS (1u << 16)
#define MAX_THREADS (1u << 20)
#define MAX_SITES (1u << 20)
/* Read-ahead of all ring cursors together, and of one. */
#define READAHEAD_BUDGET (32u << 20)
#define READAHEAD_MAX (256u << 10)
/* Items one block can give: a record or a gap before each slot, and a few more. */
#define CURSOR_ITEMS (2 * RT_BLOCK_MAX_SLOTS + 8)
/* Bytes read at once by the count pass in file order. */
#define SEQUENTIAL_READ (256u << 10)

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t s;
	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

/* A growing array: *items of *count, room for *capacity.  0 or -ENOMEM. */
static int grow(void **items, size_t *capacity, size_t need, size_t size)
{
	if (need <= *capacity)
		return 0;
	size_t c = *capacity ? *capacity : 8;
	while (c < need)
		c *= 2;
	void *bigger = realloc(*items, c * size);
	if (!bigger)
		return -ENOMEM;
	memset((char *)bigger + *capacity * size, 0, (c - *capacity) * size);
	*items = bigger;
	*capacity = c;
	return 0;
}

/* ---- what the scan keeps ------------------------------------------------- */

struct block_ref {
	uint64_t offset;
	uint64_t first_record;
	uint64_t counter_first;
	uint64_t counter_last;
	uint32_t file;	/* index in set->files */
	uint32_t count; /* records */
	uint64_t order; /* position in the recording: file order, then offset */
};

struct cover {
	uint64_t first, end; /* record seqs [first, end) a LOSS entry accounts for */
};

struct region_gap {
	uint64_t first; /* the gap's first record seq */
};

struct ring_state {
	int has_start;
	uint64_t start_record; /* the first RINGS entry read */
	int has_end;
	uint64_t end_record;  /* the newest RT_BLOCK_F_FINAL entry: where its records end */
	uint64_t end_counter; /* when that was written */
	/*
	 * The index of its SLOTS blocks.  A set opened only to count
	 * (rt_trace_set_open_counting) keeps a run of blocks whose records
	 * follow each other as one entry while the scan counts them itself:
	 * then first_record, count and the counters span the run, offset is
	 * its last block's, and no cursor can read it (index_merged).
	 */
	struct block_ref *blocks;
	size_t block_count, block_capacity;
	struct block_ref last; /* the last SLOTS block kept, as itself (early_slots) */
	struct cover *covers;
	size_t cover_count, cover_capacity;
	/* the gaps a damaged region explains, by first record (attribute_gaps) */
	struct region_gap *region_gaps;
	size_t region_gap_count, region_gap_capacity;
};

struct site_copy {
	int present;
	struct rt_site_entry entry;
	char *strings; /* the record's strings, NUL-terminated */
	uint32_t strings_size;
};

struct thread_copy {
	int present;
	struct rt_thread_entry entry;
	uint64_t earlier_no_ring; /* lost_no_ring before the files read (see earlier_losses) */
};

/* The newest copy of a module entry; path points into its own allocation. */
struct module_copy {
	int present;
	struct rt_module_entry entry;
	char *path; /* path_length bytes and a NUL, or NULL when the record's path is bad */
};

/* A trace-file source while scanning, and what it keeps after. */
struct file_source {
	uint32_t index; /* in set->sources; UINT32_MAX until made */
	int has_header;
	struct rt_arena_header header;
	int32_t parent_pid;
	struct thread_copy *threads;
	size_t thread_capacity;
	struct site_copy *sites;
	size_t site_capacity;
	struct module_copy *modules;
	size_t module_capacity;
	/* the FDS records of the newest file that holds any (its head's rundown) */
	struct rt_fd_seeds fds;
	uint32_t fds_file_seq;
	int has_fds;
	struct ring_state *rings;
	size_t ring_capacity;
	struct rt_block_loss *losses;
	size_t loss_count, loss_capacity;
	/* after the scan */
	uint32_t *thread_of_entry; /* table index -> reader thread, UINT32_MAX if none */
	struct rt_item *loss_items;
	size_t loss_item_count;
	struct rt_counts unattributed; /* counts of items of no thread */
	uint32_t first_file_seq;
	struct early_source *early; /* counting during the scan */
	/*
	 * The header's lost events before the files read, when they do not
	 * start the recording: its counters in the first SOURCE block of the
	 * first file read (the head's rundown), which earlier files count.
	 */
	int has_earlier;
	uint64_t earlier_untracked, earlier_no_site, earlier_replaced;
};

struct recording {
	uint64_t file_id;
	uint32_t context;	 /* source index of its context */
	uint32_t first_file_seq; /* of the first file read */
	int have_first;
	struct file_source **sources; /* by source number */
	size_t source_capacity;
	struct rt_item *regions; /* one loss per damaged region, in the context's terms */
	size_t region_count, region_capacity;
	struct region_place *places; /* where each of regions is, same order */
	size_t place_capacity;
	struct rt_item *unplaced; /* records END blocks count that no ring tells of (0 or 1) */
	size_t unplaced_count;
};

/* Where a damaged region is: file (scan order), then offset: rising along the list. */
struct region_place {
	uint32_t file;
	uint64_t offset;
};

struct ring_cursor;

struct cursor {
	uint32_t source;
	const struct rt_item *next, *end;
	const struct rt_item *base; /* static cursors: their items */
	size_t count;
	struct ring_cursor *ring;      /* a trace file's ring, or: */
	struct rt_arena_cursor *arena; /* an arena thread's items; both NULL: a static array */
};

struct owner {
	uint64_t first, end;
	uint32_t thread; /* reader thread */
	int32_t tid;
};

struct ring_cursor {
	struct rt_trace_set *set;
	struct rt_reader *rd;
	struct file_source *fs;
	struct ring_state *rs;
	uint32_t ring;
	uint32_t source;
	struct owner *owners;
	size_t owner_count, owner_at;
	size_t block_at, cover_at, region_gap_at;
	uint64_t expected;
	uint64_t unknown, lost_records; /* this pass */
	int counted;			/* counted in file order (count_in_file_order) */
	uint64_t *site_counts;		/* where decode_block counts: NULL, the source's */
	uint64_t site_misses;		/* records whose site lookup failed */
	struct rt_item items[CURSOR_ITEMS];
	/* the payloads of the block's log items: at most what its slots hold */
	unsigned char payload[RT_BLOCK_MAX_SLOTS * RT_SLOT_SIZE];
	uint32_t payload_used;
	unsigned char *readahead;
	size_t readahead_capacity, readahead_length;
	uint64_t readahead_offset;
	uint32_t readahead_file;
	unsigned char block[RT_BLOCK_MAX_BYTES];
};

struct set_private {
	struct recording *recordings;
	size_t recording_count, recording_capacity;
	struct file_source *current_fs; /* scan state */
	struct recording *current_rec;
	uint32_t current_file;
	uint64_t last_counter; /* of the last good block of the file being scanned */
	size_t source_capacity, file_capacity;
	struct cursor *cursors;
	size_t cursor_count;
	/* the merge over the cursors (read/merge.h); sources made with the cursors */
	struct rt_merge_source *merge_sources;
	struct rt_merge merge;
	int32_t tid;
	int error;
	char **owned_paths; /* paths found in directories */
	size_t owned_count, owned_capacity;
	struct rt_item held; /* the item rt_trace_set_next returned (its payload: the cursor's) */
	/* counting during the scan (early_slots): off once it cannot be sure */
	int early_off;
	int early_done; /* the scan counted every SLOTS block */
	uint64_t early_file_id;
	int early_have_file;
	uint64_t early_work; /* metadata rebuilt while counting early, bounded */
	struct ring_cursor *early_cursor;
	uint64_t early_events, early_first, early_last;
	uint32_t early_first_source, early_last_source;
	int early_have_span;
	int seek_off; /* rt_trace_set_start_from reads from the start (RINGTRACE_SEEK=0) */
	/*
	 * Opened only to count: the block index is kept in runs while the scan
	 * counts (index_merged once a run holds two blocks), so that its memory
	 * does not grow with the file; the inputs, to open again with the whole
	 * index when the scan's count cannot be used after all.
	 */
	int counting_only;
	int index_merged;
	char *const *input_paths;
	size_t input_path_count;
};

static struct set_private *priv_of(const struct rt_trace_set *set)
{
	return set->priv;
}

/* ---- sources ------------------------------------------------------------ */

static int add_source(struct rt_trace_set *set, struct rt_reader *rd, const char *name,
		      uint32_t *index)
{
	struct set_private *p = priv_of(set);
	if (grow((void **)&set->sources, &p->source_capacity, set->source_count + 1,
		 sizeof(*set->sources)))
		return -ENOMEM;
	struct rt_set_source *s = &set->sources[set->source_count];
	memset(s, 0, sizeof(*s));
	s->reader = rd;
	s->name = name;
	*index = (uint32_t)set->source_count++;
	return 0;
}

/* An empty metadata-only reader: no threads, sites or items yet. */
static struct rt_reader *empty_reader(const char *name)
{
	struct rt_reader *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return NULL;
	rd->path = name;
	rd->writer = RT_WRITER_CLOSED;
	rd->header.clock_source = RT_CLOCK_MONOTONIC;
	struct rt_clock_pair zero = {0, 0, 0};
	rt_timebase_init(&rd->timebase, RT_CLOCK_MONOTONIC, 1000000000ull, &zero, NULL);
	return rd;
}

static void free_meta_reader(struct rt_reader *rd)
{
	if (!rd)
		return;
	free(rd->threads);
	rt_site_table_free(&rd->sites);
	rt_reader_modules_free(&rd->modules);
	rt_fd_seeds_free(&rd->fds);
	rt_damage_free(&rd->damage);
	free(rd);
}

static struct recording *find_recording(struct rt_trace_set *set, uint64_t file_id,
					const char *name)
{
	struct set_private *p = priv_of(set);
	for (size_t i = 0; i < p->recording_count; i++)
		if (p->recordings[i].file_id == file_id)
			return &p->recordings[i];
	if (grow((void **)&p->recordings, &p->recording_capacity, p->recording_count + 1,
		 sizeof(*p->recordings)))
		return NULL;
	struct rt_reader *rd = empty_reader(name);
	uint32_t index;
	if (!rd || add_source(set, rd, name, &index)) {
		free(rd);
		return NULL;
	}
	set->sources[index].context = 1;
	set->sources[index].file_id = file_id;
	struct recording *r = &p->recordings[p->recording_count++];
	memset(r, 0, sizeof(*r));
	r->file_id = file_id;
	r->context = index;
	set->sources[index].recording = index;
	return r;
}

static struct file_source *find_file_source(struct recording *r, uint32_t number)
{
	if (number >= MAX_SOURCES)
		return NULL;
	if (grow((void **)&r->sources, &r->source_capacity, (size_t)number + 1,
		 /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		 sizeof(*r->sources)))
		return NULL;
	if (!r->sources[number]) {
		r->sources[number] = calloc(1, sizeof(struct file_source));
		if (r->sources[number])
			r->sources[number]->index = UINT32_MAX;
	}
	return r->sources[number];
}

static struct ring_state *ring_of(struct file_source *fs, uint32_t ring)
{
	if (ring >= MAX_RINGS ||
	    grow((void **)&fs->rings, &fs->ring_capacity, (size_t)ring + 1, sizeof(*fs->rings)))
		return NULL;
	return &fs->rings[ring];
}

/* ---- the scan ----------------------------------------------------------- */

/*
 * Whether block h is in the first file read of a recording that began in
 * an earlier file: the counters its metadata copies give count losses of
 * those earlier files too (the rundown at the head of a file says what the
 * writer had counted until then).
 */
static int earlier_losses(const struct recording *rec, const struct rt_block_header *h)
{
	return rec->first_file_seq > 0 && h->file_seq == rec->first_file_seq;
}

static int keep_threads(struct file_source *fs, const struct rt_block_header *h,
			const unsigned char *payload, int earlier)
{
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_thread t;
		memcpy(&t, payload + (size_t)i * sizeof(t), sizeof(t));
		if (t.index >= MAX_THREADS)
			continue;
		if (grow((void **)&fs->threads, &fs->thread_capacity, (size_t)t.index + 1,
			 sizeof(*fs->threads)))
			return -ENOMEM;
		if (!fs->threads[t.index].present && earlier)
			fs->threads[t.index].earlier_no_ring = t.entry.lost_no_ring;
		fs->threads[t.index].present = 1;
		fs->threads[t.index].entry = t.entry;
	}
	return 0;
}

static int keep_sites(struct file_source *fs, const struct rt_block_header *h,
		      const unsigned char *payload)
{
	size_t at = 0;
	/* rt_block_check made sure every record's size fits the payload */
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_site s;
		memcpy(&s, payload + at, sizeof(s));
		const unsigned char *strings = payload + at + sizeof(s);
		uint32_t strings_size = s.size - (uint32_t)sizeof(s);
		at += s.size;
		if (s.index >= MAX_SITES)
			continue;
		if (grow((void **)&fs->sites, &fs->site_capacity, (size_t)s.index + 1,
			 sizeof(*fs->sites)))
			return -ENOMEM;
		struct site_copy *c = &fs->sites[s.index];
		char *copy = malloc(strings_size + 1);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, strings, strings_size);
		copy[strings_size] = 0;
		free(c->strings);
		c->present = 1;
		c->entry = s.entry;
		c->strings = copy;
		c->strings_size = strings_size;
	}
	return 0;
}

/*
 * FDS: the descriptors open when a file began.  A file's rundown may take
 * several blocks; a later file's rundown replaces an earlier one's.  A
 * record that does not check is left out (its name is then unknown).
 */
static int keep_fds(struct file_source *fs, const struct rt_block_header *h,
		    const unsigned char *payload)
{
	if (fs->has_fds && h->file_seq < fs->fds_file_seq)
		return 0;
	if (!fs->has_fds || h->file_seq > fs->fds_file_seq)
		rt_fd_seeds_clear(&fs->fds);
	fs->has_fds = 1;
	fs->fds_file_seq = h->file_seq;
	size_t at = 0;
	/* rt_block_check made sure every record and its name fit the payload */
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_fd f;
		memcpy(&f, payload + at, sizeof(f));
		const char *name = (const char *)payload + at + sizeof(f);
		at += f.size;
		if (f.fd > INT32_MAX || !rt_fd_seed_fields_ok(RT_FD_OPEN, f.op, f.name_length) ||
		    !rt_fd_seed_name_ok(name, f.name_length)) {
			fs->fds.skipped++;
			continue;
		}
		const struct rt_fd_seed seed = {
		    .fd = (int32_t)f.fd,
		    .state = RT_FD_OPEN,
		    .counter = f.counter,
		    .open_flags = f.open_flags,
		    .op = f.op,
		    .flags = f.flags,
		    .name_length = f.name_length,
		};
		if (rt_fd_seeds_add(&fs->fds, &seed, name))
			return -ENOMEM;
	}
	return 0;
}

/* MODULES: the newest copy of an index counts (its unload time may be new). */
static int keep_modules(struct file_source *fs, const struct rt_block_header *h,
			const unsigned char *payload)
{
	size_t at = 0;
	/* rt_block_check made sure every record's size fits the payload */
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_module m;
		memcpy(&m, payload + at, sizeof(m));
		const char *path = (const char *)payload + at + sizeof(m);
		uint32_t path_room = m.size - (uint32_t)sizeof(m);
		at += m.size;
		if (m.index >= RT_MODULE_CAPACITY_MAX)
			continue;
		if (grow((void **)&fs->modules, &fs->module_capacity, (size_t)m.index + 1,
			 sizeof(*fs->modules)))
			return -ENOMEM;
		struct module_copy *c = &fs->modules[m.index];
		char *copy = NULL;
		if (m.entry.path_offset == 0 && m.entry.path_length < path_room &&
		    rt_module_path_ok(path, m.entry.path_length)) {
			copy = strndup(path, m.entry.path_length);
			if (!copy)
				return -ENOMEM;
		}
		free(c->path);
		c->present = 1;
		c->entry = m.entry;
		c->path = copy;
	}
	return 0;
}

/*
 * RINGS: where each ring's records begin (the first file read says it) or,
 * flagged RT_BLOCK_F_FINAL, where they end (record seqs only rise, so the
 * highest end is the newest).
 */
static int keep_rings(struct file_source *fs, const struct rt_block_header *h,
		      const unsigned char *payload, int final)
{
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_ring r;
		memcpy(&r, payload + (size_t)i * sizeof(r), sizeof(r));
		struct ring_state *rs = ring_of(fs, r.index);
		if (!rs) {
			if (r.index >= MAX_RINGS)
				continue;
			return -ENOMEM;
		}
		if (final && (!rs->has_end || r.record > rs->end_record)) {
			rs->has_end = 1;
			rs->end_record = r.record;
			rs->end_counter = h->counter_last;
		} else if (!final && !rs->has_start) {
			rs->has_start = 1;
			rs->start_record = r.record;
		}
	}
	return 0;
}

static int keep_losses(struct file_source *fs, const struct rt_block_header *h,
		       const unsigned char *payload)
{
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_loss l;
		memcpy(&l, payload + (size_t)i * sizeof(l), sizeof(l));
		if (l.count == 0)
			continue;
		if (grow((void **)&fs->losses, &fs->loss_capacity, fs->loss_count + 1,
			 sizeof(*fs->losses)))
			return -ENOMEM;
		fs->losses[fs->loss_count++] = l;
		struct ring_state *rs = ring_of(fs, l.ring);
		if (!rs && l.ring < MAX_RINGS)
			return -ENOMEM;
		/*
		 * Overwritten and torn records keep their seqs: those are accounted
		 * for; so are records a cut or recover noted as lost to damage of its
		 * input (a gap the file says it has is no damage of the file).
		 */
		if (rs && (l.reason == RT_LOSS_REASON_OVERWRITTEN ||
			   l.reason == RT_LOSS_REASON_TORN || l.reason == RT_LOSS_REASON_DAMAGED)) {
			if (grow((void **)&rs->covers, &rs->cover_capacity, rs->cover_count + 1,
				 sizeof(*rs->covers)))
				return -ENOMEM;
			rs->covers[rs->cover_count].first = l.first_record;
			rs->covers[rs->cover_count].end = add_sat(l.first_record, l.count);
			rs->cover_count++;
		}
	}
	return 0;
}

static void early_before(struct rt_trace_set *set, const struct rt_block_header *h,
			 const unsigned char *payload);
static void early_after(struct rt_trace_set *set, uint64_t offset, const struct rt_block_header *h,
			const unsigned char *b);
static void early_finish(struct rt_trace_set *set);
static void free_early(struct early_source *es);

static int keep_block(void *context, struct rt_trace_file *f, uint64_t offset,
		      const struct rt_block_header *h, const unsigned char *b)
{
	struct rt_trace_set *set = context;
	struct set_private *p = priv_of(set);
	const unsigned char *payload = b + RT_BLOCK_HEADER_SIZE;
	struct recording *rec = find_recording(set, h->file_id, f->path);
	if (!rec)
		return -ENOMEM;
	if (!rec->have_first) {
		rec->have_first = 1;
		rec->first_file_seq = h->file_seq;
	}
	if (h->type == RT_BLOCK_FILE || h->type == RT_BLOCK_END)
		return 0;
	struct file_source *fs = find_file_source(rec, h->source);
	if (!fs)
		return h->source >= MAX_SOURCES ? 0 : -ENOMEM;
	if (fs->index == UINT32_MAX) {
		struct rt_reader *rd = empty_reader(f->path);
		if (!rd || add_source(set, rd, f->path, &fs->index)) {
			free(rd);
			return -ENOMEM;
		}
		struct rt_set_source *s = &set->sources[fs->index];
		s->file_id = h->file_id;
		s->number = h->source;
		s->recording = rec->context;
		s->priv = fs;
		fs->first_file_seq = h->file_seq;
	}
	if (h->type != RT_BLOCK_SOURCE && h->type != RT_BLOCK_RINGS)
		p->last_counter = h->counter_last ? h->counter_last : p->last_counter;
	switch (h->type) {
	case RT_BLOCK_SOURCE: {
		struct rt_block_source s;
		size_t bytes = h->size - RT_BLOCK_HEADER_SIZE;
		memset(&s, 0, sizeof(s));
		memcpy(&s, payload, bytes < sizeof(s) ? bytes : sizeof(s));
		memset(&fs->header, 0, sizeof(fs->header));
		memcpy(&fs->header, s.header, RT_SOURCE_HEADER_BYTES);
		fs->parent_pid = s.parent_pid;
		if (!fs->has_header && earlier_losses(rec, h)) {
			fs->has_earlier = 1;
			fs->earlier_untracked = fs->header.lost_untracked;
			fs->earlier_no_site = fs->header.lost_no_site;
			fs->earlier_replaced = fs->header.lost_replaced;
		}
		fs->has_header = 1;
		return 0;
	}
	case RT_BLOCK_THREADS:
		return keep_threads(fs, h, payload, earlier_losses(rec, h));
	case RT_BLOCK_SITES:
		return keep_sites(fs, h, payload);
	case RT_BLOCK_MODULES:
		return keep_modules(fs, h, payload);
	case RT_BLOCK_FDS:
		return keep_fds(fs, h, payload);
	case RT_BLOCK_RINGS:
		if (h->flags & RT_BLOCK_F_FINAL)
			return keep_rings(fs, h, payload, 1);
		/* where the records begin: only the first file read says it */
		return h->file_seq == rec->first_file_seq ? keep_rings(fs, h, payload, 0) : 0;
	case RT_BLOCK_LOSS:
		return keep_losses(fs, h, payload);
	case RT_BLOCK_SLOTS: {
		if (h->count == 0)
			return 0;
		set->files[p->current_file].slots_records += h->count;
		struct ring_state *rs = ring_of(fs, h->ring);
		if (!rs)
			return h->ring >= MAX_RINGS ? 0 : -ENOMEM;
		struct block_ref *last = &rs->last;
		last->offset = offset;
		last->first_record = h->first_record;
		last->counter_first = h->counter_first;
		last->counter_last = h->counter_last;
		last->file = p->current_file;
		last->count = h->count;
		last->order = ((uint64_t)p->current_file << 40) | (offset >> 3);
		struct block_ref *run = rs->block_count ? &rs->blocks[rs->block_count - 1] : NULL;
		if (p->counting_only && !p->early_off && run && run->file == last->file &&
		    add_sat(run->first_record, run->count) == last->first_record &&
		    (uint64_t)run->count + last->count <= UINT32_MAX) {
			run->count += last->count;
			run->counter_last = last->counter_last;
			run->offset = offset;
			p->index_merged = 1;
			return 0;
		}
		if (grow((void **)&rs->blocks, &rs->block_capacity, rs->block_count + 1,
			 sizeof(*rs->blocks)))
			return -ENOMEM;
		rs->blocks[rs->block_count++] = *last;
		return 0;
	}
	default:
		return 0;
	}
}

static int on_block(void *context, struct rt_trace_file *f, uint64_t offset,
		    const struct rt_block_header *h, const unsigned char *b)
{
	struct rt_trace_set *set = context;
	struct set_private *p = priv_of(set);
	if (!p->early_off)
		early_before(set, h, b + RT_BLOCK_HEADER_SIZE);
	int rc = keep_block(context, f, offset, h, b);
	if (rc == 0 && !p->early_off)
		early_after(set, offset, h, b);
	return rc;
}

/* File damage is kept per file until the scan says which recording it belongs to. */
struct pending_damage {
	uint64_t offset, length, counter;
	uint64_t counter_after; /* of the first SLOTS block after it, 0 if none */
	char what[160];
	int cut;
};

struct scan_state {
	struct rt_trace_set *set;
	struct pending_damage *damage;
	size_t count, capacity;
	size_t awaiting; /* regions from here on wait for the clock after them */
};

static int on_damage(void *context, struct rt_trace_file *f, uint64_t offset, uint64_t length,
		     const char *why, int cut)
{
	struct scan_state *st = context;
	priv_of(st->set)->early_off = 1; /* damage: the full count pass decides */
	if (st->count >= RT_DAMAGE_MAX) {
		/* garbage everywhere: the last region grows */
		struct pending_damage *d = &st->damage[st->count - 1];
		d->length = offset + length - d->offset;
		return 0;
	}
	if (grow((void **)&st->damage, &st->capacity, st->count + 1, sizeof(*st->damage)))
		return -ENOMEM;
	struct pending_damage *d = &st->damage[st->count++];
	d->counter_after = 0;
	d->offset = offset;
	d->length = length;
	d->counter = priv_of(st->set)->last_counter;
	d->cut = cut;
	snprintf(d->what, sizeof(d->what), "%s: %s%s", f->path, why,
		 cut				    ? ": the file ends in it"
		 : strcmp(why, RT_SCAN_REPLAY) == 0 ? ": a copy of blocks read already, skipped"
		 : length == 0 ? ": good blocks left out before this one, or moved elsewhere"
			       : ": skipped to the next good block");
	return 0;
}

static int on_block_scan(void *context, struct rt_trace_file *f, uint64_t offset,
			 const struct rt_block_header *h, const unsigned char *b)
{
	struct scan_state *st = context;
	if (h->type == RT_BLOCK_SLOTS && h->count) {
		for (; st->awaiting < st->count; st->awaiting++)
			st->damage[st->awaiting].counter_after = h->counter_first;
	}
	return on_block(st->set, f, offset, h, b);
}

/* Give a file's damaged regions to its recording's context, one loss each. */
static int file_damage(struct rt_trace_set *set, struct scan_state *st, struct rt_set_file *sf)
{
	struct recording *rec = find_recording(set, sf->file.file_id, sf->file.path);
	if (!rec)
		return -ENOMEM;
	sf->recording = rec->context;
	struct rt_reader *rd = set->sources[rec->context].reader;
	for (size_t i = 0; i < st->count; i++) {
		const struct pending_damage *d = &st->damage[i];
		long at =
		    rt_damage_add(&rd->damage, d->cut ? RT_DAMAGE_MISSING : RT_DAMAGE_SLOTS,
				  d->cut ? 0 : RT_DAMAGE_UNPARSED, (uint32_t)(sf - set->files),
				  d->offset, d->length, "%s", d->what);
		if (at < 0)
			return -ENOMEM;
		struct rt_damage *dm = &rd->damage.items[at];
		dm->counter = d->counter;
		dm->timed = d->counter != 0;
		dm->counter_after = d->counter_after;
		dm->timed_after = d->counter_after != 0;
		dm->events_counted = !d->cut; /* what a cut-off end held is not known */
		if (grow((void **)&rec->regions, &rec->region_capacity, rec->region_count + 1,
			 sizeof(*rec->regions)) ||
		    grow((void **)&rec->places, &rec->place_capacity, rec->region_count + 1,
			 sizeof(*rec->places)))
			return -ENOMEM;
		rec->places[rec->region_count].file = (uint32_t)(sf - set->files);
		rec->places[rec->region_count].offset = d->offset;
		struct rt_item *it = &rec->regions[rec->region_count++];
		memset(it, 0, sizeof(*it));
		it->kind = RT_ITEM_LOSS;
		it->flags = RT_ITEM_DAMAGE | (dm->timed ? RT_ITEM_TIMED : 0);
		it->counter = d->counter;
		it->thread = RT_ITEM_NO_THREAD;
		it->cpu = RT_CPU_UNKNOWN;
		it->loss.reason = RT_LOSS_DAMAGED;
		it->loss.note = RT_NOTE_REGION;
		it->loss.damage = (uint32_t)at;
	}
	st->count = st->awaiting = 0;
	return 0;
}

/* ---- after the scan: readers for the sources ------------------------------ */

/* A site entry as the writer leaves it (decode/sites.h checks the argument types). */
static int site_entry_ok(const struct rt_site_entry *e)
{
	return e->valid == 1 && rt_site_entry_ok(e);
}

/* A string of a site record: inside its strings, NUL-terminated at its length only. */
static const char *site_string(const struct site_copy *c, uint32_t offset, uint32_t length)
{
	uint64_t end = (uint64_t)offset + length;
	if (length > RT_SITE_STRING_MAX || end >= c->strings_size)
		return NULL;
	const char *s = c->strings + offset;
	if (s[length] != 0 || memchr(s, 0, length))
		return NULL;
	return s;
}

static int build_sites(struct rt_reader *rd, struct file_source *fs)
{
	if (fs->site_capacity == 0)
		return 0;
	rd->sites.sites = calloc(fs->site_capacity, sizeof(*rd->sites.sites));
	if (!rd->sites.sites)
		return -ENOMEM;
	rd->sites.count = (uint32_t)fs->site_capacity;
	for (size_t i = 0; i < fs->site_capacity; i++) {
		const struct site_copy *c = &fs->sites[i];
		struct rt_site *s = &rd->sites.sites[i];
		if (!c->present || !site_entry_ok(&c->entry))
			continue;
		const struct rt_site_entry *e = &c->entry;
		const char *tag = site_string(c, e->tag_offset, e->tag_length);
		const char *file = site_string(c, e->file_offset, e->file_length);
		const char *func = site_string(c, e->func_offset, e->func_length);
		const char *types = e->kind == RT_SITE_LOG
					? site_string(c, e->types_offset, e->types_length)
					: NULL;
		if (!tag || !file || !func || (e->kind == RT_SITE_LOG && !types) ||
		    (types && !rt_log_types_ok((const uint8_t *)types, e->types_length, e->nargs)))
			continue;
		s->types = (const uint8_t *)types;
		s->level = e->kind == RT_SITE_LOG ? e->level : 0;
		s->nargs = e->nargs;
		s->kind = e->kind;
		rt_site_log_shape(s);
		s->tag = tag;
		s->file = file;
		s->func = func;
		s->tag_length = e->tag_length;
		s->file_length = e->file_length;
		s->func_length = e->func_length;
		s->file_base = file;
		for (uint32_t k = 0; k + 1 < e->file_length; k++)
			if (file[k] == '/')
				s->file_base = file + k + 1;
		s->file_base_length = e->file_length - (uint32_t)(s->file_base - file);
		s->line = e->line;
		s->kind = e->kind;
		s->nargs = e->nargs;
		memcpy(s->arg_types, e->arg_types, sizeof(s->arg_types));
		for (unsigned k = 0; k < e->nargs && k < RT_MAX_ARGS; k++)
			if (RT_ARG_CLASS(e->arg_types[k]) == RT_ARG_SIGNED)
				s->signed_args |= (uint8_t)(1u << k);
		s->valid = 1;
		rd->sites.valid_count++;
	}
	rd->long_records = rt_site_table_has_long(&rd->sites);
	return 0;
}

/*
 * The module list from the newest copy of each entry.  A copy that does not
 * check is left out; its block passed its checksum, so it was written so
 * (from an arena damaged while it was being recorded).
 */
static int build_modules(struct rt_reader *rd, struct file_source *fs)
{
	char why[128];
	for (size_t i = 0; i < fs->module_capacity; i++) {
		const struct module_copy *c = &fs->modules[i];
		if (!c->present || !c->path || !rt_module_entry_ok(&c->entry, why, sizeof(why)))
			continue;
		if (rt_reader_modules_add(&rd->modules, (uint32_t)i, &c->entry, c->path))
			return -ENOMEM;
	}
	return 0;
}

/* rd's thread table (empty before) from fs's thread entries; of_entry: NULL or one per entry. */
static void fill_threads(struct rt_reader *rd, const struct file_source *fs, uint32_t *of_entry)
{
	uint32_t ring_count =
	    fs->has_header && fs->header.ring_count ? fs->header.ring_count : MAX_RINGS;
	char why[96];
	for (size_t i = 0; i < fs->thread_capacity; i++) {
		if (of_entry)
			of_entry[i] = UINT32_MAX;
		const struct rt_thread_entry *e = &fs->threads[i].entry;
		if (!fs->threads[i].present ||
		    (e->state != RT_THREAD_LIVE && e->state != RT_THREAD_EXITED) ||
		    !rt_thread_entry_ok(e, ring_count, why, sizeof(why)))
			continue;
		struct rt_reader_thread *t = &rd->threads[rd->thread_count];
		if (of_entry)
			of_entry[i] = rd->thread_count;
		rd->thread_count++;
		t->entry = (uint32_t)i;
		t->tid = e->tid;
		t->state = e->state;
		t->ring = e->ring < ring_count ? e->ring : RT_NO_RING;
		t->flags = e->flags;
		memcpy(t->name, e->name, sizeof(t->name));
		t->name[sizeof(t->name) - 1] = 0;
		t->first_record = e->first_record;
		t->end_record = e->end_record;
		t->start_counter = e->start_counter;
		t->exit_counter = e->exit_counter;
		t->lost_no_ring = e->lost_no_ring > fs->threads[i].earlier_no_ring
				      ? e->lost_no_ring - fs->threads[i].earlier_no_ring
				      : 0;
	}
}

static uint64_t since(uint64_t now, uint64_t earlier)
{
	return now > earlier ? now - earlier : 0;
}

static int build_threads(struct rt_reader *rd, struct file_source *fs)
{
	fs->thread_of_entry = malloc((fs->thread_capacity + 1) * sizeof(uint32_t));
	rd->threads = calloc(fs->thread_capacity + 1, sizeof(*rd->threads));
	if (!fs->thread_of_entry || !rd->threads)
		return -ENOMEM;
	fill_threads(rd, fs, fs->thread_of_entry);
	return 0;
}

static int compare_items(const void *a, const void *b)
{
	return rt_item_compare(a, b);
}

/*
 * LOSS entries as loss items of the source (drops and losses no slot
 * reports), and the losses the newest header and thread entries count
 * outside the rings (rt_reader_add_counted_losses).
 */
static int build_losses(struct rt_reader *rd, struct file_source *fs)
{
	int rc = rt_reader_add_counted_losses(rd);
	if (rc)
		return rc;
	fs->loss_items = calloc(fs->loss_count + rd->loss_count + 1, sizeof(*fs->loss_items));
	if (!fs->loss_items)
		return -ENOMEM;
	/* the source's items are all in loss_items: its reader keeps none */
	if (rd->loss_count)
		memcpy(fs->loss_items, rd->losses, rd->loss_count * sizeof(*rd->losses));
	fs->loss_item_count = rd->loss_count;
	free(rd->losses);
	rd->losses = NULL;
	rd->loss_count = rd->loss_capacity = 0;
	for (size_t i = 0; i < fs->loss_count; i++) {
		const struct rt_block_loss *l = &fs->losses[i];
		struct rt_item *it = &fs->loss_items[fs->loss_item_count++];
		it->kind = RT_ITEM_LOSS;
		it->counter = l->counter_from;
		it->flags = l->counter_from ? RT_ITEM_TIMED : 0;
		it->seq = l->first_record;
		it->cpu = RT_CPU_UNKNOWN;
		it->thread = RT_ITEM_NO_THREAD;
		if (l->thread < fs->thread_capacity &&
		    fs->thread_of_entry[l->thread] != UINT32_MAX) {
			it->thread = fs->thread_of_entry[l->thread];
			it->tid = rd->threads[it->thread].tid;
		}
		it->loss.count = l->count;
		it->loss.last_counter = l->counter_to;
		switch (l->reason) {
		case RT_LOSS_REASON_OVERWRITTEN:
			it->loss.reason = RT_LOSS_OVERWRITTEN;
			break;
		case RT_LOSS_REASON_DROPPED:
			it->loss.reason = RT_LOSS_DROPPED;
			it->loss.note = RT_NOTE_RING_FULL;
			break;
		case RT_LOSS_REASON_TORN:
			it->loss.reason = RT_LOSS_TORN;
			it->loss.note = RT_NOTE_WRITER_DIED;
			break;
		case RT_LOSS_REASON_DAMAGED:
			it->loss.reason = RT_LOSS_DAMAGED;
			it->loss.note = RT_NOTE_NOTED_DAMAGE;
			break;
		default:
			it->loss.reason = RT_LOSS_DAMAGED;
			it->loss.note = RT_NOTE_UNKNOWN_LOST;
			break;
		}
	}
	if (fs->loss_item_count > 1)
		qsort(fs->loss_items, fs->loss_item_count, sizeof(*fs->loss_items), compare_items);
	return 0;
}

static int finish_file_source(struct rt_trace_set *set, struct file_source *fs)
{
	struct rt_set_source *src = &set->sources[fs->index];
	struct rt_reader *rd = src->reader;
	src->has_header = fs->has_header;
	src->parent_pid = fs->parent_pid;
	if (fs->has_header) {
		rd->header = fs->header;
		/* the files read count only what was lost since the first of them began */
		if (fs->has_earlier) {
			rd->header.lost_untracked =
			    since(fs->header.lost_untracked, fs->earlier_untracked);
			rd->header.lost_no_site =
			    since(fs->header.lost_no_site, fs->earlier_no_site);
			rd->header.lost_replaced =
			    since(fs->header.lost_replaced, fs->earlier_replaced);
		}
		rd->writer = rt_writer_status_of(&fs->header, 0);
		struct rt_clock_pair sync;
		int have_sync = rt_timebase_read_sync(&fs->header.sync, &sync);
		if (rt_timebase_init(&rd->timebase, fs->header.clock_source, fs->header.counter_hz,
				     &fs->header.start, have_sync ? &sync : NULL) != 0) {
			struct rt_clock_pair zero = {fs->header.start.counter, 0, 0};
			rt_timebase_init(&rd->timebase, RT_CLOCK_MONOTONIC, 1000000000ull, &zero,
					 NULL);
		}
	}
	int rc = build_threads(rd, fs);
	if (!rc)
		rc = build_sites(rd, fs);
	if (!rc)
		rc = build_modules(rd, fs);
	if (!rc) {
		/* the reader takes the list over */
		rt_fd_seeds_free(&rd->fds);
		rd->fds = fs->fds;
		memset(&fs->fds, 0, sizeof(fs->fds));
	}
	if (!rc)
		rc = build_losses(rd, fs);
	return rc;
}

/*
 * The processes shown, as rt_trace_set_count() counts them: before it, a
 * trace-file source's events are not counted yet, and its threads say.
 */
static uint32_t count_processes(const struct rt_trace_set *set)
{
	uint32_t n = 0;
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *s = &set->sources[i];
		if (!s->context && (s->reader->thread_count || s->reader->totals.present))
			n++;
	}
	return n;
}

/*
 * Sources of one host count one clock: every timebase of the same clock
 * source takes the earliest start as its zero, so that times line up.
 */
static void align_timebases(struct rt_trace_set *set)
{
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		if (s->context || (!s->arena && !s->has_header))
			continue;
		uint32_t clock = s->reader->header.clock_source;
		uint64_t earliest = s->reader->timebase.start_counter;
		for (size_t k = 0; k < set->source_count; k++) {
			const struct rt_set_source *o = &set->sources[k];
			if (!o->context && (o->arena || o->has_header) &&
			    o->reader->header.clock_source == clock &&
			    o->reader->timebase.start_counter < earliest)
				earliest = o->reader->timebase.start_counter;
		}
		s->reader->timebase.start_counter = earliest;
	}
	/*
	 * A context, and a source without a header, speak their recording's first
	 * source's time; with none, no clock metadata survived: counters are raw.
	 */
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		if (s->arena || s->has_header)
			continue;
		s->reader->raw_time = 1;
		for (size_t k = 0; k < set->source_count; k++) {
			const struct rt_set_source *o = &set->sources[k];
			if (!o->arena && !o->context && o->has_header && o->file_id == s->file_id) {
				s->reader->timebase = o->reader->timebase;
				s->reader->raw_time = 0;
				break;
			}
		}
	}
}

/* ---- inputs ------------------------------------------------------------- */

static int keep_path(struct set_private *p, char *path)
{
	if (grow((void **)&p->owned_paths, &p->owned_capacity, p->owned_count + 1,
		 sizeof(*p->owned_paths))) {
		free(path);
		return -ENOMEM;
	}
	p->owned_paths[p->owned_count++] = path;
	return 0;
}

/* The regular files of dir whose magic is an arena's or a trace file's, by name. */
static int expand_directory(struct set_private *p, const char *dir, const char ***list,
			    size_t *count, size_t *capacity, char *message, size_t message_size)
{
	char **found;
	size_t n;
	int rc = rt_input_dir_list(dir, RT_INPUT_DIR_ARENAS | RT_INPUT_DIR_TRACES, &found, &n);
	if (rc) {
		snprintf(message, message_size, "%s: %s", dir, strerror(-rc));
		return rc;
	}
	if (n == 0) {
		free(found);
		snprintf(message, message_size, "%s: no arena or trace file in the directory", dir);
		return -ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		if (rc) {
			free(found[i]);
			continue;
		}
		/* the set owns (and frees) every path keep_path took, and one it could not */
		rc = keep_path(p, found[i]);
		if (!rc)
			rc = grow((void **)list, capacity, *count + 1, sizeof(**list));
		if (!rc)
			(*list)[(*count)++] = found[i];
	}
	free(found);
	if (rc)
		snprintf(message, message_size, "out of memory");
	return rc;
}

/* Which recording and where in it a trace file is, from its first block. */
struct file_order {
	uint64_t file_id;
	uint32_t file_seq;
	size_t input;
	const char *path;
};

static int compare_file_order(const void *a, const void *b)
{
	const struct file_order *x = a, *y = b;
	if (x->file_id != y->file_id)
		return x->file_id < y->file_id ? -1 : 1;
	if (x->file_seq != y->file_seq)
		return x->file_seq < y->file_seq ? -1 : 1;
	return x->input < y->input ? -1 : x->input > y->input;
}

static void peek_order(const char *path, struct file_order *o)
{
	struct rt_trace_file f;
	char message[64];
	unsigned char *buf = malloc(RT_BLOCK_MAX_BYTES);
	o->file_id = 0;
	o->file_seq = 0;
	if (buf && rt_trace_file_open(&f, path, message, sizeof(message)) == 0) {
		struct rt_block_header h;
		/* a file whose head was damaged sorts by the first block it still has */
		if (rt_trace_file_read_block(&f, 0, buf, &h) == RT_BLOCK_OK ||
		    rt_trace_file_find_block(&f, &h) > 0) {
			o->file_id = h.file_id;
			o->file_seq = h.file_seq;
		}
		rt_trace_file_close(&f);
	}
	free(buf);
}

static int open_arena(struct rt_trace_set *set, const char *path, char *message,
		      size_t message_size)
{
	struct rt_reader *rd;
	struct rt_read_error error;
	int rc = rt_reader_open(path, &rd, &error);
	if (rc) {
		if (error.has_offset)
			snprintf(message, message_size, "%s: byte %llu: %s", path,
				 (unsigned long long)error.offset, error.message);
		else
			snprintf(message, message_size, "%s: %s", path, error.message);
		return rc;
	}
	uint32_t index;
	if (add_source(set, rd, path, &index)) {
		rt_reader_close(rd);
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	set->sources[index].arena = 1;
	set->sources[index].has_header = 1;
	return 0;
}

static int scan_files(struct rt_trace_set *set, struct file_order *order, size_t count,
		      char *message, size_t message_size)
{
	struct set_private *p = priv_of(set);
	struct scan_state st = {set, NULL, 0, 0, 0};
	struct rt_trace_scan_ops ops = {&st, on_block_scan, on_damage};
	int rc = 0;
	set->files = calloc(count + 1, sizeof(*set->files));
	if (!set->files)
		return -ENOMEM;
	if (count > 1)
		p->early_off = 1;
	for (size_t i = 0; i < count && rc == 0; i++) {
		struct rt_set_file *sf = &set->files[set->file_count];
		char why[200];
		rc = rt_trace_file_open(&sf->file, order[i].path, why, sizeof(why));
		if (rc) {
			snprintf(message, message_size, "%s: %s", order[i].path, why);
			break;
		}
		set->file_count++;
		p->current_file = (uint32_t)(set->file_count - 1);
		p->last_counter = 0;
		rc = rt_trace_file_scan(&sf->file, &ops, why, sizeof(why));
		if (rc == 0)
			rc = file_damage(set, &st, sf);
		if (rc)
			snprintf(message, message_size, "%s: %s", order[i].path,
				 rc == -ENOMEM ? "out of memory" : why);
	}
	free(st.damage);
	return rc;
}

static int attribute_gaps(struct rt_trace_set *set, struct recording *rec);

/*
 * Whether a set whose index is in runs can be counted from them: the scan
 * counted every block, and no damage needs the blocks' places in the files.
 */
static int index_runs_enough(const struct rt_trace_set *set)
{
	const struct set_private *p = priv_of(set);
	for (size_t i = 0; i < p->recording_count; i++)
		if (p->recordings[i].region_count)
			return 0;
	return p->early_done;
}

static int open_set(char *const *paths, size_t count, int counting_only, struct rt_trace_set **out,
		    char *message, size_t message_size)
{
	*out = NULL;
	message[0] = 0;
	struct rt_trace_set *set = calloc(1, sizeof(*set));
	struct set_private *p = calloc(1, sizeof(*p));
	const char **inputs = NULL;
	size_t input_count = 0, input_capacity = 0;
	struct file_order *order = NULL;
	size_t order_count = 0;
	int rc = 0;
	if (!set || !p) {
		free(set);
		free(p);
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	set->priv = p;
	p->counting_only = counting_only;
	p->input_paths = paths;
	p->input_path_count = count;
	const char *early = getenv("RINGTRACE_COUNT_IN_SCAN");
	p->early_off = early && strcmp(early, "0") == 0;
	const char *seek = getenv("RINGTRACE_SEEK");
	p->seek_off = seek && strcmp(seek, "0") == 0;
	for (size_t i = 0; i < count && rc == 0; i++) {
		struct stat st;
		if (stat(paths[i], &st) != 0) {
			rc = -errno;
			snprintf(message, message_size, "%s: %s", paths[i], strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			rc = expand_directory(p, paths[i], &inputs, &input_count, &input_capacity,
					      message, message_size);
		} else if (!S_ISREG(st.st_mode)) {
			/* a FIFO would wait for a writer, a device may never end */
			rc = -EINVAL;
			snprintf(message, message_size, "%s: not a regular file", paths[i]);
		} else if (grow((void **)&inputs, &input_capacity, input_count + 1,
				sizeof(*inputs))) {
			rc = -ENOMEM;
		} else {
			inputs[input_count++] = paths[i];
		}
	}
	if (rc == 0 && !(order = calloc(input_count + 1, sizeof(*order))))
		rc = -ENOMEM;
	for (size_t i = 0; i < input_count && rc == 0; i++) {
		int kind = rt_input_kind_of(inputs[i]);
		if (kind < 0) {
			rc = kind;
			snprintf(message, message_size, "%s: %s", inputs[i],
				 kind == -EINVAL ? "not a regular file" : strerror(-kind));
		} else if (kind == RT_INPUT_ARENA) {
			rc = open_arena(set, inputs[i], message, message_size);
		} else if (kind == RT_INPUT_TRACE &&
			   (rc = rt_trace_file_refused(inputs[i], message, message_size)) != 0) {
			break;
		} else if (kind == RT_INPUT_TRACE) {
			order[order_count].input = i;
			order[order_count].path = inputs[i];
			peek_order(inputs[i], &order[order_count]);
			order_count++;
		} else {
			rc = -EINVAL;
			snprintf(message, message_size,
				 "%s: byte 0: neither an arena nor a trace file (no magic)",
				 inputs[i]);
		}
	}
	if (rc == 0 && order_count) {
		qsort(order, order_count, sizeof(*order), compare_file_order);
		rc = scan_files(set, order, order_count, message, message_size);
	}
	for (size_t i = 0; i < p->recording_count && rc == 0; i++) {
		struct recording *rec = &p->recordings[i];
		for (size_t k = 0; k < rec->source_capacity && rc == 0; k++)
			if (rec->sources[k] && rec->sources[k]->index != UINT32_MAX)
				rc = finish_file_source(set, rec->sources[k]);
		if (rc == 0 && rec->region_count)
			rc = attribute_gaps(set, rec);
		if (rec->region_count > 1)
			qsort(rec->regions, rec->region_count, sizeof(*rec->regions),
			      compare_items);
	}
	if (rc == 0) {
		align_timebases(set);
		early_finish(set);
		set->processes = count_processes(set);
	}
	free(inputs);
	free(order);
	if (rc == -ENOMEM && !message[0])
		snprintf(message, message_size, "out of memory");
	if (rc) {
		rt_trace_set_close(set);
		return rc;
	}
	if (p->index_merged && !index_runs_enough(set)) {
		rt_trace_set_close(set);
		return open_set(paths, count, 0, out, message, message_size);
	}
	*out = set;
	return 0;
}

int rt_trace_set_open(char *const *paths, size_t count, struct rt_trace_set **out, char *message,
		      size_t message_size)
{
	return open_set(paths, count, 0, out, message, message_size);
}

int rt_trace_set_open_counting(char *const *paths, size_t count, struct rt_trace_set **out,
			       char *message, size_t message_size)
{
	return open_set(paths, count, 1, out, message, message_size);
}

/*
 * A set opened to count whose index is in runs, opened again with its
 * whole index in its place (the same inputs: the same set, read again).
 */
static int reopen_indexed(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	struct rt_trace_set *indexed;
	char message[512];
	int rc =
	    open_set(p->input_paths, p->input_path_count, 0, &indexed, message, sizeof(message));
	if (rc)
		return rc;
	struct rt_trace_set old = *set;
	*set = *indexed;
	*indexed = old;
	rt_trace_set_close(indexed);
	return 0;
}

static void free_file_source(struct file_source *fs)
{
	if (!fs)
		return;
	free(fs->threads);
	for (size_t i = 0; i < fs->site_capacity; i++)
		free(fs->sites[i].strings);
	free(fs->sites);
	for (size_t i = 0; i < fs->module_capacity; i++)
		free(fs->modules[i].path);
	free(fs->modules);
	rt_fd_seeds_free(&fs->fds);
	for (size_t i = 0; i < fs->ring_capacity; i++) {
		free(fs->rings[i].blocks);
		free(fs->rings[i].covers);
		free(fs->rings[i].region_gaps);
	}
	free(fs->rings);
	free(fs->losses);
	free(fs->thread_of_entry);
	free(fs->loss_items);
	free_early(fs->early);
	free(fs);
}

static void free_cursors(struct set_private *p)
{
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *rc = p->cursors[i].ring;
		if (rc) {
			free(rc->owners);
			free(rc->readahead);
			free(rc);
		}
		if (p->cursors[i].arena) {
			rt_arena_cursor_free(p->cursors[i].arena);
			free(p->cursors[i].arena);
		}
	}
	free(p->cursors);
	free(p->merge_sources);
	rt_merge_free(&p->merge);
	p->cursors = NULL;
	p->merge_sources = NULL;
	p->cursor_count = 0;
}

void rt_trace_set_close(struct rt_trace_set *set)
{
	if (!set)
		return;
	struct set_private *p = priv_of(set);
	free_cursors(p);
	free(p->early_cursor);
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		if (s->arena)
			rt_reader_close(s->reader);
		else
			free_meta_reader(s->reader);
		free(s->site_counts);
	}
	for (size_t i = 0; i < p->recording_count; i++) {
		struct recording *rec = &p->recordings[i];
		for (size_t k = 0; k < rec->source_capacity; k++)
			free_file_source(rec->sources[k]);
		free(rec->sources);
		free(rec->regions);
		free(rec->places);
		free(rec->unplaced);
	}
	for (size_t i = 0; i < set->file_count; i++)
		rt_trace_file_close(&set->files[i].file);
	for (size_t i = 0; i < p->owned_count; i++)
		free(p->owned_paths[i]);
	free(p->owned_paths);
	free(p->recordings);
	free(set->files);
	free(set->sources);
	free(p);
	free(set);
}

/* ---- ring cursors: one block at a time ------------------------------------ */

static int compare_blocks(const void *a, const void *b)
{
	const struct block_ref *x = a, *y = b;
	if (x->first_record != y->first_record)
		return x->first_record < y->first_record ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int compare_covers(const void *a, const void *b)
{
	const struct cover *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int compare_owners(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The threads of rd that owned ring, by record range (as the arena reader splits a ring). */
static int owners_of_ring(const struct rt_reader *rd, uint32_t ring, struct owner **out,
			  size_t *count)
{
	size_t n = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++)
		n += rd->threads[i].ring == ring;
	struct owner *owners = calloc(n + 1, sizeof(*owners));
	if (!owners)
		return -ENOMEM;
	n = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		if (t->ring != ring)
			continue;
		struct owner *o = &owners[n++];
		o->first = t->first_record;
		o->end = t->end_record < t->first_record ? t->first_record : t->end_record;
		o->thread = i;
		o->tid = t->tid;
	}
	if (n > 1)
		qsort(owners, n, sizeof(*owners), compare_owners);
	for (size_t i = 0; i + 1 < n; i++)
		if (owners[i].end > owners[i + 1].first)
			owners[i].end = owners[i + 1].first;
	*out = owners;
	*count = n;
	return 0;
}

static int ring_owners(struct ring_cursor *c)
{
	return owners_of_ring(c->rd, c->ring, &c->owners, &c->owner_count);
}

/* Records of [from, to) of ring rs that no LOSS entry accounts for (covers sorted; *at rises). */
static uint64_t uncovered_in(const struct ring_state *rs, size_t *at_cover, uint64_t from,
			     uint64_t to)
{
	const struct cover *cv = rs->covers;
	size_t n = rs->cover_count;
	while (*at_cover < n && cv[*at_cover].end <= from)
		(*at_cover)++;
	uint64_t covered = 0, at = from;
	for (size_t i = *at_cover; i < n && cv[i].first < to; i++) {
		uint64_t lo = cv[i].first > at ? cv[i].first : at;
		uint64_t hi = cv[i].end < to ? cv[i].end : to;
		if (hi > lo) {
			covered += hi - lo;
			at = hi;
		}
	}
	return to - from - covered;
}

/* A ring's blocks in record order (the first copy of a record first), its LOSS covers by seq. */
static void sort_ring(struct ring_state *rs)
{
	if (rs->block_count > 1)
		qsort(rs->blocks, rs->block_count, sizeof(*rs->blocks), compare_blocks);
	if (rs->cover_count > 1)
		qsort(rs->covers, rs->cover_count, sizeof(*rs->covers), compare_covers);
}

/*
 * Where a ring's records begin: the first RINGS entry; a ring the head of
 * the first file did not list began with the recording when that file is
 * the recording's first, else with its first block.  Records the files hold
 * are read, whatever the head of the first file said.  Blocks sorted.
 */
/* The recording a trace-file source belongs to, or NULL. */
static const struct recording *rec_of(const struct set_private *p, const struct rt_set_source *src)
{
	for (size_t i = 0; i < p->recording_count; i++)
		if (p->recordings[i].context == src->recording)
			return &p->recordings[i];
	return NULL;
}

static uint64_t ring_first_record(const struct ring_state *rs, const struct recording *rec)
{
	uint64_t first_block = rs->block_count ? rs->blocks[0].first_record : 0;
	uint64_t first;
	if (rs->has_start)
		first = rs->start_record;
	else if (rec && rec->first_file_seq == 0)
		first = 0;
	else
		first = first_block;
	if (rs->block_count && first_block < first)
		first = first_block;
	return first;
}

/* ---- which damaged region lost which records ------------------------------ */

/* The first region placed after (file, offset), or region_count. */
static size_t region_after(const struct recording *rec, uint32_t file, uint64_t offset)
{
	size_t lo = 0, hi = rec->region_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct region_place *pl = &rec->places[mid];
		if (pl->file < file || (pl->file == file && pl->offset <= offset))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The region that explains records missing between block prev (NULL: the
 * ring's start) and block next (NULL: the ring's end): the first region
 * after prev and not after next in the files, or, with no prev, the last
 * one before next in its file.  region_count when none lies there: a
 * sequence break.
 */
static size_t region_between(const struct recording *rec, const struct block_ref *prev,
			     const struct block_ref *next)
{
	if (!prev && !next)
		return rec->region_count;
	if (!prev) {
		size_t at = region_after(rec, next->file, next->offset);
		return at > 0 && rec->places[at - 1].file == next->file ? at - 1
									: rec->region_count;
	}
	size_t at = region_after(rec, prev->file, prev->offset);
	if (at == rec->region_count)
		return at;
	const struct region_place *pl = &rec->places[at];
	if (!next) /* records after the ring's last block went with the first damage after it */
		return at;
	/* a region of 0 bytes (blocks left out) sits at the offset of the block after it */
	if (pl->file < next->file || (pl->file == next->file && pl->offset <= next->offset))
		return at;
	return rec->region_count;
}

/* Note a gap of ring rs from record first, explained by region r, lost `missing` events. */
static int region_gap(struct rt_trace_set *set, struct recording *rec, struct ring_state *rs,
		      size_t r, uint64_t first, uint64_t missing)
{
	struct rt_reader *ctx = set->sources[rec->context].reader;
	struct rt_damage *dm = &ctx->damage.items[rec->regions[r].loss.damage];
	dm->events = add_sat(dm->events, missing);
	if (grow((void **)&rs->region_gaps, &rs->region_gap_capacity, rs->region_gap_count + 1,
		 sizeof(*rs->region_gaps)))
		return -ENOMEM;
	rs->region_gaps[rs->region_gap_count++].first = first;
	return 0;
}

/*
 * Records lost with no ring to tell: files that end properly say in their
 * END blocks how many records their SLOTS blocks held, and what their good
 * blocks do not hold was lost to their damage.  When that is more than the
 * rings' gaps (gaps: every record a ring cursor will find missing), the rest
 * went where no ring's sequence shows it: blocks of rings whose every trace
 * went with the damage, final RINGS blocks included.  The largest region of
 * the file that lost most takes it, and a loss of no thread carries it into
 * the counts.
 */
static int unplaced_records(struct rt_trace_set *set, struct recording *rec, uint64_t gaps)
{
	struct rt_reader *ctx = set->sources[rec->context].reader;
	uint64_t lost = 0, most = 0;
	size_t worst = set->file_count;
	for (size_t i = 0; i < set->file_count; i++) {
		const struct rt_set_file *sf = &set->files[i];
		if (sf->recording != rec->context || !sf->file.has_end ||
		    sf->file.end.records <= sf->slots_records)
			continue;
		uint64_t shortfall = sf->file.end.records - sf->slots_records;
		lost = add_sat(lost, shortfall);
		if (shortfall > most) {
			most = shortfall;
			worst = i;
		}
	}
	size_t largest = rec->region_count;
	for (size_t r = 0; r < rec->region_count; r++)
		if (rec->places[r].file == worst &&
		    (largest == rec->region_count ||
		     ctx->damage.items[rec->regions[r].loss.damage].length >
			 ctx->damage.items[rec->regions[largest].loss.damage].length))
			largest = r;
	if (lost <= gaps || largest == rec->region_count)
		return 0;
	const struct rt_item *region = &rec->regions[largest];
	ctx->damage.items[region->loss.damage].events += lost - gaps;
	rec->unplaced = calloc(1, sizeof(*rec->unplaced));
	if (!rec->unplaced)
		return -ENOMEM;
	struct rt_item *it = &rec->unplaced[0];
	rec->unplaced_count = 1;
	it->kind = RT_ITEM_LOSS;
	it->flags = (region->flags & RT_ITEM_TIMED) | RT_ITEM_IN_REGION;
	it->counter = region->counter;
	it->thread = RT_ITEM_NO_THREAD;
	it->cpu = RT_CPU_UNKNOWN;
	it->loss.count = lost - gaps;
	it->loss.reason = RT_LOSS_DAMAGED;
	it->loss.note = RT_NOTE_UNPLACED;
	return 0;
}

/*
 * Before reading: walk each ring's blocks in record order, as its cursor
 * will, and give each gap no LOSS entry covers to the damaged region between
 * the blocks around it.  So a region's line can say how many events it lost
 * before the per-thread losses it explains come by, and those are marked as
 * the region's (RT_ITEM_IN_REGION).  Gaps with no region there stay breaks.
 */
static int attribute_gaps(struct rt_trace_set *set, struct recording *rec)
{
	uint64_t gaps = 0; /* every record the rings' cursors will find missing */
	for (size_t k = 0; k < rec->source_capacity; k++) {
		struct file_source *fs = rec->sources[k];
		if (!fs || fs->index == UINT32_MAX)
			continue;
		for (size_t r = 0; r < fs->ring_capacity; r++) {
			struct ring_state *rs = &fs->rings[r];
			if (rs->block_count == 0) {
				/* every block lost: its cursor reports the whole ring
				 * (make_cursors) */
				uint64_t first = ring_first_record(rs, rec);
				size_t cover_at = 0;
				if (rs->has_end && rs->end_record > first)
					gaps = add_sat(gaps, uncovered_in(rs, &cover_at, first,
									  rs->end_record));
				continue;
			}
			sort_ring(rs);
			rs->region_gap_count = 0;
			uint64_t expected = ring_first_record(rs, rec);
			size_t cover_at = 0;
			const struct block_ref *prev = NULL;
			for (size_t b = 0; b <= rs->block_count; b++) {
				const struct block_ref *next =
				    b < rs->block_count ? &rs->blocks[b] : NULL;
				uint64_t to = next	    ? next->first_record
					      : rs->has_end ? rs->end_record
							    : expected;
				if (to > expected) {
					uint64_t missing =
					    uncovered_in(rs, &cover_at, expected, to);
					gaps = add_sat(gaps, missing);
					size_t at = missing ? region_between(rec, prev, next)
							    : rec->region_count;
					if (at < rec->region_count &&
					    region_gap(set, rec, rs, at, expected, missing))
						return -ENOMEM;
				}
				if (!next)
					break;
				uint64_t end = add_sat(next->first_record, next->count);
				expected = end > expected ? end : expected;
				prev = next;
			}
		}
	}
	return unplaced_records(set, rec, gaps);
}

static void cursor_rewind(struct ring_cursor *c)
{
	const struct recording *rec = rec_of(priv_of(c->set), &c->set->sources[c->source]);
	c->block_at = c->cover_at = c->owner_at = c->region_gap_at = 0;
	c->unknown = c->lost_records = 0;
	c->readahead_length = 0;
	c->expected = ring_first_record(c->rs, rec);
}

/* The owner of record seq (seqs only rise along a cursor), or NULL. */
static const struct owner *owner_of(struct ring_cursor *c, uint64_t seq)
{
	while (c->owner_at < c->owner_count && seq >= c->owners[c->owner_at].end)
		c->owner_at++;
	if (c->owner_at < c->owner_count && seq >= c->owners[c->owner_at].first)
		return &c->owners[c->owner_at];
	return NULL;
}

/* Records of [from, to) that no LOSS entry accounts for. */
static uint64_t uncovered(struct ring_cursor *c, uint64_t from, uint64_t to)
{
	return uncovered_in(c->rs, &c->cover_at, from, to);
}

/* Whether the gap from record seq first is one a damaged region explains. */
static int gap_in_region(struct ring_cursor *c, uint64_t first)
{
	const struct ring_state *rs = c->rs;
	while (c->region_gap_at < rs->region_gap_count &&
	       rs->region_gaps[c->region_gap_at].first < first)
		c->region_gap_at++;
	return c->region_gap_at < rs->region_gap_count &&
	       rs->region_gaps[c->region_gap_at].first == first;
}

static struct rt_item *new_item(struct ring_cursor *c, size_t *n)
{
	struct rt_item *it = &c->items[(*n)++];
	memset(it, 0, sizeof(*it));
	it->cpu = RT_CPU_UNKNOWN;
	it->thread = RT_ITEM_NO_THREAD;
	return it;
}

/* Records [expected, to) are missing: what no LOSS entry explains is a damaged gap. */
static void gap_to(struct ring_cursor *c, uint64_t to, uint64_t counter, size_t *n)
{
	if (to <= c->expected)
		return;
	uint64_t missing = uncovered(c, c->expected, to);
	if (missing) {
		const struct owner *o = owner_of(c, c->expected);
		struct rt_item *it = new_item(c, n);
		it->kind = RT_ITEM_LOSS;
		it->flags = RT_ITEM_TIMED;
		it->counter = counter;
		it->seq = c->expected;
		if (o) {
			it->thread = o->thread;
			it->tid = o->tid;
		}
		it->loss.count = missing;
		it->loss.reason = RT_LOSS_DAMAGED;
		it->loss.note = RT_NOTE_GAP;
		if (gap_in_region(c, c->expected))
			it->flags |= RT_ITEM_IN_REGION;
	}
	c->expected = to;
}

/*
 * After the ring's last block: records up to where the files said the ring
 * ended that no block held are a damaged gap too, timed at its last counter.
 */
static void gap_to_end(struct ring_cursor *c, size_t *n)
{
	const struct ring_state *rs = c->rs;
	if (!rs->has_end)
		return;
	uint64_t counter =
	    rs->block_count ? rs->blocks[rs->block_count - 1].counter_last : rs->end_counter;
	gap_to(c, rs->end_record, counter, n);
}

/*
 * Decode one checked SLOTS block into items (the rules of the arena
 * reader's ring walk, read/arena_reader.c steps 2 and 3, with the block's
 * record range standing for the ring's counters).
 */
static void span_counter(struct rt_trace_set *set, uint64_t counter, uint32_t source);

/*
 * A TRACE record whose site no copy of the metadata describes is still an
 * event, marked: its raw site id and as many argument words as it holds.
 */
static unsigned site_lost_flags(const struct ring_cursor *c, const struct rt_slot_head *first)
{
	if (first->kind == RT_REC_LOST || rt_site_lookup(&c->rd->sites, first->site))
		return 0;
	return RT_ITEM_NO_SITE | (first->nslots == 2 ? RT_ITEM_WIDE : 0);
}

/* A log or I/O item's payload, gathered from its slots into the cursor's store. */
static void keep_payload(struct ring_cursor *c, struct rt_item *it, const union rt_slot *slots)
{
	if (!rt_item_has_payload(it->kind))
		return;
	/* the block's slots bound what its records' payloads take */
	unsigned char *p = c->payload + c->payload_used;
	uint32_t length = 0;
	for (unsigned k = 0; k < it->log.nslots; k++)
		length = rt_log_payload_add(p, length, &slots[k], k);
	c->payload_used += length;
	it->log.payload = p;
	it->log.length = length;
}

/* An event of the block at slot index s as an item: the thread's newest so far. */
static void keep_last(struct ring_cursor *c, const union rt_slot *slots, uint64_t s, uint64_t seq,
		      const struct owner *o)
{
	struct rt_slot_head first;
	struct rt_slot_cont second;
	memcpy(&first, &slots[s], sizeof(first));
	memset(&second, 0, sizeof(second));
	if (first.nslots == 2)
		memcpy(&second, &slots[s + 1], sizeof(second));
	struct rt_item *it = &c->rd->threads[o->thread].last;
	memset(it, 0, sizeof(*it));
	rt_item_from_record(it, &first, &second);
	it->flags |= site_lost_flags(c, &first);
	it->seq = seq;
	it->thread = o->thread;
	it->tid = o->tid;
}

/*
 * counting: the count pass's fast path - an event owned by a thread is
 * counted where it lies (site, thread, span, the thread's last event)
 * instead of becoming an item; losses still become items.
 */
static size_t decode_block(struct ring_cursor *c, const unsigned char *b,
			   const struct rt_block_header *h, int counting)
{
	uint64_t *site_counts =
	    c->site_counts ? c->site_counts : c->set->sources[c->source].site_counts;
	uint64_t events = 0, lo = UINT64_MAX, hi = 0;
	const struct owner *last_owner = NULL, *owner = NULL, *present_owner = NULL;
	uint64_t last_slot = 0, last_seq = 0, *present = NULL;
	const union rt_slot *slots = (const union rt_slot *)(b + RT_BLOCK_HEADER_SIZE);
	const uint64_t total = (h->size - RT_BLOCK_HEADER_SIZE) / RT_SLOT_SIZE;
	const uint64_t first_record = h->first_record;
	const uint64_t end_record = add_sat(first_record, h->count);
	const struct rt_site_table *sites = &c->rd->sites;
	size_t n = 0;

	c->payload_used = 0;
	for (uint64_t s = 0; s < total;) {
		struct rt_slot_head first;
		struct rt_slot_cont second;
		memcpy(&first, &slots[s], sizeof(first));
		unsigned nslots = first.nslots;
		/* a record never spans blocks: a SLOTS block holds whole records */
		if (first.seq != (uint32_t)(h->first + s) || !rt_record_head_ok(&first, 1) ||
		    nslots > total - s) {
			s++;
			continue;
		}
		memset(&second, 0, sizeof(second));
		unsigned k = 1;
		for (; k < nslots; k++) {
			memcpy(&second, &slots[s + k], sizeof(second));
			if (!rt_record_cont_ok(&second, h->first + s, k))
				break;
		}
		if (k < nslots) {
			s++;
			continue;
		}
		uint64_t seq = first_record + (uint32_t)(first.record - (uint32_t)first_record);
		if (seq >= end_record) {
			s++;
			continue;
		}
		if (first.kind != RT_REC_LOST) {
			const struct rt_site *site = rt_site_lookup(sites, first.site);
			int fits = site && rt_site_fits_record(site, first.kind, nslots);
			if (!fits)
				c->site_misses++;
			if (site && !fits) {
				/* whole, but not what its site describes: a gap says it */
				s += nslots;
				continue;
			}
			/* no copy of its site survived: shown marked (site_lost_flags) */
			c->unknown += !site && seq >= c->expected;
		} else if (nslots != 2 || !rt_record_lost_count_ok(&second)) {
			s++;
			continue;
		}
		s += nslots;
		if (seq < c->expected)
			continue; /* a copy of a record read already (overlapping snapshots) */
		if (seq > c->expected)
			gap_to(c, seq, first.counter, &n);
		c->expected = seq + 1;
		const struct owner *o = owner && seq >= owner->first && seq < owner->end
					    ? owner
					    : (owner = owner_of(c, seq));
		if (!o) {
			/*
			 * No copy of a thread entry claims it: an event of its ring,
			 * marked, or the drops a LOST record reports, of no known thread.
			 */
			struct rt_item *it = new_item(c, &n);
			rt_item_from_record(it, &first, &second);
			keep_payload(c, it, slots + s - nslots);
			it->seq = seq;
			if (first.kind != RT_REC_LOST) {
				it->flags |= RT_ITEM_NO_OWNER | site_lost_flags(c, &first);
				it->thread = RT_ITEM_RING_ONLY | c->ring;
			} else {
				c->lost_records++;
			}
			continue;
		}
		if (counting && first.kind == RT_REC_TRACE) {
			if (o != present_owner) {
				present = &c->rd->threads[o->thread].counts.present;
				present_owner = o;
			}
			(*present)++;
			if (first.site < sites->count)
				site_counts[first.site]++;
			events++;
			lo = first.counter < lo ? first.counter : lo;
			hi = first.counter > hi ? first.counter : hi;
			if (last_owner && last_owner != o)
				keep_last(c, slots, last_slot, last_seq, last_owner);
			last_owner = o;
			last_slot = s - nslots;
			last_seq = seq;
			continue;
		}
		struct rt_item *it = new_item(c, &n);
		rt_item_from_record(it, &first, &second);
		keep_payload(c, it, slots + s - nslots);
		it->flags |= site_lost_flags(c, &first);
		it->seq = seq;
		it->thread = o->thread;
		it->tid = o->tid;
		c->lost_records += first.kind == RT_REC_LOST;
	}
	/* records the block holds that did not decode */
	gap_to(c, end_record, h->counter_last, &n);
	if (events) {
		keep_last(c, slots, last_slot, last_seq, last_owner);
		c->set->events += events;
		span_counter(c->set, lo, c->source);
		span_counter(c->set, hi, c->source);
	}
	return n;
}

/*
 * Whether the bytes at b (avail of them) are still the SLOTS block the scan
 * checked at ref: its header, field by field.  The checksum was verified by
 * the scan; a file that changed since is caught by the header or, in its
 * slots, by the record checks every slot passes anyway.
 */
static int block_matches(const struct ring_cursor *c, const struct block_ref *ref,
			 const unsigned char *b, uint64_t avail, struct rt_block_header *h)
{
	if (avail < RT_BLOCK_HEADER_SIZE || !rt_block_magic_at(b))
		return 0;
	memcpy(h, b, sizeof(*h));
	return h->size <= avail && h->size >= RT_BLOCK_HEADER_SIZE &&
	       h->size <= RT_BLOCK_MAX_BYTES &&
	       (h->size - RT_BLOCK_HEADER_SIZE) % RT_SLOT_SIZE == 0 && h->type == RT_BLOCK_SLOTS &&
	       h->ring == c->ring && h->first_record == ref->first_record &&
	       h->count == ref->count &&
	       h->count <= (h->size - RT_BLOCK_HEADER_SIZE) / RT_SLOT_SIZE;
}

/*
 * The SLOTS block of ref in the bytes read at b (avail of them), a PACKED
 * one expanded into the cursor's block; NULL if it is no longer the block
 * the scan checked.
 */
static const unsigned char *block_found(struct ring_cursor *c, const struct block_ref *ref,
					const unsigned char *b, uint64_t avail,
					struct rt_block_header *h)
{
	struct rt_block_header packed;
	if (avail >= RT_BLOCK_HEADER_SIZE && rt_block_magic_at(b)) {
		memcpy(&packed, b, sizeof(packed));
		if (packed.type == RT_BLOCK_PACKED) {
			/* a payload that changed since the scan does not decode */
			if (packed.size < RT_BLOCK_HEADER_SIZE || packed.size > avail ||
			    packed.size > RT_BLOCK_MAX_BYTES ||
			    rt_packed_to_slots(b, &packed, c->block, &packed) != 0)
				return NULL;
			b = c->block;
			avail = RT_BLOCK_MAX_BYTES;
		}
	}
	return block_matches(c, ref, b, avail, h) ? b : NULL;
}

/* The block of ref, read through the cursor's read-ahead; NULL if it no longer checks. */
static const unsigned char *cursor_block(struct ring_cursor *c, const struct block_ref *ref,
					 struct rt_block_header *h, int *error)
{
	const struct rt_trace_file *f = &c->set->files[ref->file].file;
	if (c->readahead_capacity < RT_BLOCK_MAX_BYTES) {
		int rc = rt_trace_file_read_block(f, ref->offset, c->block, h);
		if (rc < 0)
			*error = rc;
		return rc == RT_BLOCK_OK && block_matches(c, ref, c->block, RT_BLOCK_MAX_BYTES, h)
			   ? c->block
			   : NULL;
	}
	if (ref->file != c->readahead_file || ref->offset < c->readahead_offset ||
	    ref->offset + RT_BLOCK_MAX_BYTES > c->readahead_offset + c->readahead_length) {
		size_t done = 0;
		while (done < c->readahead_capacity) {
			ssize_t got =
			    pread(f->fd, c->readahead + done, c->readahead_capacity - done,
				  (off_t)(ref->offset + done));
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				*error = -errno;
				c->readahead_length = 0;
				return NULL;
			}
			if (got == 0)
				break;
			done += (size_t)got;
		}
		c->readahead_file = ref->file;
		c->readahead_offset = ref->offset;
		c->readahead_length = done;
		/* a block near the end of the file: read ahead no further than it */
		if (done < RT_BLOCK_MAX_BYTES)
			c->readahead_length = done;
	}
	const unsigned char *b = c->readahead + (ref->offset - c->readahead_offset);
	uint64_t avail = c->readahead_offset + c->readahead_length - ref->offset;
	return block_found(c, ref, b, avail, h);
}

/* Fill the cursor with the next block that gives items.  0: the ring is done. */
static size_t cursor_refill(struct ring_cursor *c)
{
	struct set_private *p = priv_of(c->set);
	while (c->block_at < c->rs->block_count) {
		const struct block_ref *ref = &c->rs->blocks[c->block_at++];
		if (add_sat(ref->first_record, ref->count) <= c->expected)
			continue; /* every record in it was read already */
		struct rt_block_header h;
		int error = 0;
		const unsigned char *b = cursor_block(c, ref, &h, &error);
		size_t n;
		if (!b) {
			/* it checked during the scan: the file changed, or cannot be read */
			if (error)
				p->error = error;
			n = 0;
			gap_to(c, add_sat(ref->first_record, ref->count), ref->counter_first, &n);
		} else {
			n = decode_block(c, b, &h, 0);
		}
		if (n)
			return n;
	}
	size_t n = 0;
	gap_to_end(c, &n); /* once: it moves expected to the end */
	return n;
}

/* The next window of an arena thread's cursor: 0 when it is done. */
static int arena_refill(struct cursor *cur)
{
	size_t n = rt_arena_cursor_fill(cur->arena);
	cur->next = cur->end = NULL;
	if (n) {
		cur->next = cur->arena->items;
		cur->end = cur->arena->items + n;
	}
	return n > 0;
}

static int cursor_advance(struct cursor *cur)
{
	if (cur->next < cur->end)
		cur->next++;
	if (cur->next == cur->end && cur->arena)
		return arena_refill(cur);
	if (cur->next < cur->end || !cur->ring)
		return cur->next < cur->end;
	size_t n = cursor_refill(cur->ring);
	cur->next = cur->ring->items;
	cur->end = cur->ring->items + n;
	return n > 0;
}

/*
 * Past the first blocks of c whose records all come before ns (by the
 * index: their last record's time), as if they had been read: no gap is
 * reported for them, and the walk begins at the first block that may hold
 * a record at or after ns.  Only a prefix is skipped, so a block out of
 * time order is never passed over.
 */
static void cursor_skip_before(struct ring_cursor *c, int64_t ns)
{
	const struct ring_state *rs = c->rs;
	size_t b = 0;
	while (b < rs->block_count &&
	       rt_timebase_ns(&c->rd->timebase, rs->blocks[b].counter_last) < ns) {
		uint64_t end = add_sat(rs->blocks[b].first_record, rs->blocks[b].count);
		if (end > c->expected)
			c->expected = end;
		b++;
	}
	c->block_at = b;
}

static void cursor_start(struct cursor *cur, int64_t from_ns)
{
	if (cur->ring) {
		cursor_rewind(cur->ring);
		if (from_ns != INT64_MIN)
			cursor_skip_before(cur->ring, from_ns);
		size_t n = cursor_refill(cur->ring);
		cur->next = cur->ring->items;
		cur->end = cur->ring->items + n;
	} else if (cur->arena) {
		rt_arena_cursor_rewind(cur->arena);
		arena_refill(cur);
	} else {
		cur->next = cur->base;
		cur->end = cur->base + cur->count;
	}
}

static int add_cursor(struct set_private *p, size_t *capacity, uint32_t source,
		      const struct rt_item *items, size_t count, struct ring_cursor *ring)
{
	if (!ring && count == 0)
		return 0;
	if (grow((void **)&p->cursors, capacity, p->cursor_count + 1, sizeof(*p->cursors)))
		return -ENOMEM;
	struct cursor *c = &p->cursors[p->cursor_count++];
	c->source = source;
	c->base = items;
	c->count = count;
	c->ring = ring;
	c->arena = NULL;
	return 0;
}

/* A cursor over thread `thread` of an arena source, if it has items. */
static int add_arena_cursor(struct set_private *p, size_t *capacity, uint32_t source,
			    const struct rt_reader *rd, uint32_t thread, size_t window)
{
	if (!rd->threads[thread].item_count)
		return 0;
	struct rt_arena_cursor *a = malloc(sizeof(*a));
	if (!a || rt_arena_cursor_init(a, rd, thread, window) ||
	    grow((void **)&p->cursors, capacity, p->cursor_count + 1, sizeof(*p->cursors))) {
		if (a)
			rt_arena_cursor_free(a);
		free(a);
		return -ENOMEM;
	}
	struct cursor *c = &p->cursors[p->cursor_count++];
	memset(c, 0, sizeof(*c));
	c->source = source;
	c->arena = a;
	return 0;
}

/* Every item list of every source, as cursors. */
static int make_cursors(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	size_t capacity = 0, rings = 0, arena_threads = 0;
	/* the merge's sources are made last: without, the cursors are not made yet */
	if (p->merge_sources)
		return 0;
	for (size_t i = 0; i < set->source_count; i++)
		for (uint32_t t = 0;
		     set->sources[i].arena && t < set->sources[i].reader->thread_count; t++)
			arena_threads += set->sources[i].reader->threads[t].item_count > 0;
	const size_t window = rt_arena_window_for(arena_threads);
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		struct rt_reader *rd = s->reader;
		uint32_t src = (uint32_t)i;
		if (s->arena) {
			for (uint32_t t = 0; t < rd->thread_count; t++)
				if (add_arena_cursor(p, &capacity, src, rd, t, window))
					return -ENOMEM;
			if (add_cursor(p, &capacity, src, rd->losses, rd->loss_count, NULL))
				return -ENOMEM;
			continue;
		}
		if (s->context) {
			for (size_t r = 0; r < p->recording_count; r++)
				if (p->recordings[r].context == src &&
				    (add_cursor(p, &capacity, src, p->recordings[r].regions,
						p->recordings[r].region_count, NULL) ||
				     add_cursor(p, &capacity, src, p->recordings[r].unplaced,
						p->recordings[r].unplaced_count, NULL)))
					return -ENOMEM;
			continue;
		}
		struct file_source *fs = s->priv;
		if (add_cursor(p, &capacity, src, fs->loss_items, fs->loss_item_count, NULL))
			return -ENOMEM;
		for (size_t r = 0; r < fs->ring_capacity; r++) {
			struct ring_state *rs = &fs->rings[r];
			/*
			 * A ring with no block left: only an end past its start says
			 * something (all its records lost with the damage).
			 */
			if (rs->block_count == 0 &&
			    !(rs->has_end && rs->end_record > ring_first_record(rs, rec_of(p, s))))
				continue;
			sort_ring(rs);
			struct ring_cursor *c = calloc(1, sizeof(*c));
			if (!c)
				return -ENOMEM;
			c->set = set;
			c->rd = rd;
			c->fs = fs;
			c->rs = rs;
			c->ring = (uint32_t)r;
			c->source = src;
			if (ring_owners(c) || add_cursor(p, &capacity, src, NULL, 0, c)) {
				free(c->owners);
				free(c);
				return -ENOMEM;
			}
			rings++;
		}
	}
	/* read-ahead: what the budget gives each ring cursor, at least one block */
	size_t each = rings ? READAHEAD_BUDGET / rings : 0;
	if (each > READAHEAD_MAX)
		each = READAHEAD_MAX;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *c = p->cursors[i].ring;
		if (!c || each < 2 * (size_t)RT_BLOCK_MAX_BYTES)
			continue;
		c->readahead = malloc(each);
		if (!c->readahead)
			return -ENOMEM;
		c->readahead_capacity = each;
	}
	p->merge_sources = calloc(p->cursor_count + 1, sizeof(*p->merge_sources));
	return p->merge_sources ? 0 : -ENOMEM;
}

/* ---- counting ------------------------------------------------------------ */

static void count_loss(struct rt_counts *c, const struct rt_item *it)
{
	switch (it->loss.reason) {
	case RT_LOSS_OVERWRITTEN:
		c->overwritten = add_sat(c->overwritten, it->loss.count);
		break;
	case RT_LOSS_DROPPED:
		c->dropped = add_sat(c->dropped, it->loss.count);
		break;
	case RT_LOSS_TORN:
		c->torn = add_sat(c->torn, it->loss.count);
		break;
	default:
		c->damaged = add_sat(c->damaged, it->loss.count);
		if (it->loss.note == RT_NOTE_NOTED_DAMAGE)
			c->damaged_noted = add_sat(c->damaged_noted, it->loss.count);
		break;
	}
}

static void counts_add(struct rt_counts *to, const struct rt_counts *c)
{
	to->committed = add_sat(to->committed, c->committed);
	to->present = add_sat(to->present, c->present);
	to->overwritten = add_sat(to->overwritten, c->overwritten);
	to->consumed = add_sat(to->consumed, c->consumed);
	to->dropped = add_sat(to->dropped, c->dropped);
	to->torn = add_sat(to->torn, c->torn);
	to->damaged = add_sat(to->damaged, c->damaged);
	to->damaged_noted = add_sat(to->damaged_noted, c->damaged_noted);
}

static void span_counter(struct rt_trace_set *set, uint64_t counter, uint32_t source)
{
	if (!set->have_span || counter < set->first_counter) {
		set->first_counter = counter;
		set->first_source = source;
	}
	if (!set->have_span || counter > set->last_counter) {
		set->last_counter = counter;
		set->last_source = source;
	}
	set->have_span = 1;
}

static void note_span(struct rt_trace_set *set, const struct rt_item *it, uint32_t source)
{
	if (!set->have_span || it->counter < set->first_counter) {
		set->first_counter = it->counter;
		set->first_source = source;
	}
	if (!set->have_span || it->counter > set->last_counter) {
		set->last_counter = it->counter;
		set->last_source = source;
	}
	set->have_span = 1;
}

/* A thread entry's own copy of its last event, if newer than what the rings gave. */
static void entry_last(struct rt_reader *rd, struct file_source *fs)
{
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		struct rt_reader_thread *t = &rd->threads[i];
		struct rt_last_event ev = {0};
		if (!rt_last_event_read(&fs->threads[t->entry].entry, &ev) ||
		    ev.kind != RT_REC_TRACE || !rt_site_lookup(&rd->sites, ev.site) ||
		    rt_site_kind_long(rd->sites.sites[ev.site].kind) ||
		    (t->last.kind && ev.counter <= t->last.counter))
			continue;
		memset(&t->last, 0, sizeof(t->last));
		t->last.kind = RT_ITEM_TRACE;
		t->last.flags = RT_ITEM_TIMED | RT_ITEM_NO_SEQ;
		t->last.counter = ev.counter;
		t->last.tid = t->tid;
		t->last.thread = i;
		t->last.site = ev.site;
		t->last.cpu = ev.cpu;
		memcpy(t->last.args.a32, ev.a32, sizeof(ev.a32));
		memcpy(t->last.args.a64, ev.a64, sizeof(ev.a64));
	}
}

/* Count n items of cursor cur's source. */
static void tally(struct rt_trace_set *set, const struct cursor *cur, const struct rt_item *items,
		  size_t n)
{
	struct rt_set_source *s = &set->sources[cur->source];
	struct rt_reader *rd = s->reader;
	struct file_source *fs = s->arena || s->context ? NULL : s->priv;
	for (size_t i = 0; i < n; i++) {
		const struct rt_item *it = &items[i];
		if (rt_item_kind_is_event(it->kind)) {
			set->events++;
			if (it->site < rd->sites.count)
				s->site_counts[it->site]++;
			if (!set->have_span || it->counter < set->first_counter ||
			    it->counter > set->last_counter)
				note_span(set, it, cur->source);
		} else if (s->arena && cur->base != rd->losses &&
			   it->loss.reason == RT_LOSS_DROPPED) {
			/* in a thread's items, a drop is a LOST record of its ring */
			s->lost_records++;
		}
		if (!fs) {
			if (s->context && it->kind == RT_ITEM_LOSS)
				count_loss(&rd->totals, it);
			continue;
		}
		struct rt_reader_thread *t =
		    it->thread < rd->thread_count ? &rd->threads[it->thread] : NULL;
		struct rt_counts *c = t ? &t->counts : &fs->unattributed;
		if (rt_item_kind_is_event(it->kind)) {
			c->present++;
			/* a log item's payload lives no longer than its block */
			if (t && it->kind == RT_ITEM_TRACE)
				t->last = *it;
		} else {
			count_loss(c, it);
		}
	}
}

/*
 * What tally() would count of an arena source's thread items, from what the
 * arena reader counted of them: events, per site, LOST records, time span.
 */
static void tally_arena(struct rt_trace_set *set, uint32_t source)
{
	struct rt_set_source *s = &set->sources[source];
	const struct rt_reader *rd = s->reader;
	for (uint32_t t = 0; t < rd->thread_count; t++)
		set->events += rd->threads[t].counts.present;
	for (uint32_t i = 0; rd->site_events && i < rd->sites.count; i++)
		s->site_counts[i] += rd->site_events[i];
	s->lost_records += rd->lost_records;
	if (rd->have_events) {
		span_counter(set, rd->first_event_counter, source);
		span_counter(set, rd->last_event_counter, source);
	}
}

/* One block of a ring, in the order the file holds it. */
struct file_order_ref {
	uint64_t order;
	struct cursor *cursor;
	size_t block;
};

static int compare_file_order_refs(const void *a, const void *b)
{
	const struct file_order_ref *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * The count pass over the rings whose blocks the file holds in record order
 * already (stream mode, one snapshot): all of them in one sequential read of
 * the files, block by block, each block decoded by its ring's cursor.  Rings
 * read this way are marked counted; the others are read ring by ring.
 */
static int count_in_file_order(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	size_t n = 0;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *c = p->cursors[i].ring;
		if (!c)
			continue;
		c->counted = c->rs->block_count > 0;
		for (size_t k = 1; k < c->rs->block_count && c->counted; k++)
			c->counted = c->rs->blocks[k - 1].order < c->rs->blocks[k].order;
		n += c->counted ? c->rs->block_count : 0;
	}
	if (n == 0)
		return 0;
	struct file_order_ref *refs = malloc(n * sizeof(*refs));
	unsigned char *buf = malloc(SEQUENTIAL_READ);
	if (!refs || !buf) {
		free(refs);
		free(buf);
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *c = p->cursors[i].ring;
		if (!c || !c->counted)
			continue;
		cursor_rewind(c);
		for (size_t k = 0; k < c->rs->block_count; k++) {
			refs[n].order = c->rs->blocks[k].order;
			refs[n].cursor = &p->cursors[i];
			refs[n].block = k;
			n++;
		}
	}
	qsort(refs, n, sizeof(*refs), compare_file_order_refs);
	uint32_t buf_file = UINT32_MAX;
	uint64_t buf_offset = 0, buf_length = 0;
	for (size_t i = 0; i < n; i++) {
		struct cursor *cur = refs[i].cursor;
		struct ring_cursor *c = cur->ring;
		const struct block_ref *ref = &c->rs->blocks[refs[i].block];
		c->block_at = refs[i].block + 1;
		if (add_sat(ref->first_record, ref->count) <= c->expected)
			continue;
		if (ref->file != buf_file || ref->offset < buf_offset ||
		    ref->offset + RT_BLOCK_MAX_BYTES > buf_offset + buf_length) {
			const struct rt_trace_file *f = &set->files[ref->file].file;
			ssize_t got = pread(f->fd, buf, SEQUENTIAL_READ, (off_t)ref->offset);
			if (got < 0 && errno != EINTR)
				p->error = -errno;
			buf_file = ref->file;
			buf_offset = ref->offset;
			buf_length = got > 0 ? (uint64_t)got : 0;
		}
		struct rt_block_header h;
		const unsigned char *b = block_found(c, ref, buf + (ref->offset - buf_offset),
						     buf_offset + buf_length - ref->offset, &h);
		size_t items;
		if (b) {
			items = decode_block(c, b, &h, 1);
		} else {
			items = 0;
			gap_to(c, add_sat(ref->first_record, ref->count), ref->counter_first,
			       &items);
		}
		tally(set, cur, c->items, items);
	}
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *c = p->cursors[i].ring;
		if (c && c->counted) {
			size_t items = 0;
			gap_to_end(c, &items);
			tally(set, &p->cursors[i], c->items, items);
			set->sources[p->cursors[i].source].unknown_records += c->unknown;
			set->sources[p->cursors[i].source].lost_records += c->lost_records;
		}
	}
	free(refs);
	free(buf);
	return 0;
}

/* ---- counting during the scan ---------------------------------------------- */

/*
 * The count pass reads every SLOTS block again after the scan.  When the
 * scan can be sure of giving the very same counts, it counts each SLOTS
 * block from its own buffer instead, as count_in_file_order would, and the
 * count pass only takes the results over.  Sure means: one trace file, one
 * recording, no damage, every ring's blocks in record order; the metadata a
 * block is decoded with may still grow, but nothing that changes a
 * decoding already done: a site already read stays as it was (and a new
 * one comes only if no record missed its site), no LOSS entry covers a
 * ring already counted, no RINGS entry moves its start, and every thread
 * table read later gives each record already counted the same owner
 * (checked whenever the table changes).  Anything else turns it off for
 * good, and the count pass reads the files as before.
 */

/* Metadata rebuilt while counting early, in entries; past it the count pass reads again. */
#define EARLY_WORK_MAX (1ull << 24)

struct early_ring {
	int started;
	uint64_t start;	     /* where its records began: cursor_rewind's expected */
	uint64_t expected;   /* the next record seq */
	uint64_t last_first; /* first record of its last block */
	size_t cover_at, owner_at;
	struct ring_state rs; /* its covers, sorted */
	struct owner *owners;
	size_t owner_count;
};

struct early_source {
	struct rt_reader rd; /* threads and sites as read so far; threads hold the counts */
	struct early_ring *rings;
	size_t ring_capacity;
	uint64_t *site_counts; /* site_slots entries */
	size_t site_slots;
	struct rt_counts unattributed;
	uint64_t unknown, lost_records, misses;
};

static void free_early(struct early_source *es)
{
	if (!es)
		return;
	free(es->rd.threads);
	rt_site_table_free(&es->rd.sites);
	for (size_t i = 0; i < es->ring_capacity; i++) {
		free(es->rings[i].rs.covers);
		free(es->rings[i].owners);
	}
	free(es->rings);
	free(es->site_counts);
	free(es);
}

static struct file_source *early_source_of(struct rt_trace_set *set,
					   const struct rt_block_header *h)
{
	struct set_private *p = priv_of(set);
	if (p->recording_count != 1 || h->source >= p->recordings[0].source_capacity)
		return NULL;
	return p->recordings[0].sources[h->source];
}

/* Whether owners a and b give every record of [from, to) the same thread entry and tid. */
static int owners_agree(const struct owner *a, size_t na, const struct rt_reader_thread *ta,
			const struct owner *b, size_t nb, const struct rt_reader_thread *tb,
			uint64_t from, uint64_t to)
{
	size_t i = 0, k = 0;
	for (uint64_t at = from; at < to;) {
		while (i < na && a[i].end <= at)
			i++;
		while (k < nb && b[k].end <= at)
			k++;
		const struct owner *x = i < na && a[i].first <= at ? &a[i] : NULL;
		const struct owner *y = k < nb && b[k].first <= at ? &b[k] : NULL;
		if (!x != !y)
			return 0;
		if (x && y && (ta[x->thread].entry != tb[y->thread].entry || x->tid != y->tid))
			return 0;
		uint64_t next = to;
		uint64_t nx = x ? x->end : i < na ? a[i].first : to;
		uint64_t ny = y ? y->end : k < nb ? b[k].first : to;
		next = nx < next ? nx : next;
		next = ny < next ? ny : next;
		at = next;
	}
	return 1;
}

/* The thread table again from fs's entries: counts move along, owners must agree. */
static int early_threads(struct set_private *p, struct file_source *fs, struct early_source *es)
{
	struct rt_reader_thread *old = es->rd.threads;
	uint32_t old_count = es->rd.thread_count;
	es->rd.threads = calloc(fs->thread_capacity + 1, sizeof(*es->rd.threads));
	es->rd.thread_count = 0;
	int ok = es->rd.threads != NULL;
	if (ok)
		fill_threads(&es->rd, fs, NULL);
	p->early_work += fs->thread_capacity + 1;
	for (size_t r = 0; ok && r < es->ring_capacity && p->early_work <= EARLY_WORK_MAX; r++) {
		struct early_ring *er = &es->rings[r];
		struct owner *owners;
		size_t n;
		if (!er->started)
			continue;
		if (owners_of_ring(&es->rd, (uint32_t)r, &owners, &n)) {
			ok = 0;
			break;
		}
		p->early_work += es->rd.thread_count + n + er->owner_count;
		ok = old && owners_agree(er->owners, er->owner_count, old, owners, n,
					 es->rd.threads, er->start, er->expected);
		free(er->owners);
		er->owners = owners;
		er->owner_count = n;
		er->owner_at = 0;
	}
	/* both tables are in entry order */
	for (uint32_t i = 0, k = 0; ok && i < old_count; i++) {
		while (k < es->rd.thread_count && es->rd.threads[k].entry < old[i].entry)
			k++;
		struct rt_reader_thread *t =
		    k < es->rd.thread_count && es->rd.threads[k].entry == old[i].entry
			? &es->rd.threads[k]
			: NULL;
		if (!t) {
			static const struct rt_counts none;
			ok = !old[i].last.kind && !memcmp(&old[i].counts, &none, sizeof(none));
			continue;
		}
		t->counts = old[i].counts;
		t->last = old[i].last;
		if (t->last.kind)
			t->last.thread = k;
	}
	free(old);
	return ok && p->early_work <= EARLY_WORK_MAX;
}

static int early_sites(struct file_source *fs, struct early_source *es)
{
	rt_site_table_free(&es->rd.sites);
	memset(&es->rd.sites, 0, sizeof(es->rd.sites));
	if (build_sites(&es->rd, fs))
		return 0;
	size_t slots = (size_t)es->rd.sites.count + 1;
	if (slots > es->site_slots) {
		uint64_t *more = realloc(es->site_counts, slots * sizeof(*more));
		if (!more)
			return 0;
		memset(more + es->site_slots, 0, (slots - es->site_slots) * sizeof(*more));
		es->site_counts = more;
		es->site_slots = slots;
	}
	return 1;
}

/* What a metadata block would change for records counted already. */
static void early_before(struct rt_trace_set *set, const struct rt_block_header *h,
			 const unsigned char *payload)
{
	struct set_private *p = priv_of(set);
	if (!p->early_have_file) {
		p->early_have_file = 1;
		p->early_file_id = h->file_id;
	} else if (h->file_id != p->early_file_id) {
		p->early_off = 1;
		return;
	}
	if (h->type == RT_BLOCK_FILE || h->type == RT_BLOCK_END)
		return;
	struct file_source *fs = early_source_of(set, h);
	struct early_source *es = fs ? fs->early : NULL;
	if (!es)
		return;
	int off = 0;
	if (h->type == RT_BLOCK_SITES) {
		size_t at = 0;
		for (uint32_t i = 0; i < h->count && !off; i++) {
			struct rt_block_site r;
			memcpy(&r, payload + at, sizeof(r));
			const unsigned char *strings = payload + at + sizeof(r);
			uint32_t strings_size = r.size - (uint32_t)sizeof(r);
			at += r.size;
			if (r.index >= MAX_SITES)
				continue;
			const struct site_copy *c =
			    r.index < fs->site_capacity ? &fs->sites[r.index] : NULL;
			if (c && c->present)
				off = memcmp(&c->entry, &r.entry, sizeof(r.entry)) != 0 ||
				      c->strings_size != strings_size ||
				      memcmp(c->strings, strings, strings_size) != 0;
			else
				off = es->misses != 0; /* a record may have named it */
		}
	} else if (h->type == RT_BLOCK_RINGS && !(h->flags & RT_BLOCK_F_FINAL)) {
		const struct recording *rec = &p->recordings[0];
		for (uint32_t i = 0; i < h->count && h->file_seq == rec->first_file_seq && !off;
		     i++) {
			struct rt_block_ring r;
			memcpy(&r, payload + (size_t)i * sizeof(r), sizeof(r));
			off = r.index < es->ring_capacity && es->rings[r.index].started &&
			      (r.index >= fs->ring_capacity || !fs->rings[r.index].has_start);
		}
	} else if (h->type == RT_BLOCK_LOSS) {
		for (uint32_t i = 0; i < h->count && !off; i++) {
			struct rt_block_loss l;
			memcpy(&l, payload + (size_t)i * sizeof(l), sizeof(l));
			off = l.count &&
			      (l.reason == RT_LOSS_REASON_OVERWRITTEN ||
			       l.reason == RT_LOSS_REASON_TORN ||
			       l.reason == RT_LOSS_REASON_DAMAGED) &&
			      l.ring < es->ring_capacity && es->rings[l.ring].started;
		}
	}
	if (off)
		p->early_off = 1;
}

static void early_tally(struct rt_trace_set *set, uint32_t source, struct early_source *es,
			const struct rt_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct rt_item *it = &items[i];
		struct rt_reader_thread *t =
		    it->thread < es->rd.thread_count ? &es->rd.threads[it->thread] : NULL;
		struct rt_counts *c = t ? &t->counts : &es->unattributed;
		/* counting decodes give losses, and events only of no known thread */
		if (rt_item_kind_is_event(it->kind)) {
			c->present++;
			set->events++;
			if (it->site < es->rd.sites.count)
				es->site_counts[it->site]++;
			span_counter(set, it->counter, source);
			continue;
		}
		count_loss(c, it);
	}
}

static int early_slots(struct rt_trace_set *set, struct file_source *fs, uint64_t offset,
		       const struct rt_block_header *h, const unsigned char *b)
{
	struct set_private *p = priv_of(set);
	struct early_source *es = fs->early;
	if (h->count == 0 || h->ring >= fs->ring_capacity)
		return 1;
	struct ring_state *rs = &fs->rings[h->ring];
	if (rs->block_count == 0 || rs->last.offset != offset || rs->last.file != p->current_file)
		return 1; /* not indexed */
	const struct block_ref *ref = &rs->last;
	if (!es) {
		es = fs->early = calloc(1, sizeof(*es));
		if (!es || !early_threads(p, fs, es) || !early_sites(fs, es))
			return 0;
	}
	if (!p->early_cursor && !(p->early_cursor = calloc(1, sizeof(*p->early_cursor))))
		return 0;
	if (grow((void **)&es->rings, &es->ring_capacity, (size_t)h->ring + 1, sizeof(*es->rings)))
		return 0;
	struct early_ring *er = &es->rings[h->ring];
	if (!er->started) {
		/* as cursor_rewind: its first block is its lowest, or the ring is off */
		const struct recording *rec = &p->recordings[0];
		if (rs->has_start)
			er->expected = rs->start_record;
		else
			er->expected = rec->first_file_seq == 0 ? 0 : ref->first_record;
		if (ref->first_record < er->expected)
			er->expected = ref->first_record;
		er->start = er->expected;
		if (rs->cover_count) {
			er->rs.covers = malloc(rs->cover_count * sizeof(*rs->covers));
			if (!er->rs.covers)
				return 0;
			memcpy(er->rs.covers, rs->covers, rs->cover_count * sizeof(*rs->covers));
			er->rs.cover_count = rs->cover_count;
			qsort(er->rs.covers, er->rs.cover_count, sizeof(*er->rs.covers),
			      compare_covers);
		}
		if (owners_of_ring(&es->rd, h->ring, &er->owners, &er->owner_count))
			return 0;
		er->started = 1;
	} else if (ref->first_record < er->last_first) {
		return 0; /* not in record order: the count pass sorts it */
	}
	er->last_first = ref->first_record;
	if (add_sat(ref->first_record, ref->count) <= er->expected)
		return 1; /* every record in it was read already */
	struct ring_cursor *c = p->early_cursor;
	c->set = set;
	c->rd = &es->rd;
	c->fs = fs;
	c->rs = &er->rs;
	c->ring = h->ring;
	c->source = fs->index;
	c->owners = er->owners;
	c->owner_count = er->owner_count;
	c->owner_at = er->owner_at;
	c->cover_at = er->cover_at;
	c->expected = er->expected;
	c->unknown = c->lost_records = c->site_misses = 0;
	c->site_counts = es->site_counts;
	struct rt_block_header bh;
	size_t n;
	if (block_matches(c, ref, b, h->size, &bh)) {
		n = decode_block(c, b, &bh, 1);
	} else {
		n = 0;
		gap_to(c, add_sat(ref->first_record, ref->count), ref->counter_first, &n);
	}
	early_tally(set, fs->index, es, c->items, n);
	er->expected = c->expected;
	er->owner_at = c->owner_at;
	er->cover_at = c->cover_at;
	es->unknown += c->unknown;
	es->lost_records += c->lost_records;
	es->misses += c->site_misses;
	c->owners = NULL;
	return 1;
}

/* After a block was kept: the metadata as it stands now, or the SLOTS block counted. */
static void early_after(struct rt_trace_set *set, uint64_t offset, const struct rt_block_header *h,
			const unsigned char *b)
{
	struct set_private *p = priv_of(set);
	if (h->type == RT_BLOCK_FILE || h->type == RT_BLOCK_END)
		return;
	struct file_source *fs = early_source_of(set, h);
	if (!fs) {
		p->early_off = h->type == RT_BLOCK_SLOTS && h->count && h->source < MAX_SOURCES;
		return;
	}
	int ok = 1;
	if (h->type == RT_BLOCK_SLOTS)
		ok = early_slots(set, fs, offset, h, b);
	else if (fs->early && (h->type == RT_BLOCK_THREADS || h->type == RT_BLOCK_SOURCE))
		ok = early_threads(p, fs, fs->early);
	else if (fs->early && h->type == RT_BLOCK_SITES)
		ok = early_sites(fs, fs->early);
	if (!ok)
		p->early_off = 1;
}

/* The scan is over: what it counted waits for rt_trace_set_count, the set looks as before. */
static void early_finish(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	p->early_done = !p->early_off;
	/* records lost at a ring's end (gap_to_end): the count pass reports them */
	for (size_t i = 0; i < p->recording_count && p->early_done; i++)
		for (size_t k = 0; k < p->recordings[i].source_capacity && p->early_done; k++) {
			const struct file_source *fs = p->recordings[i].sources[k];
			const struct early_source *es = fs ? fs->early : NULL;
			for (size_t r = 0; es && r < fs->ring_capacity && p->early_done; r++) {
				const struct ring_state *rs = &fs->rings[r];
				uint64_t at = r < es->ring_capacity && es->rings[r].started
						  ? es->rings[r].expected
						  : rs->start_record;
				p->early_done = !rs->has_end || rs->end_record <= at;
			}
		}
	p->early_events = set->events;
	p->early_have_span = set->have_span;
	p->early_first = set->first_counter;
	p->early_last = set->last_counter;
	p->early_first_source = set->first_source;
	p->early_last_source = set->last_source;
	set->events = 0;
	set->have_span = 0;
	set->first_counter = set->last_counter = 0;
	set->first_source = set->last_source = 0;
	for (size_t i = 0; i < p->recording_count && !p->early_done; i++)
		for (size_t k = 0; k < p->recordings[i].source_capacity; k++) {
			struct file_source *fs = p->recordings[i].sources[k];
			if (fs) {
				free_early(fs->early);
				fs->early = NULL;
			}
		}
}

/* Whether the two thread tables are the same threads in the same order. */
static int same_threads(const struct rt_reader *a, const struct rt_reader *b)
{
	if (a->thread_count != b->thread_count)
		return 0;
	for (uint32_t i = 0; i < a->thread_count; i++) {
		const struct rt_reader_thread *x = &a->threads[i], *y = &b->threads[i];
		if (x->entry != y->entry || x->tid != y->tid || x->ring != y->ring ||
		    x->first_record != y->first_record || x->end_record != y->end_record)
			return 0;
	}
	return 1;
}

/*
 * Take over what the scan counted, when it counted every ring there is
 * (the count pass was reset just before).  0: the count pass must read.
 */
static int early_apply(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	if (!p->early_done)
		return 0;
	for (size_t i = 0; i < p->cursor_count; i++) {
		const struct ring_cursor *c = p->cursors[i].ring;
		if (!c)
			continue;
		const struct early_source *es = c->fs->early;
		if (!es || c->ring >= es->ring_capacity || !es->rings[c->ring].started ||
		    !same_threads(&es->rd, c->rd) ||
		    es->site_slots != (size_t)c->rd->sites.count + 1)
			return 0;
	}
	for (size_t i = 0; i < p->cursor_count; i++)
		if (p->cursors[i].ring)
			p->cursors[i].ring->counted = 1;
	set->events = p->early_events;
	set->have_span = p->early_have_span;
	set->first_counter = p->early_first;
	set->last_counter = p->early_last;
	set->first_source = p->early_first_source;
	set->last_source = p->early_last_source;
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		struct file_source *fs = s->arena || s->context ? NULL : s->priv;
		const struct early_source *es = fs ? fs->early : NULL;
		if (!es)
			continue;
		memcpy(s->site_counts, es->site_counts, es->site_slots * sizeof(uint64_t));
		s->unknown_records += es->unknown;
		s->lost_records += es->lost_records;
		for (uint32_t t = 0; t < s->reader->thread_count; t++) {
			s->reader->threads[t].counts = es->rd.threads[t].counts;
			s->reader->threads[t].last = es->rd.threads[t].last;
		}
		fs->unattributed = es->unattributed;
	}
	return 1;
}

/* For tests: whether rt_trace_set_count takes over what the scan counted. */
int rt_trace_set_counted_in_scan(const struct rt_trace_set *set)
{
	return priv_of(set)->early_done;
}

int rt_trace_set_count(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	int rc = make_cursors(set);
	if (rc)
		return rc;
	p->error = 0;
	memset(&set->totals, 0, sizeof(set->totals));
	set->events = 0;
	set->have_span = 0;
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		struct rt_reader *rd = s->reader;
		free(s->site_counts);
		s->site_counts = calloc((size_t)rd->sites.count + 1, sizeof(uint64_t));
		if (!s->site_counts)
			return -ENOMEM;
		s->unknown_records = s->lost_records = 0;
		if (s->context)
			memset(&rd->totals, 0, sizeof(rd->totals));
		if (s->arena || s->context)
			continue;
		for (uint32_t t = 0; t < rd->thread_count; t++) {
			memset(&rd->threads[t].counts, 0, sizeof(rd->threads[t].counts));
			memset(&rd->threads[t].last, 0, sizeof(rd->threads[t].last));
		}
		if (s->priv)
			memset(&((struct file_source *)s->priv)->unattributed, 0,
			       sizeof(struct rt_counts));
	}
	int counted = early_apply(set);
	if (!counted && p->index_merged) {
		/* the runs cannot be read: the whole index, then count as any set */
		if ((rc = reopen_indexed(set)) != 0)
			return rc;
		return rt_trace_set_count(set);
	}
	rc = counted ? 0 : count_in_file_order(set);
	if (rc)
		return rc;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct cursor *cur = &p->cursors[i];
		if (cur->ring && cur->ring->counted)
			continue;
		if (cur->arena) {
			/* the arena reader counted its threads' items: none is read again */
			if (i == 0 || p->cursors[i - 1].source != cur->source)
				tally_arena(set, cur->source);
			continue;
		}
		for (cursor_start(cur, INT64_MIN); cur->next < cur->end; cursor_advance(cur))
			tally(set, cur, cur->next, 1);
		if (cur->ring) {
			set->sources[cur->source].unknown_records += cur->ring->unknown;
			set->sources[cur->source].lost_records += cur->ring->lost_records;
		}
	}
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		struct rt_reader *rd = s->reader;
		struct file_source *fs = s->priv;
		if (!s->arena && !s->context && fs) {
			memset(&rd->totals, 0, sizeof(rd->totals));
			for (uint32_t t = 0; t < rd->thread_count; t++) {
				struct rt_counts *c = &rd->threads[t].counts;
				c->committed = add_sat(c->present, rt_counts_lost(c));
				counts_add(&rd->totals, c);
			}
			fs->unattributed.committed =
			    add_sat(fs->unattributed.present, rt_counts_lost(&fs->unattributed));
			counts_add(&rd->totals, &fs->unattributed);
			entry_last(rd, fs);
			/* records before the first file read are in earlier files: not lost */
			if (fs->first_file_seq > 0)
				for (size_t r = 0; r < fs->ring_capacity; r++)
					s->earlier_records =
					    add_sat(s->earlier_records, fs->rings[r].start_record);
		}
		counts_add(&set->totals, &rd->totals);
	}
	set->processes = count_processes(set);
	return p->error;
}

/* ---- the merge ----------------------------------------------------------- */

/*
 * The one merge (read/merge.h) over every cursor, keyed by source: the next
 * block of a trace file's ring, the next window of an arena thread.
 */
static size_t merge_refill(void *state, const struct rt_item **items)
{
	struct cursor *cur = state;
	cur->next = cur->end;
	if (cur->arena) {
		arena_refill(cur);
	} else if (cur->ring) {
		size_t n = cursor_refill(cur->ring);
		cur->next = cur->ring->items;
		cur->end = cur->ring->items + n;
	}
	*items = cur->next;
	return (size_t)(cur->end - cur->next);
}

int rt_trace_set_start(struct rt_trace_set *set, int32_t tid)
{
	return rt_trace_set_start_from(set, tid, INT64_MIN);
}

int rt_trace_set_start_from(struct rt_trace_set *set, int32_t tid, int64_t from_ns)
{
	struct set_private *p = priv_of(set);
	int rc;
	if (p->index_merged) {
		/* runs of blocks cannot be read: the whole index first */
		if ((rc = reopen_indexed(set)) != 0)
			return rc;
		p = priv_of(set);
	}
	rc = make_cursors(set);
	if (rc)
		return rc;
	p->error = 0;
	p->tid = tid;
	size_t n = 0;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct cursor *c = &p->cursors[i];
		cursor_start(c, p->seek_off ? INT64_MIN : from_ns);
		if (c->next >= c->end)
			continue;
		struct rt_merge_source *m = &p->merge_sources[n++];
		m->items = c->next;
		m->count = (size_t)(c->end - c->next);
		m->refill = c->ring || c->arena ? merge_refill : NULL;
		m->state = c;
		m->key = c->source;
	}
	rt_merge_free(&p->merge);
	rc = rt_merge_init(&p->merge, p->merge_sources, n);
	return rc ? rc : p->error;
}

const struct rt_item *rt_trace_set_next(struct rt_trace_set *set, uint32_t *source)
{
	struct set_private *p = priv_of(set);
	const struct rt_item *it;
	while ((it = rt_merge_next(&p->merge)) != NULL) {
		if (p->tid > 0 && it->tid != p->tid)
			continue;
		*source = p->merge.key;
		p->held = *it;
		/* a loss of a source whose clock is lost says where it sorts, not when */
		if (p->held.kind == RT_ITEM_LOSS && set->sources[*source].reader->raw_time)
			p->held.flags &= (uint8_t)~RT_ITEM_TIMED;
		return &p->held;
	}
	return NULL;
}

int rt_trace_set_error(const struct rt_trace_set *set)
{
	return priv_of(set)->error;
}

size_t rt_trace_set_damage_regions(const struct rt_trace_set *set)
{
	size_t n = 0;
	for (size_t i = 0; i < set->source_count; i++)
		n += set->sources[i].reader->damage.count;
	return n;
}

const struct rt_damage *rt_trace_set_file_region(const struct rt_trace_set *set, size_t file,
						 uint64_t offset)
{
	if (file >= set->file_count)
		return NULL;
	const struct rt_damage_list *list =
	    &set->sources[set->files[file].recording].reader->damage;
	/* in the order the files were scanned, then by offset */
	size_t lo = 0, hi = list->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct rt_damage *d = &list->items[mid];
		if (d->index < file || (d->index == file && d->offset < offset))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < list->count && list->items[lo].index == file && list->items[lo].offset == offset)
		return &list->items[lo];
	return NULL;
}

int rt_trace_set_damaged(const struct rt_trace_set *set)
{
	if (rt_trace_set_damage_regions(set))
		return 1;
	/* losses a file notes (a cut of a damaged input) are not damage of the file */
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_counts *c = &set->sources[i].reader->totals;
		if (c->damaged > c->damaged_noted)
			return 1;
	}
	return 0;
}

/* The wall-clock time of the set's zero, from the first source whose clock says. */
uint64_t rt_trace_set_wall_start(const struct rt_trace_set *set)
{
	for (size_t i = 0; set && i < set->source_count; i++) {
		const struct rt_reader *rd = set->sources[i].reader;
		if (set->sources[i].context || rd->raw_time || !rd->header.start.wall_ns)
			continue;
		int64_t since = rt_timebase_ns(&rd->timebase, rd->header.start.counter);
		if (since < 0 || (uint64_t)since > rd->header.start.wall_ns)
			continue;
		return rd->header.start.wall_ns - (uint64_t)since;
	}
	return 0;
}
