/*
 * trace_set_private.h - the private state of a trace set (read/trace_set.h),
 * shared by the files that open, scan, count and read it: what the scan
 * keeps, the cursors, and the functions one of those files gives the others.
 */
#ifndef RT_READ_TRACE_SET_PRIVATE_H
#define RT_READ_TRACE_SET_PRIVATE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
/* Windows of other ring cursors looked in before a read of one's own. */
#define RECENT_WINDOWS 8
/* Items one block can give: a record or a gap before each slot, and a few more. */
#define CURSOR_ITEMS (2 * RT_BLOCK_MAX_SLOTS + 8)
/*
 * A set opened to read (and count as it scans, or not) keeps a ring's
 * blocks that follow one another in its file, with nothing damaged between
 * them and at most this many bytes from one to the next, as one run
 * (index_runs): its cursor finds them by walking the file forward from the
 * first, reading what lies between, and a walk from a time walks a run's
 * headers to its first block at or after it.
 */
#define RUN_GAP_MAX (64u << 10)
/* Bytes read at once by the count pass in file order. */
#define SEQUENTIAL_READ (256u << 10)

static inline uint64_t add_sat(uint64_t a, uint64_t b)
{
	uint64_t s;
	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

/* A growing array: *items of *count, room for *capacity.  0 or -ENOMEM. */
static inline int grow(void **items, size_t *capacity, size_t need, size_t size)
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
	uint64_t offset;      /* of the block, or of a run's first block */
	uint64_t last_offset; /* of a run's last block; offset for one block */
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
	 * The index of its SLOTS blocks.  A run of blocks whose records follow
	 * each other can be one entry: first_record, count and the counters
	 * span the run, offset is its first block's, last_offset its last's.
	 * A set opened only to count (rt_trace_set_open_counting) keeps such
	 * runs while the scan counts them itself, and no cursor reads them
	 * (index_merged); a set opened to read keeps runs its cursors walk
	 * (index_runs, RUN_GAP_MAX).
	 */
	struct block_ref *blocks;
	size_t block_count, block_capacity;
	uint64_t run_damage;   /* damage_seen when its last entry's last block was kept */
	struct block_ref last; /* the last SLOTS block kept, as itself (early_slots) */
	struct cover *covers;
	size_t cover_count, cover_capacity;
	/* the gaps a damaged region explains, by first record (rt_set_attribute_gaps) */
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
	struct rt_trace_set *tally;    /* counting while reading: the set its items count in */
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
	/* walking a run (index_runs): where the next block may be, its first record, what is left
	 */
	uint64_t run_at, run_next, run_left;
	const struct block_ref *run;
	uint64_t unknown, lost_records; /* this pass */
	int counted;			/* counted in file order (rt_set_count_in_file_order) */
	uint64_t *site_counts;		/* where rt_set_decode_block counts: NULL, the source's */
	uint64_t site_misses;		/* records whose site lookup failed */
	/*
	 * Counting while reading: whether the walk tallies a block's events as
	 * it decodes them (set where a walk starts, rt_trace_set_start_from),
	 * and how many of the items the cursor holds now it tallied so (each
	 * an event of a known thread: rt_set_tally_block counts the rest).
	 */
	int tallying;
	size_t tallied;
	/* a cache line each: an item is read whole, and one line is one miss */
	_Alignas(64) struct rt_item items[CURSOR_ITEMS];
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
	struct rt_item held; /* an item rt_trace_set_next changed before returning it */
	/* rt_trace_set_skip_trace: what the reader drops, and how many were */
	int (*skips)(void *state, const struct rt_site *site);
	void *skips_state;
	uint64_t skipped;
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
	 * rt_trace_set_count_while_reading: asked for, on in the walk begun
	 * last (one that reads everything), and whether that walk got to its
	 * end with every item counted.
	 */
	int count_while_reading, tally_on, tallied;
	/*
	 * Opened only to count: the block index is kept in runs while the scan
	 * counts (index_merged once a run holds two blocks), so that its memory
	 * does not grow with the file; the inputs, to open again with the whole
	 * index when the scan's count cannot be used after all.
	 */
	int counting_only;
	int index_merged;
	/* runs a cursor walks: kept (runs_wanted), and whether any holds two blocks */
	int runs_wanted, index_runs;
	/*
	 * The ring cursors that read a window last, newest first: a file's
	 * rings interleave their blocks, so a cursor's next block is often in
	 * the window another cursor read just before (read/trace_set_cursors.c).
	 */
	struct ring_cursor *recent_windows[RECENT_WINDOWS];
	int read_only;	      /* opened with rt_trace_set_open_reading */
	uint64_t damage_seen; /* damaged regions the scan met so far: a run never spans one */
	char *const *input_paths;
	size_t input_path_count;
};

static inline struct set_private *priv_of(const struct rt_trace_set *set)
{
	return set->priv;
}

/*
 * Whether a ring cursor that tallies as it decodes (ring_cursor.tallying)
 * counted item already: an event of a known thread.
 */
