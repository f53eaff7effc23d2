/*
 * hexdump.h - the damaged regions of an arena as an annotated hex dump
 * (`ringtrace dump --hexdump`), as JTRACE falls back to a hex dump of a
 * recovered buffer it cannot parse:
 *
 *   --- bytes 60..64 (4 B): header: ring_count 4294967295 does not fit ... ---
 *   0000003c                                       ff ff ff ff  |            ....|
 *
 * One heading per region (its byte range and what it was supposed to be),
 * then its bytes, 16 to a line at their offset in the file, with the bytes
 * around them on the line left blank.  A region with no bytes to show (the
 * missing end of a truncated file) has its heading only.
 */
#ifndef RT_PRESENT_HEXDUMP_H
#define RT_PRESENT_HEXDUMP_H

#include <stdint.h>

#include "common/output.h"
#include "read/arena_reader.h"

/* Bytes shown at most: of one region, and in all (past them, a line says what was left out). */
#define RT_HEXDUMP_REGION_MAX 4096u
#define RT_HEXDUMP_TOTAL_MAX (256ull * 1024u)

/* Print every damaged region of rd, in file order.  Returns 0 or -ENOMEM. */
int rt_hexdump_print(struct rt_out *out, const struct rt_reader *rd, uint64_t region_max,
		     uint64_t total_max);

#endif /* RT_PRESENT_HEXDUMP_H */
