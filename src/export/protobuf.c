/*
 * protobuf.c - the encodings of protobuf.h.
 */
#include "export/protobuf.h"

#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"

enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_LENGTH = 2 };

void rt_pb_init(struct rt_pb *pb)
{
	memset(pb, 0, sizeof(*pb));
}

void rt_pb_free(struct rt_pb *pb)
{
	free(pb->buf);
	memset(pb, 0, sizeof(*pb));
}

/* Room for n more bytes, or NULL (and oom set): the buffer grown. */
static unsigned char *grow(struct rt_pb *pb, size_t n)
{
	if (pb->oom)
		return NULL;
	size_t want = pb->capacity ? pb->capacity : 256;
	while (want - pb->used < n)
		want *= 2;
	unsigned char *b = realloc(pb->buf, want);
	if (!b) {
		pb->oom = 1;
		return NULL;
	}
	pb->buf = b;
	pb->capacity = want;
	return pb->buf + pb->used;
}

/* Room for n more bytes, or NULL (and oom set); every field asks. */
static inline unsigned char *room(struct rt_pb *pb, size_t n)
{
	if (__builtin_expect(pb->capacity - pb->used >= n && !pb->oom, 1))
		return pb->buf + pb->used;
	return grow(pb, n);
}

unsigned char *rt_pb_put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

static unsigned char *put_tag(unsigned char *p, uint32_t field, unsigned wire)
{
	return rt_pb_put_varint(p, ((uint64_t)field << 3) | wire);
}

void rt_pb_varint(struct rt_pb *pb, uint32_t field, uint64_t v)
{
	unsigned char *p = room(pb, 2 * RT_PB_VARINT_MAX);
	if (!p)
		return;
	p = rt_pb_put_varint(put_tag(p, field, WIRE_VARINT), v);
	pb->used = (size_t)(p - pb->buf);
}

void rt_pb_fixed64(struct rt_pb *pb, uint32_t field, uint64_t v)
{
	unsigned char *p = room(pb, RT_PB_VARINT_MAX + 8);
	if (!p)
		return;
	p = put_tag(p, field, WIRE_FIXED64);
	for (int i = 0; i < 8; i++)
		*p++ = (unsigned char)(v >> (8 * i));
	pb->used = (size_t)(p - pb->buf);
}

void rt_pb_bytes(struct rt_pb *pb, uint32_t field, const void *data, size_t n)
{
	unsigned char *p = room(pb, 2 * RT_PB_VARINT_MAX + n);
	if (!p)
		return;
	p = rt_pb_put_varint(put_tag(p, field, WIRE_LENGTH), n);
	if (n)
		memcpy(p, data, n);
	pb->used = (size_t)(p + n - pb->buf);
}

void rt_pb_string(struct rt_pb *pb, uint32_t field, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	if (rt_utf8_valid_prefix(u, n, 0) == n) {
		rt_pb_bytes(pb, field, s, n);
		return;
	}
	/* each bad byte grows to the three of U+FFFD */
	size_t mark = rt_pb_begin(pb, field);
	unsigned char *p = room(pb, 3 * n);
	if (!p)
		return;
	pb->used = (size_t)(rt_utf8_repair(p, u, n, 0) - pb->buf);
	rt_pb_end(pb, mark);
}

/*
 * The length goes in one byte left before the body, which holds any body
 * shorter than 128 bytes (most of them); a longer body moves up by the
 * bytes its length takes beyond that one.
 */
size_t rt_pb_begin(struct rt_pb *pb, uint32_t field)
{
	unsigned char *p = room(pb, RT_PB_VARINT_MAX + 1);
	if (!p)
		return 0;
	p = put_tag(p, field, WIRE_LENGTH);
	pb->used = (size_t)(p - pb->buf) + 1;
	return pb->used;
}

void rt_pb_end(struct rt_pb *pb, size_t mark)
{
	if (pb->oom)
		return;
	size_t body = pb->used - mark;
	if (body < 0x80) {
		pb->buf[mark - 1] = (unsigned char)body;
		return;
	}
	unsigned char len[RT_PB_VARINT_MAX];
	size_t k = (size_t)(rt_pb_put_varint(len, body) - len);
	if (!room(pb, k - 1))
		return;
	memmove(pb->buf + mark + k - 1, pb->buf + mark, body);
	memcpy(pb->buf + mark - 1, len, k);
	pb->used += k - 1;
}

void rt_pb_write_field(struct rt_out *out, uint32_t field, const struct rt_pb *pb)
{
	unsigned char head[2 * RT_PB_VARINT_MAX];
	unsigned char *p = put_tag(head, field, WIRE_LENGTH);
	p = rt_pb_put_varint(p, pb->used);
	rt_out_bytes(out, head, (size_t)(p - head));
	rt_out_bytes(out, pb->buf, pb->used);
}
