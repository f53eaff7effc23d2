/*
 * unevaluated.c - prints how many times RT_TRACE evaluated its arguments:
 * once each when tracing is compiled in, never with -DRINGTRACE_DISABLE.
 */
#include <stdio.h>

#include <ringtrace.h>

static int calls;

static int count_call(void)
{
	return ++calls;
}

int main(void)
{
	RT_TRACE("arguments", count_call(), count_call());
	printf("%d\n", calls);
	return 0;
}
