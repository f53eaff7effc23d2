/*
 * sites.c - load the site table and check every entry against the string
 * area before any of its strings is used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/sites.h"
#include "format/arena_layout.h"

/* Point *out at a string of the string area if it is in bounds and NUL-terminated. */
static int take_string(const struct rt_arena_header *h, const unsigned char *file, uint32_t offset,
		       uint32_t length, const char **out)
{
	/* 64-bit sums of 32-bit values cannot overflow */
	uint64_t end = (uint64_t)offset + length + 1;
	if (length > RT_SITE_STRING_MAX || end > rt_layout_string_bytes(h))
		return -1;
	const char *s = (const char *)file + h->string_area_offset + offset;
	if (s[length] != 0)
		return -1;
	*out = s;
	return 0;
}

static void load_site(struct rt_site *site, const struct rt_arena_header *h,
		      const unsigned char *file, uint32_t index)
{
	const struct rt_site_entry *live =
	    (const struct rt_site_entry *)(file + rt_layout_site_offset(h, index));
	memset(site, 0, sizeof(*site));
	if (!__atomic_load_n(&live->valid, __ATOMIC_ACQUIRE))
		return;
	/* valid was written last: the entry is complete now */
	struct rt_site_entry e;
	memcpy(&e, live, sizeof(e));
	if (e.kind != RT_SITE_TRACE || e.nargs > RT_MAX_ARGS)
		return;
	if (take_string(h, file, e.tag_offset, e.tag_length, &site->tag) ||
	    take_string(h, file, e.file_offset, e.file_length, &site->file) ||
	    take_string(h, file, e.func_offset, e.func_length, &site->func))
		return;
	site->tag_length = e.tag_length;
	site->file_length = e.file_length;
	site->func_length = e.func_length;
	site->file_base = site->file;
	for (uint32_t i = 0; i < e.file_length; i++)
		if (site->file[i] == '/' && i + 1 < e.file_length)
			site->file_base = site->file + i + 1;
	site->file_base_length = e.file_length - (uint32_t)(site->file_base - site->file);
	site->line = e.line;
	site->nargs = e.nargs;
	memcpy(site->arg_types, e.arg_types, sizeof(site->arg_types));
	for (unsigned i = 0; i < e.nargs; i++)
		if (RT_ARG_CLASS(e.arg_types[i]) == RT_ARG_SIGNED)
			site->signed_args |= (uint8_t)(1u << i);
	site->valid = 1;
}

int rt_site_table_load(struct rt_site_table *table, const struct rt_arena_header *header,
		       const unsigned char *file, uint32_t count)
{
	memset(table, 0, sizeof(*table));
	if (count > header->site_capacity)
		count = header->site_capacity;
	if (count == 0)
		return 0;
	table->sites = calloc(count, sizeof(*table->sites));
	if (!table->sites)
		return -ENOMEM;
	table->count = count;
	for (uint32_t i = 0; i < count; i++) {
		load_site(&table->sites[i], header, file, i);
		table->valid_count += (uint32_t)table->sites[i].valid;
	}
	return 0;
}

void rt_site_table_free(struct rt_site_table *table)
{
	free(table->sites);
	memset(table, 0, sizeof(*table));
}
