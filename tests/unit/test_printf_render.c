/*
 * test_printf_render.c - rt_printf_render (src/decode/printf_render.c)
 * against glibc's snprintf.
 *
 * A generated corpus: every conversion x every combination of the flags
 * - + space # 0 x widths (none, 1, 5, 20, *) x precisions (none, .0, .1,
 * .5, .20, .*) x the length modifiers that conversion takes x edge values.
 * Each case calls snprintf with the real C argument, of the type the
 * conversion expects (a switch over that type), and rt_printf_render with
 * the rt_log_value the recorder would have stored for it, and compares the
 * bytes and the returned length; every seventh case again into a small
 * buffer, to check the cut and the NUL.  Recorded strings are copies of
 * exactly their bytes, without a NUL, so that the sanitizer build catches a
 * read past them.  Then the cases where the formatter must not behave as
 * printf: truncation marks, missing and mismatched arguments, %n, unknown
 * conversions, and hostile formats.
 */
#define _GNU_SOURCE
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <wchar.h>

#include "decode/printf_render.h"

#include "../lib/check.h"

#define OUT_SIZE 16384

/* the C type a conversion reads its argument as */
enum ctype {
	C_INT,
	C_UINT,
	C_LONG,
	C_ULONG,
	C_LLONG,
	C_ULLONG,
	C_INTMAX,
	C_UINTMAX,
	C_SSIZE,
	C_SIZE,
	C_PTRDIFF,
	C_DOUBLE,
	C_LDOUBLE,
	C_STRING,
	C_POINTER,
	C_WINT,
};

struct value {
	int64_t i; /* integers and pointers */
	double d;
	long double ld;
	const char *s; /* C_STRING: NUL-terminated, or NULL */
};

static uint64_t cases, small_cases, mismatches;

/* The value as the recorder stores it for a C argument of type t (a pointer
   out: returning a union with a long double draws an ABI note from gcc). */
static void record(struct rt_log_value *out, enum ctype t, const struct value *v)
{
	struct rt_log_value a;
	memset(&a, 0, sizeof(a));
	switch (t) {
	case C_INT:
		a.kind = RT_LOG_VALUE_SIGNED, a.size = 4, a.v.i = (int)v->i;
		break;
	case C_UINT:
		a.kind = RT_LOG_VALUE_UNSIGNED, a.size = 4, a.v.u = (unsigned)v->i;
		break;
	case C_LONG:
	case C_LLONG:
	case C_INTMAX:
	case C_SSIZE:
	case C_PTRDIFF:
		a.kind = RT_LOG_VALUE_SIGNED, a.size = 8, a.v.i = v->i;
		break;
	case C_ULONG:
	case C_ULLONG:
	case C_UINTMAX:
	case C_SIZE:
		a.kind = RT_LOG_VALUE_UNSIGNED, a.size = 8, a.v.u = (uint64_t)v->i;
		break;
	case C_DOUBLE:
		a.kind = RT_LOG_VALUE_DOUBLE, a.size = 8, a.v.d = v->d;
		break;
	case C_LDOUBLE:
		a.kind = RT_LOG_VALUE_LONG_DOUBLE, a.size = 16, a.v.ld = v->ld;
		break;
	case C_POINTER:
		a.kind = RT_LOG_VALUE_POINTER, a.size = 8, a.v.u = (uint64_t)v->i;
		break;
	case C_WINT:
		a.kind = RT_LOG_VALUE_UNSIGNED, a.size = 4, a.v.u = (wint_t)v->i;
		break;
	case C_STRING:
		a.kind = RT_LOG_VALUE_STRING, a.size = 8;
		if (!v->s) {
			a.null = 1;
		} else {
			a.len = (uint32_t)strlen(v->s);
			char *copy = malloc(a.len ? a.len : 1);
			if (!copy)
				abort();
			memcpy(copy, v->s, a.len); /* no NUL: a read past len is a bug */
			a.s = copy;
		}
		break;
	}
	*out = a;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral" /* the formats are generated */

/* snprintf with the optional '*' arguments and one argument of type t */
#define STAR_CALL(buf, n, fmt, ws, w, ps, p, arg)                                                  \
	((ws) && (ps) ? snprintf(buf, n, fmt, w, p, arg)                                           \
	 : (ws)	      ? snprintf(buf, n, fmt, w, arg)                                              \
	 : (ps)	      ? snprintf(buf, n, fmt, p, arg)                                              \
		      : snprintf(buf, n, fmt, arg))

static int c_snprintf(char *buf, size_t n, const char *fmt, int ws, int w, int ps, int p,
		      enum ctype t, const struct value *v)
{
	switch (t) {
	case C_INT:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (int)v->i);
	case C_UINT:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (unsigned)v->i);
	case C_LONG:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (long)v->i);
	case C_ULONG:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (unsigned long)v->i);
	case C_LLONG:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (long long)v->i);
	case C_ULLONG:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (unsigned long long)v->i);
	case C_INTMAX:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (intmax_t)v->i);
	case C_UINTMAX:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (uintmax_t)v->i);
	case C_SSIZE:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (ssize_t)v->i);
	case C_SIZE:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (size_t)v->i);
	case C_PTRDIFF:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (ptrdiff_t)v->i);
	case C_DOUBLE:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, v->d);
	case C_LDOUBLE:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, v->ld);
	case C_STRING:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, v->s);
	case C_POINTER:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (void *)(uintptr_t)v->i);
	case C_WINT:
		return STAR_CALL(buf, n, fmt, ws, w, ps, p, (wint_t)v->i);
	}
	return -1;
}

