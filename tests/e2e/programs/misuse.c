/*
 * misuse.c - uses of RT_TRACE and RT_LOG that must not compile, one per macro, and
 * with none defined the correct use they are checked against (so a failure
 * is known to come from the misuse, not from the build).
 */
#include <ringtrace.h>

int main(void)
{
	const char *tag = "not a literal";
	int i = 1;
	float f = 1.5f;
	double d = 2.5;
	long double ld = 3.5;
	(void)tag;
	(void)f;
	(void)d;
	(void)ld;
#if defined(NON_LITERAL_TAG)
	RT_TRACE(tag, i);
#elif defined(SEVEN_ARGUMENTS)
	RT_TRACE("seven", i, i, i, i, i, i, i);
#elif defined(FLOAT_ARGUMENT)
	RT_TRACE("float", i, f);
#elif defined(DOUBLE_ARGUMENT)
	RT_TRACE("double", i, i, i, i, i, d);
#elif defined(LONG_DOUBLE_ARGUMENT)
	RT_TRACE("long double", ld);
#elif defined(NON_LITERAL_FORMAT)
	RT_LOG(RT_LOG_INFO, tag, i);
#elif defined(SEVENTEEN_LOG_ARGUMENTS)
	RT_LOG(RT_LOG_INFO, "seventeen", i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i);
#else
	RT_TRACE("fine", i, i, i, i, i, &i);
	RT_LOG(RT_LOG_INFO, "fine %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", i, i, i, i, i,
	       i, i, i, i, i, i, i, i, i, i, i);
#endif
	return 0;
}
