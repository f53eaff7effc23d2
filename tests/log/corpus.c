/*
 * corpus.c - the conformance corpus of RT_LOG: every conversion over edge
 * values (zero, one, minus one, the limits of every integer width, huge,
 * tiny and subnormal doubles and long doubles, NaN and infinities, empty,
 * long and UTF-8 strings, NULL), with flags, widths, precisions and '*',
 * logged with RT_LOG and printed as snprintf makes them in this same
 * program, one a line.  corpus.sh reads the log back and compares.
 *
 *     corpus
 *
 * No message holds a quote, a backslash or a control character, so that
 * its JSON string is its text.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ringtrace.h>

#define BOTH(...)                                                                                  \
	do {                                                                                       \
		RT_LOG(RT_LOG_INFO, __VA_ARGS__);                                                  \
		char line_[2048];                                                                  \
		snprintf(line_, sizeof(line_), __VA_ARGS__);                                       \
		printf("%s\n", line_);                                                             \
		count++;                                                                           \
	} while (0)

static unsigned long count;

static const long long signed_values[] = {0,
					  1,
					  -1,
					  42,
					  -42,
					  SCHAR_MIN,
					  SCHAR_MAX,
					  SHRT_MIN,
					  SHRT_MAX,
					  INT_MIN,
					  INT_MAX,
					  (long long)LONG_MIN,
					  (long long)LONG_MAX,
					  LLONG_MIN,
					  LLONG_MAX,
					  255,
					  65535,
					  300};

static const unsigned long long unsigned_values[] = {0,
						     1,
						     42,
						     UCHAR_MAX,
						     USHRT_MAX,
						     UINT_MAX,
						     (unsigned long long)UINT_MAX + 1,
						     ULONG_MAX,
						     ULLONG_MAX,
						     0x8000000000000000ull,
						     0xdeadbeefull};

static void integers(void)
{
	for (size_t i = 0; i < sizeof(signed_values) / sizeof(signed_values[0]); i++) {
		long long v = signed_values[i];
		int n = (int)v;
		long l = (long)v;
		BOTH("d %d i %i +d %+d sp % d 0w %05d lw %-6d| .p %.3d", n, n, n, n, n, n, n);
		BOTH("hhd %hhd hd %hd hhu %hhu hu %hu", (signed char)n, (short)n, (unsigned char)n,
		     (unsigned short)n);
		BOTH("ld %ld lld %lld jd %jd zd %zd td %td", l, v, (intmax_t)v, (ptrdiff_t)l,
		     (ptrdiff_t)l);
		BOTH("* %*d|%-*d|%.*d|%*.*d|", 8, n, 8, n, 5, n, 10, 4, n);
		BOTH("x %x X %X o %o #x %#x #o %#o 08x %08x", (unsigned)n, (unsigned)n, (unsigned)n,
		     (unsigned)n, (unsigned)n, (unsigned)n);
		BOTH("c %c", (n % 94 + 94) % 94 + 33); /* printable ASCII */
	}
	for (size_t i = 0; i < sizeof(unsigned_values) / sizeof(unsigned_values[0]); i++) {
		unsigned long long v = unsigned_values[i];
		BOTH("u %u lu %lu llu %llu zu %zu ju %ju", (unsigned)v, (unsigned long)v, v,
		     (size_t)v, (uintmax_t)v);
		BOTH("llx %llx llX %#llX llo %llo 20llu %20llu -20llx %-20llx|", v, v, v, v, v);
	}
}

static void doubles(void)
{
	const double values[] = {0.0,	  -0.0,		 1.0,	  -1.0,	   0.1,	     123.456,
				 -2.5e-8, 1e-310,	 DBL_MIN, DBL_MAX, 1e300,    -1e300,
				 1.0 / 3, 6.02214076e23, NAN,	  -NAN,	   INFINITY, -INFINITY};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		double d = values[i];
		BOTH("f %f e %e g %g a %a", d, d, d, d);
		BOTH("F %F E %E G %G A %A", d, d, d, d);
		BOTH(".0f %.0f .1e %.1e .10g %.10g .3a %.3a", d, d, d, d);
		BOTH("+f %+f sp % e #g %#g 012.3f %012.3f -14.2e %-14.2e|", d, d, d, d, d);
		BOTH("* %*.*f|%-*g|", 16, 4, d, 12, d);
		BOTH("float %f %g", (double)(float)d, (double)(float)d);
	}
	const long double lvalues[] = {0.0L,
				       -0.0L,
				       1.0L / 3,
				       -12345.678L,
				       LDBL_MIN,
				       LDBL_MAX,
				       1e-4940L,
				       1e4000L,
				       (long double)NAN,
				       (long double)INFINITY,
				       -(long double)INFINITY};
	for (size_t i = 0; i < sizeof(lvalues) / sizeof(lvalues[0]); i++) {
		long double d = lvalues[i];
		BOTH("Le %Le Lg %Lg La %La .20Lg %.20Lg +LE %+LE #LG %#LG", d, d, d, d, d, d);
		/* %Lf of LDBL_MAX is 4933 digits: only the values whose %Lf fits a line */
		if (fabsl(d) < 1e300L || isnan(d) || isinf(d))
			BOTH("Lf %Lf 30.4Lf %30.4Lf|", d, d);
	}
}

static void strings(void)
{
	char long_one[301];
	for (int i = 0; i < 300; i++)
		long_one[i] = (char)('A' + i % 26);
	long_one[300] = 0;
	const char *values[] = {
	    "", "a", "hello, world", "h\xc3\xa9llo w\xc3\xb6rld", "tab-free", "   spaces   "};
	for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		const char *s = values[i];
		/* .3s: never inside a UTF-8 sequence, which JSON could not carry as it is */
		BOTH("s [%s] 10s [%10s] -10s [%-10s] .3s [%.3s] .0s [%.0s] *s [%*s]", s, s, s, s, s,
		     7, s);
		/* few arguments and short strings: RT_LOG writes these inline */
		BOTH("n %d s [%s] -12s [%-12s] p %p", (int)i, s, s, (void *)&count);
	}
	BOTH("long [%s]", long_one);
	/* one call keeps 320 bytes of strings: one long string a call */
	BOTH("long precision [%.40s]", long_one);
	BOTH("long precision [%.299s]", long_one);
	/* NULL, but not as a constant the compiler would warn about in snprintf */
	const char *nothing = count > 1000000 ? long_one : NULL;
	BOTH("null [%s] [%10s] [%.3s] [%.6s]", nothing, nothing, nothing, nothing);
	BOTH("percent %% and %%%% done");
	BOTH("pointer %p %p %20p|%-20p|", (void *)&count, (void *)0, (void *)&count, (void *)0);
}

int main(void)
{
	integers();
	doubles();
	strings();
	fflush(stdout);
	fprintf(stderr, "corpus: %lu messages\n", count);
	return 0;
}
