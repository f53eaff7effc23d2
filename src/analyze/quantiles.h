/*
 * quantiles.h - count, total, min, max and quantiles of durations, in
 * bounded memory.
 *
 * Exact while small: the first RT_QUANTILES_EXACT_MAX values are kept and
 * sorted when asked.  Past that the values go into a log-linear sketch:
 * each power of two is cut into 128 equal buckets, so a quantile read from
 * it is the middle of its bucket, within 1/256 (0.4%) of the true value,
 * and values below 128 ns stay exact.  Buckets are allocated a power of two
 * at a time, as values reach it: about 1 KiB per power of two in use, 65
 * KiB at most.  Two sketches merge by adding their counts, so per-thread
 * statistics add up to per-name ones without reading the events again.
 *
 * count, total, min and max are always exact; so is log2_counts, the
 * histogram the terminal and the HTML page draw (bucket b holds the values
 * of bit length b: 0 for 0, 1 for 1, 2 for 2..3, ... 64 for >= 2^63).
 */
#ifndef RT_ANALYZE_QUANTILES_H
#define RT_ANALYZE_QUANTILES_H

#include <stddef.h>
#include <stdint.h>

#define RT_QUANTILES_EXACT_MAX 4096u
#define RT_QUANTILES_SUB_BITS 7u /* 128 buckets per power of two */
#define RT_QUANTILES_LOG2_BUCKETS 65u

struct rt_quantiles {
	uint64_t count;
	uint64_t total; /* saturates at UINT64_MAX instead of wrapping */
	uint64_t min, max;
	uint64_t log2_counts[RT_QUANTILES_LOG2_BUCKETS];
	/* exact: the values so far (count of them), unsorted until asked */
	uint64_t *values;
	size_t values_capacity;
	int sorted;
	/* the sketch, once count passed RT_QUANTILES_EXACT_MAX (values is then NULL) */
	int sketch;
	uint64_t *octaves[64]; /* octave e: counts of [2^e, 2^(e+1)), 128 buckets; e < 7 unused */
	uint64_t *small;       /* counts of 0..127, one each */
};

void rt_quantiles_init(struct rt_quantiles *q);
void rt_quantiles_free(struct rt_quantiles *q);

/* Add one value.  0, or -ENOMEM (the value is then counted in count,
 * total, min, max and log2_counts only, and rt_quantiles_exact() is 0). */
int rt_quantiles_add(struct rt_quantiles *q, uint64_t v);

/* Add everything src holds to dst.  0 or -ENOMEM. */
int rt_quantiles_merge(struct rt_quantiles *dst, const struct rt_quantiles *src);

/*
 * The nearest-rank quantile p (0 < p <= 1: 0.5, 0.9, 0.99): the smallest
 * value with at least ceil(p * count) values at or below it.  0 when empty.
 * Sorts the exact values on first use (so it is not const).
 */
uint64_t rt_quantiles_get(struct rt_quantiles *q, double p);

/* 1 when quantiles are exact, 0 when they come from the sketch (within 0.4%). */
int rt_quantiles_exact(const struct rt_quantiles *q);

/* The bit length of v: the log2_counts bucket v falls in. */
unsigned rt_quantiles_log2_bucket(uint64_t v);

#endif /* RT_ANALYZE_QUANTILES_H */
