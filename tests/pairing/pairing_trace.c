/*
 * pairing_trace.c DIR - a recording of every hard case of pairing enters
 * with exits and begins with ends, written as `ringtrace record` writes a
 * rotated set: DIR/pairing.rt.000000 and DIR/pairing.rt.000001, one
 * process, a thread (and a ring) per case, named after it:
 *
 *   recursion    f -> f whose inner exit was lost; then a call of g at the
 *                depth of an open call of h (h's exit lost, g's an orphan)
 *   longjmp      m > a > b left by longjmp: the library's exits, unwound,
 *                a span begun in b, which stays open; then c called again
 *                from m
 *   orphans      an exit and an end with nothing open; an end inside a
 *                call that reaches the span begun outside it, and the same
 *                end again, now an orphan; a span whose end comes after an
 *                end of its name below it
 *   deep         1030 nested calls of r: 6 past the cap on open calls
 *   ended        w > x, a span begun in x, the thread ends: the library's
 *                exits, thread ended; the span stays open to the end
 *   unclosed     p > q and a span still open at the end; a trace event
 *                later, the thread's last
 *   left, right  two threads whose nested calls interleave in time
 *   rotation     k > l entered in the first file, both exits in the
 *                second (read alone, the second file has the exits only)
 *   crossing     m > f, a span req begun in f, f returns, m calls g, req
 *                ends in g: timed, as are the calls
 *   interleaved  f > outer > s begun in f; f returns; outer ends (s's end
 *                lost), then s's end (an orphan)
 *   piled        1030 nested spans s, then their 1030 ends: 6 past the cap
 *                on open marked spans
 *
 * Functions are named by their addresses (no binary to read names from):
 * the case's first function is 0x401000, the next 0x402000...  Times are
 * nanoseconds: each case starts on its own round microsecond.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../lib/trace_gen.h"

enum {
	SITE_ENTER = 0, /* and SITE_EXIT = 1 */
	SITE_EXIT = 1,
	SITE_TICK = 2,
	SITE_BEGIN_S = 3,
	SITE_END_S = 4,
	SITE_BEGIN_OUTER = 5,
	SITE_END_OUTER = 6,
	SITE_END_NEVER = 7,
	SITE_BEGIN_JOB = 8,
	SITE_BEGIN_OPEN = 9,
	SITE_BEGIN_REQ = 10,
	SITE_END_REQ = 11,
};

enum {
	RECURSION,
	LONGJMP,
	ORPHANS,
	DEEP,
	ENDED,
	UNCLOSED,
	LEFT,
	RIGHT,
	ROTATION,
	CROSSING,
	INTERLEAVED,
	PILED,
	CASES
};

static const char *const names[CASES] = {"recursion", "longjmp",  "orphans",	 "deep",
					 "ended",     "unclosed", "left",	 "right",
					 "rotation",  "crossing", "interleaved", "piled"};

#define PID 4100
#define FN(n) (0x400000u + 0x1000u * (n))

static struct tg g;

/* Case c's events go to its ring, at TG_START_NS + its microsecond + ns. */
static uint64_t at(int c, uint64_t ns)
{
	return TG_START_NS + 1000u * (uint64_t)(c + 1) * 10u + ns;
}

static void enter(int c, uint64_t ns, uint32_t depth, uint32_t fn)
{
	tg_call(&g, 0, (uint32_t)c, SITE_ENTER, at(c, ns), depth, 0, FN(fn));
}

static void leave(int c, uint64_t ns, uint32_t depth, uint32_t fn, uint32_t flags)
{
	tg_call(&g, 0, (uint32_t)c, SITE_EXIT, at(c, ns), depth, flags, FN(fn));
}

static void mark(int c, uint64_t ns, uint32_t site)
{
	tg_event(&g, 0, (uint32_t)c, site, at(c, ns), 0);
}

