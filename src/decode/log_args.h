/*
 * log_args.h - an RT_LOG record's payload as the arguments of its format:
 * from the site's type codes and the payload bytes, the values
 * rt_printf_render() takes.  The payload comes from a file and is checked
 * before any byte of it is used: every argument and every string must lie
 * inside it, string flags must be ones the format defines, and the record
 * must be exactly as long as its arguments need (docs/FORMAT.md, "Log
 * messages").  A payload that fails is damage: the message is rendered
 * with what did check and marked, never read past its end.
 */
#ifndef RT_DECODE_LOG_ARGS_H
#define RT_DECODE_LOG_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "decode/printf_render.h"
#include "decode/sites.h"

/* What follows a message whose payload did not check (then the reason, in brackets). */
#define RT_LOG_DAMAGED_MARK "<damaged payload"

struct rt_log_args {
	struct rt_log_value values[RT_LOG_MAX_ARGS];
	size_t count;	     /* values decoded: site->nargs, or fewer when damaged */
	const char *problem; /* NULL when the payload checked, else a few words */
};

/*
 * Decode payload (length bytes: all the record's slots hold) for site, a
 * valid log site.  Strings point into payload.  Returns 0, or -1 with
 * out->problem set (and out->count the arguments before the damage).
 */
int rt_log_args_decode(const struct rt_site *site, const unsigned char *payload, size_t length,
		       struct rt_log_args *out);

/*
 * The message of a log record into out (size bytes, NUL-terminated when
 * size > 0), marked when the payload did not check.  Returns the length
 * of the whole message, like snprintf; *damaged (if not NULL) says whether
 * the payload was damaged.
 */
size_t rt_log_render(char *out, size_t size, const struct rt_site *site,
		     const unsigned char *payload, size_t length, int *damaged);

#endif /* RT_DECODE_LOG_ARGS_H */
