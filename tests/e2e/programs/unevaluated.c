/*
 * unevaluated.c - prints how many times RT_TRACE, RT_BEGIN and RT_END
 * evaluated their arguments: once each when tracing is compiled in, never
 * with -DRINGTRACE_DISABLE, where RT_SCOPE leaves nothing behind either.
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
	{
		RT_SCOPE("scope");
		RT_BEGIN("span", count_call());
		RT_END("span", count_call(), count_call());
	}
	printf("%d\n", calls);
	return 0;
}
