/*
 * vs_lttng.c - RT_TRACE beside an LTTng-UST tracepoint, both with two int
 * arguments, measured the same way in the same process (measure.h).
 *
 *     bench_vs_lttng ARENA RING_BYTES
 *
 * The LTTng session must already be running with the event
 * ringtrace_bench:two_ints enabled (scripts/bench sets it up); the
 * tracepoint is enabled when the session daemon registers this process,
 * which we wait for.  If it never is, the comparison means nothing: exits
 * BENCH_SKIPPED.  Prints, in ns per event:
 *   lttng2   tracepoint(ringtrace_bench, two_ints, a, b)
 *   trace2   RT_TRACE("...", a, b) into rings of RING_BYTES, flight mode
 *   floor32  the floor of both (floor.h)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ringtrace.h>

#include "floor.h"
#include "loops.h"
#include "lttng_tp.h"
#include "measure.h"

#define BATCH (1u << 15)
#define RUNS 101
#define ENABLE_TIMEOUT_NS 10000000000ull

static void loop_lttng2(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		tracepoint(ringtrace_bench, two_ints, (int)i, (int)~i);
}

static int wait_until_enabled(void)
{
	uint64_t deadline = bench_now_ns() + ENABLE_TIMEOUT_NS;
	while (!tracepoint_enabled(ringtrace_bench, two_ints)) {
		if (bench_now_ns() > deadline)
			return 0;
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	}
	return 1;
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
	if (!wait_until_enabled()) {
		fprintf(stderr, "no LTTng session enabled ringtrace_bench:two_ints within %llu s\n",
			ENABLE_TIMEOUT_NS / 1000000000ull);
		return BENCH_SKIPPED;
	}
	int cpus[64];
	int ncpus = bench_allowed_cpus(cpus, 64);
	if (ncpus > 0)
		bench_pin(cpus[ncpus - 1]);

	struct ringtrace_options options = {.size = sizeof(options),
					    .arena_path = argv[1],
					    .buffer_bytes = ring_bytes,
					    .mode = RINGTRACE_FLIGHT,
					    .rings = 1};
	int err = ringtrace_init(&options);
	if (err) {
		fprintf(stderr, "%s: ringtrace_init failed (%d)\n", argv[0], err);
		return 1;
	}
	floor_ring_create(ring_bytes);

	struct bench_case cases[] = {
	    {.name = "LTTng-UST tracepoint, 2 ints", .loop = loop_lttng2},
	    {.name = "RT_TRACE, 2 ints", .loop = loop_trace2},
	    {.name = "floor, 32 bytes", .loop = loop_floor32},
	};
	bench_compare(cases, sizeof(cases) / sizeof(cases[0]), BATCH, RUNS);
	if (!ringtrace_enabled()) {
		fprintf(stderr, "%s: tracing turned itself off: the figures mean nothing\n",
			argv[0]);
		return 1;
	}
	bench_result("lttng2", cases[0].median);
	bench_result("trace2", cases[1].median);
	bench_result("floor32", cases[2].median);
	ringtrace_shutdown();
	floor_ring_destroy();
	return 0;
}
