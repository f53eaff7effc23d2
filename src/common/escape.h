/*
 * escape.h - the one rule by which a string that came from an input (a
 * tag, a site's file or function, a thread name, a program or module path,
 * a log message, a symbol name, a path in an error message) is printed as
 * text, on stdout or stderr:
 *
 *   - printable ASCII and valid UTF-8 pass through as they are;
 *   - a control character (C0: 0x00..0x1f, DEL 0x7f, and C1: U+0080..U+009F,
 *     which is the two bytes 0xc2 0x80..0x9f), and every byte that is no part
 *     of valid UTF-8, is shown as \xNN (two lowercase hex digits per byte);
 *   - a backslash is shown as \\, so that what is shown reads back to the
 *     bytes it came from, and a name cannot pass for an escaped one.
 *
 * So nothing an input holds can move the cursor, start a terminal
 * sequence, or begin a line of its own: one name, one place on one line.
 * JSON, HTML and the binary exports escape by their own rules
 * (common/output.h, analyze/html.h, common/utf8.h).
 */
#ifndef RT_COMMON_ESCAPE_H
#define RT_COMMON_ESCAPE_H

#include <stddef.h>

#include "common/output.h"

/* Room the escaped form of n bytes may take: \xNN for each. */
#define RT_ESCAPED_MAX(n) (4 * (size_t)(n))

/* The escaped form of the n bytes at s, written at p (RT_ESCAPED_MAX(n) of room); its end. */
char *rt_fmt_escaped(char *p, const char *s, size_t n);

/* The same, written to out (any length). */
void rt_out_escaped(struct rt_out *out, const char *s, size_t n);
/* The NUL-terminated s escaped, to out. */
void rt_out_escaped_str(struct rt_out *out, const char *s);

/*
 * The escaped form of s (NUL-terminated; NULL gives "(null)") or of the n
 * bytes at s, for a printf argument: s itself when nothing needs escaping,
 * else one of a few buffers of the calling thread, each reused by the
 * eighth call after.  A longer string than RT_ESCAPED_SHOWN_MAX bytes is
 * cut there and ends in "...".
 */
#define RT_ESCAPED_SHOWN_MAX 4096
const char *rt_escaped(const char *s);
const char *rt_escaped_n(const char *s, size_t n);

/*
 * rt_escaped_n's result cut to at most max bytes for a column of a table:
 * never inside an escape or a UTF-8 sequence.
 */
const char *rt_escaped_cut(const char *s, size_t n, size_t max);
/*
 * How many bytes of the NUL-terminated escaped text (made of plain ASCII,
 * escapes and valid UTF-8) a column of max bytes shows, cut where it may be.
 */
size_t rt_escaped_boundary(const char *escaped, size_t max);

#endif /* RT_COMMON_ESCAPE_H */
