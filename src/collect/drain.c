/*
 * drain.c - records out of the rings and into SLOTS blocks, and the losses
 * the rings cannot report themselves (LOSS blocks).
 *
 * Stream mode (the ring protocol is in ringtrace/format.h): the writer
 * never goes past tail + ring_slots, so the slots [tail, head) stay as they
 * are until the collector moves tail.  A pass loads head with acquire
 * (before the metadata pass, so that every site and thread the records
 * below it need is written first), copies the records into blocks, and
 * stores the new tail with release as soon as each block is copied: a
 * writer of a nearly full ring gets room back a block (4 KiB) at a time,
 * not once the whole ring is copied.
 *
 * Flight mode: nothing stops the writer, so a snapshot copies the window
 * [reserve - ring_slots, head) first, reads reserve again, and keeps only
 * the slots the writer cannot have overwritten meanwhile (as the arena
 * reader does).  Each ring remembers the next record it has not written:
 * a snapshot starts there, or at the window's oldest whole record if that
 * is newer, and the records in between were overwritten (LOSS).
 *
 * Either way a slot is taken for the start of a record only if its seq tag
 * fits its position, its kind and slot count are sound, and its
 * continuation slot fits too; anything else is skipped one slot at a time,
 * so damage costs the slots it touched and every loop ends.  A SLOTS block
 * holds consecutive records only: a gap in the record numbers ends it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/source.h"
#include "format/arena_layout.h"
#include "format/records.h"

/* The record seq whose low 32 bits are low, at or below records - 1. */
static uint64_t full_record(uint64_t records, uint32_t low)
{
	return records - 1 - (uint32_t)((uint32_t)(records - 1) - low);
}

/*
 * Whether a whole record starts at slot seq pos of slots (indexed through
 * mask, relative to base) and ends at or before end; its head slot in *out.
 */
static int record_at(const union rt_slot *slots, uint64_t base, uint64_t mask, uint64_t pos,
		     uint64_t end, struct rt_slot_head *out)
{
	memcpy(out, &slots[(pos - base) & mask], sizeof(*out));
	/* log and I/O records too: the readers check them against the sites */
	if (out->seq != (uint32_t)pos || !rt_record_head_ok(out, 1) || out->nslots > end - pos)
		return 0;
	for (unsigned k = 1; k < out->nslots; k++) {
		struct rt_slot_cont cont;
		memcpy(&cont, &slots[(pos + k - base) & mask], sizeof(cont));
		if (!rt_record_cont_ok(&cont, pos, k))
			return 0;
	}
	return 1;
}

/* The THREADS index of the thread whose records of ring include seq, or RT_NO_RING. */
static uint32_t owner_of(struct rt_source *s, uint32_t ring, uint64_t seq, uint64_t count)
{
	uint32_t used = __atomic_load_n(&rt_source_live(s)->threads_used, __ATOMIC_ACQUIRE);
	if (used > s->header.thread_capacity)
		used = s->header.thread_capacity;
	const uint64_t base = s->header.thread_table_offset, each = sizeof(struct rt_thread_entry);
	/* an entry in a hole is free: not read */
	for (uint32_t i = (uint32_t)rt_file_data_next_entry(&s->data, base, each, 0, used);
	     i < used;
	     i = (uint32_t)rt_file_data_next_entry(&s->data, base, each, i + 1ull, used)) {
		const struct rt_thread_entry *e = rt_source_thread(s, i);
		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == RT_THREAD_FREE ||
		    __atomic_load_n(&e->ring, __ATOMIC_RELAXED) != ring)
			continue;
		uint64_t first = __atomic_load_n(&e->first_record, __ATOMIC_RELAXED);
		uint64_t end = __atomic_load_n(&e->end_record, __ATOMIC_RELAXED);
		if (seq >= first && seq < end && count <= end - seq)
			return rt_metadata_thread_number(s, i);
	}
	return RT_NO_RING;
}

