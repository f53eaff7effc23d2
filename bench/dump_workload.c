/*
 * dump_workload.c - a traced program that fills an arena for the
 * `ringtrace dump --json` throughput figure.
 *
 *     bench_dump_workload ARENA THREADS EVENTS_PER_THREAD
 *
 * THREADS threads each record EVENTS_PER_THREAD events into rings made big
 * enough that nothing is overwritten, so the arena holds exactly
 * THREADS * EVENTS_PER_THREAD events.  The events mix what programs record:
 * four sites with 0, 1, 2 and 6 arguments (the last takes two slots), values
 * that change every event.  The arena is closed cleanly and left at ARENA
 * for the caller to read and delete.  Prints the events recorded.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

#include "measure.h"

/* Ring bytes per event: four events take 1 + 1 + 1 + 2 slots of 32 bytes. */
#define BYTES_PER_EVENT 40u

static uint64_t events_per_thread;

static void *record_events(void *arg)
{
	unsigned id = *(const unsigned *)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%u", id);
	ringtrace_set_thread_name(name);
	for (uint64_t i = 0; i < events_per_thread; i++) {
		switch (i & 3) {
		case 0:
			RT_TRACE("request received", i, id);
			break;
		case 1:
			RT_TRACE("lookup", i * 7);
			break;
		case 2:
			RT_TRACE("reply sent", (int)id, (unsigned)(i >> 2), (short)-1,
				 (int)(i & 0xff), &events_per_thread, (long long)i << 20);
			break;
		default:
			RT_TRACE("idle");
			break;
		}
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
	if (threads < 1 || threads > 64 || events_per_thread < 1) {
		fprintf(stderr, "%s: THREADS must be 1..64 and EVENTS_PER_THREAD >= 1\n", argv[0]);
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
		if (pthread_create(&tids[t], NULL, record_events, &ids[t]) != 0) {
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
		   (unsigned long long)events_per_thread, (unsigned long long)options.buffer_bytes);
	bench_result("events", (double)threads * (double)events_per_thread);
	return 0;
}
