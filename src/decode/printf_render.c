/*
 * printf_render.c - the RT_LOG formatter (rules in printf_render.h).
 *
 * Each conversion is parsed once.  The common plain ones (no flags, width
 * or precision: %d %u %x %s %c %p and their length-modified forms) are
 * written here directly; every other one is rebuilt from its parsed parts
 * (never copied from the format, so clamps hold) and handed to snprintf with
 * an argument of exactly the C type the conversion expects, which is what
 * makes the output glibc's to the byte, floating point above all.
 */
#define _GNU_SOURCE
#include "decode/printf_render.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <wchar.h>

enum {
	F_MINUS = 1,
	F_PLUS = 2,
	F_SPACE = 4,
	F_HASH = 8,
	F_ZERO = 16,
	F_QUOTE = 32,
	F_I18N = 64,
};

enum length {
	LEN_NONE,
	LEN_HH,
	LEN_H,
	LEN_L,
	LEN_LL, /* ll and q */
	LEN_BIG_L,
	LEN_J,
	LEN_Z, /* z and Z */
	LEN_T,
};

struct spec {
	const char *text; /* from the '%' */
	size_t text_len;
	unsigned flags;
	int width; /* -1: none */
	int prec;  /* -1: none */
	int width_star, prec_star;
	enum length len;
	char conv; /* '\0': the format ended inside the conversion */
};

struct sink {
	char *out;
	size_t size;
	size_t pos; /* bytes of the whole message so far */
};

static inline void put(struct sink *k, const char *s, size_t n)
{
	if (k->pos < k->size) {
		size_t room = k->size - 1 - k->pos;
		memcpy(k->out + k->pos, s, n < room ? n : room);
	}
	k->pos += n;
}

static inline void put_char(struct sink *k, char c)
{
	if (k->pos + 1 < k->size)
		k->out[k->pos] = c;
	k->pos++;
}

static void put_str(struct sink *k, const char *s)
{
	put(k, s, strlen(s));
}

/* ---- the conversion's type, applied to the recorded value ------------- */

static int64_t signed_value(const struct spec *sp, const struct rt_log_value *a)
{
	int64_t v = a->v.i;
	switch (sp->len) {
	case LEN_HH:
		return (signed char)(int)v;
	case LEN_H:
		return (short)(int)v;
	case LEN_NONE:
		return (int)v;
	case LEN_L:
		return (long)v;
	case LEN_LL:
	case LEN_BIG_L:
		return (long long)v;
	case LEN_J:
		return (intmax_t)v;
	case LEN_Z:
		return (ssize_t)v;
	case LEN_T:
		return (ptrdiff_t)v;
	}
	return v;
}

static uint64_t unsigned_value(const struct spec *sp, const struct rt_log_value *a)
{
	uint64_t v = a->v.u;
	switch (sp->len) {
	case LEN_HH:
		return (unsigned char)(unsigned)v;
	case LEN_H:
		return (unsigned short)(unsigned)v;
	case LEN_NONE:
		return (unsigned)v;
	case LEN_L:
		return (unsigned long)v;
	case LEN_LL:
	case LEN_BIG_L:
		return (unsigned long long)v;
	case LEN_J:
		return (uintmax_t)v;
	case LEN_Z:
	case LEN_T:
		return (size_t)v;
	}
	return v;
}

/* ---- the fast paths ---------------------------------------------------- */

static void put_decimal(struct sink *k, uint64_t v, int negative)
{
	char buf[24];
	char *e = buf + sizeof(buf), *p = e;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (negative)
		*--p = '-';
	put(k, p, (size_t)(e - p));
}

static void put_hex(struct sink *k, uint64_t v, int upper, int prefix)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char buf[24];
	char *e = buf + sizeof(buf), *p = e;
	do {
		*--p = digits[v & 15];
		v >>= 4;
	} while (v);
	if (prefix) {
		*--p = 'x';
		*--p = '0';
	}
	put(k, p, (size_t)(e - p));
}

