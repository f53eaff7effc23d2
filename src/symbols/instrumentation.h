/*
 * instrumentation.h - what a program's file says of how it records: built
 * with -finstrument-functions (its code calls __cyg_profile_func_enter), or
 * linked with the recording library (it needs libringtrace.so, or holds the
 * library's own symbols: a static link).  Read from the ELF symbol tables
 * and dynamic section, for `record` to say why a program recorded nothing.
 *
 * A stripped, statically linked program keeps no symbol table: it shows no
 * sign of the library even when it holds it.
 */
#ifndef RT_SYMBOLS_INSTRUMENTATION_H
#define RT_SYMBOLS_INSTRUMENTATION_H

#define RT_INSTRUMENTED_FUNCTIONS 1u /* calls the function hooks */
#define RT_INSTRUMENTED_LINKED 2u    /* linked with libringtrace */

/*
 * The RT_INSTRUMENTED_* bits of the file at path, into *found.  0, or
 * -errno: -ENOEXEC for a file that is not ELF (a script), -EINVAL for one
 * that is not a regular file, and what open() says.
 */
int rt_instrumentation_of(const char *path, unsigned *found);

#endif /* RT_SYMBOLS_INSTRUMENTATION_H */
