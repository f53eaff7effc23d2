/*
 * measure.c - the timing, pinning and statistics every benchmark shares.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "measure.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double bench_time_batch(bench_loop loop, uint64_t n)
{
	uint64_t start = bench_now_ns();
	loop(n);
	uint64_t end = bench_now_ns();
	return (double)(end - start) / (double)n;
}

int bench_allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) != 0)
		return 0;
	int count = 0;
	for (int cpu = 0; cpu < CPU_SETSIZE && count < max; cpu++)
		if (CPU_ISSET(cpu, &set))
			cpus[count++] = cpu;
	return count;
}

int bench_pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err)
		bench_note("cannot pin to cpu %d (errno %d): running unpinned", cpu, err);
	return -err;
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bench_quantile(double *v, size_t n, double q)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), compare_doubles);
	size_t rank = (size_t)(q * (double)(n - 1) + 0.5);
	return v[rank];
}

void bench_compare(struct bench_case *cases, size_t count, uint64_t batch, size_t runs)
{
	double *samples = calloc(count * runs, sizeof(*samples));
	if (!samples) {
		bench_note("out of memory");
		exit(1);
	}
	for (size_t c = 0; c < count; c++)
		bench_time_batch(cases[c].loop, batch);
	for (size_t r = 0; r < runs; r++)
		for (size_t c = 0; c < count; c++)
			samples[c * runs + r] = bench_time_batch(cases[c].loop, batch);
	for (size_t c = 0; c < count; c++) {
		double *v = &samples[c * runs];
		cases[c].median = bench_quantile(v, runs, 0.5);
		cases[c].p10 = bench_quantile(v, runs, 0.1);
		cases[c].p90 = bench_quantile(v, runs, 0.9);
		bench_note("%-28s median %7.2f ns/event  (p10 %.2f, p90 %.2f; %zu runs of %llu)",
			   cases[c].name, cases[c].median, cases[c].p10, cases[c].p90, runs,
			   (unsigned long long)batch);
	}
	free(samples);
}

void bench_result(const char *name, double value)
{
	printf("result %s %.6g\n", name, value);
	fflush(stdout);
}

void bench_note(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	vfprintf(stderr, format, ap);
	va_end(ap);
	fputc('\n', stderr);
}
