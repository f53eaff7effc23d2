/*
 * fd_seeds.h - the descriptors a traced process had named when a reader
 * began to look: from an arena's descriptor table or a trace file's FDS
 * blocks (ringtrace/format.h).  They seed the time-aware descriptor names
 * (decode/fd_names.h) of a reader that did not see the records that named
 * them: a file after rotation, a flight ring that wrapped, a live tail.
 *
 * An arena's table is written under a sequence count by the traced
 * program, possibly right now: an entry whose count is odd (a writer is
 * inside, or died there) or changes while it is copied is left out, as is
 * one that does not check (state, op, name length, a NUL in the name).
 * Leaving one out only costs a name: the decoder then says "unknown".
 */
#ifndef RT_DECODE_FD_SEEDS_H
#define RT_DECODE_FD_SEEDS_H

#include <stddef.h>
#include <stdint.h>

#include "common/file_data.h"
#include "ringtrace/format.h"

struct rt_fd_seed {
	int32_t fd;
	uint32_t state;		 /* RT_FD_OPEN, or RT_FD_CLOSED (arena tables only) */
	uint64_t counter;	 /* raw clock from which the name holds, 0: before tracing */
	uint64_t closed_counter; /* RT_FD_CLOSED: when */
	uint32_t open_flags;	 /* O_* */
	uint8_t op;		 /* enum rt_io_op that named it */
	uint8_t flags;		 /* RT_FD_F_* */
	uint16_t name_length;	 /* below RT_FD_NAME_MAX */
	char *name;		 /* NUL-terminated, owned by the list */
};

struct rt_fd_seeds {
	struct rt_fd_seed *items; /* by descriptor, ascending */
	uint32_t count, capacity;
	uint32_t skipped; /* entries left out: being written, or not checking */
};

/* Whether the fields of an entry can be believed (its name apart). */
int rt_fd_seed_fields_ok(uint32_t state, uint8_t op, uint32_t name_length);

/* Whether the name_length bytes at name hold no NUL. */
int rt_fd_seed_name_ok(const char *name, uint32_t name_length);

/* Append one (checked) seed, its name copied; 0 or -ENOMEM. */
int rt_fd_seeds_add(struct rt_fd_seeds *list, const struct rt_fd_seed *seed, const char *name);

/*
 * Read the descriptor table of a checked header (none when fd_capacity is
 * 0) from the arena mapped at file, replacing what list held: every whole,
 * checking entry that is RT_FD_OPEN or RT_FD_CLOSED.  Only entries the
 * file holds data for are read (data: common/file_data.h; NULL: all of it).
 * 0 or -ENOMEM.
 */
int rt_fd_seeds_read_table(struct rt_fd_seeds *list, const unsigned char *file,
			   const struct rt_arena_header *h, struct rt_file_data *data);

/* Forget every seed, keeping the memory for the next list. */
void rt_fd_seeds_clear(struct rt_fd_seeds *list);
void rt_fd_seeds_free(struct rt_fd_seeds *list);

#endif /* RT_DECODE_FD_SEEDS_H */
