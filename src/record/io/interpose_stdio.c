/*
 * interpose_stdio.c - the stdio calls that open, read, write, position,
 * flush and close streams, each recorded as one RT_REC_IO record on the
 * stream's descriptor, with the stream (RT_IO_F_STREAM).
 *
 * Bytes are what the program handed over or got back, not what reached
 * the kernel: the C library buffers, and its own read and write calls
 * behind a stream are internal to it (not seen).  The character calls
 * (fgetc, fputc, getc, putc and their unlocked forms, often macros) are
 * left alone: one record per character would cost more than the call.
 */
/*
 * glibc defines getline and vprintf inline in <bits/stdio.h> when
 * optimizing.  clang then gives our definitions of them the visibility of
 * the header's, hidden in this -fvisibility=hidden library, and ignores
 * RT_IO_EXPORT on them: they would not be exported, and the program's
 * calls would go past the interposer.  The header is read first, with
 * default visibility.
 */
#define _GNU_SOURCE
#pragma GCC visibility push(default)
#include <stdio.h>
#pragma GCC visibility pop

#include "record/io/interpose.h"

#include <fcntl.h>
#include <stdarg.h>
#include <string.h>

/* optimised builds make some of these macros; the functions are what is interposed */
#undef fread_unlocked
#undef fwrite_unlocked
#undef fgets_unlocked
#undef fputs_unlocked
#undef ferror_unlocked

/* Not declared unless the program is built with _FORTIFY_SOURCE. */
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f);
size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f);
char *__fgets_chk(char *s, size_t size, int n, FILE *f);
char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *f);
ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f);
int __fprintf_chk(FILE *f, int flag, const char *format, ...);
int __printf_chk(int flag, const char *format, ...);
int __vfprintf_chk(FILE *f, int flag, const char *format, va_list ap);
int __vprintf_chk(int flag, const char *format, va_list ap);
int __dprintf_chk(int fd, int flag, const char *format, ...);
int __vdprintf_chk(int fd, int flag, const char *format, va_list ap);

static void stream_call(struct rt_io_call *c, FILE *f)
{
	c->flags |= RT_IO_F_STREAM;
	c->stream = (uint64_t)(uintptr_t)f;
}

/* ---- opening and closing ---------------------------------------------- */

/* A stream opened by call from path (NULL: fdopen's fd) with mode. */
#define FOPEN_BODY(pathA_, fd_inA_, modeA_, call)                                                  \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		char abs_[RT_IO_PATH_BUF];                                                         \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_FOPEN, fd_inA_, 0);                        \
		if (pathA_) {                                                                      \
			c_.path = abs_;                                                            \
			c_.path_length = rt_io_absolute(AT_FDCWD, pathA_, abs_, sizeof(abs_));     \
		}                                                                                  \
		c_.flags = RT_IO_F_AUX;                                                            \
		c_.aux[0] = rt_io_mode_flags(modeA_);                                              \
		c_.start = ringtrace__counter();                                                   \
		FILE *f_ = call;                                                                   \
		stream_call(&c_, f_);                                                              \
		int fd_ = f_ ? rt_io_stream_fd(f_) : -1;                                           \
		if (f_)                                                                            \
			c_.fd = fd_;                                                               \
		rt_io_done(&c_, f_ ? fd_ : -1);                                                    \
		return f_;                                                                         \
	} while (0)

RT_IO_EXPORT FILE *fopen(const char *path, const char *mode)
{
	FOPEN_BODY(path, -1, mode, RT_REAL(fopen)(path, mode));
}

RT_IO_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	FOPEN_BODY(path, -1, mode, RT_REAL(fopen64)(path, mode));
}

RT_IO_EXPORT FILE *fdopen(int fd, const char *mode)
{
	FOPEN_BODY((const char *)NULL, fd, mode, RT_REAL(fdopen)(fd, mode));
}

