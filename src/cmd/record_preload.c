/*
 * record_preload.c - finding the recording library `ringtrace record`
 * preloads, and adding it to the program's LD_PRELOAD.
 *
 * The library is found from where the running tool is (/proc/self/exe),
 * never from a directory compiled in: an installed tree can be moved or
 * installed again under another prefix (`cmake --install --prefix`) and
 * its tool still preloads its own library, not whatever another prefix
 * holds.  The tool's own directory is tried first: that is a build tree,
 * whose parent may hold anything (a source tree's lib/, say).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/record_preload.h"

/* the installed library directory relative to the installed tool's: CMakeLists.txt */
#ifndef RINGTRACE_BIN_TO_LIB
#define RINGTRACE_BIN_TO_LIB "../lib"
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RT_SANITIZED 1
#endif
#endif

/* ld.so splits LD_PRELOAD at spaces and colons: such a path cannot be given. */
static int preloadable(const char *path)
{
	return path[0] && !strpbrk(path, " :");
}

#ifndef RT_SANITIZED
static int try_path(char *out, size_t size, const char *dir, const char *rest, const char *library)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s%s%s", dir, rest, library);
	if (n < 0 || (size_t)n >= sizeof(path) || access(path, R_OK) != 0)
		return 0;
	char *real = realpath(path, NULL);
	if (!real)
		return 0;
	int ok = preloadable(real) && strlen(real) < size;
	if (ok)
		snprintf(out, size, "%s", real);
	free(real);
	return ok;
}
#endif

int rt_record_preload_find(const char *library, const char *variable, char *out, size_t size,
			   char *why, size_t why_size)
{
	why[0] = 0;
	const char *chosen = getenv(variable);
	if (chosen) {
		if (!chosen[0] || strcmp(chosen, "0") == 0)
			return 0;
		if (access(chosen, R_OK) != 0) {
			snprintf(why, why_size, "%s: %s: %s", variable, chosen, strerror(errno));
			return 0;
		}
		if (!preloadable(chosen) || strlen(chosen) >= size) {
			snprintf(why, why_size,
				 "%s: %s: a path with a space or colon cannot be preloaded",
				 variable, chosen);
			return 0;
		}
		snprintf(out, size, "%s", chosen);
		return 1;
	}
#ifdef RT_SANITIZED
	return 0;
#else
	char dir[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	char *slash = n > 0 ? memrchr(dir, '/', (size_t)n) : NULL;
	if (!slash) {
		snprintf(
		    why, why_size,
		    "%s not found: /proc/self/exe does not say where the tool is; %s=PATH names it",
		    library, variable);
		return 0;
	}
	slash[1] = 0;
	if (try_path(out, size, dir, "", library) ||
	    try_path(out, size, dir, RINGTRACE_BIN_TO_LIB "/", library))
		return 1;
	snprintf(why, why_size,
		 "%s not found beside the tool or in %s" RINGTRACE_BIN_TO_LIB "; %s=PATH names it",
		 library, dir, variable);
	return 0;
#endif
}

int rt_record_preload_apply(const char *library)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old || !old[0])
		return setenv("LD_PRELOAD", library, 1) != 0 ? -errno : 0;
	size_t n = strlen(old) + 1 + strlen(library) + 1;
	char *list = malloc(n);
	if (!list)
		return -ENOMEM;
	snprintf(list, n, "%s:%s", old, library);
	int err = setenv("LD_PRELOAD", list, 1) != 0 ? -errno : 0;
	free(list);
	return err;
}
