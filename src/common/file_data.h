/*
 * file_data.h - where an input file holds data, and where it holds holes.
 *
 * A file may claim gigabytes and hold almost nothing: its holes read as
 * zeros, but reading them through a mapping costs what they claim (page
 * faults, and on tmpfs new pages of shared memory that stay allocated: a
 * read fault of a shared mapping writes to the file).  So a reader asks
 * here before it touches a range, and reads only data; what lies in a hole
 * is never looked at.  The answers come from lseek(SEEK_DATA, SEEK_HOLE),
 * asked when needed (a writer that still runs adds data), so the time they
 * cost follows the data present, not the size claimed.  Blocks allocated
 * but never written (fallocate) are holes too: nothing was written there.
 *
 * A file system that cannot tell says the whole file is data; so does an
 * input that is not a file (fd -1: a buffer in memory).
 */
#ifndef RT_COMMON_FILE_DATA_H
#define RT_COMMON_FILE_DATA_H

#include <stdint.h>

/* Data runs remembered: a reader that merges several rings asks in turn about each. */
#define RT_FILE_DATA_RUNS 8

struct rt_file_data {
	int fd; /* -1: data everywhere */
	/* the last data runs found: [from, to) (empty: none), replaced in turn */
	uint64_t from[RT_FILE_DATA_RUNS], to[RT_FILE_DATA_RUNS];
	unsigned next; /* the run found next replaces this one */
	unsigned last; /* the run that answered last: asked first */
};

void rt_file_data_init(struct rt_file_data *d, int fd);

/*
 * The first byte in [offset, end) that holds data, or end if none does;
 * *data_end is where that run of data ends (at most end).
 */
uint64_t rt_file_data_next(struct rt_file_data *d, uint64_t offset, uint64_t end,
			   uint64_t *data_end);

/* Whether every byte of [offset, end) holds data. */
int rt_file_data_whole(struct rt_file_data *d, uint64_t offset, uint64_t end);

/* Bytes of [offset, end) that hold data from offset on, up to the first hole. */
uint64_t rt_file_data_run(struct rt_file_data *d, uint64_t offset, uint64_t end);

/* Where the last hole in [offset, end) ends (end if it reaches end), or offset if none. */
uint64_t rt_file_data_after_holes(struct rt_file_data *d, uint64_t offset, uint64_t end);

/* Bytes of [offset, end) that hold data. */
uint64_t rt_file_data_bytes(struct rt_file_data *d, uint64_t offset, uint64_t end);

/*
 * Copy bytes [offset, offset + n) of the file mapped at file into out,
 * holes as zeros (not read).  Returns 1 when all of it was data.
 */
int rt_file_data_copy(struct rt_file_data *d, const unsigned char *file, uint64_t offset,
		      uint64_t n, void *out);

/*
 * Bytes [offset, offset + n) of the file mapped at file: file + offset
 * when they are all data (read in place, as a live writer writes them),
 * else a copy in buf with holes as zeros (n bytes of room).
 */
const void *rt_file_data_at(struct rt_file_data *d, const unsigned char *file, uint64_t offset,
			    uint64_t n, void *buf);

/*
 * Of a table of entries of size bytes at base, the first index at or past
 * index (below count) with a byte of data; count if none.  Entries in holes
 * are zeros: skipping them costs nothing.
 */
uint64_t rt_file_data_next_entry(struct rt_file_data *d, uint64_t base, uint64_t size,
				 uint64_t index, uint64_t count);

#endif /* RT_COMMON_FILE_DATA_H */
