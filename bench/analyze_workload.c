/*
 * analyze_workload.c - the input `make bench` times the analyzers on:
 * THREADS threads each recording EVENTS_PER_THREAD events in a loop of
 * five, shaped like a server's requests, so every analyzer has work on
 * every event it is given:
 *
 *   RT_BEGIN("request", id)      a span (spans)
 *   RT_TRACE("enqueue", id)      paired with dequeue by id (latency --key arg0)
 *   RT_TRACE("lookup", shard)    64 argument values (by-arg --arg 0)
 *   RT_TRACE("dequeue", id)
 *   RT_END("request", id)
 *
 * rate and stalls read every event of any kind.  Flight mode with rings
 * large enough that nothing is overwritten.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

#include "measure.h"

/* Ring bytes per event: every event here takes one 32-byte slot. */
#define BYTES_PER_EVENT 36u

static uint64_t events_per_thread;

static void *record_requests(void *arg)
{
	unsigned thread = *(const unsigned *)arg;
	char name[16];
	snprintf(name, sizeof(name), "server-%u", thread);
	ringtrace_set_thread_name(name);
	uint64_t requests = events_per_thread / 5;
	for (uint64_t i = 0; i < requests; i++) {
		uint64_t id = i * 64 + thread; /* unique across threads */
		RT_BEGIN("request", id);
		RT_TRACE("enqueue", id);
		RT_TRACE("lookup", (unsigned)(i * 2654435761u) % 64u);
		RT_TRACE("dequeue", id);
		RT_END("request", id);
	}
	return NULL;
}

static uint64_t ring_bytes_for(uint64_t events)
{
	uint64_t need = events * BYTES_PER_EVENT + 4096; /* a page of slack */
	uint64_t bytes = 4096;
	while (bytes < need)
		bytes *= 2;
	return bytes;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s ARENA THREADS EVENTS_PER_THREAD\n", argv[0]);
		return 2;
	}
	unsigned threads = (unsigned)strtoul(argv[2], NULL, 0);
	events_per_thread = strtoull(argv[3], NULL, 0);
	if (threads < 1 || threads > 64 || events_per_thread < 5) {
		fprintf(stderr, "%s: THREADS must be 1..64 and EVENTS_PER_THREAD >= 5\n", argv[0]);
		return 2;
	}
	struct ringtrace_options options = {.size = sizeof(options),
					    .arena_path = argv[1],
					    .buffer_bytes = ring_bytes_for(events_per_thread),
					    .mode = RINGTRACE_FLIGHT,
					    .rings = threads};
	int err = ringtrace_init(&options);
	if (err) {
		fprintf(stderr, "%s: ringtrace_init failed (%d)\n", argv[0], err);
		return 1;
	}
	pthread_t tids[64];
	unsigned ids[64];
	for (unsigned t = 0; t < threads; t++) {
		ids[t] = t;
		if (pthread_create(&tids[t], NULL, record_requests, &ids[t]) != 0) {
			fprintf(stderr, "%s: cannot create a thread\n", argv[0]);
			return 1;
		}
	}
	for (unsigned t = 0; t < threads; t++)
		pthread_join(tids[t], NULL);
	if (!ringtrace_enabled()) {
		fprintf(stderr, "%s: tracing turned itself off\n", argv[0]);
		return 1;
	}
	ringtrace_shutdown();
	bench_note("%u threads x %llu events, rings of %llu bytes", threads,
		   (unsigned long long)(events_per_thread / 5 * 5),
		   (unsigned long long)options.buffer_bytes);
	bench_result("events", (double)threads * (double)(events_per_thread / 5 * 5));
	return 0;
}
