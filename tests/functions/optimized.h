/* optimized.h - what optimized_helpers.c gives optimized.c and optimized_cxx.cc. */
#ifndef OPTIMIZED_H
#define OPTIMIZED_H

#ifdef __cplusplus
extern "C" {
#endif

/* small enough for LTO to inline into its callers in the other file */
int opt_add3(int x);

#ifdef __cplusplus
}
#endif

#endif
