/*
 * setup.c - see setup.h.
 */
#include "setup.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

#include "floor.h"
#include "measure.h"

int bench_start(int argc, char **argv, uint64_t *ring_bytes)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s ARENA RING_BYTES\n", argv[0]);
		return 2;
	}
	uint64_t bytes = strtoull(argv[2], NULL, 0);
	if (bytes < 4096 || (bytes & (bytes - 1))) {
		fprintf(stderr, "%s: RING_BYTES must be a power of two >= 4096\n", argv[0]);
		return 2;
	}
	int cpus[64];
	int ncpus = bench_allowed_cpus(cpus, 64);
	if (ncpus > 0)
		bench_pin(cpus[ncpus - 1]);

	struct ringtrace_options options = {.size = sizeof(options),
					    .arena_path = argv[1],
					    .buffer_bytes = bytes,
					    .mode = RINGTRACE_FLIGHT,
					    .rings = 1};
	int err = ringtrace_init(&options);
	if (err) {
		fprintf(stderr, "%s: ringtrace_init failed (%d)\n", argv[0], err);
		return 1;
	}
	floor_ring_create(bytes);
	*ring_bytes = bytes;
	return 0;
}

int bench_tracing_failed(const char *program)
{
	if (!ringtrace_enabled()) {
		fprintf(stderr, "%s: tracing turned itself off: the figures mean nothing\n",
			program);
		return 1;
	}
	bench_note("floor ring checksum %llx", (unsigned long long)floor_checksum());
	return 0;
}

void bench_stop(void)
{
	ringtrace_shutdown();
	floor_ring_destroy();
}

static uint64_t ring_bytes_for(uint64_t events, uint64_t bytes_per_event)
{
	uint64_t need = events * bytes_per_event + 4096; /* a page of slack */
	uint64_t bytes = 4096;
	while (bytes < need)
		bytes *= 2;
	return bytes;
}

int bench_workload_run(struct bench_workload *w, int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s ARENA THREADS EVENTS_PER_THREAD\n", argv[0]);
		return 2;
	}
	w->threads = (unsigned)strtoul(argv[2], NULL, 0);
	w->events_per_thread = strtoull(argv[3], NULL, 0);
	if (w->threads < 1 || w->threads > 64 || w->events_per_thread < w->min_events) {
		fprintf(stderr, "%s: THREADS must be 1..64 and EVENTS_PER_THREAD >= %llu\n",
			argv[0], (unsigned long long)w->min_events);
		return 2;
	}
	w->ring_bytes = ring_bytes_for(w->events_per_thread, w->bytes_per_event);
	struct ringtrace_options options = {.size = sizeof(options),
					    .arena_path = argv[1],
					    .buffer_bytes = w->ring_bytes,
					    .mode = RINGTRACE_FLIGHT,
					    .rings = w->threads};
	int err = ringtrace_init(&options);
	if (err) {
		fprintf(stderr, "%s: ringtrace_init failed (%d)\n", argv[0], err);
		return 1;
	}
	pthread_t tids[64];
	unsigned ids[64];
	for (unsigned t = 0; t < w->threads; t++) {
		ids[t] = t;
		if (pthread_create(&tids[t], NULL, w->record, &ids[t]) != 0) {
			fprintf(stderr, "%s: cannot create a thread\n", argv[0]);
			return 1;
		}
	}
	for (unsigned t = 0; t < w->threads; t++)
		pthread_join(tids[t], NULL);
	if (!ringtrace_enabled()) {
		fprintf(stderr, "%s: tracing turned itself off\n", argv[0]);
		return 1;
	}
	ringtrace_shutdown();
	return 0;
}
