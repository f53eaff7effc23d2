/*
 * setup.c - see setup.h.
 */
#include "setup.h"

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
