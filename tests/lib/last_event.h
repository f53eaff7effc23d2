/*
 * last_event.h - a thread entry's last event, as tests look at it: the
 * newer whole copy of the two (valid 0 when there is none).
 */
#ifndef RT_TESTS_LAST_EVENT_H
#define RT_TESTS_LAST_EVENT_H

#include <string.h>

#include "ringtrace/format.h"

static inline struct rt_last_event rt_test_last(const struct rt_thread_entry *e)
{
	struct rt_last_event ev;
	if (!rt_last_event_read(e, &ev))
		memset(&ev, 0, sizeof(ev));
	return ev;
}

#endif /* RT_TESTS_LAST_EVENT_H */
