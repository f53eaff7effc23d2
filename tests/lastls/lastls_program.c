/*
 * lastls_program.c - a traced program for tests/lastls/lastls.sh.
 *
 *   lastls_program HOW RUN
 *     HOW  exit: trace, then exit cleanly
 *          wait: trace, then wait until killed
 *          segv: trace, then store to address 0x10
 *     RUN  a number traced as the first argument of every event ("run"),
 *          so that the test can tell the runs apart in a dump
 *
 * It prints "pid PID" on stdout (flushed) once it has traced, and, when
 * tracing could not start, "tracing off" too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ringtrace.h>

/* read at run time, so that no compiler sees the fault coming */
static volatile uintptr_t fault_address = 0x10;

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: lastls_program exit|wait|segv RUN\n");
		return 2;
	}
	const char *how = argv[1];
	unsigned run = (unsigned)strtoul(argv[2], NULL, 10);
	for (unsigned i = 0; i < 10; i++)
		RT_TRACE("run", run, i);
	printf("pid %d\n", (int)getpid());
	if (!ringtrace_enabled())
		printf("tracing off\n");
	fflush(stdout);
	if (strcmp(how, "wait") == 0) {
		for (;;)
			pause();
	}
	if (strcmp(how, "segv") == 0) {
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): the fault is the point */
		*(volatile int *)fault_address = 1;
	}
	printf("done\n");
	return 0;
}
