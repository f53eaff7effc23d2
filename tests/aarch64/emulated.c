/*
 * emulated.c - starts one program of a cross build under the emulator, for
 * the tests in which a program is started by another one or by a script (a
 * victim, a program under `ringtrace record`) rather than by ctest.  Built
 * for the host, once per program: RT_EMULATOR names the emulator (qemu-aarch64)
 * and RT_EMULATED_PROGRAM the program, both compiled in.
 *
 *   NAME [ARG...]   runs RT_EMULATOR RT_EMULATED_PROGRAM ARG..., in this process
 *
 * The process stays the same one (exec, no fork), so that whoever started it
 * can signal it, wait for it and find its arena by its pid.
 *
 * LD_PRELOAD, when set, names libraries of the emulated program (`ringtrace
 * record` preloads the recording library; forks.sh preloads it itself): the
 * emulator is a host program, whose loader would refuse them and say so on
 * stderr.  So it is taken out of the environment the emulator starts with and
 * handed to the program through the emulator's -E.  That is also why this is
 * a static program, not a script: a script's shell would be loaded with the
 * same LD_PRELOAD.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RT_EMULATOR
#error "RT_EMULATOR: the emulator to start (tests/CMakeLists.txt defines it)"
#endif
#ifndef RT_EMULATED_PROGRAM
#error "RT_EMULATED_PROGRAM: the program it runs (tests/CMakeLists.txt defines it)"
#endif

int main(int argc, char **argv)
{
	/* emulator, -E, LD_PRELOAD=..., program, the arguments, NULL */
	char **args = calloc((size_t)argc + 4, sizeof(*args));
	if (!args) {
		perror("emulated");
		return 127;
	}
	int n = 0;
	args[n++] = (char *)RT_EMULATOR;
	const char *preload = getenv("LD_PRELOAD");
	if (preload) {
		/* qemu splits -E's argument at commas: such a list cannot be handed over */
		if (strchr(preload, ',')) {
			fprintf(stderr, "emulated: LD_PRELOAD holds a comma: %s\n", preload);
			return 127;
		}
		size_t size = strlen("LD_PRELOAD=") + strlen(preload) + 1;
		char *setting = malloc(size);
		if (!setting) {
			perror("emulated");
			return 127;
		}
		snprintf(setting, size, "LD_PRELOAD=%s", preload);
		args[n++] = (char *)"-E";
		args[n++] = setting;
		unsetenv("LD_PRELOAD");
	}
	args[n++] = (char *)RT_EMULATED_PROGRAM;
	for (int i = 1; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	execvp(args[0], args);
	fprintf(stderr, "emulated: cannot run %s: ", args[0]);
	perror(NULL);
	return 127;
}