#pragma GCC diagnostic pop

static char expect[OUT_SIZE], got[OUT_SIZE];

static void show(const char *what, const char *s, size_t n)
{
	fprintf(stderr, "    %s (%zu bytes): \"", what, n);
	for (size_t i = 0; i < n && i < 200; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f)
			fputc(c, stderr);
		else
			fprintf(stderr, "\\x%02x", c);
	}
	fprintf(stderr, "%s\"\n", n > 200 ? "..." : "");
}

/*
 * What the renderer promises for printf's output of n bytes in buf (room
 * cap): the same bytes, each NUL (a %c of 0) as RT_PRINTF_NUL_SYMBOL.
 */
static int nul_as_symbol(char *buf, size_t cap, int n)
{
	const size_t extra = sizeof(RT_PRINTF_NUL_SYMBOL) - 2;
	for (int i = 0; i < n; i++) {
		if (buf[i] != '\0')
			continue;
		if ((size_t)n + extra >= cap)
			return -1;
		memmove(buf + i + 1 + extra, buf + i + 1, (size_t)(n - i - 1) + 1);
		memcpy(buf + i, RT_PRINTF_NUL_SYMBOL, extra + 1);
		n += (int)extra;
		i += (int)extra;
	}
	return n;
}

static void one_case(const char *fmt, int ws, int w, int ps, int p, enum ctype t,
		     const struct value *v)
{
	struct rt_log_value args[3];
	size_t nargs = 0;
	if (ws)
		record(&args[nargs++], C_INT, &(struct value){.i = w});
	if (ps)
		record(&args[nargs++], C_INT, &(struct value){.i = p});
	record(&args[nargs++], t, v);
	cases++;
	int e = c_snprintf(expect, sizeof(expect), fmt, ws, w, ps, p, t, v);
	if (e >= 0 && (size_t)e < sizeof(expect))
		e = nul_as_symbol(expect, sizeof(expect), e);
	size_t r = rt_printf_render(got, sizeof(got), fmt, args, nargs);
	if (!CHECK(e >= 0 && (size_t)e < sizeof(expect)))
		goto out;
	if ((size_t)e != r || memcmp(expect, got, (size_t)e) != 0 || got[r] != '\0') {
		if (mismatches++ < 20) {
			fprintf(stderr, "mismatch: format \"%s\" (type %d, star %d/%d, %d/%d)\n",
				fmt, (int)t, ws, ps, w, p);
			show("snprintf", expect, (size_t)e);
			show("render  ", got, r < sizeof(got) ? r : sizeof(got) - 1);
		}
		goto out;
	}
	if (cases % 7 == 0) {
		/* again into a buffer that cuts the message (or just holds it) */
		size_t small = (size_t)(cases / 7 % 13);
		char a[16], b[16];
		small_cases++;
		memset(a, 'A', sizeof(a));
		memset(b, 'A', sizeof(b));
		/* the promised output above, cut as snprintf cuts */
		int e2 = e;
		if (small) {
			size_t keep = (size_t)e < small - 1 ? (size_t)e : small - 1;
			memcpy(a, expect, keep);
			a[keep] = '\0';
		}
		size_t r2 = rt_printf_render(small ? b : NULL, small, fmt, args, nargs);
		if (!CHECK((size_t)e2 == r2) || !CHECK(memcmp(a, b, sizeof(a)) == 0))
			fprintf(stderr, "  small buffer %zu, format \"%s\"\n", small, fmt);
	}
out:
	for (size_t i = 0; i < nargs; i++)
		free((void *)args[i].s);
}

