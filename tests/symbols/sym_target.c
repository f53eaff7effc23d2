/*
 * sym_target.c - a program for the symbol tests: it loads the shared object
 * named by argv[1], then prints its modules and the addresses of some of its
 * functions (modules.h) and exits.  The checker resolves them afterwards,
 * offline, and expects each marked function's entry at its marker's line
 * (see sym_lib.c).  SYM_REBUILT builds a different program from the same
 * source, as a rebuild after a trace was made would.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include "modules.h"

// clang-format off
__attribute__((noinline)) static void *sym_return_address(void) { // @return_address
	return __builtin_return_address(0);
}

static int sym_alpha(int x) { // @alpha
	void *ra = sym_return_address(); // @alpha_call
	printf("func alpha_call 0 %jx\n", (uintmax_t)(uintptr_t)ra);
	return x + 1;
}

int sym_beta(int x);
int sym_beta(int x) { // @beta
#ifdef SYM_REBUILT
	x *= 7;
#endif
	return x * 2;
}
// clang-format on

static void print_func(const char *key, int module, void *addr)
{
	printf("func %s %d %jx\n", key, module, (uintmax_t)(uintptr_t)addr);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sym_target LIBRARY\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "sym_target: %s\n", dlerror());
		return 1;
	}
	sym_print_module(0, NULL);
	sym_print_module(1, "libsym_lib");
	print_func("alpha", 0, (void *)sym_alpha);
	print_func("beta", 0, (void *)sym_beta);
	print_func("return_address", 0, (void *)sym_return_address);
	print_func("lib_square", 1, dlsym(lib, "sym_lib_square"));
	print_func("lib_cube", 1, dlsym(lib, "sym_lib_cube"));
	void *(*helper)(void) = (void *(*)(void))dlsym(lib, "sym_lib_helper_address");
	if (helper)
		print_func("lib_helper", 1, helper());
	int r = sym_alpha(1) + sym_beta(2);
	fflush(stdout);
#ifdef SYM_REBUILT
	return r == 30 ? 0 : 1;
#else
	return r == 6 ? 0 : 1;
#endif
}
