/*
 * loops.c - the loops under test (loops.h).  Each argument is derived from
 * the loop counter, so that no store repeats the last one's value.
 */
#include <ringtrace.h>

#include "floor.h"
#include "loops.h"

void loop_trace1(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		RT_TRACE("bench: one argument", i);
}

/* The pairs: n events each, so that their figures are per event like the rest. */
void loop_trace_pair(uint64_t n)
{
	for (uint64_t i = 0; i < n / 2; i++) {
		RT_TRACE("bench: pair, first", i);
		RT_TRACE("bench: pair, second", i);
	}
}

void loop_span_pair(uint64_t n)
{
	for (uint64_t i = 0; i < n / 2; i++) {
		RT_BEGIN("bench: span", i);
		RT_END("bench: span", i);
	}
}

void loop_scope(uint64_t n)
{
	for (uint64_t i = 0; i < n / 2; i++) {
		RT_SCOPE("bench: scope");
	}
}

void loop_trace2(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		RT_TRACE("bench: two int arguments", (int)i, (int)~i);
}

void loop_trace6(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		RT_TRACE("bench: six arguments", i, i + 1, i + 2, i + 3, i + 4, i + 5);
}

void loop_floor32(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		floor_event32(1, i);
}

void loop_floor64(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		floor_event64(2, (uint32_t)i, (uint32_t)(i + 1), (uint32_t)(i + 2),
			      (uint32_t)(i + 3), i + 4, i + 5);
}

/* Read by nobody: the counter values must be used, as a tracer uses them. */
static uint64_t loop_counter_sink;

void loop_counter(uint64_t n)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i < n; i++)
		sum += floor_counter();
	__atomic_store_n(&loop_counter_sink, sum, __ATOMIC_RELAXED);
}
