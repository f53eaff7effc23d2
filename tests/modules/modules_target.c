/*
 * modules_target.c - loads plugin A, calls it, unloads it, then loads
 * plugin B, and prints for each the address of its function and a raw
 * clock reading taken while it was loaded: "NAME ADDRESS COUNTER VALUE".
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>

#include "ringtrace.h"

static int use(const char *name, const char *path, int unload)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	int (*fn)(void) = (int (*)(void))dlsym(h, "plugin_value");
	if (!fn)
		return 1;
	uint64_t now = ringtrace__counter();
	printf("%s %p %" PRIu64 " %d\n", name, (void *)fn, now, fn());
	return unload ? dlclose(h) : 0;
}

int main(int argc, char **argv)
{
	if (argc != 3 || ringtrace_init(NULL) != 0)
		return 2;
	if (use("A", argv[1], 1) || use("B", argv[2], 0))
		return 1;
	return 0;
}
