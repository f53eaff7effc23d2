/*
 * sites.h - the arena's site table, checked, and argument decoding.
 *
 * A site's strings point into the arena mapping (they are written once,
 * before the site is marked valid, and never change), so a table lives no
 * longer than the mapping it was loaded from.
 */
#ifndef RT_DECODE_SITES_H
#define RT_DECODE_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/format.h"

/*
 * Longest tag, file or function name accepted (bytes, without the NUL): a
 * path is at most PATH_MAX, and a bound keeps every rendering of a site small.
 */
#define RT_SITE_STRING_MAX 4096u

/* Why a site entry is not valid (rt_site.fault). */
enum rt_site_fault {
	RT_SITE_OK = 0,
	RT_SITE_UNPUBLISHED = 1, /* valid 0: never registered, or its writer died registering it */
	RT_SITE_BAD_FLAG = 2,	 /* valid neither 0 nor 1 */
	RT_SITE_BAD_ENTRY = 3,	 /* kind, argument count or types out of range, reserved set */
	/* a string outside the string area, too long, or not ending (only) at its length:
	   fault_offset and fault_length say which bytes */
	RT_SITE_BAD_STRING = 4,
};

struct rt_site {
	int valid;	/* passed every check below; nothing else is set otherwise */
	uint8_t fault;	/* enum rt_site_fault, when not valid */
	uint8_t string; /* RT_SITE_BAD_STRING: 0 tag, 1 file, 2 function */
	/* RT_SITE_BAD_STRING: the string's bytes, as an offset in the string area */
	uint32_t fault_offset, fault_length;
	uint32_t line;
	uint8_t kind;  /* enum rt_site_kind */
	uint8_t nargs; /* 0..RT_MAX_ARGS */
	uint8_t arg_types[RT_MAX_ARGS];
	uint8_t signed_args;			   /* bit i: argument i is of a signed type */
	const char *tag, *file, *func, *file_base; /* NUL-terminated, in the mapping */
	uint32_t tag_length, file_length, func_length, file_base_length;
};

struct rt_site_table {
	struct rt_site *sites; /* count entries, valid or not */
	uint32_t count;
	uint32_t valid_count;
};

/*
 * Load and check entries [0, count) of the site table of a checked header
 * (count already clamped to the capacity), from the arena file mapped at
 * `file`.  An entry is valid when its valid flag is 1, its kind is
 * known (rt_site_kind_known), nargs <= RT_MAX_ARGS, each of its first nargs argument
 * types has a known class and the others are 0, its reserved bytes are 0,
 * and each string is at most RT_SITE_STRING_MAX bytes, lies within the
 * used part of the string area (string_bytes: rt_layout_string_bytes(), or
 * more when that counter is damaged) and holds no NUL but the one at its
 * given length (the writer measures its strings with strnlen).
 * Returns 0 or -ENOMEM.
 */
int rt_site_table_load(struct rt_site_table *table, const struct rt_arena_header *header,
		       const unsigned char *file, uint32_t count, uint64_t string_bytes);
void rt_site_table_free(struct rt_site_table *table);

/* The valid site at index, or NULL. */
static inline const struct rt_site *rt_site_lookup(const struct rt_site_table *table,
						   uint32_t index)
{
	if (index >= table->count || !table->sites[index].valid)
		return NULL;
	return &table->sites[index];
}

/*
 * The site's arguments as 64-bit values: arguments 1-4 come from the 32-bit
 * fields, 5-6 from the 64-bit ones; a signed argument is sign-extended from
 * its 32-bit field (a 64-bit field is its int64 bit pattern already).
 * Unused arguments are 0.  Print values[i] as int64_t when bit i of
 * site->signed_args is set.
 */
static inline void rt_site_decode_args(const struct rt_site *site, const uint32_t a32[4],
				       const uint64_t a64[2], uint64_t values[RT_MAX_ARGS])
{
	for (unsigned i = 0; i < 4; i++) {
		if (site->signed_args & (1u << i))
			values[i] = (uint64_t)(int64_t)(int32_t)a32[i];
		else
			values[i] = a32[i];
	}
	values[4] = a64[0];
	values[5] = a64[1];
	for (unsigned i = site->nargs; i < RT_MAX_ARGS; i++)
		values[i] = 0;
}

/*
 * Argument types and reserved bytes as the writer leaves them: a known
 * class for each of the nargs arguments, 0 after, reserved bytes 0.
 */
int rt_site_arg_types_ok(const struct rt_site_entry *e);

#endif /* RT_DECODE_SITES_H */
