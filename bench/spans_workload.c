/*
 * spans_workload.c - a trace file of N events for the `analyze spans` and
 * `analyze latency` benchmarks: T threads of one process, each repeating
 * outer() > BEGIN "step" > "request" > inner() .. "reply" < END "step" <
 * outer(), eight events a round (function enters and exits of two slots,
 * the rest of one), interleaved in time, written as the collector writes
 * stream-mode files (tests/lib/trace_gen.h).
 *
 *   bench_spans_workload OUT EVENTS [THREADS]
 *
 * Prints "result events N" and "result bytes B" for scripts/bench.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../tests/lib/trace_gen.h"

enum { ENTER = 1, EXIT, BEGIN, END, REQUEST, REPLY };

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
	static struct tg g;
	tg_init(&g);
	tg_add_source(&g, 0, 4000, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_kind_site(&g, 0, ENTER, "enter", RT_SITE_ENTER, 6, 0);
	tg_add_kind_site(&g, 0, EXIT, "exit", RT_SITE_EXIT, 6, 0);
	tg_add_kind_site(&g, 0, BEGIN, "step", RT_SITE_BEGIN, 1, 10);
	tg_add_kind_site(&g, 0, END, "step", RT_SITE_END, 1, 20);
	tg_add_site(&g, 0, REQUEST, "request", 1, 30);
	tg_add_site(&g, 0, REPLY, "reply", 1, 40);
	for (uint32_t t = 0; t < threads; t++) {
		char name[16];
		snprintf(name, sizeof(name), "worker%u", t);
		tg_add_thread(&g, 0, (int32_t)(4001 + t), name, t, TG_START_NS);
	}
	tg_open(&g, argv[1], 0x5ba115, 0);
	tg_file_head(&g);
	const uint64_t outer = 0x401000, inner = 0x402000;
	for (uint64_t i = 0; i < events; i++) {
		uint32_t ring = (uint32_t)(i % threads);
		uint64_t n = i / threads; /* the thread's own event number */
		uint64_t round = n / 8;
		/* 128 ns between a thread's events, plus up to 84: durations of a few sizes, in
		 * order */
		uint64_t t = TG_START_NS + 1000 + i * 32 + (round % 13) * (n % 8);
		uint32_t id = (uint32_t)(round * threads + ring);
		switch (n % 8) {
		case 0:
			tg_function(&g, 0, ring, ENTER, t, 0, 0, outer, 0x400100);
			break;
		case 1:
			tg_event(&g, 0, ring, BEGIN, t, id);
			break;
		case 2:
			tg_event(&g, 0, ring, REQUEST, t, id);
			break;
		case 3:
			tg_function(&g, 0, ring, ENTER, t, 1, 0, inner, outer + 16);
			break;
		case 4:
			tg_function(&g, 0, ring, EXIT, t, 1, 0, inner, outer + 16);
			break;
		case 5:
			tg_event(&g, 0, ring, REPLY, t, id);
			break;
		case 6:
			tg_event(&g, 0, ring, END, t, id);
			break;
		case 7:
			tg_function(&g, 0, ring, EXIT, t, 0, 0, outer, 0x400100);
			break;
		}
	}
	tg_close(&g, RT_FILE_END_FINISHED);
	printf("result events %llu\nresult bytes %llu\n", (unsigned long long)events,
	       (unsigned long long)g.bytes);
	return 0;
}
