/*
 * check_dump.h - what the stress test's threads emitted, and the check that
 * `ringtrace dump --json` accounts for every one of those events.
 */
#ifndef RT_TEST_CHECK_DUMP_H
#define RT_TEST_CHECK_DUMP_H

#include <stdint.h>
#include <sys/types.h>

#include "dump_json.h"

/*
 * Event i of thread t: RT_TRACE("stress", t, i), and every eighth one the
 * six-argument RT_TRACE("stress6", t, i, ~i, -t - 1, i << 20 | t, -i) that
 * takes two slots.
 */
static inline int stress_is_large(uint32_t i)
{
	return i % 8 == 7;
}

struct stress_thread {
	pid_t tid;
	uint32_t events; /* how many it emitted */
	char name[16];	 /* given with ringtrace_set_thread_name */
};

struct stress_run {
	int mode;	     /* RINGTRACE_FLIGHT or RINGTRACE_STREAM */
	uint64_t ring_slots; /* slots per ring */
	int own_rings;	     /* every thread had a fresh ring of its own from its first event */
	int limited_room;    /* the file system filled: rings stop short, in both modes */
	const char *file;    /* __FILE__ of the trace sites */
	uint32_t small_line, large_line;
	uint32_t nthreads;
	const struct stress_thread *threads;
};

struct dump_check;

struct dump_check *dump_check_begin(const struct stress_run *run);
/* One line of the dump, in order. */
void dump_check_line(struct dump_check *c, const struct dump_line *line);
/* After the last line: the per-thread accounting.  Frees c; returns how many checks failed. */
int dump_check_end(struct dump_check *c);

#endif /* RT_TEST_CHECK_DUMP_H */
