/*
 * absurd_counts.c - set one loss count of a real recording to VALUE, keeping
 * every checksum good, so that only the reader's bounds stand between the
 * count and the user.
 *
 *   absurd_counts trace FIELD VALUE FILE   FIELD: loss, lost, ring-dropped,
 *                                          no-ring, untracked
 *   absurd_counts arena FIELD VALUE FILE   FIELD: lost, ring-dropped, no-ring
 *
 * trace: the first LOSS entry's count (loss), the count of the first
 * RT_REC_LOST record of a SLOTS block (lost), the dropped counter of every
 * RINGS entry (ring-dropped), the lost_no_ring of every THREADS entry
 * (no-ring), the lost_untracked of every SOURCE header (untracked); each
 * block changed is sealed again.  arena: the same fields of an arena file:
 * the first LOST record of any ring (a two-slot event made one if there is
 * none), every ring descriptor, every thread.
 * Exit status 0 when something was changed, 1 when the file holds no such
 * field (the test's recording must make one), 2 on a usage or I/O error.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/arena_layout.h"
#include "format/trace_block.h"

static unsigned char *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	unsigned char *data = NULL;
	size_t have = 0, room = 0;
	for (;;) {
		if (have == room) {
			room = room ? room * 2 : 1 << 20;
			unsigned char *more = realloc(data, room);
			if (!more) {
				free(data);
				fclose(f);
				return NULL;
			}
			data = more;
		}
		size_t n = fread(data + have, 1, room - have, f);
		have += n;
		if (n == 0)
			break;
	}
	fclose(f);
	*size = have;
	return data;
}

static int write_all(const char *path, const unsigned char *data, size_t size)
{
	FILE *f = fopen(path, "r+b");
	if (!f)
		return -1;
	int ok = fwrite(data, 1, size, f) == size;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Overwrite the 8-byte field at p. */
static void set64(unsigned char *p, uint64_t value)
{
	memcpy(p, &value, sizeof(value));
}

/*
 * The first RT_REC_LOST record of n slots at slots: its count's address, or
 * NULL.  With make, a two-slot RT_REC_TRACE record becomes one when no LOST
 * record is found (an arena nobody drained holds none).
 */
static unsigned char *lost_count_in(unsigned char *slots, uint64_t n, int make)
{
	for (int pass = 0; pass < 1 + make; pass++) {
		for (uint64_t i = 0; i + 1 < n; i++) {
			struct rt_slot_head h;
			memcpy(&h, slots + i * RT_SLOT_SIZE, sizeof(h));
			if (h.nslots != 2 ||
			    (h.kind != RT_REC_LOST && (!pass || h.kind != RT_REC_TRACE)))
				continue;
			if (h.kind != RT_REC_LOST) {
				h.kind = RT_REC_LOST;
				h.site = 0;
				h.a0 = RT_LOST_DROPPED;
				h.a1 = 0;
				memcpy(slots + i * RT_SLOT_SIZE, &h, sizeof(h));
			}
			return slots + (i + 1) * RT_SLOT_SIZE + offsetof(struct rt_slot_cont, a4);
		}
	}
	return NULL;
}

