/*
 * arena_target.c - the arena a command that writes into one (snapshot,
 * level) or follows one (tail, log -f) acts on: a PID, looked up among the
 * running arenas of the user's arena directory, or an arena's path; and
 * only the caller's own arena, or any for root.
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
#include "read/arena_reader.h"

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

/*
 * The path TARGET names: a PID's running arena (*pid set) or the path
 * itself (*pid 0).  Malloc'd, or NULL after one line on stderr.
 */
static char *target_path(const char *command, const char *target, int32_t *pid)
{
	uint64_t n;
	*pid = 0;
	if (rt_parse_u64(target, &n) == 0 && n > 0 && n <= INT32_MAX) {
		char dir[PATH_MAX];
		if (rt_arena_dir(dir, sizeof(dir)) != 0) {
			fprintf(stderr, "ringtrace %s: %s is too long a path\n", command,
				RT_ARENA_DIR_ENV);
			return NULL;
		}
		char *path = arena_of_pid((int32_t)n, dir);
		if (!path)
			fprintf(stderr,
				"ringtrace %s: no running arena of pid %llu in %s (see 'ringtrace "
				"ls'; give the arena's path instead)\n",
				command, (unsigned long long)n, rt_escaped(dir));
		else
			*pid = (int32_t)n;
		return path;
	}
	char *path = strdup(target);
	if (!path)
		fprintf(stderr, "ringtrace: out of memory\n");
	return path;
}

/*
 * Only the caller's own arenas (or any, for root: the command may write
 * into it): 1 after one line on stderr when st is another user's.
 */
static int not_yours(const char *command, const char *path, const struct stat *st)
{
	if (st->st_uid == geteuid() || geteuid() == 0)
		return 0;
	fprintf(stderr, "ringtrace %s: %s belongs to uid %lu, not to you (uid %lu): not touched\n",
		command, rt_escaped(path), (unsigned long)st->st_uid, (unsigned long)geteuid());
	return 1;
}

/*
 * The target's file, opened as the arena list opens one: a descriptor, or
 * -1 after one line on stderr.  Another user's file is refused as such
 * before it is opened (its mode may well refuse the open).  A PID's arena
 * gone since the list found it belonged to a program that just ended (a
 * recording removes the arena it has collected).
 */
static int open_target(const char *command, const char *path, int32_t pid)
{
	struct stat st;
	if (stat(path, &st) == 0 && not_yours(command, path, &st))
		return -1;
	struct rt_read_error error;
	int fd = rt_arena_file_open(AT_FDCWD, path, &error);
	if (fd == -ENOENT && pid)
		fprintf(stderr, "ringtrace %s: pid %ld ended as its arena was opened: %s is gone\n",
			command, (long)pid, rt_escaped(path));
	else if (fd < 0)
		rt_cmd_report_open_error(path, &error);
	return fd < 0 ? -1 : fd;
}

/*
 * The file open at fd is the caller's own arena (not_yours) and a valid
 * one, read into f: 0, or -1 after one line on stderr.
 */
static int check_target(const char *command, const char *path, int fd, struct rt_arena_file *f)
{
	/* the file opened, which is not always the one the path named a moment before */
	struct stat st;
	if (fstat(fd, &st) == 0 && not_yours(command, path, &st))
		return -1;
	struct rt_read_error error;
	if (rt_arena_file_read_fd(fd, path, f, &error) != 0) {
		rt_cmd_report_open_error(path, &error);
		return -1;
	}
	if (!f->checked) {
		rt_cmd_report_open_error(path, &f->problem);
		rt_arena_file_free(f);
		return -1;
	}
	return 0;
}

char *rt_cmd_arena_target(const char *command, const char *target, struct rt_arena_file *f)
{
	int32_t pid;
	char *path = target_path(command, target, &pid);
	if (!path)
		return NULL;
	int fd = open_target(command, path, pid);
	if (fd < 0 || check_target(command, path, fd, f) != 0) {
		if (fd >= 0)
			close(fd);
		free(path);
		return NULL;
	}
	close(fd);
	return path;
}

char *rt_cmd_follow_target(const char *command, const char *target, struct rt_reader **rd)
{
	int32_t pid;
	char *path = target_path(command, target, &pid);
	if (!path)
		return NULL;
	int fd = open_target(command, path, pid);
	struct rt_arena_file f;
	if (fd < 0 || check_target(command, path, fd, &f) != 0) {
		if (fd >= 0)
			close(fd);
		free(path);
		return NULL;
	}
	rt_arena_file_free(&f);
	struct rt_read_error error;
	if (rt_reader_open_live_fd(fd, path, rd, &error) != 0) {
		rt_cmd_report_open_error(path, &error);
		free(path);
		return NULL;
	}
	return path;
}
