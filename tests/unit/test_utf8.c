/*
 * test_utf8.c - rt_utf8_sequence_length (src/common/utf8.c).
 *
 * Every code point encoded by the book must be accepted with its length,
 * and not when one byte fewer may be read; the forms UTF-8 forbids (an
 * overlong, a surrogate, past U+10FFFF, a lone continuation byte, a lead
 * byte no sequence has, a sequence cut short) must be refused.  Then every
 * sequence of two and three bytes, and of four with chosen later bytes, is
 * held to a second validator written the other way round: decode the code
 * point by masks, then check its range.  rt_utf8_valid_prefix and
 * rt_utf8_repair (which skip ASCII a word at a time) are held to the same
 * work done a sequence at a time, over strings with a bad byte or a NUL at
 * every place of the first words.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/utf8.h"

static int failures;

static void expect(const char *what, const unsigned char *s, size_t n, size_t want)
{
	size_t got = rt_utf8_sequence_length(s, n);
	if (got == want)
		return;
	if (failures++ < 20) {
		fprintf(stderr, "%s:", what);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, " %02x", s[i]);
		fprintf(stderr, " (n %zu): %zu, expected %zu\n", n, got, want);
	}
}

/* The code point's encoding; its length. */
static size_t encode(uint32_t cp, unsigned char *s)
{
	if (cp < 0x80) {
		s[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		s[0] = (unsigned char)(0xc0 | cp >> 6);
		s[1] = (unsigned char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		s[0] = (unsigned char)(0xe0 | cp >> 12);
		s[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		s[2] = (unsigned char)(0x80 | (cp & 0x3f));
		return 3;
	}
	s[0] = (unsigned char)(0xf0 | cp >> 18);
	s[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
	s[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
	s[3] = (unsigned char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The second validator: the code point decoded by masks, then its range checked. */
static size_t reference(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp, min;
	if (s[0] < 0x80)
		return 1;
	if ((s[0] & 0xe0) == 0xc0)
		len = 2, cp = s[0] & 0x1fu, min = 0x80;
	else if ((s[0] & 0xf0) == 0xe0)
		len = 3, cp = s[0] & 0x0fu, min = 0x800;
	else if ((s[0] & 0xf8) == 0xf0)
		len = 4, cp = s[0] & 0x07u, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

struct bad {
	const char *what;
	const char *bytes;
	size_t n;
};

static const struct bad bad[] = {
    {"overlong NUL", "\xc0\x80", 2},
    {"overlong of 2 bytes", "\xc1\xbf", 2},
    {"overlong of 3 bytes", "\xe0\x80\x80", 3},
    {"overlong of 3 bytes, the highest", "\xe0\x9f\xbf", 3},
    {"overlong of 4 bytes", "\xf0\x80\x80\x80", 4},
    {"overlong of 4 bytes, the highest", "\xf0\x8f\xbf\xbf", 4},
    {"the first surrogate", "\xed\xa0\x80", 3},
    {"the last surrogate", "\xed\xbf\xbf", 3},
    {"a low surrogate", "\xed\xb0\x80", 3},
    {"U+110000", "\xf4\x90\x80\x80", 4},
    {"the most 4 bytes hold", "\xf7\xbf\xbf\xbf", 4},
    {"lead byte F5", "\xf5\x80\x80\x80", 4},
    {"lead byte F8", "\xf8\x88\x80\x80\x80", 5},
    {"lead byte FC", "\xfc\x84\x80\x80\x80\x80", 6},
    {"lead byte FE", "\xfe", 1},
    {"lead byte FF", "\xff", 1},
    {"a lone continuation byte", "\x80", 1},
    {"a lone continuation byte, the last", "\xbf", 1},
    {"2 bytes cut by the end", "\xc3", 1},
    {"3 bytes cut by the end", "\xe2\x82", 2},
    {"4 bytes cut by the end", "\xf0\x9f\x98", 3},
    {"2 bytes cut by ASCII", "\xc3\x41", 2},
    {"3 bytes cut by ASCII", "\xe2\x82\x41", 3},
    {"4 bytes cut by ASCII", "\xf0\x9f\x98\x41", 4},
    {"3 bytes cut by a lead byte", "\xe2\xc3\xa9", 3},
    {"4 bytes cut by a lead byte", "\xf0\x9f\xc3\xa9", 4},
};

/* The valid prefix, a sequence at a time. */
static size_t prefix_slowly(const unsigned char *s, size_t n, int nul_bad)
{
	size_t i = 0;
	while (i < n && !(nul_bad && !s[i])) {
		size_t len = rt_utf8_sequence_length(s + i, n - i);
		if (!len)
			break;
		i += len;
	}
	return i;
}

/* The repaired copy, a sequence at a time; its length. */
static size_t repair_slowly(unsigned char *out, const unsigned char *s, size_t n, int nul_bad)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t len = nul_bad && !s[i] ? 0 : rt_utf8_sequence_length(s + i, n - i);
		if (len) {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	return o;
}

static void test_prefix_and_repair(void)
{
	static const char *const odd[] = {
	    "\xff", "", "\xc3", "\xe2\x82", "\xc3\xa9", "\xed\xa0\x80", "\xf0\x9f\x98\x80"};
	unsigned char s[64], want[3 * 64], got[3 * 64];
	for (size_t k = 0; k < sizeof odd / sizeof odd[0]; k++) {
		size_t odd_length = k == 1 ? 1 : strlen(odd[k]); /* odd[1]: a NUL */
		for (size_t at = 0; at < 24; at++) {
			for (size_t n = at + odd_length; n <= 40; n += 5) {
				memset(s, 'a', sizeof s);
				memcpy(s + at, odd[k], odd_length);
				for (int nul_bad = 0; nul_bad < 2; nul_bad++) {
					size_t p = rt_utf8_valid_prefix(s, n, nul_bad);
					if (p != prefix_slowly(s, n, nul_bad))
						expect("a valid prefix", s, n,
						       prefix_slowly(s, n, nul_bad));
					size_t w = repair_slowly(want, s, n, nul_bad);
					size_t g =
					    (size_t)(rt_utf8_repair(got, s, n, nul_bad) - got);
					if (g != w || memcmp(got, want, w) != 0) {
						if (failures++ < 20)
							fprintf(stderr,
								"repair of bytes %zu at %zu of %zu "
								"(nul_bad "
								"%d): %zu bytes, expected %zu\n",
								k, at, n, nul_bad, g, w);
					}
				}
			}
		}
	}
	const unsigned char mixed[] = "caf\xe9 \xff ok \xc3\xa9";
	const unsigned char fixed[] = "caf\xef\xbf\xbd \xef\xbf\xbd ok \xc3\xa9";
	size_t g = (size_t)(rt_utf8_repair(got, mixed, sizeof mixed - 1, 1) - got);
	if (g != sizeof fixed - 1 || memcmp(got, fixed, g) != 0)
		fprintf(stderr, "repair of a mixed string: wrong (%zu bytes)\n", g), failures++;
}

int main(void)
{
	unsigned char s[8];
	uint64_t accepted = 0;
	for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		size_t len = encode(cp, s);
		expect("a code point", s, len, len);
		if (len > 1)
			expect("a code point cut short", s, len - 1, 0);
		/* what follows the sequence is no part of it */
		s[len] = 0x80;
		expect("a code point, a continuation byte after it", s, len + 1, len);
		accepted++;
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		expect(bad[i].what, (const unsigned char *)bad[i].bytes, bad[i].n, 0);
	expect("NUL", (const unsigned char *)"", 1, 1);

	/* against the reference: every pair and triple, quadruples of chosen tails */
	for (unsigned a = 0; a < 256; a++) {
		for (unsigned b = 0; b < 256; b++) {
			s[0] = (unsigned char)a;
			s[1] = (unsigned char)b;
			expect("a pair", s, 2, reference(s, 2));
			for (unsigned c = 0; c < 256; c++) {
				s[2] = (unsigned char)c;
				expect("a triple", s, 3, reference(s, 3));
			}
			static const unsigned char tails[] = {0x00, 0x41, 0x7f, 0x80,
							      0x9f, 0xbf, 0xc0, 0xff};
			for (size_t c = 0; c < sizeof tails; c++) {
				for (size_t d = 0; d < sizeof tails; d++) {
					s[2] = tails[c];
					s[3] = tails[d];
					expect("a quadruple", s, 4, reference(s, 4));
				}
			}
		}
	}
	test_prefix_and_repair();
	printf("%llu code points accepted, %zu forbidden forms refused: %s\n",
	       (unsigned long long)accepted, sizeof bad / sizeof bad[0],
	       failures ? "FAILED" : "ok");
	return failures != 0;
}
