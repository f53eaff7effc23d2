/*
 * utf8.h - UTF-8 validation, for every output that must be valid UTF-8
 * (JSON strings, protobuf strings, CTF strings and metadata) while a
 * recorded string may hold any byte.
 */
#ifndef RT_COMMON_UTF8_H
#define RT_COMMON_UTF8_H

#include <stddef.h>

/*
 * The length (1 to 4) of the valid UTF-8 sequence that begins at s, of
 * which n >= 1 bytes may be read; 0 when the bytes there are no valid
 * sequence: a continuation byte first, an overlong form, a surrogate
 * (U+D800..U+DFFF), a code point past U+10FFFF, or a sequence cut short
 * (by n or by a byte that is no continuation byte).  An ASCII byte, NUL
 * included, is a sequence of 1.
 */
size_t rt_utf8_sequence_length(const unsigned char *s, size_t n);

#endif /* RT_COMMON_UTF8_H */
