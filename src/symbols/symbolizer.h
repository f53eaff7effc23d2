/*
 * symbolizer.h - addresses of a traced process turned into names, offline.
 *
 * The caller describes each module the traced process had loaded (its path
 * on disk, the build-id recorded for it at run time, its load bias) and gets
 * a small handle back; it then asks for addresses in that module.  Which
 * module an address belongs to is the caller's business: the module map
 * knows when each module was loaded, and two modules may occupy the same
 * addresses at different times, so they are separate handles here.
 *
 * Names come from elfutils (libdwfl): the symbol table for the function
 * name (C++ names demangled), DWARF line tables for file and line.  Debug
 * information is looked for in the file itself, then through its
 * .gnu_debuglink name and its build-id in the file's directory, its .debug
 * subdirectory, the caller's debug directories and /usr/lib/debug
 * (DIR/.build-id/xx/yyyy.debug, DIR/<debuglink>, DIR/<file's dir>/<debuglink>).
 *
 * The build-id rule: when a build-id was recorded and the file on disk has
 * another one (or none), nothing is read from that file.  The module's
 * addresses resolve to module+offset only, and the first resolution says
 * why, once, in rt_symbol.warning.
 *
 * A module is opened on its first resolution, not when it is added; its
 * symbol table is then read whole, and each unit's line rows when first
 * needed, so that any address costs binary searches, and an address asked
 * for again one hash probe.
 *
 * Strings handed out (names, files, warnings) live as long as the
 * symbolizer.  A symbolizer is used by one thread at a time.
 */
#ifndef RT_SYMBOLS_SYMBOLIZER_H
#define RT_SYMBOLS_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>

/* Longest build-id accepted (bytes); GNU ld writes 20 (SHA-1). */
#define RT_SYM_BUILD_ID_MAX 64u

struct rt_symbolizer;

struct rt_module_desc {
	const char *path;	 /* the file as loaded; copied */
	const uint8_t *build_id; /* as recorded at run time; NULL when none was */
	size_t build_id_len;	 /* 0 when none was, at most RT_SYM_BUILD_ID_MAX */
	/* load bias: run-time address minus ELF virtual address (dl_iterate_phdr's
	   dlpi_addr); 0 for a non-PIE executable */
	uint64_t base;
};

struct rt_symbol {
	const char *func;	 /* demangled function name, or NULL when none is known */
	uint64_t func_offset;	 /* address minus the function's start, when func is set */
	const char *file;	 /* source file, or NULL when there is no line information */
	uint32_t line;		 /* 0 when file is NULL */
	const char *module;	 /* the module's path as given */
	const char *module_name; /* its last component, for module+offset */
	uint64_t offset;	 /* address minus the module's base */
	/* Set on the one resolution that first opened the module, when the module
	   cannot give names (build-id mismatch, unreadable file): a message naming
	   the file (and both build-ids) for the caller to print on stderr. */
	const char *warning;
};

/*
 * A symbolizer looking for separate debug files in debug_dirs too (ndirs
 * entries, may be 0), before /usr/lib/debug.  Returns NULL with errno set
 * (EINVAL, ENOENT, ENOMEM...) and a message in err (errlen bytes) naming
 * the directory at fault.
 */
struct rt_symbolizer *rt_symbolizer_create(const char *const *debug_dirs, size_t ndirs, char *err,
					   size_t errlen);
void rt_symbolizer_destroy(struct rt_symbolizer *sym); /* NULL is fine */

/*
 * Add a module; returns its handle (>= 0), or -EINVAL (no path, build-id too
 * long) or -ENOMEM.  The file is not opened yet.
 */
int rt_symbolizer_add_module(struct rt_symbolizer *sym, const struct rt_module_desc *desc);

/*
 * Resolve addr (absolute, in the traced process, while the module was loaded
 * at its base) to *out.  Best effort: function and line when there is DWARF,
 * the function alone from the symbol table of a stripped file, else only
 * module and offset.  Returns 0, or -EINVAL for an unknown handle (out is
 * then untouched).
 */
int rt_symbolizer_resolve(struct rt_symbolizer *sym, int module, uint64_t addr,
			  struct rt_symbol *out);

/* The module's problem (as in rt_symbol.warning) once it has been opened, or NULL. */
const char *rt_symbolizer_module_error(const struct rt_symbolizer *sym, int module);

/* Format "module+0xoffset" into buf; returns what snprintf returns. */
int rt_symbol_format_raw(const struct rt_symbol *s, char *buf, size_t len);

#endif
