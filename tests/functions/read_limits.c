/*
 * read_limits.c - calls of known depths and lengths, ended every way, for
 * the reading limits -t and -D of `replay` and `report`
 * (tests/functions/read_limits.sh).
 *
 *     read_limits return|exit|_exit
 *
 * Depths from main (0).  Long calls spin SLOW_MS or hold such a call;
 * every other call lasts microseconds.
 *   warm (1): long, a leaf
 *   work (1), twice: the event "begin", quick (2), slow (2), quick (2)
 *     slow (2): long; then note (3), short, holding the event "note"
 *   nest(4) (1): recursive down to nest(0) (5), which is long: five long calls
 *   jumper (1): long; jump_soon (2) is left by longjmp at once (short,
 *     unwound), jump_away (2) spins, then is left by longjmp (long, unwound);
 *     then quick (2)
 *   lost_exit (1): long; it lowers the recorded depth, so its exit is not
 *     recorded; main's quick (1) after it closes it ("exit not recorded")
 *   unentered (1): long, but its enter is not recorded (the depth again):
 *     its exit comes with main open around it ("enter not recorded")
 *   a thread: ends_thread (0) -> te_outer (1), long -> te_inner (2), short,
 *     which calls pthread_exit: the three end "thread ended"
 *   then by the argument: return from main; or exit_inside (1), long ->
 *   stays (2), short, which calls exit(0) (the calls open end "open at
 *   exit()") or _exit(0) (they stay open: "not returned").
 * Only warm, work, slow, nest, jumper, jump_away, lost_exit, unentered,
 * ends_thread, te_outer, exit_inside and main last SLOW_MS or more.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringtrace.h>

#define SLOW_MS 40
#define QUIET __attribute__((no_instrument_function))
#ifdef __clang__
#define CALLED __attribute__((noinline))
#else
#define CALLED __attribute__((noinline, noclone))
#endif

CALLED void quick(void);
CALLED void warm(void);
CALLED void note(void);
CALLED void slow(void);
CALLED void work(void);
CALLED void nest(int n);
CALLED void jump_soon(void);
CALLED void jump_away(void);
CALLED void jumper(void);
CALLED void lost_exit(void);
CALLED void unentered(void);
CALLED void te_inner(void);
CALLED void te_outer(void);
CALLED void *ends_thread(void *arg);
CALLED void stays(const char *how);
CALLED void exit_inside(const char *how);

static volatile int sink;
static jmp_buf back;

QUIET static void spin(void)
{
	struct timespec start, now;
	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
	       SLOW_MS * 1000000L);
}

void quick(void)
{
	sink++;
}

void warm(void)
{
	spin();
}

void note(void)
{
	RT_TRACE("note");
}

void slow(void)
{
	spin();
	note();
}

void work(void)
{
	RT_TRACE("begin");
	quick();
	slow();
	quick();
}

void nest(int n)
{
	if (n > 0)
		nest(n - 1);
	else
		spin();
}

void jump_soon(void)
{
	longjmp(back, 1);
}

void jump_away(void)
{
	spin();
	longjmp(back, 1);
}

void jumper(void)
{
	if (setjmp(back) == 0)
		jump_soon();
	if (setjmp(back) == 0)
		jump_away();
	quick();
}

void lost_exit(void)
{
	spin();
	ringtrace_set_max_depth(1); /* its own exit, at depth 1, is not recorded */
}

void unentered(void)
{
	ringtrace_set_max_depth(0); /* its enter was not recorded; its exit is */
	spin();
}

void te_inner(void)
{
	pthread_exit(NULL);
}

void te_outer(void)
{
	spin();
	te_inner();
}

void *ends_thread(void *arg)
{
	te_outer();
	return arg;
}

void stays(const char *how)
{
	fflush(stdout);
	if (strcmp(how, "exit") == 0)
		exit(0);
	_exit(0);
}

void exit_inside(const char *how)
{
	spin();
	stays(how);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "return";
	warm();
	for (int i = 0; i < 2; i++)
		work();
	nest(4);
	jumper();
	lost_exit();
	ringtrace_set_max_depth(0);
	quick();
	ringtrace_set_max_depth(1);
	unentered();
	pthread_t thread;
	if (pthread_create(&thread, NULL, ends_thread, NULL) != 0 ||
	    pthread_join(thread, NULL) != 0)
		return 1;
	if (strcmp(how, "return") != 0)
		exit_inside(how);
	puts("done");
	return 0;
}