/* ---- the corpus -------------------------------------------------------- */

static const char *const flag_chars = "-+ #0";
static const char *const widths[] = {"", "1", "5", "20", "*"};
static const char *const precs[] = {"", ".0", ".1", ".5", ".20", ".*"};
/* what '*' takes, in turn: negative widths mean '-', negative precisions none */
static const int star_widths[] = {0, 1, 5, 20, -5, -20};
static const int star_precs[] = {-1, 0, 3, 20, -7};

static unsigned star_turn;

static void flag_string(unsigned mask, char *out)
{
	for (unsigned i = 0; i < 5; i++)
		if (mask & (1u << i))
			*out++ = flag_chars[i];
	*out = '\0';
}

/* every flags x width x precision of "%<len><conv>" with the values */
static void sweep(const char *len, char conv, enum ctype t, const struct value *values,
		  size_t nvalues, int with_prec)
{
	char flags[8], fmt[64];
	for (unsigned mask = 0; mask < 32; mask++) {
		flag_string(mask, flags);
		for (size_t wi = 0; wi < sizeof(widths) / sizeof(widths[0]); wi++) {
			for (size_t pi = 0; pi < (with_prec ? sizeof(precs) / sizeof(precs[0]) : 1);
			     pi++) {
				snprintf(fmt, sizeof(fmt), "[%%%s%s%s%s%c]", flags, widths[wi],
					 precs[pi], len, conv);
				int ws = widths[wi][0] == '*', ps = strchr(precs[pi], '*') != NULL;
				for (size_t vi = 0; vi < nvalues; vi++) {
					star_turn++;
					int w = star_widths[star_turn % 6];
					int p = star_precs[star_turn % 5];
					one_case(fmt, ws, w, ps, p, t, &values[vi]);
				}
			}
		}
	}
}

static void corpus_integers(void)
{
	static const int64_t edges[] = {0,
					1,
					-1,
					INT8_MIN,
					INT8_MAX,
					INT16_MIN,
					INT16_MAX,
					INT32_MIN,
					INT32_MAX,
					INT64_MIN,
					INT64_MAX,
					UINT8_MAX,
					UINT16_MAX,
					(int64_t)UINT32_MAX,
					(int64_t)UINT64_MAX,
					300,
					123456789};
	enum { N = sizeof(edges) / sizeof(edges[0]) };
	struct value values[N];
	for (size_t i = 0; i < N; i++)
		values[i] = (struct value){.i = edges[i]};
	static const struct {
		const char *len;
		enum ctype sig, uns;
	} lens[] = {
	    {"", C_INT, C_UINT},
	    {"hh", C_INT, C_UINT},
	    {"h", C_INT, C_UINT},
	    {"l", C_LONG, C_ULONG},
	    {"ll", C_LLONG, C_ULLONG},
	    {"j", C_INTMAX, C_UINTMAX},
	    {"z", C_SSIZE, C_SIZE},
	    {"t", C_PTRDIFF, C_PTRDIFF},
	    /* glibc's synonyms: q and L for ll, Z for z */
	    {"q", C_LLONG, C_ULLONG},
	    {"L", C_LLONG, C_ULLONG},
	    {"Z", C_SSIZE, C_SIZE},
	};
	static const char convs[] = "diuoxXbB";
	for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
		for (const char *c = convs; *c; c++)
			sweep(lens[l].len, *c, (*c == 'd' || *c == 'i') ? lens[l].sig : lens[l].uns,
			      values, N, 1);
}

