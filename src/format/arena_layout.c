/*
 * arena_layout.c - check an arena header against the file it came from.
 *
 * The checks run in the order a reader needs to trust the fields: first
 * "is this an arena at all" (magic), then "can I read it" (byte order,
 * version), then "is the file whole" (sizes), then the geometry.  The
 * first failure wins, and names the byte offset of the field at fault (or
 * the end of the file, when the file is too short).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "format/arena_layout.h"

#define FIELD(name) ((uint64_t)offsetof(struct rt_arena_header, name))

int rt_layout_fail(struct rt_layout_error *error, uint64_t offset, const char *format, ...)
{
	error->offset = offset;
	va_list ap;
	va_start(ap, format);
	vsnprintf(error->message, sizeof(error->message), format, ap);
	va_end(ap);
	return -EINVAL;
}

/* One table of the arena: where its offset field is, where it lies. */
struct region {
	const char *name;
	uint64_t field; /* byte offset of the header field holding its offset */
	uint64_t offset;
	uint64_t size;
};

/* size := count * each, checked; and the region must lie inside the arena. */
static int place_region(struct region *r, uint64_t count, uint64_t each, uint64_t count_field,
			const struct rt_arena_header *h, struct rt_layout_error *error)
{
	if (__builtin_mul_overflow(count, each, &r->size))
		return rt_layout_fail(error, count_field,
				      "%s size overflows: %llu entries of %llu bytes", r->name,
				      (unsigned long long)count, (unsigned long long)each);
	uint64_t end;
	if (__builtin_add_overflow(r->offset, r->size, &end) || end > h->arena_size)
		return rt_layout_fail(
		    error, r->field,
		    "%s at byte %llu (%llu bytes) extends past the end of the arena "
		    "(%llu bytes)",
		    r->name, (unsigned long long)r->offset, (unsigned long long)r->size,
		    (unsigned long long)h->arena_size);
	if (r->size && r->offset < h->header_size)
		return rt_layout_fail(error, r->field,
				      "%s at byte %llu overlaps the header (%u bytes)", r->name,
				      (unsigned long long)r->offset, h->header_size);
	if (r->offset % 8)
		return rt_layout_fail(error, r->field, "%s at byte %llu is not 8-byte aligned",
				      r->name, (unsigned long long)r->offset);
	return 0;
}

