/*
 * modules.h - what the symbol test programs print about themselves: each
 * module's path, load bias and build-id, taken from dl_iterate_phdr as a
 * recorder would take them, and the run-time addresses of some functions.
 *
 *   module INDEX PATH BASE_HEX BUILD_ID_HEX
 *   func KEY MODULE_INDEX ADDR_HEX
 */
#ifndef RT_TEST_SYMBOLS_MODULES_H
#define RT_TEST_SYMBOLS_MODULES_H

#ifdef __cplusplus
extern "C" {
#endif

/* Print the module line of the main program (index 0), or with a non-NULL
   name_part, of the first loaded object whose path contains it. */
void sym_print_module(int index, const char *name_part);

#ifdef __cplusplus
}
#endif

#endif
