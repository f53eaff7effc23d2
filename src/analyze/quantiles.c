/*
 * quantiles.c - exact quantiles while small, a log-linear sketch after.
 * See quantiles.h for the error bound and the memory it takes.
 */
#include "analyze/quantiles.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SUB_COUNT (1u << RT_QUANTILES_SUB_BITS)

void rt_quantiles_init(struct rt_quantiles *q)
{
	memset(q, 0, sizeof(*q));
	q->min = UINT64_MAX;
}

void rt_quantiles_free(struct rt_quantiles *q)
{
	free(q->values);
	free(q->small);
	for (unsigned e = 0; e < 64; e++)
		free(q->octaves[e]);
	rt_quantiles_init(q);
}

unsigned rt_quantiles_log2_bucket(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

/* The sketch's counter for v, allocated on first use; NULL when out of memory. */
static uint64_t *sketch_counter(struct rt_quantiles *q, uint64_t v)
{
	if (v < SUB_COUNT) {
		if (!q->small && !(q->small = calloc(SUB_COUNT, sizeof(uint64_t))))
			return NULL;
		return &q->small[v];
	}
	unsigned e = 63u - (unsigned)__builtin_clzll(v);
	if (!q->octaves[e] && !(q->octaves[e] = calloc(SUB_COUNT, sizeof(uint64_t))))
		return NULL;
	return &q->octaves[e][(v >> (e - RT_QUANTILES_SUB_BITS)) & (SUB_COUNT - 1)];
}

/* The exact values so far go into the sketch; the values array goes. */
static int to_sketch(struct rt_quantiles *q)
{
	size_t n = (size_t)(q->count - 1); /* the value being added is not in values yet */
	if (q->sketch)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t *c = sketch_counter(q, q->values[i]);
		if (!c)
			return -ENOMEM;
		(*c)++;
	}
	free(q->values);
	q->values = NULL;
	q->values_capacity = 0;
	q->sketch = 1;
	return 0;
}

/* A failed allocation leaves the summary exact and the quantiles approximate. */
static int add_quantile_only(struct rt_quantiles *q, uint64_t v)
{
	if (!q->sketch && q->count <= RT_QUANTILES_EXACT_MAX) {
		size_t n = (size_t)(q->count - 1);
		if (n == q->values_capacity) {
			size_t capacity = n ? n * 2 : 16;
			uint64_t *grown = realloc(q->values, capacity * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			q->values = grown;
			q->values_capacity = capacity;
		}
		q->values[n] = v;
		q->sorted = 0;
		return 0;
	}
	int rc = to_sketch(q);
	if (rc)
		return rc;
	uint64_t *c = sketch_counter(q, v);
	if (!c)
		return -ENOMEM;
	(*c)++;
	return 0;
}

int rt_quantiles_add(struct rt_quantiles *q, uint64_t v)
{
	q->count++;
	q->total = q->total + v < q->total ? UINT64_MAX : q->total + v;
	if (v < q->min)
		q->min = v;
	if (v > q->max)
		q->max = v;
	q->log2_counts[rt_quantiles_log2_bucket(v)]++;
	int rc = add_quantile_only(q, v);
	if (rc)
		q->sketch = -1; /* lost a value: quantiles are no longer trustworthy */
	return rc;
}

int rt_quantiles_merge(struct rt_quantiles *dst, const struct rt_quantiles *src)
{
	if (!src->count)
		return 0;
	if (!src->sketch) {
		/* add_quantile_only expects count to include the value */
		for (size_t i = 0; i < (size_t)src->count; i++) {
			uint64_t v = src->values[i];
			int rc = rt_quantiles_add(dst, v);
			if (rc)
				return rc;
		}
		return 0;
	}
	/* src is a sketch: so is dst from now on */
	dst->count++;
	int rc = to_sketch(dst);
	dst->count--;
	if (rc)
		return rc;
	if (src->small) {
		for (unsigned i = 0; i < SUB_COUNT; i++) {
			if (!src->small[i])
				continue;
			uint64_t *c = sketch_counter(dst, i);
			if (!c)
				return -ENOMEM;
			*c += src->small[i];
		}
	}
	for (unsigned e = RT_QUANTILES_SUB_BITS; e < 64; e++) {
		if (!src->octaves[e])
			continue;
		if (!dst->octaves[e] && !(dst->octaves[e] = calloc(SUB_COUNT, sizeof(uint64_t))))
			return -ENOMEM;
		for (unsigned i = 0; i < SUB_COUNT; i++)
			dst->octaves[e][i] += src->octaves[e][i];
	}
	dst->count += src->count;
	dst->total = dst->total + src->total < dst->total ? UINT64_MAX : dst->total + src->total;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	for (unsigned b = 0; b < RT_QUANTILES_LOG2_BUCKETS; b++)
		dst->log2_counts[b] += src->log2_counts[b];
	if (src->sketch < 0)
		dst->sketch = -1;
	return 0;
}

static int compare_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The middle of v's bucket, held inside what was really seen. */
static uint64_t bucket_value(const struct rt_quantiles *q, unsigned e, unsigned i)
{
	uint64_t width = 1ull << (e - RT_QUANTILES_SUB_BITS);
	uint64_t low = (1ull << e) + (uint64_t)i * width;
	uint64_t mid = low + (width - 1) / 2;
	if (mid < q->min)
		return q->min;
	if (mid > q->max)
		return q->max;
	return mid;
}

uint64_t rt_quantiles_get(struct rt_quantiles *q, double p)
{
	if (!q->count)
		return 0;
	if (p >= 1.0)
		return q->max;
	uint64_t rank = (uint64_t)(p * (double)q->count);
	if ((double)rank < p * (double)q->count)
		rank++;
	if (rank < 1)
		rank = 1;
	if (!q->sketch) {
		if (!q->sorted) {
			qsort(q->values, (size_t)q->count, sizeof(*q->values), compare_u64);
			q->sorted = 1;
		}
		return q->values[rank - 1];
	}
	uint64_t seen = 0;
	if (q->small)
		for (unsigned i = 0; i < SUB_COUNT; i++)
			if ((seen += q->small[i]) >= rank)
				return i;
	for (unsigned e = RT_QUANTILES_SUB_BITS; e < 64; e++) {
		if (!q->octaves[e])
			continue;
		for (unsigned i = 0; i < SUB_COUNT; i++)
			if ((seen += q->octaves[e][i]) >= rank)
				return bucket_value(q, e, i);
	}
	return q->max; /* only when values were lost to a failed allocation */
}

int rt_quantiles_exact(const struct rt_quantiles *q)
{
	return q->sketch == 0;
}
