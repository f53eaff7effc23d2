/*
 * test_packed_slots.c - PACKED blocks (format/packed_slots.h): every run of
 * slots packs and expands to the very bytes it was, a function trace costs
 * at most 16 bytes a record, and no payload, however made, expands into
 * anything but what a SLOTS block may hold.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/packed_slots.h"
#include "format/trace_block.h"

#include "../lib/check.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void header(struct rt_block_header *h, uint64_t first, uint64_t first_record,
		   uint64_t counter, uint32_t count)
{
	memset(h, 0, sizeof(*h));
	h->type = RT_BLOCK_SLOTS;
	h->first = first;
	h->first_record = first_record;
	h->counter_first = counter;
	h->count = count;
}

/* A record of nslots at slots[s], regular (as a ring writes it) unless odd. */
static void make_record(union rt_slot *slots, uint32_t s, uint64_t first, uint32_t record,
			unsigned nslots, uint8_t kind, uint64_t counter, const uint64_t args[6])
{
	struct rt_slot_head head;
	memset(&head, 0, sizeof(head));
	head.seq = (uint32_t)(first + s);
	head.kind = kind;
	head.nslots = (uint8_t)nslots;
	head.cpu = (uint16_t)(next() % 3);
	head.record = record;
	head.site = 1 + (uint32_t)(args[1] & 1);
	head.counter = counter;
	head.a0 = (uint32_t)args[0];
	head.a1 = (uint32_t)args[1];
	memcpy(&slots[s], &head, sizeof(head));
	for (unsigned k = 1; k < nslots; k++) {
		struct rt_slot_cont cont;
		memset(&cont, 0, sizeof(cont));
		cont.seq = (uint32_t)(first + s + k);
		cont.kind = RT_REC_CONT;
		cont.index = (uint8_t)k;
		cont.a2 = (uint32_t)args[2];
		cont.a3 = (uint32_t)args[3];
		cont.a4 = args[4];
		cont.a5 = args[5];
		memcpy(&slots[s + k], &cont, sizeof(cont));
	}
}

/* Pack, expand, compare; the packed size, or 0 when it did not pack. */
static size_t round_trip(const struct rt_block_header *h, const union rt_slot *slots, uint32_t n)
{
	unsigned char packed[RT_BLOCK_MAX_BYTES];
	size_t bytes = rt_packed_encode(h, slots, n, packed, sizeof(packed) - RT_BLOCK_HEADER_SIZE);
	if (!bytes)
		return 0;
	CHECK_EQ(bytes % RT_BLOCK_ALIGN, 0);
	union rt_slot back[RT_BLOCK_MAX_SLOTS];
	memset(back, 0xa5, sizeof(back));
	struct rt_block_header ph = *h;
	ph.type = RT_BLOCK_PACKED;
	CHECK_EQ(rt_packed_expand(&ph, packed, bytes, back), n);
	CHECK(memcmp(back, slots, (size_t)n * RT_SLOT_SIZE) == 0);
	CHECK_EQ(rt_packed_expand(&ph, packed, bytes, NULL), n);

	/* as a block: sealed, checked, expanded to the SLOTS block it stands for */
	unsigned char block[RT_BLOCK_MAX_BYTES], out[RT_BLOCK_MAX_BYTES];
	memcpy(block, &ph, sizeof(ph));
	memcpy(block + RT_BLOCK_HEADER_SIZE, packed, bytes);
	rt_block_seal(block, (uint32_t)(RT_BLOCK_HEADER_SIZE + bytes));
	struct rt_block_header checked, expanded;
	CHECK_EQ(rt_block_check(block, sizeof(block), &checked), RT_BLOCK_OK);
	CHECK_EQ(checked.type, RT_BLOCK_PACKED);
	CHECK_EQ(rt_packed_to_slots(block, &checked, out, &expanded), 0);
	CHECK_EQ(expanded.type, RT_BLOCK_SLOTS);
	CHECK_EQ(expanded.size, RT_BLOCK_HEADER_SIZE + n * RT_SLOT_SIZE);
	CHECK_EQ(rt_block_check(out, sizeof(out), &checked), RT_BLOCK_OK);
	CHECK(memcmp(out + RT_BLOCK_HEADER_SIZE, slots, (size_t)n * RT_SLOT_SIZE) == 0);
	/* the header its prelude claims: the expanded one, unsealed */
	struct rt_block_header only, sealed = expanded;
	CHECK_EQ(rt_block_check(block, sizeof(block), &checked), RT_BLOCK_OK);
	CHECK_EQ(rt_packed_claimed_header(&checked, block + RT_BLOCK_HEADER_SIZE, &only), 0);
	sealed.crc = 0;
	CHECK(memcmp(&only, &sealed, sizeof(only)) == 0);

	/* every byte of the payload changed in turn: never more than the slots it says */
	for (size_t i = 0; i < bytes; i++) {
		unsigned char copy[RT_BLOCK_MAX_BYTES];
		memcpy(copy, packed, bytes);
		copy[i] ^= (unsigned char)(1u << (next() % 8));
		uint32_t got = rt_packed_expand(&ph, copy, bytes, back);
		CHECK(got == 0 || got <= RT_BLOCK_MAX_SLOTS);
		/*
		 * The claim needs only the prelude: a payload that expands is
		 * claimed as what it expands to, one whose prelude is wrong is
		 * refused; a claim the entries do not keep is the expansion's
		 * to refuse.
		 */
		struct rt_block_header ch = ph, claimed;
		ch.size = (uint16_t)(RT_BLOCK_HEADER_SIZE + bytes);
		const int claims = rt_packed_claimed_header(&ch, copy, &claimed) == 0;
		if (got) {
			CHECK(claims);
			CHECK_EQ(claimed.size, RT_BLOCK_HEADER_SIZE + got * RT_SLOT_SIZE);
			CHECK_EQ(claimed.type, RT_BLOCK_SLOTS);
		}
		/* a prelude's reserved word that is not zero: neither takes it */
		if (i >= offsetof(struct rt_packed_prelude, reserved) &&
		    i < sizeof(struct rt_packed_prelude))
			CHECK(!claims && !got);
	}
	return bytes;
}

