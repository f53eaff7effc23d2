/*
 * arena_file.c - see arena_file.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena_file.h"

int arena_file_open(struct arena_file *a, const char *path, int writable, char *why,
		    size_t why_size)
{
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	int fd = open(path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_size, "cannot open %s: %s", path, strerror(errno));
		return errno == ENOENT ? -2 : -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < sizeof(struct rt_arena_header)) {
		snprintf(why, why_size, "%s: no header yet", path);
		close(fd);
		return -2;
	}
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	void *base = mmap(NULL, (size_t)st.st_size, prot, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		snprintf(why, why_size, "cannot map %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	struct rt_arena_header *h = base;
	/* acquire: a header published RUNNING is complete */
	uint32_t state = __atomic_load_n(&h->state, __ATOMIC_ACQUIRE);
	if (state == RT_ARENA_CREATING) {
		snprintf(why, why_size, "%s: still being created", path);
		munmap(base, (size_t)st.st_size);
		close(fd);
		return -2;
	}
	if (memcmp(h->magic, RT_ARENA_MAGIC, sizeof(h->magic)) != 0 ||
	    h->arena_size != (uint64_t)st.st_size || h->slot_size != RT_SLOT_SIZE ||
	    h->ring_bytes < RT_RING_MIN_BYTES || (h->ring_bytes & (h->ring_bytes - 1)) ||
	    h->ring_area_offset + (uint64_t)h->ring_count * h->ring_bytes > h->arena_size ||
	    h->ring_desc_offset + (uint64_t)h->ring_count * sizeof(struct rt_ring_desc) >
		h->ring_area_offset ||
	    h->thread_table_offset + (uint64_t)h->thread_capacity * sizeof(struct rt_thread_entry) >
		h->arena_size) {
		snprintf(why, why_size, "%s: not an arena this test understands", path);
		munmap(base, (size_t)st.st_size);
		close(fd);
		return -1;
	}
	a->fd = fd;
	a->base = base;
	a->size = (size_t)st.st_size;
	a->header = h;
	return 0;
}

void arena_file_close(struct arena_file *a)
{
	if (a->base)
		munmap(a->base, a->size);
	if (a->fd >= 0)
		close(a->fd);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
}

uint64_t arena_ring_slots(const struct arena_file *a)
{
	return a->header->ring_bytes / RT_SLOT_SIZE;
}

uint32_t arena_threads_used(const struct arena_file *a)
{
	uint32_t used = __atomic_load_n(&a->header->threads_used, __ATOMIC_ACQUIRE);
	return used < a->header->thread_capacity ? used : a->header->thread_capacity;
}

struct rt_thread_entry *arena_thread(const struct arena_file *a, uint32_t index)
{
	return (struct rt_thread_entry *)(a->base + a->header->thread_table_offset) + index;
}

struct rt_ring_desc *arena_ring(const struct arena_file *a, uint32_t ring)
{
	return (struct rt_ring_desc *)(a->base + a->header->ring_desc_offset) + ring;
}

union rt_slot *arena_slots(const struct arena_file *a, uint32_t ring)
{
	return (union rt_slot *)(a->base + a->header->ring_area_offset +
				 (uint64_t)ring * a->header->ring_bytes);
}

void arena_ring_words(const struct arena_file *a, uint32_t ring, struct ring_words *out)
{
	struct rt_ring_desc *d = arena_ring(a, ring);
	out->head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
	out->reserve = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
	out->records = __atomic_load_n(&d->records, __ATOMIC_RELAXED);
	out->dropped = __atomic_load_n(&d->dropped, __ATOMIC_RELAXED);
}

int arena_newest_record(const struct arena_file *a, uint32_t ring, struct ring_record *out)
{
	struct ring_words w;
	arena_ring_words(a, ring, &w);
	const uint64_t mask = arena_ring_slots(a) - 1;
	const union rt_slot *slots = arena_slots(a, ring);
	memset(out, 0, sizeof(*out));
	if (w.head == 0)
		return -1;
	uint64_t at = w.head - 1;
	if (slots[at & mask].cont.kind == RT_REC_CONT) {
		if (at == 0)
			return -1;
		memcpy(&out->cont, &slots[at & mask].cont, sizeof(out->cont));
		if (out->cont.seq != (uint32_t)at || out->cont.index != 1)
			return -1;
		at--;
	}
	memcpy(&out->head, &slots[at & mask].head, sizeof(out->head));
	out->position = at;
	out->nslots = (unsigned)(w.head - at);
	if (out->head.seq != (uint32_t)at || out->head.nslots != out->nslots ||
	    (out->head.kind != RT_REC_TRACE && out->head.kind != RT_REC_LOST))
		return -1;
	return 0;
}
