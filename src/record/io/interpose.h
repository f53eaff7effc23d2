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

/* rt_io_skip for a state other than 1. */
__attribute__((cold)) int rt_io_skip_slow(int active);

/*
 * The next definition of name after this library (the C library's); if
 * there is none, a stand-in that fails with ENOSYS (interpose_start.c).
 */
__attribute__((cold)) void *rt_io_resolve(void **slot, const char *name);

/*
 * Every function a wrapper calls through, resolved by the constructor: the
 * reads and writes programs make most often, whose slots share one cache
 * line with the state (struct rt_io_hot), then the others.
 */
/* two lists, laid out by hand */
/* clang-format off */
#define RT_IO_REAL_HOT(X) \
	X(read) X(__read_chk) X(write) X(pread64)
#define RT_IO_REAL_COLD(X) \
	X(pwrite64) X(__fgets_chk) X(__getdelim) X(__fgets_unlocked_chk) X(__fread_chk) X(__fread_unlocked_chk) \
	X(__open64_2) X(__open_2) X(__openat64_2) X(__openat_2) X(__pread64_chk) \
	X(__pread_chk) X(__vdprintf_chk) X(__vfprintf_chk) X(close) \
	X(copy_file_range) X(creat) X(creat64) X(dup) X(dup2) \
	X(dup3) X(fclose) X(fcntl) X(fcntl64) X(fdatasync) \
	X(fdopen) X(fflush) X(fgets) X(fgets_unlocked) X(fopen) \
	X(fopen64) X(fputs) X(fputs_unlocked) X(fread) X(fread_unlocked) \
	X(freopen) X(freopen64) X(fseek) X(fseeko) X(fseeko64) \
	X(fsync) X(ftruncate) X(ftruncate64) X(fwrite) X(fwrite_unlocked) \
	X(getdelim) X(getline) X(lseek) X(lseek64) X(mmap) \
	X(mmap64) X(open) X(open64) X(openat) X(openat64) \
	X(pread) X(preadv) X(preadv64) X(puts) \
	X(pwrite) X(pwritev) X(pwritev64) \
	X(readv) X(rename) X(renameat) X(renameat2) X(rewind) \
	X(sendfile) X(sendfile64) X(unlink) X(unlinkat) X(vdprintf) \
	X(vfprintf) X(writev)
#define RT_IO_REAL_FUNCTIONS(X) RT_IO_REAL_HOT(X) RT_IO_REAL_COLD(X)
/* clang-format on */

/*
 * Everything a wrapper reads on its way, in one page of the interposer's
 * own memory: after a system call every page touched costs a TLB miss on
 * a kernel with page-table isolation (io_fast.h), so the state, the real
 * functions and the first 32000 or so descriptors' known bits share one.
 * A read of a descriptor below 64 reads one cache line of it: the state,
 * the common reads' and writes' real functions and those descriptors'
 * known bits.  No GOT either: the thread's writer is found from the
 * thread pointer.
 */
struct rt_io_hot {
	/*
	 * 0 until the constructor turned tracing on, then 1; 2 in a forked
	 * child until its first traced call starts its own arena (and rundown)
	 * before the call itself, so that the rundown sees the descriptors as
	 * they were before it.
	 */
	int active;
	uint32_t site_id;	/* ringtrace__io_site's id once known, 0 before */
	intptr_t writer_offset; /* ringtrace__tls_writer less the thread pointer */
	/*
	 * The byte the C library's read and write test, not 0 while they make
	 * the system call straight away (libc_direct.c); NULL: call them.
	 */
	const volatile char *one_thread;
#define RT_IO_REAL_SLOT(f) void *real_##f;
	RT_IO_REAL_HOT(RT_IO_REAL_SLOT)
	uint64_t known[RT_FD_KNOWN_WORDS]; /* ringtrace__fd_known, once the constructor ran */
	RT_IO_REAL_COLD(RT_IO_REAL_SLOT)
#undef RT_IO_REAL_SLOT
};
_Static_assert(offsetof(struct rt_io_hot, known) == 56,
	       "the state, the hot slots and the first descriptors' bits: one line");
extern struct rt_io_hot rt_io_hot;

/* Resolve every slot now, so that no call pays for its lookup in its time. */
void rt_io_resolve_all(void);

/* What rt_io_hot.one_thread is to hold: libc_direct.c. */
const volatile char *rt_io_libc_one_thread(void);

/*
 * RT_REAL(f): the real f, typed like f; resolved on first use too, since
 * another library's constructor may call a wrapper before ours ran.
 */
