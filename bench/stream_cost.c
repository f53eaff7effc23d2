/*
 * stream_cost.c - RT_TRACE in one thread, timed: what an event costs the
 * program while a collector reads its ring.  scripts/bench runs it in
 * flight mode with no collector, and under `ringtrace record` (stream
 * mode) and `ringtrace record --drop`.
 *
 *   bench_stream_cost EVENTS
 *	flat out: EVENTS events in one loop.  A thread that never stops
 *	writes faster than one collector drains, so under `record` this
 *	times the collector's pace (the thread waits for room).
 *   bench_stream_cost --paced BATCHES BATCH PAUSE_US
 *	BATCHES loops of BATCH events, PAUSE_US microseconds apart: bursts
 *	that the ring absorbs while the collector drains the one before,
 *	as programs trace.  This times the writer's own cost beside a
 *	running collector.
 *
 * Prints
 *   result ns_per_event X   (flat out: the loop's time over EVENTS;
 *			      paced: the median batch's time over BATCH)
 *   result spread X	     (paced: the 90th percentile batch over the 10th)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringtrace.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static uint64_t number(const char *s, const char *what)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);
	if (!*s || *end || v == 0) {
		fprintf(stderr, "bench_stream_cost: %s must be a positive number, not '%s'\n", what,
			s);
		exit(2);
	}
	return v;
}

static int paced(uint64_t batches, uint64_t batch, uint64_t pause_us)
{
	double *ns = malloc(batches * sizeof(*ns));
	if (!ns) {
		perror("bench_stream_cost");
		return 1;
	}
	RT_TRACE("start", batches); /* the arena is made before the first batch */
	const struct timespec pause = {(time_t)(pause_us / 1000000),
				       (long)(pause_us % 1000000) * 1000};
	for (uint64_t b = 0; b < batches; b++) {
		uint64_t start = now_ns();
		for (uint64_t i = 0; i < batch; i++)
			RT_TRACE("event", i);
		ns[b] = (double)(now_ns() - start) / (double)batch;
		nanosleep(&pause, NULL);
	}
	qsort(ns, batches, sizeof(*ns), by_value);
	printf("result ns_per_event %.3f\n", ns[batches / 2]);
	printf("result spread %.3f\n", ns[batches * 9 / 10] / ns[batches / 10]);
	free(ns);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--paced") == 0)
		return paced(number(argv[2], "BATCHES"), number(argv[3], "BATCH"),
			     number(argv[4], "PAUSE_US"));
	if (argc != 2) {
		fprintf(stderr, "usage: bench_stream_cost EVENTS\n"
				"       bench_stream_cost --paced BATCHES BATCH PAUSE_US\n");
		return 2;
	}
	uint64_t events = number(argv[1], "EVENTS");
	RT_TRACE("start", events); /* the arena is made before the clock starts */
	uint64_t start = now_ns();
	for (uint64_t i = 0; i < events; i++)
		RT_TRACE("event", i);
	uint64_t end = now_ns();
	printf("result ns_per_event %.3f\n", (double)(end - start) / (double)events);
	return 0;
}
