/*
 * entry_checks.h - whether a thread entry or a ring descriptor can be
 * believed, each on its own, and what a ring's own slots say its counters
 * were when its descriptor cannot.
 *
 * The format keeps no checksum, so these checks are what the writer's
 * invariants allow: fields in range, reserved bytes zero, counters that
 * fit each other and the slots they describe.  They are strict where a
 * mistake would show a wrong event (a thread entry that fails any check is
 * not a thread: its records are counted as damaged, never shown as its
 * events) and silent where a live or killed writer can legitimately leave
 * a field half-written.
 */
#ifndef RT_READ_ENTRY_CHECKS_H
#define RT_READ_ENTRY_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "common/file_data.h"
#include "ringtrace/format.h"

/*
 * A thread entry that is claimed (state LIVE or EXITED): 1 if it can be
 * believed, else 0 with why (a few words) filled.  ring_count is the
 * arena's.
 */
int rt_thread_entry_ok(const struct rt_thread_entry *e, uint32_t ring_count, char *why,
		       size_t why_size);

/* Whether all size bytes at p are zero. */
int rt_bytes_zero(const void *p, size_t size);

/* A ring's counters, as its descriptor says or as its slots imply. */
struct rt_ring_counters {
	uint64_t head;
	uint64_t reserve;
	uint64_t records;
};

/*
 * A ring's slots as the file holds them: slot index i at slots[i], read only
 * when rt_ring_view_has() says the file holds it (not past the end of a
 * file cut short, not in a hole: common/file_data.h).
 */
struct rt_ring_view {
	const union rt_slot *slots;
	uint64_t ring_slots;
	uint64_t readable;	   /* slots from the ring's start up to the file's end */
	struct rt_file_data *data; /* where the file holds data (NULL: everywhere) */
	uint64_t offset;	   /* the file offset of slot 0 */
};

int rt_ring_view_has_slow(const struct rt_ring_view *v, uint64_t index);

/*
 * Asked for every slot a walk reads: inline, and answered from the data
 * run found last (file_data.h) when the slot lies in it, as it nearly
 * always does; the file is asked only past it.
 */
static inline int rt_ring_view_has(const struct rt_ring_view *v, uint64_t index)
{
	if (index >= v->readable)
		return 0;
	const struct rt_file_data *d = v->data;
	if (!d || d->fd < 0)
		return 1;
	uint64_t at = v->offset + index * RT_SLOT_SIZE;
	if (at >= d->from[d->last] && at + RT_SLOT_SIZE <= d->to[d->last])
		return 1;
	return rt_ring_view_has_slow(v, index);
}

/* The first slot index at or past index that the file holds, or readable if none. */
uint64_t rt_ring_view_next(const struct rt_ring_view *v, uint64_t index);

/*
 * Whether the file holds every slot of seqs [from, head) as data (one or
 * two ranges of the ring: they may wrap past its end), so that a walk of
 * them need not ask for each slot.  Its time follows the runs of data.
 */
int rt_ring_view_holds(const struct rt_ring_view *v, uint64_t from, uint64_t head);

/*
 * The descriptor's counters against each other and the ring's slots, for a
 * writer that is dead (a live one moves them between our loads): reserve
 * at most one record ahead of head; records between head / M and head + 1,
 * M the most slots a record takes (format/records.h: long_records says whether
 * the arena has log sites, whose records may take up to RT_LOG_MAX_SLOTS);
 * no record stamped head unless reserve is past it; the slot before head
 * stamped head - 1, and the newest record numbered
 * records - 1 (or records - 2 when the writer died between counting a
 * record and publishing it).  Slots the file does not hold are not
 * compared.  1 if they fit, else 0 with why filled.
 */
int rt_ring_counters_ok(const struct rt_ring_counters *c, const struct rt_ring_view *v,
			int long_records, char *why, size_t why_size);

/*
 * Counters rebuilt from the slots alone: head is the end of the newest
 * record whose slots, and the few before it, fit their positions; records
 * follows from that record's number.  The slots keep only the lower 32
 * bits of their sequence numbers, so this assumes fewer than 2^32 slots
 * were ever written to the ring.  Only the slots the file holds are read:
 * the time it takes follows them.  Returns 1, or 0 when no slot fits.
 */
int rt_ring_counters_from_slots(const struct rt_ring_view *v, int long_records,
				struct rt_ring_counters *out);

#endif /* RT_READ_ENTRY_CHECKS_H */
