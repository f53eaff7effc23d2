/*
 * records.h - the shape of a record in a ring or a SLOTS block, as every
 * walker of records checks it: which kinds start a record, how many slots
 * each may take, what a continuation slot must say, and where an RT_LOG
 * record's payload lies.
 *
 * RT_REC_TRACE and RT_REC_LOST records take 1..RT_RECORD_MAX_SLOTS slots;
 * RT_REC_LOG and RT_REC_IO records 1..RT_LOG_MAX_SLOTS.  A walker that knows
 * no log or I/O site can exist (no site table holds one) passes long_records
 * 0 and keeps the stricter bound of two slots per record.
 */
#ifndef RT_FORMAT_RECORDS_H
#define RT_FORMAT_RECORDS_H

#include <stdint.h>
#include <string.h>

#include "ringtrace/format.h"

/* Payload bytes of an RT_REC_LOG record of nslots slots. */
#define RT_LOG_PAYLOAD_BYTES(nslots) (8u + ((nslots)-1u) * 24u)
#define RT_LOG_PAYLOAD_MAX RT_LOG_PAYLOAD_BYTES(RT_LOG_MAX_SLOTS)

_Static_assert(RT_LOG_MAX_SLOTS <= RT_BLOCK_MAX_SLOTS, "any record fits one SLOTS block");

/* Whether kind starts a record (log and I/O records only when long_records). */
static inline int rt_record_kind_ok(unsigned kind, int long_records)
{
	return kind == RT_REC_TRACE || kind == RT_REC_LOST ||
	       (long_records && (kind == RT_REC_LOG || kind == RT_REC_IO));
}

/* Whether records of kind carry a payload over their slots (RT_REC_LOG, RT_REC_IO). */
static inline int rt_record_has_payload(unsigned kind)
{
	return kind == RT_REC_LOG || kind == RT_REC_IO;
}

/* The most slots a record of this kind takes; 0 for a kind that starts none. */
static inline unsigned rt_record_max_slots(unsigned kind)
{
	if (kind == RT_REC_LOG || kind == RT_REC_IO)
		return RT_LOG_MAX_SLOTS;
	return kind == RT_REC_TRACE || kind == RT_REC_LOST ? RT_RECORD_MAX_SLOTS : 0;
}

/* The most slots any record may take where log records can (long_records) or cannot be. */
static inline unsigned rt_records_max_slots(int long_records)
{
	return long_records ? RT_LOG_MAX_SLOTS : RT_RECORD_MAX_SLOTS;
}

/* A head slot's kind and slot count fit each other. */
static inline int rt_record_head_ok(const struct rt_slot_head *h, int long_records)
{
	return rt_record_kind_ok(h->kind, long_records) && h->nslots >= 1 &&
	       h->nslots <= rt_record_max_slots(h->kind);
}

/* Slot c is continuation `index` (1-based) of a record whose head slot has seq head_seq. */
static inline int rt_record_cont_ok(const struct rt_slot_cont *c, uint64_t head_seq, unsigned index)
{
	return c->seq == (uint32_t)(head_seq + index) && c->kind == RT_REC_CONT &&
	       c->index == index;
}

/* The count an RT_REC_LOST record carries (its second slot) is one a ring can reach. */
static inline int rt_record_lost_count_ok(const struct rt_slot_cont *c)
{
	return c->a4 < RT_COUNT_MAX;
}

/*
 * Append the payload bytes one slot of a log or I/O record holds (index 0:
 * the head).  The slot may lie anywhere in a block read from a file, not on
 * the union's alignment: it is read as bytes, never through a member.
 */
static inline uint32_t rt_log_payload_add(unsigned char *payload, uint32_t at,
					  const union rt_slot *slot, unsigned index)
{
	const unsigned char *bytes = (const unsigned char *)slot;
	if (index == 0) {
		memcpy(payload + at, bytes + 24, 8);
		return at + 8;
	}
	memcpy(payload + at, bytes + 8, 24);
	return at + 24;
}

#endif /* RT_FORMAT_RECORDS_H */
