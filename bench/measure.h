/*
 * measure.h - how every benchmark in bench/ measures, so that a figure and
 * its floor are always measured the same way.
 *
 * A figure is the median, over many runs, of the wall-clock time of one
 * batch of events divided by the batch size.  The loops being compared run
 * interleaved (run 1 of each, then run 2 of each, ...) on a pinned CPU, after
 * a warm-up, so that frequency changes and neighbours on the host hit them
 * alike.  Results go to stdout as "result NAME VALUE" lines for scripts/bench;
 * everything else a benchmark says goes to stderr.
 */
#ifndef BENCH_MEASURE_H
#define BENCH_MEASURE_H

#include <stddef.h>
#include <stdint.h>

/* A loop under test: records n events. */
typedef void (*bench_loop)(uint64_t n);

/* CLOCK_MONOTONIC in nanoseconds: the one timer of every figure. */
uint64_t bench_now_ns(void);

/* Nanoseconds per event of one batch of n events. */
double bench_time_batch(bench_loop loop, uint64_t n);

/*
 * The CPUs this process may run on, lowest first: fills cpus[0..max) and
 * returns how many there are (at most max).
 */
int bench_allowed_cpus(int *cpus, int max);

/* Pin the calling thread to one CPU; 0 or -errno (the benchmark still runs). */
int bench_pin(int cpu);

/* The q-quantile (0 <= q <= 1) of v[0..n), nearest rank; sorts v. */
double bench_quantile(double *v, size_t n, double q);

/* A loop under test and what was measured of it (ns per event). */
struct bench_case {
	const char *name;
	bench_loop loop;
	double median;
	double p10, p90; /* the spread of the runs */
};

/*
 * Measure the cases against each other: a warm-up batch of each, then `runs`
 * rounds that each time one batch of every case in turn.  Fills the medians
 * and spreads, and notes them on stderr.
 */
void bench_compare(struct bench_case *cases, size_t count, uint64_t batch, size_t runs);

/* One figure for scripts/bench: "result NAME VALUE". */
void bench_result(const char *name, double value);

/* A line for the reader (stderr), printf-style, ending in a newline. */
void bench_note(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Exit status of a benchmark that could not run here (not a failure). */
#define BENCH_SKIPPED 77

#endif /* BENCH_MEASURE_H */
