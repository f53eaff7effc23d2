/*
 * rows.h - one item of a trace file as one row of the table
 * (ship/schema.h), in ClickHouse's RowBinary format: the columns in the
 * schema's order, integers little-endian, strings and arrays led by their
 * length as an unsigned LEB128 varint.
 */
#ifndef RT_SHIP_ROWS_H
#define RT_SHIP_ROWS_H

#include <stdint.h>

#include "event/event.h"
#include "ship/buffer.h"

/* What a row says beside its event: where it comes from and what was derived. */
struct rt_ship_row_context {
	const char *host;
	size_t host_length;
	uint64_t file_id;
	uint32_t file_seq;
	uint64_t ordinal;
	uint64_t batch_first; /* the ordinal of the batch's first row */
	uint64_t wall0; /* the wall-clock time (ns since the epoch) of ts_ns 0; 0: not known */
	int64_t dur_ns; /* a paired end's or exit's duration, else -1 (io: its own) */
};

/* Append ev's row to b: 0, or -ENOMEM. */
int rt_ship_row_encode(struct rt_ship_buffer *b, const struct rt_ship_row_context *c,
		       const struct rt_event *ev);

#endif /* RT_SHIP_ROWS_H */