static void corpus_floating(void)
{
	double nan_neg = copysign(NAN, -1.0);
	struct value doubles[] = {
	    {.d = 0.0},	     {.d = -0.0},      {.d = 1e-310},  {.d = DBL_MIN}, {.d = DBL_MAX},
	    {.d = 1e300},    {.d = 0.1},       {.d = 123.456}, {.d = NAN},     {.d = nan_neg},
	    {.d = INFINITY}, {.d = -INFINITY}, {.d = -2.5},    {.d = 1.0 / 3}, {.d = 999999.5},
	};
	long double lnan_neg = copysignl(NAN, -1.0L);
	struct value ldoubles[] = {
	    {.ld = 0.0L},     {.ld = -0.0L},	{.ld = LDBL_MAX},  {.ld = LDBL_MIN},
	    {.ld = 1e-4940L}, {.ld = 0.1L},	{.ld = 123.456L},  {.ld = NAN},
	    {.ld = lnan_neg}, {.ld = INFINITY}, {.ld = -INFINITY}, {.ld = -1.0L / 3},
	};
	static const char convs[] = "fFeEgGaA";
	for (const char *c = convs; *c; c++) {
		sweep("", *c, C_DOUBLE, doubles, sizeof(doubles) / sizeof(doubles[0]), 1);
		sweep("l", *c, C_DOUBLE, doubles, sizeof(doubles) / sizeof(doubles[0]), 1);
		sweep("L", *c, C_LDOUBLE, ldoubles, sizeof(ldoubles) / sizeof(ldoubles[0]), 1);
		/* as glibc reads them, ll and q on a floating conversion mean long double
		   (a few values: the L sweep has them all) */
		sweep("ll", *c, C_LDOUBLE, ldoubles + 5, 4, 1);
		sweep("q", *c, C_LDOUBLE, ldoubles + 5, 4, 1);
	}
}

static void corpus_others(void)
{
	char long_string[301];
	for (int i = 0; i < 300; i++)
		long_string[i] = (char)('a' + i % 26);
	long_string[300] = '\0';
	struct value strings[] = {
	    {.s = ""},		{.s = "x"},
	    {.s = long_string}, {.s = "gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x99\x82"},
	    {.s = NULL},	{.s = "hello"},
	};
	sweep("", 's', C_STRING, strings, sizeof(strings) / sizeof(strings[0]), 1);
	struct value chars[] = {{.i = 'a'}, {.i = 0}, {.i = 255}, {.i = 300}, {.i = -56}};
	sweep("", 'c', C_INT, chars, sizeof(chars) / sizeof(chars[0]), 1);
	/* wide characters the C locale can convert */
	struct value wide[] = {{.i = 'a'}, {.i = 0}, {.i = 0x7f}};
	sweep("l", 'c', C_WINT, wide, sizeof(wide) / sizeof(wide[0]), 1);
	sweep("", 'C', C_WINT, wide, sizeof(wide) / sizeof(wide[0]), 1);
	/* the flags the sweeps leave out: ' (grouping) and I (locale digits) */
	static const struct {
		const char *fmt;
		enum ctype t;
		struct value v;
	} extra[] = {
	    {"%'d", C_INT, {.i = 1234567}},	 {"%'20.3f", C_DOUBLE, {.d = 1234567.891}},
	    {"%I5d", C_INT, {.i = -42}},	 {"%'-+12lu", C_ULONG, {.i = 9876543210}},
	    {"%'#x", C_UINT, {.i = 0xabcdef}},	 {"%'Lg", C_LDOUBLE, {.ld = 1e6L}},
	    {"%I'08.2e", C_DOUBLE, {.d = -3.5}}, {"%'s", C_STRING, {.s = "str"}},
	};
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		one_case(extra[i].fmt, 0, 0, 0, 0, extra[i].t, &extra[i].v);
	struct value pointers[] = {
	    {.i = 0}, {.i = 0x1234}, {.i = (int64_t)0x7ffd5e8a1230ull}, {.i = -4096}, {.i = -1}};
	sweep("", 'p', C_POINTER, pointers, sizeof(pointers) / sizeof(pointers[0]), 1);
}

/* ---- what printf does not do -------------------------------------------- */

#define sv(x) ((struct rt_log_value){.kind = RT_LOG_VALUE_SIGNED, .size = 4, .v.i = (x)})
#define str(x, cut)                                                                                \
	((struct rt_log_value){.kind = RT_LOG_VALUE_STRING,                                        \
			       .size = 8,                                                          \
			       .len = (uint32_t)strlen(x),                                         \
			       .s = (x),                                                           \
			       .truncated = (cut)})

