/*
 * entry_checks.c - thread entries and ring descriptors, checked on their own.
 */
#include <stdio.h>
#include <string.h>

#include "format/records.h"
#include "read/entry_checks.h"

int rt_bytes_zero(const void *p, size_t size)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < size; i++)
		if (b[i])
			return 0;
	return 1;
}

int rt_thread_entry_ok(const struct rt_thread_entry *e, uint32_t ring_count, char *why,
		       size_t why_size)
{
	if (e->tid <= 0)
		snprintf(why, why_size, "tid %d", e->tid);
	else if (e->ring >= ring_count && e->ring != RT_NO_RING)
		snprintf(why, why_size, "ring %u of %u", e->ring, ring_count);
	else if (e->first_record > e->end_record)
		snprintf(why, why_size, "records from %llu to %llu",
			 (unsigned long long)e->first_record, (unsigned long long)e->end_record);
	else if (!memchr(e->name, 0, sizeof(e->name)))
		snprintf(why, why_size, "name not NUL-terminated");
	else if (e->flags & ~RT_THREAD_F_KNOWN)
		snprintf(why, why_size, "flags 0x%x", e->flags);
	else
		return 1;
	return 0;
}

static const union rt_slot *slot_at(const union rt_slot *slots, uint64_t ring_slots, uint64_t seq)
{
	return &slots[seq & (ring_slots - 1)];
}

int rt_ring_counters_ok(const struct rt_ring_counters *c, const union rt_slot *slots,
			uint64_t ring_slots, uint64_t readable, int long_records, char *why,
			size_t why_size)
{
	const uint64_t most = rt_records_max_slots(long_records);
	if (c->reserve < c->head || c->reserve - c->head > most) {
		snprintf(why, why_size, "reserve %llu and head %llu are more than a record apart",
			 (unsigned long long)c->reserve, (unsigned long long)c->head);
		return 0;
	}
	/* each record takes 1..most slots; a dead writer may have counted one more */
	if (c->records > c->head + 1 || c->records < c->head / most) {
		snprintf(why, why_size, "%llu records cannot fill %llu slots",
			 (unsigned long long)c->records, (unsigned long long)c->head);
		return 0;
	}
	/* nothing is stamped head unless a record is being written there (reserve > head) */
	uint64_t next = c->head & (ring_slots - 1);
	if (c->reserve == c->head && next < readable) {
		struct rt_slot_head h;
		memcpy(&h, &slots[next], sizeof(h));
		if (h.seq == (uint32_t)c->head && rt_record_kind_ok(h.kind, long_records)) {
			snprintf(why, why_size, "head %llu, but a record is written there",
				 (unsigned long long)c->head);
			return 0;
		}
	}
	if (c->head == 0) {
		/* a ring never written is blank: a record that fits slot 0 says otherwise */
		if (c->reserve == 0 && readable > 0) {
			struct rt_slot_head h;
			memcpy(&h, &slots[0], sizeof(h));
			if ((h.seq & (uint32_t)(ring_slots - 1)) == 0 &&
			    rt_record_kind_ok(h.kind, long_records)) {
				snprintf(why, why_size, "head 0, but the ring holds records");
				return 0;
			}
		}
		return 1;
	}
	uint64_t last = c->head - 1;
	if ((last & (ring_slots - 1)) >= readable)
		return 1; /* past the end of a truncated file: nothing to compare */
	union rt_slot s;
	memcpy(&s, slot_at(slots, ring_slots, last), sizeof(s));
	if (s.head.seq != (uint32_t)last) {
		snprintf(why, why_size, "head %llu, but the slot before it is stamped %u",
			 (unsigned long long)c->head, s.head.seq);
		return 0;
	}
	if (s.head.kind == RT_REC_CONT && s.cont.index >= 1 && s.cont.index < most &&
	    c->head > s.cont.index) {
		/* the record's head slot, index slots back */
		uint64_t at = last - s.cont.index;
		if ((at & (ring_slots - 1)) >= readable)
			return 1;
		memcpy(&s, slot_at(slots, ring_slots, at), sizeof(s));
	}
	uint32_t newest = s.head.record;
	if (s.head.kind == RT_REC_CONT || c->records == 0 ||
	    (newest != (uint32_t)(c->records - 1) &&
	     (c->records < 2 || newest != (uint32_t)(c->records - 2)))) {
		snprintf(why, why_size, "records %llu, but the newest record is number %u",
			 (unsigned long long)c->records, newest);
		return 0;
	}
	return 1;
}

/* Slot i (of the readable ones) fits its position, as the slot of seq low 32 bits seq. */
static int fits(const union rt_slot *slots, uint64_t ring_slots, uint64_t readable, uint64_t i,
		int long_records, uint32_t *seq)
{
	if (i >= readable)
		return 0;
	struct rt_slot_head h;
	memcpy(&h, &slots[i], sizeof(h));
	if ((uint64_t)(h.seq & (uint32_t)(ring_slots - 1)) != i)
		return 0;
	if (!rt_record_kind_ok(h.kind, long_records) && h.kind != RT_REC_CONT)
		return 0;
	*seq = h.seq;
	return 1;
}

int rt_ring_counters_from_slots(const union rt_slot *slots, uint64_t ring_slots, uint64_t readable,
				int long_records, struct rt_ring_counters *out)
{
	const uint64_t most = rt_records_max_slots(long_records);
	int found = 0;
	uint32_t best = 0;
	uint64_t best_index = 0;
	const unsigned support = 3;
	for (uint64_t i = 0; i < readable; i++) {
		uint32_t seq, before;
		if (!fits(slots, ring_slots, readable, i, long_records, &seq) ||
		    (found && seq <= best))
			continue;
		/* the slots before it fit too: one stray stamp is not a ring's newest slot */
		unsigned k = 1;
		for (; k <= support && k <= seq; k++) {
			uint64_t j = (i + ring_slots - k) & (ring_slots - 1);
			if (!fits(slots, ring_slots, readable, j, long_records, &before) ||
			    before != seq - k)
				break;
		}
		if (k <= support && k <= seq)
			continue;
		best = seq;
		best_index = i;
		found = 1;
	}
	if (!found)
		return 0;
	/* the newest slot closes its record, unless its record has more slots to come */
	union rt_slot newest;
	struct rt_slot_head h;
	memcpy(&newest, &slots[best_index], sizeof(newest));
	h = newest.head;
	uint64_t head = (uint64_t)best + 1;
	uint64_t back = 0; /* slots of its record before the newest one */
	if (h.kind == RT_REC_CONT) {
		back = newest.cont.index;
		if (back < 1 || back >= most || back > best)
			return 0;
		uint64_t before = (best_index + ring_slots - back) & (ring_slots - 1);
		if (before >= readable)
			return 0;
		memcpy(&h, &slots[before], sizeof(h));
		if (h.seq != (uint32_t)(best - back))
			return 0;
	}
	if (!rt_record_kind_ok(h.kind, long_records) || h.nslots < back + 1)
		return 0;
	/* its last continuations never came: the writer died in it */
	int torn = h.nslots > back + 1;
	if (torn)
		head -= back + 1;
	uint64_t records = (uint64_t)h.record + (torn ? 0 : 1);
	if (records > head || records < head / most)
		return 0;
	out->head = head;
	out->reserve = head;
	out->records = records;
	return 1;
}
