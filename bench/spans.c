/*
 * spans.c - what a span marked in the source costs (RT_BEGIN + RT_END, and
 * an RT_SCOPE) beside two RT_TRACEs measured in the same process: a span's
 * two ends are ordinary trace events and must cost what RT_TRACE costs.
 *
 *     bench_spans ARENA RING_BYTES
 *
 * As bench_fast_path: flight mode, the ring wrapping many times per batch.
 * Prints, in nanoseconds per event (two events per pair; measure.h says how):
 *   trace_pair  two RT_TRACEs with one argument each
 *   span_pair   RT_BEGIN and RT_END with one argument each
 *   scope       a block with an RT_SCOPE (its begin and its end; no arguments)
 */
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

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
	    {.name = "two RT_TRACEs", .loop = loop_trace_pair},
	    {.name = "RT_BEGIN + RT_END", .loop = loop_span_pair},
	    {.name = "RT_SCOPE", .loop = loop_scope},
	};
	bench_note("ring %llu bytes, %u events per batch", (unsigned long long)ring_bytes, BATCH);
	bench_compare(cases, sizeof(cases) / sizeof(cases[0]), BATCH, RUNS);
	if (bench_tracing_failed(argv[0]))
		return 1;

	bench_result("trace_pair", cases[0].median);
	bench_result("span_pair", cases[1].median);
	bench_result("scope", cases[2].median);
	bench_stop();
	return 0;
}
