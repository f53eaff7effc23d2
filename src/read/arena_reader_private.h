/*
 * arena_reader_private.h - what the files of the arena reader
 * (read/arena_reader.h) share: the ring walk's state, and the functions one
 * of those files gives the others.
 */
#ifndef RT_READ_ARENA_READER_PRIVATE_H
#define RT_READ_ARENA_READER_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/proc_stat.h"
#include "format/arena_layout.h"
#include "format/records.h"
#include "read/arena_reader.h"
#include "read/arena_walk.h"
#include "read/entry_checks.h"
#include "read/header_recovery.h"
#include "read/map_guard.h"

/* Log payloads: chunks that never move, so items can point into them. */
struct rt_reader_payloads {
	struct rt_reader_payloads *next;
	size_t used, size;
	unsigned char bytes[];
};

/* One thread's claim on a ring: records [first, end), and what the check pass saw of them. */
struct owner {
	struct rt_reader_thread *thread;
	uint64_t first;
	uint64_t end;
	size_t begin;	 /* the ring's items before its first one */
	size_t count;	 /* its items */
	size_t position; /* the ring's items whose seq is below first */
	uint64_t first_seq, first_counter, last_seq, last_counter;
	uint64_t present;		/* its events */
	uint64_t dropped;		/* what its LOST records count */
	size_t gap_begin, gap_count;	/* its gaps between two items (struct gap) */
	struct rt_walk_mark start;	/* the walk just before its first item */
	struct rt_walk_mark last_event; /* the walk just before its newest event */
	int has_last_event;
};

/* The ring's control words, taken before the site table is loaded. */
struct ring_snapshot {
	uint32_t ring;
	uint64_t head;
	uint64_t reserve;
	uint64_t records;
	uint64_t dropped;
	uint64_t noted;
	int live;	       /* the writer may still be writing: the walk reads a copy */
	int torn;	       /* a dead writer left [head, reserve) half-written */
	uint64_t window_start; /* max(reserve - ring_slots, 0) */
	uint64_t walk_from;    /* where the walk starts: window_start, or later if lapped */
	union rt_slot *copy;   /* live writer: slots [window_start, head), else NULL */
	uint64_t readable;     /* slots of the ring the file holds (fewer if it is cut short) */
	long desc_damage;      /* its descriptor's damaged region, or -1 */
	/* the check pass's: slots that did not decode, and the walk's totals */
	struct rt_walk_runs runs;
	struct rt_walk walk;
	size_t item_count;
	int oldest_estimated; /* window_oldest() counted back over slots that did not decode */
};

/* Every ring that holds records, split between its owners (none: no entry claims it). */
struct ring_plan {
	struct owner *owners; /* sorted by ring, then first record */
	size_t owner_count;
	struct ring_snapshot *snaps; /* sorted by ring */
	size_t ring_count;
};

/* arena_reader.c */
int rt_arena_add_loss(struct rt_reader *rd, const struct rt_reader_thread *t, uint32_t reason,
		      uint32_t note, uint64_t count, uint64_t counter, uint64_t seq,
		      unsigned flags);
int rt_arena_open_arena(const void *data, size_t size, int fd, const char *name, int rings,
			struct rt_reader **out, struct rt_read_error *error);
int rt_arena_open_mapped(const char *path, int rings, struct rt_reader **out,
			 struct rt_read_error *error);
int rt_arena_open_fd(int fd, const char *path, int rings, struct rt_reader **out,
		     struct rt_read_error *error);

/* arena_reader_threads.c */
int rt_arena_thread_entry_damage(struct rt_reader *rd, uint32_t index, const char *why);
int rt_arena_absurd_count(struct rt_reader *rd, uint32_t part, uint32_t index, uint64_t offset,
			  const char *entry, const char *field, uint64_t *value);
uint64_t rt_arena_used_now(const struct rt_reader *rd, size_t field, int wide);
int rt_arena_load_threads(struct rt_reader *rd);
void rt_arena_entry_last_event(const struct rt_reader *rd, const struct rt_reader_thread *t,
			       struct rt_item *out, struct rt_last_event *kept);
void rt_arena_find_last_event(const struct rt_reader *rd, struct rt_reader_thread *t);

/* arena_reader_sites.c */
int rt_arena_raw_long_records(const struct rt_reader *rd);
long rt_arena_site_region(struct rt_reader *rd, uint32_t index, const char *why);
int rt_arena_load_sites(struct rt_reader *rd);

/* arena_reader_modules.c */
int rt_arena_load_modules(struct rt_reader *rd);

/* arena_reader_rings.c */
const struct rt_ring_desc *rt_arena_ring_desc(const struct rt_reader *rd, uint32_t ring,
					      struct rt_ring_desc *copy);
uint64_t rt_arena_held_from(const struct rt_reader *rd, uint32_t ring, uint64_t readable,
			    uint64_t from, uint64_t head);
int rt_arena_copy_window(const struct rt_reader *rd, const struct rt_ring_desc *d,
			 struct ring_snapshot *snap);
void rt_arena_walk_source(const struct rt_reader *rd, const struct ring_snapshot *snap,
			  struct rt_walk_source *src);
void rt_arena_free_plan(struct ring_plan *plan);
int rt_arena_plan_rings(struct rt_reader *rd, struct ring_plan *plan);
int rt_arena_decode_rings(struct rt_reader *rd, struct ring_plan *plan);

static inline uint64_t add_saturating(uint64_t a, uint64_t b)
{
	uint64_t sum;
	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

#endif /* RT_READ_ARENA_READER_PRIVATE_H */
