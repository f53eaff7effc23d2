/*
 * unwind_cxx.cc - calls left by a C++ exception, for
 * tests/functions/check_unwind.py (scenario throw): catcher() calls
 * c_top -> c_mid -> c_thrower, which throws; catcher catches it and calls
 * c_after(), three times.  g++ calls the exit hooks while the exception
 * passes (an exit with no flag); clang++ does not, and the library closes
 * those calls when c_after is entered (RT_FUNC_F_UNWOUND).  Either way every
 * enter has one exit and c_after nests inside catcher.
 *
 *     unwind_cxx throw
 */
#include <cstdio>
#include <cstring>
#include <stdexcept>

#define QUIET __attribute__((no_instrument_function))
#define CALLED __attribute__((noinline))

static volatile int sink;

extern "C" {
CALLED void c_thrower(int n);
CALLED void c_mid(int n);
CALLED void c_top(int n);
CALLED void c_after(void);
CALLED void catcher(void);
}

void c_thrower(int n)
{
	sink = n;
	throw std::runtime_error("thrown");
}

void c_mid(int n)
{
	c_thrower(n);
	sink = 0;
}

void c_top(int n)
{
	c_mid(n);
	sink = 0;
}

void c_after(void)
{
	sink = 42;
}

void catcher(void)
{
	for (int i = 0; i < 3; i++) {
		try {
			c_top(i);
		} catch (const std::exception &) {
			c_after();
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 2 || std::strcmp(argv[1], "throw") != 0) {
		std::fprintf(stderr, "usage: unwind_cxx throw\n");
		return 2;
	}
	catcher();
	return 0;
}
