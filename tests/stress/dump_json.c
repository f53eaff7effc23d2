/*
 * dump_json.c - a small JSON reader for exactly what `dump --json` prints:
 * one flat object per line whose values are strings, integers and arrays of
 * integers.  Other values (objects, booleans, null, fractions) are accepted
 * and skipped where a field is unknown, refused where a known field needs
 * something else.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dump_json.h"

struct cursor {
	const char *p;
	const char *start;
	char *error;
	size_t error_size;
};

__attribute__((format(printf, 2, 3))) static int fail(struct cursor *c, const char *fmt, ...)
{
	char what[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->error, c->error_size, "column %ld: %s", (long)(c->p - c->start) + 1, what);
	return -1;
}

static void skip_space(struct cursor *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		c->p++;
}

static int expect(struct cursor *c, char ch)
{
	skip_space(c);
	if (*c->p != ch)
		return fail(c, "expected '%c'", ch);
	c->p++;
	return 0;
}

static int hex_digit(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* A string into out (NUL-terminated, cut to size); \uXXXX below 0x100 as one byte. */
static int parse_string(struct cursor *c, char *out, size_t size)
{
	skip_space(c);
	if (*c->p != '"')
		return fail(c, "expected a string");
	c->p++;
	size_t n = 0;
	for (;;) {
		unsigned char ch = (unsigned char)*c->p;
		if (ch == 0)
			return fail(c, "unterminated string");
		if (ch < 0x20)
			return fail(c, "control character in a string");
		c->p++;
		if (ch == '"')
			break;
		if (ch == '\\') {
			char e = *c->p++;
			switch (e) {
			case '"':
			case '\\':
			case '/':
				ch = (unsigned char)e;
				break;
			case 'b':
				ch = '\b';
				break;
			case 'f':
				ch = '\f';
				break;
			case 'n':
				ch = '\n';
				break;
			case 'r':
				ch = '\r';
				break;
			case 't':
				ch = '\t';
				break;
			case 'u': {
				int v = 0;
				for (int k = 0; k < 4; k++) {
					int d = hex_digit(*c->p);
					if (d < 0)
						return fail(c, "bad \\u escape");
					v = v * 16 + d;
					c->p++;
				}
				ch = v < 0x100 ? (unsigned char)v : '?';
				break;
			}
			default:
				return fail(c, "bad escape");
			}
		}
		if (out && n + 1 < size)
			out[n++] = (char)ch;
	}
	if (out && size)
		out[n] = 0;
	return 0;
}

static int parse_int(struct cursor *c, struct json_int *out)
{
	skip_space(c);
	int negative = *c->p == '-';
	if (negative)
		c->p++;
	if (*c->p < '0' || *c->p > '9')
		return fail(c, "expected an integer");
	if (*c->p == '0' && c->p[1] >= '0' && c->p[1] <= '9')
		return fail(c, "leading zero");
	uint64_t v = 0;
	while (*c->p >= '0' && *c->p <= '9') {
		unsigned d = (unsigned)(*c->p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return fail(c, "integer out of range");
		v = v * 10 + d;
		c->p++;
	}
	if (*c->p == '.' || *c->p == 'e' || *c->p == 'E')
		return fail(c, "expected an integer, not a fraction");
	if (negative && v > (uint64_t)INT64_MAX + 1)
		return fail(c, "negative integer out of range");
	out->negative = negative && v != 0;
	out->bits = negative ? 0 - v : v;
	return 0;
}

static int parse_signed(struct cursor *c, int64_t *out)
{
	struct json_int v;
	if (parse_int(c, &v))
		return -1;
	if (!v.negative && v.bits > INT64_MAX)
		return fail(c, "integer out of range");
	*out = (int64_t)v.bits;
	return 0;
}

static int parse_unsigned(struct cursor *c, uint64_t *out)
{
	struct json_int v;
	if (parse_int(c, &v))
		return -1;
	if (v.negative)
		return fail(c, "expected a non-negative integer");
	*out = v.bits;
	return 0;
}

static int skip_value(struct cursor *c, int depth);

static int skip_container(struct cursor *c, char close, int depth)
{
	c->p++;
	skip_space(c);
	if (*c->p == close) {
		c->p++;
		return 0;
	}
	for (;;) {
		if (close == '}') {
			if (parse_string(c, NULL, 0) || expect(c, ':'))
				return -1;
		}
		if (skip_value(c, depth + 1))
			return -1;
		skip_space(c);
		if (*c->p == close) {
			c->p++;
			return 0;
		}
		if (expect(c, ','))
			return -1;
	}
}

static int skip_value(struct cursor *c, int depth)
{
	skip_space(c);
	if (depth > 16)
		return fail(c, "nested too deeply");
	switch (*c->p) {
	case '"':
		return parse_string(c, NULL, 0);
	case '{':
		return skip_container(c, '}', depth);
	case '[':
		return skip_container(c, ']', depth);
	}
	static const char *const words[] = {"true", "false", "null"};
	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(words[i]);
		if (strncmp(c->p, words[i], n) == 0) {
			c->p += n;
			return 0;
		}
	}
	/* any number, fractions included */
	const char *begin = c->p;
	if (*c->p == '-')
		c->p++;
	while ((*c->p >= '0' && *c->p <= '9') || *c->p == '.' || *c->p == 'e' || *c->p == 'E' ||
	       *c->p == '+' || *c->p == '-')
		c->p++;
	return c->p > begin ? 0 : fail(c, "expected a value");
}

