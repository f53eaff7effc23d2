/*
 * symbolize.c - the symbolizer's rate once a module is loaded, beside its
 * floor: a plain hash-table lookup of the same addresses.
 *
 *   bench_symbolize [LOOKUPS]      (default 10 000 000)
 *
 * The program resolves addresses in its own BENCH_SYM_FUNCS generated
 * functions (symbolize_funcs.c, built -O0 -g): each function's entry and
 * three addresses inside it, drawn at random.  Prints
 *   result symbolize_per_s  addresses resolved per second, caches warm
 *   result floor_per_s      lookups per second in an address -> pointer table
 *   result cold_per_s       first resolutions per second, the module already read
 *   result load_ms          reading the module: its first resolution
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "measure.h"
#include "symbols/symbolizer.h"

#define BENCH_SYM_FUNCS 4096
#define BENCH_SYM_OFFSETS 4
#define BENCH_SYM_DRAWS (1u << 20)

typedef int (*bench_sym_fn)(int);
extern const bench_sym_fn bench_sym_table[BENCH_SYM_FUNCS];

static const unsigned offsets[BENCH_SYM_OFFSETS] = {0, 1, 4, 8};

static int main_base(struct dl_phdr_info *info, size_t size, void *data)
{
	*(uint64_t *)data = info->dlpi_addr;
	return 1; /* the program comes first */
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* the floor: open addressing, the same hash and load as the symbolizer's table */
struct floor_slot {
	uint64_t addr;
	const void *value;
};

static size_t floor_index(uint64_t addr, unsigned bits)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

int main(int argc, char **argv)
{
	uint64_t lookups = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000u;
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0) {
		perror("bench_symbolize: /proc/self/exe");
		return 1;
	}
	path[n] = '\0';
	uint64_t base = 0;
	dl_iterate_phdr(main_base, &base);

	size_t pool_n = BENCH_SYM_FUNCS * BENCH_SYM_OFFSETS;
	uint64_t *pool = malloc(pool_n * sizeof(*pool));
	uint32_t *draws = malloc(BENCH_SYM_DRAWS * sizeof(*draws));
	unsigned bits = 1;
	while (((size_t)1 << bits) < 2 * pool_n)
		bits++;
	struct floor_slot *table = calloc((size_t)1 << bits, sizeof(*table));
	if (!pool || !draws || !table) {
		fprintf(stderr, "bench_symbolize: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < pool_n; i++)
		pool[i] = (uint64_t)(uintptr_t)bench_sym_table[i / BENCH_SYM_OFFSETS] +
			  offsets[i % BENCH_SYM_OFFSETS];
	for (size_t i = 0; i < BENCH_SYM_DRAWS; i++)
		draws[i] = (uint32_t)(rng() % pool_n);

	char err[256];
	struct rt_symbolizer *sym = rt_symbolizer_create(NULL, 0, err, sizeof(err));
	if (!sym) {
		fprintf(stderr, "bench_symbolize: %s\n", err);
		return 1;
	}
	struct rt_module_desc desc = {.path = path, .base = base};
	int mod = rt_symbolizer_add_module(sym, &desc);

	/* the module is read on its first resolution: an address outside the pool */
	struct rt_symbol first;
	uint64_t t0 = bench_now_ns();
	rt_symbolizer_resolve(sym, mod, (uint64_t)(uintptr_t)main, &first);
	uint64_t load_ns = bench_now_ns() - t0;
	if (!first.func) {
		fprintf(stderr, "bench_symbolize: %s has no name for main\n", path);
		return 1;
	}

	/* cold: each pool address once, in random order */
	uint64_t named = 0;
	t0 = bench_now_ns();
	for (size_t i = 0; i < pool_n; i++) {
		struct rt_symbol s;
		rt_symbolizer_resolve(sym, mod, pool[(i * 7919) % pool_n], &s);
		named += s.func != NULL && s.line != 0;
	}
	uint64_t cold_ns = bench_now_ns() - t0;
	if (named != pool_n) {
		fprintf(stderr, "bench_symbolize: only %ju of %zu addresses have a name and line\n",
			(uintmax_t)named, pool_n);
		return 1;
	}

	uint64_t sum = 0;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < lookups; i++) {
		struct rt_symbol s;
		rt_symbolizer_resolve(sym, mod, pool[draws[i & (BENCH_SYM_DRAWS - 1)]], &s);
		sum += s.line;
	}
	uint64_t warm_ns = bench_now_ns() - t0;

	size_t mask = ((size_t)1 << bits) - 1;
	for (size_t i = 0; i < pool_n; i++) {
		size_t j = floor_index(pool[i], bits);
		while (table[j].value)
			j = (j + 1) & mask;
		table[j].addr = pool[i];
		table[j].value = &pool[i];
	}
	uint64_t floor_sum = 0;
	t0 = bench_now_ns();
	for (uint64_t i = 0; i < lookups; i++) {
		uint64_t a = pool[draws[i & (BENCH_SYM_DRAWS - 1)]];
		size_t j = floor_index(a, bits);
		while (table[j].addr != a)
			j = (j + 1) & mask;
		floor_sum += *(const uint64_t *)table[j].value & 0xff;
	}
	uint64_t floor_ns = bench_now_ns() - t0;

	fprintf(stderr,
		"bench_symbolize: %d functions, %zu distinct addresses, %ju lookups; "
		"load %.1f ms, cold %.3f s, warm %.3f s, floor %.3f s (checks %ju %ju)\n",
		BENCH_SYM_FUNCS, pool_n, (uintmax_t)lookups, load_ns / 1e6, cold_ns / 1e9,
		warm_ns / 1e9, floor_ns / 1e9, (uintmax_t)sum, (uintmax_t)floor_sum);
	printf("result symbolize_per_s %.0f\n", lookups / (warm_ns / 1e9));
	printf("result floor_per_s %.0f\n", lookups / (floor_ns / 1e9));
	printf("result cold_per_s %.0f\n", pool_n / (cold_ns / 1e9));
	printf("result load_ms %.3f\n", load_ns / 1e6);
	rt_symbolizer_destroy(sym);
	free(table);
	free(draws);
	free(pool);
	return 0;
}
