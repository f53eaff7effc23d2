/*
 * out_file.c - output files made new, never found (out_file.h).
 *
 * The existing file is checked through lstat and a descriptor opened for
 * reading, never for writing; it is replaced by rename, which in a sticky
 * directory (/tmp) works only for the caller's own file.  A file that
 * changes between the look and the act (gone, or another file in its
 * place) is looked at again, a few times at most.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/out_file.h"

#define ATTEMPTS 4
#define NEW_FLAGS (O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
#define NEW_MODE 0666 /* less the umask */

static int said(char *message, size_t size, int err, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static int said(char *message, size_t size, int err, const char *format, ...)
{
	if (message && size) {
		va_list ap;
		va_start(ap, format);
		vsnprintf(message, size, format, ap);
		va_end(ap);
	}
	return -err;
}

static uint64_t random_bits(void)
{
	uint64_t r = 0;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&r;
	}
	return r;
}

/* A new file beside path (PATH.XXXXXXXXXXXX.new): its descriptor and *tmp, or -errno. */
static int create_beside(const char *path, char **tmp)
{
	for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
		*tmp = NULL;
		if (asprintf(tmp, "%s.%012llx.new", path,
			     (unsigned long long)(random_bits() & 0xffffffffffffull)) < 0 ||
		    !*tmp)
			return -ENOMEM;
		int fd = open(*tmp, NEW_FLAGS, NEW_MODE);
		if (fd >= 0)
			return fd;
		int err = errno;
		free(*tmp);
		*tmp = NULL;
		if (err != EEXIST)
			return -err;
	}
	return -EEXIST;
}

static int same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* What is at path, which exists: a descriptor, -ENOENT to look again, or another -errno. */
static int open_existing(const char *path, rt_out_file_replaceable_fn replaceable, int *regular,
			 char *message, size_t size)
{
	struct stat st, now;
	if (lstat(path, &st) != 0)
		return errno == ENOENT
			   ? -ENOENT
			   : said(message, size, errno, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return said(message, size, ELOOP,
			    "%s is a symbolic link: not followed, not overwritten", path);
	if (S_ISDIR(st.st_mode))
		return said(message, size, EISDIR, "%s is a directory", path);
	if (st.st_uid != geteuid() && !S_ISCHR(st.st_mode))
		return said(message, size, EPERM,
			    "%s exists and belongs to uid %lu, not to this user (uid %lu): not "
			    "written",
			    path, (unsigned long)st.st_uid, (unsigned long)geteuid());
	if (!S_ISREG(st.st_mode)) {
		/* a device or the caller's FIFO: written as it is */
		int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == EACCES)
			fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT ? -ENOENT
					       : said(message, size, errno, "%s: cannot open: %s",
						      path, strerror(errno));
		if (fstat(fd, &now) != 0 || !same_file(&st, &now)) {
			close(fd);
			return -ENOENT; /* another file took its place */
		}
		*regular = 0;
		return fd;
	}
	int old = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (old < 0)
		return errno == ENOENT
			   ? -ENOENT
			   : said(message, size, errno,
				  "%s exists and cannot be checked (%s): not overwritten", path,
				  strerror(errno));
	if (fstat(old, &now) != 0 || !same_file(&st, &now)) {
		close(old);
		return -ENOENT;
	}
	char why[160] = "";
	int yes = !replaceable || replaceable(old, &now, why, sizeof(why));
	close(old);
	if (!yes)
		return said(message, size, EEXIST, "%s exists and %s: not overwritten", path, why);
	char *tmp = NULL;
	int fd = create_beside(path, &tmp);
	if (fd >= 0 && !tmp) {
		/* create_beside gives a descriptor with its name: said for the analyzers */
		close(fd);
		fd = -ENOMEM;
	}
	if (fd < 0)
		return said(message, size, -fd, "%s: cannot create a new file beside it: %s", path,
			    strerror(-fd));
	if (rename(tmp, path) != 0) {
		int err = errno;
		close(fd);
		unlink(tmp);
		free(tmp);
		return said(message, size, err, "%s: cannot replace it: %s", path, strerror(err));
	}
	free(tmp);
	*regular = 1;
	return fd;
}

int rt_out_file_open(const char *path, rt_out_file_replaceable_fn replaceable, int *regular,
		     char *message, size_t message_size)
{
	for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
		int fd = open(path, NEW_FLAGS, NEW_MODE);
		if (fd >= 0) {
			*regular = 1;
			return fd;
		}
		if (errno != EEXIST)
			return said(message, message_size, errno, "%s: cannot create: %s", path,
				    strerror(errno));
		fd = open_existing(path, replaceable, regular, message, message_size);
		if (fd != -ENOENT)
			return fd;
	}
	return said(message, message_size, EAGAIN,
		    "%s keeps being replaced by someone else: not written", path);
}
