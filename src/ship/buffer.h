/*
 * buffer.h - a growing byte buffer: a batch of rows on its way to the
 * server, and the server's answers.
 */
#ifndef RT_SHIP_BUFFER_H
#define RT_SHIP_BUFFER_H

#include <stddef.h>

struct rt_ship_buffer {
	unsigned char *data;
	size_t length, capacity;
};

/* Room for need more bytes after length: 0, or -ENOMEM. */
int rt_ship_buffer_reserve_slow(struct rt_ship_buffer *b, size_t need);

static inline int rt_ship_buffer_reserve(struct rt_ship_buffer *b, size_t need)
{
	if (b->capacity - b->length >= need)
		return 0;
	return rt_ship_buffer_reserve_slow(b, need);
}

/* Append n bytes: 0, or -ENOMEM. */
int rt_ship_buffer_append(struct rt_ship_buffer *b, const void *bytes, size_t n);

void rt_ship_buffer_free(struct rt_ship_buffer *b);

#endif /* RT_SHIP_BUFFER_H */
