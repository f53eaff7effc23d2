/*
 * cut_out.h - the output of `ringtrace cut`: a new trace file written from
 * what a reader recovered (items and reader metadata) rather than from an
 * arena.
 *
 * The file is an ordinary one-file recording (docs/FORMAT.md, "Trace
 * files"): FILE, then per source its metadata (SOURCE, RINGS, THREADS,
 * SITES, MODULES) rebuilt from its struct rt_reader, then records re-encoded as
 * slots in SLOTS blocks, LOSS blocks, END.  Records are kept in one
 * pending block per (source, ring) until it is full or the next record is
 * not the one after, so memory grows with the rings, not the events.  The
 * slot seq tags of a ring count on from the slot position its RINGS entry
 * gave.  As in the collector's files, the metadata of every source but
 * RINGS is written again inside the file every so often (trace_writer.h,
 * rt_trace_writer_set_copies), so that damage to the head leaves a copy.
 */
#ifndef RT_CMD_CUT_OUT_H
#define RT_CMD_CUT_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "read/arena_reader.h"
#include "ringtrace/format.h"

struct rt_cut_out;

/*
 * Create OUT (an existing file that is not a trace file is refused, as the
 * collector's writer refuses it) with its FILE block.  0, or -errno with
 * message.
 */
int rt_cut_out_open(struct rt_cut_out **out, const char *path, char *message, size_t size);

/*
 * The head of source number `source`: SOURCE (when has_header: the leading
 * bytes of rd->header, without its lost_* counters, and parent_pid), then RINGS of
 * rings[0..ring_count) (each ring's slot position is where its slot tags start), then THREADS
 * (every thread of rd, without lost_no_ring or last events: the cut says
 * those as losses and records), SITES (every valid site of rd with its
 * strings) and MODULES (every module of rd's map, loaded and unloaded, with
 * its table index, so that addresses name the same functions).  counter
 * stamps the metadata blocks.  rd is read again for every copy of the
 * metadata: it must stay until rt_cut_out_close().  0 or -errno.
 */
int rt_cut_out_source(struct rt_cut_out *o, uint32_t source, const struct rt_reader *rd,
		      int has_header, int32_t parent_pid, const struct rt_block_ring *rings,
		      size_t ring_count, uint64_t counter);

/*
 * One record of ring `ring` of source `source`, record seq `seq`: slots
 * [0, nslots) as they go into the file but for their seq tags, which are
 * set here.  0 or -errno.
 */
int rt_cut_out_record(struct rt_cut_out *o, uint32_t source, uint32_t ring, uint64_t seq,
		      union rt_slot *slots, unsigned nslots);

/* One LOSS entry of source `source`.  0 or -errno. */
int rt_cut_out_loss(struct rt_cut_out *o, uint32_t source, const struct rt_block_loss *loss);

/* Write every pending block. */
int rt_cut_out_flush(struct rt_cut_out *o);

/*
 * Flush, END (reason: enum rt_file_end), close, free o (NULL allowed).
 * 0 or -errno; message says why when it failed.
 */
int rt_cut_out_close(struct rt_cut_out *o, uint32_t reason, char *message, size_t size);

/* Why writing failed, "" while it has not. */
const char *rt_cut_out_error(const struct rt_cut_out *o);

/* Records and bytes written so far. */
uint64_t rt_cut_out_records(const struct rt_cut_out *o);
uint64_t rt_cut_out_bytes(const struct rt_cut_out *o);

#endif /* RT_CMD_CUT_OUT_H */
