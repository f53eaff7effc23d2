/*
 * setup.h - the start and end shared by the benchmarks that time one
 * thread's calls beside the floor (fast_path.c, functions.c, log.c), and
 * the run of the workloads that fill an arena for a reader's figure
 * (dump_workload.c, analyze_workload.c).
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

/* A workload: threads recording a fixed count of events each. */
struct bench_workload {
	uint64_t bytes_per_event; /* ring bytes an event takes, on average */
	uint64_t min_events;	  /* the fewest EVENTS_PER_THREAD that make sense */
	void *(*record)(void *);  /* one thread's events; its argument points to its index */
	/* set by bench_workload_run, events_per_thread before any thread starts */
	unsigned threads;
	uint64_t events_per_thread;
	uint64_t ring_bytes;
};

/*
 * From `PROGRAM ARENA THREADS EVENTS_PER_THREAD`: start tracing into ARENA
 * in flight mode with a ring per thread big enough that nothing is
 * overwritten, run THREADS (1..64) threads of w->record to their end, and
 * close the arena cleanly for the caller to read.  0, or the exit status
 * to return after a message on stderr.
 */
int bench_workload_run(struct bench_workload *w, int argc, char **argv);

#endif /* BENCH_SETUP_H */