/* The bytes of a string argument, cut at the first NUL. */
static size_t string_bytes(const struct rt_log_value *a, const char **s)
{
	if (!a->s || a->len == 0) {
		*s = "";
		return 0;
	}
	*s = a->s;
	const char *nul = memchr(a->s, '\0', a->len);
	return nul ? (size_t)(nul - a->s) : a->len;
}

static int is_integer(const struct rt_log_value *a)
{
	return a->kind == RT_LOG_VALUE_SIGNED || a->kind == RT_LOG_VALUE_UNSIGNED;
}

static int is_floating(const struct rt_log_value *a)
{
	return a->kind == RT_LOG_VALUE_DOUBLE || a->kind == RT_LOG_VALUE_LONG_DOUBLE;
}

/* Renders a plain conversion (no flags, width, precision) if it has a fast path. */
static int render_fast(struct sink *k, const struct spec *sp, const struct rt_log_value *a)
{
	switch (sp->conv) {
	case 'd':
	case 'i':
		if (!is_integer(a))
			return 0;
		int64_t v = signed_value(sp, a);
		put_decimal(k, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, v < 0);
		return 1;
	case 'u':
		if (!is_integer(a))
			return 0;
		put_decimal(k, unsigned_value(sp, a), 0);
		return 1;
	case 'x':
	case 'X':
		if (!is_integer(a))
			return 0;
		put_hex(k, unsigned_value(sp, a), sp->conv == 'X', 0);
		return 1;
	case 'c':
		if (!is_integer(a) || sp->len != LEN_NONE)
			return 0;
		if ((unsigned char)(int)a->v.i == 0)
			put_str(k, RT_PRINTF_NUL_SYMBOL);
		else
			put_char(k, (char)(unsigned char)(int)a->v.i);
		return 1;
	case 's':
		if (a->kind != RT_LOG_VALUE_STRING || sp->len != LEN_NONE)
			return 0;
		if (a->null) {
			put(k, "(null)", 6);
		} else {
			const char *s;
			size_t n = string_bytes(a, &s);
			put(k, s, n);
			if (a->truncated)
				put_str(k, RT_PRINTF_TRUNCATED_MARK);
		}
		return 1;
	case 'p':
		if (a->kind != RT_LOG_VALUE_POINTER && a->kind != RT_LOG_VALUE_STRING)
			return 0;
		if (a->v.u == 0)
			put(k, "(nil)", 5);
		else
			put_hex(k, (uintptr_t)a->v.u, 0, 1);
		return 1;
	}
	return 0;
}

/* ---- the general path: one rebuilt conversion, handed to snprintf ------ */