static void expect_render(const char *fmt, const struct rt_log_value *args, size_t nargs,
			  const char *want)
{
	char out[256];
	size_t r = rt_printf_render(out, sizeof(out), fmt, args, nargs);
	if (!CHECK(r == strlen(want)) || !CHECK(strcmp(out, want) == 0))
		fprintf(stderr, "  format \"%s\": got \"%s\" (%zu), want \"%s\"\n", fmt, out, r,
			want);
}

static void test_marks(void)
{
	/* the length modifier applies the C conversion */
	struct rt_log_value a300 = sv(300), am1 = sv(-1);
	expect_render("%hhd", &a300, 1, "44");
	expect_render("%hu", &am1, 1, "65535");
	expect_render("%u", &am1, 1, "4294967295");

	/* %p of a string argument: the pointer RT_LOG recorded beside the bytes */
	struct rt_log_value sp = str("abc", 0);
	sp.v.u = 0x1234;
	expect_render("%p %s", (const struct rt_log_value[]){sp, sp}, 2, "0x1234 abc");
	sp.v.u = 0;
	sp.null = 1;
	expect_render("%p", &sp, 1, "(nil)");

	/* truncated strings: the mark after the field, counted in the length */
	struct rt_log_value t = str("abc", 1);
	expect_render("%s|", &t, 1, "abc" RT_PRINTF_TRUNCATED_MARK "|");
	expect_render("%-6s|", &t, 1, "abc   " RT_PRINTF_TRUNCATED_MARK "|");
	expect_render("%6s|", &t, 1, "   abc" RT_PRINTF_TRUNCATED_MARK "|");
	expect_render("%.2s|", &t, 1, "ab|");
	expect_render("%.3s|", &t, 1, "abc|");
	expect_render("%.4s|", &t, 1, "abc" RT_PRINTF_TRUNCATED_MARK "|");
	char small[5];
	size_t r = rt_printf_render(small, sizeof(small), "%s", &t, 1);
	CHECK_EQ(r, 3 + strlen(RT_PRINTF_TRUNCATED_MARK));
	CHECK_STR(small, "abc<");
	/* bytes after a NUL inside the recorded copy are not printed */
	struct rt_log_value nul = {.kind = RT_LOG_VALUE_STRING, .len = 5, .s = "ab\0cd"};
	expect_render("[%s]", &nul, 1, "[ab]");
	expect_render("[%4s]", &nul, 1, "[  ab]");

	/* %ls and %S print the recorded bytes as %s does */
	struct rt_log_value wide_s = str("wide", 0);
	expect_render("[%ls|%S|%-6ls|%.2S]",
		      (struct rt_log_value[]){wide_s, wide_s, wide_s, wide_s}, 4,
		      "[wide|wide|wide  |wi]");
	/* %lc of what the C locale cannot convert */
	struct rt_log_value e_acute = {.kind = RT_LOG_VALUE_UNSIGNED, .size = 4, .v.u = 0xe9};
	expect_render("%lc", &e_acute, 1, "<bad %lc: EILSEQ>");

	/* missing arguments */
	struct rt_log_value one = sv(1);
	expect_render("%d %d", &one, 1, "1 <missing %d>");
	expect_render("%*d", &one, 1, "<missing %*d>");
	expect_render("%s and %-5.2f", NULL, 0, "<missing %s> and <missing %-5.2f>");

	/* kinds that do not fit: the arguments stay in place */
	struct rt_log_value mixed[] = {
	    str("s", 0),  {.kind = RT_LOG_VALUE_DOUBLE, .v.d = 1.5},
	    sv(7),	  {.kind = RT_LOG_VALUE_POINTER, .v.u = 16},
	    {.kind = 99}, sv(2),
	};
	expect_render("%d|%s|%5.2f|%c|%x|%d", mixed, 6,
		      "<bad %d: string>|<bad %s: double>|<bad %5.2f: signed>|"
		      "<bad %c: pointer>|<bad %x: kind 99>|2");
	struct rt_log_value star_bad[] = {str("w", 0), sv(5), sv(6)};
	expect_render("%*d;%d", star_bad, 3, "<bad %*d: string>;6");
	struct rt_log_value ptr_for_d = {.kind = RT_LOG_VALUE_POINTER, .v.u = 1};
	expect_render("%ld", &ptr_for_d, 1, "<bad %ld: pointer>");
	/* a double for %Lf is widened, a long double for %f narrowed */
	struct rt_log_value d15 = {.kind = RT_LOG_VALUE_DOUBLE, .v.d = 1.5};
	struct rt_log_value ld15 = {.kind = RT_LOG_VALUE_LONG_DOUBLE, .v.ld = 1.5L};
	expect_render("%Lf %f", (struct rt_log_value[]){d15, ld15}, 2, "1.500000 1.500000");

	/* %n never writes, and takes its argument */
	struct rt_log_value n_args[] = {{.kind = RT_LOG_VALUE_POINTER, .v.u = 0x1000}, sv(5)};
	expect_render("a%nb%d", n_args, 2, "a<%n ignored>b5");
	expect_render("%hhn", NULL, 0, "<%n ignored>");

	/* unknown conversions, copied literally; they take no argument */
	expect_render("%y %d", &one, 1, "%y 1");
	expect_render("%m", NULL, 0, "%m");
	expect_render("%1$d %d", &one, 1, "%1$d 1");
	expect_render("%llld", &one, 1, "%llld");
	expect_render("%5%|%%", NULL, 0, "%|%");
}

