/*
 * interpose_fd.c - the descriptor calls of the C library, each recorded
 * as one RT_REC_IO record (ringtrace/format.h): opening, reading and
 * writing (with their positioned, vectored and fortified forms), seeking,
 * syncing, truncating, duplicating, mapping, copying between descriptors,
 * closing, and the path calls unlink and rename.
 *
 * The 64 forms are separate symbols of the C library that programs built
 * with large-file support call; on 64-bit Linux they do the same thing.
 * The fortified forms (__read_chk, __open_2...) are what programs built
 * with _FORTIFY_SOURCE call instead of the plain ones.
 */
#include "record/io/interpose.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* Not declared unless the program is built with _FORTIFY_SOURCE. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t offset, size_t buflen);
int fcntl64(int fd, int cmd, ...);

static size_t iov_bytes(const struct iovec *iov, int n)
{
	size_t total = 0;
	for (int i = 0; iov && i < n; i++)
		total += iov[i].iov_len;
	return total;
}

static int needs_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* ---- opening ---------------------------------------------------------- */

/* The open itself is done by call; the record carries the absolute path, flags and mode. */
#define OPEN_BODY(dirfdA_, pathA_, flagsA_, modeA_, call)                                          \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		char abs_[RT_IO_PATH_BUF];                                                         \
		uint32_t n_ = rt_io_absolute(dirfdA_, pathA_, abs_, sizeof(abs_));                 \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_OPEN, -1, 0);                              \
		c_.flags = RT_IO_F_AUX;                                                            \
		c_.aux[0] = (uint32_t)(flagsA_);                                                   \
		c_.aux[1] = (uint32_t)(modeA_);                                                    \
		c_.path = abs_;                                                                    \
		c_.path_length = n_;                                                               \
		int r_ = call;                                                                     \
		c_.fd = r_;                                                                        \
		rt_io_done(&c_, r_);                                                               \
		return r_;                                                                         \
	} while (0)

#define MODE_ARG(flags)                                                                            \
	({                                                                                         \
		mode_t m_ = 0;                                                                     \
		if (needs_mode(flags)) {                                                           \
			va_list ap_;                                                               \
			va_start(ap_, flags);                                                      \
			m_ = (mode_t)va_arg(ap_, int);                                             \
			va_end(ap_);                                                               \
		}                                                                                  \
		m_;                                                                                \
	})

RT_IO_EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = MODE_ARG(flags);
	OPEN_BODY(AT_FDCWD, path, flags, mode, RT_REAL(open)(path, flags, mode));
}

RT_IO_EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = MODE_ARG(flags);
	OPEN_BODY(AT_FDCWD, path, flags, mode, RT_REAL(open64)(path, flags, mode));
}

RT_IO_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = MODE_ARG(flags);
	OPEN_BODY(dirfd, path, flags, mode, RT_REAL(openat)(dirfd, path, flags, mode));
}

RT_IO_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	mode_t mode = MODE_ARG(flags);
	OPEN_BODY(dirfd, path, flags, mode, RT_REAL(openat64)(dirfd, path, flags, mode));
}

RT_IO_EXPORT int creat(const char *path, mode_t mode)
{
	OPEN_BODY(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, RT_REAL(creat)(path, mode));
}

RT_IO_EXPORT int creat64(const char *path, mode_t mode)
{
	OPEN_BODY(AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode, RT_REAL(creat64)(path, mode));
}

RT_IO_EXPORT int __open_2(const char *path, int flags)
{
	OPEN_BODY(AT_FDCWD, path, flags, 0, RT_REAL(__open_2)(path, flags));
}

RT_IO_EXPORT int __open64_2(const char *path, int flags)
{
	OPEN_BODY(AT_FDCWD, path, flags, 0, RT_REAL(__open64_2)(path, flags));
}

RT_IO_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	OPEN_BODY(dirfd, path, flags, 0, RT_REAL(__openat_2)(dirfd, path, flags));
}

RT_IO_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	OPEN_BODY(dirfd, path, flags, 0, RT_REAL(__openat64_2)(dirfd, path, flags));
}

/* ---- closing ---------------------------------------------------------- */

RT_IO_EXPORT int close(int fd)
{
	if (rt_io_skip())
		return RT_REAL(close)(fd);
	struct rt_io_call c = RT_IO_CALL(RT_IO_CLOSE, fd, 0);
	ringtrace__io_before_close(fd, c.start);
	int r = RT_REAL(close)(fd);
	rt_io_done(&c, r);
	return r;
}