/* The first file: every case but the rotation's exits. */
static void first_file(void)
{
	/* f -> f, the inner exit lost: the outer call lasts 100 ns */
	enter(RECURSION, 0, 0, 1);
	enter(RECURSION, 10, 1, 1);
	leave(RECURSION, 100, 0, 1, 0);
	/* h at depth 1 open, an exit of g at depth 1 */
	enter(RECURSION, 200, 0, 2);
	enter(RECURSION, 210, 1, 3);
	leave(RECURSION, 220, 1, 4, 0);
	leave(RECURSION, 300, 0, 2, 0);

	enter(LONGJMP, 0, 0, 1);
	enter(LONGJMP, 10, 1, 2);
	enter(LONGJMP, 20, 2, 3);
	mark(LONGJMP, 25, SITE_BEGIN_S);
	leave(LONGJMP, 40, 2, 3, RT_FUNC_F_UNWOUND);
	leave(LONGJMP, 40, 1, 2, RT_FUNC_F_UNWOUND);
	enter(LONGJMP, 50, 1, 4);
	leave(LONGJMP, 60, 1, 4, 0);
	leave(LONGJMP, 70, 0, 1, 0);

	leave(ORPHANS, 0, 3, 9, 0);
	mark(ORPHANS, 5, SITE_END_NEVER);
	mark(ORPHANS, 10, SITE_BEGIN_OUTER);
	enter(ORPHANS, 20, 0, 1);
	mark(ORPHANS, 30, SITE_END_OUTER);
	leave(ORPHANS, 40, 0, 1, 0);
	mark(ORPHANS, 50, SITE_END_OUTER);
	mark(ORPHANS, 60, SITE_BEGIN_OUTER);
	mark(ORPHANS, 70, SITE_BEGIN_S);
	mark(ORPHANS, 80, SITE_END_OUTER);
	mark(ORPHANS, 90, SITE_END_S);

	for (uint32_t d = 0; d < 1030; d++)
		enter(DEEP, d, d, 1);
	for (uint32_t d = 1030; d-- > 0;)
		leave(DEEP, 2000 + (1029 - d), d, 1, 0);

	enter(ENDED, 0, 0, 1);
	enter(ENDED, 10, 1, 2);
	mark(ENDED, 20, SITE_BEGIN_JOB);
	leave(ENDED, 30, 1, 2, RT_FUNC_F_THREAD_ENDED);
	leave(ENDED, 30, 0, 1, RT_FUNC_F_THREAD_ENDED);

	enter(UNCLOSED, 0, 0, 1);
	enter(UNCLOSED, 10, 1, 2);
	mark(UNCLOSED, 20, SITE_BEGIN_OPEN);
	mark(UNCLOSED, 90, SITE_TICK);

	/* left and right take turns, both in the left case's microsecond */
	for (int i = 0; i < 3; i++) {
		uint64_t base = (uint64_t)i * 100;
		tg_call(&g, 0, LEFT, SITE_ENTER, at(LEFT, base + 1), 0, 0, FN(1));
		tg_call(&g, 0, RIGHT, SITE_ENTER, at(LEFT, base + 2), 0, 0, FN(2));
		tg_call(&g, 0, LEFT, SITE_ENTER, at(LEFT, base + 3), 1, 0, FN(3));
		tg_call(&g, 0, RIGHT, SITE_ENTER, at(LEFT, base + 4), 1, 0, FN(3));
		tg_call(&g, 0, LEFT, SITE_EXIT, at(LEFT, base + 5), 1, 0, FN(3));
		tg_call(&g, 0, RIGHT, SITE_EXIT, at(LEFT, base + 6), 1, 0, FN(3));
		tg_call(&g, 0, RIGHT, SITE_EXIT, at(LEFT, base + 7 + (uint64_t)i), 0, 0, FN(2));
		tg_call(&g, 0, LEFT, SITE_EXIT, at(LEFT, base + 20), 0, 0, FN(1));
	}

	enter(ROTATION, 0, 0, 1);
	enter(ROTATION, 10, 1, 2);

	enter(CROSSING, 0, 0, 1);
	enter(CROSSING, 10, 1, 2);
	mark(CROSSING, 15, SITE_BEGIN_REQ);
	leave(CROSSING, 20, 1, 2, 0);
	enter(CROSSING, 30, 1, 3);
	mark(CROSSING, 35, SITE_END_REQ);
	leave(CROSSING, 40, 1, 3, 0);
	leave(CROSSING, 50, 0, 1, 0);

	enter(INTERLEAVED, 0, 0, 1);
	mark(INTERLEAVED, 10, SITE_BEGIN_OUTER);
	mark(INTERLEAVED, 20, SITE_BEGIN_S);
	leave(INTERLEAVED, 30, 0, 1, 0);
	mark(INTERLEAVED, 40, SITE_END_OUTER);
	mark(INTERLEAVED, 50, SITE_END_S);

	for (uint32_t i = 0; i < 1030; i++)
		mark(PILED, i, SITE_BEGIN_S);
	for (uint32_t i = 0; i < 1030; i++)
		mark(PILED, 2000 + i, SITE_END_S);
}

/* The second file: the rotation's exits. */
static void second_file(void)
{
	leave(ROTATION, 500, 1, 2, 0);
	leave(ROTATION, 600, 0, 1, 0);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: pairing_trace DIR\n");
		return 2;
	}
	tg_init(&g);
	tg_add_source(&g, 0, PID, 0, RT_MODE_STREAM, TG_START_NS);
	tg_add_function_sites(&g, 0, SITE_ENTER);
	tg_add_site(&g, 0, SITE_TICK, "tick", 0, 30);
	tg_add_span_site(&g, 0, SITE_BEGIN_S, "s", RT_SITE_BEGIN, 31);
	tg_add_span_site(&g, 0, SITE_END_S, "s", RT_SITE_END, 32);
	tg_add_span_site(&g, 0, SITE_BEGIN_OUTER, "outer", RT_SITE_BEGIN, 33);
	tg_add_span_site(&g, 0, SITE_END_OUTER, "outer", RT_SITE_END, 34);
	tg_add_span_site(&g, 0, SITE_END_NEVER, "never begun", RT_SITE_END, 35);
	tg_add_span_site(&g, 0, SITE_BEGIN_JOB, "job", RT_SITE_BEGIN, 36);
	tg_add_span_site(&g, 0, SITE_BEGIN_OPEN, "open", RT_SITE_BEGIN, 37);
	tg_add_span_site(&g, 0, SITE_BEGIN_REQ, "req", RT_SITE_BEGIN, 38);
	tg_add_span_site(&g, 0, SITE_END_REQ, "req", RT_SITE_END, 39);
	for (int c = 0; c < CASES; c++)
		tg_add_thread(&g, 0, PID + 1 + c, names[c], (uint32_t)c, TG_START_NS);
	char path[4096];
	for (uint32_t f = 0; f < 2; f++) {
		snprintf(path, sizeof(path), "%s/pairing.rt.%06u", argv[1], f);
		tg_open(&g, path, 0x5a17, f);
		tg_file_head(&g);
		if (f == 0)
			first_file();
		else
			second_file();
		tg_close(&g, f == 0 ? RT_FILE_END_ROTATED : RT_FILE_END_FINISHED);
	}
	return 0;
}
