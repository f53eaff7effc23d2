/*
 * io_payload.h - build the payload of an RT_REC_IO record the way the
 * recording library lays it out (ringtrace/format.h), for tests that make
 * records by hand.
 */
#ifndef RT_TESTS_IO_PAYLOAD_H
#define RT_TESTS_IO_PAYLOAD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ringtrace/format.h"

struct tio {
	uint16_t op;
	uint16_t flags; /* RT_IO_F_OFFSET, _AUX, _STREAM, _PATH_CUT; _PATH from path */
	int32_t fd;
	uint64_t start;
	int64_t size;
	int64_t result;
	int64_t offset;
	uint32_t aux[2];
	uint64_t stream;
	const char *path, *path2; /* NULL: none */
};

/* The payload in out (room for RT_LOG_PAYLOAD_MAX bytes); returns its length. */
static inline size_t tio_payload(const struct tio *c, unsigned char *out)
{
	struct rt_io_payload p;
	memset(&p, 0, sizeof(p));
	p.op = c->op;
	p.flags = (uint16_t)(c->flags | (c->path || c->path2 ? RT_IO_F_PATH : 0));
	p.fd = c->fd;
	p.start = c->start;
	p.size = c->size;
	p.result = c->result;
	size_t n = 0;
	memcpy(out, &p, sizeof(p));
	n += sizeof(p);
	if (p.flags & RT_IO_F_OFFSET) {
		memcpy(out + n, &c->offset, 8);
		n += 8;
	}
	if (p.flags & RT_IO_F_AUX) {
		memcpy(out + n, c->aux, 8);
		n += 8;
	}
	if (p.flags & RT_IO_F_STREAM) {
		memcpy(out + n, &c->stream, 8);
		n += 8;
	}
	if (p.flags & RT_IO_F_PATH) {
		uint32_t l[2] = {c->path ? (uint32_t)strlen(c->path) : 0,
				 c->path2 ? (uint32_t)strlen(c->path2) : 0};
		memcpy(out + n, l, 8);
		n += 8;
		if (l[0])
			memcpy(out + n, c->path, l[0]);
		n += l[0];
		if (l[1])
			memcpy(out + n, c->path2, l[1]);
		n += l[1];
	}
	return n;
}

#endif /* RT_TESTS_IO_PAYLOAD_H */