/* freopen closes the stream's old descriptor first: the table hears of it */
RT_IO_EXPORT FILE *freopen(const char *path, const char *mode, FILE *f)
{
	if (!rt_io_skip() && path)
		ringtrace__io_before_close(rt_io_stream_fd(f), ringtrace__counter());
	FOPEN_BODY(path, rt_io_stream_fd(f), mode, RT_REAL(freopen)(path, mode, f));
}

RT_IO_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *f)
{
	if (!rt_io_skip() && path)
		ringtrace__io_before_close(rt_io_stream_fd(f), ringtrace__counter());
	FOPEN_BODY(path, rt_io_stream_fd(f), mode, RT_REAL(freopen64)(path, mode, f));
}

RT_IO_EXPORT int fclose(FILE *f)
{
	if (rt_io_skip())
		return RT_REAL(fclose)(f);
	struct rt_io_call c = RT_IO_CALL(RT_IO_FCLOSE, rt_io_stream_fd(f), 0);
	stream_call(&c, f);
	ringtrace__io_before_close(c.fd, c.start);
	int r = RT_REAL(fclose)(f);
	rt_io_done(&c, r == 0 ? 0 : -1);
	return r;
}

RT_IO_EXPORT int fflush(FILE *f)
{
	if (rt_io_skip())
		return RT_REAL(fflush)(f);
	struct rt_io_call c = RT_IO_CALL(RT_IO_FFLUSH, rt_io_stream_fd(f), 0);
	stream_call(&c, f);
	int r = RT_REAL(fflush)(f);
	rt_io_done(&c, r == 0 ? 0 : -1);
	return r;
}

/* ---- reading ---------------------------------------------------------- */

/* What a read of items of size bytes gave: bytes, or -1 when the stream has an error. */
static int64_t items_result(size_t items, size_t size, size_t asked, FILE *f)
{
	if (items < asked && ferror_unlocked(f) && !items)
		return -1;
	return (int64_t)(items * size);
}

#define FREAD_BODY(op, call)                                                                       \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(op, rt_io_stream_fd(f), size * n);               \
		stream_call(&c_, f);                                                               \
		size_t r_ = call;                                                                  \
		rt_io_done(&c_, items_result(r_, size, n, f));                                     \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT size_t fread(void *ptr, size_t size, size_t n, FILE *f)
{
	FREAD_BODY(RT_IO_FREAD, RT_REAL(fread)(ptr, size, n, f));
}

RT_IO_EXPORT size_t fread_unlocked(void *ptr, size_t size, size_t n, FILE *f)
{
	FREAD_BODY(RT_IO_FREAD, RT_REAL(fread_unlocked)(ptr, size, n, f));
}

RT_IO_EXPORT size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f)
{
	FREAD_BODY(RT_IO_FREAD, RT_REAL(__fread_chk)(ptr, ptrlen, size, n, f));
}

RT_IO_EXPORT size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f)
{
	FREAD_BODY(RT_IO_FREAD, RT_REAL(__fread_unlocked_chk)(ptr, ptrlen, size, n, f));
}

RT_IO_EXPORT size_t fwrite(const void *ptr, size_t size, size_t n, FILE *f)
{
	FREAD_BODY(RT_IO_FWRITE, RT_REAL(fwrite)(ptr, size, n, f));
}

RT_IO_EXPORT size_t fwrite_unlocked(const void *ptr, size_t size, size_t n, FILE *f)
{
	FREAD_BODY(RT_IO_FWRITE, RT_REAL(fwrite_unlocked)(ptr, size, n, f));
}

/* fgets: the bytes of the line it gave, 0 at the end, -1 on an error */
#define FGETS_BODY(call)                                                                           \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_FREAD, rt_io_stream_fd(f), n > 0 ? n : 0); \
		stream_call(&c_, f);                                                               \
		char *r_ = call;                                                                   \
		rt_io_done(&c_, r_ ? (int64_t)strlen(r_) : ferror_unlocked(f) ? -1 : 0);           \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT char *fgets(char *s, int n, FILE *f)
{
	FGETS_BODY(RT_REAL(fgets)(s, n, f));
}

