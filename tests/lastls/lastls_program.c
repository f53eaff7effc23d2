/*
 * lastls_program.c - a traced program for tests/lastls/lastls.sh.
 *
 *   lastls_program HOW RUN [LAST]
 *     HOW  exit: trace, then exit cleanly
 *          wait: trace, then wait until killed
 *          segv: trace, then store to address 0x10
 *          reexec: trace, then exec this program again with RUN + 1 while
 *                  RUN is below LAST, then exit cleanly: images of one
 *                  process, one after the other
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
	if (argc != 3 && !(argc == 4 && strcmp(argv[1], "reexec") == 0)) {
		fprintf(stderr, "usage: lastls_program exit|wait|segv RUN, or reexec RUN LAST\n");
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
	if (strcmp(how, "reexec") == 0 && run < (unsigned)strtoul(argv[3], NULL, 10)) {
		char next[16];
		snprintf(next, sizeof(next), "%u", run + 1);
		execl("/proc/self/exe", argv[0], how, next, argv[3], (char *)NULL);
		perror("lastls_program: exec");
		return 1;
	}
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
