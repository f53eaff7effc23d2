/*
 * utf8.c - UTF-8 validation by the table of well-formed sequences: the
 * lead byte gives the length and the range its second byte may take, which
 * is where overlong forms, surrogates and code points past U+10FFFF are
 * told apart; every later byte is a plain continuation byte.
 */
#include "common/utf8.h"

size_t rt_utf8_sequence_length(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2; /* 0xc0 and 0xc1 could lead only overlong forms */
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0; /* below: overlong */
		else if (c == 0xed)
			hi = 0x9f; /* above: surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90; /* below: overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above: past U+10FFFF */
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}
