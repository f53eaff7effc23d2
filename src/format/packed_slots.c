/*
 * packed_slots.c - the PACKED block's encoding (ringtrace/format.h).
 */
#include <string.h>

#include "format/crc32c.h"
#include "format/packed_slots.h"
#include "format/packed_walk.h"
#include "format/trace_block.h"

#define TAG_FORM RT_PACKED_TAG_FORM
#define TAG_KIND_SHIFT RT_PACKED_TAG_KIND_SHIFT
#define TAG_KIND RT_PACKED_TAG_KIND
#define TAG_FLAGS (RT_PACKED_TAG_SAME_CPU | RT_PACKED_TAG_SAME_SITE)
#define VARINT_MAX RT_PACKED_VARINT_MAX
#define ARGS RT_PACKED_ARGS

static void state_init(struct rt_packed_state *st, const struct rt_block_header *h)
{
	memset(st, 0, sizeof(*st));
	st->counter = h->counter_first;
	st->record = (uint32_t)h->first_record - 1u;
	st->cpu = RT_CPU_UNKNOWN;
}

static uint64_t zigzag64(uint64_t delta)
{
	return (delta << 1) ^ (uint64_t) - (int64_t)(delta >> 63);
}

static uint64_t zigzag32(uint32_t delta)
{
	return (uint32_t)((delta << 1) ^ (uint32_t) - (int32_t)(delta >> 31));
}

/* ---- encoding ------------------------------------------------------- */

/* The most bytes a compact entry takes: tag, counter, cpu, site, mask, six arguments. */
#define COMPACT_MAX (1u + VARINT_MAX + 3u + 5u + 1u + ARGS * VARINT_MAX)