RT_IO_EXPORT char *fgets_unlocked(char *s, int n, FILE *f)
{
	FGETS_BODY(RT_REAL(fgets_unlocked)(s, n, f));
}

RT_IO_EXPORT char *__fgets_chk(char *s, size_t size, int n, FILE *f)
{
	FGETS_BODY(RT_REAL(__fgets_chk)(s, size, n, f));
}

RT_IO_EXPORT char *__fgets_unlocked_chk(char *s, size_t size, int n, FILE *f)
{
	FGETS_BODY(RT_REAL(__fgets_unlocked_chk)(s, size, n, f));
}

/* getline, getdelim: the bytes read, 0 at the end, -1 on an error */
#define GETLINE_BODY(call)                                                                         \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_FREAD, rt_io_stream_fd(f), 0);             \
		stream_call(&c_, f);                                                               \
		ssize_t r_ = call;                                                                 \
		rt_io_done(&c_, r_ >= 0 ? r_ : ferror_unlocked(f) ? -1 : 0);                       \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT ssize_t getline(char **line, size_t *n, FILE *f)
{
	GETLINE_BODY(RT_REAL(getline)(line, n, f));
}

RT_IO_EXPORT ssize_t getdelim(char **line, size_t *n, int delim, FILE *f)
{
	GETLINE_BODY(RT_REAL(getdelim)(line, n, delim, f));
}

/* what getline and getdelim become in optimised programs (<bits/stdio.h>) */
RT_IO_EXPORT ssize_t __getdelim(char **line, size_t *n, int delim, FILE *f)
{
	GETLINE_BODY(RT_REAL(__getdelim)(line, n, delim, f));
}

/* ---- writing ---------------------------------------------------------- */

/* A write of a whole string: its bytes when the call succeeded. */
#define PUTS_BODY(f, bytes, call)                                                                  \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		size_t b_ = (bytes);                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_FWRITE, rt_io_stream_fd(f), b_);           \
		stream_call(&c_, f);                                                               \
		int r_ = call;                                                                     \
		rt_io_done(&c_, r_ >= 0 ? (int64_t)b_ : -1);                                       \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT int fputs(const char *s, FILE *f)
{
	PUTS_BODY(f, strlen(s), RT_REAL(fputs)(s, f));
}

RT_IO_EXPORT int fputs_unlocked(const char *s, FILE *f)
{
	PUTS_BODY(f, strlen(s), RT_REAL(fputs_unlocked)(s, f));
}

RT_IO_EXPORT int puts(const char *s)
{
	PUTS_BODY(stdout, strlen(s) + 1, RT_REAL(puts)(s));
}

/* The printf family writes what it formatted: size and result are its count. */
#define PRINTF_BODY(f, call)                                                                       \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_FWRITE, rt_io_stream_fd(f), 0);            \
		stream_call(&c_, f);                                                               \
		int r_ = call;                                                                     \
		c_.size = r_ > 0 ? r_ : 0;                                                         \
		rt_io_done(&c_, r_);                                                               \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT int vfprintf(FILE *f, const char *format, va_list ap)
{
	PRINTF_BODY(f, RT_REAL(vfprintf)(f, format, ap));
}

RT_IO_EXPORT int vprintf(const char *format, va_list ap)
{
	PRINTF_BODY(stdout, RT_REAL(vfprintf)(stdout, format, ap));
}

RT_IO_EXPORT int fprintf(FILE *f, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	int r;
	if (rt_io_skip()) {
		r = RT_REAL(vfprintf)(f, format, ap);
	} else {
		struct rt_io_call c = RT_IO_CALL(RT_IO_FWRITE, rt_io_stream_fd(f), 0);
		stream_call(&c, f);
		r = RT_REAL(vfprintf)(f, format, ap);
		c.size = r > 0 ? r : 0;
		rt_io_done(&c, r);
	}
	va_end(ap);
	return r;
}

