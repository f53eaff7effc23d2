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
#include <string.h>

#include "common/file_data.h"
#include "common/log_levels.h"
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
	uint8_t string; /* RT_SITE_BAD_STRING: 0 tag, 1 file, 2 function, 3 argument types */
	/* RT_SITE_BAD_STRING: the string's bytes, as an offset in the string area */
	uint32_t fault_offset, fault_length;
	uint32_t line;
	uint8_t kind;  /* enum rt_site_kind */
	uint8_t nargs; /* 0..RT_MAX_ARGS; log sites 0..RT_LOG_MAX_ARGS */
	uint8_t arg_types[RT_MAX_ARGS];
	uint8_t signed_args;			   /* bit i: argument i is of a signed type */
	uint8_t level;				   /* log sites: enum rt_log_level */
	const char *tag, *file, *func, *file_base; /* NUL-terminated, in the mapping */
	uint32_t tag_length, file_length, func_length, file_base_length;
	/* log sites: nargs type codes (rt_log_type_ok each), in the mapping; else NULL */
	const uint8_t *types;
	uint32_t log_fixed; /* log sites: payload bytes of the arguments, before string bytes */
	/* log sites: the most slots a record can take (strings at their limit) */
	uint8_t log_max_slots;
};

struct rt_site_table {
	struct rt_site *sites; /* count entries, valid or not */
	uint32_t count;
	uint32_t valid_count;
};

/*
 * Load and check entries [0, count) of the site table of a checked header
 * (count already clamped to the capacity), from the arena file mapped at
 * `file`.  An entry is valid when its valid flag is 1, rt_site_entry_ok()
 * holds, and each string (for a log site also its argument types, which
 * must then pass rt_log_types_ok()) is at most RT_SITE_STRING_MAX bytes, lies within the
 * used part of the string area (string_bytes: rt_layout_string_bytes(), or
 * more when that counter is damaged) and holds no NUL but the one at its
 * given length (the writer measures its strings with strnlen).  Only bytes
 * the file holds data for are read (data: common/file_data.h; NULL: all of
 * it): an entry in a hole is zeros, a string with a byte in a hole has a
 * NUL inside.  Returns 0 or -ENOMEM.
 */
int rt_site_table_load(struct rt_site_table *table, const struct rt_arena_header *header,
		       const unsigned char *file, struct rt_file_data *data, uint32_t count,
		       uint64_t string_bytes);
void rt_site_table_free(struct rt_site_table *table);

/* The valid site at index, or NULL. */
static inline const struct rt_site *rt_site_lookup(const struct rt_site_table *table,
						   uint32_t index)
{
	if (index >= table->count || !table->sites[index].valid)
		return NULL;
	return &table->sites[index];
}

/* Whether two sites carry the same tag: an RT_END closes a span of its tag. */
static inline int rt_site_same_tag(const struct rt_site *a, const struct rt_site *b)
{
	return a->tag_length == b->tag_length && memcmp(a->tag, b->tag, a->tag_length) == 0;
}

/*
 * Whether a whole record of kind and nslots can be an event of site: a trace
 * record of a trace, enter or exit site with the slots its arguments take,
 * a log record of a log site long enough for its arguments' payload and
 * no longer than they can make it, or an I/O record of the I/O site holding
 * at least the fixed part of its payload.
 */
static inline int rt_site_fits_record(const struct rt_site *site, unsigned kind, unsigned nslots)
{
	if (kind == RT_REC_LOG)
		return site->kind == RT_SITE_LOG && nslots >= RT_LOG_SLOTS(site->log_fixed) &&
		       nslots <= site->log_max_slots;
	if (kind == RT_REC_IO)
		return site->kind == RT_SITE_IO &&
		       nslots >= RT_LOG_SLOTS(sizeof(struct rt_io_payload)) &&
		       nslots <= RT_LOG_MAX_SLOTS;
	return kind == RT_REC_TRACE && !rt_site_kind_long(site->kind) &&
	       RT_TRACE_SLOTS(site->nargs) == nslots;
}

/*
 * The site's arguments as 64-bit values, values[0] to values[nargs - 1]
 * (the others are not written): arguments 1-4 come from the 32-bit
 * fields, 5-6 from the 64-bit ones; a signed argument is sign-extended
 * from its 32-bit field (a 64-bit field is its int64 bit pattern
 * already).  Print values[i] as int64_t when bit i of site->signed_args is
 * set.  Each argument is written at its case, a jump on the count, where a
 * loop tested each (the event builder runs it for every trace event).
 */
static inline uint64_t rt_site_arg32(const uint32_t a32[4], unsigned sign, unsigned i)
{
	return (sign >> i) & 1u ? (uint64_t)(int64_t)(int32_t)a32[i] : a32[i];
}

static inline void rt_site_decode_args(const struct rt_site *site, const uint32_t a32[4],
				       const uint64_t a64[2], uint64_t values[RT_MAX_ARGS])
{
	_Static_assert(RT_MAX_ARGS == 6, "the cases below are the six arguments");
	const unsigned sign = site->signed_args;
	switch (site->nargs < RT_MAX_ARGS ? site->nargs : RT_MAX_ARGS) {
	case 6:
		values[5] = a64[1];
		/* fall through */
	case 5:
		values[4] = a64[0];
		/* fall through */
	case 4:
		values[3] = rt_site_arg32(a32, sign, 3);
		/* fall through */
	case 3:
		values[2] = rt_site_arg32(a32, sign, 2);
		/* fall through */
	case 2:
		values[1] = rt_site_arg32(a32, sign, 1);
		/* fall through */
	case 1:
		values[0] = rt_site_arg32(a32, sign, 0);
		/* fall through */
	default:
		break;
	}
}

/*
 * Kind, argument count, argument types, level and reserved bytes as the
 * writer leaves them.  A trace site: nargs <= RT_MAX_ARGS, a known class
 * for each of its nargs arguments, 0 after, no types string, level 0.  A
 * log site: nargs <= RT_LOG_MAX_ARGS, a types string of nargs bytes,
 * arg_types all 0, a known level.  Reserved bytes 0 for both.
 */
int rt_site_entry_ok(const struct rt_site_entry *e);

/* A log argument's type code is one the payload layout knows (format.h). */
int rt_log_type_ok(uint8_t code);
/* length codes, each rt_log_type_ok, and as many as the site's nargs. */
int rt_log_types_ok(const uint8_t *types, uint32_t length, unsigned nargs);

/* Bytes an argument of this type code takes in a log payload before the string bytes. */
static inline unsigned rt_log_arg_bytes(uint8_t code)
{
	unsigned class = RT_ARG_CLASS(code);
	return class == RT_ARG_LONG_DOUBLE || class == RT_ARG_STRING ? 16u : 8u;
}

/* Fill a log site's log_fixed and log_max_slots from its nargs and types. */
void rt_site_log_shape(struct rt_site *site);

/* Whether any valid site of the table is a log site (its rings may hold log records). */
int rt_site_table_has_long(const struct rt_site_table *table);

/*
 * The most slots one record of the table's valid sites can take:
 * RT_RECORD_MAX_SLOTS for trace sites (and LOST records); for a log site
 * its arguments, plus RT_LOG_STRINGS_MAX bytes when it has a string
 * argument, at most RT_LOG_MAX_SLOTS.
 */
unsigned rt_site_table_max_slots(const struct rt_site_table *table);

#endif /* RT_DECODE_SITES_H */
