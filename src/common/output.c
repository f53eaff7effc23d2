/*
 * output.c - the buffered stdout writer and the number and string
 * formatters the printers build their lines with.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/output.h"
#include "common/utf8.h"

int rt_out_open(struct rt_out *out, int fd)
{
	memset(out, 0, sizeof(*out));
	out->fd = fd;
	out->buf = malloc(RT_OUT_BUFFER_BYTES);
	if (!out->buf)
		return -ENOMEM;
	out->capacity = RT_OUT_BUFFER_BYTES;
	return 0;
}

static void write_all(struct rt_out *out, const char *p, size_t n)
{
	while (n && !out->error) {
		ssize_t w = write(out->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			out->error = errno;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
}

void rt_out_flush(struct rt_out *out)
{
	write_all(out, out->buf, out->used);
	out->used = 0;
}

int rt_out_close(struct rt_out *out)
{
	if (out->buf)
		rt_out_flush(out);
	free(out->buf);
	out->buf = NULL;
	out->capacity = 0;
	return out->error ? -out->error : 0;
}

char *rt_out_make_room(struct rt_out *out, size_t n)
{
	(void)n; /* callers never reserve more than RT_OUT_BUFFER_BYTES */
	rt_out_flush(out);
	return out->buf;
}

void rt_out_bytes(struct rt_out *out, const void *data, size_t n)
{
	if (out->capacity - out->used >= n) {
		memcpy(out->buf + out->used, data, n);
		out->used += n;
		return;
	}
	/* too big for what is left: send the buffer, then the data itself */
	rt_out_flush(out);
	if (n >= out->capacity / 2) {
		write_all(out, data, n);
		return;
	}
	memcpy(out->buf, data, n);
	out->used = n;
}

void rt_out_str(struct rt_out *out, const char *s)
{
	rt_out_bytes(out, s, strlen(s));
}

void rt_out_char(struct rt_out *out, char c)
{
	char *p = rt_out_reserve(out, 1);
	*p++ = c;
	rt_out_commit(out, p);
}

void rt_out_u64(struct rt_out *out, uint64_t v)
{
	rt_out_commit(out, rt_fmt_u64(rt_out_reserve(out, RT_FMT_U64_MAX), v));
}

void rt_out_i64(struct rt_out *out, int64_t v)
{
	rt_out_commit(out, rt_fmt_i64(rt_out_reserve(out, RT_FMT_I64_MAX), v));
}

void rt_out_json_string(struct rt_out *out, const char *s, size_t n)
{
	/* escape in chunks so a long string never needs a huge reservation */
	rt_out_char(out, '"');
	while (n) {
		size_t chunk = n < 4096 ? n : 4096;
		/* never split a UTF-8 sequence: back up to a lead byte */
		while (chunk < n && chunk > 4093 && ((unsigned char)s[chunk] & 0xc0) == 0x80)
			chunk--;
		char *p = rt_out_reserve(out, RT_JSON_ESCAPED_MAX(chunk));
		rt_out_commit(out, rt_fmt_json_escaped(p, s, chunk));
		s += chunk;
		n -= chunk;
	}
	rt_out_char(out, '"');
}

void rt_out_printf(struct rt_out *out, const char *format, ...)
{
	char *p = rt_out_reserve(out, 4096);
	va_list ap;
	va_start(ap, format);
	int n = vsnprintf(p, 4096, format, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > 4095)
		n = 4095;
	rt_out_commit(out, p + n);
}

/* ---- numbers ---------------------------------------------------------- */

const char rt_two_digits[201] = "00010203040506070809"
				"10111213141516171819"
				"20212223242526272829"
				"30313233343536373839"
				"40414243444546474849"
				"50515253545556575859"
				"60616263646566676869"
				"70717273747576777879"
				"80818283848586878889"
				"90919293949596979899";

const uint64_t rt_powers_of_ten[20] = {1ull,
				       10ull,
				       100ull,
				       1000ull,
				       10000ull,
				       100000ull,
				       1000000ull,
				       10000000ull,
				       100000000ull,
				       1000000000ull,
				       10000000000ull,
				       100000000000ull,
				       1000000000000ull,
				       10000000000000ull,
				       100000000000000ull,
				       1000000000000000ull,
				       10000000000000000ull,
				       100000000000000000ull,
				       1000000000000000000ull,
				       10000000000000000000ull};

char *rt_fmt_u64_right(char *p, uint64_t v, unsigned width)
{
	unsigned len = rt_decimal_length(v);
	while (width > len) {
		*p++ = ' ';
		width--;
	}
	rt_digits_backwards(p + len, v, len);
	return p + len;
}

char *rt_fmt_u64_zero(char *p, uint64_t v, unsigned digits)
{
	rt_digits_backwards(p + digits, v, digits);
	return p + digits;
}

char *rt_fmt_hex(char *p, uint64_t v, unsigned digits)
{
	static const char hex[16] = "0123456789abcdef";
	for (unsigned i = digits; i > 0; i--) {
		p[i - 1] = hex[v & 0xf];
		v >>= 4;
	}
	return p + digits;
}

/* ---- JSON strings ----------------------------------------------------- */

char *rt_fmt_json_escaped(char *p, const char *str, size_t n)
{
	static const char hex[16] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		unsigned char c = s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			*p++ = (char)c;
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t len = rt_utf8_sequence_length(s + i, n - i);
			if (len == 2 && c == 0xc2 && s[i + 1] < 0xa0) {
				/* a C1 control character (U+0080..U+009F): a terminal may obey it
				 */
				memcpy(p, "\\u00", 4);
				p[4] = hex[s[i + 1] >> 4];
				p[5] = hex[s[i + 1] & 0xf];
				p += 6;
				i += 2;
				continue;
			}
			if (len) {
				memcpy(p, s + i, len);
				p += len;
				i += len;
				continue;
			}
		}
		*p++ = '\\';
		switch (c) {
		case '"':
			*p++ = '"';
			break;
		case '\\':
			*p++ = '\\';
			break;
		case '\n':
			*p++ = 'n';
			break;
		case '\t':
			*p++ = 't';
			break;
		case '\r':
			*p++ = 'r';
			break;
		default:
			/* control characters, DEL and stray bytes */
			memcpy(p, "u00", 3);
			p[3] = hex[c >> 4];
			p[4] = hex[c & 0xf];
			p += 5;
			break;
		}
		i++;
	}
	return p;
}