/* Most values are a clock step, a depth or a nearby address: one or two bytes. */
static inline unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	if (v < 0x80) {
		*p = (unsigned char)v;
		return p + 1;
	}
	if (v < 0x4000) {
		p[0] = (unsigned char)(v | 0x80);
		p[1] = (unsigned char)(v >> 7);
		return p + 2;
	}
	while (v >= 0x80) {
		*p++ = (unsigned char)((v & 0x7f) | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

/* The record at slots[s] in compact form: its nslots (1 or 2), or 0 when it must go raw. */
static unsigned compact_slots(const struct rt_block_header *h, const struct rt_slot_head *head,
			      const union rt_slot *slots, uint32_t s, uint32_t nslots,
			      const struct rt_packed_state *st)
{
	if (head->seq != (uint32_t)(h->first + s) || head->kind == 0 ||
	    head->kind > (TAG_KIND >> TAG_KIND_SHIFT) || head->record != st->record + 1u ||
	    head->nslots < 1 || head->nslots > 2 || head->nslots > nslots - s)
		return 0;
	if (head->nslots == 2) {
		const struct rt_slot_cont *cont = &slots[s + 1].cont;
		if (cont->seq != (uint32_t)(h->first + s + 1) || cont->kind != RT_REC_CONT ||
		    cont->index != 1 || cont->reserved != 0)
			return 0;
	}
	return head->nslots;
}

/* Argument i's difference from the state's, zigzag-encoded, at p if it changed. */
static inline unsigned char *put_arg32(unsigned char *p, uint32_t now, uint64_t *was)
{
	p = put_varint(p, zigzag32(now - (uint32_t)*was));
	*was = now;
	return p;
}

static inline unsigned char *put_arg64(unsigned char *p, uint64_t now, uint64_t *was)
{
	p = put_varint(p, zigzag64(now - *was));
	*was = now;
	return p;
}

/*
 * The compact entry of the record at slot (n slots) at p, which has
 * COMPACT_MAX bytes.  Written out argument by argument: this runs once per
 * record in the collector, which a thread tracing flat out waits for.
 */
static inline unsigned char *encode_compact(unsigned char *p, const struct rt_slot_head *head,
					    const union rt_slot *slot, unsigned n,
					    struct rt_packed_state *st)
{
	unsigned tag = (n == 2 ? RT_PACKED_TWO_SLOTS : RT_PACKED_ONE_SLOT) |
		       ((unsigned)head->kind << TAG_KIND_SHIFT) |
		       (head->cpu == st->cpu ? RT_PACKED_TAG_SAME_CPU : 0) |
		       (head->site == st->site ? RT_PACKED_TAG_SAME_SITE : 0);
	*p++ = (unsigned char)tag;
	p = put_varint(p, zigzag64(head->counter - st->counter));
	if (!(tag & RT_PACKED_TAG_SAME_CPU))
		p = put_varint(p, head->cpu);
	if (!(tag & RT_PACKED_TAG_SAME_SITE))
		p = put_varint(p, head->site);
	/* which arguments changed, in the byte before their differences */
	unsigned char *mask = p++;
	unsigned changed = 0;
	if (head->a0 != st->args[0]) {
		changed |= 1u;
		p = put_arg32(p, head->a0, &st->args[0]);
	}
	if (head->a1 != st->args[1]) {
		changed |= 2u;
		p = put_arg32(p, head->a1, &st->args[1]);
	}
	if (n == 2) {
		const struct rt_slot_cont *cont = &slot[1].cont;
		if (cont->a2 != st->args[2]) {
			changed |= 4u;
			p = put_arg32(p, cont->a2, &st->args[2]);
		}
		if (cont->a3 != st->args[3]) {
			changed |= 8u;
			p = put_arg32(p, cont->a3, &st->args[3]);
		}
		if (cont->a4 != st->args[4]) {
			changed |= 16u;
			p = put_arg64(p, cont->a4, &st->args[4]);
		}
		if (cont->a5 != st->args[5]) {
			changed |= 32u;
			p = put_arg64(p, cont->a5, &st->args[5]);
		}
	}
	*mask = (unsigned char)changed;
	st->counter = head->counter;
	st->cpu = head->cpu;
	st->site = head->site;
	st->record = head->record;
	return p;
}

size_t rt_packed_encode(const struct rt_block_header *h, const union rt_slot *slots,
			uint32_t nslots, unsigned char *out, size_t room)
{
	if (nslots == 0 || nslots > RT_BLOCK_MAX_SLOTS || room < sizeof(struct rt_packed_prelude))
		return 0;
	unsigned char *p = out, *const end = out + room;
	struct rt_packed_prelude prelude = {nslots, 0};
	memcpy(p, &prelude, sizeof(prelude));
	p += sizeof(prelude);
	struct rt_packed_state st;
	state_init(&st, h);
	for (uint32_t s = 0; s < nslots;) {
		/* read in place: a copy of the head would stall on its own stores */
		const struct rt_slot_head *head = &slots[s].head;
		unsigned n = compact_slots(h, head, slots, s, nslots, &st);
		if (n) {
			if ((size_t)(end - p) >= COMPACT_MAX) {
				p = encode_compact(p, head, &slots[s], n, &st);
			} else {
				/* near the end of the room: made aside, kept if it fits */
				unsigned char entry[COMPACT_MAX];
				size_t len =
				    (size_t)(encode_compact(entry, head, &slots[s], n, &st) -
					     entry);
				if ((size_t)(end - p) < len)
					return 0;
				memcpy(p, entry, len);
				p += len;
			}
			s += n;
			continue;
		}
		/* raw: the record's slots when its head says how many fit, else one */
		n = head->nslots >= 1 && head->nslots <= nslots - s ? head->nslots : 1;
		if ((size_t)(end - p) < 2 + (size_t)n * RT_SLOT_SIZE)
			return 0;
		*p++ = RT_PACKED_RAW;
		*p++ = (unsigned char)n;
		memcpy(p, &slots[s], (size_t)n * RT_SLOT_SIZE);
		p += (size_t)n * RT_SLOT_SIZE;
		st.record = head->record;
		s += n;
	}
	while ((size_t)(p - out) % RT_BLOCK_ALIGN) {
		if (p >= end)
			return 0;
		*p++ = 0;
	}
	return (size_t)(p - out);
}

/* ---- decoding ------------------------------------------------------- */

/* The payload's prelude, if it can start a block of h: 0, or -1. */
static int read_prelude(const struct rt_block_header *h, const unsigned char *payload, size_t bytes,
			struct rt_packed_prelude *prelude)
{
	if (bytes < sizeof(*prelude) || bytes % RT_BLOCK_ALIGN)
		return -1;
	memcpy(prelude, payload, sizeof(*prelude));
	if (prelude->slots == 0 || prelude->slots > RT_BLOCK_MAX_SLOTS || prelude->reserved ||
	    h->count > prelude->slots)
		return -1;
	return 0;
}

/* The walk's steps, inline in the loop that expands a block: its state stays in registers. */
static inline __attribute__((always_inline)) int walk_start(struct rt_packed_walk *w,
							    const struct rt_block_header *h,
							    const unsigned char *payload,
							    size_t bytes)
{
	struct rt_packed_prelude prelude;
	if (read_prelude(h, payload, bytes, &prelude))
		return -1;
	w->in.at = payload + sizeof(prelude);
	w->in.end = payload + bytes;
	w->in.bad = 0;
	w->h = h;
	w->slot = 0;
	w->slots = prelude.slots;
	state_init(&w->st, h);
	return 0;
}

static inline __attribute__((always_inline)) int walk_raw(struct rt_packed_walk *w,
							  union rt_slot *out)
{
	struct rt_packed_source *in = &w->in;
	unsigned tag = rt_packed_get_byte(in);
	unsigned n = rt_packed_get_byte(in);
	if (in->bad || tag != RT_PACKED_RAW || n == 0 || n > w->slots - w->slot ||
	    (size_t)(in->end - in->at) < (size_t)n * RT_SLOT_SIZE)
		return RT_PACKED_WALK_BAD;
	struct rt_slot_head head;
	memcpy(&head, in->at, sizeof(head));
	w->st.record = head.record;
	if (out)
		memcpy(out, in->at, (size_t)n * RT_SLOT_SIZE);
	in->at += (size_t)n * RT_SLOT_SIZE;
	w->slot += n;
	return (int)n;
}

int rt_packed_walk_start(struct rt_packed_walk *w, const struct rt_block_header *h,
			 const unsigned char *payload, size_t bytes)
{
	return walk_start(w, h, payload, bytes);
}

int rt_packed_walk_raw(struct rt_packed_walk *w, union rt_slot *out)
{
	return walk_raw(w, out);
}

uint32_t rt_packed_expand(const struct rt_block_header *h, const unsigned char *payload,
			  size_t bytes, union rt_slot *slots)
{
	struct rt_packed_walk w;
	if (walk_start(&w, h, payload, bytes))
		return 0;
	/* two loops, so that the one that writes tests for nowhere to write nowhere */
	int n;
	if (slots) {
		while ((n = rt_packed_walk_next(&w, &slots[w.slot])) > 0 ||
		       (n == RT_PACKED_WALK_RAW && walk_raw(&w, &slots[w.slot]) > 0))
			;
	} else {
		while ((n = rt_packed_walk_next(&w, NULL)) > 0 ||
		       (n == RT_PACKED_WALK_RAW && walk_raw(&w, NULL) > 0))
			;
	}
	return n == RT_PACKED_WALK_END ? w.slot : 0;
}

/* The header of the SLOTS block of n slots that the PACKED block h stands for, unsealed. */
static struct rt_block_header slots_header(const struct rt_block_header *h, uint32_t n)
{
	struct rt_block_header x = *h;
	x.type = RT_BLOCK_SLOTS;
	memcpy(x.magic, RT_BLOCK_MAGIC, sizeof(x.magic));
	x.size = (uint16_t)(RT_BLOCK_HEADER_SIZE + n * RT_SLOT_SIZE);
	x.crc = 0;
	return x;
}

int rt_packed_claimed_header(const struct rt_block_header *h, const unsigned char *payload,
			     struct rt_block_header *claimed)
{
	struct rt_packed_prelude prelude;
	if (h->size < RT_BLOCK_HEADER_SIZE ||
	    read_prelude(h, payload, (size_t)h->size - RT_BLOCK_HEADER_SIZE, &prelude))
		return -1;
	*claimed = slots_header(h, prelude.slots);
	return 0;
}

static int to_slots(const unsigned char *block, const struct rt_block_header *h, unsigned char *out,
		    struct rt_block_header *expanded, int seal)
{
	/* expanded where it goes when out is aligned for slots, else through a copy */
	union rt_slot copy[RT_BLOCK_MAX_SLOTS];
	unsigned char *at = out + RT_BLOCK_HEADER_SIZE;
	const int aligned = (uintptr_t)at % _Alignof(union rt_slot) == 0;
	union rt_slot *slots = aligned ? (union rt_slot *)(void *)at : copy;
	uint32_t n = rt_packed_expand(h, block + RT_BLOCK_HEADER_SIZE,
				      (size_t)h->size - RT_BLOCK_HEADER_SIZE, slots);
	if (!n)
		return -1;
	if (!aligned)
		memcpy(at, copy, (size_t)n * RT_SLOT_SIZE);
	/* out may lie anywhere (a buffer inside a structure): sealed through a copy */
	struct rt_block_header x = slots_header(h, n);
	const uint32_t size = x.size;
	memcpy(out, &x, sizeof(x));
	if (seal) {
		x.crc = rt_crc32c(0, out + RT_BLOCK_CRC_START, size - RT_BLOCK_CRC_START);
		memcpy(out, &x, sizeof(x));
	}
	*expanded = x;
	return 0;
}

int rt_packed_to_slots(const unsigned char *block, const struct rt_block_header *h,
		       unsigned char *out, struct rt_block_header *expanded)
{
	return to_slots(block, h, out, expanded, 1);
}

int rt_packed_to_slots_unsealed(const unsigned char *block, const struct rt_block_header *h,
				unsigned char *out, struct rt_block_header *expanded)
{
	return to_slots(block, h, out, expanded, 0);
}
