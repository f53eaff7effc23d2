/*
 * log_render.c - how fast the tool turns RT_LOG records into text: the
 * formatter (src/decode/printf_render.c) over typical messages, a few
 * integers and a short string each, beside snprintf of the same messages
 * with the real C arguments.
 *
 *   bench_log_render [MESSAGES]      (default 10 000 000)
 *
 * Prints
 *   result render_per_s    messages rendered per second by rt_printf_render
 *   result snprintf_per_s  the same messages per second by snprintf
 *   result general_per_s   messages per second by rt_printf_render when each
 *                          has conversions the fast paths leave to snprintf
 *                          ("took %.3f ms, %-8s %08x")
 * each the best of 5 runs, the two interleaved, pinned to one CPU.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode/printf_render.h"
#include "measure.h"

#define RUNS 5

/* the message shapes, taken in turn; every one hits the fast paths */
static const char *const formats[] = {
    "request %d from %s took %u us",
    "connection %s:%u closed after %llu bytes (%d errors)",
    "cache miss key=%s slot=%zu hash=%x",
    "worker %d state %c -> %c at %p",
};
#define SHAPES (sizeof(formats) / sizeof(formats[0]))

static const char *const names[] = {"alpha", "10.0.0.17", "user:4711", "session-b"};

/* compound literals, not functions: returning a union with a long double
   draws an ABI note from gcc */
#define sv(x) ((struct rt_log_value){.kind = RT_LOG_VALUE_SIGNED, .size = 4, .v.i = (x)})
#define uv(x, bytes)                                                                               \
	((struct rt_log_value){.kind = RT_LOG_VALUE_UNSIGNED, .size = (bytes), .v.u = (x)})
#define str(x)                                                                                     \
	((struct rt_log_value){                                                                    \
	    .kind = RT_LOG_VALUE_STRING, .size = 8, .len = (uint32_t)strlen(x), .s = (x)})

/* message i's arguments, as recorded */
static size_t arguments(uint64_t i, struct rt_log_value *a)
{
	const char *name = names[i % 4];
	switch (i % SHAPES) {
	case 0:
		a[0] = sv((int)(i & 0xffff)), a[1] = str(name), a[2] = uv(i % 100000, 4);
		return 3;
	case 1:
		a[0] = str(name), a[1] = uv(i & 0xffff, 4), a[2] = uv(i * 1500, 8), a[3] = sv(0);
		return 4;
	case 2:
		a[0] = str(name), a[1] = uv(i & 1023, 8), a[2] = uv((uint32_t)(i * 2654435761u), 4);
		return 3;
	default:
		a[0] = sv((int)(i & 63)), a[1] = sv('R'), a[2] = sv('S');
		a[3] = (struct rt_log_value){
		    .kind = RT_LOG_VALUE_POINTER, .size = 8, .v.u = 0x7f0012345000u + i * 64};
		return 4;
	}
}

/* the same message, by snprintf with the C arguments */
static int c_message(char *out, size_t size, uint64_t i)
{
	const char *name = names[i % 4];
	switch (i % SHAPES) {
	case 0:
		return snprintf(out, size, "request %d from %s took %u us", (int)(i & 0xffff), name,
				(unsigned)(i % 100000));
	case 1:
		return snprintf(out, size, "connection %s:%u closed after %llu bytes (%d errors)",
				name, (unsigned)(i & 0xffff), (unsigned long long)(i * 1500), 0);
	case 2:
		return snprintf(out, size, "cache miss key=%s slot=%zu hash=%x", name,
				(size_t)(i & 1023), (unsigned)(uint32_t)(i * 2654435761u));
	default:
		return snprintf(out, size, "worker %d state %c -> %c at %p", (int)(i & 63), 'R',
				'S', (void *)(uintptr_t)(0x7f0012345000u + i * 64));
	}
}

#define POOL 4096 /* messages prepared ahead, reused in turn */

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000u;
	int cpus[1];
	if (bench_allowed_cpus(cpus, 1) > 0)
		bench_pin(cpus[0]);

	static struct rt_log_value args[POOL][4];
	static size_t nargs[POOL];
	for (uint64_t i = 0; i < POOL; i++)
		nargs[i] = arguments(i, args[i]);

	/* the two must agree before either is timed */
	char a[256], b[256];
	for (uint64_t i = 0; i < POOL; i++) {
		size_t r = rt_printf_render(a, sizeof(a), formats[i % SHAPES], args[i], nargs[i]);
		int e = c_message(b, sizeof(b), i);
		if (e < 0 || r != (size_t)e || strcmp(a, b) != 0) {
			fprintf(stderr, "bench_log_render: message %ju differs: \"%s\" vs \"%s\"\n",
				(uintmax_t)i, a, b);
			return 1;
		}
	}

	double best_render = 0, best_snprintf = 0;
	uint64_t bytes = 0;
	for (int run = 0; run < RUNS; run++) {
		uint64_t t0 = bench_now_ns();
		for (uint64_t i = 0; i < n; i++) {
			size_t k = i & (POOL - 1);
			bytes +=
			    rt_printf_render(a, sizeof(a), formats[k % SHAPES], args[k], nargs[k]);
		}
		uint64_t t1 = bench_now_ns();
		for (uint64_t i = 0; i < n; i++)
			bytes += (uint64_t)c_message(b, sizeof(b), i & (POOL - 1));
		uint64_t t2 = bench_now_ns();
		double render = n / ((t1 - t0) / 1e9), snp = n / ((t2 - t1) / 1e9);
		bench_note("bench_log_render: run %d: render %.2f M/s, snprintf %.2f M/s", run,
			   render / 1e6, snp / 1e6);
		if (render > best_render)
			best_render = render;
		if (snp > best_snprintf)
			best_snprintf = snp;
	}
	/* conversions with a precision, width or flags: snprintf behind each */
	struct rt_log_value slow[3] = {
	    {.kind = RT_LOG_VALUE_DOUBLE, .size = 8, .v.d = 12.3456}, str("get"), uv(0xbeef, 4)};
	double best_general = 0;
	for (int run = 0; run < RUNS; run++) {
		uint64_t t0 = bench_now_ns();
		for (uint64_t i = 0; i < n / 4; i++) {
			slow[2].v.u = i;
			bytes += rt_printf_render(a, sizeof(a), "took %.3f ms, %-8s %08x", slow, 3);
		}
		double general = (n / 4) / ((bench_now_ns() - t0) / 1e9);
		if (general > best_general)
			best_general = general;
	}
	bench_note("bench_log_render: %ju messages per run, %ju bytes in all", (uintmax_t)n,
		   (uintmax_t)bytes);
	bench_result("render_per_s", best_render);
	bench_result("snprintf_per_s", best_snprintf);
	bench_result("general_per_s", best_general);
	return 0;
}
