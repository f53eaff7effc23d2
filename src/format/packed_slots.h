/*
 * packed_slots.h - a SLOTS block's slots in a PACKED block, and back.
 *
 * A function trace is two-slot records (64 bytes) that differ from the one
 * before in a few bits: the clock by some ticks, the depth by one, the same
 * function or one close by.  Packing stores those differences (the encoding
 * is described with struct rt_packed_prelude in ringtrace/format.h), so an
 * enter or exit costs about 8 bytes on disk instead of 64, with no library
 * and no state across blocks: a damaged block costs that block only.
 * Expanding gives back the very bytes packed, so every reader past the
 * block check can read slots as it always did; one that makes something
 * else of each record walks the entries instead (format/packed_walk.h).
 */
#ifndef RT_FORMAT_PACKED_SLOTS_H
#define RT_FORMAT_PACKED_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/format.h"

/*
 * Pack the nslots slots (1..RT_BLOCK_MAX_SLOTS) of a SLOTS block whose
 * header is h into out (room bytes).  Returns the payload's size (a
 * multiple of 8, padding written), or 0 when it would not fit in room:
 * the caller then keeps the SLOTS block.
 */
size_t rt_packed_encode(const struct rt_block_header *h, const union rt_slot *slots,
			uint32_t nslots, unsigned char *out, size_t room);

/*
 * Expand the payload (bytes of it) of the PACKED block whose header is h
 * into slots (room for RT_BLOCK_MAX_SLOTS).  Returns the number of slots,
 * or 0 when the payload does not decode exactly (the block is damage).
 * slots may be NULL: then it only checks.
 */
uint32_t rt_packed_expand(const struct rt_block_header *h, const unsigned char *payload,
			  size_t bytes, union rt_slot *slots);

/*
 * The PACKED block at block (header h, checked) as the SLOTS block it
 * stands for, sealed, in out (RT_BLOCK_MAX_BYTES of room), its header in
 * *expanded.  0, or -1 when the payload does not decode.
 */
int rt_packed_to_slots(const unsigned char *block, const struct rt_block_header *h,
		       unsigned char *out, struct rt_block_header *expanded);
/*
 * The same, but not sealed (crc 0): for a reader that decodes the slots
 * and never checks or writes the block again, the checksum of 64 bytes a
 * record is time spent for nothing.
 */
int rt_packed_to_slots_unsealed(const unsigned char *block, const struct rt_block_header *h,
				unsigned char *out, struct rt_block_header *expanded);

/*
 * The header of that SLOTS block as the prelude claims it, the entries not
 * decoded: for a reader that will expand the block before it reads a slot
 * (and then counts a block that does not expand as lost records) and only
 * needs the block's place and records now.  The block's checksum vouches
 * that these are the writer's bytes; only a writer that packed wrongly, or
 * a forged checksum, gives a claim that the expansion refuses.  0, or -1
 * when even the prelude is wrong.
 */
int rt_packed_claimed_header(const struct rt_block_header *h, const unsigned char *payload,
			     struct rt_block_header *claimed);

#endif /* RT_FORMAT_PACKED_SLOTS_H */
