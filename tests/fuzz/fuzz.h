/*
 * fuzz.h - the entry point every fuzz target defines: libFuzzer calls it
 * in `make fuzz`, replay.c calls it on the checked-in corpus in `make test`.
 */
#ifndef RT_TEST_FUZZ_H
#define RT_TEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Run one input through the code under test.  Returns 0 (libFuzzer's rule). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* RT_TEST_FUZZ_H */
