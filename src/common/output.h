/*
 * output.h - a buffered writer for the tool's standard output.
 *
 * The dump command prints millions of lines per second, so the hot path
 * never calls printf: a caller reserves room for a whole line, formats into
 * it with the rt_fmt_* helpers (each returns the end of what it wrote), and
 * commits.  The buffer goes out in large write(2) calls.
 *
 * The first failed write is remembered in `error` (a positive errno) and
 * everything after it is discarded, so a caller checks once, at the end.
 */
#ifndef RT_COMMON_OUTPUT_H
#define RT_COMMON_OUTPUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RT_OUT_BUFFER_BYTES (1u << 20)

struct rt_out {
	int fd;
	int error; /* errno of the first failed write, 0 if none */
	char *buf;
	size_t used;
	size_t capacity;
};

/* Start writing to fd.  Returns 0 or -ENOMEM. */
int rt_out_open(struct rt_out *out, int fd);
/* Write out what is buffered; failures are kept in out->error. */
void rt_out_flush(struct rt_out *out);
/* Flush and free the buffer.  Returns 0 or -errno of the first failed write. */
int rt_out_close(struct rt_out *out);

/* Slow path of rt_out_reserve: flush to make room. */
char *rt_out_make_room(struct rt_out *out, size_t n);

/*
 * Room for at least n bytes (n <= RT_OUT_BUFFER_BYTES) at the end of the
 * buffer; commit what you wrote.  Longer data goes through rt_out_bytes.
 */
static inline char *rt_out_reserve(struct rt_out *out, size_t n)
{
	if (out->capacity - out->used < n)
		return rt_out_make_room(out, n);
	return out->buf + out->used;
}

/* Mark the bytes up to end (inside the reserved room) as written. */
static inline void rt_out_commit(struct rt_out *out, char *end)
{
	out->used = (size_t)(end - out->buf);
}

