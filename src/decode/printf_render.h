/*
 * printf_render.h - formatting an RT_LOG message when the log is read: the
 * site's format string and the arguments recorded in binary become the text
 * the program's printf would have printed.
 *
 * The rules:
 *
 * - For arguments whose kind fits their conversion, the output is
 *   byte-identical to glibc's snprintf called with the original C arguments:
 *   conversions d i u o x X b B c s p f F e E g G a A %, the flags - + space
 *   # 0 ' I, width, precision, `*` for either (an integer argument, taken as
 *   an int: a negative width means the - flag, a negative precision none),
 *   and the length modifiers hh h l ll q j z Z t L, each applied to the
 *   recorded value as printf applies it after the promotion (%hhd of 300
 *   prints 44, %hu of -1 prints 65535).  As in glibc, ll and q on a floating
 *   conversion mean long double, like L.  A NULL string prints "(null)", or
 *   nothing when the precision is below 6; a NULL %p prints "(nil)".
 *
 * - What fits: the integer conversions and c take RT_LOG_VALUE_SIGNED or
 *   _UNSIGNED; s takes _STRING; p takes _POINTER; the floating conversions
 *   take _DOUBLE or _LONG_DOUBLE (a double for a long double conversion is
 *   widened, a long double for a double conversion narrowed).  %ls and %S
 *   print a recorded string's bytes as %s would; %lc and %C print the
 *   character as glibc does in the current locale.
 *
 * - What does not fit renders as a visible mark and never reads anything
 *   but the argument array and the recorded bytes (a conversion always
 *   consumes the arguments it would have, so later ones stay in place):
 *     <missing %SPEC>        fewer arguments than conversions
 *     <bad %SPEC: KIND>      an argument of the wrong kind (KIND: signed,
 *                            unsigned, double, long double, pointer, string,
 *                            or "kind N" for a kind this file does not know)
 *     <%n ignored>           %n is never executed (its argument is consumed)
 *     <bad %SPEC: EILSEQ>    %lc of a value the locale cannot convert
 *     <bad %SPEC: snprintf>  snprintf failed otherwise (not expected)
 *   where SPEC is the conversion as written in the format.
 * - A string whose copy was cut when recorded (truncated) is rendered as
 *   what was kept, followed by RT_PRINTF_TRUNCATED_MARK; unless the
 *   precision prints no more than the kept bytes, in which case the output
 *   is what printf printed.  A string's bytes end at its first NUL, if any.
 * - A %c (or %lc) of 0, which printf writes as a NUL byte, is rendered as
 *   RT_PRINTF_NUL_SYMBOL, so that the message stays one C string.
 * - Unknown conversions (including positional ones, %1$d, and %m, whose
 *   errno is gone) are copied literally, from the % to the unknown
 *   character; a format ending inside a conversion copies what is left.
 *
 * - The format is untrusted (it comes from a file): it is read once, left
 *   to right, never past its NUL, without recursion.  A width or precision
 *   above RT_PRINTF_FIELD_MAX (from the format or from `*`) is clamped to
 *   it, so no conversion prints more than about that many bytes plus the
 *   digits of its value; nothing is allocated.
 */
#ifndef RT_DECODE_PRINTF_RENDER_H
#define RT_DECODE_PRINTF_RENDER_H

#include <stddef.h>
#include <stdint.h>

/* The widest width and the largest precision honoured; larger ones are clamped. */
#define RT_PRINTF_FIELD_MAX 4096

/* A NUL character's place in a message: U+2400 SYMBOL FOR NULL. */
#define RT_PRINTF_NUL_SYMBOL "\xe2\x90\x80"

/* What follows a string argument whose recorded copy was cut. */
#define RT_PRINTF_TRUNCATED_MARK "<truncated>"

enum rt_log_value_kind {
	RT_LOG_VALUE_SIGNED,	  /* an integer of `size` bytes (1,2,4,8), sign-extended into i */
	RT_LOG_VALUE_UNSIGNED,	  /* an integer of `size` bytes, zero-extended into u */
	RT_LOG_VALUE_DOUBLE,	  /* float (promoted) or double, in d */
	RT_LOG_VALUE_LONG_DOUBLE, /* long double, in ld */
	RT_LOG_VALUE_POINTER,	  /* a pointer's value, in u */
	/* a char * copied at the call: s, len bytes (not NUL-terminated); null: the
	   pointer was NULL; truncated: the copy was cut at the recorder's limit;
	   the pointer's value in u, which %p prints (RT_LOG copies every char *) */
	RT_LOG_VALUE_STRING,
};

struct rt_log_value {
	uint8_t kind; /* enum rt_log_value_kind */
	uint8_t size;
	uint8_t null;
	uint8_t truncated;
	uint32_t len;
	union {
		int64_t i;
		uint64_t u;
		double d;
		long double ld;
	} v;
	const char *s;
};

/*
 * Render fmt (NUL-terminated; NULL renders as "") with args[0..nargs) into out (size bytes,
 * always NUL-terminated when size > 0).  Returns the length of the whole
 * message, like snprintf, so a result >= size says it was cut.
 */
size_t rt_printf_render(char *out, size_t size, const char *fmt, const struct rt_log_value *args,
			size_t nargs);

#endif /* RT_DECODE_PRINTF_RENDER_H */
