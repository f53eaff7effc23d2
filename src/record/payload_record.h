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
 * slot (ringtrace/format.h), with the slot writers of ringtrace.h.
 */
static inline __attribute__((always_inline)) void
rt_write_payload_slots(struct ringtrace__writer *w, uint8_t kind, unsigned nslots, uint32_t id,
		       uint64_t t, const uint8_t *payload, uint32_t bytes, const int padded)
{
	const uint64_t h = w->head;
	ringtrace__reserve(w, h, nslots);
	uint64_t first = 0;
	memcpy(&first, payload, padded || bytes >= 8 ? 8 : bytes);
	ringtrace__store_head(w, h, kind, nslots, id, t, first);
	for (unsigned k = 1; k < nslots; k++) {
		uint32_t at = 8 + 24 * (k - 1);
		uint64_t part[3];
		/* whole slots with a copy of constant size; the last one padded with zeros */
		if (padded || at + 24 <= bytes) {
			memcpy(part, payload + at, 24);
		} else {
			memset(part, 0, sizeof(part));
			if (at < bytes)
				memcpy(part, payload + at, bytes - at);
		}
		ringtrace__store_cont(w, h, k, part[0], part[1], part[2]);
	}
	ringtrace__publish(w, h, nslots);
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
