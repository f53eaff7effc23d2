/*
 * modules.c - checking module-table entries, keeping the list a reader
 * gives, and finding the module behind an address at a time.
 *
 * The format has no checksum, so an entry is believed only when everything
 * the writer guarantees holds: valid is 1, no unknown flag, reserved bytes
 * and the build-id's unused bytes zero, a non-empty range that starts at or
 * above the load bias, a load time, an unload time (if any) after it, and
 * a path of a plausible length.  Flipped bits in a field nothing checks
 * (the range, the times, within those bounds) cannot be told from good
 * values; everything else is refused rather than shown.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/arena_reader.h"
#include "read/entry_checks.h"
#include "read/modules.h"

/* Above every user-space address (57-bit virtual addresses at most). */
#define USER_SPACE_END (1ull << 57)
/* No object maps a terabyte. */
#define MODULE_SPAN_MAX (1ull << 40)
#define KNOWN_FLAGS (RT_MODULE_F_AT_START | RT_MODULE_F_MAIN | RT_MODULE_F_PATH_CUT)

int rt_module_entry_ok(const struct rt_module_entry *e, char *why, size_t why_size)
{
	if (e->valid != 1)
		snprintf(why, why_size, "valid is %u", e->valid);
	else if (e->flags & ~KNOWN_FLAGS)
		snprintf(why, why_size, "unknown flags 0x%x", e->flags);
	else if (e->reserved0 || !rt_bytes_zero(e->reserved, sizeof(e->reserved)))
		snprintf(why, why_size, "reserved bytes are not zero");
	else if (e->build_id_size > RT_BUILD_ID_MAX ||
		 !rt_bytes_zero(e->build_id + e->build_id_size, RT_BUILD_ID_MAX - e->build_id_size))
		snprintf(why, why_size, "build-id size %u does not fit its bytes",
			 e->build_id_size);
	else if (e->low >= e->high || e->low < e->base || e->high > USER_SPACE_END ||
		 e->high - e->low > MODULE_SPAN_MAX)
		snprintf(why, why_size,
			 "address range 0x%llx..0x%llx does not fit load bias 0x%llx",
			 (unsigned long long)e->low, (unsigned long long)e->high,
			 (unsigned long long)e->base);
	else if (!e->load_counter || (e->unload_counter && e->unload_counter < e->load_counter))
		snprintf(why, why_size, "unloaded (%llu) before it was loaded (%llu)",
			 (unsigned long long)e->unload_counter,
			 (unsigned long long)e->load_counter);
	else if (e->path_length == 0 || e->path_length > RT_MODULE_PATH_MAX)
		snprintf(why, why_size, "path length %u", e->path_length);
	else
		return 1;
	return 0;
}

int rt_module_path_ok(const char *p, uint32_t length)
{
	return p[length] == 0 && !memchr(p, 0, length);
}

int rt_reader_modules_add(struct rt_reader_modules *list, uint32_t index,
			  const struct rt_module_entry *e, const char *path)
{
	if (list->count == list->capacity) {
		uint32_t capacity = list->capacity ? list->capacity * 2 : 16;
		void *more = realloc(list->items, capacity * sizeof(*list->items));
		if (!more)
			return -ENOMEM;
		list->items = more;
		list->capacity = capacity;
	}
	struct rt_reader_module *m = &list->items[list->count];
	memset(m, 0, sizeof(*m));
	m->path = strndup(path, e->path_length);
	if (!m->path)
		return -ENOMEM;
	m->index = index;
	m->flags = e->flags;
	m->base = e->base;
	m->low = e->low;
	m->high = e->high;
	m->load_counter = e->load_counter;
	m->unload_counter = e->unload_counter;
	m->build_id_size = e->build_id_size;
	memcpy(m->build_id, e->build_id, sizeof(m->build_id));
	list->count++;
	return 0;
}

void rt_reader_modules_free(struct rt_reader_modules *list)
{
	for (uint32_t i = 0; i < list->count; i++)
		free(list->items[i].path);
	free(list->items);
	memset(list, 0, sizeof(*list));
}

void rt_reader_module_entry(const struct rt_reader_module *m, struct rt_module_entry *e)
{
	memset(e, 0, sizeof(*e));
	e->valid = 1;
	e->flags = m->flags;
	e->base = m->base;
	e->low = m->low;
	e->high = m->high;
	e->load_counter = m->load_counter;
	e->unload_counter = m->unload_counter;
	e->path_length = (uint32_t)strlen(m->path);
	e->build_id_size = m->build_id_size;
	memcpy(e->build_id, m->build_id, sizeof(e->build_id));
}

const struct rt_reader_module *rt_reader_module_at(const struct rt_reader *rd, uint64_t address,
						   uint64_t counter)
{
	const struct rt_reader_module *best = NULL;
	for (uint32_t i = 0; i < rd->modules.count; i++) {
		const struct rt_reader_module *m = &rd->modules.items[i];
		/*
		 * loaded at start: loaded before too (a call entered before the arena
		 * existed, whose enter was held for `record -t`, names it)
		 */
		const int before = m->load_counter > counter && !(m->flags & RT_MODULE_F_AT_START);
		if (address < m->low || address >= m->high || before ||
		    (m->unload_counter && m->unload_counter <= counter))
			continue;
		if (!best || m->load_counter >= best->load_counter)
			best = m;
	}
	return best;
}
