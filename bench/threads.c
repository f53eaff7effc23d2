/*
 * threads.c - does one thread's tracing slow another down?  Two threads, each
 * pinned to its own CPU, trace alone and then at the same time; the rings are
 * per-thread, so the only way one could slow the other is a cache line both
 * write on the fast path (or a machine that shares more than caches between
 * its CPUs, which the same experiment on the floor loop shows).
 *
 *     bench_threads ARENA RING_BYTES
 *
 * Each round runs six phases, one batch per thread in each: ringtrace with
 * thread 0 alone, thread 1 alone, both together; then the floor likewise.
 * In a phase with both, the threads leave a start line together (spinning,
 * not waking from a futex one after the other) so that their batches overlap.
 * Prints the median ns per event of every thread in every phase:
 *   trace_alone_N, trace_together_N, floor_alone_N, floor_together_N
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

#include "floor.h"
#include "loops.h"
#include "measure.h"

#define BATCH (1u << 16)
#define RUNS 101
#define THREADS 2

enum phase { TRACE_ALONE, TRACE_TOGETHER, FLOOR_ALONE, FLOOR_TOGETHER, PHASES };

static const char *const phase_names[PHASES] = {"trace_alone", "trace_together", "floor_alone",
						"floor_together"};

/* One per thread, on its own cache lines: samples are written between batches. */
struct worker {
	pthread_t thread;
	int index;
	int cpu;
	uint64_t ring_bytes;
	double samples[PHASES][RUNS];
} __attribute__((aligned(64)));

/* Written by the main thread between phases only; read by the workers. */
static struct {
	pthread_barrier_t start, done;
	enum phase phase;
	unsigned members; /* bit i: worker i runs in this phase */
	int run;	  /* < 0: warm-up, not kept */
	int quit;
} control;

/* The start line of a phase: written before the batches, never during them. */
static unsigned at_start_line __attribute__((aligned(64)));

static struct worker workers[THREADS];

static void run_phase(struct worker *w)
{
	unsigned members = control.members;
	if (!(members & (1u << w->index)))
		return;
	__atomic_add_fetch(&at_start_line, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&at_start_line, __ATOMIC_ACQUIRE) !=
	       (unsigned)__builtin_popcount(members))
		;
	bench_loop loop = control.phase <= TRACE_TOGETHER ? loop_trace1 : loop_floor32;
	double ns = bench_time_batch(loop, BATCH);
	if (control.run >= 0)
		w->samples[control.phase][control.run] = ns;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	bench_pin(w->cpu);
	floor_ring_create(w->ring_bytes);
	for (;;) {
		pthread_barrier_wait(&control.start);
		if (control.quit)
			break;
		run_phase(w);
		pthread_barrier_wait(&control.done);
	}
	floor_ring_destroy();
	return NULL;
}

static void phase(enum phase p, unsigned members, int run)
{
	control.phase = p;
	control.members = members;
	control.run = run;
	__atomic_store_n(&at_start_line, 0, __ATOMIC_RELAXED);
	pthread_barrier_wait(&control.start);
	pthread_barrier_wait(&control.done);
}

static void round_of_phases(int run)
{
	phase(TRACE_ALONE, 1u << 0, run);
	phase(TRACE_ALONE, 1u << 1, run);
	phase(TRACE_TOGETHER, 3u, run);
	phase(FLOOR_ALONE, 1u << 0, run);
	phase(FLOOR_ALONE, 1u << 1, run);
	phase(FLOOR_TOGETHER, 3u, run);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s ARENA RING_BYTES\n", argv[0]);
		return 2;
	}
	uint64_t ring_bytes = strtoull(argv[2], NULL, 0);
	if (ring_bytes < 4096 || (ring_bytes & (ring_bytes - 1))) {
		fprintf(stderr, "%s: RING_BYTES must be a power of two >= 4096\n", argv[0]);
		return 2;
	}
	int cpus[THREADS];
	if (bench_allowed_cpus(cpus, THREADS) < THREADS) {
		fprintf(stderr, "%s: needs %d CPUs, this process may use fewer\n", argv[0],
			THREADS);
		return BENCH_SKIPPED;
	}
	struct ringtrace_options options = {.size = sizeof(options),
					    .arena_path = argv[1],
					    .buffer_bytes = ring_bytes,
					    .mode = RINGTRACE_FLIGHT,
					    .rings = THREADS};
	int err = ringtrace_init(&options);
	if (err) {
		fprintf(stderr, "%s: ringtrace_init failed (%d)\n", argv[0], err);
		return 1;
	}

	pthread_barrier_init(&control.start, NULL, THREADS + 1);
	pthread_barrier_init(&control.done, NULL, THREADS + 1);
	for (int i = 0; i < THREADS; i++) {
		workers[i].index = i;
		workers[i].cpu = cpus[i];
		workers[i].ring_bytes = ring_bytes;
		if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0) {
			fprintf(stderr, "%s: cannot create a thread\n", argv[0]);
			return 1;
		}
	}
	round_of_phases(-1);
	for (int run = 0; run < RUNS; run++)
		round_of_phases(run);
	control.quit = 1;
	pthread_barrier_wait(&control.start);
	for (int i = 0; i < THREADS; i++)
		pthread_join(workers[i].thread, NULL);

	if (!ringtrace_enabled()) {
		fprintf(stderr, "%s: tracing turned itself off: the figures mean nothing\n",
			argv[0]);
		return 1;
	}
	for (int i = 0; i < THREADS; i++) {
		for (int p = 0; p < PHASES; p++) {
			double *v = workers[i].samples[p];
			double p10 = bench_quantile(v, RUNS, 0.1);
			double median = bench_quantile(v, RUNS, 0.5);
			double p90 = bench_quantile(v, RUNS, 0.9);
			char name[64];
			snprintf(name, sizeof(name), "%s_%d", phase_names[p], i);
			bench_note("thread %d on cpu %d, %-15s median %6.2f ns/event (p10 %.2f, "
				   "p90 %.2f; %d runs of %u)",
				   i, workers[i].cpu, phase_names[p], median, p10, p90, RUNS,
				   BATCH);
			bench_result(name, median);
		}
	}
	ringtrace_shutdown();
	return 0;
}
