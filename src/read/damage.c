/*
 * damage.c - the list of damaged regions of an arena.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/damage.h"

/* Past the bound: grow the last region of the same part to cover [offset, offset + length). */
static long merge(struct rt_damage_list *list, uint32_t part, uint64_t offset, uint64_t length)
{
	for (size_t i = list->count; i > 0; i--) {
		struct rt_damage *d = &list->items[i - 1];
		if (d->part != part)
			continue;
		uint64_t end = d->offset + d->length;
		uint64_t new_end = offset + length;
		if (offset < d->offset)
			d->offset = offset;
		if (new_end > end)
			end = new_end;
		d->length = end - d->offset;
		list->merged++;
		if (!strstr(d->what, " (and more)")) {
			size_t n = strlen(d->what);
			snprintf(d->what + n, sizeof(d->what) - n, " (and more)");
		}
		return (long)(i - 1);
	}
	return -1;
}

long rt_damage_add(struct rt_damage_list *list, uint32_t part, uint32_t flags, uint32_t index,
		   uint64_t offset, uint64_t length, const char *what, ...)
{
	if (list->count >= RT_DAMAGE_MAX) {
		long merged = merge(list, part, offset, length);
		if (merged >= 0)
			return merged;
		if (list->count >= RT_DAMAGE_MAX + 64)
			return merge(list, list->items[list->count - 1].part, offset, length);
	}
	if (list->count == list->capacity) {
		size_t capacity = list->capacity ? list->capacity * 2 : 16;
		struct rt_damage *bigger = realloc(list->items, capacity * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		list->items = bigger;
		list->capacity = capacity;
	}
	struct rt_damage *d = &list->items[list->count];
	memset(d, 0, sizeof(*d));
	d->offset = offset;
	d->length = length;
	d->part = part;
	d->flags = flags;
	d->index = index;
	va_list ap;
	va_start(ap, what);
	vsnprintf(d->what, sizeof(d->what), what, ap);
	va_end(ap);
	return (long)list->count++;
}

void rt_damage_free(struct rt_damage_list *list)
{
	free(list->items);
	memset(list, 0, sizeof(*list));
}

const char *rt_damage_part_name(uint32_t part)
{
	switch (part) {
	case RT_DAMAGE_HEADER:
		return "header";
	case RT_DAMAGE_THREAD:
		return "thread entry";
	case RT_DAMAGE_SITE:
		return "site entry";
	case RT_DAMAGE_STRING:
		return "string";
	case RT_DAMAGE_RING_DESC:
		return "ring descriptor";
	case RT_DAMAGE_SLOTS:
		return "slots";
	case RT_DAMAGE_ORPHANS:
		return "unclaimed records";
	case RT_DAMAGE_MODULE:
		return "module entry";
	default:
		return "missing";
	}
}

int rt_damage_events(const struct rt_damage *d, uint64_t item_count, uint64_t *events)
{
	*events = item_count ? item_count : d->events;
	return item_count || d->events || d->events_counted;
}

int rt_damage_gap(const struct rt_damage *d, uint64_t *counter_from, uint64_t *counter_to)
{
	if (!d->timed || !d->timed_after || d->counter_after < d->counter)
		return 0;
	*counter_from = d->counter;
	*counter_to = d->counter_after;
	return 1;
}