static int write_loss(struct rt_collector *c, struct rt_source *s, uint32_t ring, uint32_t reason,
		      uint64_t first, uint64_t count, uint64_t from, uint64_t to, uint32_t thread)
{
	struct rt_builder b;
	rt_builder_begin(&b, c->writer, s, RT_BLOCK_LOSS);
	struct rt_block_loss *l = rt_builder_add(&b, sizeof(*l));
	if (l) {
		l->ring = ring;
		l->thread = thread;
		l->reason = reason;
		l->first_record = first;
		l->count = count;
		l->counter_from = from;
		l->counter_to = to;
	}
	return rt_builder_end(&b);
}

/*
 * Write the records in slots [*pos, end) of one ring as SLOTS blocks; the
 * slots are read through (slots, base, mask).  records: the ring's records
 * counter, read after head.  Moves *pos past what was written or skipped,
 * and the ring's next record.  tail (stream mode): where to publish, after
 * each block, that the slots below it are copied.  Returns records
 * written, or -errno.
 */
static int64_t write_records(struct rt_collector *c, struct rt_source *s, uint32_t ring,
			     const union rt_slot *slots, uint64_t base, uint64_t mask,
			     uint64_t *pos, uint64_t end, uint64_t records, uint64_t *tail)
{
	struct rt_source_ring *sr = &s->rings[ring];
	int64_t written = 0;
	uint64_t p = *pos;
	while (p < end) {
		struct rt_slot_head first;
		/* damage or the tail of an overwritten record: skip it slot by slot */
		if (!record_at(slots, base, mask, p, end, &first)) {
			p++;
			continue;
		}
		unsigned char *block = rt_trace_writer_block(c->writer);
		if (!block) {
			*pos = p;
			return -EIO;
		}
		union rt_slot *out = (union rt_slot *)(block + RT_BLOCK_HEADER_SIZE);
		uint64_t start = p, first_seq = full_record(records, first.record);
		uint64_t last_counter; /* set by the first pass of the loop below */
		uint32_t count = 0, used = 0;
		struct rt_slot_head r = first;
		/* the records of the block, checked where they lie; copied below at once */
		for (;;) {
			/* LOST records at the newest end: see rt_drain_final_losses() */
			if (r.kind == RT_REC_LOST && r.nslots > 1 &&
			    rt_record_lost_count_ok(&slots[(p + 1 - base) & mask].cont))
				sr->last_lost += slots[(p + 1 - base) & mask].cont.a4;
			else
				sr->last_lost = 0;
			used += r.nslots;
			count++;
			last_counter = r.counter;
			p += r.nslots;
			if (p >= end || used >= RT_BLOCK_MAX_SLOTS)
				break;
			/* a record never spans blocks: the next one starts a block of its own */
			if (!record_at(slots, base, mask, p, end, &r) ||
			    full_record(records, r.record) != first_seq + count ||
			    used + r.nslots > RT_BLOCK_MAX_SLOTS)
				break;
		}
		/*
		 * The slots just checked cannot change meanwhile: a stream writer
		 * stays above tail, and a flight snapshot reads its own copy.  One
		 * run, or two where the ring wraps.
		 */
		for (uint32_t done = 0; done < used;) {
			uint64_t index = (start + done - base) & mask;
			uint64_t run = used - done;
			if (mask != UINT64_MAX && run > mask + 1 - index)
				run = mask + 1 - index;
			memcpy(&out[done], &slots[index], (size_t)run * sizeof(*out));
			done += (uint32_t)run;
		}
		/* publishes to the writer: the slots below p are copied, it may reuse them */
		if (tail)
			__atomic_store_n(tail, p, __ATOMIC_RELEASE);
		struct rt_block_header *h = (struct rt_block_header *)block;
		h->type = RT_BLOCK_SLOTS;
		h->source = (uint32_t)s->index;
		h->ring = ring;
		h->count = count;
		h->first = start;
		h->first_record = first_seq;
		h->counter_first = first.counter;
		h->counter_last = last_counter;
		int rc =
		    rt_trace_writer_commit(c->writer, RT_BLOCK_HEADER_SIZE + used * RT_SLOT_SIZE);
		if (rc) {
			*pos = start;
			return rc;
		}
		/* the rundown of a file opened for the next block starts here */
		sr->next_slot = p;
		sr->next_record = first_seq + count;
		written += count;
		c->stats.records += count; /* taken: in a block the writer accepted */
	}
	*pos = p;
	sr->next_slot = p;
	if (tail)
		__atomic_store_n(tail, p, __ATOMIC_RELEASE);
	return written;
}

