/*
 * floor.c - the per-thread rings of the floor loops (floor.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "floor.h"

__thread struct floor_ring floor_ring;

void floor_ring_create(uint64_t bytes)
{
	void *p = aligned_alloc(4096, bytes);
	if (!p) {
		fprintf(stderr, "floor: cannot allocate a %llu-byte ring\n",
			(unsigned long long)bytes);
		exit(1);
	}
	memset(p, 0, bytes); /* touch every page now, not inside a timed batch */
	floor_ring.slots = p;
	floor_ring.mask = bytes / sizeof(struct floor_slot) - 1;
	floor_ring.head = 0;
}

void floor_ring_destroy(void)
{
	free(floor_ring.slots);
	floor_ring.slots = NULL;
}

uint64_t floor_checksum(void)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i <= floor_ring.mask; i++)
		for (int w = 0; w < 4; w++)
			sum += floor_ring.slots[i].word[w];
	return sum;
}
