/*
 * parse.c - numbers and sizes from command lines and the environment.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "common/parse.h"

/* Digits at *s, advancing it; -EINVAL when there are none. */
static int parse_digits(const char **s, uint64_t *out)
{
	const char *p = *s;
	uint64_t v = 0;
	int overflow = 0;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			overflow = 1; /* keep scanning: junk after the digits is still -EINVAL */
		else
			v = v * 10 + d;
	}
	*s = p;
	*out = v;
	return overflow ? -ERANGE : 0;
}

int rt_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v;
	if (!s)
		return -EINVAL;
	int rc = parse_digits(&s, &v);
	if (rc == -EINVAL || *s)
		return -EINVAL;
	if (rc)
		return rc;
	*out = v;
	return 0;
}

int rt_parse_i64(const char *s, int64_t *out)
{
	uint64_t v;
	int negative = 0;
	if (!s)
		return -EINVAL;
	if (*s == '-') {
		negative = 1;
		s++;
	}
	int rc = parse_digits(&s, &v);
	if (rc == -EINVAL || *s)
		return -EINVAL;
	if (rc)
		return rc;
	if (negative) {
		if (v > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return -ERANGE;
		*out = (int64_t)v;
	}
	return 0;
}

int rt_parse_size(const char *s, uint64_t *out)
{
	uint64_t v;
	unsigned shift = 0;
	if (!s)
		return -EINVAL;
	int rc = parse_digits(&s, &v);
	if (rc == -EINVAL)
		return rc;
	switch (*s) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case 't':
	case 'T':
		shift = 40;
		break;
	}
	if (shift) {
		s++;
		if (*s == 'i')
			s++;
	}
	if (*s == 'B' || *s == 'b') {
		s++;
	} else if (shift && s[-1] == 'i') {
		return -EINVAL; /* "Ki" without the B */
	}
	if (*s)
		return -EINVAL;
	if (rc)
		return rc;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

int rt_parse_duration(const char *s, uint64_t *out)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = {{"ns", 1},
		     {"us", 1000},
		     {"ms", 1000000},
		     {"s", 1000000000},
		     {"min", 60000000000ull},
		     {"h", 3600000000000ull}};
	uint64_t whole, fraction = 0, scale = 1;
	if (!s)
		return -EINVAL;
	int rc = parse_digits(&s, &whole);
	if (rc == -EINVAL)
		return rc;
	if (*s == '.') {
		s++;
		if (*s < '0' || *s > '9')
			return -EINVAL;
		/* keep up to 18 digits of the fraction: more cannot matter */
		for (; *s >= '0' && *s <= '9'; s++) {
			if (scale < 1000000000000000000ull) {
				fraction = fraction * 10 + (uint64_t)(*s - '0');
				scale *= 10;
			} else if (*s != '0') {
				return -EINVAL;
			}
		}
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s, units[i].name) != 0)
			continue;
		if (rc)
			return rc;
		uint64_t ns = units[i].ns;
		if (whole > UINT64_MAX / ns)
			return -ERANGE;
		/* the fraction must come out whole in nanoseconds */
		unsigned __int128 f = (unsigned __int128)fraction * ns;
		if (f % scale)
			return -EINVAL;
		uint64_t extra = (uint64_t)(f / scale);
		if (whole * ns > UINT64_MAX - extra)
			return -ERANGE;
		*out = whole * ns + extra;
		return 0;
	}
	return -EINVAL;
}

const char *rt_path_basename(const char *path)
{
	const char *base = path;
	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1])
			base = p + 1;
	return base;
}