static int check_identity(const unsigned char *file, uint64_t size, const struct rt_arena_header *h,
			  struct rt_layout_error *error)
{
	size_t magic_bytes = sizeof(h->magic);
	size_t have = size < magic_bytes ? (size_t)size : magic_bytes;
	if (memcmp(file, RT_ARENA_MAGIC, have) != 0)
		return rt_layout_fail(error, 0, "not a ringtrace arena (bad magic)");
	if (size < FIELD(state) + sizeof(h->state))
		return rt_layout_fail(error, size,
				      "file truncated: %llu bytes, an arena header is %u",
				      (unsigned long long)size, RT_ARENA_HEADER_SIZE);
	if (h->byte_order != RT_BYTE_ORDER_MARK) {
		if (h->byte_order == __builtin_bswap32(RT_BYTE_ORDER_MARK))
			return rt_layout_fail(
			    error, FIELD(byte_order),
			    "arena written with the other byte order; this reader "
			    "reads only its own");
		return rt_layout_fail(error, FIELD(byte_order), "bad byte-order mark 0x%08x",
				      h->byte_order);
	}
	if (h->version == 0)
		return rt_layout_fail(error, FIELD(version), "invalid format version 0");
	if (h->compat_version > h->version)
		return rt_layout_fail(error, FIELD(compat_version),
				      "compatibility version %u is above the format version %u",
				      h->compat_version, h->version);
	if (h->compat_version > RT_FORMAT_VERSION) {
		rt_layout_fail(error, FIELD(version),
			       "unknown format version %u (this reader knows %u)", h->version,
			       RT_FORMAT_VERSION);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

static int check_sizes(uint64_t size, const struct rt_arena_header *h,
		       struct rt_layout_error *error)
{
	/* a newer version may have a longer header; this one's and older ones' are exact */
	if (h->header_size < RT_ARENA_HEADER_SIZE ||
	    (h->version <= RT_FORMAT_VERSION && h->header_size != RT_ARENA_HEADER_SIZE))
		return rt_layout_fail(error, FIELD(header_size), "bad header size %u (expected %u)",
				      h->header_size, RT_ARENA_HEADER_SIZE);
	if (size < h->header_size)
		return rt_layout_fail(error, size,
				      "file truncated: %llu bytes, the arena header alone is %u",
				      (unsigned long long)size, h->header_size);
	if (h->state == RT_ARENA_CREATING)
		return rt_layout_fail(
		    error, FIELD(state),
		    "arena header not complete (state CREATING): the writer never "
		    "finished creating it");
	if (h->state != RT_ARENA_RUNNING && h->state != RT_ARENA_CLOSED)
		return rt_layout_fail(error, FIELD(state), "unknown arena state %u", h->state);
	if (h->arena_size > size)
		return rt_layout_fail(error, size,
				      "file truncated: %llu bytes, the header says %llu",
				      (unsigned long long)size, (unsigned long long)h->arena_size);
	if (h->arena_size < h->header_size)
		return rt_layout_fail(error, FIELD(arena_size),
				      "arena size %llu is smaller than its header",
				      (unsigned long long)h->arena_size);
	return 0;
}

static int check_fields(const struct rt_arena_header *h, struct rt_layout_error *error)
{
	if (h->slot_size != RT_SLOT_SIZE)
		return rt_layout_fail(error, FIELD(slot_size), "bad slot size %u (expected %u)",
				      h->slot_size, RT_SLOT_SIZE);
	if (!rt_is_power_of_two(h->ring_bytes) || h->ring_bytes < RT_RING_MIN_BYTES ||
	    h->ring_bytes > RT_RING_MAX_BYTES)
		return rt_layout_fail(
		    error, FIELD(ring_bytes),
		    "bad ring size %llu (a power of two from %u to %llu expected)",
		    (unsigned long long)h->ring_bytes, RT_RING_MIN_BYTES,
		    (unsigned long long)RT_RING_MAX_BYTES);
	if (h->mode != RT_MODE_FLIGHT && h->mode != RT_MODE_STREAM)
		return rt_layout_fail(error, FIELD(mode), "unknown mode %u", h->mode);
	if (h->clock_source != RT_CLOCK_TSC && h->clock_source != RT_CLOCK_CNTVCT &&
	    h->clock_source != RT_CLOCK_MONOTONIC)
		return rt_layout_fail(error, FIELD(clock_source), "unknown clock source %u",
				      h->clock_source);
	if (h->clock_source != RT_CLOCK_MONOTONIC && h->counter_hz == 0)
		return rt_layout_fail(error, FIELD(counter_hz), "counter frequency is 0");
	if (h->build_id_size > RT_BUILD_ID_MAX)
		return rt_layout_fail(error, FIELD(build_id_size), "build-id size %u is above %u",
				      h->build_id_size, RT_BUILD_ID_MAX);
	if (!memchr(h->program, 0, sizeof(h->program)))
		return rt_layout_fail(error, FIELD(program), "program name is not NUL-terminated");
	return 0;
}

static int check_regions(const struct rt_arena_header *h, struct rt_layout_error *error)
{
	struct region r[7] = {
	    {"thread table", FIELD(thread_table_offset), h->thread_table_offset, 0},
	    {"site table", FIELD(site_table_offset), h->site_table_offset, 0},
	    {"string area", FIELD(string_area_offset), h->string_area_offset, 0},
	    {"ring descriptors", FIELD(ring_desc_offset), h->ring_desc_offset, 0},
	    {"ring area", FIELD(ring_area_offset), h->ring_area_offset, 0},
	    {"module table", FIELD(module_table_offset), h->module_table_offset, 0},
	    {"descriptor table", FIELD(fd_table_offset), h->fd_table_offset, 0},
	};
	int rc;
	if ((rc = place_region(&r[0], h->thread_capacity, sizeof(struct rt_thread_entry),
			       FIELD(thread_capacity), h, error)) ||
	    (rc = place_region(&r[1], h->site_capacity, sizeof(struct rt_site_entry),
			       FIELD(site_capacity), h, error)) ||
	    (rc = place_region(&r[2], h->string_capacity, 1, FIELD(string_capacity), h, error)) ||
	    (rc = place_region(&r[3], h->ring_count, sizeof(struct rt_ring_desc), FIELD(ring_count),
			       h, error)) ||
	    (rc = place_region(&r[4], h->ring_count, h->ring_bytes, FIELD(ring_count), h, error)) ||
	    (rc = place_region(&r[5], h->module_capacity, sizeof(struct rt_module_entry),
			       FIELD(module_capacity), h, error)) ||
	    (rc = place_region(&r[6], h->fd_capacity, sizeof(struct rt_fd_entry),
			       FIELD(fd_capacity), h, error)))
		return rc;
	/* arenas written before the module map hold zeros there */
	if (!h->module_capacity && h->module_table_offset)
		return rt_layout_fail(error, FIELD(module_table_offset),
				      "module table at byte %llu with no entries",
				      (unsigned long long)h->module_table_offset);
	if (h->module_capacity > RT_MODULE_CAPACITY_MAX)
		return rt_layout_fail(error, FIELD(module_capacity),
				      "module capacity %u is above %u", h->module_capacity,
				      RT_MODULE_CAPACITY_MAX);
	/* only a program traced with --io has a descriptor table */
	if (!h->fd_capacity && h->fd_table_offset)
		return rt_layout_fail(error, FIELD(fd_table_offset),
				      "descriptor table at byte %llu with no entries",
				      (unsigned long long)h->fd_table_offset);
	if (h->fd_capacity > RT_FD_CAPACITY_MAX)
		return rt_layout_fail(error, FIELD(fd_capacity),
				      "descriptor table capacity %u is above %u", h->fd_capacity,
				      RT_FD_CAPACITY_MAX);

	/* every pair of non-empty regions must be disjoint */
	for (int i = 0; i < 7; i++) {
		for (int j = i + 1; j < 7; j++) {
			if (!r[i].size || !r[j].size)
				continue;
			if (r[i].offset < r[j].offset + r[j].size &&
			    r[j].offset < r[i].offset + r[i].size)
				return rt_layout_fail(
				    error, r[j].field,
				    "%s at byte %llu overlaps the %s at byte %llu", r[j].name,
				    (unsigned long long)r[j].offset, r[i].name,
				    (unsigned long long)r[i].offset);
		}
	}
	return 0;
}

int rt_layout_check(const void *file, uint64_t size, struct rt_arena_header *header,
		    struct rt_layout_error *error)
{
	memset(header, 0, sizeof(*header));
	memcpy(header, file, size < sizeof(*header) ? (size_t)size : sizeof(*header));
	memset(error, 0, sizeof(*error));
	int rc;
	if ((rc = check_identity(file, size, header, error)) ||
	    (rc = check_sizes(size, header, error)) || (rc = check_fields(header, error)) ||
	    (rc = check_regions(header, error)))
		return rc;
	return 0;
}

uint32_t rt_layout_thread_count(const struct rt_arena_header *h)
{
	return h->threads_used < h->thread_capacity ? h->threads_used : h->thread_capacity;
}

uint32_t rt_layout_site_count(const struct rt_arena_header *h)
{
	return h->sites_used < h->site_capacity ? h->sites_used : h->site_capacity;
}

uint32_t rt_layout_ring_count_used(const struct rt_arena_header *h)
{
	return h->rings_used < h->ring_count ? h->rings_used : h->ring_count;
}

uint64_t rt_layout_string_bytes(const struct rt_arena_header *h)
{
	return h->strings_used < h->string_capacity ? h->strings_used : h->string_capacity;
}

uint32_t rt_layout_module_count(const struct rt_arena_header *h)
{
	return h->modules_used < h->module_capacity ? h->modules_used : h->module_capacity;
}