static int parse_args(struct cursor *c, struct dump_line *out)
{
	if (expect(c, '['))
		return -1;
	out->nargs = 0;
	skip_space(c);
	if (*c->p == ']') {
		c->p++;
		return 0;
	}
	for (;;) {
		if (out->nargs >= DUMP_MAX_ARGS)
			return fail(c, "more than %d arguments", DUMP_MAX_ARGS);
		if (parse_int(c, &out->args[out->nargs++]))
			return -1;
		skip_space(c);
		if (*c->p == ']') {
			c->p++;
			return 0;
		}
		if (expect(c, ','))
			return -1;
	}
}

static int parse_field(struct cursor *c, const char *key, struct dump_line *out)
{
	if (strcmp(key, "kind") == 0)
		return parse_string(c, out->kind, sizeof(out->kind));
	if (strcmp(key, "tid") == 0)
		return parse_signed(c, &out->tid);
	if (strcmp(key, "ts_ns") == 0) {
		out->has_ts = 1;
		return parse_signed(c, &out->ts_ns);
	}
	if (strcmp(key, "seq") == 0) {
		out->has_seq = 1;
		return parse_unsigned(c, &out->seq);
	}
	if (strcmp(key, "cpu") == 0)
		return parse_signed(c, &out->cpu);
	if (strcmp(key, "thread") == 0)
		return parse_string(c, out->thread, sizeof(out->thread));
	if (strcmp(key, "tag") == 0)
		return parse_string(c, out->tag, sizeof(out->tag));
	if (strcmp(key, "file") == 0)
		return parse_string(c, out->file, sizeof(out->file));
	if (strcmp(key, "line") == 0)
		return parse_signed(c, &out->line);
	if (strcmp(key, "func") == 0)
		return parse_string(c, out->func, sizeof(out->func));
	if (strcmp(key, "args") == 0)
		return parse_args(c, out);
	if (strcmp(key, "count") == 0)
		return parse_unsigned(c, &out->count);
	if (strcmp(key, "reason") == 0)
		return parse_string(c, out->reason, sizeof(out->reason));
	if (strcmp(key, "offset") == 0) {
		out->has_offset = 1;
		return parse_unsigned(c, &out->offset);
	}
	if (strcmp(key, "length") == 0)
		return parse_unsigned(c, &out->length);
	return skip_value(c, 0);
}

int dump_json_parse(const char *text, struct dump_line *out, char *error, size_t error_size)
{
	struct cursor c = {text, text, error, error_size};
	memset(out, 0, sizeof(*out));
	out->nargs = -1;
	out->cpu = INT64_MIN;
	out->line = -1;
	if (expect(&c, '{'))
		return -1;
	skip_space(&c);
	if (*c.p == '}') {
		c.p++;
	} else {
		for (;;) {
			char key[32];
			if (parse_string(&c, key, sizeof(key)) || expect(&c, ':') ||
			    parse_field(&c, key, out))
				return -1;
			skip_space(&c);
			if (*c.p == '}') {
				c.p++;
				break;
			}
			if (expect(&c, ','))
				return -1;
		}
	}
	skip_space(&c);
	if (*c.p != 0)
		return fail(&c, "text after the object");
	if (!out->kind[0])
		return fail(&c, "no \"kind\"");
	return 0;
}
