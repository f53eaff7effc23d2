/*
 * trace_block.c - the checks every trace-file block passes before a reader
 * believes it, the seal the writer puts on it, and the layout of the
 * records that carry a string.
 */
#include <stddef.h>
#include <string.h>

#include "format/crc32c.h"
#include "format/packed_slots.h"
#include "format/trace_block.h"

void rt_block_seal(void *block, uint32_t size)
{
	struct rt_block_header *h = block;
	memcpy(h->magic, RT_BLOCK_MAGIC, sizeof(h->magic));
	h->size = (uint16_t)size;
	h->version = RT_FILE_VERSION;
	h->crc = rt_crc32c(0, (const unsigned char *)block + RT_BLOCK_CRC_START,
			   size - RT_BLOCK_CRC_START);
}

void rt_block_module_fill(struct rt_block_module *out, uint32_t index,
			  const struct rt_module_entry *e, const char *path)
{
	uint32_t size = rt_block_module_size(e->path_length);
	memset(out, 0, size);
	out->index = index;
	out->size = size;
	out->entry = *e;
	out->entry.path_offset = 0;
	memcpy((char *)(out + 1), path, e->path_length);
}

void rt_block_fd_fill(struct rt_block_fd *out, uint32_t fd, uint64_t counter, uint32_t open_flags,
		      uint8_t op, uint8_t flags, const char *name, uint16_t name_length)
{
	uint32_t size = rt_block_fd_size(name_length);
	memset(out, 0, size);
	out->fd = fd;
	out->size = size;
	out->counter = counter;
	out->open_flags = open_flags;
	out->name_length = name_length;
	out->op = op;
	out->flags = flags;
	memcpy((char *)(out + 1), name, name_length);
}

void rt_block_site_fill(struct rt_block_site *out, uint32_t index, const struct rt_site_entry *e,
			const char *const strings[RT_SITE_STRINGS],
			const uint32_t lengths[RT_SITE_STRINGS])
{
	uint32_t size = rt_block_site_size(e->kind, lengths);
	memset(out, 0, size);
	out->index = index;
	out->size = size;
	out->entry = *e;
	uint32_t offsets[RT_SITE_STRINGS] = {0, 0, 0, 0};
	char *text = (char *)(out + 1);
	uint32_t at = 0;
	for (unsigned k = 0; k < rt_block_site_strings(e->kind); k++) {
		memcpy(text + at, strings[k], lengths[k]);
		offsets[k] = at;
		at += lengths[k] + 1;
	}
	out->entry.tag_offset = offsets[0];
	out->entry.tag_length = lengths[0];
	out->entry.file_offset = offsets[1];
	out->entry.file_length = lengths[1];
	out->entry.func_offset = offsets[2];
	out->entry.func_length = lengths[2];
	out->entry.types_offset = offsets[3];
	out->entry.types_length = e->kind == RT_SITE_LOG ? lengths[3] : 0;
}

int rt_block_magic_at(const void *p)
{
	return memcmp(p, RT_BLOCK_MAGIC, sizeof(RT_BLOCK_MAGIC)) == 0;
}