static void test_hostile(void)
{
	struct rt_log_value one = sv(1);
	static char out[70000];
	/* widths and precisions clamped to RT_PRINTF_FIELD_MAX */
	size_t r = rt_printf_render(out, sizeof(out), "%999999999999999999999d", &one, 1);
	CHECK_EQ(r, RT_PRINTF_FIELD_MAX);
	CHECK(out[RT_PRINTF_FIELD_MAX - 1] == '1' && out[0] == ' ');
	r = rt_printf_render(out, sizeof(out), "%.2147483648d", &one, 1);
	CHECK_EQ(r, RT_PRINTF_FIELD_MAX);
	r = rt_printf_render(out, sizeof(out), "%.99999f",
			     &(struct rt_log_value){.kind = RT_LOG_VALUE_DOUBLE, .v.d = 1}, 1);
	CHECK_EQ(r, RT_PRINTF_FIELD_MAX + 2);
	struct rt_log_value star[] = {sv(INT_MIN), sv(7)};
	r = rt_printf_render(out, sizeof(out), "%*d|", star, 2);
	CHECK_EQ(r, RT_PRINTF_FIELD_MAX + 1);
	CHECK(out[0] == '7' && out[RT_PRINTF_FIELD_MAX - 1] == ' ');
	struct rt_log_value star_big[] = {sv(INT_MAX), sv(INT_MAX), sv(7)};
	r = rt_printf_render(out, sizeof(out), "%*.*d", star_big, 3);
	CHECK_EQ(r, RT_PRINTF_FIELD_MAX);
	/* formats that end inside a conversion */
	expect_render("%", NULL, 0, "%");
	expect_render("abc%", NULL, 0, "abc%");
	expect_render("abc%-05.", &one, 1, "abc%-05.");
	expect_render("%l", &one, 1, "%l");
	expect_render("", NULL, 0, "");
	/* a NULL format, and no buffer at all */
	expect_render(NULL, NULL, 0, "");
	CHECK_EQ(rt_printf_render(NULL, 0, "%d!", &one, 1), 2);
	/* a million flags: linear, the conversion still right */
	size_t big = 1000000;
	char *fmt = malloc(big + 8);
	if (!CHECK(fmt != NULL))
		return;
	fmt[0] = '%';
	memset(fmt + 1, '0', big);
	strcpy(fmt + 1 + big, "5d");
	r = rt_printf_render(out, sizeof(out), fmt, &one, 1);
	CHECK_EQ(r, 5);
	CHECK_STR(out, "00001");
	/* 10000 conversions over 3 arguments */
	for (size_t i = 0; i < 10000; i++)
		memcpy(fmt + 2 * i, "%d", 2);
	fmt[20000] = '\0';
	struct rt_log_value three[] = {sv(1), sv(2), sv(3)};
	r = rt_printf_render(out, sizeof(out), fmt, three, 3);
	CHECK_EQ(r, 3 + 9997 * strlen("<missing %d>"));
	CHECK(strncmp(out, "123<missing %d><missing", 23) == 0);
	/* 10000 conversions, all present, into a buffer too small */
	struct rt_log_value *many = calloc(10000, sizeof(*many));
	if (CHECK(many != NULL)) {
		for (size_t i = 0; i < 10000; i++)
			many[i] = sv((int64_t)i);
		char tiny[8];
		r = rt_printf_render(tiny, sizeof(tiny), fmt, many, 10000);
		CHECK_EQ(r, 10 + 90 * 2 + 900 * 3 + 9000 * 4);
		CHECK_STR(tiny, "0123456");
	}
	free(many);
	free(fmt);
}

