/*
 * key_table.c - see key_table.h.  Open addressing with linear probing,
 * FNV-1a hashes, at most half full.
 */
#include "common/key_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

static int grow_slots(struct rt_key_table *t)
{
	size_t count = t->slot_count ? t->slot_count * 2 : 256;
	uint32_t *slots = calloc(count, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->count; i++) {
		size_t s = hash_bytes(t->keys[i], t->lengths[i]) & (count - 1);
		while (slots[s])
			s = (s + 1) & (count - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->slot_count = count;
	return 0;
}

static int grow_keys(struct rt_key_table *t)
{
	size_t cap = t->capacity ? t->capacity * 2 : 256;
	char **keys = realloc(t->keys, cap * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	t->keys = keys;
	size_t *lengths = realloc(t->lengths, cap * sizeof(*lengths));
	if (!lengths)
		return -ENOMEM;
	t->lengths = lengths;
	t->capacity = cap;
	return 0;
}

long rt_key_table_find(struct rt_key_table *t, const char *key, size_t n)
{
	uint64_t h = hash_bytes(key, n);
	if (t->slot_count) {
		size_t mask = t->slot_count - 1;
		for (size_t s = h & mask; t->slots[s]; s = (s + 1) & mask) {
			size_t i = t->slots[s] - 1;
			if (t->lengths[i] == n && memcmp(t->keys[i], key, n) == 0)
				return (long)i;
		}
	}
	if ((t->count + 1) * 2 > t->slot_count && grow_slots(t) != 0)
		return -1;
	if (t->count == t->capacity && grow_keys(t) != 0)
		return -1;
	char *copy = malloc(n + 1);
	if (!copy)
		return -1;
	memcpy(copy, key, n);
	copy[n] = 0;
	t->keys[t->count] = copy;
	t->lengths[t->count] = n;
	size_t mask = t->slot_count - 1;
	size_t s = h & mask;
	while (t->slots[s])
		s = (s + 1) & mask;
	t->slots[s] = (uint32_t)t->count + 1;
	return (long)t->count++;
}

void rt_key_table_free(struct rt_key_table *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->keys[i]);
	free(t->keys);
	free(t->lengths);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
