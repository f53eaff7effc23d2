/*
 * arena_dir.c - the directory of default arenas and its check
 * (arena_names.h).  Shared by the recording library and the tool, so it
 * uses libc only and allocates nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/arena_names.h"

int rt_arena_dir(char *out, size_t size)
{
	return rt_arena_dir_from(getenv(RT_ARENA_DIR_ENV), out, size);
}

int rt_arena_dir_from(const char *env, char *out, size_t size)
{
	int w = env && env[0] ? snprintf(out, size, "%s", env)
			      : snprintf(out, size, RT_ARENA_BASE "/" RT_ARENA_USER_DIR "%lu",
					 (unsigned long)geteuid());
	return w < 0 || (size_t)w >= size ? -ENAMETOOLONG : 0;
}

int rt_arena_dir_check(const char *dir, int create, char *why, size_t why_size)
{
	struct stat st;
	if (create && mkdir(dir, 0700) != 0 && errno != EEXIST) {
		int err = errno;
		snprintf(why, why_size, "cannot create the arena directory %s: %s", dir,
			 strerror(err));
		return -err;
	}
	/* lstat: a symbolic link is refused, wherever it points */
	if (lstat(dir, &st) != 0) {
		int err = errno;
		snprintf(why, why_size, "arena directory %s: %s", dir, strerror(err));
		return -err;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(why, why_size, "arena directory %s is not a directory%s: not used", dir,
			 S_ISLNK(st.st_mode) ? " but a symbolic link" : "");
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		snprintf(why, why_size,
			 "arena directory %s belongs to uid %lu, not to this user (uid %lu): "
			 "not used",
			 dir, (unsigned long)st.st_uid, (unsigned long)geteuid());
		return -EPERM;
	}
	if (st.st_mode & 077) {
		snprintf(why, why_size,
			 "arena directory %s has mode %04o, open to other users (0700 "
			 "expected): not used",
			 dir, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}
