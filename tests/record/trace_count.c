/*
 * trace_count.c - an independent count of what trace files hold, for the
 * tests in tests/record: a second reader of the format, so that the tests
 * do not only trust the reader they test.
 *
 *   trace_count FILE...
 *
 * Walks every block (each must check: rt_block_check), and prints
 *   source S pid PID parent PPID          for each source (newest SOURCE block)
 *   events S TAG N                        trace records of source S with tag TAG
 *   lost S REASON N                       dropped (LOST records and LOSS blocks),
 *                                         overwritten, torn
 *   gaps N                                record seqs neither present nor covered
 *   files N ended N                       files read, files with an END block
 * Repeated records (flight snapshots) are counted once.  Exit status 1 when
 * a block does not check.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/packed_slots.h"
#include "format/trace_block.h"

#define MAX_SOURCES 64
#define MAX_RINGS 4096
#define MAX_SITES 8192
#define MAX_TAG 64

struct ring_state {
	uint64_t next; /* record seq after the newest seen */
	int seen;
	uint64_t base; /* the RINGS position of the first file */
	int has_base;
};

struct source {
	int used;
	int32_t pid, parent;
	char tags[MAX_SITES][MAX_TAG];
	uint64_t events[MAX_SITES];
	uint64_t dropped, overwritten, torn;
	struct ring_state rings[MAX_RINGS];
};

static struct source sources[MAX_SOURCES];
static uint64_t gaps;

static struct source *source_of(uint32_t s)
{
	return s < MAX_SOURCES ? &sources[s] : NULL;
}

static void read_sites(struct source *src, const uint8_t *p, const uint8_t *end, uint32_t count)
{
	for (uint32_t i = 0; i < count && p + sizeof(struct rt_block_site) <= end; i++) {
		struct rt_block_site site;
		memcpy(&site, p, sizeof(site));
		if (site.size < sizeof(site) || p + site.size > end)
			return;
		const char *strings = (const char *)p + sizeof(site);
		size_t room = site.size - sizeof(site);
		if (site.index < MAX_SITES && site.entry.tag_offset + site.entry.tag_length < room)
			snprintf(src->tags[site.index], MAX_TAG, "%.*s", (int)site.entry.tag_length,
				 strings + site.entry.tag_offset);
		p += site.size;
	}
}

static void read_slots(struct source *src, const struct rt_block_header *h, const uint8_t *p)
{
	if (h->ring >= MAX_RINGS)
		return;
	struct ring_state *r = &src->rings[h->ring];
	uint64_t record = h->first_record;
	if (r->seen && record > r->next)
		gaps += record - r->next;
	uint32_t slot = 0;
	for (uint32_t i = 0; i < h->count; i++, record++) {
		union rt_slot s;
		memcpy(&s, p + (size_t)slot * RT_SLOT_SIZE, sizeof(s));
		uint32_t n = s.head.nslots ? s.head.nslots : 1;
		if (!r->seen || record >= r->next) {
			if (s.head.kind == RT_REC_TRACE && s.head.site < MAX_SITES) {
				src->events[s.head.site]++;
			} else if (s.head.kind == RT_REC_LOST && n == 2) {
				union rt_slot c;
				memcpy(&c, p + (size_t)(slot + 1) * RT_SLOT_SIZE, sizeof(c));
				src->dropped += c.cont.a4;
			}
		}
		slot += n;
	}
	if (!r->seen || record > r->next)
		r->next = record;
	r->seen = 1;
}

static void read_loss(struct source *src, const uint8_t *p, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++) {
		struct rt_block_loss l;
		memcpy(&l, p + (size_t)i * sizeof(l), sizeof(l));
		if (l.reason == 1)
			src->overwritten += l.count;
		else if (l.reason == 2)
			src->dropped += l.count;
		else if (l.reason == 3)
			src->torn += l.count;
		/* losses with a position cover records: no gap there */
		if (l.reason != 2 && l.ring < MAX_RINGS) {
			struct ring_state *r = &src->rings[l.ring];
			uint64_t end = l.first_record + l.count;
			if (r->seen && l.first_record > r->next)
				gaps += l.first_record - r->next;
			if (!r->seen || end > r->next)
				r->next = end;
			r->seen = 1;
		}
	}
}

static int read_file(const char *path, int *ended)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(size > 0 ? (size_t)size : 1);
	if (!buf || fread(buf, 1, (size_t)size, f) != (size_t)size) {
		fprintf(stderr, "%s: cannot read\n", path);
		fclose(f);
		free(buf);
		return 1;
	}
	fclose(f);
	int bad = 0;
	uint64_t off = 0;
	while (off < (uint64_t)size) {
		struct rt_block_header h;
		enum rt_block_verdict v = rt_block_check(buf + off, (uint64_t)size - off, &h);
		if (v != RT_BLOCK_OK) {
			fprintf(stderr, "%s: byte %llu: %s\n", path, (unsigned long long)off,
				rt_block_verdict_text(v));
			bad = 1;
			break;
		}
		const uint32_t on_disk = h.size;
		const uint8_t *block = buf + off;
		uint8_t expanded[RT_BLOCK_MAX_BYTES];
		if (h.type == RT_BLOCK_PACKED) {
			/* the SLOTS block it stands for */
			if (rt_packed_to_slots(block, &h, expanded, &h) != 0) {
				fprintf(stderr, "%s: byte %llu: does not expand\n", path,
					(unsigned long long)off);
				bad = 1;
				break;
			}
			block = expanded;
		}
		const uint8_t *p = block + RT_BLOCK_HEADER_SIZE;
		const uint8_t *end = block + h.size;
		struct source *src = source_of(h.source);
		if (src && h.type == RT_BLOCK_SOURCE) {
			struct rt_block_source s;
			memcpy(&s, p, sizeof(s));
			struct rt_arena_header ah;
			memset(&ah, 0, sizeof(ah));
			memcpy(&ah, s.header, RT_SOURCE_HEADER_BYTES);
			src->used = 1;
			src->pid = ah.pid;
			src->parent = s.parent_pid;
		} else if (src && h.type == RT_BLOCK_SITES) {
			read_sites(src, p, end, h.count);
		} else if (src && h.type == RT_BLOCK_SLOTS) {
			read_slots(src, &h, p);
		} else if (src && h.type == RT_BLOCK_LOSS) {
			read_loss(src, p, h.count);
		} else if (h.type == RT_BLOCK_END) {
			(*ended)++;
		}
		off += on_disk;
	}
	free(buf);
	return bad;
}

int main(int argc, char **argv)
{
	int bad = 0, ended = 0;
	for (int i = 1; i < argc; i++)
		bad |= read_file(argv[i], &ended);
	for (int s = 0; s < MAX_SOURCES; s++) {
		struct source *src = &sources[s];
		if (!src->used)
			continue;
		printf("source %d pid %d parent %d\n", s, (int)src->pid, (int)src->parent);
		for (int i = 0; i < MAX_SITES; i++)
			if (src->events[i])
				printf("events %d %s %llu\n", s,
				       src->tags[i][0] ? src->tags[i] : "?",
				       (unsigned long long)src->events[i]);
		printf("lost %d dropped %llu\n", s, (unsigned long long)src->dropped);
		printf("lost %d overwritten %llu\n", s, (unsigned long long)src->overwritten);
		printf("lost %d torn %llu\n", s, (unsigned long long)src->torn);
	}
	printf("gaps %llu\n", (unsigned long long)gaps);
	printf("files %d ended %d\n", argc - 1, ended);
	return bad;
}