/* ---- reading and writing ---------------------------------------------- */

/* A transfer of n bytes on fd; offset when the call names one (has_offset). */
#define TRANSFER_BODY(op, fd, n, has_offset, off, type, call)                                      \
	do {                                                                                       \
		if (rt_io_off())                                                                   \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(op, fd, n);                                      \
		if (has_offset) {                                                                  \
			c_.flags = RT_IO_F_OFFSET;                                                 \
			c_.offset = (int64_t)(off);                                                \
		}                                                                                  \
		struct rt_io_ready ready_ = rt_io_ready(fd);                                       \
		type r_ = call;                                                                    \
		rt_io_done_ready(&c_, ready_, (int64_t)r_);                                        \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT ssize_t read(int fd, void *buf, size_t n)
{
	TRANSFER_BODY(RT_IO_READ, fd, n, 0, 0, ssize_t,
		      RT_REAL_DIRECT3(read, SYS_read, fd, buf, n));
}

RT_IO_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
	TRANSFER_BODY(RT_IO_READ, fd, n, 0, 0, ssize_t, RT_REAL(__read_chk)(fd, buf, n, buflen));
}

RT_IO_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
	TRANSFER_BODY(RT_IO_WRITE, fd, n, 0, 0, ssize_t,
		      RT_REAL_DIRECT3(write, SYS_write, fd, buf, n));
}

RT_IO_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
	TRANSFER_BODY(RT_IO_PREAD, fd, n, 1, off, ssize_t, RT_REAL(pread)(fd, buf, n, off));
}

RT_IO_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
	TRANSFER_BODY(RT_IO_PREAD, fd, n, 1, off, ssize_t, RT_REAL(pread64)(fd, buf, n, off));
}

RT_IO_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
	TRANSFER_BODY(RT_IO_PREAD, fd, n, 1, off, ssize_t,
		      RT_REAL(__pread_chk)(fd, buf, n, off, buflen));
}

RT_IO_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
	TRANSFER_BODY(RT_IO_PREAD, fd, n, 1, off, ssize_t,
		      RT_REAL(__pread64_chk)(fd, buf, n, off, buflen));
}

RT_IO_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
	TRANSFER_BODY(RT_IO_PWRITE, fd, n, 1, off, ssize_t, RT_REAL(pwrite)(fd, buf, n, off));
}

RT_IO_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
	TRANSFER_BODY(RT_IO_PWRITE, fd, n, 1, off, ssize_t, RT_REAL(pwrite64)(fd, buf, n, off));
}

RT_IO_EXPORT ssize_t readv(int fd, const struct iovec *iov, int count)
{
	TRANSFER_BODY(RT_IO_READV, fd, iov_bytes(iov, count), 0, 0, ssize_t,
		      RT_REAL(readv)(fd, iov, count));
}

RT_IO_EXPORT ssize_t writev(int fd, const struct iovec *iov, int count)
{
	TRANSFER_BODY(RT_IO_WRITEV, fd, iov_bytes(iov, count), 0, 0, ssize_t,
		      RT_REAL(writev)(fd, iov, count));
}

RT_IO_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int count, off_t off)
{
	TRANSFER_BODY(RT_IO_PREADV, fd, iov_bytes(iov, count), 1, off, ssize_t,
		      RT_REAL(preadv)(fd, iov, count, off));
}

RT_IO_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int count, off64_t off)
{
	TRANSFER_BODY(RT_IO_PREADV, fd, iov_bytes(iov, count), 1, off, ssize_t,
		      RT_REAL(preadv64)(fd, iov, count, off));
}

RT_IO_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int count, off_t off)
{
	TRANSFER_BODY(RT_IO_PWRITEV, fd, iov_bytes(iov, count), 1, off, ssize_t,
		      RT_REAL(pwritev)(fd, iov, count, off));
}

RT_IO_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int count, off64_t off)
{
	TRANSFER_BODY(RT_IO_PWRITEV, fd, iov_bytes(iov, count), 1, off, ssize_t,
		      RT_REAL(pwritev64)(fd, iov, count, off));
}

/* ---- positions, syncing, sizes ---------------------------------------- */

