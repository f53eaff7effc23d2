/*
 * log.c - what one RT_LOG call costs, beside the floor of bench_fast_path
 * (floor.h) measured in the same process.
 *
 *     bench_log ARENA RING_BYTES
 *
 * Every batch wraps the ring many times.  Prints, in nanoseconds per call:
 *   ints     RT_LOG with three integer arguments (a 40-byte record: 2 slots)
 *   string   RT_LOG with one integer and a 20-byte string (copied: 3 slots)
 *   off      RT_LOG below the threshold (RT_DEBUG while it is RT_INFO)
 *   floor32  the floor of one 32-byte event, as in bench_fast_path
 *   floor64  the floor of one 64-byte event
 */
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

#include "floor.h"
#include "loops.h"
#include "measure.h"

#define BATCH (1u << 16)
#define RUNS 201

static const char *volatile twenty = "twenty bytes of text";

static void loop_ints(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		RT_LOG(RT_INFO, "request %llu from %d took %u us", (unsigned long long)i, 7,
		       (unsigned)i);
}

static void loop_string(uint64_t n)
{
	const char *s = twenty;
	for (uint64_t i = 0; i < n; i++)
		RT_LOG(RT_INFO, "request %llu from %s", (unsigned long long)i, s);
}

static void loop_off(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		RT_LOG(RT_DEBUG, "request %llu from %d took %u us", (unsigned long long)i, 7,
		       (unsigned)i);
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
	ringtrace_set_level(RT_INFO);
	floor_ring_create(ring_bytes);

	struct bench_case cases[] = {
	    {.name = "RT_LOG, three integers", .loop = loop_ints},
	    {.name = "RT_LOG, a 20-byte string", .loop = loop_string},
	    {.name = "RT_LOG below the threshold", .loop = loop_off},
	    {.name = "floor, 32 bytes", .loop = loop_floor32},
	    {.name = "floor, 64 bytes", .loop = loop_floor64},
	};
	bench_note("ring %llu bytes: %llu slots, %u calls per batch",
		   (unsigned long long)ring_bytes, (unsigned long long)(ring_bytes / 32), BATCH);
	bench_compare(cases, sizeof(cases) / sizeof(cases[0]), BATCH, RUNS);
	if (!ringtrace_enabled()) {
		fprintf(stderr, "%s: tracing turned itself off: the figures mean nothing\n",
			argv[0]);
		return 1;
	}
	bench_note("floor ring checksum %llx", (unsigned long long)floor_checksum());
	bench_result("ints", cases[0].median);
	bench_result("string", cases[1].median);
	bench_result("off", cases[2].median);
	bench_result("floor32", cases[3].median);
	bench_result("floor64", cases[4].median);
	ringtrace_shutdown();
	floor_ring_destroy();
	return 0;
}
