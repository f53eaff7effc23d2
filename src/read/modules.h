/*
 * modules.h - the module map as a reader gives it: every object the traced
 * process had loaded (path, where, build-id, from when to when), from an
 * arena's module table or a trace file's MODULES blocks, and which of them
 * held an address at a given time.
 *
 * An entry that does not check (read/modules.c says what is checked) is
 * never in the list: a damaged entry is reported as damage by whoever read
 * it, so that an address is never named after the wrong object.
 */
#ifndef RT_READ_MODULES_H
#define RT_READ_MODULES_H

#include <stddef.h>
#include <stdint.h>

#include "ringtrace/format.h"

struct rt_reader_module {
	char *path;	/* NUL-terminated, owned by the list */
	uint32_t index; /* in the arena's module table */
	uint32_t flags; /* RT_MODULE_F_* */
	uint64_t base;	/* load bias */
	uint64_t low, high;
	uint64_t load_counter;	 /* raw clock; the trace's start for RT_MODULE_F_AT_START */
	uint64_t unload_counter; /* raw clock, 0 while (as far as known) loaded */
	uint32_t build_id_size;
	uint8_t build_id[RT_BUILD_ID_MAX];
};

/* The modules of one process, in table order. */
struct rt_reader_modules {
	struct rt_reader_module *items;
	uint32_t count;
	uint32_t capacity;
};

/*
 * Whether an entry can be believed on its own: 1, or 0 with why filled.
 * Its path is checked apart (rt_module_path_ok).
 */
int rt_module_entry_ok(const struct rt_module_entry *e, char *why, size_t why_size);

/*
 * Whether the length+1 bytes at p are the entry's path: no NUL inside, one
 * at the end.
 */
int rt_module_path_ok(const char *p, uint32_t length);

/* Append entry index with its path (checked already); 0 or -ENOMEM. */
int rt_reader_modules_add(struct rt_reader_modules *list, uint32_t index,
			  const struct rt_module_entry *e, const char *path);
void rt_reader_modules_free(struct rt_reader_modules *list);

/*
 * The entry m was read from, as a writer puts it in a MODULES record:
 * valid, path_offset 0 and path_length its path's, reserved bytes zero.
 */
void rt_reader_module_entry(const struct rt_reader_module *m, struct rt_module_entry *e);

struct rt_reader;
/*
 * The module that held address at raw clock counter: loaded at or before
 * it, not unloaded at or before it, its range holding the address.  Of
 * several (a table damaged into overlaps), the one loaded last.  NULL when
 * none did.
 */
const struct rt_reader_module *rt_reader_module_at(const struct rt_reader *rd, uint64_t address,
						   uint64_t counter);

#endif /* RT_READ_MODULES_H */
