/*
 * record_orphans.c - the next `record` reclaims the arenas of a killed one
 * (record_orphans.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/record_orphans.h"
#include "present/units.h"
#include "read/arena_list.h"

/*
 * The collector an arena names is gone.  A pid taken by another process
 * since reads as alive: the arena is then kept, which is the safe mistake.
 */
static int collector_gone(const struct rt_arena_file *f)
{
	int32_t pid = f->header.collector_pid;
	return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

unsigned rt_record_reclaim_orphans(const char *dir)
{
	struct rt_arena_list list = {0};
	struct rt_read_error error;
	if (rt_arena_list_dir(&list, dir, 1, &error) != 0) {
		rt_arena_list_free(&list);
		return 0;
	}
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	unsigned removed = 0;
	uint64_t freed = 0;
	for (size_t i = 0; dirfd >= 0 && i < list.count; i++) {
		const struct rt_arena_file *f = &list.files[i];
		if (!f->checked || f->running || f->uid != geteuid() || !collector_gone(f))
			continue;
		const char *name = strrchr(f->path, '/');
		name = name ? name + 1 : f->path;
		struct stat st;
		/* the file checked is the file removed */
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || st.st_dev != f->dev ||
		    st.st_ino != f->ino || unlinkat(dirfd, name, 0) != 0)
			continue;
		removed++;
		freed += f->disk_bytes;
	}
	if (dirfd >= 0)
		close(dirfd);
	rt_arena_list_free(&list);
	if (removed) {
		char size[RT_UNITS_MAX];
		rt_units_bytes(size, sizeof(size), freed);
		fprintf(stderr,
			"ringtrace record: removed %u arena%s (%s) that a recording killed before "
			"its end left in %s\n",
			removed, removed == 1 ? "" : "s", size, dir);
	}
	return removed;
}