/* ---- stream mode ------------------------------------------------------- */

/*
 * The record seq at slot seq tail of a stream ring: that of the record that
 * starts there, or - when the ring holds nothing past tail - the records
 * counter taken while no record was in the making.
 */
static uint64_t record_at_tail(const struct rt_source *s, uint32_t ring, uint64_t tail)
{
	const struct rt_ring_desc *d = rt_source_desc(s, ring);
	uint64_t records = 0;
	for (int attempt = 0; attempt < 4; attempt++) {
		uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
		records = __atomic_load_n(&d->records, __ATOMIC_RELAXED);
		struct rt_slot_head first;
		if (head > tail && head - tail <= s->ring_slots &&
		    record_at(rt_source_slots(s, ring), 0, s->ring_slots - 1, tail, head, &first))
			return full_record(records, first.record);
		/* records is bumped after reserve: a reserve still at head counted no new record */
		RT_FENCE_ACQUIRE();
		uint64_t reserve = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
		if (head == tail && reserve == head)
			return records;
	}
	return records;
}

void rt_drain_init_rings(struct rt_source *s)
{
	/* the rings are zero (calloc): a descriptor in a hole is a ring never claimed */
	if (s->header.mode != RT_MODE_STREAM)
		return;
	for (uint32_t r = rt_source_next_ring(s, 0, s->ring_count); r < s->ring_count;
	     r = rt_source_next_ring(s, r + 1, s->ring_count)) {
		struct rt_source_ring *sr = &s->rings[r];
		sr->next_slot = __atomic_load_n(&rt_source_desc(s, r)->tail, __ATOMIC_ACQUIRE);
		sr->next_record = record_at_tail(s, r, sr->next_slot);
		sr->head = sr->next_slot;
	}
}

void rt_drain_load_heads(struct rt_source *s)
{
	uint32_t used = rt_source_rings_used(s);
	for (uint32_t r = rt_source_next_ring(s, 0, used); r < used;
	     r = rt_source_next_ring(s, r + 1, used))
		/* publishes to us: every slot below head, and what its records need */
		s->rings[r].head = __atomic_load_n(&rt_source_desc(s, r)->head, __ATOMIC_ACQUIRE);
}

