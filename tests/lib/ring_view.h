/*
 * ring_view.h - reading the rings of this process's own arena from inside
 * the process, as the ring protocol in ringtrace/format.h allows a reader
 * to: head is loaded with acquire, then every slot field with a relaxed
 * atomic load of the same width the writer stores it with (the writer may be
 * storing into the slot at that moment, and ThreadSanitizer must know).
 *
 * The tests use it to check, slot by slot, what the library wrote.
 */
#ifndef RT_TEST_RING_VIEW_H
#define RT_TEST_RING_VIEW_H

#include <stdint.h>
#include <string.h>

#include "record/record.h"

/* One record copied out of a ring. */
struct ring_view_record {
	uint64_t seq;	 /* ring position of its first slot */
	uint64_t record; /* its 64-bit record sequence number */
	struct rt_slot_head head;
	struct rt_slot_cont cont; /* its second slot, when head.nslots >= 2 */
};

static inline void ring_view_copy_head(const struct rt_slot_head *s, struct rt_slot_head *out)
{
	out->seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	out->kind = __atomic_load_n(&s->kind, __ATOMIC_RELAXED);
	out->nslots = __atomic_load_n(&s->nslots, __ATOMIC_RELAXED);
	out->cpu = __atomic_load_n(&s->cpu, __ATOMIC_RELAXED);
	out->record = __atomic_load_n(&s->record, __ATOMIC_RELAXED);
	out->site = __atomic_load_n(&s->site, __ATOMIC_RELAXED);
	out->counter = __atomic_load_n(&s->counter, __ATOMIC_RELAXED);
	out->a0 = __atomic_load_n(&s->a0, __ATOMIC_RELAXED);
	out->a1 = __atomic_load_n(&s->a1, __ATOMIC_RELAXED);
}

static inline void ring_view_copy_cont(const struct rt_slot_cont *s, struct rt_slot_cont *out)
{
	out->seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	out->kind = __atomic_load_n(&s->kind, __ATOMIC_RELAXED);
	out->index = __atomic_load_n(&s->index, __ATOMIC_RELAXED);
	out->reserved = __atomic_load_n(&s->reserved, __ATOMIC_RELAXED);
	out->a2 = __atomic_load_n(&s->a2, __ATOMIC_RELAXED);
	out->a3 = __atomic_load_n(&s->a3, __ATOMIC_RELAXED);
	out->a4 = __atomic_load_n(&s->a4, __ATOMIC_RELAXED);
	out->a5 = __atomic_load_n(&s->a5, __ATOMIC_RELAXED);
}

/* The valid site entry of an event, or NULL. */
static inline const struct rt_site_entry *ring_view_site(uint32_t site)
{
	uint32_t used = __atomic_load_n(&rt_arena.header->sites_used, __ATOMIC_RELAXED);
	if (site == 0 || site >= used || site >= rt_arena.header->site_capacity)
		return NULL;
	const struct rt_site_entry *e = &rt_arena.sites[site];
	return __atomic_load_n(&e->valid, __ATOMIC_ACQUIRE) ? e : NULL;
}

/* Slots the site of a trace event needs, 0 when the site is not a valid trace site. */
static inline unsigned ring_view_site_slots(uint32_t site)
{
	const struct rt_site_entry *e = ring_view_site(site);
	if (!e || e->kind == RT_SITE_LOG || e->nargs > RT_MAX_ARGS)
		return 0;
	return RT_TRACE_SLOTS(e->nargs);
}

/*
 * Copy the record starting at position pos of a ring, if a whole valid one
 * starts there and ends at or before end: every slot tagged with its own
 * position, a known kind, the slot count its site needs, continuation
 * slots in place.  Returns 1 and fills out, or 0.  out->record is the low
 * 32 bits only: the caller knows the ring's record count.
 */
static inline int ring_view_parse(const union rt_slot *slots, uint64_t mask, uint64_t pos,
				  uint64_t end, struct ring_view_record *out)
{
	const struct rt_slot_head *s = &slots[pos & mask].head;
	uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	uint8_t kind = __atomic_load_n(&s->kind, __ATOMIC_RELAXED);
	if (seq != (uint32_t)pos ||
	    (kind != RT_REC_TRACE && kind != RT_REC_LOST && kind != RT_REC_LOG))
		return 0;
	ring_view_copy_head(s, &out->head);
	unsigned n = out->head.nslots;
	unsigned most = kind == RT_REC_LOG ? RT_LOG_MAX_SLOTS : RT_RECORD_MAX_SLOTS;
	if (n < 1 || n > most || pos + n > end)
		return 0;
	if (kind == RT_REC_TRACE && ring_view_site_slots(out->head.site) != n)
		return 0;
	if (kind == RT_REC_LOG) {
		const struct rt_site_entry *e = ring_view_site(out->head.site);
		if (!e || e->kind != RT_SITE_LOG)
			return 0;
	}
	if (kind == RT_REC_LOST && (n != 2 || out->head.site != 0))
		return 0;
	memset(&out->cont, 0, sizeof(out->cont));
	/* every continuation slot: its own position, its index in the record */
	for (unsigned k = n; k > 1; k--) {
		ring_view_copy_cont(&slots[(pos + k - 1) & mask].cont, &out->cont);
		if (out->cont.seq != (uint32_t)(pos + k - 1) || out->cont.kind != RT_REC_CONT ||
		    out->cont.index != k - 1)
			return 0;
	}
	out->seq = pos;
	out->record = out->head.record;
	return 1;
}

/* The 64-bit number of a record, from its low 32 bits and a later record count. */
static inline uint64_t ring_view_full_record(uint64_t records, uint32_t low)
{
	return records - 1 - (uint32_t)((uint32_t)(records - 1) - low);
}

/*
 * A walk over the readable window [max(head - slots, 0), head) of a ring
 * nobody writes to any more (or that the caller owns).  skipped counts slots
 * that began no valid record: only the tail of a record cut by the window's
 * start may be one.
 */
struct ring_view {
	const union rt_slot *slots;
	uint64_t mask;
	uint64_t pos, head, records;
	uint64_t skipped;
};

static inline void ring_view_open(struct ring_view *v, uint32_t ring)
{
	const struct rt_ring_desc *d = &rt_arena.rings[ring];
	uint64_t nslots = rt_arena.ring_slots;
	v->head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
	v->records = __atomic_load_n(&d->records, __ATOMIC_RELAXED);
	v->slots = rt_arena_ring_slots(ring);
	v->mask = nslots - 1;
	v->pos = v->head > nslots ? v->head - nslots : 0;
	v->skipped = 0;
}

/* The next record of the window: 1 and out filled, or 0 at its end. */
static inline int ring_view_next(struct ring_view *v, struct ring_view_record *out)
{
	while (v->pos < v->head) {
		if (ring_view_parse(v->slots, v->mask, v->pos, v->head, out)) {
			v->pos += out->head.nslots;
			out->record = ring_view_full_record(v->records, out->head.record);
			return 1;
		}
		v->pos++;
		v->skipped++;
	}
	return 0;
}

#endif /* RT_TEST_RING_VIEW_H */
