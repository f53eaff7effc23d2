/*
 * sites.c - load the site table and check every entry against the string
 * area before any of its strings is used.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "decode/sites.h"
#include "format/arena_layout.h"

/*
 * Point *out at a string of the string area if it is in bounds, ends in a
 * NUL at its length and has none before (the writer measured it with
 * strnlen: a NUL inside is damage).
 */
static int take_string(const struct rt_arena_header *h, const unsigned char *file,
		       struct rt_file_data *data, uint32_t offset, uint32_t length,
		       uint64_t string_bytes, const char **out)
{
	/* 64-bit sums of 32-bit values cannot overflow */
	uint64_t end = (uint64_t)offset + length + 1;
	if (length > RT_SITE_STRING_MAX || end > string_bytes)
		return -1;
	const uint64_t at = h->string_area_offset + offset;
	const char *s = (const char *)file + at;
	/*
	 * A byte in a hole is damage, its NUL's included: the writer writes a
	 * string and its NUL together, and a reader that runs to the NUL must
	 * never fault in a page of the file that holds no data.
	 */
	if (!rt_file_data_whole(data, at, at + length + 1) || s[length] != 0 ||
	    memchr(s, 0, length))
		return -1;
	*out = s;
	return 0;
}

int rt_log_type_ok(uint8_t code)
{
	unsigned bytes = RT_ARG_BYTES(code);
	switch (RT_ARG_CLASS(code)) {
	case RT_ARG_UNSIGNED:
	case RT_ARG_SIGNED:
		return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
	case RT_ARG_POINTER:
	case RT_ARG_STRING:
		return bytes == 4 || bytes == 8;
	case RT_ARG_FLOAT:
		return bytes == 8;
	case RT_ARG_LONG_DOUBLE:
		return bytes == 0;
	default:
		return 0;
	}
}

int rt_log_types_ok(const uint8_t *types, uint32_t length, unsigned nargs)
{
	if (length != nargs || nargs > RT_LOG_MAX_ARGS)
		return 0;
	for (uint32_t i = 0; i < length; i++)
		if (!rt_log_type_ok(types[i]))
			return 0;
	return 1;
}

int rt_site_entry_ok(const struct rt_site_entry *e)
{
	if (!rt_site_kind_known(e->kind))
		return 0;
	for (size_t i = 0; i < sizeof(e->reserved); i++)
		if (e->reserved[i])
			return 0;
	if (e->kind == RT_SITE_LOG) {
		for (unsigned i = 0; i < RT_MAX_ARGS; i++)
			if (e->arg_types[i])
				return 0;
		return e->nargs <= RT_LOG_MAX_ARGS && e->types_length == e->nargs &&
		       e->level >= RT_LOG_FATAL && e->level <= RT_LOG_DEBUG;
	}
	if (e->nargs > RT_MAX_ARGS || e->types_offset || e->types_length || e->level)
		return 0;
	for (unsigned i = 0; i < RT_MAX_ARGS; i++) {
		unsigned class = RT_ARG_CLASS(e->arg_types[i]);
		if (i < e->nargs ? class != RT_ARG_UNSIGNED && class != RT_ARG_SIGNED &&
				       class != RT_ARG_POINTER
				 : e->arg_types[i] != 0)
			return 0;
	}
	return 1;
}

int rt_site_table_has_long(const struct rt_site_table *table)
{
	for (uint32_t i = 0; i < table->count; i++)
		if (table->sites[i].valid && rt_site_kind_long(table->sites[i].kind))
			return 1;
	return 0;
}

void rt_site_log_shape(struct rt_site *site)
{
	site->log_fixed = 0;
	site->log_max_slots = 0;
	if (site->kind == RT_SITE_IO) {
		/* the fixed part, then optional parts and paths up to any length */
		site->log_fixed = (uint32_t)sizeof(struct rt_io_payload);
		site->log_max_slots = RT_LOG_MAX_SLOTS;
		return;
	}
	if (!site->types)
		return;
	uint32_t strings = 0;
	for (unsigned i = 0; i < site->nargs; i++) {
		site->log_fixed += rt_log_arg_bytes(site->types[i]);
		if (RT_ARG_CLASS(site->types[i]) == RT_ARG_STRING)
			strings = RT_LOG_STRINGS_MAX;
	}
	unsigned slots = RT_LOG_SLOTS(site->log_fixed + strings);
	site->log_max_slots = (uint8_t)(slots < RT_LOG_MAX_SLOTS ? slots : RT_LOG_MAX_SLOTS);
}

