/*
 * io_rundown.c - the descriptors a process has open when its arena starts
 * (inherited from its parent, or opened before tracing began), each named
 * the way /proc names it and written to the descriptor table and as an
 * RT_IO_RUNDOWN record, so that later calls on them resolve.
 *
 * Plain system calls only (no opendir, no stdio): this runs in a forked
 * child's first event and possibly in a signal handler's, where malloc and
 * locks are not safe, and it must never show up as the program's I/O.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/io/fd_table.h"
#include "record/record.h"

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static int parse_fd(const char *s)
{
	if (!*s)
		return -1;
	long v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > INT32_MAX / 10)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v <= INT32_MAX ? (int)v : -1;
}

/* The number after "key:" on its line of text, in base (8 or 10); -1 when absent. */
static int64_t field(const char *text, const char *key, int base)
{
	const char *p = strstr(text, key);
	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ' || *p == '\t')
		p++;
	int64_t v = 0;
	int digits = 0;
	for (; *p >= '0' && *p < '0' + base; p++, digits++)
		v = v * base + (*p - '0');
	return digits ? v : -1;
}

/* Position and flags of fd from /proc/self/fdinfo. */
static void fd_info(int fd, int64_t *position, uint32_t *flags)
{
	char path[48], text[512];
	rt_fd_proc_path(path, sizeof(path), "/proc/self/fdinfo/", fd);
	*position = -1;
	*flags = 0;
	long info = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (info < 0)
		return;
	long got = syscall(SYS_read, (int)info, text, sizeof(text) - 1);
	syscall(SYS_close, (int)info);
	if (got <= 0)
		return;
	text[got] = 0;
	*position = field(text, "pos:", 10);
	int64_t f = field(text, "flags:", 8);
	*flags = f >= 0 ? (uint32_t)f : 0;
}

void rt_io_rundown(void)
{
	rt_fd_table_forget(); /* a forked child's: what the parent's table said */
	long dir =
	    syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return;
	char buf[2048] __attribute__((aligned(8)));
	char name[RT_IO_PATH_BYTES_MAX];
	for (;;) {
		long got = syscall(SYS_getdents64, (int)dir, buf, sizeof(buf));
		if (got <= 0)
			break;
		for (long at = 0; at < got;) {
			const struct linux_dirent64 *d = (const struct linux_dirent64 *)(buf + at);
			at += d->d_reclen;
			int fd = parse_fd(d->d_name);
			if (fd < 0 || fd == (int)dir || fd == rt_arena.fd)
				continue;
			uint32_t n = rt_fd_proc_name(fd, name, sizeof(name));
			if (!n)
				continue;
			int64_t position;
			uint32_t flags;
			fd_info(fd, &position, &flags);
			rt_io_write_rundown(fd, name, n, position, flags);
		}
	}
	syscall(SYS_close, (int)dir);
}
