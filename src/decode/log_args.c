/*
 * log_args.c - decode an RT_LOG payload against its site's types, checking
 * every length against the payload before it is used.
 */
#include <stdio.h>
#include <string.h>

#include "decode/log_args.h"

static uint64_t load64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t load32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static int fail(struct rt_log_args *out, const char *problem)
{
	out->problem = problem;
	return -1;
}

int rt_log_args_decode(const struct rt_site *site, const unsigned char *payload, size_t length,
		       struct rt_log_args *out)
{
	/* each value is filled whole below: no need to clear all 16 first */
	out->count = 0;
	out->problem = NULL;
	if (!site || site->kind != RT_SITE_LOG || !site->types || site->nargs > RT_LOG_MAX_ARGS)
		return fail(out, "not a log site");
	if (!payload)
		return fail(out, "no payload");
	size_t at = 0;
	/* the string bytes follow every argument; their lengths add up as they come */
	size_t strings_end = site->log_fixed < length ? site->log_fixed : length;
	for (unsigned i = 0; i < site->nargs; i++) {
		uint8_t code = site->types[i];
		struct rt_log_value *v = &out->values[i];
		memset(v, 0, sizeof(*v));
		size_t need = rt_log_arg_bytes(code);
		if (length - at < need)
			return fail(out, "arguments past the end of the payload");
		v->size = (uint8_t)RT_ARG_BYTES(code);
		switch (RT_ARG_CLASS(code)) {
		case RT_ARG_SIGNED:
			v->kind = RT_LOG_VALUE_SIGNED;
			v->v.i = (int64_t)load64(payload + at);
			break;
		case RT_ARG_UNSIGNED:
			v->kind = RT_LOG_VALUE_UNSIGNED;
			v->v.u = load64(payload + at);
			break;
		case RT_ARG_POINTER:
			v->kind = RT_LOG_VALUE_POINTER;
			v->v.u = load64(payload + at);
			break;
		case RT_ARG_FLOAT:
			v->kind = RT_LOG_VALUE_DOUBLE;
			memcpy(&v->v.d, payload + at, sizeof(double));
			break;
		case RT_ARG_LONG_DOUBLE:
			v->kind = RT_LOG_VALUE_LONG_DOUBLE;
			v->size = 16;
			memset(&v->v, 0, sizeof(v->v));
			memcpy(&v->v.ld, payload + at,
			       sizeof(long double) < 16 ? sizeof(long double) : 16);
			break;
		case RT_ARG_STRING: {
			uint32_t copied = load32(payload + at + 8);
			uint32_t flags = load32(payload + at + 12);
			v->kind = RT_LOG_VALUE_STRING;
			v->v.u = load64(payload + at); /* the pointer, for %p */
			if (flags & ~(RT_LOG_STR_NULL | RT_LOG_STR_TRUNCATED))
				return fail(out, "unknown string flags");
			if ((flags & RT_LOG_STR_NULL) && (copied || (flags & RT_LOG_STR_TRUNCATED)))
				return fail(out, "a NULL string with bytes");
			if (copied > RT_LOG_STRINGS_MAX || copied > length - strings_end)
				return fail(out, "string bytes past the end of the payload");
			v->null = (flags & RT_LOG_STR_NULL) != 0;
			v->truncated = (flags & RT_LOG_STR_TRUNCATED) != 0;
			v->len = copied;
			v->s = (const char *)payload + strings_end;
			strings_end += copied;
			break;
		}
		default:
			return fail(out, "unknown argument type");
		}
		at += need;
		out->count = i + 1;
	}
	/* nothing but zeros after the strings, and no slot more than they need */
	if (RT_LOG_SLOTS(strings_end) != RT_LOG_SLOTS(length))
		return fail(out, "more slots than its arguments need");
	for (size_t k = strings_end; k < length; k++)
		if (payload[k])
			return fail(out, "bytes after the last string");
	return 0;
}

size_t rt_log_render(char *out, size_t size, const struct rt_site *site,
		     const unsigned char *payload, size_t length, int *damaged)
{
	struct rt_log_args args;
	int bad = rt_log_args_decode(site, payload, length, &args) != 0;
	if (damaged)
		*damaged = bad;
	const char *fmt = site && site->tag ? site->tag : "";
	size_t n = rt_printf_render(out, size, fmt, args.values, args.count);
	if (!bad)
		return n;
	char mark[96];
	int m = snprintf(mark, sizeof(mark), " " RT_LOG_DAMAGED_MARK ": %s>", args.problem);
	if (m < 0)
		m = 0;
	if (size > 0 && n < size - 1) {
		size_t room = size - 1 - n;
		size_t take = (size_t)m < room ? (size_t)m : room;
		memcpy(out + n, mark, take);
		out[n + take] = 0;
	}
	return n + (size_t)m;
}
