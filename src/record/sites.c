/*
 * sites.c - copying trace sites (tag, file, function, line, argument types)
 * into the arena on their first event, so the arena decodes without the
 * program.  Lock-free: an index and string space are claimed with atomic
 * adds, the entry is filled, and `valid` is published last.  Two threads
 * registering the same site at once both write an entry; the first to set
 * the site's id wins and the other entry is never referenced.
 */
#include <string.h>

#include "record/record.h"

static uint32_t bounded_length(const char *s)
{
	size_t n = s ? strnlen(s, 4096) : 0;
	return (uint32_t)n;
}

uint32_t rt_strings_claim(uint64_t n)
{
	struct rt_arena_header *h = rt_arena.header;
	/* check first, so a full area is not pushed further by every refused event */
	if (__atomic_load_n(&h->strings_used, __ATOMIC_RELAXED) + n > h->string_capacity)
		return UINT32_MAX;
	uint64_t off = __atomic_fetch_add(&h->strings_used, n, __ATOMIC_RELAXED);
	if (off + n > h->string_capacity)
		return UINT32_MAX;
	return (uint32_t)off;
}

static void put_string(uint32_t *offset, uint32_t *length, uint32_t at, const char *s, uint32_t n)
{
	if (n)
		memcpy(rt_arena.strings + at, s, n);
	rt_arena.strings[at + n] = 0;
	*offset = at;
	*length = n;
}

uint32_t rt_site_register(struct ringtrace__site_body *site)
{
	uint32_t id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);
	if (id)
		return id;
	struct rt_arena_header *h = rt_arena.header;
	uint32_t tag_n = bounded_length(site->tag);
	uint32_t file_n = bounded_length(site->file);
	uint32_t func_n = bounded_length(site->func);
	/* a log site's argument types are a string of their own */
	const struct ringtrace__log_site_body *log =
	    site->kind == RT_SITE_LOG ? (const struct ringtrace__log_site_body *)site : NULL;
	uint32_t types_n =
	    log ? (site->nargs <= RT_LOG_MAX_ARGS ? site->nargs : RT_LOG_MAX_ARGS) : 0;

	uint32_t index = __atomic_load_n(&h->sites_used, __ATOMIC_RELAXED) < h->site_capacity
			     ? __atomic_fetch_add(&h->sites_used, 1, __ATOMIC_RELAXED)
			     : UINT32_MAX;
	uint32_t at =
	    index < h->site_capacity
		? rt_strings_claim((uint64_t)tag_n + file_n + func_n + 3 + (log ? types_n + 1 : 0))
		: UINT32_MAX;
	if (at == UINT32_MAX) {
		__atomic_fetch_add(&h->sites_refused, 1, __ATOMIC_RELAXED);
		return 0;
	}
	struct rt_site_entry *e = &rt_arena.sites[index];
	put_string(&e->tag_offset, &e->tag_length, at, site->tag, tag_n);
	at += tag_n + 1;
	put_string(&e->file_offset, &e->file_length, at, site->file, file_n);
	at += file_n + 1;
	put_string(&e->func_offset, &e->func_length, at, site->func, func_n);
	at += func_n + 1;
	e->line = site->line;
	e->kind = site->kind;
	if (log) {
		put_string(&e->types_offset, &e->types_length, at, (const char *)log->types,
			   types_n);
		e->nargs = (uint8_t)types_n;
		e->level = (uint8_t)log->level;
		memset(e->arg_types, 0, sizeof(e->arg_types));
	} else {
		e->nargs = site->nargs <= RT_MAX_ARGS ? site->nargs : RT_MAX_ARGS;
		memcpy(e->arg_types, site->arg_types, sizeof(e->arg_types));
	}
	e->registered_counter = ringtrace__counter();
	/* publishes: the entry and its strings */
	__atomic_store_n(&e->valid, 1, __ATOMIC_RELEASE);

	uint32_t expected = 0;
	if (!__atomic_compare_exchange_n(&site->id, &expected, index, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return expected;
	return index;
}
