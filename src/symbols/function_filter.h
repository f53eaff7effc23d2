/*
 * function_filter.h - `ringtrace record -F/-N`: which functions of a
 * program's file the patterns select, written as the filter file the
 * recording library reads at load (RINGTRACE_FUNCTION_FILTER).
 *
 * Patterns are those of the reading views (present/item_filter.h): shell
 * globs matched against a function's short name ("geo::area") and its full
 * demangled name ("geo::area(int, int)"), and here also its symbol as it
 * is in the file.  Only the program's own functions are looked at (its
 * .symtab, else .dynsym): functions of shared libraries are not filtered.
 *
 * The file: a line "ringtrace-function-filter 1", then "F START END" for
 * each function -F selects and "N START END" for each -N selects, START and
 * END the function's link-time addresses in lowercase hexadecimal, each
 * kind sorted and merged where functions touch or overlap.
 */
#ifndef RT_SYMBOLS_FUNCTION_FILTER_H
#define RT_SYMBOLS_FUNCTION_FILTER_H

#include <stddef.h>
#include <stdio.h>

struct rt_function_patterns {
	const char *const *only; /* -F */
	size_t only_count;
	const char *const *out; /* -N */
	size_t out_count;
};

/*
 * Write the filter of program (a path) to out.  0, with matched[i] the
 * functions pattern i selects (-F patterns first, then -N: room for
 * only_count + out_count); or -errno: -ENOEXEC when program is no ELF
 * file, -ENOENT when it has no symbol table, -ENOMEM.
 */
int rt_function_filter_write(const char *program, const struct rt_function_patterns *p, FILE *out,
			     size_t *matched);

#endif /* RT_SYMBOLS_FUNCTION_FILTER_H */
