/*
 * arena_target.c - the arena a command that writes into one (snapshot,
 * level) acts on: a PID, looked up among the running arenas of the user's
 * arena directory, or an arena's path; and only the caller's own arena, or
 * any for root.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/arena_names.h"
#include "common/parse.h"
#include "read/arena_list.h"

/* The path of the running arena of pid in dir, malloc'd, or NULL. */
static char *arena_of_pid(int32_t pid, const char *dir)
{
	struct rt_arena_list list;
	struct rt_read_error error;
	memset(&list, 0, sizeof(list));
	char *found = NULL;
	if (rt_arena_list_dir(&list, dir, 1, &error) == 0) {
		for (size_t i = 0; i < list.count && !found; i++) {
			const struct rt_arena_file *f = &list.files[i];
			if (f->checked && f->running && f->header.pid == pid)
				found = strdup(f->path);
		}
	}
	rt_arena_list_free(&list);
	return found;
}

char *rt_cmd_arena_target(const char *command, const char *target, struct rt_arena_file *f)
{
	char *path = NULL;
	uint64_t pid;
	if (rt_parse_u64(target, &pid) == 0 && pid > 0 && pid <= INT32_MAX) {
		char dir[PATH_MAX];
		if (rt_arena_dir(dir, sizeof(dir)) != 0) {
			fprintf(stderr, "ringtrace %s: %s is too long a path\n", command,
				RT_ARENA_DIR_ENV);
			return NULL;
		}
		path = arena_of_pid((int32_t)pid, dir);
		if (!path) {
			fprintf(stderr,
				"ringtrace %s: no running arena of pid %llu in %s (see 'ringtrace "
				"ls'; give the arena's path instead)\n",
				command, (unsigned long long)pid, rt_escaped(dir));
			return NULL;
		}
	} else {
		path = strdup(target);
		if (!path) {
			fprintf(stderr, "ringtrace: out of memory\n");
			return NULL;
		}
	}
	/* only the caller's own arenas (or any, for root): the command writes into it */
	struct stat st;
	if (stat(path, &st) == 0 && st.st_uid != geteuid() && geteuid() != 0) {
		fprintf(stderr,
			"ringtrace %s: %s belongs to uid %lu, not to you (uid %lu): not touched\n",
			command, rt_escaped(path), (unsigned long)st.st_uid,
			(unsigned long)geteuid());
		free(path);
		return NULL;
	}
	/* a valid arena: nothing is written into a file that is not one */
	struct rt_read_error error;
	if (rt_arena_file_read(AT_FDCWD, path, path, f, &error) != 0) {
		rt_cmd_report_open_error(path, &error);
		free(path);
		return NULL;
	}
	if (!f->checked) {
		rt_cmd_report_open_error(path, &f->problem);
		rt_arena_file_free(f);
		free(path);
		return NULL;
	}
	return path;
}
