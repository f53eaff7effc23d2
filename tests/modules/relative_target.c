/*
 * relative_target.c DIR WHEN - changes to DIR and loads ./libplugin.so by
 * that relative name, then calls it.  WHEN says when tracing starts:
 *   after   before the load: the module map takes the plugin in at once;
 *   before  after the load and after changing back out of DIR to "/": the
 *           arena's rundown finds the plugin, its name still relative, in
 *           a working directory where it is not.
 * Prints "ADDRESS VALUE" of the plugin's function.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ringtrace.h"

int main(int argc, char **argv)
{
	if (argc != 3 || chdir(argv[1]) != 0)
		return 2;
	int early = strcmp(argv[2], "before") == 0;
	if (!early && ringtrace_init(NULL) != 0)
		return 2;
	void *h = dlopen("./libplugin.so", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	int (*fn)(void) = (int (*)(void))dlsym(h, "plugin_value");
	if (!fn)
		return 1;
	if (early && (chdir("/") != 0 || ringtrace_init(NULL) != 0))
		return 2;
	printf("%p %d\n", (void *)fn, fn());
	return 0;
}
