/*
 * trace_block.h - sealing and checking one trace-file block.
 *
 * The writer fills a block (header and payload), then rt_block_seal()
 * stamps magic, version, size and checksum.  A reader calls
 * rt_block_check() on the bytes at an offset before it believes a single
 * field of the block; after it returns 0 the header's size and type are
 * sane and the checksum holds, and the payload-level checks
 * (rt_block_payload_check) say whether count fits the size.  The records
 * that carry a string are laid out here for every writer.
 */
#ifndef RT_FORMAT_TRACE_BLOCK_H
#define RT_FORMAT_TRACE_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/format.h"

/* Stamp magic, version, size and crc of the block at block (size bytes). */
void rt_block_seal(void *block, uint32_t size);

/* Whether the 8 bytes at p are RT_BLOCK_MAGIC. */
int rt_block_magic_at(const void *p);

enum rt_block_verdict {
	RT_BLOCK_OK = 0,
	RT_BLOCK_NO_MAGIC,  /* not the start of a block */
	RT_BLOCK_TRUNCATED, /* the header or the block runs past the end of the bytes */
	RT_BLOCK_BAD_SIZE,  /* size out of range or not a multiple of RT_BLOCK_ALIGN */
	RT_BLOCK_BAD_VERSION,
	RT_BLOCK_BAD_CRC,
	RT_BLOCK_BAD_TYPE,
	RT_BLOCK_BAD_PAYLOAD, /* count or records do not fit the block */
	RT_BLOCK_BAD_COUNT,   /* a loss count at or above RT_COUNT_MAX */
};

/*
 * Check the block at p with avail bytes after p.  Returns RT_BLOCK_OK and
 * copies the header to *header (aligned, for the caller to use), or the
 * first thing found wrong.
 */
enum rt_block_verdict rt_block_check(const void *p, uint64_t avail, struct rt_block_header *header);
/*
 * The same checks but whether a PACKED block's payload expands: for a
 * caller that expands it next (rt_packed_to_slots) and takes a payload that
 * does not as RT_BLOCK_BAD_PAYLOAD, so that it is expanded once, not twice.
 */
enum rt_block_verdict rt_block_check_unexpanded(const void *p, uint64_t avail,
						struct rt_block_header *header);

/* Words for a verdict: "bad checksum", ... */
const char *rt_block_verdict_text(enum rt_block_verdict v);

/* "slots", "threads", ... or "unknown". */
const char *rt_block_type_name(uint32_t type);

/* A record of fixed part fixed and n more bytes, padded to RT_BLOCK_ALIGN. */
static inline uint32_t rt_block_record_size(size_t fixed, size_t n)
{
	return (uint32_t)(fixed + n + RT_BLOCK_ALIGN - 1) & ~(RT_BLOCK_ALIGN - 1);
}

/* The size of a MODULES record whose path is path_length bytes (its NUL apart). */
static inline uint32_t rt_block_module_size(uint32_t path_length)
{
	return rt_block_record_size(sizeof(struct rt_block_module), (size_t)path_length + 1);
}

/* The size of an FDS record whose name is name_length bytes (its NUL apart). */
static inline uint32_t rt_block_fd_size(uint32_t name_length)
{
	return rt_block_record_size(sizeof(struct rt_block_fd), (size_t)name_length + 1);
}

/*
 * The FDS record of descriptor fd at out, which has rt_block_fd_size(
 * name_length) bytes (name_length below RT_FD_NAME_MAX): the fields, the
 * name and a NUL, then zeros.  The collector and cut both write through here.
 */
void rt_block_fd_fill(struct rt_block_fd *out, uint32_t fd, uint64_t counter, uint32_t open_flags,
		      uint8_t op, uint8_t flags, const char *name, uint16_t name_length);

/*
 * The MODULES record of module-table entry index at out, which has
 * rt_block_module_size(e->path_length) bytes: e with path_offset 0, then
 * the path_length bytes at path and a NUL, then zeros.  Every writer of the
 * record (the collector from an arena, cut from a reader's module list)
 * goes through here, so that they cannot differ.
 */
void rt_block_module_fill(struct rt_block_module *out, uint32_t index,
			  const struct rt_module_entry *e, const char *path);

/*
 * A site's strings in a SITES record, in their order there: tag, file,
 * function, and for a log site (RT_SITE_LOG) its argument types.  The
 * types are carried so that a trace file decodes its log records alone.
 */
enum { RT_SITE_STRINGS = 4 };
static inline unsigned rt_block_site_strings(unsigned kind)
{
	return kind == RT_SITE_LOG ? 4u : 3u;
}

/* The size of a SITES record whose strings have these lengths (NULs apart). */
static inline uint32_t rt_block_site_size(unsigned kind, const uint32_t lengths[RT_SITE_STRINGS])
{
	size_t bytes = 0;
	for (unsigned k = 0; k < rt_block_site_strings(kind); k++)
		bytes += (size_t)lengths[k] + 1;
	return rt_block_record_size(sizeof(struct rt_block_site), bytes);
}

/*
 * The SITES record of site-table entry index at out, which has
 * rt_block_site_size(e->kind, lengths) bytes: e with its string offsets
 * and lengths pointing at the strings that follow it, each lengths[k]
 * bytes of strings[k] and a NUL, then zeros.  The collector (from an
 * arena) and cut (from a reader's site table) both write through here.
 */
void rt_block_site_fill(struct rt_block_site *out, uint32_t index, const struct rt_site_entry *e,
			const char *const strings[RT_SITE_STRINGS],
			const uint32_t lengths[RT_SITE_STRINGS]);

#endif /* RT_FORMAT_TRACE_BLOCK_H */
