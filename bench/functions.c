/*
 * functions.c - what one traced function call (enter plus exit) costs,
 * beside the floor of bench_fast_path (floor.h) measured in the same
 * process.
 *
 *     bench_functions ARENA RING_BYTES
 *
 * The function is empty and built with -finstrument-functions (fn_empty.c);
 * this file is not, so the loop itself makes no events.  Every batch wraps
 * the ring many times.  Prints, in nanoseconds per call or event:
 *   call     one call of the instrumented function: its enter and exit events
 *   plain    one call of the same function built without the hooks
 *   floor32  the floor of one 32-byte event, as in bench_fast_path
 *   floor64  the floor of one 64-byte event (an enter or exit is 64 bytes)
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

void bench_fn_traced(void);
void bench_fn_plain(void);

static void loop_traced_call(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		bench_fn_traced();
}

static void loop_plain_call(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		bench_fn_plain();
}

int main(int argc, char **argv)
{
	uint64_t ring_bytes;
	int status = bench_start(argc, argv, &ring_bytes);
	if (status)
		return status;

	struct bench_case cases[] = {
	    {.name = "traced call (enter + exit)", .loop = loop_traced_call},
	    {.name = "floor, 32 bytes", .loop = loop_floor32},
	    {.name = "floor, 64 bytes", .loop = loop_floor64},
	    {.name = "the call without the hooks", .loop = loop_plain_call},
	};
	bench_note("ring %llu bytes: %llu slots, %u calls per batch",
		   (unsigned long long)ring_bytes, (unsigned long long)(ring_bytes / 32), BATCH);
	bench_compare(cases, sizeof(cases) / sizeof(cases[0]), BATCH, RUNS);
	if (bench_tracing_failed(argv[0]))
		return 1;

	bench_result("call", cases[0].median);
	bench_result("floor32", cases[1].median);
	bench_result("floor64", cases[2].median);
	bench_result("plain", cases[3].median);
	bench_stop();
	return 0;
}
