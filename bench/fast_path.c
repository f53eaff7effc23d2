/*
 * fast_path.c - what one RT_TRACE costs in flight mode with its ring
 * wrapping, beside the floor (floor.h) measured in the same process.
 *
 *     bench_fast_path ARENA RING_BYTES
 *
 * Records into a new arena at ARENA (the caller deletes it) with rings of
 * RING_BYTES; the floor's ring has the same size.  Every batch wraps the ring
 * many times, so the figures include ringtrace's once-per-lap slow path.
 * Prints, in nanoseconds per event (measure.h says how):
 *   trace1   RT_TRACE with one argument: one 32-byte slot
 *   floor32  its floor: counter read, 32-byte store, release store of head
 *   trace6   RT_TRACE with six arguments: two slots
 *   floor64  its floor: counter read, 64-byte store, release store of head
 *   counter  the counter read alone, which bounds all of the above
 */
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

#include "floor.h"
#include "loops.h"
#include "measure.h"
#include "setup.h"

#define BATCH (1u << 16)
#define RUNS 201

int main(int argc, char **argv)
{
	uint64_t ring_bytes;
	int status = bench_start(argc, argv, &ring_bytes);
	if (status)
		return status;

	struct bench_case cases[] = {
	    {.name = "RT_TRACE, 1 argument", .loop = loop_trace1},
	    {.name = "floor, 32 bytes", .loop = loop_floor32},
	    {.name = "RT_TRACE, 6 arguments", .loop = loop_trace6},
	    {.name = "floor, 64 bytes", .loop = loop_floor64},
	    {.name = "counter read alone", .loop = loop_counter},
	};
	bench_note("ring %llu bytes: %llu slots, %u events per batch",
		   (unsigned long long)ring_bytes, (unsigned long long)(ring_bytes / 32), BATCH);
	bench_compare(cases, sizeof(cases) / sizeof(cases[0]), BATCH, RUNS);
	if (bench_tracing_failed(argv[0]))
		return 1;

	bench_result("trace1", cases[0].median);
	bench_result("floor32", cases[1].median);
	bench_result("trace6", cases[2].median);
	bench_result("floor64", cases[3].median);
	bench_result("counter", cases[4].median);
	bench_stop();
	return 0;
}
