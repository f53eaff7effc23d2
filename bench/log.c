/*
 * log.c - what one RT_LOG call costs, beside the floor of bench_fast_path
 * (floor.h) measured in the same process.
 *
 *     bench_log ARENA RING_BYTES
 *
 * Every batch wraps the ring many times.  Prints, in nanoseconds per call
 * (the median batch), and for each RT_LOG case NAME.spread, its 90th
 * percentile batch over its 10th:
 *   int1     RT_LOG with one integer argument (one slot)
 *   ints     RT_LOG with three integer arguments (two slots)
 *   int6     RT_LOG with six integer arguments (three slots)
 *   string   RT_LOG with one integer and a 20-byte string (copied: 3 slots)
 *   off      RT_LOG below the threshold (RT_LOG_DEBUG while it is RT_LOG_INFO)
 *   floor32  the floor of one 32-byte event, as in bench_fast_path
 *   floor64  the floor of one 64-byte event
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

static const char *volatile twenty = "twenty bytes of text";

static void loop_int1(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		RT_LOG(RT_LOG_INFO, "request %llu", (unsigned long long)i);
}

static void loop_int6(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		RT_LOG(RT_LOG_INFO, "a %llu b %d c %u d %lu e %d f %u", (unsigned long long)i, 7,
		       (unsigned)i, (unsigned long)(i + 3), -4, (unsigned)(i >> 3));
}

static void loop_ints(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		RT_LOG(RT_LOG_INFO, "request %llu from %d took %u us", (unsigned long long)i, 7,
		       (unsigned)i);
}

static void loop_string(uint64_t n)
{
	const char *s = twenty;
	for (uint64_t i = 0; i < n; i++)
		RT_LOG(RT_LOG_INFO, "request %llu from %s", (unsigned long long)i, s);
}

static void loop_off(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		RT_LOG(RT_LOG_DEBUG, "request %llu from %d took %u us", (unsigned long long)i, 7,
		       (unsigned)i);
}

int main(int argc, char **argv)
{
	uint64_t ring_bytes;
	int status = bench_start(argc, argv, &ring_bytes);
	if (status)
		return status;
	ringtrace_set_level(RT_LOG_INFO);

	struct bench_case cases[] = {
	    {.name = "RT_LOG, one integer", .loop = loop_int1},
	    {.name = "RT_LOG, three integers", .loop = loop_ints},
	    {.name = "RT_LOG, six integers", .loop = loop_int6},
	    {.name = "RT_LOG, a 20-byte string", .loop = loop_string},
	    {.name = "RT_LOG below the threshold", .loop = loop_off},
	    {.name = "floor, 32 bytes", .loop = loop_floor32},
	    {.name = "floor, 64 bytes", .loop = loop_floor64},
	};
	static const char *const names[] = {"int1", "ints", "int6", "string", "off"};
	bench_note("ring %llu bytes: %llu slots, %u calls per batch",
		   (unsigned long long)ring_bytes, (unsigned long long)(ring_bytes / 32), BATCH);
	bench_compare(cases, sizeof(cases) / sizeof(cases[0]), BATCH, RUNS);
	if (bench_tracing_failed(argv[0]))
		return 1;
	for (unsigned c = 0; c < sizeof(names) / sizeof(names[0]); c++) {
		char spread[32];
		snprintf(spread, sizeof(spread), "%s.spread", names[c]);
		bench_result(names[c], cases[c].median);
		bench_result(spread, cases[c].p10 > 0 ? cases[c].p90 / cases[c].p10 : 0);
	}
	bench_result("floor32", cases[5].median);
	bench_result("floor64", cases[6].median);
	bench_stop();
	return 0;
}
