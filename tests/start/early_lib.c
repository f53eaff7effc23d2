/*
 * early_lib.c - libstart_early_lib: a library initialised before the
 * recording library (start_early links it after libringtrace, and it does
 * not depend on it), whose constructor records the process's first event
 * in library mode.
 */
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ringtrace.h"

#include "early.h"

static pid_t lib_child = -1;

pid_t start_early_fork(const char *where)
{
	if (strcmp(where, "preinit") == 0)
		RT_TRACE("preinit");
	else if (strcmp(where, "library") == 0)
		RT_TRACE("library");
	pid_t child = fork();
	if (child == 0) {
		for (unsigned i = 0; i < START_EARLY_EVENTS; i++)
			RT_TRACE("child", i);
		_exit(0);
	}
	int status;
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return child;
}

pid_t start_early_lib_child(void)
{
	return lib_child;
}

__attribute__((constructor)) static void early_lib_start(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "library") == 0)
		lib_child = start_early_fork("library");
}