/*
 * Random formats from printf's own alphabet over random arguments of every
 * kind (and one unknown kind): whatever comes out, the length is the same
 * into any buffer, the output is a prefix of the whole message and ends in
 * a NUL; the sanitizer build checks that nothing is read or written out of
 * place.
 */
static uint64_t next_random(void)
{
	static uint64_t state = 0x9e3779b97f4a7c15ull;
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static void test_random_formats(void)
{
	static const char alphabet[] =
	    "%%%%%-+ #0'I*.*.123456789hlLqjzZtdiuoxXbBcCsSpnfFeEgGaAm$y ";
	static char whole[1 << 16], part[64];
	char fmt[48];
	char bytes[8] = {'a', 'b', '\0', 'c', 'd', 'e', 'f', 'g'};
	for (int round = 0; round < 200000; round++) {
		size_t flen = next_random() % (sizeof(fmt) - 1);
		for (size_t i = 0; i < flen; i++)
			fmt[i] = alphabet[next_random() % (sizeof(alphabet) - 1)];
		fmt[flen] = '\0';
		struct rt_log_value args[6];
		size_t nargs = next_random() % 7;
		for (size_t i = 0; i < nargs; i++) {
			memset(&args[i], 0, sizeof(args[i]));
			args[i].kind = (uint8_t)(next_random() % 7);
			uint64_t shift = next_random() % 64;
			args[i].v.u = next_random() >> shift;
			if (args[i].kind == RT_LOG_VALUE_DOUBLE)
				args[i].v.d = (double)(int64_t)next_random() / 1e6;
			else if (args[i].kind == RT_LOG_VALUE_LONG_DOUBLE)
				args[i].v.ld = (long double)(int64_t)next_random() / 1e9L;
			args[i].null = next_random() % 5 == 0;
			args[i].truncated = next_random() % 3 == 0;
			args[i].len = (uint32_t)(next_random() % (sizeof(bytes) + 1));
			args[i].s = bytes + (sizeof(bytes) - args[i].len);
		}
		size_t r = rt_printf_render(whole, sizeof(whole), fmt, args, nargs);
		if (!CHECK(r < sizeof(whole)) || !CHECK(whole[r] == '\0'))
			continue;
		size_t size = next_random() % sizeof(part);
		memset(part, 'Z', sizeof(part));
		size_t r2 = rt_printf_render(size ? part : NULL, size, fmt, args, nargs);
		if (!CHECK(r2 == r))
			fprintf(stderr, "  format \"%s\": %zu then %zu\n", fmt, r, r2);
		if (size > 0) {
			size_t kept = r < size - 1 ? r : size - 1;
			if (!CHECK(memcmp(part, whole, kept) == 0 && part[kept] == '\0'))
				fprintf(stderr, "  format \"%s\" into %zu bytes\n", fmt, size);
			for (size_t i = size; i < sizeof(part); i++)
				if (!CHECK(part[i] == 'Z'))
					break;
		}
	}
}

int main(void)
{
	corpus_integers();
	uint64_t integer_cases = cases;
	corpus_floating();
	uint64_t floating_cases = cases - integer_cases;
	corpus_others();
	printf("corpus: %ju cases (%ju integer, %ju floating, %ju string/char/pointer), "
	       "%ju also into a small buffer; %ju mismatches\n",
	       (uintmax_t)cases, (uintmax_t)integer_cases, (uintmax_t)floating_cases,
	       (uintmax_t)(cases - integer_cases - floating_cases), (uintmax_t)small_cases,
	       (uintmax_t)mismatches);
	CHECK_EQ(mismatches, 0);
	test_marks();
	test_hostile();
	test_random_formats();
	if (check_failure_count()) {
		fprintf(stderr, "test_printf_render: %d checks failed\n", check_failure_count());
		return 1;
	}
	printf("test_printf_render: all passed\n");
	return 0;
}
