/*
 * check_survivors.h - after a victim died, `ringtrace dump --json` on its
 * arena must show every event it committed: per tracer thread one gapless
 * run of its events ending at the newest record its ring committed, every
 * argument as the victim computed it, nothing twice, the record being
 * written at the instant of death (if any) as one `torn` loss and never as
 * an event, and overwritten + present (+ torn) adding up to what the ring
 * committed.  What the ring committed is read from the arena itself
 * (arena_file.h), not taken from the tool.
 */
#ifndef RT_TEST_CHECK_SURVIVORS_H
#define RT_TEST_CHECK_SURVIVORS_H

#include <stddef.h>
#include <stdint.h>

/* What the test knows about the victim, beyond what the arena says. */
struct survivors_expect {
	int mode;	  /* RT_MODE_FLIGHT or RT_MODE_STREAM */
	int drained;	  /* stream mode: a collector moved tail while it ran */
	uint32_t tracers; /* tracer threads "victim-0".. that all recorded */
	uint32_t state;	  /* the header state the arena must be left in, 0: any */
	/* the tracer whose last event is known exactly (-1: none), and that event */
	int known_thread;
	uint32_t known_last;
	int all_known; /* every tracer's last event is known_last */
};

/* What was found, for the test's summary. */
struct survivors_stats {
	uint64_t present, overwritten, dropped;
	uint32_t torn;	   /* torn records reported */
	uint32_t torn_mid; /* of which the record's slots were partly written */
	uint64_t dump_lines;
	uint32_t no_last_event; /* threads the dump gave no last event */
};

/*
 * Run `tool dump --json arena` and check its output against the arena.
 * Diagnostics go to stderr prefixed with label.  Returns the number of
 * failed checks (0: all held); adds what was found to *stats.
 */
int survivors_check(const char *tool, const char *arena, const struct survivors_expect *expect,
		    const char *label, struct survivors_stats *stats);

/*
 * Check a dump held in memory (lines separated by '\n') against the arena:
 * what survivors_check() does after running the tool, for a test that
 * edits a dump to see the check fail.
 */
int survivors_check_text(const char *text, size_t length, const char *arena,
			 const struct survivors_expect *expect, const char *label,
			 struct survivors_stats *stats);

/*
 * Whether dump line l is event *i of tracer t of the victim's pattern:
 * site (tag, function, file) and every argument as the victim computed them.
 */
struct dump_line;
int survivors_is_event(const struct dump_line *l, uint32_t t, uint32_t *i);

/*
 * Run argv (argv[0] a path) with stdout and stderr captured, each
 * NUL-terminated (free() them).  Returns the wait status, or -1.
 */
int run_capture(char *const argv[], char **out, size_t *out_length, char **err);

#endif /* RT_TEST_CHECK_SURVIVORS_H */
