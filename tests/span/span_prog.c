/*
 * span_prog.c - spans marked in the source, in C: RT_BEGIN and RT_END with
 * arguments, nested; RT_SCOPE in nested blocks, left by an early return
 * from inside a loop; two scopes in one function; an RT_END whose begin
 * never came.  Built with -finstrument-functions, so the spans interleave
 * with the calls' enters and exits.  check_spans.py knows the order.
 */
#include <stdint.h>
#include <stdio.h>

#include <ringtrace.h>

/* Two scopes in one block, left by a return: the later one ends first. */
__attribute__((noinline)) static int two_scopes(int n)
{
	RT_SCOPE("two-a");
	RT_SCOPE("two-b");
	if (n > 0)
		return n;
	return -1;
}

/* Scopes in nested blocks, the innermost left by a return out of all of them. */
__attribute__((noinline)) static int nested(int x)
{
	RT_SCOPE("outer");
	for (int i = 0; i < 3; i++) {
		RT_SCOPE("loop");
		if (i == 1) {
			RT_SCOPE("inner");
			return x + i;
		}
	}
	return 0;
}

int main(void)
{
	int id = 42;
	long long minus = -7;
	RT_BEGIN("request", id, minus);
	RT_BEGIN("parse", (unsigned)3);
	RT_END("parse", 1);
	int r = two_scopes(5) + nested(10);
	RT_BEGIN("six", 1, -2, 3u, -4, 0x123456789ull, (int64_t)-5);
	RT_END("six");
	RT_END("request", 200);
	RT_END("never begun", 9);
	printf("%d\n", r);
	return 0;
}
