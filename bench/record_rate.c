/*
 * record_rate.c - a producer thread emitting RATE events per second for
 * SECONDS, paced: the program scripts/bench runs under `ringtrace record`
 * (stream mode, default buffers) to see whether the collector keeps up.
 *
 *   bench_record_rate RATE SECONDS
 *
 * Pacing: every 1024 events the thread compares how many it emitted with
 * how many the clock allows by now, and spins until it may go on, so the
 * events come evenly rather than in one burst per second.  When the thread
 * itself lost its CPU for a while it catches up, but at no more than twice
 * RATE (a token bucket of four batches): flat out, for a moment, it would
 * be a producer of 100 M events/s, which is not what is measured.  Prints
 *   result emitted N
 *   result rate R        (events per second achieved)
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
	if (argc != 3) {
		fprintf(stderr, "usage: bench_record_rate RATE SECONDS\n");
		return 2;
	}
	double rate = strtod(argv[1], NULL);
	double seconds = strtod(argv[2], NULL);
	if (rate <= 0 || seconds <= 0) {
		fprintf(stderr, "bench_record_rate: RATE and SECONDS must be positive\n");
		return 2;
	}
	uint64_t total = (uint64_t)(rate * seconds);
	RT_TRACE("start", total); /* the arena is made before the clock starts */
	uint64_t start = now_ns(), refilled = start;
	uint64_t emitted = 0;
	double tokens = 4 * 1024; /* events the catch-up may emit now, at most 4 batches */
	while (emitted < total) {
		uint64_t now = now_ns();
		uint64_t allowed = (uint64_t)((double)(now - start) * rate / 1e9);
		tokens += (double)(now - refilled) * 2 * rate / 1e9;
		refilled = now;
		if (tokens > 4 * 1024)
			tokens = 4 * 1024;
		if (emitted + 1024 > allowed || tokens < 1024)
			continue;
		tokens -= 1024;
		for (unsigned i = 0; i < 1024 && emitted < total; i++, emitted++)
			RT_TRACE("event", emitted);
	}
	double elapsed = (double)(now_ns() - start) / 1e9;
	printf("result emitted %llu\n", (unsigned long long)emitted + 1);
	printf("result rate %.0f\n", (double)emitted / elapsed);
	return 0;
}
