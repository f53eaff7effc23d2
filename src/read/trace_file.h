/*
 * trace_file.h - one trace file: what it is, its blocks in file order, and
 * one block read back at a known offset.
 *
 * A trace file (docs/FORMAT.md, "Trace files") is read with pread(2) in
 * bounded pieces, never mapped or loaded whole, so that reading it costs
 * the same memory whatever its size.  rt_trace_file_scan() walks it from
 * the start: every block is checked (format/trace_block.h) before a field
 * of it is believed and handed to the caller; bytes that are not a good
 * block (a checksum that fails, garbage, a block cut short by the end of
 * the file) form a damaged region, reported with its offset and length,
 * and the walk goes on at the next place where a good block starts.
 */
#ifndef RT_READ_TRACE_FILE_H
#define RT_READ_TRACE_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "format/trace_block.h"
#include "ringtrace/format.h"

/* What the first bytes of a file say it is. */
enum rt_input_kind {
	RT_INPUT_UNKNOWN = 0,
	RT_INPUT_ARENA = 1, /* RT_ARENA_MAGIC */
	RT_INPUT_TRACE = 2, /* RT_BLOCK_MAGIC */
};

/* The kind of the file at path by its magic; -errno when it cannot be opened or read. */
int rt_input_kind_of(const char *path);

struct rt_trace_file {
	const char *path; /* points at the caller's string */
	int fd;
	uint64_t size;
	/* from the scan */
	uint64_t file_id; /* of the FILE block, else of the first good block (0: none) */
	uint32_t file_seq;
	int has_file_block;
	struct rt_block_file info;
	int has_end; /* closed properly */
	struct rt_block_end end;
	uint64_t blocks;	/* good blocks */
	uint64_t damaged_bytes; /* bytes in damaged regions */
};

/* Open path for reading.  0, or -errno with message filled. */
int rt_trace_file_open(struct rt_trace_file *f, const char *path, char *message, size_t size);
void rt_trace_file_close(struct rt_trace_file *f);

/*
 * Whether a file that looks like a trace file is one this reader cannot
 * read at all: its first block is whole and checks but is of another
 * format version (a newer writer's).  0, or -errno with message filled
 * ("PATH: byte N: what").  Damage, a file cut short included, is not a
 * refusal: the scan reports it.
 */
int rt_trace_file_refused(const char *path, char *message, size_t size);

/*
 * Damage made of good blocks.  A replay is a block of the file read already
 * (same recording, file and block number) found again: a copy written a
 * second time, never handed over, its bytes a damaged region.  A sequence
 * break is a good block that does not follow the one before it with no
 * damaged bytes between: blocks left out, or moved (a region of 0 bytes
 * at the block, which is handed over).
 */
#define RT_SCAN_REPLAY "replayed block"
#define RT_SCAN_BREAK "block sequence break"

/*
 * The first block that passes every check in the file's first megabytes
 * (what the file is, and which recording and file of it, when damage took
 * its first bytes): 1 and *h, 0 when there is none, or -errno.
 */
int rt_trace_file_find_block(const struct rt_trace_file *f, struct rt_block_header *h);

/* What the scan hands over. */
struct rt_trace_scan_ops {
	void *context;
	/* A good block at offset (header checked, payload fits).  Nonzero stops the scan. */
	int (*block)(void *context, struct rt_trace_file *f, uint64_t offset,
		     const struct rt_block_header *h, const unsigned char *block);
	/*
	 * Bytes [offset, offset + length) are no good block: why says what was
	 * found at offset (rt_block_verdict_text, or one of the RT_SCAN_ texts
	 * below).  cut: the region runs to the end of the file.  Nonzero stops
	 * the scan.
	 */
	int (*damage)(void *context, struct rt_trace_file *f, uint64_t offset, uint64_t length,
		      const char *why, int cut);
	/*
	 * Whether block() reads the slots of the next PACKED block (NULL:
	 * always).  When it does not, block() gets the header of the SLOTS
	 * block its prelude claims to stand for (rt_packed_claimed_header)
	 * with the PACKED block's bytes as they are in the file: its checksum
	 * is checked, its entries are not, and whoever reads its slots later
	 * expands them and must count a block that does not expand as lost
	 * records (read/trace_set_decode.c does).  An
	 * expanded block is not sealed (its crc is 0): the PACKED block's own
	 * checksum was checked, and no callback writes the block out.
	 */
	int (*reads_slots)(void *context);
	/*
	 * Whether a PACKED block whose slots block() does not read must still
	 * decode to its prelude's claim (checked, nothing expanded): a scan
	 * that checks the file names one that does not as a damaged region
	 * (RT_BLOCK_BAD_PAYLOAD), as when it reads the slots.  NULL: no.
	 */
	int (*checks_packed)(void *context);
};

/*
 * Walk the whole file once, in order.  Returns 0, the first nonzero value
 * of a callback, or -errno when reading failed (message filled).
 */
int rt_trace_file_scan(struct rt_trace_file *f, const struct rt_trace_scan_ops *ops, char *message,
		       size_t size);

/*
 * Read the block at offset again into buf (RT_BLOCK_MAX_BYTES at least)
 * and check it.  Returns RT_BLOCK_OK with *h filled, another verdict when
 * it no longer checks, or -errno when reading failed.
 */
int rt_trace_file_read_block(const struct rt_trace_file *f, uint64_t offset, unsigned char *buf,
			     struct rt_block_header *h);

/*
 * Whether the file ends with a good END block (its writer closed it),
 * looked for where it must be, in its last bytes, without a scan: 1 and
 * *end, 0 when it does not (yet), or -errno.  A file still being written
 * can be asked again and again at little cost.
 */
int rt_trace_file_ended(const struct rt_trace_file *f, struct rt_block_end *end);

#endif /* RT_READ_TRACE_FILE_H */
