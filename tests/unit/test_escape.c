/*
 * test_escape.c - the escaping rule of every text output (src/common/escape.c),
 * case by case: printable ASCII and valid UTF-8 as they are; each C0 byte,
 * DEL, a C1 character, a byte of no valid sequence (a stray continuation,
 * an overlong form, a surrogate, past U+10FFFF, a sequence cut short) as
 * \xNN; a backslash doubled.  Then every single byte and every pair of
 * bytes: the output holds no control byte and is valid UTF-8; and the
 * printf helpers: a clean string comes back as itself, a long one is cut
 * with "...", and eight results in a row stay distinct.
 */
#include <stdio.h>
#include <string.h>

#include "common/escape.h"
#include "common/utf8.h"

static int failures;

static void expect(const char *in, size_t n, const char *want)
{
	char out[RT_ESCAPED_MAX(64) + 1];
	char *end = rt_fmt_escaped(out, in, n);
	*end = 0;
	const char *shown = rt_escaped_n(in, n);
	if (strcmp(out, want) == 0 && strcmp(shown, want) == 0)
		return;
	failures++;
	fprintf(stderr, "escaped %zu bytes:", n);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %02x", (unsigned char)in[i]);
	fprintf(stderr, ": '%s' / '%s', expected '%s'\n", out, shown, want);
}

#define CASE(in, want) expect(in, sizeof(in) - 1, want)

/* No byte 0x00..0x1f, 0x7f, no C1 character, valid UTF-8. */
static int safe(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n; i++)
		if (u[i] < 0x20 || u[i] == 0x7f || (u[i] == 0xc2 && i + 1 < n && u[i + 1] < 0xa0))
			return 0;
	return rt_utf8_valid_prefix(u, n, 1) == n;
}

int main(void)
{
	CASE("", "");
	CASE("main.c:42 (tag)", "main.c:42 (tag)");
	CASE("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	     "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	CASE("\x1b[31mred", "\\x1b[31mred");
	CASE("a\nb\r\tc\a", "a\\x0ab\\x0d\\x09c\\x07");
	CASE("\x7f", "\\x7f");
	CASE("a\\x1b", "a\\\\x1b");
	CASE("\\", "\\\\");
	CASE("\xc2\x9b"
	     "2J",
	     "\\xc2\\x9b2J"); /* C1 CSI */
	CASE("\xc2\x80\xc2\x9f\xc2\xa0", "\\xc2\\x80\\xc2\\x9f\xc2\xa0");
	CASE("\xff\xfe", "\\xff\\xfe");
	CASE("\x80x", "\\x80x");		 /* a continuation byte first */
	CASE("\xc0\xaf", "\\xc0\\xaf");		 /* overlong '/' */
	CASE("\xe0\x80\xaf", "\\xe0\\x80\\xaf"); /* overlong, 3 bytes */
	CASE("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
	CASE("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
	CASE("\xe2\x82", "\\xe2\\x82"); /* cut short */
	CASE("\xe2\x82x", "\\xe2\\x82x");
	expect("a\0b", 3, "a\\x00b");
	for (int c = 1; c < 0x20; c++) {
		char in[2] = {(char)c, 0}, want[8];
		snprintf(want, sizeof(want), "\\x%02x", c);
		expect(in, 1, want);
	}

	char out[RT_ESCAPED_MAX(2) + 1];
	for (unsigned a = 0; a < 256; a++)
		for (unsigned b = 0; b < 256; b++) {
			char in[2] = {(char)a, (char)b};
			for (size_t n = 1; n <= 2; n++) {
				char *end = rt_fmt_escaped(out, in, n);
				if ((size_t)(end - out) > RT_ESCAPED_MAX(n) ||
				    !safe(out, (size_t)(end - out))) {
					if (failures++ < 20)
						fprintf(stderr,
							"%02x %02x (n %zu): unsafe output\n", a, b,
							n);
				}
			}
		}

	const char *clean = "/usr/bin/app";
	if (rt_escaped(clean) != clean) {
		failures++;
		fprintf(stderr, "a clean string was copied\n");
	}
	if (strcmp(rt_escaped(NULL), "(null)") != 0) {
		failures++;
		fprintf(stderr, "NULL is not shown as (null)\n");
	}
	static char long_name[RT_ESCAPED_SHOWN_MAX + 100];
	memset(long_name, '\x1b', sizeof(long_name) - 1);
	const char *cut = rt_escaped(long_name);
	size_t cut_len = strlen(cut);
	if (cut_len != RT_ESCAPED_MAX(RT_ESCAPED_SHOWN_MAX) + 3 ||
	    strcmp(cut + cut_len - 3, "...")) {
		failures++;
		fprintf(stderr, "a long string is not cut with ...: %zu bytes\n", cut_len);
	}
	const char *eight[8];
	char name[8][4];
	for (int i = 0; i < 8; i++) {
		snprintf(name[i], sizeof(name[i]), "\t%d", i);
		eight[i] = rt_escaped(name[i]);
	}
	for (int i = 0; i < 8; i++) {
		char want[8];
		snprintf(want, sizeof(want), "\\x09%d", i);
		if (strcmp(eight[i], want) != 0) {
			failures++;
			fprintf(stderr, "result %d of 8 is '%s', not '%s'\n", i, eight[i], want);
		}
	}
	static const struct {
		const char *in;
		size_t max;
		const char *want;
	} cuts[] = {
	    {"abcdef", 3, "abc"},
	    {"ab\x1b", 4, "ab"},
	    {"ab\x1b", 6, "ab\\x1b"},
	    {"a\\b", 2, "a"},
	    {"a\\b", 3, "a\\\\"},
	    {"a\xc3\xa9"
	     "b",
	     2, "a"},
	    {"a\xc3\xa9"
	     "b",
	     3, "a\xc3\xa9"},
	    {"\xe2\x82\xac", 2, ""},
	    {"short", 30, "short"},
	};
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		const char *got = rt_escaped_cut(cuts[i].in, strlen(cuts[i].in), cuts[i].max);
		if (strcmp(got, cuts[i].want) != 0) {
			failures++;
			fprintf(stderr, "cut %zu of '%s' to %zu: '%s', not '%s'\n", i, cuts[i].in,
				cuts[i].max, got, cuts[i].want);
		}
	}
	/* JSON strings escape C1 control characters as well */
	char json[RT_JSON_ESCAPED_MAX(8) + 1];
	*rt_fmt_json_escaped(json, "\xc2\x9b\xc2\xa0\x1b", 5) = 0;
	if (strcmp(json, "\\u009b\xc2\xa0\\u001b") != 0) {
		failures++;
		fprintf(stderr, "JSON of C1: '%s'\n", json);
	}
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures != 0;
}
