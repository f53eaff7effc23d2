/*
 * test_quantiles.c - analyze/quantiles.c against a sorted copy of the same
 * values: exact nearest-rank while small, within the stated 0.4% past the
 * exact limit, merges equal to adding everything to one, and the exact
 * summary (count, total, min, max, log2 histogram) whatever the mode.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/check.h"
#include "analyze/quantiles.h"

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The nearest-rank quantile of sorted[0..n). */
static uint64_t true_quantile(const uint64_t *sorted, size_t n, double p)
{
	uint64_t rank = (uint64_t)(p * (double)n);
	if ((double)rank < p * (double)n)
		rank++;
	if (rank < 1)
		rank = 1;
	return sorted[rank - 1];
}

static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

static const double ps[] = {0.01, 0.25, 0.5, 0.9, 0.99, 0.999};

/* n values spread over many powers of two (1 ns to ~17 s), checked against a sort. */
static void check_against_sort(size_t n, uint64_t seed)
{
	uint64_t *values = malloc(n * sizeof(*values));
	CHECK(values != NULL);
	struct rt_quantiles q;
	rt_quantiles_init(&q);
	uint64_t total = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next_random(&seed);
		values[i] = (r >> 30) >> (r % 34); /* log-uniform-ish */
		total += values[i];
		CHECK_EQ(rt_quantiles_add(&q, values[i]), 0);
	}
	qsort(values, n, sizeof(*values), compare_u64);
	CHECK_EQ(q.count, n);
	CHECK_EQ(q.total, total);
	CHECK_EQ(q.min, values[0]);
	CHECK_EQ(q.max, values[n - 1]);
	uint64_t in_buckets = 0;
	for (unsigned b = 0; b < RT_QUANTILES_LOG2_BUCKETS; b++)
		in_buckets += q.log2_counts[b];
	CHECK_EQ(in_buckets, n);
	CHECK_EQ(rt_quantiles_exact(&q), n <= RT_QUANTILES_EXACT_MAX);
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++) {
		uint64_t want = true_quantile(values, n, ps[k]);
		uint64_t got = rt_quantiles_get(&q, ps[k]);
		if (n <= RT_QUANTILES_EXACT_MAX) {
			CHECK_EQ(got, want);
		} else {
			double err =
			    want ? ((double)got - (double)want) / (double)want : (double)got;
			if (!CHECK(err <= 0.004 && err >= -0.004))
				fprintf(stderr, "n %zu p %g: got %llu want %llu\n", n, ps[k],
					(unsigned long long)got, (unsigned long long)want);
		}
	}
	CHECK_EQ(rt_quantiles_get(&q, 1.0), values[n - 1]);
	rt_quantiles_free(&q);
	free(values);
}

/* Per-part sketches merged equal one sketch of everything. */
static void check_merge(void)
{
	struct rt_quantiles parts[3], all, merged;
	rt_quantiles_init(&all);
	rt_quantiles_init(&merged);
	uint64_t seed = 99;
	size_t sizes[3] = {10, 3000, 9000}; /* exact, exact, sketch */
	for (int p = 0; p < 3; p++) {
		rt_quantiles_init(&parts[p]);
		for (size_t i = 0; i < sizes[p]; i++) {
			uint64_t v = next_random(&seed) % 1000000;
			CHECK_EQ(rt_quantiles_add(&parts[p], v), 0);
			CHECK_EQ(rt_quantiles_add(&all, v), 0);
		}
	}
	/* two exact parts stay exact together */
	CHECK_EQ(rt_quantiles_merge(&merged, &parts[0]), 0);
	CHECK_EQ(rt_quantiles_merge(&merged, &parts[1]), 0);
	CHECK(rt_quantiles_exact(&merged));
	CHECK_EQ(merged.count, 3010);
	CHECK_EQ(rt_quantiles_merge(&merged, &parts[2]), 0);
	CHECK(!rt_quantiles_exact(&merged));
	CHECK_EQ(merged.count, all.count);
	CHECK_EQ(merged.total, all.total);
	CHECK_EQ(merged.min, all.min);
	CHECK_EQ(merged.max, all.max);
	CHECK(memcmp(merged.log2_counts, all.log2_counts, sizeof(all.log2_counts)) == 0);
	for (size_t k = 0; k < sizeof(ps) / sizeof(ps[0]); k++)
		CHECK_EQ(rt_quantiles_get(&merged, ps[k]), rt_quantiles_get(&all, ps[k]));
	for (int p = 0; p < 3; p++)
		rt_quantiles_free(&parts[p]);
	rt_quantiles_free(&all);
	rt_quantiles_free(&merged);
}

int main(void)
{
	struct rt_quantiles q;
	rt_quantiles_init(&q);
	CHECK_EQ(rt_quantiles_get(&q, 0.5), 0);
	CHECK_EQ(q.count, 0);
	rt_quantiles_free(&q);

	CHECK_EQ(rt_quantiles_log2_bucket(0), 0);
	CHECK_EQ(rt_quantiles_log2_bucket(1), 1);
	CHECK_EQ(rt_quantiles_log2_bucket(3), 2);
	CHECK_EQ(rt_quantiles_log2_bucket(UINT64_MAX), 64);

	/* the total saturates instead of wrapping */
	rt_quantiles_init(&q);
	CHECK_EQ(rt_quantiles_add(&q, UINT64_MAX - 1), 0);
	CHECK_EQ(rt_quantiles_add(&q, 5), 0);
	CHECK_EQ(q.total, UINT64_MAX);
	rt_quantiles_free(&q);

	check_against_sort(1, 1);
	check_against_sort(7, 2);
	check_against_sort(RT_QUANTILES_EXACT_MAX, 3);
	check_against_sort(RT_QUANTILES_EXACT_MAX + 1, 4);
	check_against_sort(200000, 5);
	check_merge();
	int failures = check_failure_count();
	printf("test_quantiles: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
