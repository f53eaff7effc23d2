/*
 * fd_seeds.c - the descriptor table's entries, copied out under their
 * sequence counts and checked.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/fd_seeds.h"
#include "format/arena_layout.h"

int rt_fd_seed_fields_ok(uint32_t state, uint8_t op, uint32_t name_length)
{
	return (state == RT_FD_OPEN || state == RT_FD_CLOSED) && op >= RT_IO_RUNDOWN &&
	       op <= RT_IO_OP_MAX && name_length < RT_FD_NAME_MAX;
}

int rt_fd_seed_name_ok(const char *name, uint32_t name_length)
{
	return memchr(name, 0, name_length) == NULL;
}

int rt_fd_seeds_add(struct rt_fd_seeds *list, const struct rt_fd_seed *seed, const char *name)
{
	if (list->count == list->capacity) {
		uint32_t capacity = list->capacity ? list->capacity * 2 : 16;
		struct rt_fd_seed *more = realloc(list->items, capacity * sizeof(*more));
		if (!more)
			return -ENOMEM;
		list->items = more;
		list->capacity = capacity;
	}
	char *copy = malloc((size_t)seed->name_length + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, name, seed->name_length);
	copy[seed->name_length] = 0;
	struct rt_fd_seed *out = &list->items[list->count++];
	*out = *seed;
	out->name = copy;
	return 0;
}

/* Entry fd copied whole into *e: 1, or 0 when it is being written (or never was). */
static int copy_entry(const struct rt_fd_entry *live, struct rt_fd_entry *e)
{
	uint32_t before = __atomic_load_n(&live->sequence, __ATOMIC_ACQUIRE);
	if (before == 0 || before % 2)
		return 0;
	memcpy(e, live, sizeof(*e));
	/* the copy is taken before the count is looked at again */
	RT_FENCE_ACQUIRE();
	return __atomic_load_n(&live->sequence, __ATOMIC_RELAXED) == before;
}

int rt_fd_seeds_read_table(struct rt_fd_seeds *list, const unsigned char *file,
			   const struct rt_arena_header *h, struct rt_file_data *data)
{
	struct rt_file_data everywhere;
	rt_file_data_init(&everywhere, -1);
	if (!data)
		data = &everywhere;
	rt_fd_seeds_clear(list);
	const uint64_t each = sizeof(struct rt_fd_entry);
	/* an entry in a hole is zeros, never used: only entries with data are read */
	for (uint32_t fd = (uint32_t)rt_file_data_next_entry(data, h->fd_table_offset, each, 0,
							     h->fd_capacity);
	     fd < h->fd_capacity; fd = (uint32_t)rt_file_data_next_entry(
				      data, h->fd_table_offset, each, fd + 1ull, h->fd_capacity)) {
		struct rt_fd_entry copy;
		const struct rt_fd_entry *live =
		    rt_file_data_at(data, file, rt_layout_fd_offset(h, fd), sizeof(copy), &copy);
		uint32_t sequence = __atomic_load_n(&live->sequence, __ATOMIC_RELAXED);
		struct rt_fd_entry e;
		if (sequence == 0)
			continue;
		if (!copy_entry(live, &e)) {
			list->skipped++;
			continue;
		}
		if (e.state == RT_FD_UNUSED)
			continue;
		/* the length is the writer's word only: never past the name field */
		if (!rt_fd_seed_fields_ok(e.state, e.op, e.name_length) ||
		    !rt_fd_seed_name_ok(e.name, e.name_length)) {
			list->skipped++;
			continue;
		}
		const struct rt_fd_seed seed = {
		    .fd = (int32_t)fd,
		    .state = e.state,
		    .counter = e.counter,
		    .closed_counter = e.state == RT_FD_CLOSED ? e.closed_counter : 0,
		    .open_flags = e.open_flags,
		    .op = e.op,
		    .flags = e.flags,
		    .name_length = e.name_length,
		};
		if (rt_fd_seeds_add(list, &seed, e.name))
			return -ENOMEM;
	}
	return 0;
}

void rt_fd_seeds_clear(struct rt_fd_seeds *list)
{
	for (uint32_t i = 0; i < list->count; i++)
		free(list->items[i].name);
	list->count = 0;
	list->skipped = 0;
}

void rt_fd_seeds_free(struct rt_fd_seeds *list)
{
	rt_fd_seeds_clear(list);
	free(list->items);
	memset(list, 0, sizeof(*list));
}
