/*
 * arena_file.h - another process's arena, mapped by the death tests through
 * the contract in ringtrace/format.h alone: to see that a victim is tracing
 * before it is killed, to drain its rings as a collector would, to learn
 * what its rings hold after it died, and to forge a torn record.
 *
 * Fields the victim may be writing are read with atomic loads.
 */
#ifndef RT_TEST_ARENA_FILE_H
#define RT_TEST_ARENA_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/format.h"

struct arena_file {
	int fd;
	uint8_t *base;
	size_t size;
	struct rt_arena_header *header;
};

/*
 * Map the arena at path once its header is complete (state not CREATING).
 * writable: MAP_SHARED read-write, else read-only.  Returns 0, or -1 with
 * the reason in why (-2: not an arena yet, try again later).
 */
int arena_file_open(struct arena_file *a, const char *path, int writable, char *why,
		    size_t why_size);
void arena_file_close(struct arena_file *a);

uint64_t arena_ring_slots(const struct arena_file *a);
uint32_t arena_threads_used(const struct arena_file *a); /* clamped to the capacity */
struct rt_thread_entry *arena_thread(const struct arena_file *a, uint32_t index);
struct rt_ring_desc *arena_ring(const struct arena_file *a, uint32_t ring);
union rt_slot *arena_slots(const struct arena_file *a, uint32_t ring);

/* A ring's control words, each loaded atomically (head with acquire). */
struct ring_words {
	uint64_t head, reserve, records, dropped;
};
void arena_ring_words(const struct arena_file *a, uint32_t ring, struct ring_words *out);

/*
 * The newest committed record of a ring: the one that ends at head, read
 * from its slots (for a ring nobody writes any more).  Returns 0 and fills
 * out, or -1 when the slots below head do not hold a whole record.
 */
struct ring_record {
	uint64_t position; /* slot seq of its first slot */
	unsigned nslots;
	struct rt_slot_head head;
	struct rt_slot_cont cont; /* when nslots == 2 */
};
int arena_newest_record(const struct arena_file *a, uint32_t ring, struct ring_record *out);

#endif /* RT_TEST_ARENA_FILE_H */
