/*
 * setup.h - the start and end shared by the benchmarks that time one
 * thread's calls beside the floor (fast_path.c, functions.c, log.c).
 */
#ifndef BENCH_SETUP_H
#define BENCH_SETUP_H

#include <stdint.h>

/*
 * From `PROGRAM ARENA RING_BYTES`: pin the thread to the last CPU it may
 * use, start tracing into ARENA (flight mode, one ring of RING_BYTES) and
 * give the thread a floor ring of the same size.  0, or the exit status to
 * return after a message on stderr.
 */
int bench_start(int argc, char **argv, uint64_t *ring_bytes);

/*
 * After the runs: 1 (after a message) when tracing turned itself off and
 * the figures mean nothing, else 0 with the floor ring's checksum noted.
 */
int bench_tracing_failed(const char *program);

/* Stop tracing and free the floor ring. */
void bench_stop(void);

#endif /* BENCH_SETUP_H */
