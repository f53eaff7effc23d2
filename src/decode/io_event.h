/*
 * io_event.h - an RT_REC_IO record's payload as the call it describes
 * (ringtrace/format.h, docs/FORMAT.md "File I/O").  The payload comes from
 * a file: every part is checked against its length before it is used, and
 * the record must be exactly as long as its parts make it (the rest of its
 * last slot zero, no slot more than it needs).  A payload that fails is
 * never shown as a call, only as a malformed I/O record.
 */
#ifndef RT_DECODE_IO_EVENT_H
#define RT_DECODE_IO_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/format.h"

struct rt_io_event {
	uint16_t op;	/* enum rt_io_op, 1..RT_IO_OP_MAX */
	uint16_t flags; /* RT_IO_F_* */
	int32_t fd;
	uint64_t start; /* raw clock when the call began */
	int64_t size;
	int64_t result;
	int64_t offset;	 /* RT_IO_F_OFFSET */
	uint32_t aux[2]; /* RT_IO_F_AUX */
	uint64_t stream; /* RT_IO_F_STREAM */
	/* RT_IO_F_PATH: into the payload, not NUL-terminated; NULL when length 0 */
	const char *path, *path2;
	uint32_t path_length, path2_length;
};

/*
 * Parse length payload bytes (all the record's slots hold).  Returns 0, or
 * -1 with *problem (if not NULL) a few words saying what did not check.
 */
int rt_io_event_parse(const unsigned char *payload, size_t length, struct rt_io_event *out,
		      const char **problem);

/* The call failed: result is -errno. */
static inline int rt_io_event_failed(const struct rt_io_event *ev)
{
	return ev->result < 0 && ev->result >= -4095;
}

/* "Read", "CopyFileRange"... for text; NULL for an op outside the enum. */
const char *rt_io_op_name(unsigned op);
/* "read", "copy_file_range"... for JSON; NULL for an op outside the enum. */
const char *rt_io_op_json_name(unsigned op);
/* "ENOENT" for 2...; NULL for a number without a name. */
const char *rt_io_errno_name(int number);

#endif /* RT_DECODE_IO_EVENT_H */
