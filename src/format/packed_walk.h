/*
 * packed_walk.h - reading a PACKED block's entries one record at a time.
 *
 * The decoding half of format/packed_slots.c, inline: the loop that
 * expands a block and a reader that decodes records straight into its own
 * form both run it once per record, and a call per record with the
 * walk's state in memory costs more than the decoding itself.
 */
#ifndef RT_FORMAT_PACKED_WALK_H
#define RT_FORMAT_PACKED_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ringtrace/format.h"

/* An entry's tag: its form (enum rt_packed_form), and the record's kind. */
#define RT_PACKED_TAG_FORM 0x03u
#define RT_PACKED_TAG_KIND_SHIFT 2
#define RT_PACKED_TAG_KIND 0x1cu
/* The longest LEB128 varint of 64 bits. */
#define RT_PACKED_VARINT_MAX 10u
/* The arguments a record carries: a0-a1 in its head, a2-a5 in its continuation. */
#define RT_PACKED_ARGS 6

/* What the encoding remembers from the previous compact record. */
struct rt_packed_state {
	uint64_t counter;
	uint32_t record; /* low 32 bits of the previous entry's record seq */
	uint32_t site;
	uint16_t cpu;
	uint64_t args[RT_PACKED_ARGS];
};

struct rt_packed_source {
	const unsigned char *at, *end;
	int bad;
};

/*
 * A PACKED block's payload read one entry at a time: what a reader that
 * turns records into something else uses instead of expanding the whole
 * block first (the slots of one record at a time, never a block of them).
 */
struct rt_packed_walk {
	struct rt_packed_source in;
	const struct rt_block_header *h;
	uint32_t slot;	/* the slot index the next entry starts at */
	uint32_t slots; /* what the prelude says the block expands to */
	struct rt_packed_state st;
};

enum {
	RT_PACKED_WALK_END = 0,	 /* every slot made, the padding zeros */
	RT_PACKED_WALK_BAD = -1, /* the payload does not decode: the block is damage */
	RT_PACKED_WALK_RAW = -2	 /* the next entry is raw: rt_packed_walk_raw takes it */
};

/* Start walking the payload (bytes of it) of the PACKED block h.  0, or -1 (bad prelude). */
int rt_packed_walk_start(struct rt_packed_walk *w, const struct rt_block_header *h,
			 const unsigned char *payload, size_t bytes);
/* The raw entry next: its n slots copied to out (NULL: skipped), n or RT_PACKED_WALK_BAD. */
int rt_packed_walk_raw(struct rt_packed_walk *w, union rt_slot *out);

/* ---- the decoding, inline ------------------------------------------- */

static inline uint64_t rt_packed_unzigzag64(uint64_t z)
{
	return (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);
}

static inline uint32_t rt_packed_unzigzag32(uint64_t z)
{
	return (uint32_t)(z >> 1) ^ (uint32_t) - (int32_t)(z & 1);
}

static inline unsigned rt_packed_get_byte(struct rt_packed_source *in)
{
	if (in->at >= in->end) {
		in->bad = 1;
		return 0;
	}
	return *in->at++;
}

