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

int rt_ring_view_has_slow(const struct rt_ring_view *v, uint64_t index)
{
	if (index >= v->readable)
		return 0;
	if (!v->data)
		return 1;
	uint64_t at = v->offset + index * RT_SLOT_SIZE;
	return rt_file_data_whole(v->data, at, at + RT_SLOT_SIZE);
}

uint64_t rt_ring_view_next(const struct rt_ring_view *v, uint64_t index)
{
	if (!v->data)
		return index < v->readable ? index : v->readable;
	const uint64_t end = v->offset + v->readable * RT_SLOT_SIZE;
	while (index < v->readable) {
		uint64_t data_end;
		uint64_t at =
		    rt_file_data_next(v->data, v->offset + index * RT_SLOT_SIZE, end, &data_end);
		/* a slot that starts in a hole is not held: the first after it that starts in data
		 */
		const uint64_t next = (at - v->offset + RT_SLOT_SIZE - 1) / RT_SLOT_SIZE;
		if (next >= v->readable || v->offset + (next + 1) * RT_SLOT_SIZE <= data_end)
			return next < v->readable ? next : v->readable;
		/*
		 * Nor one that starts in data and ends in a hole: the search goes
		 * on past it (answering with it made a walk skip no slot, forever).
		 */
		index = next + 1;
	}
	return v->readable;
}

int rt_ring_view_holds(const struct rt_ring_view *v, uint64_t from, uint64_t head)
{
	if (head <= from)
		return 1;
	if (head - from > v->ring_slots)
		return 0;
	const uint64_t first = from & (v->ring_slots - 1);
	const uint64_t n = head - from;
	const uint64_t part = v->ring_slots - first < n ? v->ring_slots - first : n;
	const uint64_t ranges[2][2] = {{first, part}, {0, n - part}};
	for (int k = 0; k < 2; k++) {
		const uint64_t index = ranges[k][0], count = ranges[k][1];
		if (!count)
			continue;
		if (index + count > v->readable)
			return 0;
		if (v->data && v->data->fd >= 0 &&
		    !rt_file_data_whole(v->data, v->offset + index * RT_SLOT_SIZE,
					v->offset + (index + count) * RT_SLOT_SIZE))
			return 0;
	}
	return 1;
}

/* Slot seq's bytes into *out if the file holds them. */
static int slot_get(const struct rt_ring_view *v, uint64_t seq, union rt_slot *out)
{
	uint64_t index = seq & (v->ring_slots - 1);
	if (!rt_ring_view_has(v, index))
		return 0;
	memcpy(out, &v->slots[index], sizeof(*out));
	return 1;
}

int rt_ring_counters_ok(const struct rt_ring_counters *c, const struct rt_ring_view *v,
			int long_records, char *why, size_t why_size)
{
	const uint64_t most = rt_records_max_slots(long_records);
	union rt_slot s;
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
	if (c->reserve == c->head && slot_get(v, c->head, &s) && s.head.seq == (uint32_t)c->head &&
	    rt_record_kind_ok(s.head.kind, long_records)) {
		snprintf(why, why_size, "head %llu, but a record is written there",
			 (unsigned long long)c->head);
		return 0;
	}
	if (c->head == 0) {
		/* a ring never written is blank: a record that fits slot 0 says otherwise */
		if (c->reserve == 0 && slot_get(v, 0, &s) &&
		    (s.head.seq & (uint32_t)(v->ring_slots - 1)) == 0 &&
		    rt_record_kind_ok(s.head.kind, long_records)) {
			snprintf(why, why_size, "head 0, but the ring holds records");
			return 0;
		}
		return 1;
	}
	uint64_t last = c->head - 1;
	if (!slot_get(v, last, &s))
		return 1; /* not in the file (cut short, or a hole): nothing to compare */
	if (s.head.seq != (uint32_t)last) {
		snprintf(why, why_size, "head %llu, but the slot before it is stamped %u",
			 (unsigned long long)c->head, s.head.seq);
		return 0;
	}
	if (s.head.kind == RT_REC_CONT && s.cont.index >= 1 && s.cont.index < most &&
	    c->head > s.cont.index) {
		/* the record's head slot, index slots back */
		if (!slot_get(v, last - s.cont.index, &s))
			return 1;
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

/* Slot index i fits its position, as the slot of seq low 32 bits seq. */
static int fits(const struct rt_ring_view *v, uint64_t i, int long_records, uint32_t *seq)
{
	union rt_slot s;
	if (!slot_get(v, i, &s))
		return 0;
	if ((uint64_t)(s.head.seq & (uint32_t)(v->ring_slots - 1)) != i)
		return 0;
	if (!rt_record_kind_ok(s.head.kind, long_records) && s.head.kind != RT_REC_CONT)
		return 0;
	*seq = s.head.seq;
	return 1;
}

int rt_ring_counters_from_slots(const struct rt_ring_view *v, int long_records,
				struct rt_ring_counters *out)
{
	const uint64_t most = rt_records_max_slots(long_records);
	const uint64_t ring_slots = v->ring_slots;
	int found = 0;
	uint32_t best = 0;
	uint64_t best_index = 0;
	const unsigned support = 3;
	for (uint64_t i = rt_ring_view_next(v, 0); i < v->readable;
	     i = rt_ring_view_next(v, i + 1)) {
		uint32_t seq, before;
		if (!fits(v, i, long_records, &seq) || (found && seq <= best))
			continue;
		/* the slots before it fit too: one stray stamp is not a ring's newest slot */
		unsigned k = 1;
		for (; k <= support && k <= seq; k++) {
			uint64_t j = (i + ring_slots - k) & (ring_slots - 1);
			if (!fits(v, j, long_records, &before) || before != seq - k)
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
	memcpy(&newest, &v->slots[best_index], sizeof(newest));
	h = newest.head;
	uint64_t head = (uint64_t)best + 1;
	uint64_t back = 0; /* slots of its record before the newest one */
	if (h.kind == RT_REC_CONT) {
		union rt_slot first;
		back = newest.cont.index;
		if (back < 1 || back >= most || back > best)
			return 0;
		if (!slot_get(v, best_index + ring_slots - back, &first))
			return 0;
		h = first.head;
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
