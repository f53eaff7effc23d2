/*
 * fuzz.h - the entry point every fuzz target defines: libFuzzer calls it
 * in `make fuzz`, replay.c calls it on the checked-in corpus in `make test`.
 */
#ifndef RT_TEST_FUZZ_H
#define RT_TEST_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Run one input through the code under test.  Returns 0 (libFuzzer's rule). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * A broken promise of the code under test is a bug like a crash, and
 * reported as one: the file and line say which target and which promise.
 */
#define PROMISE(cond)                                                                              \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: broken promise: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

#endif /* RT_TEST_FUZZ_H */