#define RT_REAL(f)                                                                                 \
	({                                                                                         \
		void *rt_p_ = __atomic_load_n(&rt_io_hot.real_##f, __ATOMIC_RELAXED);              \
		if (__builtin_expect(!rt_p_, 0))                                                   \
			rt_p_ = rt_io_resolve(&rt_io_hot.real_##f, #f);                            \
		(__typeof__(&f))rt_p_;                                                             \
	})

/*
 * RT_REAL(f)(fd, buf, n) for read and write (system call nr), made here
 * while the C library would make the system call straight away itself
 * (libc_direct.c says when, and why).
 */
#if defined(__x86_64__)
#define RT_REAL_DIRECT3(f, nr, fd, buf, n)                                                         \
	({                                                                                         \
		const volatile char *one_ = rt_io_hot.one_thread;                                  \
		__builtin_expect(one_ != NULL && *one_ != 0, 1) ? rt_io_syscall3(nr, fd, buf, n)   \
								: RT_REAL(f)(fd, buf, n);          \
	})

static inline __attribute__((always_inline)) ssize_t rt_io_syscall3(long nr, int fd,
								    const void *buf, size_t n)
{
	long r;
	__asm__ volatile("syscall"
			 : "=a"(r)
			 : "0"(nr), "D"((long)fd), "S"(buf), "d"(n)
			 : "rcx", "r11", "memory");
	if (__builtin_expect((unsigned long)r > -4096UL, 0)) {
		errno = (int)-r;
		return -1;
	}
	return r;
}
#else
#define RT_REAL_DIRECT3(f, nr, fd, buf, n) RT_REAL(f)(fd, buf, n)
#endif

/*
 * The calling thread's writer, writer_offset from the thread pointer: the
 * offset of a variable of static TLS is the same in every thread, and
 * reading it so touches no GOT.  Only once active is 1 (the constructor
 * took the offset).
 */
static inline __attribute__((always_inline)) struct ringtrace__writer *
rt_io_writer_at(intptr_t writer_offset)
{
	return (struct ringtrace__writer *)((char *)__builtin_thread_pointer() + writer_offset);
}

static inline __attribute__((always_inline)) struct ringtrace__writer *rt_io_writer(void)
{
	return rt_io_writer_at(rt_io_hot.writer_offset);
}

/*
 * What the inline record needs of the interposer's page, for a call on
 * fd.  A wrapper that can reads it before its call: after the call the
 * thread's writer is then reached from a register, not through this page
 * again, one TLB miss fewer on the way to the record.
 */
struct rt_io_ready {
	intptr_t writer_offset;
	uint32_t site_id;
	int known; /* the table names fd (as of the call's start: see rt_io_done_ready) */
};

static inline __attribute__((always_inline)) struct rt_io_ready rt_io_ready(int fd)
{
	struct rt_io_ready r = {
	    .writer_offset = rt_io_hot.writer_offset,
	    .site_id = __atomic_load_n(&rt_io_hot.site_id, __ATOMIC_RELAXED),
	    .known = rt_io_fd_known(rt_io_hot.known, fd),
	};
	return r;
}

/*
 * Whether a call goes by unrecorded, as far as the interposer's own page
 * says (a wrapper that does nothing before its call but time it asks only
 * this: the library's own calls are let by after the call instead, in
 * rt_io_done, so that the thread's writer is not one more page touched
 * before the system call as well as after it).
 */
static inline int rt_io_off(void)
{
	/* acquire: the constructor's writer_offset and known bits come before its 1 */
	int active = __atomic_load_n(&rt_io_hot.active, __ATOMIC_ACQUIRE);
	if (__builtin_expect(active != 1, 0))
		return rt_io_skip_slow(active);
	return 0;
}

/*
 * Whether this call goes by unrecorded: rt_io_off, or the library's own
 * call, or a vfork child's (counted).
 */
static inline int rt_io_skip(void)
{
	return rt_io_off() || (rt_io_writer()->internal != 0 && ringtrace__io_let_by());
}

/* A call being timed: op, descriptor, bytes asked; started now. */
#define RT_IO_CALL(op_, fd_, size_)                                                                \
	{                                                                                          \
		.op = (op_), .fd = (fd_), .size = (int64_t)(size_), .start = ringtrace__counter()  \
	}

/* rt_io_done for what the inline path left: through libringtrace, errno kept. */
__attribute__((cold)) void rt_io_done_slow(struct rt_io_call *c, int64_t r);

/*
 * The call returned r (negative: failed with errno): record it, errno
 * kept, with what ready held before the call.  The common case is written
 * inline, touching neither errno nor another library (io_fast.h says
 * why).  A descriptor known when the call started is named by the table
 * at that time, which is the time readers name it by, even if another
 * thread closed it meanwhile.
 */
static inline __attribute__((always_inline)) void
rt_io_done_ready(const struct rt_io_call *c, struct rt_io_ready ready, int64_t r)
{
	uint64_t end = ringtrace__counter();
	struct ringtrace__writer *w = rt_io_writer_at(ready.writer_offset);
	if (__builtin_expect(r >= 0, 1) &&
	    rt_io_record_fast(w, ready.known, ready.site_id, c, end, r))
		return;
	if (w->internal)
		return; /* the library's own call, let by after it (rt_io_off) */
	/*
	 * A copy, so that the wrapper's own call never has its address taken:
	 * what the wrapper knows of it (the operation, no path) then folds the
	 * inline path's tests away.
	 */
	struct rt_io_call done = *c;
	done.end = end;
	rt_io_done_slow(&done, r);
}

/* rt_io_done_ready with what the interposer's page holds now, after the call. */
static inline __attribute__((always_inline)) void rt_io_done(const struct rt_io_call *c, int64_t r)
{
	rt_io_done_ready(c, rt_io_ready(c->fd), r);
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