static char *put_int(char *p, int v)
{
	char buf[16];
	char *e = buf + sizeof(buf), *q = e;
	do {
		*--q = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	memcpy(p, q, (size_t)(e - q));
	return p + (e - q);
}

/* fmt gets "%", the flags, width, precision, the length modifier, and conv. */
static void rebuild(char *fmt, unsigned flags, int width, int prec, enum length len, char conv)
{
	char *p = fmt;
	*p++ = '%';
	static const char flag_chars[] = "-+ #0'I";
	for (unsigned i = 0; i < 7; i++)
		if (flags & (1u << i))
			*p++ = flag_chars[i];
	if (width >= 0)
		p = put_int(p, width);
	if (prec >= 0) {
		*p++ = '.';
		p = put_int(p, prec);
	}
	static const char *const lengths[] = {"", "hh", "h", "l", "ll", "L", "j", "z", "t"};
	for (const char *l = lengths[len]; *l; l++)
		*p++ = *l;
	*p++ = conv;
	*p = '\0';
}

/* Where an snprintf into the sink writes, and how much it may. */
static void sink_room(struct sink *k, char **at, size_t *room)
{
	if (k->pos < k->size) {
		*at = k->out + k->pos;
		*room = k->size - k->pos;
	} else {
		*at = NULL;
		*room = 0;
	}
}

static void put_mark(struct sink *k, const char *before, const struct spec *sp, const char *after)
{
	put_str(k, before);
	put(k, sp->text, sp->text_len);
	put_str(k, after);
}

static const char *kind_name(uint8_t kind, char *buf)
{
	switch (kind) {
	case RT_LOG_VALUE_SIGNED:
		return ": signed>";
	case RT_LOG_VALUE_UNSIGNED:
		return ": unsigned>";
	case RT_LOG_VALUE_DOUBLE:
		return ": double>";
	case RT_LOG_VALUE_LONG_DOUBLE:
		return ": long double>";
	case RT_LOG_VALUE_POINTER:
		return ": pointer>";
	case RT_LOG_VALUE_STRING:
		return ": string>";
	}
	char *p = buf;
	memcpy(p, ": kind ", 7);
	p = put_int(p + 7, kind);
	*p++ = '>';
	*p = '\0';
	return buf;
}

static void put_bad(struct sink *k, const struct spec *sp, uint8_t kind)
{
	char buf[24];
	put_mark(k, "<bad ", sp, kind_name(kind, buf));
}

/*
 * The format comes from a file and is checked by nothing: the one place a
 * format that is not a literal reaches snprintf, and only ever one built by
 * rebuild() from parsed parts.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"

static void render_general(struct sink *k, const struct spec *sp, int width, int prec,
			   unsigned flags, const struct rt_log_value *a)
{
	char fmt[64];
	char *at;
	size_t room;
	int n = -1;
	sink_room(k, &at, &room);
	switch (sp->conv) {
	case 'd':
	case 'i': {
		if (!is_integer(a))
			goto bad;
		rebuild(fmt, flags, width, prec, sp->len, sp->conv);
		int64_t v = signed_value(sp, a);
		switch (sp->len) {
		case LEN_NONE:
		case LEN_HH:
		case LEN_H:
			n = snprintf(at, room, fmt, (int)v);
			break;
		case LEN_L:
			n = snprintf(at, room, fmt, (long)v);
			break;
		case LEN_LL:
		case LEN_BIG_L:
			n = snprintf(at, room, fmt, (long long)v);
			break;
		case LEN_J:
			n = snprintf(at, room, fmt, (intmax_t)v);
			break;
		case LEN_Z:
			n = snprintf(at, room, fmt, (ssize_t)v);
			break;
		case LEN_T:
			n = snprintf(at, room, fmt, (ptrdiff_t)v);
			break;
		}
		break;
	}
	case 'u':
	case 'o':
	case 'x':
	case 'X':
	case 'b':
	case 'B': {
		if (!is_integer(a))
			goto bad;
		rebuild(fmt, flags, width, prec, sp->len, sp->conv);
		uint64_t v = unsigned_value(sp, a);
		switch (sp->len) {
		case LEN_NONE:
		case LEN_HH:
		case LEN_H:
			n = snprintf(at, room, fmt, (unsigned)v);
			break;
		case LEN_L:
			n = snprintf(at, room, fmt, (unsigned long)v);
			break;
		case LEN_LL:
		case LEN_BIG_L:
			n = snprintf(at, room, fmt, (unsigned long long)v);
			break;
		case LEN_J:
			n = snprintf(at, room, fmt, (uintmax_t)v);
			break;
		case LEN_Z:
		case LEN_T:
			n = snprintf(at, room, fmt, (size_t)v);
			break;
		}
		break;
	}
	case 'c':
	case 'C':
		if (!is_integer(a))
			goto bad;
		if ((sp->conv == 'C' || sp->len == LEN_L) ? a->v.u == 0
							  : (unsigned char)(int)a->v.i == 0) {
			/* the width counts columns: the symbol is three bytes wide in one */
			rebuild(fmt, flags & 1u, width > 0 ? width + 2 : width, -1, LEN_NONE, 's');
			n = snprintf(at, room, fmt, RT_PRINTF_NUL_SYMBOL);
			break;
		}
		if (sp->conv == 'C' || sp->len == LEN_L) {
			rebuild(fmt, flags, width, prec, LEN_L, 'c');
			n = snprintf(at, room, fmt, (wint_t)a->v.u);
			if (n < 0) {
				put_mark(k, "<bad ", sp, ": EILSEQ>");
				return;
			}
		} else {
			rebuild(fmt, flags, width, prec, LEN_NONE, 'c');
			n = snprintf(at, room, fmt, (int)a->v.i);
		}
		break;
	case 's':
	case 'S': {
		if (a->kind != RT_LOG_VALUE_STRING)
			goto bad;
		if (a->null) {
			/* glibc decides between "(null)" and nothing by the precision */
			rebuild(fmt, flags, width, prec, LEN_NONE, 's');
			n = snprintf(at, room, fmt, (const char *)NULL);
			break;
		}
		const char *s;
		size_t len = string_bytes(a, &s);
		int cut = a->truncated && (prec < 0 || (size_t)prec > len);
		/* the precision keeps snprintf within the recorded bytes */
		int p = prec >= 0 && (size_t)prec < len ? prec : (int)len;
		rebuild(fmt, flags, width, p, LEN_NONE, 's');
		/* "" for no bytes: a sanitizer's snprintf checks %.0s as a whole string */
		n = snprintf(at, room, fmt, p ? s : "");
		if (n >= 0 && cut) {
			k->pos += (size_t)n;
			put_str(k, RT_PRINTF_TRUNCATED_MARK);
			return;
		}
		break;
	}
	case 'p':
		if (a->kind != RT_LOG_VALUE_POINTER && a->kind != RT_LOG_VALUE_STRING)
			goto bad;
		rebuild(fmt, flags, width, prec, LEN_NONE, 'p');
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): never dereferenced */
		n = snprintf(at, room, fmt, (void *)(uintptr_t)a->v.u);
		break;
	case 'f':
	case 'F':
	case 'e':
	case 'E':
	case 'g':
	case 'G':
	case 'a':
	case 'A':
		if (!is_floating(a))
			goto bad;
		if (sp->len == LEN_LL || sp->len == LEN_BIG_L) {
			rebuild(fmt, flags, width, prec, LEN_BIG_L, sp->conv);
			long double v = a->kind == RT_LOG_VALUE_LONG_DOUBLE ? a->v.ld : a->v.d;
			n = snprintf(at, room, fmt, v);
		} else {
			rebuild(fmt, flags, width, prec, LEN_NONE, sp->conv);
			double v = a->kind == RT_LOG_VALUE_DOUBLE ? a->v.d : (double)a->v.ld;
			n = snprintf(at, room, fmt, v);
		}
		break;
	}
	if (n < 0) {
		/* not expected of a rebuilt conversion; still say something */
		put_mark(k, "<bad ", sp, ": snprintf>");
		return;
	}
	k->pos += (size_t)n;
	/* snprintf ended its output with a NUL in the buffer: the next put overwrites it */
	return;
