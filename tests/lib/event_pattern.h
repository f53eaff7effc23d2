/*
 * event_pattern.h - the events the concurrency tests record, and the check
 * that a record read back is exactly one of them.
 *
 * Event i of test thread t goes to one of three sites chosen by i, and every
 * argument is a function of (t, i), so a record that mixes slots of two
 * events, or of two threads, or that is half written, cannot pass.
 */
#ifndef RT_TEST_EVENT_PATTERN_H
#define RT_TEST_EVENT_PATTERN_H

#include <stdint.h>
#include <string.h>

#include "ring_view.h"

static inline void pattern_emit(uint32_t t, uint32_t i)
{
	switch (i % 4) {
	case 2:
		RT_TRACE("pattern six", t, i, ~i, 0u - t, (uint64_t)t << 32 | i, -(int64_t)i);
		break;
	case 3:
		RT_TRACE("pattern two", t, i);
		break;
	default:
		RT_TRACE("pattern one", t, i);
		break;
	}
}

/* The tag a site's entry in the arena holds, or "" when it has none. */
static inline const char *pattern_site_tag(uint32_t site)
{
	if (site == 0 || site >= __atomic_load_n(&rt_arena.header->sites_used, __ATOMIC_RELAXED) ||
	    site >= rt_arena.header->site_capacity)
		return "";
	const struct rt_site_entry *e = &rt_arena.sites[site];
	if (!__atomic_load_n(&e->valid, __ATOMIC_ACQUIRE))
		return "";
	return rt_arena.strings + e->tag_offset;
}

/*
 * Whether a trace record is event (t, i) of the pattern, with t = a0 and
 * i = a1: right site for i, and every other argument as pattern_emit()
 * computed it.
 */
static inline int pattern_record_ok(const struct ring_view_record *r)
{
	if (r->head.kind != RT_REC_TRACE)
		return 0;
	uint32_t t = r->head.a0, i = r->head.a1;
	const char *tag = pattern_site_tag(r->head.site);
	switch (i % 4) {
	case 2:
		return strcmp(tag, "pattern six") == 0 && r->head.nslots == 2 && r->cont.a2 == ~i &&
		       r->cont.a3 == 0u - t && r->cont.a4 == ((uint64_t)t << 32 | i) &&
		       r->cont.a5 == (uint64_t)(-(int64_t)i);
	case 3:
		return strcmp(tag, "pattern two") == 0 && r->head.nslots == 1;
	default:
		return strcmp(tag, "pattern one") == 0 && r->head.nslots == 1;
	}
}

#endif /* RT_TEST_EVENT_PATTERN_H */
