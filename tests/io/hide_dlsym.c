/*
 * hide_dlsym.c - a preloaded library whose dlsym finds no next definition
 * of the functions named in RT_TEST_HIDE (comma-separated), as a C library
 * without them would: what the I/O interposer sees when its dlsym(RTLD_NEXT)
 * fails.  Preloaded after the interposer and libringtrace, it is still the
 * first dlsym in the program (neither defines one), and the next definition
 * after it is the one after them: every other lookup is passed on to the C
 * library's dlsym unchanged.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int hidden(const char *name)
{
	const char *list = getenv("RT_TEST_HIDE");
	size_t n = strlen(name);
	while (list && *list) {
		const char *end = strchr(list, ',');
		size_t len = end ? (size_t)(end - list) : strlen(list);
		if (len == n && strncmp(list, name, n) == 0)
			return 1;
		list = end ? end + 1 : NULL;
	}
	return 0;
}

void *dlsym(void *handle, const char *name)
{
	static void *(*real)(void *, const char *);
	if (!real)
		real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!real)
		real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	if (!real) {
		static const char why[] = "hide_dlsym: the C library's dlsym not found\n";
		ssize_t ignored = write(2, why, sizeof(why) - 1);
		(void)ignored;
		_exit(99);
	}
	if (handle == RTLD_NEXT && hidden(name))
		return NULL;
	return real(handle, name);
}
