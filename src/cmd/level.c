/*
 * level.c - `ringtrace level PID|ARENA [NAME]`: show or set the RT_LOG
 * threshold of a running program from outside it.
 *
 * The threshold is the arena header's log_threshold, which the library
 * reads at every RT_LOG call (ringtrace/format.h), so one store into the
 * shared mapping changes what the program records from its next call on.
 * Only an arena that is a valid running arena, and the caller's own (or
 * any for root), is touched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/log_levels.h"
#include "read/arena_list.h"
#include "read/map_guard.h"

#define USAGE "ringtrace level PID|ARENA [fatal|error|warn|notice|info|debug]"

void rt_cmd_level_help(FILE *to)
{
	fprintf(to, "usage: " USAGE "\n"
		    "\n"
		    "Show, or set, the threshold of RT_LOG in a running program: calls at\n"
		    "that level or more severe are recorded from the next one on.  PID: the\n"
		    "running arena of that process in the user's arena directory (see\n"
		    "'ringtrace ls'); ARENA: an arena file.  Only your own arenas (root: any).\n"
		    "Prints 'PATH: OLD -> NEW' (or 'PATH: LEVEL').\n"
		    "\n"
		    "Options:\n"
		    "  --help    this text\n"
		    "\n"
		    "Exit status: 0 done; 1 the arena could not be written; 2 bad usage, no\n"
		    "such arena, not an arena, or not yours; 3 the arena file shrank while\n"
		    "it was read (truncated by another process).\n");
}

/* A header threshold as a name ("info" when never set: the library's default). */
static const char *name_of(uint32_t level)
{
	return rt_log_level_name(level ? level : RT_LOG_LEVEL_DEFAULT);
}

int rt_cmd_level(int argc, char **argv)
{
	const char *target = NULL, *name = NULL;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_level_help(stdout);
			return RT_EXIT_OK;
		}
		if (arg[0] == '-' && arg[1] != 0)
			return rt_cmd_usage_error("level", USAGE, "unknown option '%s'", arg);
		if (!target)
			target = arg;
		else if (!name)
			name = arg;
		else
			return rt_cmd_usage_error("level", USAGE, "one PID or ARENA, one level");
	}
	if (!target)
		return rt_cmd_usage_error("level", USAGE, "no PID or ARENA");
	unsigned level = name ? rt_log_level_parse(name) : 0;
	if (name && !level)
		return rt_cmd_usage_error(
		    "level", USAGE, "'%s' is not fatal, error, warn, notice, info or debug", name);

	struct rt_arena_file f;
	char *path = rt_cmd_arena_target("level", target, &f);
	if (!path)
		return RT_EXIT_USAGE;
	int running = f.running;
	rt_arena_file_free(&f);

	int fd = open(path, (name ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_CLOEXEC);
	struct rt_arena_header *h = MAP_FAILED;
	if (fd >= 0) {
		h = mmap(NULL, RT_ARENA_HEADER_SIZE, PROT_READ | (name ? PROT_WRITE : 0),
			 MAP_SHARED, fd, 0);
		close(fd);
	}
	if (h == MAP_FAILED) {
		fprintf(stderr, "ringtrace level: %s: %s\n", rt_escaped(path), strerror(errno));
		free(path);
		return RT_EXIT_FAILURE;
	}
	/* a file cut short under us reads zeros, and says so below, rather than SIGBUS */
	rt_map_guard_watch(h, RT_ARENA_HEADER_SIZE, name != NULL);
	uint32_t old = __atomic_load_n(&h->log_threshold, __ATOMIC_RELAXED);
	uint64_t shrunk;
	if (rt_map_guard_shrunk(h, &shrunk)) {
		fprintf(stderr,
			"ringtrace level: %s: the file shrank while it was read (another process "
			"truncated it): bytes from %llu on are damage\n",
			rt_escaped(path), (unsigned long long)shrunk);
		rt_map_guard_forget(h);
		munmap(h, RT_ARENA_HEADER_SIZE);
		free(path);
		return RT_EXIT_DAMAGED;
	}
	if (name) {
		__atomic_store_n(&h->log_threshold, level, __ATOMIC_RELAXED);
		printf("%s: %s -> %s%s\n", rt_escaped(path), name_of(old), rt_log_level_name(level),
		       running ? "" : " (the program no longer runs)");
	} else {
		printf("%s: %s\n", rt_escaped(path), name_of(old));
	}
	rt_map_guard_forget(h);
	munmap(h, RT_ARENA_HEADER_SIZE);
	free(path);
	return RT_EXIT_OK;
}