bad:
	put_bad(k, sp, a->kind);
}

#pragma GCC diagnostic pop

/* ---- parsing ----------------------------------------------------------- */

static int clamp_field(long v)
{
	return v > RT_PRINTF_FIELD_MAX ? RT_PRINTF_FIELD_MAX : (int)v;
}

/* Parse the conversion at p (a '%'); returns where the format goes on. */
static const char *parse(const char *p, struct spec *sp)
{
	const char *start = p++;
	sp->flags = 0;
	sp->width = -1;
	sp->prec = -1;
	sp->width_star = sp->prec_star = 0;
	sp->len = LEN_NONE;
	for (;; p++) {
		unsigned f;
		switch (*p) {
		case '-':
			f = F_MINUS;
			break;
		case '+':
			f = F_PLUS;
			break;
		case ' ':
			f = F_SPACE;
			break;
		case '#':
			f = F_HASH;
			break;
		case '0':
			f = F_ZERO;
			break;
		case '\'':
			f = F_QUOTE;
			break;
		case 'I':
			f = F_I18N;
			break;
		default:
			f = 0;
		}
		if (!f)
			break;
		sp->flags |= f;
	}
	if (*p == '*') {
		sp->width_star = 1;
		p++;
	} else if (*p >= '1' && *p <= '9') {
		long w = 0;
		for (; *p >= '0' && *p <= '9'; p++)
			if (w <= RT_PRINTF_FIELD_MAX)
				w = w * 10 + (*p - '0');
		sp->width = clamp_field(w);
	}
	if (*p == '.') {
		p++;
		if (*p == '*') {
			sp->prec_star = 1;
			p++;
		} else {
			long v = 0;
			for (; *p >= '0' && *p <= '9'; p++)
				if (v <= RT_PRINTF_FIELD_MAX)
					v = v * 10 + (*p - '0');
			sp->prec = clamp_field(v);
		}
	}
	switch (*p) {
	case 'h':
		if (*++p == 'h') {
			sp->len = LEN_HH;
			p++;
		} else {
			sp->len = LEN_H;
		}
		break;
	case 'l':
		if (*++p == 'l') {
			sp->len = LEN_LL;
			p++;
		} else {
			sp->len = LEN_L;
		}
		break;
	case 'q':
		sp->len = LEN_LL;
		p++;
		break;
	case 'L':
		sp->len = LEN_BIG_L;
		p++;
		break;
	case 'j':
		sp->len = LEN_J;
		p++;
		break;
	case 'z':
	case 'Z':
		sp->len = LEN_Z;
		p++;
		break;
	case 't':
		sp->len = LEN_T;
		p++;
		break;
	}
	sp->conv = *p;
	if (*p)
		p++;
	sp->text = start;
	sp->text_len = (size_t)(p - start);
	return p;
}

