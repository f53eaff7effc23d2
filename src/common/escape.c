/*
 * escape.c - strings from inputs made safe for a terminal line
 * (common/escape.h has the rule).  Runs of plain ASCII are copied whole;
 * only a byte past 0x7f asks for the UTF-8 table.
 */
#include <string.h>

#include "common/escape.h"
#include "common/utf8.h"

/* A byte shown as it is by itself: printable ASCII but the backslash. */
static inline int plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '\\';
}

static char *put_hex(char *p, unsigned char c)
{
	static const char hex[16] = "0123456789abcdef";
	p[0] = '\\';
	p[1] = 'x';
	p[2] = hex[c >> 4];
	p[3] = hex[c & 0xf];
	return p + 4;
}

char *rt_fmt_escaped(char *p, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		size_t run = i;
		while (run < n && plain(s[run]))
			run++;
		memcpy(p, s + i, run - i);
		p += run - i;
		i = run;
		if (i == n)
			break;
		unsigned char c = s[i];
		if (c == '\\') {
			*p++ = '\\';
			*p++ = '\\';
			i++;
			continue;
		}
		size_t len = c >= 0x80 ? rt_utf8_sequence_length(s + i, n - i) : 0;
		if (len == 2 && c == 0xc2 && s[i + 1] < 0xa0) {
			/* a C1 control character: both its bytes */
			p = put_hex(put_hex(p, c), s[i + 1]);
			i += 2;
		} else if (len) {
			memcpy(p, s + i, len);
			p += len;
			i += len;
		} else {
			/* C0, DEL, or a byte of no valid sequence: that byte alone */
			p = put_hex(p, c);
			i++;
		}
	}
	return p;
}

void rt_out_escaped(struct rt_out *out, const char *s, size_t n)
{
	while (n) {
		size_t chunk = n < 4096 ? n : 4096;
		/* never split a UTF-8 sequence: back up to a lead byte */
		while (chunk < n && chunk > 4093 && ((unsigned char)s[chunk] & 0xc0) == 0x80)
			chunk--;
		char *p = rt_out_reserve(out, RT_ESCAPED_MAX(chunk));
		rt_out_commit(out, rt_fmt_escaped(p, s, chunk));
		s += chunk;
		n -= chunk;
	}
}

void rt_out_escaped_str(struct rt_out *out, const char *s)
{
	rt_out_escaped(out, s, strlen(s));
}

#define SHOWN_SLOTS 8
static __thread char shown[SHOWN_SLOTS][RT_ESCAPED_MAX(RT_ESCAPED_SHOWN_MAX) + 4];
static __thread unsigned shown_next;

const char *rt_escaped_n(const char *s, size_t n)
{
	char *buf = shown[shown_next++ % SHOWN_SLOTS];
	size_t cut = n;
	if (cut > RT_ESCAPED_SHOWN_MAX) {
		cut = RT_ESCAPED_SHOWN_MAX;
		/* never split a UTF-8 sequence: back up to a lead byte */
		while (cut > RT_ESCAPED_SHOWN_MAX - 3 && ((unsigned char)s[cut] & 0xc0) == 0x80)
			cut--;
	}
	char *end = rt_fmt_escaped(buf, s, cut);
	if (cut < n) {
		memcpy(end, "...", 3);
		end += 3;
	}
	*end = 0;
	return buf;
}

const char *rt_escaped(const char *s)
{
	if (!s)
		return "(null)";
	size_t n = 0;
	while (s[n] && plain((unsigned char)s[n]))
		n++;
	if (!s[n])
		return s;
	return rt_escaped_n(s, n + strlen(s + n));
}

size_t rt_escaped_boundary(const char *shown_text, size_t max)
{
	size_t end = 0;
	for (;;) {
		/* the escaped text is well formed: an escape, or one whole sequence */
		unsigned char c = (unsigned char)shown_text[end];
		size_t token = c == '\\'  ? (shown_text[end + 1] == 'x' ? 4 : 2)
			       : c < 0x80 ? 1
			       : c < 0xe0 ? 2
			       : c < 0xf0 ? 3
					  : 4;
		if (!c || end + token > max)
			return end;
		end += token;
	}
}

const char *rt_escaped_cut(const char *s, size_t n, size_t max)
{
	char *shown_text = (char *)rt_escaped_n(s, n);
	shown_text[rt_escaped_boundary(shown_text, max)] = 0;
	return shown_text;
}
