/*
 * early.c - a program whose first events come before the recording
 * library's constructors have run.
 *
 *   start_early preinit|library
 *
 * preinit  an entry of the program's .preinit_array (run before any
 *          library is initialised, the C library included) records the
 *          first event, then forks a child that records EVENTS events.
 * library  the constructor of libstart_early_lib (early_lib.c), which is
 *          initialised before the recording library, does the same.
 *
 * Then main records EVENTS events and forks another child that records
 * EVENTS.  Prints the pids of the children ("child PID", one a line) and
 * "emitted N" for each process: the configuration (RINGTRACE_ARENA) must be
 * honoured from the first event on, and both children traced into arenas
 * of their own.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ringtrace.h"

#include "early.h"

static pid_t early_child;

/* Record the first event, then fork a child that records EVENTS: before any constructor. */
static void early_events(int argc, char **argv, char **envp)
{
	(void)envp;
	if (argc == 2 && strcmp(argv[1], "preinit") == 0)
		early_child = start_early_fork("preinit");
}

__attribute__((section(".preinit_array"),
	       used)) static void (*const early_entry)(int, char **, char **) = early_events;

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "preinit") != 0 && strcmp(argv[1], "library") != 0)) {
		fprintf(stderr, "usage: start_early preinit|library\n");
		return 2;
	}
	pid_t first = early_child ? early_child : start_early_lib_child();
	for (unsigned i = 0; i < START_EARLY_EVENTS; i++)
		RT_TRACE("main", i);
	pid_t second = start_early_fork("main");
	int ok = first > 0 && second > 0;
	printf("child %d\nchild %d\n", (int)first, (int)second);
	/* the first event, then main's; each child's EVENTS */
	printf("emitted %u\nemitted %u\nemitted %u\n", 1 + START_EARLY_EVENTS, START_EARLY_EVENTS,
	       START_EARLY_EVENTS);
	return ok ? 0 : 1;
}
