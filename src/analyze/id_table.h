/*
 * id_table.h - a hash table from (space, id) pairs to dense indices 0, 1,
 * 2... in the order the pairs were first seen.  The analyzers key their
 * rows and threads by numbers the records carry (a source and a site id, a
 * source and a function's address, a source and a tid), so the hot path
 * hashes two integers and never a string.  The caller keeps its rows in an
 * array of its own, indexed alike.
 */
#ifndef RT_ANALYZE_ID_TABLE_H
#define RT_ANALYZE_ID_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct rt_id_table_slot {
	uint64_t id;
	uint32_t space;
	uint32_t index; /* index + 1; 0: empty */
};

struct rt_id_table {
	struct rt_id_table_slot *slots; /* a power of two of them, at most half full */
	size_t slot_count;
	size_t count;
};

void rt_id_table_init(struct rt_id_table *t);
void rt_id_table_free(struct rt_id_table *t);

static inline uint64_t rt_id_table_hash(uint32_t space, uint64_t id)
{
	uint64_t h = (id ^ ((uint64_t)space << 47 | (uint64_t)space >> 17)) * 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

/* The index of (space, id), or -1 when it was never added. */
static inline long rt_id_table_get(const struct rt_id_table *t, uint32_t space, uint64_t id)
{
	if (!t->slot_count)
		return -1;
	size_t mask = t->slot_count - 1;
	for (size_t s = rt_id_table_hash(space, id) & mask; t->slots[s].index; s = (s + 1) & mask)
		if (t->slots[s].id == id && t->slots[s].space == space)
			return (long)t->slots[s].index - 1;
	return -1;
}

/*
 * Add (space, id), which get() did not find: its index (the count before).
 * -1 when out of memory.
 */
long rt_id_table_add(struct rt_id_table *t, uint32_t space, uint64_t id);

#endif /* RT_ANALYZE_ID_TABLE_H */
