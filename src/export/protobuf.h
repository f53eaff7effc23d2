/*
 * protobuf.h - the few protocol buffer encodings the Perfetto exporter
 * writes (varints, 64-bit fixed values, length-delimited fields and nested
 * messages), into a growable scratch buffer.
 *
 * A message is built whole in the buffer; a nested message is opened with
 * rt_pb_begin and closed with rt_pb_end, which writes its length in front
 * of it (in the byte left for it; a body of 128 bytes or more moves by the
 * bytes its length takes beyond that one), so every length is in its
 * shortest form.  A failed allocation is kept in `oom` and the
 * rest is discarded, so a caller checks once per message.
 */
#ifndef RT_EXPORT_PROTOBUF_H
#define RT_EXPORT_PROTOBUF_H

#include <stddef.h>
#include <stdint.h>

#include "common/output.h"

#define RT_PB_VARINT_MAX ((size_t)10)

struct rt_pb {
	unsigned char *buf;
	size_t used, capacity;
	int oom;
};

void rt_pb_init(struct rt_pb *pb);
void rt_pb_free(struct rt_pb *pb);
/* Empty the buffer for the next message (the memory is kept). */
static inline void rt_pb_reset(struct rt_pb *pb)
{
	pb->used = 0;
}

/* v as a varint at p (room for RT_PB_VARINT_MAX); returns the end. */
unsigned char *rt_pb_put_varint(unsigned char *p, uint64_t v);
/* The zigzag form sint32/sint64 fields take. */
static inline uint64_t rt_pb_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
}

/* A varint field: uint32/64, bool, enum; int32/int64 as (uint64_t) of the value. */
void rt_pb_varint(struct rt_pb *pb, uint32_t field, uint64_t v);
/* A fixed64 field (fixed64, sfixed64, or a double's bits). */
void rt_pb_fixed64(struct rt_pb *pb, uint32_t field, uint64_t v);
/* A length-delimited field of n bytes. */
void rt_pb_bytes(struct rt_pb *pb, uint32_t field, const void *data, size_t n);
/*
 * A string field of n bytes; bytes that are not valid UTF-8 become U+FFFD,
 * since readers of the format reject or garble strings that are not.
 */
void rt_pb_string(struct rt_pb *pb, uint32_t field, const char *s, size_t n);

/* Open a nested message as field; returns the mark rt_pb_end takes. */
size_t rt_pb_begin(struct rt_pb *pb, uint32_t field);
void rt_pb_end(struct rt_pb *pb, size_t mark);

/* Write pb's message to out as a length-delimited field (the top level's). */
void rt_pb_write_field(struct rt_out *out, uint32_t field, const struct rt_pb *pb);

#endif /* RT_EXPORT_PROTOBUF_H */
