/*
 * source.h - the collector's private state: one source per attached arena,
 * and what it has written of it so far.  Shared by collector.c (the public
 * API), metadata.c (rundown and metadata changes) and drain.c (records and
 * losses).
 */
#ifndef RT_COLLECT_SOURCE_H
#define RT_COLLECT_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "collect/collector.h"
#include "collect/trace_writer.h"
#include "common/file_data.h"
#include "ringtrace/format.h"

/* What the collector has written of one ring. */
struct rt_source_ring {
	uint64_t next_slot;   /* slot seq where the next SLOTS block of this ring begins */
	uint64_t next_record; /* record seq of the next record to write */
	uint64_t head;	      /* stream: head loaded (acquire) before the metadata pass */
	uint64_t last_lost;   /* drops reported by the LOST records last written, if newest */
};

struct rt_source {
	int index; /* source number in the output */
	int active;
	char *path;
	unsigned char *map; /* the arena, mapped shared read-write */
	uint64_t size;
	uint64_t shrunk_from; /* 1 + where the file stopped when it shrank under map, or 0 */
	/*
	 * where the arena holds data (its fd kept open while mapped): a table
	 * page or ring never written is a hole, read as zeros and not through
	 * the mapping, where a read allocates a page of shared memory
	 */
	struct rt_file_data data;
	int32_t parent_pid;
	struct rt_arena_header header; /* checked copy: geometry only is trusted */
	uint64_t ring_slots;
	uint32_t ring_count;
	struct rt_source_ring *rings;
	union rt_slot *copy; /* flight: a ring's window, copied */
	uint64_t copy_slots; /* room in copy: as much as a window the arena holds needed */

	/* metadata written, to tell what changed */
	struct rt_thread_entry *threads; /* thread_capacity copies of what was written */
	unsigned char *thread_written;
	/*
	 * The THREADS index of each entry's occupant written (the entry's own
	 * index for its first occupant), the next index for a later occupant,
	 * and the events lost for want of a ring that the occupants gone from
	 * the table had counted (their copies in the file hold them).
	 */
	uint32_t *thread_number;
	uint32_t next_thread_number;
	uint64_t retired_lost;
	unsigned char *site_written; /* site_capacity flags */
	uint32_t sites_scanned;	     /* entries below it are all written or skipped for good */
	uint64_t sync_sequence;	     /* of the last SOURCE block */
	uint32_t state, end_reason;  /* of the last SOURCE block */
	uint64_t source_written_ns;  /* CLOCK_MONOTONIC of the last SOURCE block */
	uint64_t header_lost;	     /* the header's lost events in the last SOURCE block */
	uint64_t threads_lost_ns; /* CLOCK_MONOTONIC when lost_no_ring changes were last written */
	uint32_t snapshots_served;
	/* the module map written: each entry's unload_counter then, UINT64_MAX if not yet */
	uint64_t *module_unload;
	uint32_t modules_seen;	      /* modules_used when the module table was last scanned */
	uint32_t module_unloads_seen; /* module_unloads then */
};

struct rt_collector {
	struct rt_trace_writer *writer;
	struct rt_source **sources;
	int source_count;
	struct rt_collector_stats stats;
	/* pacing (rt_collector_wait_ns) */
	uint64_t pass_ns;      /* CLOCK_MONOTONIC of the last pass's head loads */
	uint64_t fill_ns;      /* time the fastest stream ring took lately to fill, estimated */
	uint32_t pass_fill;    /* of the current pass: the fullest ring, in 1/65536 of a ring */
	uint32_t full_wait_us; /* what attached stream arenas get (rt_collector_set_full_wait) */
};

/* Live views into the mapping: every index is checked by the caller. */
static inline struct rt_arena_header *rt_source_live(const struct rt_source *s)
{
	return (struct rt_arena_header *)s->map;
}
static inline struct rt_ring_desc *rt_source_desc(const struct rt_source *s, uint32_t ring)
{
	return (struct rt_ring_desc *)(s->map + s->header.ring_desc_offset +
				       (uint64_t)ring * sizeof(struct rt_ring_desc));
}
static inline const union rt_slot *rt_source_slots(const struct rt_source *s, uint32_t ring)
{
	return (const union rt_slot *)(s->map + s->header.ring_area_offset +
				       (uint64_t)ring * s->header.ring_bytes);
}
static inline const struct rt_thread_entry *rt_source_thread(const struct rt_source *s,
							     uint32_t index)
{
	return (const struct rt_thread_entry *)(s->map + s->header.thread_table_offset +
						(uint64_t)index * sizeof(struct rt_thread_entry));
}

