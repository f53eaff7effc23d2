/*
 * demangle.c - rt_demangle through the C++ runtime (see demangle.h).
 */
#include "symbols/demangle.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/*
 * The demangler's entry point as the Itanium C++ ABI defines it, with C
 * linkage; <cxxabi.h> declares it only for C++.
 */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *rt_demangle(const char *name)
{
	/* Only "_Z" names are C++ symbols: __cxa_demangle would also read a
	   plain C name such as "f" or "i" as a type and turn it into "float". */
	if (name == NULL || strncmp(name, "_Z", 2) != 0)
		return NULL;
	int status = 0;
	char *out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}