static int edit_trace(unsigned char *data, size_t size, const char *field, uint64_t value)
{
	int changed = 0, lost_done = 0, loss_done = 0;
	for (size_t at = 0; at < size;) {
		struct rt_block_header h;
		if (rt_block_check(data + at, size - at, &h) != RT_BLOCK_OK) {
			fprintf(stderr, "absurd_counts: byte %zu: not a good block\n", at);
			return -1;
		}
		unsigned char *payload = data + at + RT_BLOCK_HEADER_SIZE;
		int mine = 0;
		if (!strcmp(field, "loss") && h.type == RT_BLOCK_LOSS && h.count && !loss_done) {
			set64(payload + offsetof(struct rt_block_loss, count), value);
			mine = loss_done = 1;
		} else if (!strcmp(field, "lost") && h.type == RT_BLOCK_SLOTS && !lost_done) {
			unsigned char *p = lost_count_in(
			    payload, (h.size - RT_BLOCK_HEADER_SIZE) / RT_SLOT_SIZE, 0);
			if (p) {
				set64(p, value);
				mine = lost_done = 1;
			}
		} else if (!strcmp(field, "ring-dropped") && h.type == RT_BLOCK_RINGS) {
			for (uint32_t i = 0; i < h.count; i++)
				set64(payload + i * sizeof(struct rt_block_ring) +
					  offsetof(struct rt_block_ring, dropped),
				      value);
			mine = h.count != 0;
		} else if (!strcmp(field, "no-ring") && h.type == RT_BLOCK_THREADS) {
			for (uint32_t i = 0; i < h.count; i++)
				set64(payload + i * sizeof(struct rt_block_thread) +
					  offsetof(struct rt_block_thread, entry) +
					  offsetof(struct rt_thread_entry, lost_no_ring),
				      value);
			mine = h.count != 0;
		} else if (!strcmp(field, "untracked") && h.type == RT_BLOCK_SOURCE) {
			set64(payload + offsetof(struct rt_block_source, header) +
				  offsetof(struct rt_arena_header, lost_untracked),
			      value);
			mine = 1;
		}
		if (mine) {
			rt_block_seal(data + at, h.size);
			changed = 1;
		}
		at += h.size;
	}
	return changed;
}

static int edit_arena(unsigned char *data, size_t size, const char *field, uint64_t value)
{
	struct rt_arena_header h;
	struct rt_layout_error error;
	if (rt_layout_check(data, size, &h, &error) != 0) {
		fprintf(stderr, "absurd_counts: byte %llu: %s\n", (unsigned long long)error.offset,
			error.message);
		return -1;
	}
	int changed = 0;
	if (!strcmp(field, "lost")) {
		for (uint32_t r = 0; r < h.ring_count && !changed; r++) {
			unsigned char *p = lost_count_in(data + rt_layout_ring_offset(&h, r),
							 rt_layout_ring_slots(&h), 1);
			if (p) {
				set64(p, value);
				changed = 1;
			}
		}
	} else if (!strcmp(field, "ring-dropped")) {
		for (uint32_t r = 0; r < h.ring_count; r++) {
			set64(data + rt_layout_ring_desc_offset(&h, r) +
				  offsetof(struct rt_ring_desc, dropped),
			      value);
			changed = 1;
		}
	} else if (!strcmp(field, "no-ring")) {
		for (uint32_t t = 0; t < rt_layout_thread_count(&h); t++) {
			set64(data + rt_layout_thread_offset(&h, t) +
				  offsetof(struct rt_thread_entry, lost_no_ring),
			      value);
			changed = 1;
		}
	}
	return changed;
}

int main(int argc, char **argv)
{
	if (argc != 5 || (strcmp(argv[1], "trace") && strcmp(argv[1], "arena"))) {
		fprintf(stderr, "usage: absurd_counts trace|arena FIELD VALUE FILE\n");
		return 2;
	}
	char *end;
	errno = 0;
	uint64_t value = strtoull(argv[3], &end, 0);
	if (errno || *end) {
		fprintf(stderr, "absurd_counts: %s: not a number\n", argv[3]);
		return 2;
	}
	size_t size;
	unsigned char *data = read_all(argv[4], &size);
	if (!data) {
		fprintf(stderr, "absurd_counts: %s: %s\n", argv[4], strerror(errno));
		return 2;
	}
	int rc = !strcmp(argv[1], "trace") ? edit_trace(data, size, argv[2], value)
					   : edit_arena(data, size, argv[2], value);
	if (rc > 0 && write_all(argv[4], data, size) != 0) {
		fprintf(stderr, "absurd_counts: %s: %s\n", argv[4], strerror(errno));
		rc = -1;
	}
	free(data);
	return rc < 0 ? 2 : rc == 0;
}
