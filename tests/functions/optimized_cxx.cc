/*
 * optimized_cxx.cc - calls left by a C++ exception in an optimized build,
 * for optimized.sh: catcher() calls mid -> thrower four times, and
 * thrower throws on odd rounds, past mid; catcher catches it and calls
 * after().  Each calls inline helpers.  g++ runs the exit hooks while the
 * exception passes; clang++ does not, and the library closes those calls
 * when the next call from catcher enters.
 *
 *     optimized_cxx throw
 */
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "optimized.h"

#define CALLED __attribute__((noinline))

static volatile int sink;

static inline int triple(int x)
{
	return x * 3;
}

extern "C" {
CALLED void thrower(int n);
CALLED void mid(int n);
CALLED void after(void);
CALLED void catcher(void);
}

void thrower(int n)
{
	sink = triple(n) + opt_add3(n);
	if (n % 2)
		throw std::runtime_error("odd");
}

void mid(int n)
{
	thrower(n);
	sink = triple(0);
}

void after(void)
{
	sink = triple(4);
}

void catcher(void)
{
	for (int i = 0; i < 4; i++) {
		try {
			mid(i);
		} catch (const std::exception &) {
			after();
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 2 || std::strcmp(argv[1], "throw") != 0) {
		std::fprintf(stderr, "usage: optimized_cxx throw\n");
		return 2;
	}
	catcher();
	return 0;
}