/* Enter/exit pairs of a recursion, as -finstrument-functions records them. */
static void function_trace(void)
{
	union rt_slot slots[RT_BLOCK_MAX_SLOTS];
	uint64_t total_bytes = 0, total_records = 0, counter = 1u << 30;
	uint32_t record = 1000;
	for (int block = 0; block < 200; block++) {
		const uint64_t first = 5000 + (uint64_t)block * 124;
		uint32_t s = 0, count = 0;
		uint32_t depth = (uint32_t)(next() % 20);
		struct rt_block_header h;
		uint64_t first_counter = counter;
		while (s + 2 <= RT_BLOCK_MAX_SLOTS) {
			const int enter = (int)(next() % 2);
			depth = enter ? depth + 1 : depth ? depth - 1 : 0;
			const uint64_t fn = 0x555555554000ull + 0x40 * (next() % 4);
			const uint64_t args[6] = {depth, enter ? 0u : 1u, 0, 0, fn, fn + 0x23};
			counter += 20 + next() % 200;
			make_record(slots, s, first, record + count, 2, RT_REC_TRACE, counter,
				    args);
			s += 2;
			count++;
		}
		header(&h, first, record, first_counter, count);
		size_t bytes = round_trip(&h, slots, s);
		CHECK(bytes > 0);
		total_bytes += RT_BLOCK_HEADER_SIZE + bytes;
		total_records += count;
		record += count;
	}
	printf("function trace: %.2f bytes a record, block header included\n",
	       (double)total_bytes / (double)total_records);
	CHECK(total_bytes <= 16 * total_records);
}

