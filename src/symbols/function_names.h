/*
 * function_names.h - the function of an enter or exit event, named when the
 * trace is read: the module that held the address at the event's time (the
 * process's module map, read/modules.h), then its symbols
 * (symbols/symbolizer.h).  A module whose file on disk is not the one that
 * ran (another build-id) gives module+offset only, and one line on stderr
 * says why.
 */
#ifndef RT_SYMBOLS_FUNCTION_NAMES_H
#define RT_SYMBOLS_FUNCTION_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "read/arena_reader.h"

struct rt_function_names;

/* What is known of one address; strings live as long as the names. */
struct rt_function_place {
	const char *func;   /* demangled, or NULL */
	const char *file;   /* NULL without line information */
	uint32_t line;	    /* 0 when file is NULL */
	const char *module; /* the module's file name, or NULL when no module held it */
	uint64_t offset;    /* address minus the module's load bias */
};

/*
 * Names looked for in debug_dirs too (the strings must outlive the names).
 * NULL when out of memory.  Nothing is opened before the first address.
 */
struct rt_function_names *rt_function_names_new(const char *const *debug_dirs, size_t count);
void rt_function_names_free(struct rt_function_names *names);

/* The place of addr in rd's process at raw time counter. */
void rt_function_names_find(struct rt_function_names *names, const struct rt_reader *rd,
			    uint64_t addr, uint64_t counter, struct rt_function_place *out);

/*
 * The place as text, at most size bytes with the NUL: "func (file:line)",
 * "func", "module+0x1a2b", or "0x7f00deadbeef".  Returns the length.
 */
size_t rt_function_place_text(const struct rt_function_place *place, uint64_t addr, char *buf,
			      size_t size);

#endif /* RT_SYMBOLS_FUNCTION_NAMES_H */
