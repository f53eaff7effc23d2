/*
 * trace_file_workload.c - a trace file of N events for the `summary`
 * benchmark: T threads of one process, each with its own ring, events of
 * 1 and 2 arguments (one slot each) interleaved in time, written as the
 * collector writes stream-mode files (tests/lib/trace_gen.h).
 *
 *   bench_trace_file_workload OUT EVENTS [THREADS [DRAIN]]
 *
 * DRAIN: write every ring's pending block each DRAIN events, as a collector
 * that drains often writes many small blocks (0: full blocks only).
 *
 * Prints "result events N" and "result bytes B" for scripts/bench.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../tests/lib/trace_gen.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s OUT EVENTS [THREADS]\n", argv[0]);
		return 2;
	}
	uint64_t events = strtoull(argv[2], NULL, 10);
	uint32_t threads = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 4;
	if (threads < 1 || threads > TG_MAX_RINGS)
		threads = 4;
	uint64_t drain = argc > 4 ? strtoull(argv[4], NULL, 10) : 0;
	static struct tg g;
	tg_init(&g);
	tg_add_source(&g, 0, 4000, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_site(&g, 0, 1, "request", 1, 10);
	tg_add_site(&g, 0, 2, "reply", 2, 20);
	tg_add_site(&g, 0, 3, "tick", 0, 30);
	for (uint32_t t = 0; t < threads; t++) {
		char name[16];
		snprintf(name, sizeof(name), "worker%u", t);
		tg_add_thread(&g, 0, (int32_t)(4001 + t), name, t, TG_START_NS);
	}
	tg_open(&g, argv[1], 0xbe11c4, 0);
	tg_file_head(&g);
	for (uint64_t i = 0; i < events; i++) {
		tg_event(&g, 0, (uint32_t)(i % threads), 1 + (uint32_t)(i % 3),
			 TG_START_NS + 1000 + i * 7, (uint32_t)i);
		if (drain && (i + 1) % drain == 0)
			tg_flush_all(&g);
	}
	tg_close(&g, RT_FILE_END_FINISHED);
	printf("result events %llu\nresult bytes %llu\n", (unsigned long long)events,
	       (unsigned long long)g.bytes);
	return 0;
}
