/*
 * interpose.h - what the wrappers of libringtrace_io.so share: the real
 * functions behind them, whether to record at all, and handing a finished
 * call to the recording library.
 *
 * A wrapper records nothing while the library itself is inside (its own
 * files: the arena, /proc) or before the interposer's constructor ran; it
 * then only calls through.  Every wrapper keeps the call's errno.
 */
#ifndef RT_RECORD_IO_INTERPOSE_H
#define RT_RECORD_IO_INTERPOSE_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "record/io/io_call.h"
#include "ringtrace.h"
#include "ringtrace/format.h"

#define RT_IO_EXPORT __attribute__((visibility("default")))

/*
 * 0 until the constructor turned tracing on, then 1; 2 in a forked child
 * until its first traced call starts its own arena (and rundown) before
 * the call itself, so that the rundown sees the descriptors as they were
 * before it.
 */
extern int rt_io_active;
/* rt_io_skip for a state other than 1. */
int rt_io_skip_slow(int active);

/* The next definition of name after this library (the C library's): NULL if none. */
void *rt_io_resolve(void **slot, const char *name);

/*
 * REAL(f): the real f, typed like f; resolved on first use, since another
 * library's constructor may call us before ours ran.
 */
#define RT_REAL(f)                                                                                 \
	({                                                                                         \
		static void *rt_real_##f;                                                          \
		void *rt_p_ = __atomic_load_n(&rt_real_##f, __ATOMIC_RELAXED);                     \
		if (__builtin_expect(!rt_p_, 0))                                                   \
			rt_p_ = rt_io_resolve(&rt_real_##f, #f);                                   \
		(__typeof__(&f))rt_p_;                                                             \
	})

/* Whether this call goes by unrecorded. */
static inline int rt_io_skip(void)
{
	int active = __atomic_load_n(&rt_io_active, __ATOMIC_RELAXED);
	if (__builtin_expect(active != 1, 0))
		return rt_io_skip_slow(active);
	return ringtrace__tls_writer.internal != 0;
}

/* A call being timed: op, descriptor, bytes asked; started now. */
#define RT_IO_CALL(op_, fd_, size_)                                                                \
	{                                                                                          \
		.op = (op_), .fd = (fd_), .size = (int64_t)(size_), .start = ringtrace__counter()  \
	}

/* The call returned r (negative: failed with errno): record it, errno kept. */
static inline void rt_io_done(struct rt_io_call *c, int64_t r)
{
	int err = errno;
	c->result = r < 0 ? -(int64_t)err : r;
	ringtrace__io_record(c);
	errno = err;
}

/*
 * Room for a path: no record holds more (RT_IO_PATH_BYTES_MAX), and the
 * wrappers keep their stack small, since a signal handler on a small
 * alternate stack may call them.
 */
#define RT_IO_PATH_BUF (RT_IO_PATH_BYTES_MAX + 1u)

/*
 * path made absolute against the working directory (dirfd AT_FDCWD) or
 * the directory dirfd names, "." and ".." taken out, into out; its
 * length.  Never fails: a path it cannot place (a working directory longer
 * than out holds, a closed dirfd) stays as given.
 */
uint32_t rt_io_absolute(int dirfd, const char *path, char *out, uint32_t size);

/* O_* flags a stdio mode string stands for. */
uint32_t rt_io_mode_flags(const char *mode);

/* The descriptor of a stream, -1 when it has none (fmemopen, closed). */
int rt_io_stream_fd(FILE *f);

#endif /* RT_RECORD_IO_INTERPOSE_H */