#define SEEK_BODY(fd, off, whence, call)                                                           \
	do {                                                                                       \
		if (rt_io_off())                                                                   \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_LSEEK, fd, 0);                             \
		c_.flags = RT_IO_F_OFFSET | RT_IO_F_AUX;                                           \
		c_.offset = (int64_t)(off);                                                        \
		c_.aux[0] = (uint32_t)(whence);                                                    \
		struct rt_io_ready ready_ = rt_io_ready(fd);                                       \
		off64_t r_ = call;                                                                 \
		rt_io_done_ready(&c_, ready_, (int64_t)r_);                                        \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT off_t lseek(int fd, off_t off, int whence)
{
	SEEK_BODY(fd, off, whence, RT_REAL(lseek)(fd, off, whence));
}

RT_IO_EXPORT off64_t lseek64(int fd, off64_t off, int whence)
{
	SEEK_BODY(fd, off, whence, RT_REAL(lseek64)(fd, off, whence));
}

#define SIMPLE_BODY(op, fd, size, call)                                                            \
	do {                                                                                       \
		if (rt_io_off())                                                                   \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(op, fd, size);                                   \
		struct rt_io_ready ready_ = rt_io_ready(fd);                                       \
		int r_ = call;                                                                     \
		rt_io_done_ready(&c_, ready_, r_);                                                 \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT int fsync(int fd)
{
	SIMPLE_BODY(RT_IO_FSYNC, fd, 0, RT_REAL(fsync)(fd));
}

RT_IO_EXPORT int fdatasync(int fd)
{
	SIMPLE_BODY(RT_IO_FDATASYNC, fd, 0, RT_REAL(fdatasync)(fd));
}

RT_IO_EXPORT int ftruncate(int fd, off_t length)
{
	SIMPLE_BODY(RT_IO_FTRUNCATE, fd, length, RT_REAL(ftruncate)(fd, length));
}

RT_IO_EXPORT int ftruncate64(int fd, off64_t length)
{
	SIMPLE_BODY(RT_IO_FTRUNCATE, fd, length, RT_REAL(ftruncate64)(fd, length));
}

/* ---- duplicating ------------------------------------------------------ */

#define DUP_BODY(fdA_, targetA_, flagsA_, call)                                                    \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_DUP, fdA_, 0);                             \
		c_.flags = RT_IO_F_AUX;                                                            \
		c_.aux[0] = (uint32_t)(targetA_);                                                  \
		c_.aux[1] = (uint32_t)(flagsA_);                                                   \
		int r_ = call;                                                                     \
		rt_io_done(&c_, r_);                                                               \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT int dup(int fd)
{
	DUP_BODY(fd, -1, 0, RT_REAL(dup)(fd));
}

RT_IO_EXPORT int dup2(int fd, int target)
{
	if (!rt_io_skip() && fd != target)
		ringtrace__io_before_close(target, ringtrace__counter());
	DUP_BODY(fd, target, 0, RT_REAL(dup2)(fd, target));
}

RT_IO_EXPORT int dup3(int fd, int target, int flags)
{
	if (!rt_io_skip() && fd != target)
		ringtrace__io_before_close(target, ringtrace__counter());
	DUP_BODY(fd, target, flags, RT_REAL(dup3)(fd, target, flags));
}

/* fcntl: only the duplicating commands are I/O worth a record; the rest go by. */
#define FCNTL_BODY(real)                                                                           \
	do {                                                                                       \
		va_list ap;                                                                        \
		va_start(ap, cmd);                                                                 \
		void *arg = va_arg(ap, void *);                                                    \
		va_end(ap);                                                                        \
		if (cmd != F_DUPFD && cmd != F_DUPFD_CLOEXEC)                                      \
			return real(fd, cmd, arg);                                                 \
		DUP_BODY(fd, (uint32_t)(uintptr_t)arg, cmd == F_DUPFD_CLOEXEC ? O_CLOEXEC : 0,     \
			 real(fd, cmd, arg));                                                      \
	} while (0)

RT_IO_EXPORT int fcntl(int fd, int cmd, ...)
{
	FCNTL_BODY(RT_REAL(fcntl));
}

RT_IO_EXPORT int fcntl64(int fd, int cmd, ...)
{
	FCNTL_BODY(RT_REAL(fcntl64));
}

/* ---- mapping and copying ---------------------------------------------- */

#define MMAP_BODY(call)                                                                            \
	do {                                                                                       \
		if (fd < 0 || (flags & MAP_ANONYMOUS) || rt_io_skip())                             \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_MMAP, fd, length);                         \
		c_.flags = RT_IO_F_OFFSET | RT_IO_F_AUX;                                           \
		c_.offset = (int64_t)off;                                                          \
		c_.aux[0] = (uint32_t)prot;                                                        \
		c_.aux[1] = (uint32_t)flags;                                                       \
		void *r_ = call;                                                                   \
		rt_io_done(&c_, r_ == MAP_FAILED ? -1 : (int64_t)(uintptr_t)r_);                   \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t off)
{
	MMAP_BODY(RT_REAL(mmap)(addr, length, prot, flags, fd, off));
}

