/*
 * log.c - RT_LOG: the threshold, and the writing of one message record.
 *
 * The threshold is one word that RT_LOG reads through
 * ringtrace__log_threshold before doing anything else: the library's own
 * word until the arena exists, then the arena header's log_threshold, so
 * that `ringtrace level` can change it from outside the process.  The
 * arena is never unmapped while the process runs, so the pointer stays
 * valid; a forked child points back at its own word (with the parent's
 * value) until its own arena exists.
 *
 * A message is an RT_REC_LOG record (ringtrace/format.h): the payload is
 * built on the stack - each argument's fixed part, then the bytes of its
 * strings, copied now, at most the string limit in all - and laid into as
 * many slots as it needs by the same slow path every event takes when its
 * thread has no room or no ring (emit_slow.c), so that losses are counted
 * alike.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "common/log_levels.h"
#include "common/parse.h"
#include "record/record.h"

#define RT_LOG_PAYLOAD_MAX (8u + (RT_LOG_MAX_SLOTS - 1u) * 24u)

static volatile uint32_t rt_log_own_threshold = RT_LOG_LEVEL_DEFAULT;
RT_EXPORT volatile uint32_t *ringtrace__log_threshold = &rt_log_own_threshold;
/* read by RT_LOG's inline path too (ringtrace.h): set once, at load */
RT_EXPORT volatile uint32_t ringtrace__log_string_limit = RT_LOG_STRINGS_DEFAULT;

/* RINGTRACE_LEVEL and RINGTRACE_LOG_STRINGS, at load: the threshold is read before any arena. */
__attribute__((constructor)) static void rt_log_start(void)
{
	const char *level = rt_getenv("RINGTRACE_LEVEL");
	if (level && level[0]) {
		unsigned l = rt_log_level_parse(level);
		if (l)
			rt_log_own_threshold = l;
		else
			rt_warn("RINGTRACE_LEVEL is '", level,
				"', not fatal, error, warn, notice, info or debug: info is used",
				NULL);
	}
	const char *strings = rt_getenv("RINGTRACE_LOG_STRINGS");
	uint64_t n;
	if (strings && strings[0]) {
		if (rt_parse_u64(strings, &n) == 0 && n <= RT_LOG_STRINGS_MAX)
			ringtrace__log_string_limit = (uint32_t)n;
		else
			rt_warn("RINGTRACE_LOG_STRINGS is '", strings,
				"', not a byte count up to 1024: 320 is used", NULL);
	}
}

void rt_log_attach_arena(struct rt_arena_header *h)
{
	__atomic_store_n(&h->log_threshold, *ringtrace__log_threshold, __ATOMIC_RELAXED);
	/* publishes: the arena's word holds the threshold before RT_LOG reads it there */
	__atomic_store_n(&ringtrace__log_threshold, &h->log_threshold, __ATOMIC_RELEASE);
}

void rt_log_detach_arena(void)
{
	rt_log_own_threshold = *ringtrace__log_threshold;
	__atomic_store_n(&ringtrace__log_threshold, &rt_log_own_threshold, __ATOMIC_RELEASE);
}

RT_EXPORT int ringtrace_set_level(int level)
{
	if (level < RT_LOG_FATAL || level > RT_LOG_DEBUG)
		return -22; /* -EINVAL, without errno.h's macros in the way of the enum */
	volatile uint32_t *t = __atomic_load_n(&ringtrace__log_threshold, __ATOMIC_ACQUIRE);
	return (int)__atomic_exchange_n(t, (uint32_t)level, __ATOMIC_RELAXED);
}

RT_EXPORT int ringtrace_get_level(void)
{
	return (int)*__atomic_load_n(&ringtrace__log_threshold, __ATOMIC_ACQUIRE);
}

/* Little helpers writing into the payload at p; every caller checked the room. */
static uint8_t *put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

/* The bytes of an argument's fixed part in the payload (ringtrace/format.h). */
static inline uint32_t fixed_bytes(uint8_t type)
{
	return type == RT_ARG_LONG_DOUBLE || RT_ARG_CLASS(type) == RT_ARG_STRING ? 16u : 8u;
}

/*
 * The payload of one call into out (RT_LOG_PAYLOAD_MAX bytes); its size.
 * The fixed parts come first, so the strings' bytes follow them: one pass
 * writes both, the fixed parts' size found first.
 */
static uint32_t build_payload(const struct ringtrace__log_site_body *site,
			      const struct ringtrace__log_arg *args, uint8_t *out)
{
	const uint32_t nargs =
	    site->site.nargs <= RT_LOG_MAX_ARGS ? site->site.nargs : RT_LOG_MAX_ARGS;
	const uint8_t *types = site->types;
	uint32_t fixed = 0;
	for (uint32_t i = 0; i < nargs; i++)
		fixed += fixed_bytes(types[i]);
	uint8_t *f = out, *p = out + fixed;
	uint32_t left = ringtrace__log_string_limit;
	for (uint32_t i = 0; i < nargs; i++) {
		const uint8_t type = types[i];
		f = put64(f, args[i].lo);
		if (type == RT_ARG_LONG_DOUBLE) {
			f = put64(f, args[i].hi);
			continue;
		}
		if (RT_ARG_CLASS(type) != RT_ARG_STRING)
			continue;
		/* the caller's char *, captured as bits */
		// NOLINTNEXTLINE(performance-no-int-to-ptr)
		const char *s = (const char *)(uintptr_t)args[i].lo;
		uint32_t flags = 0, n = 0;
		if (!s) {
			flags = RT_LOG_STR_NULL;
		} else {
			/* one byte more than fits tells a cut string from one that just fits */
			size_t len = strnlen(s, (size_t)left + 1);
			n = len > left ? left : (uint32_t)len;
			if (len > left)
				flags = RT_LOG_STR_TRUNCATED;
			memcpy(p, s, n);
			p += n;
			left -= n;
		}
		f = put32(put32(f, n), flags);
	}
	return (uint32_t)(p - out);
}

void rt_log_call(struct ringtrace__log_site_body *site, const struct ringtrace__log_arg *args)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (!rt_writer_enter(w))
		return;
	/* room for the zeros that fill the last slot: every slot is then one fixed copy */
	uint8_t payload[RT_LOG_PAYLOAD_MAX + 24] __attribute__((aligned(8)));
	uint32_t bytes = build_payload(site, args, payload);
	memset(payload + bytes, 0, 24);
	uint32_t id = __atomic_load_n(&site->site.id, __ATOMIC_RELAXED);
	unsigned nslots = RT_LOG_SLOTS(bytes);
	if (RT__LIKELY(id != 0) &&
	    RT__LIKELY(w->head + nslots <= __atomic_load_n(&w->limit, __ATOMIC_RELAXED)))
		rt_write_padded_payload_record(w, RT_REC_LOG, nslots, id, ringtrace__counter(),
					       payload, bytes);
	else
		rt_record_payload(w, &site->site, RT_REC_LOG, payload, bytes, 0);
	rt_writer_leave(w);
}