static inline uint64_t rt_packed_get_varint(struct rt_packed_source *in)
{
	/* most are one byte: a clock step, a depth step, a call site nearby */
	if (in->at < in->end && *in->at < 0x80)
		return *in->at++;
	/*
	 * Far from the end, a longer one (an address, a counter) is read without
	 * a bound check per byte: it ends within RT_PACKED_VARINT_MAX bytes or is bad.
	 * Unrolled: GCC at -O2 keeps the loop, with its counter and shift per
	 * byte (31 instructions an event more over a trace file's dump --json).
	 */
	if ((size_t)(in->end - in->at) >= RT_PACKED_VARINT_MAX) {
		const unsigned char *p = in->at;
		uint64_t v = 0;
#pragma GCC unroll 9 /* RT_PACKED_VARINT_MAX - 1 */
		for (unsigned i = 0; i < RT_PACKED_VARINT_MAX - 1; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (!(p[i] & 0x80)) {
				in->at = p + i + 1;
				return v;
			}
		}
		/* the tenth byte holds bit 63 only */
		if (p[RT_PACKED_VARINT_MAX - 1] > 1) {
			in->bad = 1;
			return 0;
		}
		in->at = p + RT_PACKED_VARINT_MAX;
		return v | (uint64_t)p[RT_PACKED_VARINT_MAX - 1] << 63;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < RT_PACKED_VARINT_MAX; i++) {
		unsigned b = rt_packed_get_byte(in);
		if (in->bad)
			return 0;
		/* the tenth byte holds bit 63 only */
		if (i == RT_PACKED_VARINT_MAX - 1 && b > 1) {
			in->bad = 1;
			return 0;
		}
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	in->bad = 1;
	return 0;
}

/*
 * A compact entry's record written as its head slot and, of a two-slot
 * one, its continuation (head NULL: only checked).  Two destinations, not
 * one array: a reader that decodes into locals of its own lets the
 * compiler keep the fields in registers.
 */
static inline __attribute__((always_inline)) int
rt_packed_decode_compact(struct rt_packed_source *in, unsigned tag, const struct rt_block_header *h,
			 uint32_t s, struct rt_slot_head *head, struct rt_slot_cont *cont,
			 struct rt_packed_state *st)
{
	const unsigned n = (tag & RT_PACKED_TAG_FORM) == RT_PACKED_TWO_SLOTS ? 2 : 1;
	const unsigned kind = (tag & RT_PACKED_TAG_KIND) >> RT_PACKED_TAG_KIND_SHIFT;
	if (kind == 0)
		return -1;
	uint64_t counter = st->counter + rt_packed_unzigzag64(rt_packed_get_varint(in));
	uint64_t cpu = tag & RT_PACKED_TAG_SAME_CPU ? st->cpu : rt_packed_get_varint(in);
	uint64_t site = tag & RT_PACKED_TAG_SAME_SITE ? st->site : rt_packed_get_varint(in);
	unsigned changed = rt_packed_get_byte(in);
	const unsigned nargs = n == 2 ? RT_PACKED_ARGS : 2;
	if (in->bad || cpu > UINT16_MAX || site > UINT32_MAX || changed >> nargs)
		return -1;
	/* a varint past the end reads as 0 and sets in->bad, asked once after the loop */
	for (unsigned bits = changed; bits; bits &= bits - 1) {
		const unsigned i = (unsigned)__builtin_ctz(bits);
		const uint64_t z = rt_packed_get_varint(in);
		if (i < 4) {
			if (z > UINT32_MAX)
				return -1;
			st->args[i] = (uint32_t)((uint32_t)st->args[i] + rt_packed_unzigzag32(z));
		} else {
			st->args[i] += rt_packed_unzigzag64(z);
		}
	}
	if (in->bad)
		return -1;
	st->counter = counter;
	st->cpu = (uint16_t)cpu;
	st->site = (uint32_t)site;
	st->record++;
	if (!head)
		return (int)n;
	/* field by field into the slots: a copy through a local would stall on its stores */
	head->seq = (uint32_t)(h->first + s);
	head->kind = (uint8_t)kind;
	head->nslots = (uint8_t)n;
	head->cpu = st->cpu;
	head->record = st->record;
	head->site = st->site;
	head->counter = counter;
	head->a0 = (uint32_t)st->args[0];
	head->a1 = (uint32_t)st->args[1];
	if (n == 2) {
		cont->seq = (uint32_t)(h->first + s + 1);
		cont->kind = RT_REC_CONT;
		cont->index = 1;
		cont->reserved = 0;
		cont->a2 = (uint32_t)st->args[2];
		cont->a3 = (uint32_t)st->args[3];
		cont->a4 = st->args[4];
		cont->a5 = st->args[5];
	}
	return (int)n;
}

/*
 * The next compact entry's record written at head and cont (head NULL:
 * only checked) as the slots it expands to, at slot index w->slot before
 * the call: 1 or 2 (its slots; cont is written for 2 only), or an
 * RT_PACKED_WALK_* value.  The block is good only when the walk reaches
 * RT_PACKED_WALK_END.
 */
static inline __attribute__((always_inline)) int
rt_packed_walk_next_record(struct rt_packed_walk *w, struct rt_slot_head *head,
			   struct rt_slot_cont *cont)
{
	struct rt_packed_source *in = &w->in;
	if (w->slot >= w->slots) {
		/* padding: fewer than 8 bytes, zeros */
		if ((size_t)(in->end - in->at) >= RT_BLOCK_ALIGN)
			return RT_PACKED_WALK_BAD;
		for (const unsigned char *p = in->at; p < in->end; p++)
			if (*p)
				return RT_PACKED_WALK_BAD;
		return RT_PACKED_WALK_END;
	}
	if (in->at >= in->end || (*in->at & 0x80u))
		return RT_PACKED_WALK_BAD;
	const unsigned tag = *in->at;
	if ((tag & RT_PACKED_TAG_FORM) == RT_PACKED_RAW)
		return RT_PACKED_WALK_RAW;
	if ((tag & RT_PACKED_TAG_FORM) == 0)
		return RT_PACKED_WALK_BAD;
	in->at++;
	const unsigned n = (tag & RT_PACKED_TAG_FORM) == RT_PACKED_TWO_SLOTS ? 2 : 1;
	if (n > w->slots - w->slot ||
	    rt_packed_decode_compact(in, tag, w->h, w->slot, head, cont, &w->st) < 0)
		return RT_PACKED_WALK_BAD;
	w->slot += n;
	return (int)n;
}

/* rt_packed_walk_next_record into slots: out[0] and, of a two-slot record, out[1]. */
static inline __attribute__((always_inline)) int rt_packed_walk_next(struct rt_packed_walk *w,
								     union rt_slot *out)
{
	return rt_packed_walk_next_record(w, out ? &out[0].head : NULL, out ? &out[1].cont : NULL);
}

#endif /* RT_FORMAT_PACKED_WALK_H */
