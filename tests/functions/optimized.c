/*
 * optimized.c - calls as optimized builds make them, for optimized.sh:
 * built with -finstrument-functions at -O2, -O3 and with LTO by gcc and
 * clang (and clang's -finstrument-functions-after-inlining), recorded by
 * `ringtrace record` and by uftrace, whose call trees must agree
 * (compare_uftrace.py).
 *
 *     optimized inline|longjmp|coro|loop N
 *
 *   inline   work() calls a static inline helper in a loop and a helper of
 *            optimized_helpers.c that LTO inlines; chain() calls inline
 *            helpers that call each other; fib() recurses; dispatch()
 *            calls through a table of pointers; big() has locals larger
 *            than the hooks look through for a frame
 *   longjmp  jumper() calls mid -> leaf three times from one loop; leaf
 *            longjmps back into jumper, which then calls after()
 *   coro     coro() resumes a coroutine (swapcontext, on a stack of its
 *            own) four times; the coroutine steps three times and ends;
 *            then coro calls after()
 *   loop N   N rounds of work(), chain() and dispatch(), and of jumper's
 *            longjmps: what the hooks do for every call, for a count of
 *            the system calls the program makes
 *
 * Only main, the scenario's functions and the helpers are instrumented.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

#include "optimized.h"

#define QUIET __attribute__((no_instrument_function))
#define CALLED __attribute__((noinline))

volatile int opt_sink;

/* ---- inline ------------------------------------------------------------- */

static inline int sq(int x)
{
	return x * x;
}

CALLED int work(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += sq(i) + opt_add3(i);
	return s;
}

static inline int inner(int x)
{
	return sq(x) + 1;
}

static inline int outer(int x)
{
	return inner(x) * 2;
}

CALLED int chain(int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += outer(i);
	return s;
}

CALLED int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

CALLED int twice(int x)
{
	return opt_add3(x) * 2;
}

CALLED int negate(int x)
{
	return -x;
}

CALLED int dispatch(int n)
{
	static int (*const table[])(int) = {twice, negate, sq};
	int s = 0;
	for (int i = 0; i < n; i++)
		s += table[i % 3](i);
	return s;
}

/* locals larger than RT_FN_SCAN_WORDS words: its frame is not found */
CALLED int big(int n)
{
	volatile int pad[2048];
	for (int i = 0; i < 2048; i++)
		pad[i] = i;
	return pad[n] + work(2);
}

QUIET static void run_inline(void)
{
	opt_sink = work(5);
	opt_sink = chain(3);
	opt_sink = fib(6);
	opt_sink = dispatch(6);
	opt_sink = big(7);
}

/* ---- longjmp ------------------------------------------------------------ */

static jmp_buf back;

CALLED void leaf(int n)
{
	opt_sink = sq(n);
	longjmp(back, n + 1);
}

CALLED void mid(int n)
{
	leaf(n);
	opt_sink = 0;
}

CALLED void after(void)
{
	opt_sink = sq(42);
}

CALLED void jumper(void)
{
	static volatile int round;
	for (round = 0; round < 3;) {
		if (setjmp(back) == 0)
			mid(round);
		else
			round++;
	}
	after();
}

/* ---- coroutines --------------------------------------------------------- */

static ucontext_t main_context, coro_context;
#define CORO_STACK (256u * 1024u)

CALLED void co_step(int i)
{
	opt_sink = sq(i);
	swapcontext(&coro_context, &main_context);
}

CALLED void co_body(void)
{
	for (int i = 0; i < 3; i++)
		co_step(i);
}

CALLED void co_resume(void)
{
	swapcontext(&main_context, &coro_context);
}

CALLED int coro(void)
{
	void *stack =
	    mmap(NULL, CORO_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED || getcontext(&coro_context) != 0)
		return 1;
	coro_context.uc_stack.ss_sp = stack;
	coro_context.uc_stack.ss_size = CORO_STACK;
	coro_context.uc_link = &main_context;
	makecontext(&coro_context, co_body, 0);
	for (int i = 0; i < 4; i++)
		co_resume();
	after();
	return 0;
}

/* ---- main --------------------------------------------------------------- */

int main(int argc, char **argv)
{
	const char *s = argc >= 2 ? argv[1] : "";
	if (strcmp(s, "inline") == 0) {
		run_inline();
	} else if (strcmp(s, "longjmp") == 0) {
		jumper();
	} else if (argc == 3 && strcmp(argv[1], "loop") == 0) {
		for (long i = atol(argv[2]); i > 0; i--) {
			opt_sink = work(3) + chain(2) + dispatch(3);
			jumper();
		}
	} else if (strcmp(s, "coro") == 0) {
		if (coro() != 0)
			return 1;
	} else {
		fprintf(stderr, "usage: optimized inline|longjmp|coro|loop N\n");
		return 2;
	}
	return 0;
}
