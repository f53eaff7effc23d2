/*
 * parse.c - numbers and sizes from command lines and the environment.
 */
#include <errno.h>
#include <stddef.h>

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

const char *rt_path_basename(const char *path)
{
	const char *base = path;
	for (const char *p = path; *p; p++)
		if (*p == '/' && p[1])
			base = p + 1;
	return base;
}
