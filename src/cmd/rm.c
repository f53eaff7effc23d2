/*
 * rm.c - `ringtrace rm`: remove arenas, and only arenas.
 *
 * A file is removed only if it starts with the arena magic, is the
 * caller's (or the caller is root), and its process no longer runs (unless
 * --force).  It is checked through a descriptor opened without following a
 * symbolic link, relative to a descriptor of its directory, and removed
 * only if the name still leads to the file that was checked.
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/arena_names.h"
#include "common/parse.h"
#include "present/units.h"
#include "read/arena_list.h"

#define RM_USAGE "ringtrace rm [--dead] [--force] [PATH...]"

void rt_cmd_rm_help(FILE *to)
{
	fprintf(to,
		"usage: " RM_USAGE "\n"
		"\n"
		"Remove arenas.  Each PATH must be an arena file (anything else is left\n"
		"alone and reported); an arena whose process still runs is kept unless\n"
		"--force.  Only the caller's own arenas are removed (root may remove any).\n"
		"\n"
		"Options:\n"
		"  --dead    remove every arena whose process has ended: in " RT_ARENA_DIR_TEXT
		" (the\n"
		"            default arenas, " RT_ARENA_PREFIX "*" RT_ARENA_SUFFIX
		" and their " RT_ARENA_LAST_SUFFIX "\n"
		"            and " RT_ARENA_LAST_SUFFIX ".N), or in each directory PATH and among\n"
		"            the files PATH given\n"
		"  --force   remove a named arena even though its process still runs\n"
		"  --help    this text\n");
}

struct rm_state {
	int dead_only;
	int force;
	int status;	/* the exit status so far */
	size_t removed; /* arenas removed */
	uint64_t freed; /* their disk bytes */
	size_t others;	/* --dead: arenas of other users left alone */
	size_t running; /* --dead: arenas of running processes kept */
};

static void raise_status(struct rm_state *s, int status)
{
	if (status > s->status)
		s->status = status;
}

static void say(const char *path, const char *what)
{
	fprintf(stderr, "ringtrace rm: %s: %s\n", rt_escaped(path), rt_escaped(what));
}

/* Split path into a descriptor of its directory and the name in it. */
static int open_parent(const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		*name = path;
		return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	*name = slash + 1;
	if (slash == path)
		return open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *dir = strndup(path, (size_t)(slash - path));
	if (!dir) {
		errno = ENOMEM;
		return -1;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int err = errno;
	free(dir);
	errno = err;
	return fd;
}

/*
 * Remove the arena at path if the rules allow.  named: the user named this
 * file (a refusal is an error); else it was found by --dead in a directory.
 */
static void remove_arena(struct rm_state *s, const char *path, int named)
{
	const char *name;
	int dirfd = open_parent(path, &name);
	if (dirfd < 0) {
		say(path, strerror(errno));
		raise_status(s, RT_EXIT_USAGE);
		return;
	}
	if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
		say(path, "a directory, not an arena: not removed (--dead DIR removes the dead "
			  "arenas in it)");
		raise_status(s, RT_EXIT_USAGE);
		close(dirfd);
		return;
	}
	uid_t me = geteuid();
	char what[RT_PROGRAM_MAX + sizeof(((struct rt_read_error *)0)->message) + 128];
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode)) {
			say(path, "a directory, not an arena: not removed (--dead DIR removes the "
				  "dead arenas in it)");
			raise_status(s, RT_EXIT_USAGE);
			close(dirfd);
			return;
		}
		/* before opening it: another user's arena is not readable anyway (mode 0600) */
		if (st.st_uid != me && me != 0) {
			if (named) {
				snprintf(what, sizeof(what),
					 "owned by uid %u, not by you (uid %u): not removed",
					 (unsigned)st.st_uid, (unsigned)me);
				say(path, what);
				raise_status(s, RT_EXIT_FAILURE);
			} else {
				s->others++;
			}
			close(dirfd);
			return;
		}
	}
	struct rt_arena_file f;
	struct rt_read_error error;
	if (rt_arena_file_read(dirfd, name, path, &f, &error) != 0) {
		snprintf(what, sizeof(what), "%s: not removed", error.message);
		say(path, what);
		raise_status(s, RT_EXIT_USAGE);
		close(dirfd);
		return;
	}
	if (f.uid != me && me != 0) {
		say(path, "changed owner while it was being checked: not removed");
		raise_status(s, RT_EXIT_FAILURE);
	} else if (f.running && (s->dead_only || !s->force)) {
		if (named && !s->dead_only) {
			snprintf(what, sizeof(what),
				 "the arena of process %d (%s), which is still running: not "
				 "removed (--force removes it anyway)",
				 f.checked ? (int)f.header.pid : 0,
				 f.checked && f.header.program[0]
				     ? rt_path_basename(f.header.program)
				     : "?");
			say(path, what);
			raise_status(s, RT_EXIT_FAILURE);
		} else {
			s->running++;
		}
	} else {
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != f.dev ||
		    st.st_ino != f.ino) {
			say(path, "changed while it was being checked: not removed");
			raise_status(s, RT_EXIT_FAILURE);
		} else if (unlinkat(dirfd, name, 0) != 0) {
			snprintf(what, sizeof(what), "cannot remove it: %s", strerror(errno));
			say(path, what);
			raise_status(s, RT_EXIT_FAILURE);
		} else {
			char size[RT_UNITS_MAX];
			rt_units_bytes(size, sizeof(size), f.disk_bytes);
			printf("removed %s (%s)\n", rt_escaped(path), size);
			s->removed++;
			s->freed += f.disk_bytes;
		}
	}
	rt_arena_file_free(&f);
	close(dirfd);
}

