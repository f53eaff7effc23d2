/*
 * demangle.h - C++ symbol names made readable.
 *
 * The demangler is the C++ runtime's own (__cxa_demangle in libstdc++): it
 * reads the Itanium ABI names that g++ and clang++ write, and it is there
 * wherever a C++ compiler or program is.
 */
#ifndef RT_SYMBOLS_DEMANGLE_H
#define RT_SYMBOLS_DEMANGLE_H

/*
 * The demangled form of name as a malloc'ed string (the caller frees it), or
 * NULL when name is not a mangled C++ name (or memory ran out): the caller
 * then shows name as it is.
 */
char *rt_demangle(const char *name);

#endif
