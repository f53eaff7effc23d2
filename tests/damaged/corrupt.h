/*
 * corrupt.h - the `corrupt` command (corrupt.c) as a function, for a test
 * that damages a file once per seed: run in a forked child, it costs no
 * exec (and, in the sanitizer builds, no sanitizer start-up).
 */
#ifndef RT_TESTS_CORRUPT_H
#define RT_TESTS_CORRUPT_H

/* corrupt IN OUT KIND SEED [OFFSET [LENGTH]]: what corrupt.c says; the exit status */
int corrupt_main(int argc, char **argv);

#endif
