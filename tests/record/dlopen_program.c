/*
 * dlopen_program.c - the recording library loaded after start-up, as a
 * plugin or an extension module linked with it is loaded, for forks.sh.
 *
 *   dlopen_program LIB
 *       dlopen()s LIB, calls its ringtrace_enabled() and prints "ok", or
 *       what failed on stderr with exit status 1.  Not linked with LIB: the
 *       library's thread-local storage must fit in what the C library keeps
 *       over for libraries loaded late.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: dlopen_program LIB\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopen_program: %s\n", dlerror());
		return 1;
	}
	int (*enabled)(void) = (int (*)(void))dlsym(lib, "ringtrace_enabled");
	if (!enabled) {
		fprintf(stderr, "dlopen_program: %s\n", dlerror());
		return 1;
	}
	if (!enabled()) {
		fprintf(stderr, "dlopen_program: ringtrace_enabled() is 0\n");
		return 1;
	}
	printf("ok\n");
	return 0;
}