void rt_out_bytes(struct rt_out *out, const void *data, size_t n);
void rt_out_str(struct rt_out *out, const char *s);
void rt_out_char(struct rt_out *out, char c);
void rt_out_u64(struct rt_out *out, uint64_t v);
void rt_out_i64(struct rt_out *out, int64_t v);
/* A JSON string literal (quotes included) of n bytes of s. */
void rt_out_json_string(struct rt_out *out, const char *s, size_t n);
/* printf, for the cold paths (headers, info); at most 4096 bytes. */
void rt_out_printf(struct rt_out *out, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Formatting into memory.  Each writes at p and returns the end; the
 * caller reserved enough room (the *_MAX sizes below).
 */
#define RT_FMT_U64_MAX 20
#define RT_FMT_I64_MAX 20

/*
 * Numbers are most of a JSON line: formatted inline, the length first (from
 * the highest bit set, one comparison), then two digits at a time, eight at
 * a time in 32-bit steps for a 64-bit value.
 */
extern const char rt_two_digits[201];
extern const uint64_t rt_powers_of_ten[20];

static inline unsigned rt_decimal_length(uint64_t v)
{
	/* floor(log10(v)) is t or t - 1, with t from log2(v) * 1233 / 4096 */
	const unsigned t = (unsigned)((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
	return t + ((v | 1) >= rt_powers_of_ten[t]);
}

static inline void rt_two_digits_at(char *p, unsigned i)
{
	memcpy(p, &rt_two_digits[i * 2], 2);
}

/* The four digits of v < 10^4 at p, zero-padded: its two pairs apart. */
static inline void rt_four_digits_at(char *p, uint32_t v)
{
	const uint32_t high = v / 100;
	rt_two_digits_at(p, high);
	rt_two_digits_at(p + 2, v - high * 100);
}

/*
 * The digits of v ending at end (exclusive), without padding; returns
 * where they start.  Eight at a time from the bottom while more are left,
 * then halves of four digits and pairs apart, so that no step waits on
 * more than two divisions (by multiplications) before it, where peeling a
 * pair at a time chains one division per pair.
 */
static inline char *rt_digits_ending_at(char *end, uint64_t v)
{
	char *p = end;
	while (v >= 100000000u) {
		const uint64_t high = v / 100000000u;
		const uint32_t low = (uint32_t)(v - high * 100000000u);
		const uint32_t upper = low / 10000;
		rt_four_digits_at(p - 8, upper);
		rt_four_digits_at(p - 4, low - upper * 10000);
		p -= 8;
		v = high;
	}
	uint32_t w = (uint32_t)v;
	if (w >= 10000) {
		const uint32_t high = w / 10000;
		rt_four_digits_at(p - 4, w - high * 10000);
		p -= 4;
		w = high;
	}
	if (w >= 100) {
		const uint32_t high = w / 100;
		rt_two_digits_at(p - 2, w - high * 100);
		p -= 2;
		w = high;
	}
	if (w >= 10) {
		p -= 2;
		rt_two_digits_at(p, w);
	} else {
		*--p = (char)('0' + w);
	}
	return p;
}

/* Write the `len` digits of v ending at end (exclusive), zero-padded to len. */
static inline void rt_digits_backwards(char *end, uint64_t v, unsigned len)
{
	char *p = rt_digits_ending_at(end, v);
	while (p > end - len)
		*--p = '0';
}

/*
 * Always inline, as rt_fmt_u64_prefixed and rt_event_put_args are: at -O2
 * GCC made each an out-of-line call, and the calls were about 3 % of
 * dump --json (20-25 ms of 0.67 s over 10 M events, best of ten).
 */
static inline __attribute__((always_inline)) char *rt_fmt_u64(char *p, uint64_t v)
{
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	const unsigned len = rt_decimal_length(v);
	rt_digits_ending_at(p + len, v);
	return p + len;
}

/*
 * A number printed on every line, close to the one printed before (a
 * line's time, a thread's seq): its digits above the last four kept as
 * text.  A number that shares them is written as a copy of them and four
 * digits; any other is formatted, and its digits kept in turn.  Correct
 * whatever numbers come: a cache shared by unrelated numbers only misses.
 * Zeroed, it is empty.
 */
struct rt_fmt_prefix {
	uint64_t high;	 /* the number / 10^4 whose digits these are; 0: none kept */
	size_t length;	 /* of its digits */
	char digits[16]; /* UINT64_MAX / 10^4 has 16 */
};

/* v as rt_fmt_u64 writes it, through the prefix c.  Needs room for 20 bytes at p. */
static inline __attribute__((always_inline)) char *rt_fmt_u64_prefixed(char *p, uint64_t v,
								       struct rt_fmt_prefix *c)
{
	if (v < 10000)
		return rt_fmt_u64(p, v);
	const uint64_t high = v / 10000;
	if (high != c->high) {
		/* formatted where it goes, and its digits kept from there (what is past is room) */
		char *end = rt_fmt_u64(p, v);
		memcpy(c->digits, p, sizeof(c->digits));
		c->length = (size_t)(end - p) - 4;
		c->high = high;
		return end;
	}
	/* all sixteen bytes, a fixed copy: the four digits write over what is past */
	memcpy(p, c->digits, sizeof(c->digits));
	p += c->length;
	rt_four_digits_at(p, (uint32_t)(v - high * 10000));
	return p + 4;
}

static inline char *rt_fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return rt_fmt_u64(p, 0 - (uint64_t)v);
	}
	return rt_fmt_u64(p, (uint64_t)v);
}
/* v in decimal, right-aligned with spaces to width (wider values are kept whole). */
char *rt_fmt_u64_right(char *p, uint64_t v, unsigned width);
/* Exactly `digits` decimal digits, zero-padded; v must fit. */
char *rt_fmt_u64_zero(char *p, uint64_t v, unsigned digits);
/* The low 4*digits bits of v as `digits` lowercase hex digits (digits <= 16). */
char *rt_fmt_hex(char *p, uint64_t v, unsigned digits);

/*
 * JSON string escaping: writes the escaped form of n bytes of s (no
 * quotes) and returns the end.  Needs room for 6 * n bytes.  Control
 * characters (C0, DEL and C1), quotes and backslashes are escaped; bytes
 * that are not part of valid UTF-8 become \u00XX so the output is always
 * valid JSON.
 */
char *rt_fmt_json_escaped(char *p, const char *s, size_t n);
#define RT_JSON_ESCAPED_MAX(n) (6 * (size_t)(n))

#endif /* RT_COMMON_OUTPUT_H */