/* The payload's own shape: fixed-size entries that fit, or SLOTS of whole records. */
static int payload_fits(const struct rt_block_header *h, const unsigned char *payload)
{
	uint64_t bytes = h->size - RT_BLOCK_HEADER_SIZE;
	switch (h->type) {
	case RT_BLOCK_FILE:
		return bytes >= sizeof(struct rt_block_file);
	case RT_BLOCK_SOURCE:
		/* files written before the module map carry a shorter header */
		return bytes >= RT_SOURCE_HEADER_BYTES_V1 + 8;
	case RT_BLOCK_END:
		return bytes >= sizeof(struct rt_block_end);
	case RT_BLOCK_THREADS:
		return (uint64_t)h->count * sizeof(struct rt_block_thread) <= bytes;
	case RT_BLOCK_RINGS:
		return (uint64_t)h->count * sizeof(struct rt_block_ring) <= bytes;
	case RT_BLOCK_LOSS:
		return (uint64_t)h->count * sizeof(struct rt_block_loss) <= bytes;
	case RT_BLOCK_MODULES: {
		uint64_t at = 0;
		for (uint32_t i = 0; i < h->count; i++) {
			struct rt_block_module m;
			if (bytes - at < sizeof(m))
				return 0;
			memcpy(&m, payload + at, sizeof(m));
			if (m.size < sizeof(m) || m.size % RT_BLOCK_ALIGN || m.size > bytes - at)
				return 0;
			at += m.size;
		}
		return 1;
	}
	case RT_BLOCK_FDS: {
		/* each record holds its name and a NUL within its size */
		uint64_t at = 0;
		for (uint32_t i = 0; i < h->count; i++) {
			struct rt_block_fd f;
			if (bytes - at < sizeof(f))
				return 0;
			memcpy(&f, payload + at, sizeof(f));
			if (f.size < sizeof(f) || f.size % RT_BLOCK_ALIGN || f.size > bytes - at ||
			    f.name_length >= RT_FD_NAME_MAX ||
			    (uint64_t)f.name_length + 1 > f.size - sizeof(f))
				return 0;
			at += f.size;
		}
		return 1;
	}
	case RT_BLOCK_SITES: {
		uint64_t at = 0;
		for (uint32_t i = 0; i < h->count; i++) {
			struct rt_block_site s;
			if (bytes - at < sizeof(s))
				return 0;
			memcpy(&s, payload + at, sizeof(s));
			if (s.size < sizeof(s) || s.size % RT_BLOCK_ALIGN || s.size > bytes - at)
				return 0;
			at += s.size;
		}
		return 1;
	}
	case RT_BLOCK_SLOTS:
		/* whole slots; records are checked slot by slot as they decode */
		return bytes % RT_SLOT_SIZE == 0 && bytes / RT_SLOT_SIZE <= RT_BLOCK_MAX_SLOTS &&
		       h->count <= bytes / RT_SLOT_SIZE;
	case RT_BLOCK_PACKED:
		/* it expands to slots exactly, as many as it says; they are checked as SLOTS */
		return rt_packed_expand(h, payload, bytes, NULL) != 0;
	default:
		return 0;
	}
}

/* The loss counters of a SOURCE block's header, as far as the block holds them. */
static int source_counts_plausible(const unsigned char *payload, uint64_t bytes)
{
	static const size_t fields[] = {
	    offsetof(struct rt_arena_header, ring_reuses),
	    offsetof(struct rt_arena_header, threads_untracked),
	    offsetof(struct rt_arena_header, lost_untracked),
	    offsetof(struct rt_arena_header, sites_refused),
	    offsetof(struct rt_arena_header, lost_no_site),
	    offsetof(struct rt_arena_header, modules_refused),
	    offsetof(struct rt_arena_header, images_replaced),
	    offsetof(struct rt_arena_header, lost_replaced),
	};
	const size_t header = offsetof(struct rt_block_source, header);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		uint64_t v;
		if (fields[i] + sizeof(v) > RT_SOURCE_HEADER_BYTES ||
		    header + fields[i] + sizeof(v) > bytes)
			continue;
		memcpy(&v, payload + header + fields[i], sizeof(v));
		if (v >= RT_COUNT_MAX)
			return 0;
	}
	return 1;
}

/* Every 8-byte count at `field` of n entries of `size` bytes is below RT_COUNT_MAX. */
static int entries_plausible(const unsigned char *payload, uint32_t n, size_t size, size_t field)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v;
		memcpy(&v, payload + (size_t)i * size + field, sizeof(v));
		if (v >= RT_COUNT_MAX)
			return 0;
	}
	return 1;
}

/*
 * The counts a block carries are counts: a checksum says the bytes are what
 * was written, not that the writer was sane.  (LOST records in SLOTS are
 * checked one by one as they decode.)
 */
