/*
 * stream_cost.c - RT_TRACE flat out in one thread, timed: what an event
 * costs the program.  scripts/bench runs it in flight mode with no
 * collector, and under `ringtrace record` (stream mode: the thread waits
 * when its ring is full) and `ringtrace record --drop`.
 *
 *   bench_stream_cost EVENTS
 *
 * Prints
 *   result ns_per_event X   (the loop's time over EVENTS)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <ringtrace.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench_stream_cost EVENTS\n");
		return 2;
	}
	uint64_t events = strtoull(argv[1], NULL, 10);
	if (!events) {
		fprintf(stderr, "bench_stream_cost: EVENTS must be positive\n");
		return 2;
	}
	RT_TRACE("start", events); /* the arena is made before the clock starts */
	uint64_t start = now_ns();
	for (uint64_t i = 0; i < events; i++)
		RT_TRACE("event", i);
	uint64_t end = now_ns();
	printf("result ns_per_event %.3f\n", (double)(end - start) / (double)events);
	return 0;
}
