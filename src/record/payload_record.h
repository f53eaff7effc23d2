/*
 * payload_record.h - writing a payload record (RT_REC_LOG, RT_REC_IO) into
 * the calling thread's ring.  Inline, so that a caller whose record has a
 * size known at compile time (an I/O call without a path: two slots) gets
 * the protocol without a loop or a call.
 */
#ifndef RT_RECORD_PAYLOAD_RECORD_H
#define RT_RECORD_PAYLOAD_RECORD_H

#include <string.h>

#include "ringtrace.h"

/*
 * A payload record (RT_REC_LOG or RT_REC_IO) of nslots slots at the head:
 * the payload's first 8 bytes in the head slot, 24 in each continuation
 * slot (ringtrace/format.h).  The same protocol as ringtrace__write_record:
 * reserve, slots, records, head.
 */
static inline __attribute__((always_inline)) void
rt_write_payload_slots(struct ringtrace__writer *w, uint8_t kind, unsigned nslots, uint32_t id,
		       uint64_t t, const uint8_t *payload, uint32_t bytes, const int padded)
{
	uint64_t h = w->head;
	struct rt_ring_desc *ring = w->ring;
	__atomic_store_n(&ring->reserve, h + nslots, __ATOMIC_RELAXED);
	/* publishes: reserve, before any slot of the record changes */
	RT_FENCE_RELEASE();
	uint32_t head_words[2] = {0, 0};
	memcpy(head_words, payload, padded || bytes >= 8 ? 8 : bytes);
	struct rt_slot_head *s = &w->slots[h & w->mask].head;
	__atomic_store_n(&s->seq, (uint32_t)h, __ATOMIC_RELAXED);
	__atomic_store_n(&s->kind, kind, __ATOMIC_RELAXED);
	__atomic_store_n(&s->nslots, (uint8_t)nslots, __ATOMIC_RELAXED);
	__atomic_store_n(&s->cpu, (uint16_t)*w->cpu, __ATOMIC_RELAXED);
	__atomic_store_n(&s->record, (uint32_t)w->records, __ATOMIC_RELAXED);
	__atomic_store_n(&s->site, id, __ATOMIC_RELAXED);
	__atomic_store_n(&s->counter, t, __ATOMIC_RELAXED);
	__atomic_store_n(&s->a0, head_words[0], __ATOMIC_RELAXED);
	__atomic_store_n(&s->a1, head_words[1], __ATOMIC_RELAXED);
	for (unsigned k = 1; k < nslots; k++) {
		uint32_t at = 8 + 24 * (k - 1);
		uint32_t part[6];
		/* whole slots with a copy of constant size; the last one padded with zeros */
		if (padded || at + 24 <= bytes) {
			memcpy(part, payload + at, 24);
		} else {
			memset(part, 0, sizeof(part));
			if (at < bytes)
				memcpy(part, payload + at, bytes - at);
		}
		struct rt_slot_cont *c = &w->slots[(h + k) & w->mask].cont;
		uint64_t a4, a5;
		memcpy(&a4, &part[2], 8);
		memcpy(&a5, &part[4], 8);
		__atomic_store_n(&c->seq, (uint32_t)(h + k), __ATOMIC_RELAXED);
		__atomic_store_n(&c->kind, (uint8_t)RT_REC_CONT, __ATOMIC_RELAXED);
		__atomic_store_n(&c->index, (uint8_t)k, __ATOMIC_RELAXED);
		__atomic_store_n(&c->reserved, (uint16_t)0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->a2, part[0], __ATOMIC_RELAXED);
		__atomic_store_n(&c->a3, part[1], __ATOMIC_RELAXED);
		__atomic_store_n(&c->a4, a4, __ATOMIC_RELAXED);
		__atomic_store_n(&c->a5, a5, __ATOMIC_RELAXED);
	}
	w->records++;
	__atomic_store_n(&ring->records, w->records, __ATOMIC_RELAXED);
	/* publishes: the record's slots, to readers that load head with acquire */
	__atomic_store_n(&ring->head, h + nslots, __ATOMIC_RELEASE);
	w->head = h + nslots;
}

static inline __attribute__((always_inline)) void
rt_write_payload_record(struct ringtrace__writer *w, uint8_t kind, unsigned nslots, uint32_t id,
			uint64_t t, const uint8_t *payload, uint32_t bytes)
{
	rt_write_payload_slots(w, kind, nslots, id, t, payload, bytes, 0);
}

/*
 * The same for a payload whose buffer holds zeros from bytes to the end of
 * the record's last slot (RT_LOG_PADDED_BYTES): every slot is a copy of
 * constant size.
 */
#define RT_LOG_PADDED_BYTES(bytes) (8u + 24u * (RT_LOG_SLOTS(bytes) - 1u))
static inline __attribute__((always_inline)) void
rt_write_padded_payload_record(struct ringtrace__writer *w, uint8_t kind, unsigned nslots,
			       uint32_t id, uint64_t t, const uint8_t *payload, uint32_t bytes)
{
	rt_write_payload_slots(w, kind, nslots, id, t, payload, bytes, 1);
}

/*
 * The fast path's choice, written once for every payload record: write it
 * now when the site has its id and the record fits below the writer's
 * limit (read atomically: ringtrace_shutdown() lowers it from another
 * thread), at time at (0: now).  1 when written; 0 when it is the slow
 * path's to do, which starts, registers, attaches and counts.  The caller
 * holds busy.
 */
static inline __attribute__((always_inline)) int rt_try_write_payload(struct ringtrace__writer *w,
								      uint8_t kind, uint32_t id,
								      const uint8_t *payload,
								      uint32_t bytes, uint64_t at)
{
	unsigned nslots = RT_LOG_SLOTS(bytes);
	if (RT__UNLIKELY(id == 0) ||
	    RT__UNLIKELY(w->head + nslots > __atomic_load_n(&w->limit, __ATOMIC_RELAXED)))
		return 0;
	rt_write_payload_record(w, kind, nslots, id, at ? at : ringtrace__counter(), payload,
				bytes);
	return 1;
}

#endif /* RT_RECORD_PAYLOAD_RECORD_H */
