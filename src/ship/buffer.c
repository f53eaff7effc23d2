/*
 * buffer.c - the growing byte buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ship/buffer.h"

int rt_ship_buffer_reserve_slow(struct rt_ship_buffer *b, size_t need)
{
	size_t capacity = b->capacity ? b->capacity : 4096;
	while (capacity - b->length < need) {
		if (capacity > ((size_t)-1) / 2)
			return -ENOMEM;
		capacity *= 2;
	}
	unsigned char *grown = realloc(b->data, capacity);
	if (!grown)
		return -ENOMEM;
	b->data = grown;
	b->capacity = capacity;
	return 0;
}

int rt_ship_buffer_append(struct rt_ship_buffer *b, const void *bytes, size_t n)
{
	if (rt_ship_buffer_reserve(b, n + 1))
		return -ENOMEM;
	memcpy(b->data + b->length, bytes, n);
	b->length += n;
	b->data[b->length] = 0; /* an answer reads as a string */
	return 0;
}

void rt_ship_buffer_free(struct rt_ship_buffer *b)
{
	free(b->data);
	b->data = NULL;
	b->length = b->capacity = 0;
}
