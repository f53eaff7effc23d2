/*
 * trace_walk.h - the tests' own walk over a trace file: every block must
 * pass rt_block_check(), carry the file's id and seq and the next block_seq,
 * the first must be FILE and nothing may follow END.  Each good block goes
 * to a callback.  Independent of the tool's reader on purpose: it checks
 * the collector against the format, not against another implementation.
 */
#ifndef RT_TEST_TRACE_WALK_H
#define RT_TEST_TRACE_WALK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/packed_slots.h"
#include "format/trace_block.h"

#include "check.h"

struct trace_walk {
	uint64_t file_id; /* expected; 0: learn it from the first block */
	uint32_t file_seq;
	/* results */
	uint32_t blocks;
	uint64_t size;
	int ended;			     /* an END block closes the file */
	uint32_t end_reason;		     /* its reason */
	uint32_t types[RT_BLOCK_PACKED + 1]; /* a PACKED block counts as SLOTS */
	uint32_t packed;		     /* of those, how many were PACKED */
	uint32_t rundown_types; /* bit per type seen before the first SLOTS/LOSS block */
};

typedef void (*trace_walk_fn)(void *context, const struct rt_block_header *h,
			      const unsigned char *payload);

/* Read a whole file; NULL if it cannot be read. */
static inline unsigned char *trace_walk_read(const char *path, uint64_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *data = malloc(n > 0 ? (size_t)n : 1);
	if (data && n > 0 && fread(data, 1, (size_t)n, f) != (size_t)n) {
		free(data);
		data = NULL;
	}
	fclose(f);
	*size = n > 0 ? (uint64_t)n : 0;
	return data;
}

/* Walk path; returns 0 when every block checked out (failures are also CHECKs). */
static inline int trace_walk_file(const char *path, struct trace_walk *w, trace_walk_fn fn,
				  void *context)
{
	uint64_t size;
	unsigned char *data = trace_walk_read(path, &size);
	int before = check_failure_count();
	if (!data) {
		check_fail(__FILE__, __LINE__, "%s: cannot read", path);
		return -1;
	}
	w->size = size;
	int rundown = 1;
	for (uint64_t at = 0; at < size;) {
		struct rt_block_header h;
		enum rt_block_verdict v = rt_block_check(data + at, size - at, &h);
		if (v != RT_BLOCK_OK) {
			check_fail(__FILE__, __LINE__, "%s: byte %llu: %s", path,
				   (unsigned long long)at, rt_block_verdict_text(v));
			break;
		}
		if (w->blocks == 0 && !w->file_id)
			w->file_id = h.file_id;
		CHECK(!w->ended); /* nothing after END */
		CHECK_EQ(h.file_id, w->file_id);
		CHECK_EQ(h.file_seq, w->file_seq);
		CHECK_EQ(h.block_seq, w->blocks);
		if (w->blocks == 0)
			CHECK_EQ(h.type, RT_BLOCK_FILE);
		const uint32_t on_disk = h.size;
		const unsigned char *block = data + at;
		unsigned char expanded[RT_BLOCK_MAX_BYTES];
		if (h.type == RT_BLOCK_PACKED) {
			/* the SLOTS block it stands for (rt_block_check made sure it expands) */
			if (!CHECK(rt_packed_to_slots(block, &h, expanded, &h) == 0))
				break;
			block = expanded;
			w->packed++;
		}
		w->types[h.type]++;
		if (h.type == RT_BLOCK_SLOTS || h.type == RT_BLOCK_LOSS)
			rundown = 0;
		if (rundown)
			w->rundown_types |= 1u << h.type;
		if (h.type == RT_BLOCK_END) {
			struct rt_block_end end;
			memcpy(&end, data + at + RT_BLOCK_HEADER_SIZE, sizeof(end));
			w->ended = 1;
			w->end_reason = end.reason;
			CHECK_EQ(end.blocks, w->blocks);
			CHECK_EQ(end.bytes, at);
		}
		if (fn)
			fn(context, &h, block + RT_BLOCK_HEADER_SIZE);
		w->blocks++;
		at += on_disk;
	}
	free(data);
	return check_failure_count() == before ? 0 : -1;
}

#endif /* RT_TEST_TRACE_WALK_H */