static int counts_plausible(const struct rt_block_header *h, const unsigned char *payload)
{
	switch (h->type) {
	case RT_BLOCK_SOURCE:
		return source_counts_plausible(payload, h->size - RT_BLOCK_HEADER_SIZE);
	case RT_BLOCK_THREADS:
		return entries_plausible(payload, h->count, sizeof(struct rt_block_thread),
					 offsetof(struct rt_block_thread, entry) +
					     offsetof(struct rt_thread_entry, lost_no_ring));
	case RT_BLOCK_RINGS:
		return entries_plausible(payload, h->count, sizeof(struct rt_block_ring),
					 offsetof(struct rt_block_ring, dropped)) &&
		       entries_plausible(payload, h->count, sizeof(struct rt_block_ring),
					 offsetof(struct rt_block_ring, noted));
	case RT_BLOCK_LOSS:
		return entries_plausible(payload, h->count, sizeof(struct rt_block_loss),
					 offsetof(struct rt_block_loss, count));
	default:
		return 1;
	}
}

/* expand: whether a PACKED payload is expanded to check it (the caller may do it itself) */
static enum rt_block_verdict check(const void *p, uint64_t avail, struct rt_block_header *header,
				   int expand)
{
	const unsigned char *b = p;
	if (avail < sizeof(RT_BLOCK_MAGIC) || !rt_block_magic_at(b))
		return avail < sizeof(RT_BLOCK_MAGIC) ? RT_BLOCK_TRUNCATED : RT_BLOCK_NO_MAGIC;
	if (avail < RT_BLOCK_HEADER_SIZE)
		return RT_BLOCK_TRUNCATED;
	struct rt_block_header h;
	memcpy(&h, b, sizeof(h));
	if (h.size < RT_BLOCK_HEADER_SIZE || h.size > RT_BLOCK_MAX_BYTES || h.size % RT_BLOCK_ALIGN)
		return RT_BLOCK_BAD_SIZE;
	if (h.size > avail)
		return RT_BLOCK_TRUNCATED;
	/*
	 * The checksum first: a version byte changed by damage is damage, and
	 * only a block whose checksum holds was written by another version.
	 */
	if (rt_crc32c(0, b + RT_BLOCK_CRC_START, h.size - RT_BLOCK_CRC_START) != h.crc)
		return RT_BLOCK_BAD_CRC;
	if (h.version < RT_FILE_VERSION_OLDEST || h.version > RT_FILE_VERSION)
		return RT_BLOCK_BAD_VERSION;
	if (h.type < RT_BLOCK_FILE || h.type > RT_BLOCK_PACKED ||
	    (h.type == RT_BLOCK_PACKED && h.version < 2))
		return RT_BLOCK_BAD_TYPE;
	if ((expand || h.type != RT_BLOCK_PACKED) && !payload_fits(&h, b + RT_BLOCK_HEADER_SIZE))
		return RT_BLOCK_BAD_PAYLOAD;
	if (!counts_plausible(&h, b + RT_BLOCK_HEADER_SIZE))
		return RT_BLOCK_BAD_COUNT;
	*header = h;
	return RT_BLOCK_OK;
}

enum rt_block_verdict rt_block_check(const void *p, uint64_t avail, struct rt_block_header *header)
{
	return check(p, avail, header, 1);
}

enum rt_block_verdict rt_block_check_unexpanded(const void *p, uint64_t avail,
						struct rt_block_header *header)
{
	return check(p, avail, header, 0);
}

const char *rt_block_verdict_text(enum rt_block_verdict v)
{
	switch (v) {
	case RT_BLOCK_OK:
		return "good";
	case RT_BLOCK_NO_MAGIC:
		return "no block starts here";
	case RT_BLOCK_TRUNCATED:
		return "block cut short by the end of the file";
	case RT_BLOCK_BAD_SIZE:
		return "impossible block size";
	case RT_BLOCK_BAD_VERSION:
		return "unknown trace-file version";
	case RT_BLOCK_BAD_CRC:
		return "checksum mismatch";
	case RT_BLOCK_BAD_TYPE:
		return "unknown block type";
	case RT_BLOCK_BAD_PAYLOAD:
		return "contents do not fit the block";
	case RT_BLOCK_BAD_COUNT:
		return "a loss count no recording reaches (2^48 or more)";
	}
	return "unknown";
}

const char *rt_block_type_name(uint32_t type)
{
	static const char *const names[] = {"?",     "file",	"source", "threads",
					    "sites", "rings",	"slots",  "loss",
					    "end",   "modules", "fds",	  "packed"};
	return type < sizeof(names) / sizeof(names[0]) && type ? names[type] : "unknown";
}
