/*
 * parse.h - small, pure parsers shared by the tool and the recording
 * library (libc only, no allocation, no global state).
 *
 * Every parser takes the whole string: leading or trailing junk, an empty
 * string or a sign where none is allowed is -EINVAL; a value too large for
 * the result is -ERANGE.  *out is written only on success.
 */
#ifndef RT_COMMON_PARSE_H
#define RT_COMMON_PARSE_H

#include <stdint.h>

/* Decimal digits only. */
int rt_parse_u64(const char *s, uint64_t *out);

/* An optional '-' then decimal digits. */
int rt_parse_i64(const char *s, int64_t *out);

/*
 * A size in bytes: decimal digits, then optionally a binary unit K, M, G
 * or T (any case, powers of 1024) and optionally "B" or "iB" after the
 * unit ("64K", "1m", "2GiB", "512B", "4096").
 */
int rt_parse_size(const char *s, uint64_t *out);

/*
 * A duration in nanoseconds: decimal digits with an optional fraction, then
 * a unit: ns, us, ms, s, min or h ("2.5s", "150ms", "3min", "40us").  A
 * unit is required (a bare number is ambiguous); fractions of a nanosecond
 * are -EINVAL.
 */
int rt_parse_duration(const char *s, uint64_t *out);

/* The part of path after its last '/' (path itself when it has none). */
const char *rt_path_basename(const char *path);

#endif /* RT_COMMON_PARSE_H */