unsigned rt_site_table_max_slots(const struct rt_site_table *table)
{
	unsigned most = RT_RECORD_MAX_SLOTS;
	for (uint32_t i = 0; i < table->count; i++) {
		const struct rt_site *s = &table->sites[i];
		if (!s->valid || !rt_site_kind_long(s->kind))
			continue;
		most = s->log_max_slots > most ? s->log_max_slots : most;
	}
	return most;
}

static void bad_string(struct rt_site *site, unsigned which, uint32_t offset, uint32_t length,
		       uint64_t string_bytes)
{
	site->fault = RT_SITE_BAD_STRING;
	site->string = (uint8_t)which;
	/* the bytes the string was to occupy, as far as they are in the area */
	uint64_t end = (uint64_t)offset + length + 1;
	if (end > string_bytes)
		end = string_bytes;
	site->fault_offset = offset < string_bytes ? offset : (uint32_t)string_bytes;
	site->fault_length = (uint32_t)(end > site->fault_offset ? end - site->fault_offset : 0);
}

static void load_site(struct rt_site *site, const struct rt_arena_header *h,
		      const unsigned char *file, struct rt_file_data *data, uint32_t index,
		      uint64_t string_bytes)
{
	struct rt_site_entry copy;
	const struct rt_site_entry *live =
	    rt_file_data_at(data, file, rt_layout_site_offset(h, index), sizeof(copy), &copy);
	memset(site, 0, sizeof(*site));
	uint32_t valid = __atomic_load_n(&live->valid, __ATOMIC_ACQUIRE);
	if (valid != 1) {
		site->fault = valid ? RT_SITE_BAD_FLAG : RT_SITE_UNPUBLISHED;
		return;
	}
	/* valid was written last: the entry is complete now */
	struct rt_site_entry e;
	memcpy(&e, live, sizeof(e));
	if (!rt_site_entry_ok(&e)) {
		site->fault = RT_SITE_BAD_ENTRY;
		return;
	}
	const char *types = NULL;
	const uint32_t offsets[4] = {e.tag_offset, e.file_offset, e.func_offset, e.types_offset};
	const uint32_t lengths[4] = {e.tag_length, e.file_length, e.func_length, e.types_length};
	const char **strings[4] = {&site->tag, &site->file, &site->func, &types};
	const unsigned nstrings = e.kind == RT_SITE_LOG ? 4 : 3;
	for (unsigned i = 0; i < nstrings; i++) {
		if (take_string(h, file, data, offsets[i], lengths[i], string_bytes, strings[i])) {
			bad_string(site, i, offsets[i], lengths[i], string_bytes);
			site->tag = site->file = site->func = NULL;
			return;
		}
	}
	if (types && !rt_log_types_ok((const uint8_t *)types, e.types_length, e.nargs)) {
		site->fault = RT_SITE_BAD_ENTRY;
		site->tag = site->file = site->func = NULL;
		return;
	}
	site->types = (const uint8_t *)types;
	site->level = e.kind == RT_SITE_LOG ? e.level : 0;
	site->tag_length = e.tag_length;
	site->file_length = e.file_length;
	site->func_length = e.func_length;
	site->file_base = site->file;
	for (uint32_t i = 0; i < e.file_length; i++)
		if (site->file[i] == '/' && i + 1 < e.file_length)
			site->file_base = site->file + i + 1;
	site->file_base_length = e.file_length - (uint32_t)(site->file_base - site->file);
	site->line = e.line;
	site->kind = e.kind;
	site->nargs = e.nargs;
	memcpy(site->arg_types, e.arg_types, sizeof(site->arg_types));
	for (unsigned i = 0; i < e.nargs && i < RT_MAX_ARGS; i++)
		if (RT_ARG_CLASS(e.arg_types[i]) == RT_ARG_SIGNED)
			site->signed_args |= (uint8_t)(1u << i);
	rt_site_log_shape(site);
	site->valid = 1;
}

int rt_site_table_load(struct rt_site_table *table, const struct rt_arena_header *header,
		       const unsigned char *file, struct rt_file_data *data, uint32_t count,
		       uint64_t string_bytes)
{
	struct rt_file_data everywhere;
	rt_file_data_init(&everywhere, -1);
	if (!data)
		data = &everywhere;
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
		load_site(&table->sites[i], header, file, data, i, string_bytes);
		table->valid_count += (uint32_t)table->sites[i].valid;
	}
	return 0;
}

void rt_site_table_free(struct rt_site_table *table)
{
	free(table->sites);
	memset(table, 0, sizeof(*table));
}
