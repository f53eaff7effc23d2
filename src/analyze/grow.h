/*
 * grow.h - room in an analyzer's array of rows, states or frames for need
 * items: the capacity at least doubles, and the new items are zero, so a
 * row or state seen for the first time starts empty.
 */
#ifndef RT_ANALYZE_GROW_H
#define RT_ANALYZE_GROW_H

#include <stddef.h>

/* *array (of *capacity items of size bytes) holds at least need: 0, or -ENOMEM. */
int rt_analyze_grow(void **array, size_t *capacity, size_t need, size_t size);

#endif /* RT_ANALYZE_GROW_H */
