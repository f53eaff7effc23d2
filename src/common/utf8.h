/*
 * utf8.h - UTF-8 validation, for every output that must be valid UTF-8
 * (JSON strings, protobuf strings, CTF strings and metadata) while a
 * recorded string may hold any byte.
 */
#ifndef RT_COMMON_UTF8_H
#define RT_COMMON_UTF8_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The length (1 to 4) of the valid UTF-8 sequence that begins at s, of
 * which n >= 1 bytes may be read; 0 when the bytes there are no valid
 * sequence: a continuation byte first, an overlong form, a surrogate
 * (U+D800..U+DFFF), a code point past U+10FFFF, or a sequence cut short
 * (by n or by a byte that is no continuation byte).  An ASCII byte, NUL
 * included, is a sequence of 1.
 */
size_t rt_utf8_sequence_length(const unsigned char *s, size_t n);

/*
 * How many of the n bytes at s, from the first, are valid UTF-8 (n when
 * all are); nul_bad: a NUL byte ends them too (a NUL-terminated output).
 * ASCII is skipped 8 bytes at a time, inline: every exported string
 * passes here.
 */
static inline size_t rt_utf8_valid_prefix(const unsigned char *s, size_t n, int nul_bad)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	size_t i = 0;
	for (;;) {
		for (; i + 8 <= n; i += 8) {
			uint64_t w;
			memcpy(&w, s + i, 8);
			/* a high bit set, or (nul_bad) a zero byte, where w - ones borrows */
			if ((w | (nul_bad ? (w - ones) & ~w : 0)) & highs)
				break;
		}
		while (i < n && s[i] < 0x80 && (s[i] || !nul_bad))
			i++;
		if (i == n || !s[i])
			return i;
		size_t len = rt_utf8_sequence_length(s + i, n - i);
		if (!len)
			return i;
		i += len;
	}
}

/*
 * The n bytes at s copied to out (room for 3 n bytes), each byte that is
 * no part of valid UTF-8 (and a NUL when nul_bad) written as U+FFFD.
 * Returns the end of what was written.
 */
static inline unsigned char *rt_utf8_repair(unsigned char *out, const unsigned char *s, size_t n,
					    int nul_bad)
{
	size_t i = 0;
	while (i < n) {
		size_t valid = rt_utf8_valid_prefix(s + i, n - i, nul_bad);
		memcpy(out, s + i, valid);
		out += valid;
		i += valid;
		if (i < n) {
			memcpy(out, "\xEF\xBF\xBD", 3);
			out += 3;
			i++;
		}
	}
	return out;
}

#endif /* RT_COMMON_UTF8_H */