/* The rings the live header says are in use, clamped to ring_count. */
uint32_t rt_source_rings_used(const struct rt_source *s);

/*
 * The first ring at or past ring (below used) whose descriptor the arena
 * holds data for, or used: a descriptor in a hole is a ring never claimed,
 * never read (a read through the shared mapping would allocate it).
 */
static inline uint32_t rt_source_next_ring(struct rt_source *s, uint32_t ring, uint32_t used)
{
	return (uint32_t)rt_file_data_next_entry(&s->data, s->header.ring_desc_offset,
						 sizeof(struct rt_ring_desc), ring, used);
}

/* The source's raw clock now (for metadata blocks' counters), 0 if unknown here. */
uint64_t rt_source_counter_now(const struct rt_source *s);

/*
 * Collecting blocks of fixed- or variable-size entries: entries go into the
 * current block until the next one would not fit, then it is committed and
 * a new one begun.  Errors stick: rt_builder_end() returns the first.
 */
struct rt_builder {
	struct rt_trace_writer *w;
	const struct rt_source *source;
	uint8_t type;
	uint32_t flags;	      /* the header's flags */
	unsigned char *block; /* NULL until the first entry */
	uint32_t used;	      /* bytes of the block so far */
	uint32_t count;
	int rc;
};
void rt_builder_begin(struct rt_builder *b, struct rt_trace_writer *w, const struct rt_source *s,
		      uint8_t type);
/* Room for an entry of size bytes (a multiple of 8), zeroed, or NULL after an error. */
void *rt_builder_add(struct rt_builder *b, uint32_t size);
int rt_builder_end(struct rt_builder *b);

/* metadata.c */
int rt_metadata_rundown(struct rt_collector *c, struct rt_source *s, struct rt_trace_writer *w);
/* New sites, changed threads, a changed header: written before records that need them. */
int rt_metadata_update(struct rt_collector *c, struct rt_source *s, int final);
int rt_metadata_write_source(struct rt_source *s, struct rt_trace_writer *w);
/* A copy of SOURCE, THREADS and SITES inside the file (all of them). */
int rt_metadata_copy(struct rt_source *s, struct rt_trace_writer *w);
/* RINGS with RT_BLOCK_F_FINAL: where each ring's records in this file end. */
int rt_metadata_final(struct rt_source *s, struct rt_trace_writer *w);
/*
 * A file ends while the source goes on (rotation): the header and every
 * thread entry as they are now, so that the file's own counts of losses
 * outside the rings reach its end (the next file starts from its rundown),
 * then RINGS with RT_BLOCK_F_FINAL.
 */
int rt_metadata_file_end(struct rt_source *s, struct rt_trace_writer *w);
/*
 * The events the metadata written last counts lost outside the rings (no
 * ring, no thread entry, no site, an image replaced unread), as a reader
 * of the file counts them.
 */
uint64_t rt_metadata_lost(const struct rt_source *s);
/*
 * The THREADS index of the thread now in arena entry index, if its copy was
 * written and it is still there; else RT_NO_RING.
 */
uint32_t rt_metadata_thread_number(const struct rt_source *s, uint32_t index);

/* drain.c */
void rt_drain_init_rings(struct rt_source *s);
/* Stream: heads loaded (acquire) before the metadata pass. */
void rt_drain_load_heads(struct rt_source *s);
/* Stream: write every ring up to the loaded head, move the tails.  Records written, or -errno. */
int64_t rt_drain_stream(struct rt_collector *c, struct rt_source *s);
/* Flight: write every ring's window.  Records written, or -errno. */
int64_t rt_drain_snapshot(struct rt_collector *c, struct rt_source *s);
/*
 * The end of a source: drops no LOST record reports and, when its process
 * is gone, a record torn by its death.
 */
int rt_drain_final_losses(struct rt_collector *c, struct rt_source *s, int gone);
/*
 * The output failed: nothing more reaches the file, but the closing count
 * must still add up.  stats.records counts every record in a block the
 * writer accepted (write_records adds them as it commits); this adds the
 * rings' drops, and the records the rings committed that are in no
 * accepted block (never taken, or in the block whose commit failed), as
 * taken: with the ones a failed write kept out of the file, they are the
 * "not written" loss.
 */
void rt_drain_count_unwritten(struct rt_collector *c, struct rt_source *s);

#endif /* RT_COLLECT_SOURCE_H */
