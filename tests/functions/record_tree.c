/*
 * record_tree.c - calls of known counts for tests/functions/record_filters.sh:
 * main calls outer and other three times each; outer calls inner and leaf,
 * inner calls leaf, other calls leaf.  Built with -finstrument-functions.
 */
#include <stdio.h>

int leaf(int x);
int inner(int x);
int outer(int x);
int other(int x);

__attribute__((noinline)) int leaf(int x)
{
	__asm__ __volatile__("" ::: "memory");
	return x + 1;
}

__attribute__((noinline)) int inner(int x)
{
	return leaf(x) * 2;
}

__attribute__((noinline)) int outer(int x)
{
	return inner(x) + leaf(x);
}

__attribute__((noinline)) int other(int x)
{
	return leaf(x) - 1;
}

int main(void)
{
	int sum = 0;
	for (int i = 0; i < 3; i++)
		sum += outer(i) + other(i);
	printf("%d\n", sum);
	return 0;
}
