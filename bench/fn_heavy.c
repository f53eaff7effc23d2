/*
 * fn_heavy.c - a call-heavy program for the side-by-side with uftrace:
 * built with -finstrument-functions and not linked with ringtrace, it calls
 * one empty function N times.  scripts/bench times it untraced, under
 * `ringtrace record` and under `uftrace record`.
 *
 *     bench_fn_heavy N
 */
#include <stdio.h>
#include <stdlib.h>

int bench_heavy_work(int i);

__attribute__((noinline)) int bench_heavy_work(int i)
{
	__asm__ __volatile__("" ::: "memory");
	return i;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	long n = strtol(argv[1], NULL, 10);
	unsigned sum = 0;
	for (long i = 0; i < n; i++)
		sum += (unsigned)bench_heavy_work((int)i);
	/* the sum depends on every call */
	return sum == 1 ? 3 : 0;
}
