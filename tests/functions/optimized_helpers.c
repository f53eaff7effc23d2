/*
 * optimized_helpers.c - a helper in a file of its own, so that only LTO
 * can inline it into its callers (optimized.c, optimized_cxx.cc), even
 * when the hooks are added after inlining.
 */
#include "optimized.h"

int opt_add3(int x)
{
	return x + 3;
}
