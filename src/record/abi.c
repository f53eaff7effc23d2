/*
 * abi.c - the slow path's entry points, one pair per ABI version of the
 * inline code (ringtrace.h, docs/ABI.md).  A program calls the pair of the
 * header it was compiled with, for as long as it runs, whatever version of
 * the library it is given; each pair reads the site layout of its version
 * and hands the site's body to the one slow path (emit_slow.c, log.c).
 *
 *   version 0  ringtrace__emit_slow, ringtrace__log: the headers before
 *              sites carried a version; the site is the body alone.
 *   version 1  ringtrace__emit_slow_v1, ringtrace__log_v1: a head, then
 *              the body.
 *
 * A site of version 1 or later is checked at every call of its entry
 * point, before anything else of it is read: its head must name the
 * version and the size the entry point serves, and its kind must be one
 * the entry point records.  A site that fails is never registered, so its
 * calls keep coming here and are counted lost (as sites refused) without a
 * record; the first failure of the process says so on stderr.  The fast
 * path never reads the head: the check costs it nothing.
 */
#include "record/record.h"

/*
 * A new RINGTRACE_ABI_VERSION keeps the entry points below, with frozen
 * copies of the layouts they read, and adds its own pair.
 */
RT__FORMAT_ASSERT(RINGTRACE_ABI_VERSION == 1, "the entry points of each ABI version, below");

/* Not in any header: only programs built against ABI version 0 call them. */
void ringtrace__emit_slow(struct ringtrace__site_body *site, uint32_t a0, uint32_t a1, uint32_t a2,
			  uint32_t a3, uint64_t a4, uint64_t a5);
void ringtrace__log(struct ringtrace__log_site_body *site, const struct ringtrace__log_arg *args);

/* v in decimal at p, NUL-terminated (async-signal-safe); the end. */
static char *put_decimal(char *p, uint32_t v)
{
	char digits[10];
	unsigned n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = digits[--n];
	*p = 0;
	return p;
}

/* The first site refused in the process says so; the others are only counted. */
static void refuse(const struct ringtrace__abi_head *head)
{
	static int told;
	if (!__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED)) {
		char what[48];
		char *p = put_decimal(what, head->version);
		p[0] = ',';
		p[1] = ' ';
		p = put_decimal(p + 2, head->size);
		static const char bytes[] = " bytes)";
		__builtin_memcpy(p, bytes, sizeof(bytes));
		rt_warn("a site of the program (ABI version ", what,
			" is not one this library records: its events are counted lost;",
			" build the program against this library's ringtrace.h");
	}
	rt_count_refused_event();
}

static int trace_kind(uint8_t kind)
{
	return kind == RT_SITE_TRACE || kind == RT_SITE_BEGIN || kind == RT_SITE_END ||
	       kind == RT_SITE_ENTER || kind == RT_SITE_EXIT;
}

static int head_is(const struct ringtrace__abi_head *head, uint32_t version, uint32_t size)
{
	return head->version == version && head->size == size;
}

/* ---- version 0 ------------------------------------------------------- */

RT_EXPORT void ringtrace__emit_slow(struct ringtrace__site_body *site, uint32_t a0, uint32_t a1,
				    uint32_t a2, uint32_t a3, uint64_t a4, uint64_t a5)
{
	rt_emit_trace(site, a0, a1, a2, a3, a4, a5);
}

RT_EXPORT void ringtrace__log(struct ringtrace__log_site_body *site,
			      const struct ringtrace__log_arg *args)
{
	rt_log_call(site, args);
}

/* ---- version 1 ------------------------------------------------------- */

RT_EXPORT void ringtrace__emit_slow_v1(struct ringtrace__site *site, uint32_t a0, uint32_t a1,
				       uint32_t a2, uint32_t a3, uint64_t a4, uint64_t a5)
{
	if (RT__UNLIKELY(!head_is(&site->abi, 1, sizeof(struct ringtrace__site)) ||
			 !trace_kind(site->body.kind))) {
		refuse(&site->abi);
		return;
	}
	rt_emit_trace(&site->body, a0, a1, a2, a3, a4, a5);
}

RT_EXPORT void ringtrace__log_v1(struct ringtrace__log_site *site,
				 const struct ringtrace__log_arg *args)
{
	if (RT__UNLIKELY(!head_is(&site->abi, 1, sizeof(struct ringtrace__log_site)) ||
			 site->body.site.kind != RT_SITE_LOG)) {
		refuse(&site->abi);
		return;
	}
	rt_log_call(&site->body, args);
}
