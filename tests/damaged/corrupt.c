/*
 * corrupt.c - damage a copy of a file one way, deterministically from a seed.
 *
 *   corrupt IN OUT KIND SEED [OFFSET [LENGTH]]
 *
 * KIND is one of
 *   omit       delete a chunk
 *   insert     insert garbage (sometimes holding fake block magics)
 *   overwrite  write garbage over a chunk (the same)
 *   truncate   cut the file at OFFSET
 *   zero       zero whole 4 KiB pages
 *   flip       flip one bit
 *   replay     copy a chunk of the file's own bytes - a whole good block or
 *              any slice - to another offset, over what is there or inserted
 *
 * OFFSET and LENGTH are drawn from SEED when not given (lengths from 1 byte
 * to 64 KiB, small ones more often).  One line on stdout says what was done
 * and the damaged bytes, in IN's and in OUT's coordinates (half-open; an
 * empty range marks where bytes were removed or inserted):
 *
 *   KIND in A B out C D
 *
 * Exit status 0, 1 when IN cannot be read or OUT written, 2 for bad usage.
 * corrupt_main is the command; trace_damage.c runs it in a forked child
 * rather than starting this program once per seed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corrupt.h"
#include "format/trace_block.h"
#include "ringtrace/format.h"

#define PAGE 4096u
#define MAX_LENGTH (64u * 1024u)

static uint64_t state;

static uint64_t next(void)
{
	/* splitmix64: every seed gives a different, fixed sequence */
	uint64_t z = (state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? next() % n : 0;
}

/* 1 to MAX_LENGTH bytes, each power of two as likely as the next */
static uint64_t some_length(void)
{
	unsigned bits = (unsigned)below(17);
	uint64_t base = 1ull << bits;
	uint64_t length = base + below(base);
	return length > MAX_LENGTH ? MAX_LENGTH : length;
}

/* random bytes, with a fake block magic at a few 8-aligned places half the time */
static void garbage(unsigned char *p, uint64_t length)
{
	for (uint64_t i = 0; i < length; i++)
		p[i] = (unsigned char)next();
	if (length < 8 || below(2))
		return;
	unsigned fakes = 1 + (unsigned)below(4);
	for (unsigned i = 0; i < fakes; i++) {
		uint64_t at = below(length - 7) & ~(uint64_t)7;
		memcpy(p + at, RT_BLOCK_MAGIC, 8);
		/* now and then a plausible size after it, so that only the crc tells */
		if (at + RT_BLOCK_HEADER_SIZE <= length && below(2)) {
			uint16_t size = (uint16_t)(RT_BLOCK_HEADER_SIZE + 8 * below(500));
			memcpy(p + at + 12, &size, sizeof(size));
			p[at + 15] = RT_FILE_VERSION;
		}
	}
}

struct buf {
	unsigned char *bytes;
	uint64_t size;
};

static int read_all(const char *path, struct buf *b)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	size_t cap = 1 << 16, n = 0, got;
	unsigned char *p = malloc(cap);
	while (p && (got = fread(p + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			p = realloc(p, cap *= 2);
	}
	int bad = !p || ferror(f);
	fclose(f);
	if (bad) {
		free(p);
		return -EIO;
	}
	b->bytes = p;
	b->size = n;
	return 0;
}

/* offsets of the good blocks of a trace file, in order */
static size_t good_blocks(const struct buf *in, uint64_t *starts, size_t max)
{
	size_t n = 0;
	uint64_t at = 0;
	while (at + 8 <= in->size && n < max) {
		struct rt_block_header h;
		if (rt_block_check(in->bytes + at, in->size - at, &h) == RT_BLOCK_OK) {
			starts[n++] = at;
			at += h.size;
		} else {
			at += RT_BLOCK_ALIGN;
		}
	}
	return n;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: corrupt IN OUT omit|insert|overwrite|truncate|zero|flip|replay SEED "
		"[OFFSET [LENGTH]]\n");
	exit(2);
}

