/*
 * record_durations.c - calls of known lengths for `record -t`
 * (tests/functions/record_filters.sh): main calls mid and shallow three
 * times each; mid calls quick, slow (which spins 2 ms) and quick again;
 * shallow calls quick.  Only main, mid and slow last a millisecond or more.
 */
#include <stdio.h>
#include <time.h>

void quick(void);
void slow(void);
void mid(void);
void shallow(void);

__attribute__((no_instrument_function)) static void spin_ms(long ms)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
	       ms * 1000000L);
}

__attribute__((noinline)) void quick(void)
{
	__asm__ __volatile__("" ::: "memory");
}

__attribute__((noinline)) void slow(void)
{
	spin_ms(2);
}

__attribute__((noinline)) void mid(void)
{
	quick();
	slow();
	quick();
}

__attribute__((noinline)) void shallow(void)
{
	quick();
}

int main(void)
{
	for (int i = 0; i < 3; i++) {
		mid();
		shallow();
	}
	puts("done");
	return 0;
}
