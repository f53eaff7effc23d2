/*
 * packed_slots.c - the PACKED block's encoding (ringtrace/format.h).
 */
#include <string.h>

#include "format/crc32c.h"
#include "format/packed_slots.h"
#include "format/trace_block.h"

#define TAG_FORM 0x03u
#define TAG_KIND_SHIFT 2
#define TAG_KIND 0x1cu
#define TAG_FLAGS (RT_PACKED_TAG_SAME_CPU | RT_PACKED_TAG_SAME_SITE)
#define VARINT_MAX 10u
#define ARGS 6

/* What both sides remember from the previous compact record. */
struct packed_state {
	uint64_t counter;
	uint32_t record; /* low 32 bits of the previous entry's record seq */
	uint32_t site;
	uint16_t cpu;
	uint64_t args[ARGS];
};

static void state_init(struct packed_state *st, const struct rt_block_header *h)
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

static uint64_t unzigzag64(uint64_t z)
{
	return (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);
}

static uint64_t zigzag32(uint32_t delta)
{
	return (uint32_t)((delta << 1) ^ (uint32_t) - (int32_t)(delta >> 31));
}

static uint32_t unzigzag32(uint64_t z)
{
	return (uint32_t)(z >> 1) ^ (uint32_t) - (int32_t)(z & 1);
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
			      const struct packed_state *st)
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
					    struct packed_state *st)
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
	struct packed_state st;
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

struct source {
	const unsigned char *at, *end;
	int bad;
};

static inline unsigned get_byte(struct source *in)
{
	if (in->at >= in->end) {
		in->bad = 1;
		return 0;
	}
	return *in->at++;
}

static inline uint64_t get_varint(struct source *in)
{
	/* most are one byte: a clock step, a depth step, a call site nearby */
	if (in->at < in->end && *in->at < 0x80)
		return *in->at++;
	/*
	 * Far from the end, a longer one (an address, a counter) is read without
	 * a bound check per byte: it ends within VARINT_MAX bytes or is bad.
	 */
	if ((size_t)(in->end - in->at) >= VARINT_MAX) {
		const unsigned char *p = in->at;
		uint64_t v = 0;
		for (unsigned i = 0; i < VARINT_MAX - 1; i++) {
			v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (!(p[i] & 0x80)) {
				in->at = p + i + 1;
				return v;
			}
		}
		/* the tenth byte holds bit 63 only */
		if (p[VARINT_MAX - 1] > 1) {
			in->bad = 1;
			return 0;
		}
		in->at = p + VARINT_MAX;
		return v | (uint64_t)p[VARINT_MAX - 1] << 63;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < VARINT_MAX; i++) {
		unsigned b = get_byte(in);
		if (in->bad)
			return 0;
		/* the tenth byte holds bit 63 only */
		if (i == VARINT_MAX - 1 && b > 1) {
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

static int decode_compact(struct source *in, unsigned tag, const struct rt_block_header *h,
			  uint32_t s, union rt_slot *out, struct packed_state *st)
{
	const unsigned n = (tag & TAG_FORM) == RT_PACKED_TWO_SLOTS ? 2 : 1;
	const unsigned kind = (tag & TAG_KIND) >> TAG_KIND_SHIFT;
	if (kind == 0)
		return -1;
	uint64_t counter = st->counter + unzigzag64(get_varint(in));
	uint64_t cpu = tag & RT_PACKED_TAG_SAME_CPU ? st->cpu : get_varint(in);
	uint64_t site = tag & RT_PACKED_TAG_SAME_SITE ? st->site : get_varint(in);
	unsigned changed = get_byte(in);
	const unsigned nargs = n == 2 ? ARGS : 2;
	if (in->bad || cpu > UINT16_MAX || site > UINT32_MAX || changed >> nargs)
		return -1;
	for (unsigned bits = changed; bits; bits &= bits - 1) {
		const unsigned i = (unsigned)__builtin_ctz(bits);
		uint64_t z = get_varint(in);
		if (in->bad || (i < 4 && z > UINT32_MAX))
			return -1;
		st->args[i] = i < 4 ? (uint32_t)((uint32_t)st->args[i] + unzigzag32(z))
				    : st->args[i] + unzigzag64(z);
	}
	st->counter = counter;
	st->cpu = (uint16_t)cpu;
	st->site = (uint32_t)site;
	st->record++;
	if (!out)
		return (int)n;
	/* field by field into the slots: a copy through a local would stall on its stores */
	struct rt_slot_head *head = &out[0].head;
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
		struct rt_slot_cont *cont = &out[1].cont;
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

uint32_t rt_packed_expand(const struct rt_block_header *h, const unsigned char *payload,
			  size_t bytes, union rt_slot *slots)
{
	struct rt_packed_prelude prelude;
	if (bytes < sizeof(prelude) || bytes % RT_BLOCK_ALIGN)
		return 0;
	memcpy(&prelude, payload, sizeof(prelude));
	if (prelude.slots == 0 || prelude.slots > RT_BLOCK_MAX_SLOTS || prelude.reserved ||
	    h->count > prelude.slots)
		return 0;
	struct source in = {payload + sizeof(prelude), payload + bytes, 0};
	struct packed_state st;
	state_init(&st, h);
	uint32_t s = 0;
	while (s < prelude.slots) {
		unsigned tag = get_byte(&in);
		if (in.bad || (tag & 0x80u))
			return 0;
		if ((tag & TAG_FORM) == RT_PACKED_RAW) {
			unsigned n = get_byte(&in);
			if (in.bad || tag != RT_PACKED_RAW || n == 0 || n > prelude.slots - s ||
			    (size_t)(in.end - in.at) < (size_t)n * RT_SLOT_SIZE)
				return 0;
			struct rt_slot_head head;
			memcpy(&head, in.at, sizeof(head));
			st.record = head.record;
			if (slots)
				memcpy(&slots[s], in.at, (size_t)n * RT_SLOT_SIZE);
			in.at += (size_t)n * RT_SLOT_SIZE;
			s += n;
			continue;
		}
		if ((tag & TAG_FORM) == 0)
			return 0;
		const unsigned n = (tag & TAG_FORM) == RT_PACKED_TWO_SLOTS ? 2 : 1;
		if (n > prelude.slots - s ||
		    decode_compact(&in, tag, h, s, slots ? &slots[s] : NULL, &st) < 0)
			return 0;
		s += n;
	}
	/* padding: fewer than 8 bytes, zeros */
	if ((size_t)(in.end - in.at) >= RT_BLOCK_ALIGN)
		return 0;
	for (; in.at < in.end; in.at++)
		if (*in.at)
			return 0;
	return s;
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

int rt_packed_header(const unsigned char *block, const struct rt_block_header *h,
		     struct rt_block_header *expanded)
{
	uint32_t n = rt_packed_expand(h, block + RT_BLOCK_HEADER_SIZE,
				      (size_t)h->size - RT_BLOCK_HEADER_SIZE, NULL);
	if (!n)
		return -1;
	*expanded = slots_header(h, n);
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