RT_IO_EXPORT int printf(const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	int r = vprintf(format, ap);
	va_end(ap);
	return r;
}

RT_IO_EXPORT int __vfprintf_chk(FILE *f, int flag, const char *format, va_list ap)
{
	PRINTF_BODY(f, RT_REAL(__vfprintf_chk)(f, flag, format, ap));
}

RT_IO_EXPORT int __vprintf_chk(int flag, const char *format, va_list ap)
{
	PRINTF_BODY(stdout, RT_REAL(__vfprintf_chk)(stdout, flag, format, ap));
}

RT_IO_EXPORT int __fprintf_chk(FILE *f, int flag, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	int r = __vfprintf_chk(f, flag, format, ap);
	va_end(ap);
	return r;
}

RT_IO_EXPORT int __printf_chk(int flag, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	int r = __vfprintf_chk(stdout, flag, format, ap);
	va_end(ap);
	return r;
}

/* dprintf writes to a descriptor, with the C library's own write: a write of ours */
#define DPRINTF_BODY(call)                                                                         \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_WRITE, fd, 0);                             \
		int r_ = call;                                                                     \
		c_.size = r_ > 0 ? r_ : 0;                                                         \
		rt_io_done(&c_, r_);                                                               \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT int vdprintf(int fd, const char *format, va_list ap)
{
	DPRINTF_BODY(RT_REAL(vdprintf)(fd, format, ap));
}

RT_IO_EXPORT int __vdprintf_chk(int fd, int flag, const char *format, va_list ap)
{
	DPRINTF_BODY(RT_REAL(__vdprintf_chk)(fd, flag, format, ap));
}

RT_IO_EXPORT int dprintf(int fd, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	int r = vdprintf(fd, format, ap);
	va_end(ap);
	return r;
}

RT_IO_EXPORT int __dprintf_chk(int fd, int flag, const char *format, ...)
{
	va_list ap;
	va_start(ap, format);
	int r = __vdprintf_chk(fd, flag, format, ap);
	va_end(ap);
	return r;
}

/* ---- positioning ------------------------------------------------------ */

#define FSEEK_BODY(f, off, whence, call)                                                           \
	do {                                                                                       \
		if (rt_io_skip())                                                                  \
			return call;                                                               \
		struct rt_io_call c_ = RT_IO_CALL(RT_IO_FSEEK, rt_io_stream_fd(f), 0);             \
		stream_call(&c_, f);                                                               \
		c_.flags |= RT_IO_F_OFFSET | RT_IO_F_AUX;                                          \
		c_.offset = (int64_t)(off);                                                        \
		c_.aux[0] = (uint32_t)(whence);                                                    \
		int r_ = call;                                                                     \
		rt_io_done(&c_, r_);                                                               \
		return r_;                                                                         \
	} while (0)

RT_IO_EXPORT int fseek(FILE *f, long off, int whence)
{
	FSEEK_BODY(f, off, whence, RT_REAL(fseek)(f, off, whence));
}

RT_IO_EXPORT int fseeko(FILE *f, off_t off, int whence)
{
	FSEEK_BODY(f, off, whence, RT_REAL(fseeko)(f, off, whence));
}

RT_IO_EXPORT int fseeko64(FILE *f, off64_t off, int whence)
{
	FSEEK_BODY(f, off, whence, RT_REAL(fseeko64)(f, off, whence));
}

RT_IO_EXPORT void rewind(FILE *f)
{
	if (rt_io_skip()) {
		RT_REAL(rewind)(f);
		return;
	}
	struct rt_io_call c = RT_IO_CALL(RT_IO_FSEEK, rt_io_stream_fd(f), 0);
	stream_call(&c, f);
	c.flags |= RT_IO_F_OFFSET | RT_IO_F_AUX;
	c.aux[0] = SEEK_SET;
	RT_REAL(rewind)(f);
	rt_io_done(&c, 0);
}
