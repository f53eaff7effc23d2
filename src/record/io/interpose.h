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
#include "record/io/io_fast.h"
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
__attribute__((cold)) int rt_io_skip_slow(int active);

/* The next definition of name after this library (the C library's): NULL if none. */
__attribute__((cold)) void *rt_io_resolve(void **slot, const char *name);

/* Every function a wrapper calls through: resolved by the constructor. */
/* one list, laid out by hand */
/* clang-format off */
#define RT_IO_REAL_FUNCTIONS(X) \
	X(__fgets_chk) X(__getdelim) X(__fgets_unlocked_chk) X(__fread_chk) X(__fread_unlocked_chk) \
	X(__open64_2) X(__open_2) X(__openat64_2) X(__openat_2) X(__pread64_chk) \
	X(__pread_chk) X(__read_chk) X(__vdprintf_chk) X(__vfprintf_chk) X(close) \
	X(copy_file_range) X(creat) X(creat64) X(dup) X(dup2) \
	X(dup3) X(fclose) X(fcntl) X(fcntl64) X(fdatasync) \
	X(fdopen) X(fflush) X(fgets) X(fgets_unlocked) X(fopen) \
	X(fopen64) X(fputs) X(fputs_unlocked) X(fread) X(fread_unlocked) \
	X(freopen) X(freopen64) X(fseek) X(fseeko) X(fseeko64) \
	X(fsync) X(ftruncate) X(ftruncate64) X(fwrite) X(fwrite_unlocked) \
	X(getdelim) X(getline) X(lseek) X(lseek64) X(mmap) \
	X(mmap64) X(open) X(open64) X(openat) X(openat64) \
	X(pread) X(pread64) X(preadv) X(preadv64) X(puts) \
	X(pwrite) X(pwrite64) X(pwritev) X(pwritev64) X(read) \
	X(readv) X(rename) X(renameat) X(renameat2) X(rewind) \
	X(sendfile) X(sendfile64) X(unlink) X(unlinkat) X(vdprintf) \
	X(vfprintf) X(write) X(writev)
/* clang-format on */

#define RT_IO_REAL_SLOT(f) extern void *rt_real_##f;
RT_IO_REAL_FUNCTIONS(RT_IO_REAL_SLOT)
#undef RT_IO_REAL_SLOT

/* Resolve every slot now, so that no call pays for its lookup in its time. */
void rt_io_resolve_all(void);

/*
 * RT_REAL(f): the real f, typed like f; resolved on first use too, since
 * another library's constructor may call a wrapper before ours ran.
 */
#define RT_REAL(f)                                                                                 \
	({                                                                                         \
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

/* ringtrace__io_site's id once known (io_fast.h), 0 before. */
extern uint32_t rt_io_site_id;
/* rt_io_done for what the inline path left: through libringtrace, errno kept. */
__attribute__((cold)) void rt_io_done_slow(struct rt_io_call *c, int64_t r);

/*
 * The call returned r (negative: failed with errno): record it, errno
 * kept.  The common case is written inline, touching neither errno nor
 * another library (io_fast.h says why).
 */
static inline __attribute__((always_inline)) void rt_io_done(const struct rt_io_call *c, int64_t r)
{
	uint64_t end = ringtrace__counter();
	if (__builtin_expect(r >= 0, 1) && rt_io_record_fast(c, end, r, &rt_io_site_id))
		return;
	/*
	 * A copy, so that the wrapper's own call never has its address taken:
	 * what the wrapper knows of it (the operation, no path) then folds the
	 * inline path's tests away.
	 */
	struct rt_io_call done = *c;
	done.end = end;
	rt_io_done_slow(&done, r);
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