/* --dead in a directory: every arena there whose process ended. */
static int remove_dead_in(struct rm_state *s, const char *dir, int default_names)
{
	struct rt_arena_list list = {0};
	struct rt_read_error error;
	int rc = rt_arena_list_dir(&list, dir, default_names, &error);
	if (rc == -ENOMEM) {
		rt_arena_list_free(&list);
		return rc;
	}
	if (rc && !(rc == -ENOENT && default_names)) {
		say(dir, error.message);
		raise_status(s, RT_EXIT_USAGE);
	}
	rt_arena_list_sort(&list);
	for (size_t i = 0; i < list.count; i++)
		remove_arena(s, list.files[i].path, 0);
	s->others += list.unreadable;
	rt_arena_list_free(&list);
	return 0;
}

int rt_cmd_rm(int argc, char **argv)
{
	struct rm_state s;
	memset(&s, 0, sizeof(s));
	int positional_only = 0, named = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			named++;
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_rm_help(stdout);
			return RT_EXIT_OK;
		} else if (strcmp(arg, "--dead") == 0) {
			s.dead_only = 1;
		} else if (strcmp(arg, "--force") == 0) {
			s.force = 1;
		} else {
			return rt_cmd_usage_error("rm", RM_USAGE, "unknown option '%s'", arg);
		}
	}
	if (!named && !s.dead_only)
		return rt_cmd_usage_error("rm", RM_USAGE, "which arenas? (name them, or --dead)");

	int rc = 0;
	if (!named) {
		char dir[PATH_MAX];
		if (rt_arena_dir(dir, sizeof(dir)) != 0)
			return rt_cmd_usage_error("rm", RM_USAGE, "%s is too long a path",
						  RT_ARENA_DIR_ENV);
		rc = remove_dead_in(&s, dir, 1);
	}
	positional_only = 0;
	for (int i = 1; !rc && i < argc; i++) {
		const char *arg = argv[i];
		if (!positional_only && arg[0] == '-' && arg[1] != 0) {
			positional_only = strcmp(arg, "--") == 0;
			continue;
		}
		struct stat st;
		if (s.dead_only && stat(arg, &st) == 0 && S_ISDIR(st.st_mode))
			rc = remove_dead_in(&s, arg, 0);
		else
			remove_arena(&s, arg, 1);
	}
	if (rc) {
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_FAILURE;
	}

	char size[RT_UNITS_MAX];
	rt_units_bytes(size, sizeof(size), s.freed);
	if (s.dead_only || s.removed > 1) {
		if (s.removed)
			printf("removed %zu arena%s, %s freed\n", s.removed,
			       s.removed == 1 ? "" : "s", size);
		else
			printf("no arenas of ended processes removed\n");
	}
	if (s.running)
		printf("kept %zu arena%s of running processes\n", s.running,
		       s.running == 1 ? "" : "s");
	if (s.others)
		printf("left %zu arena%s of other users alone\n", s.others,
		       s.others == 1 ? "" : "s");
	if (fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "ringtrace: cannot write the output: %s\n", strerror(errno));
		raise_status(&s, RT_EXIT_FAILURE);
	}
	return s.status;
}