RT_IO_EXPORT void *mmap64(void *addr, size_t length, int prot, int flags, int fd, off64_t off)
{
	MMAP_BODY(RT_REAL(mmap64)(addr, length, prot, flags, fd, off));
}

RT_IO_EXPORT ssize_t copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off, size_t n,
				     unsigned flags)
{
	if (rt_io_skip())
		return RT_REAL(copy_file_range)(in, in_off, out, out_off, n, flags);
	struct rt_io_call c = RT_IO_CALL(RT_IO_COPY_FILE_RANGE, in, n);
	c.flags = RT_IO_F_AUX | (in_off ? RT_IO_F_OFFSET : 0);
	c.offset = in_off ? *in_off : 0;
	c.aux[0] = (uint32_t)out;
	ssize_t r = RT_REAL(copy_file_range)(in, in_off, out, out_off, n, flags);
	rt_io_done(&c, r);
	return r;
}

#define SENDFILE_BODY(call)                                                                        \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_SENDFILE, in, n);                          \
		c_.flags = RT_IO_F_AUX | (off ? RT_IO_F_OFFSET : 0);                               \
		c_.offset = off ? (int64_t)*off : 0;                                               \
		c_.aux[0] = (uint32_t)out;                                                         \
		ssize_t r_ = call;                                                                 \
		rt_io_done(&c_, r_);                                                               \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT ssize_t sendfile(int out, int in, off_t *off, size_t n)
{
	SENDFILE_BODY(RT_REAL(sendfile)(out, in, off, n));
}

RT_IO_EXPORT ssize_t sendfile64(int out, int in, off64_t *off, size_t n)
{
	SENDFILE_BODY(RT_REAL(sendfile64)(out, in, off, n));
}

/* ---- unlink and rename ------------------------------------------------ */

#define PATH_BODY(opA_, dirfdA_, pathA_, dirfd2A_, path2A_, call)                                  \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		char a_[RT_IO_PATH_BUF], b_[RT_IO_PATH_BUF];                                       \
		struct rt_io_call c_ = RT_IO_CALL(opA_, -1, 0);                                    \
		c_.path = a_;                                                                      \
		c_.path_length = rt_io_absolute(dirfdA_, pathA_, a_, sizeof(a_));                  \
		if (path2A_) {                                                                     \
			c_.path2 = b_;                                                             \
			c_.path2_length = rt_io_absolute(dirfd2A_, path2A_, b_, sizeof(b_));       \
		}                                                                                  \
		c_.start = ringtrace__counter();                                                   \
		int r_ = call;                                                                     \
		rt_io_done(&c_, r_);                                                               \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT int unlink(const char *path)
{
	PATH_BODY(RT_IO_UNLINK, AT_FDCWD, path, AT_FDCWD, (const char *)NULL,
		  RT_REAL(unlink)(path));
}

RT_IO_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	PATH_BODY(RT_IO_UNLINK, dirfd, path, AT_FDCWD, (const char *)NULL,
		  RT_REAL(unlinkat)(dirfd, path, flags));
}

RT_IO_EXPORT int rename(const char *from, const char *to)
{
	PATH_BODY(RT_IO_RENAME, AT_FDCWD, from, AT_FDCWD, to, RT_REAL(rename)(from, to));
}

RT_IO_EXPORT int renameat(int fromdir, const char *from, int todir, const char *to)
{
	PATH_BODY(RT_IO_RENAME, fromdir, from, todir, to,
		  RT_REAL(renameat)(fromdir, from, todir, to));
}

RT_IO_EXPORT int renameat2(int fromdir, const char *from, int todir, const char *to, unsigned flags)
{
	PATH_BODY(RT_IO_RENAME, fromdir, from, todir, to,
		  RT_REAL(renameat2)(fromdir, from, todir, to, flags));
}