int64_t rt_drain_stream(struct rt_collector *c, struct rt_source *s)
{
	uint32_t used = rt_source_rings_used(s);
	int64_t total = 0;
	for (uint32_t r = rt_source_next_ring(s, 0, used); r < used;
	     r = rt_source_next_ring(s, r + 1, used)) {
		struct rt_source_ring *sr = &s->rings[r];
		struct rt_ring_desc *d = rt_source_desc(s, r);
		uint64_t head = sr->head, pos = sr->next_slot;
		if (head <= pos)
			continue; /* nothing new, or a head below our tail: never follow it back */
		if (head - pos > s->ring_slots)
			pos = head - s->ring_slots; /* the writer overran the tail: resync */
		/* how full the ring was: the pacing of the polls (rt_collector_wait_ns) */
		uint32_t fill = (uint32_t)((head - pos) * 65536 / s->ring_slots);
		if (fill > c->pass_fill)
			c->pass_fill = fill;
		uint64_t records = __atomic_load_n(&d->records, __ATOMIC_RELAXED);
		int64_t n = write_records(c, s, r, rt_source_slots(s, r), 0, s->ring_slots - 1,
					  &pos, head, records, &d->tail);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

/* ---- flight mode ------------------------------------------------------- */

/*
 * The first slot of [from, head) after the last hole of the arena there: a
 * slot in a hole was never written, so neither the slots below it in the
 * window (a writer fills a ring in order).  Only what the file holds is
 * copied, never what the window claims.
 */
static uint64_t after_holes(struct rt_source *s, uint32_t ring, uint64_t from, uint64_t head)
{
	const uint64_t ring_slots = s->ring_slots;
	const uint64_t base = rt_layout_ring_offset(&s->header, ring);
	uint64_t start = from;
	/* the window in at most two parts: up to the ring's end, then from its start */
	for (uint64_t p = from; p < head;) {
		uint64_t index = p & (ring_slots - 1);
		uint64_t run = ring_slots - index < head - p ? ring_slots - index : head - p;
		uint64_t at = base + index * RT_SLOT_SIZE, end = at + run * RT_SLOT_SIZE;
		uint64_t after = rt_file_data_after_holes(&s->data, at, end);
		if (after > at)
			start = p + (after - at + RT_SLOT_SIZE - 1) / RT_SLOT_SIZE;
		p += run;
	}
	return start < head ? start : head;
}

static int64_t snapshot_ring(struct rt_collector *c, struct rt_source *s, uint32_t ring)
{
	struct rt_source_ring *sr = &s->rings[ring];
	const struct rt_ring_desc *d = rt_source_desc(s, ring);
	const union rt_slot *slots = rt_source_slots(s, ring);
	const uint64_t ring_slots = s->ring_slots;
	/* acquire: the slots below head and records are at least as new as head */
	uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
	uint64_t records = __atomic_load_n(&d->records, __ATOMIC_RELAXED);
	uint64_t reserve = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
	if (reserve < head || reserve - head > RT_LOG_MAX_SLOTS)
		reserve = head;
	uint64_t from = reserve > ring_slots ? reserve - ring_slots : 0;
	if (from > head)
		from = head;
	if (sr->next_slot > from && sr->next_slot <= head)
		from = sr->next_slot; /* written by an earlier snapshot */
	from = after_holes(s, ring, from, head);
	if (head == from)
		return 0;
	if (head - from > s->copy_slots) {
		union rt_slot *more = realloc(s->copy, (size_t)(head - from) * sizeof(*more));
		if (!more)
			return -ENOMEM;
		s->copy = more;
		s->copy_slots = head - from;
	}
	for (uint64_t p = from; p < head;) {
		uint64_t index = p & (ring_slots - 1);
		uint64_t run = ring_slots - index < head - p ? ring_slots - index : head - p;
		memcpy(&s->copy[p - from], &slots[index], (size_t)run * sizeof(*slots));
		p += run;
	}
	/* the copy is complete before reserve is read again */
	RT_FENCE_ACQUIRE();
	uint64_t now = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
	uint64_t walk = from;
	if (now > ring_slots && now - ring_slots > walk)
		walk = now - ring_slots < head ? now - ring_slots : head;
	/* the oldest whole record: skip the tail of one that began before the window */
	struct rt_slot_head first;
	while (walk < head && !record_at(s->copy, from, UINT64_MAX, walk, head, &first))
		walk++;
	if (walk == head)
		return 0;
	uint64_t oldest = full_record(records, first.record);
	if (oldest > sr->next_record) {
		uint64_t lost = oldest - sr->next_record;
		int rc = write_loss(c, s, ring, RT_LOSS_REASON_OVERWRITTEN, sr->next_record, lost,
				    0, first.counter, owner_of(s, ring, sr->next_record, lost));
		if (rc)
			return rc;
		c->stats.overwritten += lost;
	}
	int64_t n =
	    write_records(c, s, ring, s->copy, from, UINT64_MAX, &walk, head, records, NULL);
	if (n >= 0)
		sr->next_slot = head;
	return n;
}

int64_t rt_drain_snapshot(struct rt_collector *c, struct rt_source *s)
{
	uint32_t used = rt_source_rings_used(s);
	int64_t total = 0;
	for (uint32_t r = rt_source_next_ring(s, 0, used); r < used;
	     r = rt_source_next_ring(s, r + 1, used)) {
		int64_t n = snapshot_ring(c, s, r);
		if (n < 0)
			return n;
		total += n;
	}
	return total;
}

/* ---- the end of a process ---------------------------------------------- */

int rt_drain_final_losses(struct rt_collector *c, struct rt_source *s, int gone)
{
	uint32_t used = rt_source_rings_used(s);
	for (uint32_t r = rt_source_next_ring(s, 0, used); r < used;
	     r = rt_source_next_ring(s, r + 1, used)) {
		struct rt_source_ring *sr = &s->rings[r];
		const struct rt_ring_desc *d = rt_source_desc(s, r);
		uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
		uint64_t reserve = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
		uint64_t dropped = __atomic_load_n(&d->dropped, __ATOMIC_RELAXED);
		uint64_t noted = __atomic_load_n(&d->noted, __ATOMIC_RELAXED);
		uint32_t owner = __atomic_load_n(&d->owner, __ATOMIC_RELAXED);
		if (owner >= s->header.thread_capacity ||
		    __atomic_load_n(&rt_source_thread(s, owner)->ring, __ATOMIC_RELAXED) != r)
			owner = RT_NO_RING; /* its entry went to a thread of another ring */
		else
			owner = rt_metadata_thread_number(s, owner);
		/*
		 * The writer counts LOST records in noted only after committing them,
		 * right before the record that made room for them: when the newest
		 * records written are such notes and nothing follows them, noted may
		 * not count them yet, and their drops must not be counted twice.
		 */
		if (sr->last_lost && sr->next_slot == head && reserve == head &&
		    dropped - noted >= sr->last_lost)
			noted += sr->last_lost;
		c->stats.dropped += dropped;
		int rc = 0;
		/*
		 * The writer died between reserving and committing: one record torn.
		 * A writer that still runs is merely in the middle of a record.
		 */
		if (gone && reserve > head && reserve - head <= RT_LOG_MAX_SLOTS) {
			struct rt_slot_head h;
			memcpy(&h, &rt_source_slots(s, r)[head & (s->ring_slots - 1)], sizeof(h));
			uint64_t at = h.seq == (uint32_t)head ? h.counter : 0;
			rc = write_loss(c, s, r, RT_LOSS_REASON_TORN, sr->next_record, 1, at, at,
					owner);
			c->stats.torn++;
		}
		/* drops the writer had no chance to report in a LOST record */
		if (!rc && dropped > noted)
			rc = write_loss(c, s, r, RT_LOSS_REASON_DROPPED, 0, dropped - noted, 0, 0,
					owner);
		if (rc)
			return rc;
	}
	return 0;
}

void rt_drain_count_unwritten(struct rt_collector *c, struct rt_source *s)
{
	uint32_t used = rt_source_rings_used(s);
	for (uint32_t r = rt_source_next_ring(s, 0, used); r < used;
	     r = rt_source_next_ring(s, r + 1, used)) {
		const struct rt_ring_desc *d = rt_source_desc(s, r);
		uint64_t records = __atomic_load_n(&d->records, __ATOMIC_ACQUIRE);
		c->stats.dropped += __atomic_load_n(&d->dropped, __ATOMIC_RELAXED);
		if (records > s->rings[r].next_record)
			c->stats.records += records - s->rings[r].next_record;
	}
}
