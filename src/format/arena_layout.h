/*
 * arena_layout.h - is this byte range a well-formed arena header?
 *
 * Every reader of an arena starts here: the header is copied out of the
 * file once and checked against the file's size before any other byte is
 * looked at.  After a successful check, every table the header describes
 * lies inside the file, is 8-byte aligned, and overlaps no other table, and
 * no size computation overflows; a reader may then index the tables with
 * the header's counts (after clamping them with rt_layout_*_count()).
 */
#ifndef RT_FORMAT_ARENA_LAYOUT_H
#define RT_FORMAT_ARENA_LAYOUT_H

#include <stdint.h>

#include "ringtrace/format.h"

/* What was wrong, and where: offset is a byte offset in the file. */
struct rt_layout_error {
	uint64_t offset;
	char message[200];
};

/* Fill error with offset and a printf-style message; returns -EINVAL. */
__attribute__((format(printf, 3, 4))) int rt_layout_fail(struct rt_layout_error *error,
							 uint64_t offset, const char *format, ...);

static inline int rt_is_power_of_two(uint64_t v)
{
	return v && (v & (v - 1)) == 0;
}

/*
 * Copy the header out of the first `size` bytes of an arena file at `file`
 * into *header and check it.  Returns 0, or with *error filled:
 *   -EINVAL           not an arena, or a field is out of range or inconsistent
 *   -EPROTONOSUPPORT  a format version this reader cannot read
 */
int rt_layout_check(const void *file, uint64_t size, struct rt_arena_header *header,
		    struct rt_layout_error *error);

/* Slots per ring (ring_bytes / RT_SLOT_SIZE) of a checked header. */
static inline uint64_t rt_layout_ring_slots(const struct rt_arena_header *h)
{
	return h->ring_bytes / RT_SLOT_SIZE;
}

/*
 * The counts a reader may use.  The writer bumps a counter before it checks
 * it against the capacity, so a live counter can lie above its capacity
 * without any damage: these clamp.
 */
uint32_t rt_layout_thread_count(const struct rt_arena_header *h);
uint32_t rt_layout_site_count(const struct rt_arena_header *h);
uint32_t rt_layout_ring_count_used(const struct rt_arena_header *h);
uint64_t rt_layout_string_bytes(const struct rt_arena_header *h);
uint32_t rt_layout_module_count(const struct rt_arena_header *h);

/* Byte offsets in the file of one table entry or ring of a checked header. */
static inline uint64_t rt_layout_thread_offset(const struct rt_arena_header *h, uint32_t index)
{
	return h->thread_table_offset + (uint64_t)index * sizeof(struct rt_thread_entry);
}
static inline uint64_t rt_layout_site_offset(const struct rt_arena_header *h, uint32_t index)
{
	return h->site_table_offset + (uint64_t)index * sizeof(struct rt_site_entry);
}
static inline uint64_t rt_layout_module_offset(const struct rt_arena_header *h, uint32_t index)
{
	return h->module_table_offset + (uint64_t)index * sizeof(struct rt_module_entry);
}
static inline uint64_t rt_layout_fd_offset(const struct rt_arena_header *h, uint32_t fd)
{
	return h->fd_table_offset + (uint64_t)fd * sizeof(struct rt_fd_entry);
}
static inline uint64_t rt_layout_ring_desc_offset(const struct rt_arena_header *h, uint32_t index)
{
	return h->ring_desc_offset + (uint64_t)index * sizeof(struct rt_ring_desc);
}
static inline uint64_t rt_layout_ring_offset(const struct rt_arena_header *h, uint32_t index)
{
	return h->ring_area_offset + (uint64_t)index * h->ring_bytes;
}

#endif /* RT_FORMAT_ARENA_LAYOUT_H */