static inline int rt_set_tallied_as_decoded(const struct rt_item *it, uint32_t thread_count)
{
	return it->kind == RT_ITEM_TRACE && it->thread < thread_count;
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

struct early_ring {
	int started;
	uint64_t start;	     /* where its records began: rt_set_cursor_rewind's expected */
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

/* trace_set.c */
int rt_set_reopen_indexed(struct rt_trace_set *set);

/* trace_set_sources.c */
int rt_set_add_source(struct rt_trace_set *set, struct rt_reader *rd, const char *name,
		      uint32_t *index);
struct rt_reader *rt_set_empty_reader(const char *name);
void rt_set_free_meta_reader(struct rt_reader *rd);
struct recording *rt_set_find_recording(struct rt_trace_set *set, uint64_t file_id,
					const char *name);
struct file_source *rt_set_find_file_source(struct recording *r, uint32_t number);
struct ring_state *rt_set_ring_of(struct file_source *fs, uint32_t ring);

/* trace_set_scan.c */
int rt_set_on_damage(void *context, struct rt_trace_file *f, uint64_t offset, uint64_t length,
		     const char *why, int cut);
int rt_set_on_block_scan(void *context, struct rt_trace_file *f, uint64_t offset,
			 const struct rt_block_header *h, const unsigned char *b);
int rt_set_file_damage(struct rt_trace_set *set, struct scan_state *st, struct rt_set_file *sf);
int rt_set_scan_reads_slots(void *context);
int rt_set_scan_checks_packed(void *context);

/* trace_set_metadata.c */
int rt_set_build_sites(struct rt_reader *rd, struct file_source *fs);
void rt_set_fill_threads(struct rt_reader *rd, const struct file_source *fs, uint32_t *of_entry);
uint64_t rt_set_since(uint64_t now, uint64_t earlier);
int rt_set_compare_items(const void *a, const void *b);
int rt_set_finish_file_source(struct rt_trace_set *set, struct file_source *fs);
uint32_t rt_set_count_processes(const struct rt_trace_set *set);
void rt_set_align_timebases(struct rt_trace_set *set);

/* trace_set_gaps.c */
int rt_set_attribute_gaps(struct rt_trace_set *set, struct recording *rec);

/* trace_set_decode.c */
void rt_set_gap_to(struct ring_cursor *c, uint64_t to, uint64_t counter, size_t *n);
void rt_set_gap_to_end(struct ring_cursor *c, size_t *n);
size_t rt_set_decode_block(struct ring_cursor *c, const unsigned char *b,
			   const struct rt_block_header *h, int counting);
/* Read and decode the block of ref into the cursor's items; a gap when it no longer checks. */
size_t rt_set_read_ref(struct ring_cursor *c, const struct block_ref *ref);
int rt_set_block_matches(const struct ring_cursor *c, const struct block_ref *ref,
			 const unsigned char *b, uint64_t avail, struct rt_block_header *h);
const unsigned char *rt_set_block_found(struct ring_cursor *c, const struct block_ref *ref,
					const unsigned char *b, uint64_t avail,
					struct rt_block_header *h);

/* trace_set_cursors.c */
int rt_set_compare_covers(const void *a, const void *b);
int rt_set_owners_of_ring(const struct rt_reader *rd, uint32_t ring, struct owner **out,
			  size_t *count);
uint64_t rt_set_uncovered_in(const struct ring_state *rs, size_t *at_cover, uint64_t from,
			     uint64_t to);
void rt_set_sort_ring(struct ring_state *rs);
uint64_t rt_set_ring_first_record(const struct ring_state *rs, const struct recording *rec);
void rt_set_cursor_rewind(struct ring_cursor *c);
size_t rt_set_cursor_refill(struct ring_cursor *c);
int rt_set_arena_refill(struct cursor *cur);
int rt_set_cursor_advance(struct cursor *cur);
void rt_set_cursor_start(struct cursor *cur, int64_t from_ns);
int rt_set_make_cursors(struct rt_trace_set *set);

/* trace_set_windows.c */
/*
 * The bytes of ref's block, read through the cursor's read-ahead (*avail of
 * them from there on), as the file holds them; without read-ahead, the
 * block read and checked alone, a PACKED one expanded.  NULL when it
 * cannot be read (*error set when a read failed).  Good until the next
 * call for any cursor of the set.
 */
const unsigned char *rt_set_cursor_bytes(struct ring_cursor *c, const struct block_ref *ref,
					 uint64_t *avail, int *error);

/* trace_set_count.c */
void rt_set_count_loss(struct rt_counts *c, const struct rt_item *it);
void rt_set_counts_add(struct rt_counts *to, const struct rt_counts *c);
void rt_set_span_counter(struct rt_trace_set *set, uint64_t counter, uint32_t source);
void rt_set_entry_last(struct rt_reader *rd, struct file_source *fs);
void rt_set_tally(struct rt_trace_set *set, const struct cursor *cur, const struct rt_item *items,
		  size_t n);
void rt_set_tally_arena(struct rt_trace_set *set, uint32_t source);
/* rt_set_tally of a cursor's items, but for those its ring cursor tallied decoding them. */
void rt_set_tally_block(struct rt_trace_set *set, const struct cursor *cur,
			const struct rt_item *items, size_t n);
int rt_set_count_in_file_order(struct rt_trace_set *set);

/* trace_set_scan_count.c: a count's parts, for counting while reading too */
int rt_set_count_reset(struct rt_trace_set *set);
void rt_set_tally_cursor(struct rt_trace_set *set, size_t i);
void rt_set_count_finish(struct rt_trace_set *set);

/* trace_set_scan_count.c */
void rt_set_early_after(struct rt_trace_set *set, uint64_t offset, const struct rt_block_header *h,
			const unsigned char *b);
void rt_set_free_early(struct early_source *es);
void rt_set_early_before(struct rt_trace_set *set, const struct rt_block_header *h,
			 const unsigned char *payload);
void rt_set_early_finish(struct rt_trace_set *set);

#endif /* RT_READ_TRACE_SET_PRIVATE_H */