static int known_conversion(char c)
{
	return c && strchr("diuoxXbBcCsSpnfFeEgGaA%", c) != NULL;
}

/* A '*' argument: 0 and its value, or -1 when it is not an integer. */
static int star_value(const struct rt_log_value *a, int *v)
{
	if (!is_integer(a))
		return -1;
	*v = (int)a->v.i;
	return 0;
}

size_t rt_printf_render(char *out, size_t size, const char *fmt, const struct rt_log_value *args,
			size_t nargs)
{
	struct sink k = {.out = out, .size = size, .pos = 0};
	size_t next = 0;
	const char *p = fmt ? fmt : "";
	if (!args)
		nargs = 0;
	while (*p) {
		if (*p != '%') {
			const char *q = strchrnul(p, '%');
			put(&k, p, (size_t)(q - p));
			p = q;
			continue;
		}
		struct spec sp;
		p = parse(p, &sp);
		if (!known_conversion(sp.conv)) {
			put(&k, sp.text, sp.text_len);
			continue;
		}
		if (sp.conv == '%') {
			put_char(&k, '%');
			continue;
		}
		/* every argument this conversion takes, in order, before any check */
		const struct rt_log_value *wa = NULL, *pa = NULL, *a = NULL;
		int missing = 0;
		if (sp.width_star) {
			if (next < nargs)
				wa = &args[next++];
			else
				missing = 1;
		}
		if (sp.prec_star) {
			if (next < nargs)
				pa = &args[next++];
			else
				missing = 1;
		}
		if (next < nargs)
			a = &args[next++];
		else
			missing = 1;
		if (sp.conv == 'n') {
			put_str(&k, "<%n ignored>");
			continue;
		}
		if (missing) {
			put_mark(&k, "<missing ", &sp, ">");
			continue;
		}
		int width = sp.width, prec = sp.prec;
		unsigned flags = sp.flags;
		if (wa) {
			if (star_value(wa, &width) < 0) {
				put_bad(&k, &sp, wa->kind);
				continue;
			}
			if (width < 0) {
				flags |= F_MINUS;
				width = width == INT_MIN ? RT_PRINTF_FIELD_MAX : -width;
			}
			width = clamp_field(width);
		}
		if (pa) {
			if (star_value(pa, &prec) < 0) {
				put_bad(&k, &sp, pa->kind);
				continue;
			}
			prec = prec < 0 ? -1 : clamp_field(prec);
		}
		if (flags == 0 && width < 0 && prec < 0 && render_fast(&k, &sp, a))
			continue;
		render_general(&k, &sp, width, prec, flags, a);
	}
	if (size > 0)
		out[k.pos < size ? k.pos : size - 1] = '\0';
	return k.pos;
}