/* Records of every shape among irregular slots: raw entries, exact all the same. */
static void mixed(void)
{
	for (int round = 0; round < 3000; round++) {
		union rt_slot slots[RT_BLOCK_MAX_SLOTS];
		const uint64_t first = next() % (1ull << 40);
		const uint32_t first_record = (uint32_t)next();
		uint32_t s = 0, record = first_record, count = 0;
		uint64_t counter = next();
		const uint32_t want = 1 + (uint32_t)(next() % RT_BLOCK_MAX_SLOTS);
		while (s < want) {
			uint64_t args[6];
			for (int i = 0; i < 6; i++)
				args[i] = next() % 4 ? next() % 1000 : next();
			const unsigned room = want - s;
			unsigned n = 1 + (unsigned)(next() % 3);
			if (next() % 8 == 0)
				n = 3 + (unsigned)(next() % 10); /* a log record */
			if (n > room)
				n = room;
			const uint8_t kind = (uint8_t)(1 + next() % 4);
			counter += next() % 3 ? next() % 5000 : next();
			make_record(slots, s, first, record, n, kind, counter, args);
			switch (next() % 12) {
			case 0: /* garbage where a record should be */
				for (unsigned k = 0; k < n; k++)
					for (unsigned b = 0; b < RT_SLOT_SIZE; b++)
						slots[s + k].bytes[b] = (unsigned char)next();
				break;
			case 1: /* a record number out of turn */
				slots[s].head.record += 7;
				break;
			case 2: /* a continuation's reserved bytes set */
				if (n > 1)
					slots[s + 1].cont.reserved = 1;
				break;
			default:
				break;
			}
			record++;
			count++;
			s += n;
		}
		struct rt_block_header h;
		header(&h, first, first_record, counter, count);
		/* raw entries cost 2 bytes each over the slots: some runs do not fit, and stay
		 * SLOTS */
		round_trip(&h, slots, s);
	}
}

/* Payloads made of anything: an answer of 0 or of slots a SLOTS block may hold. */
static void hostile(void)
{
	union rt_slot out[RT_BLOCK_MAX_SLOTS + 1];
	unsigned char payload[RT_BLOCK_MAX_BYTES];
	struct rt_block_header h;
	header(&h, 77, 5, 100, 0);
	h.type = RT_BLOCK_PACKED;
	uint64_t decoded = 0;
	for (int round = 0; round < 200000; round++) {
		size_t bytes = 8 * (1 + next() % 64);
		for (size_t i = 0; i < bytes; i++)
			payload[i] = (unsigned char)(next() % 4 ? next() % 8 : next());
		struct rt_packed_prelude p = {(uint32_t)(next() % 140), 0};
		memcpy(payload, &p, sizeof(p));
		memset(&out[RT_BLOCK_MAX_SLOTS], 0x5a, sizeof(out[0]));
		uint32_t n = rt_packed_expand(&h, payload, bytes, out);
		CHECK(n <= RT_BLOCK_MAX_SLOTS);
		CHECK(n == 0 || n == p.slots);
		CHECK_EQ(out[RT_BLOCK_MAX_SLOTS].bytes[0], 0x5a);
		decoded += n != 0;
	}
	/* cut anywhere, a packed block no longer decodes; padding must be zeros */
	union rt_slot slots[4];
	const uint64_t args[6] = {1, 0, 0, 0, 0x1000, 0x2000};
	make_record(slots, 0, 77, 5, 2, RT_REC_TRACE, 100, args);
	make_record(slots, 2, 77, 6, 2, RT_REC_TRACE, 120, args);
	header(&h, 77, 5, 100, 2);
	size_t bytes = rt_packed_encode(&h, slots, 4, payload, sizeof(payload));
	CHECK(bytes > 0);
	h.type = RT_BLOCK_PACKED;
	for (size_t cut = 0; cut < bytes; cut += 8)
		CHECK_EQ(rt_packed_expand(&h, payload, cut, NULL), 0);
	CHECK_EQ(rt_packed_expand(&h, payload, bytes, NULL), 4);
	if (payload[bytes - 1] == 0) {
		payload[bytes - 1] = 1;
		CHECK_EQ(rt_packed_expand(&h, payload, bytes, NULL), 0);
	}
	/* a count above the slots made is no block */
	h.count = 5;
	payload[bytes - 1] = 0;
	CHECK_EQ(rt_packed_expand(&h, payload, bytes, NULL), 0);
	printf("hostile: 200000 payloads, %ju decoded\n", (uintmax_t)decoded);
}

int main(void)
{
	function_trace();
	mixed();
	hostile();
	if (check_failure_count()) {
		fprintf(stderr, "test_packed_slots: %d checks failed\n", check_failure_count());
		return 1;
	}
	printf("test_packed_slots: all passed\n");
	return 0;
}
