// sym_cxx.cc - a C++ program for the symbol tests: names in namespaces,
// templates, overloads and static members, whose demangled form the checker
// knows.  Prints its module and function addresses (modules.h); each marked
// function's entry is at its marker's line (see sym_lib.c).
#include <stdint.h>
#include <stdio.h>

#include "modules.h"

// clang-format off
namespace outer {
namespace inner {

template <typename T> struct Box {
	static T make(T x) { // @box_make
		return x + 1;
	}
};

int plain(int x) { // @plain_int
	return x + 1;
}

double plain(double x) { // @plain_double
	return x + 0.5;
}

} // namespace inner
} // namespace outer

template <typename T> T twice(T x) { // @twice
	return x * 2;
}
// clang-format on

static void print_func(const char *key, void *addr)
{
	printf("func %s 0 %jx\n", key, (uintmax_t)(uintptr_t)addr);
}

int main()
{
	sym_print_module(0, nullptr);
	int (*box_make)(int) = &outer::inner::Box<int>::make;
	int (*plain_int)(int) = &outer::inner::plain;
	double (*plain_double)(double) = &outer::inner::plain;
	long (*twice_long)(long) = &twice<long>;
	print_func("box_make", reinterpret_cast<void *>(box_make));
	print_func("plain_int", reinterpret_cast<void *>(plain_int));
	print_func("plain_double", reinterpret_cast<void *>(plain_double));
	print_func("twice", reinterpret_cast<void *>(twice_long));
	fflush(stdout);
	return box_make(1) + plain_int(1) + twice_long(1) == 6 && plain_double(1) > 1 ? 0 : 1;
}
