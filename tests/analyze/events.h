/*
 * events.h - what the analyzers' unit tests share: events made by hand
 * (process 100, no CPU, the rest zero), and an analyzer's report read
 * back as text from a temporary file.
 */
#ifndef RT_TEST_ANALYZE_EVENTS_H
#define RT_TEST_ANALYZE_EVENTS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/check.h"
#include "analyze/analyzer.h"
#include "common/output.h"

static inline struct rt_event analyze_event(enum rt_event_kind kind, int32_t tid, int64_t ns)
{
	struct rt_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.pid = 100;
	ev.tid = tid;
	ev.ts_ns = ns;
	ev.cpu = -1;
	return ev;
}

/*
 * a's report of *state (JSON rows or the table), then *state freed and
 * NULL; the text is the caller's to free.  name names the temporary file.
 */
static inline char *analyze_report(const struct rt_analyzer *a, void **state, const char *name,
				   int json)
{
	char path[256];
	snprintf(path, sizeof(path), "/tmp/%s.XXXXXX", name);
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	unlink(path);
	struct rt_out out;
	CHECK_EQ(rt_out_open(&out, fd), 0);
	struct rt_analyze_report report = {.out = &out, .json = json};
	CHECK_EQ(a->report(*state, &report), 0);
	a->free(*state);
	*state = NULL;
	CHECK_EQ(rt_out_close(&out), 0);
	off_t size = lseek(fd, 0, SEEK_END);
	char *text = calloc(1, (size_t)size + 1);
	CHECK(text && pread(fd, text, (size_t)size, 0) == size);
	close(fd);
	return text;
}

/* The text holds needle; when not, says which. */
static inline int analyze_has(const char *text, const char *needle)
{
	if (strstr(text, needle))
		return 1;
	fprintf(stderr, "not found: %s\n", needle);
	return 0;
}

#endif /* RT_TEST_ANALYZE_EVENTS_H */