int corrupt_main(int argc, char **argv)
{
	if (argc < 5 || argc > 7)
		usage();
	const char *kind = argv[3];
	char *end;
	state = strtoull(argv[4], &end, 0);
	if (*end)
		usage();
	int have_offset = argc > 5, have_length = argc > 6;
	uint64_t offset = have_offset ? strtoull(argv[5], NULL, 0) : 0;
	uint64_t length = have_length ? strtoull(argv[6], NULL, 0) : 0;

	struct buf in = {0};
	int err = read_all(argv[1], &in);
	if (err) {
		fprintf(stderr, "corrupt: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	if (!have_offset)
		offset = below(in.size + 1);
	if (offset > in.size)
		offset = in.size;
	if (!have_length)
		length = some_length();

	/* out = in[0, keep_to) + ins[0, ins_length) + in[resume, size) */
	unsigned char *ins = NULL;
	uint64_t ins_length = 0, keep_to = offset, resume = offset;
	uint64_t in_a = offset, in_b = offset;
	unsigned char *copy = NULL; /* in place edits: a copy of in */

	if (!strcmp(kind, "omit")) {
		resume = offset + length > in.size ? in.size : offset + length;
		in_b = resume;
	} else if (!strcmp(kind, "insert") || !strcmp(kind, "overwrite")) {
		ins = malloc(length ? length : 1);
		garbage(ins, length);
		ins_length = length;
		if (kind[0] == 'o') {
			resume = offset + length > in.size ? in.size : offset + length;
			in_b = resume;
		}
	} else if (!strcmp(kind, "truncate")) {
		resume = in.size;
		in_b = in.size;
	} else if (!strcmp(kind, "zero")) {
		uint64_t first = offset / PAGE * PAGE;
		uint64_t pages = have_length ? (offset + length + PAGE - 1) / PAGE - offset / PAGE
					     : 1 + below(4);
		in_a = first < in.size ? first : in.size;
		in_b = first + pages * PAGE > in.size ? in.size : first + pages * PAGE;
		keep_to = resume = in.size;
		copy = malloc(in.size + 1);
		memcpy(copy, in.bytes, in.size);
		memset(copy + in_a, 0, in_b - in_a);
	} else if (!strcmp(kind, "flip")) {
		if (in.size == 0) {
			in_a = in_b = 0;
		} else {
			if (offset >= in.size)
				offset = in.size - 1;
			in_a = offset;
			in_b = offset + 1;
		}
		keep_to = resume = in.size;
		copy = malloc(in.size + 1);
		memcpy(copy, in.bytes, in.size);
		if (in.size)
			copy[offset] ^= (unsigned char)(1u << below(8));
	} else if (!strcmp(kind, "replay")) {
		static uint64_t starts[1 << 20];
		size_t blocks = good_blocks(&in, starts, sizeof(starts) / sizeof(starts[0]));
		uint64_t from;
		if (blocks && below(2)) {
			/* a whole good block */
			from = starts[below(blocks)];
			struct rt_block_header h;
			rt_block_check(in.bytes + from, in.size - from, &h);
			length = h.size;
		} else {
			from = below(in.size + 1);
			if (from + length > in.size)
				length = in.size - from;
		}
		/* where it goes: a block boundary half the time, unless told */
		if (!have_offset && blocks && below(2)) {
			uint64_t i = below(blocks + 1);
			offset = i < blocks ? starts[i] : in.size;
		}
		ins = malloc(length ? length : 1);
		memcpy(ins, in.bytes + from, length);
		ins_length = length;
		keep_to = resume = in_a = in_b = offset;
		if (below(2)) {
			resume = offset + length > in.size ? in.size : offset + length;
			in_b = resume;
		}
		fprintf(stdout, "# replay of bytes %" PRIu64 "..%" PRIu64 "\n", from,
			from + length);
	} else {
		usage();
	}

	FILE *out = fopen(argv[2], "wb");
	const unsigned char *base = copy ? copy : in.bytes;
	int bad = !out;
	if (out) {
		bad |= fwrite(base, 1, keep_to, out) != keep_to;
		bad |= ins_length && fwrite(ins, 1, ins_length, out) != ins_length;
		bad |= fwrite(base + resume, 1, in.size - resume, out) != in.size - resume;
		bad |= fclose(out) != 0;
	}
	if (bad) {
		fprintf(stderr, "corrupt: %s: cannot write\n", argv[2]);
		return 1;
	}
	uint64_t out_a = copy ? in_a : keep_to;
	uint64_t out_b = copy ? in_b : keep_to + ins_length;
	printf("%s in %" PRIu64 " %" PRIu64 " out %" PRIu64 " %" PRIu64 "\n", kind, in_a, in_b,
	       out_a, out_b);
	free(ins);
	free(copy);
	free(in.bytes);
	return 0;
}
