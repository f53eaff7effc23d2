/*
 * fib.c - the call tree of fib(N) for a whole recording side by side with
 * uftrace: built with -O2 -finstrument-functions and not linked with
 * ringtrace, it makes 2 fib(N + 1) - 1 calls of one recursive function (and
 * main).  scripts/bench records it with `ringtrace record` and with
 * `uftrace record`, and compares their time, bytes and losses.
 *
 *     bench_fib N
 */
#include <stdio.h>
#include <stdlib.h>

long bench_fib(int n);

__attribute__((noinline)) long bench_fib(int n)
{
	return n < 2 ? n : bench_fib(n - 1) + bench_fib(n - 2);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	printf("%ld\n", bench_fib(atoi(argv[1])));
	return 0;
}
