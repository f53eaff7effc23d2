/*
 * seed_io_arena.c - a seed of fuzz_arena for file I/O: a small arena laid
 * out as the library lays one out (docs/FORMAT.md, "Layout"), with the I/O
 * site, a descriptor table (whole, closed, half-written and overlong
 * entries) and RT_REC_IO records of every shape in two rings, one of them
 * wrapped.  Made by hand until the library's own I/O arenas can be cut
 * down by seed_edit.
 *
 *   seed_io_arena OUT
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/io_payload.h"
#include "format/records.h"
#include "ringtrace/format.h"

#define RINGS 2u
#define RING_BYTES 4096u
#define THREADS 2u
#define SITES 4u
#define STRINGS 256u
#define FDS 8u
#define START 1000000000ull

static unsigned char *arena;
static struct rt_arena_header *h;

static uint64_t align(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint32_t string(const char *s)
{
	uint32_t at = (uint32_t)h->strings_used;
	memcpy(arena + h->string_area_offset + at, s, strlen(s) + 1);
	h->strings_used += strlen(s) + 1;
	return at;
}

static void fd_entry(uint32_t fd, uint32_t sequence, uint32_t state, uint64_t counter,
		     const char *name)
{
	struct rt_fd_entry *e = (struct rt_fd_entry *)(arena + h->fd_table_offset) + fd;
	e->sequence = sequence;
	e->state = state;
	e->counter = counter;
	e->closed_counter = state == RT_FD_CLOSED ? counter + 100 : 0;
	e->open_flags = O_RDONLY;
	e->op = RT_IO_OPEN;
	e->name_length = (uint16_t)strlen(name);
	memcpy(e->name, name, e->name_length);
}

/* One I/O record into ring at its head, its payload over its slots. */
static void io_record(uint32_t ring, uint64_t counter, const struct tio *call)
{
	unsigned char p[RT_LOG_PAYLOAD_MAX];
	memset(p, 0, sizeof(p));
	size_t n = tio_payload(call, p);
	unsigned nslots = RT_LOG_SLOTS(n);
	struct rt_ring_desc *d = (struct rt_ring_desc *)(arena + h->ring_desc_offset) + ring;
	union rt_slot *slots = (union rt_slot *)(arena + h->ring_area_offset + ring * RING_BYTES);
	const uint64_t mask = RING_BYTES / RT_SLOT_SIZE - 1;
	union rt_slot *head = &slots[d->head & mask];
	memset(head, 0, sizeof(*head));
	head->head.seq = (uint32_t)d->head;
	head->head.kind = RT_REC_IO;
	head->head.nslots = (uint8_t)nslots;
	head->head.cpu = 1;
	head->head.record = (uint32_t)d->records;
	head->head.site = 1;
	head->head.counter = counter;
	memcpy(head->bytes + 24, p, 8);
	for (unsigned k = 1; k < nslots; k++) {
		union rt_slot *c = &slots[(d->head + k) & mask];
		memset(c, 0, sizeof(*c));
		c->cont.seq = (uint32_t)(d->head + k);
		c->cont.kind = RT_REC_CONT;
		c->cont.index = (uint8_t)k;
		memcpy(c->bytes + 8, p + 8 + 24 * (k - 1), 24);
	}
	d->head += nslots;
	d->reserve = d->head;
	d->records++;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	uint64_t at = RT_ARENA_HEADER_SIZE, threads = at;
	at = align(at + THREADS * sizeof(struct rt_thread_entry), 64);
	uint64_t sites = at;
	at = align(at + SITES * sizeof(struct rt_site_entry), 64);
	uint64_t strings = at;
	at = align(at + STRINGS, 64);
	uint64_t fds = at;
	at = align(at + FDS * sizeof(struct rt_fd_entry), 64);
	uint64_t descs = at;
	at = align(at + RINGS * sizeof(struct rt_ring_desc), 4096);
	uint64_t rings = at, size = at + RINGS * RING_BYTES;
	arena = calloc(1, size);
	if (!arena)
		return 1;
	h = (struct rt_arena_header *)arena;
	memcpy(h->magic, RT_ARENA_MAGIC, sizeof(h->magic));
	h->header_size = RT_ARENA_HEADER_SIZE;
	h->version = h->compat_version = RT_FORMAT_VERSION;
	h->byte_order = RT_BYTE_ORDER_MARK;
	h->state = RT_ARENA_CLOSED;
	h->arena_size = size;
	h->ring_bytes_requested = h->ring_bytes = RING_BYTES;
	h->slot_size = RT_SLOT_SIZE;
	h->mode = RT_MODE_FLIGHT;
	h->ring_count = RINGS;
	h->thread_capacity = THREADS;
	h->site_capacity = SITES;
	h->string_capacity = STRINGS;
	h->thread_table_offset = threads;
	h->site_table_offset = sites;
	h->string_area_offset = strings;
	h->fd_capacity = FDS;
	h->fd_table_offset = fds;
	h->ring_desc_offset = descs;
	h->ring_area_offset = rings;
	h->pid = 4000000; /* above pid_max: a writer that is gone */
	h->process_start = 1;
	snprintf(h->program, sizeof(h->program), "/usr/bin/io-seed");
	h->clock_source = RT_CLOCK_TSC;
	h->counter_hz = 1000000000;
	h->start.counter = START;
	h->sync.pair = h->start;
	h->end_reason = RT_END_EXIT;

	struct rt_site_entry *site = (struct rt_site_entry *)(arena + sites) + 1;
	site->tag_offset = string("io");
	site->tag_length = 2;
	site->file_offset = string("");
	site->func_offset = string("");
	site->kind = RT_SITE_IO;
	site->valid = 1;
	h->sites_used = 2;

	for (uint32_t i = 0; i < THREADS; i++) {
		struct rt_thread_entry *t = (struct rt_thread_entry *)(arena + threads) + i;
		struct rt_ring_desc *d = (struct rt_ring_desc *)(arena + descs) + i;
		t->state = RT_THREAD_EXITED;
		t->tid = 4000000 + (int32_t)i;
		t->ring = i;
		t->end_record = UINT64_MAX;
		t->start_counter = START + 1;
		snprintf(t->name, sizeof(t->name), i ? "worker" : "main");
		d->state = RT_RING_RELEASED;
		d->owner = i;
	}
	h->threads_used = h->rings_used = THREADS;

	fd_entry(0, 2, RT_FD_OPEN, 0, "/dev/pts/0");
	fd_entry(3, 4, RT_FD_OPEN, START + 10, "/etc/hosts");
	fd_entry(4, 7, RT_FD_OPEN, START + 20, "/half/written");
	fd_entry(5, 2, RT_FD_CLOSED, START + 30, "/was/here");
	fd_entry(6, 2, RT_FD_OPEN, START + 40, "pipe:[77]");
	((struct rt_fd_entry *)(arena + fds) + 6)->name_length = RT_FD_NAME_MAX;

	char long_path[600];
	memset(long_path, 'p', sizeof(long_path) - 1);
	long_path[0] = '/';
	long_path[sizeof(long_path) - 1] = 0;
	uint64_t t = START + 100;
	for (int round = 0; round < 12; round++) {
		const struct tio calls[] = {
		    {.op = RT_IO_OPEN,
		     .flags = RT_IO_F_AUX,
		     .fd = 3,
		     .result = 3,
		     .path = "/etc/hosts"},
		    {.op = RT_IO_READ, .fd = 3, .size = 4096, .result = 516},
		    {.op = RT_IO_WRITEV, .fd = 6, .size = 10, .result = -32},
		    {.op = RT_IO_DUP, .fd = 3, .result = 7},
		    {.op = RT_IO_SENDFILE,
		     .flags = RT_IO_F_AUX,
		     .fd = 7,
		     .aux = {6, 0},
		     .result = 9},
		    {.op = RT_IO_CLOSE, .fd = 3},
		    {.op = RT_IO_RENAME, .fd = -1, .path = "/tmp/a", .path2 = long_path},
		};
		for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
			struct tio c = calls[i];
			c.start = t;
			io_record((uint32_t)(i & 1), t + 3, &c);
			t += 10;
		}
	}
	for (uint32_t i = 0; i < THREADS; i++) {
		struct rt_thread_entry *e = (struct rt_thread_entry *)(arena + threads) + i;
		e->exit_counter = t;
		e->end_record = ((struct rt_ring_desc *)(arena + descs) + i)->records;
		((struct rt_ring_desc *)(arena + descs) + i)->released_counter = t;
	}
	h->end_counter = t;

	FILE *f = fopen(argv[1], "wb");
	if (!f || fwrite(arena, 1, size, f) != size || fclose(f) != 0) {
		perror(argv[1]);
		return 1;
	}
	free(arena);
	return 0;
}
