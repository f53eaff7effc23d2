/*
 * messages.c - a program that logs messages of many types and sizes with
 * RT_LOG and prints, one a line, what snprintf makes of the same format
 * and arguments: messages.sh checks that the log, read back from an arena
 * and from a trace file, says exactly that.
 *
 *     messages [ROUNDS [wait|pointers]]
 *
 * With "wait", each round after the first waits for a line on stdin (so
 * that a reader can follow the arena while it grows).  With "pointers",
 * two more messages at the end print a char * with %p: RT_LOG copies it
 * as a string and must still print its address.
 * No message holds a quote, a backslash or a control character, so that
 * its JSON string is its text.
 */
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringtrace.h>

/* Log and print the same message: the expectation is the program's own snprintf. */
#define BOTH(level, ...)                                                                           \
	do {                                                                                       \
		RT_LOG(level, __VA_ARGS__);                                                        \
		char line_[4096];                                                                  \
		snprintf(line_, sizeof(line_), __VA_ARGS__);                                       \
		printf("%s\n", line_);                                                             \
	} while (0)

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	char big[301], mid[101];
	memset(big, 'a', 300);
	big[300] = 0;
	for (int i = 0; i < 300; i++)
		big[i] = (char)('a' + i % 26);
	memset(mid, 'm', 100);
	mid[100] = 0;
	/* NULL, but not as a constant the compiler would warn about in snprintf */
	const char *nothing = argc > 99 ? argv[1] : NULL;
	static int object;
	int wait = argc > 2 && strcmp(argv[2], "wait") == 0;
	int pointers = argc > 2 && strcmp(argv[2], "pointers") == 0;
	char go[64];
	for (int r = 0; r < rounds; r++) {
		fflush(stdout);
		if (wait && r > 0 && !fgets(go, sizeof(go), stdin))
			break;
		BOTH(RT_LOG_INFO, "round %d", r);
		BOTH(RT_LOG_INFO, "no arguments at all");
		BOTH(RT_LOG_WARN, "char %c short %hd ushort %hu int %d uint %u", 'x', (short)-1234,
		     (unsigned short)65000, INT_MIN, UINT_MAX);
		BOTH(RT_LOG_ERROR, "long %ld ulong %lu llong %lld ullong %llu", LONG_MIN, ULONG_MAX,
		     LLONG_MIN + r, ULLONG_MAX - (unsigned)r);
		BOTH(RT_LOG_NOTICE, "size %zu ptrdiff %td intmax %jd hex %#x oct %#o HEX %X",
		     (size_t)r, (ptrdiff_t)-r, (intmax_t)INT64_MAX, 0xbeefu, 0755u, 0xcafeu);
		BOTH(RT_LOG_DEBUG, "double %f %.3e %g %a float %.2f", 3.14159265358979, -1e-300,
		     0.000123456, 1.0 / 3, (double)1.5f);
		BOTH(RT_LOG_INFO, "long double %Lf %.10Lg %Le", 2.5L + r, 1.0L / 7, -12345.678L);
		BOTH(RT_LOG_INFO, "pointer %p null %p", (void *)&object, (void *)0);
		BOTH(RT_LOG_INFO, "string [%s] [%10s] [%-6s] [%.3s] null [%s]", "abc", "right",
		     "left", "truncate", nothing);
		BOTH(RT_LOG_WARN, "big %s end", big);
		BOTH(RT_LOG_INFO, "%d %u %ld %lu %lld %llu %x %o %c %s %f %e %g %p %s %d", -1, 2u,
		     -3L, 4ul, -5ll, 6ull, 0xabu, 8u, 'z', mid, 1.25, 2.5e10, 1e-5, (void *)&object,
		     "last", 16);
		BOTH(RT_LOG_ERROR, "width %*d precision %.*f percent %%", 8, r, 2, 2.0 / 3);
		BOTH(RT_LOG_FATAL, "fatal %s %d", "but not really", r);
	}
	if (pointers) {
		BOTH(RT_LOG_INFO, "string at %p is %.5s", mid, mid);
		BOTH(RT_LOG_INFO, "char pointer %p", mid);
	}
	return 0;
}
