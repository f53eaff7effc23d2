/*
 * id_table.c - see id_table.h.  Open addressing with linear probing, at
 * most half full.
 */
#include "analyze/id_table.h"

#include <stdlib.h>
#include <string.h>

void rt_id_table_init(struct rt_id_table *t)
{
	memset(t, 0, sizeof(*t));
}

void rt_id_table_free(struct rt_id_table *t)
{
	free(t->slots);
	rt_id_table_init(t);
}

static void put(struct rt_id_table_slot *slots, size_t slot_count,
		const struct rt_id_table_slot *slot)
{
	size_t mask = slot_count - 1;
	size_t s = rt_id_table_hash(slot->space, slot->id) & mask;
	while (slots[s].index)
		s = (s + 1) & mask;
	slots[s] = *slot;
}

static int grow(struct rt_id_table *t)
{
	size_t count = t->slot_count ? t->slot_count * 2 : 64;
	struct rt_id_table_slot *slots = calloc(count, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < t->slot_count; i++)
		if (t->slots[i].index)
			put(slots, count, &t->slots[i]);
	free(t->slots);
	t->slots = slots;
	t->slot_count = count;
	return 0;
}

long rt_id_table_add(struct rt_id_table *t, uint32_t space, uint64_t id)
{
	if (t->count >= UINT32_MAX - 1)
		return -1;
	if ((t->count + 1) * 2 > t->slot_count && grow(t) != 0)
		return -1;
	struct rt_id_table_slot slot = {.id = id, .space = space, .index = (uint32_t)t->count + 1};
	put(t->slots, t->slot_count, &slot);
	return (long)t->count++;
}
