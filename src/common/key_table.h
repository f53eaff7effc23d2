/*
 * key_table.h - a hash table from byte strings to dense indices 0, 1, 2...
 * in the order the keys were first seen, for the commands that add up rows
 * by name (report).  The caller keeps its rows in an array of its own,
 * indexed alike: a find that returns the new count - 1 made a new key.
 */
#ifndef RT_COMMON_KEY_TABLE_H
#define RT_COMMON_KEY_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct rt_key_table {
	char **keys; /* NUL-terminated copies, for printing */
	size_t *lengths;
	size_t count, capacity;
	uint32_t *slots; /* index + 1, 0 empty; a power of two of them */
	size_t slot_count;
};

/* The index of key (n bytes), added if new; -1 when out of memory. */
long rt_key_table_find(struct rt_key_table *t, const char *key, size_t n);
void rt_key_table_free(struct rt_key_table *t);

#endif /* RT_COMMON_KEY_TABLE_H */
