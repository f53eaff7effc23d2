/*
 * span_prog.cc - spans marked in the source, in C++: RT_SCOPE is an object
 * whose destructor ends the span, so an exception unwinding through
 * scopes ends each of them; two scopes in one block; an early return; and
 * RT_BEGIN and RT_END with arguments.  check_spans.py knows the order.
 */
#include <cstdio>
#include <stdexcept>

#include <ringtrace.h>

__attribute__((noinline)) static void thrower(int depth)
{
	RT_SCOPE("frame");
	if (depth == 0)
		throw std::runtime_error("deep enough");
	thrower(depth - 1);
}

__attribute__((noinline)) static int early(int n)
{
	RT_SCOPE("early");
	if (n > 0) {
		RT_SCOPE("positive");
		return n;
	}
	return 0;
}

int main()
{
	RT_BEGIN("cxx", 1, -1);
	try {
		RT_SCOPE("try");
		thrower(1);
	} catch (const std::exception &) {
		RT_TRACE("caught");
	}
	{
		RT_SCOPE("a");
		RT_SCOPE("b");
	}
	int r = early(3);
	RT_END("cxx", r);
	std::printf("%d\n", r);
	return 0;
}
