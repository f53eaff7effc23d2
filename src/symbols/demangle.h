/*
 * demangle.h - C++ symbol names made readable.
 *
 * The demangler is the C++ runtime's own (__cxa_demangle in libstdc++): it
 * reads the Itanium ABI names that g++ and clang++ write, and it is there
 * wherever a C++ compiler or program is.
 *
 * A demangled name is the full signature: return type, scopes, template
 * arguments, parameters, qualifiers ("void std::sort<int*>(int*, int*)").
 * Its short form keeps the scopes and the function's own name only
 * ("std::sort"), as a call tree wants to show it.
 */
#ifndef RT_SYMBOLS_DEMANGLE_H
#define RT_SYMBOLS_DEMANGLE_H

#include <stddef.h>

/*
 * The demangled form of name as a malloc'ed string (the caller frees it), or
 * NULL when name is not a mangled C++ name (or memory ran out): the caller
 * then shows name as it is.
 */
char *rt_demangle(const char *name);

/*
 * The short form of a demangled function name, into buf (size bytes with
 * the NUL, cut to fit); returns its length.  Dropped: the return type, the
 * template arguments of every scope and of the function, the parameter
 * lists (a local scope's too: "f(int)::Local::get() const" is "f::Local::get"),
 * the qualifiers after them, ABI tags ("[abi:cxx11]") and clone suffixes
 * ("[clone .constprop.0]").  Kept: operator names ("Point::operator<",
 * "S::operator()", "operator new[]", "S::operator bool"), "(anonymous
 * namespace)", lambdas and other unnamed entities without their
 * parameters ("main::{lambda#1}::operator()"), and the thunk prefixes
 * ("non-virtual thunk to A::f"), which are functions of their own.  A name
 * with no parameter list (a C function, a raw symbol, "module+0x1a2b") is
 * its own short form.
 */
size_t rt_demangled_short(const char *full, char *buf, size_t size);

#endif
