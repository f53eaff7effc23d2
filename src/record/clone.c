/*
 * clone.c - children made without fork()'s handlers: _Fork(), clone() and
 * syscall() making a process that does not share its parent's memory.
 *
 * Such a child has a copy of its parent's memory, the forking thread's
 * writer included, and no fork handler tells it that it is another process:
 * on its fast path it would go on writing its parent's ring, at the
 * parent's next sequence numbers, through the shared mapping.  The fast
 * path cannot tell (it pays for no check), so the library stands in front
 * of the C library's functions that make such a child, as vfork.c does for
 * vfork: it is linked into the program or preloaded, and so comes before
 * the C library.  In the child, before the program runs on, each wrapper
 * does what the fork handler does (rt_arena_start_over_in_child,
 * async-signal-safe): the child traces on into an arena of its own.
 *
 *   _Fork       the child returns 0 from the wrapper.
 *   clone       without CLONE_VM: the child runs a trampoline that starts
 *               over, then the program's fn(arg).  The child has a copy of
 *               the parent's memory, so fn and arg wait for it in the
 *               wrapper's own frame (each calling thread has its own).
 *               With CLONE_VM the child shares the memory: passed on as is.
 *   syscall     SYS_clone and SYS_clone3 without CLONE_VM and with no stack
 *               of the child's own (the child goes on on a copy of the
 *               caller's stack and returns from the wrapper), and SYS_fork.
 *               A child given a stack of its own starts on it with nothing
 *               of the wrapper's to return to: such a call is passed on as
 *               is, and its child is not caught.  Nor is a child made by a
 *               `syscall` instruction of the program's own.
 *
 * Each wrapper calls the next definition of its function (the C library's,
 * or another interposer's), found with dlsym(RTLD_NEXT) once, by the
 * library's constructor (a first call in a signal handler must not look it
 * up), or at the first call if that comes before.  Where there is none, the
 * call fails with ENOSYS, and the first such failure says so.
 *
 * A program that loads the library with dlopen keeps its own calls going
 * to the C library: its children made this way are not caught either.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/record.h"

typedef pid_t fork_fn(void);
typedef int clone_fn(int (*)(void *), void *, int, void *, ...);
typedef long syscall_fn(long, ...);

/* Where a function has no next definition: fails with ENOSYS, says so once. */
static void missing(const char *name, int *warned)
{
	if (!__atomic_exchange_n(warned, 1, __ATOMIC_RELAXED))
		rt_warn("no next definition of ", name, " found: it fails with ENOSYS", NULL);
	errno = ENOSYS;
}

static pid_t missing_fork(void)
{
	static int warned;
	missing("_Fork", &warned);
	return -1;
}

static int missing_clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	static int warned;
	missing("clone", &warned);
	return -1;
}

static long missing_syscall(long number, ...)
{
	static int warned;
	missing("syscall", &warned);
	return -1;
}

static fork_fn *next_fork;
static clone_fn *next_clone;
static syscall_fn *next_syscall;

/* The next definition of name, or the missing one; looked up once (a race looks up twice). */
static void *resolve(void **slot, const char *name, void *missing_fn)
{
	void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	if (p)
		return p;
	p = dlsym(RTLD_NEXT, name);
	if (!p)
		p = missing_fn;
	__atomic_store_n(slot, p, __ATOMIC_RELEASE);
	return p;
}

#define RT_NEXT(f, name) ((f##_fn *)resolve((void **)&next_##f, name, (void *)missing_##f))

void rt_clone_resolve(void)
{
	RT_NEXT(fork, "_Fork");
	RT_NEXT(clone, "clone");
	RT_NEXT(syscall, "syscall");
}

/* In the child (async-signal-safe): start over, errno as the C library left it. */
static void start_over(void)
{
	int err = errno;
	rt_arena_start_over_in_child();
	errno = err;
}

RT_EXPORT pid_t _Fork(void)
{
	pid_t pid = RT_NEXT(fork, "_Fork")();
	if (pid == 0)
		start_over();
	return pid;
}

/* What the child of a clone without CLONE_VM runs, on its copy of the wrapper's frame. */
struct rt_clone_call {
	int (*fn)(void *);
	void *arg;
};

static int clone_child(void *p)
{
	struct rt_clone_call *call = p;
	start_over();
	return call->fn(call->arg);
}

RT_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
	/* as the C library's: the three optional arguments are read whatever the flags */
	va_list ap;
	va_start(ap, arg);
	pid_t *parent_tid = va_arg(ap, pid_t *);
	void *tls = va_arg(ap, void *);
	pid_t *child_tid = va_arg(ap, pid_t *);
	va_end(ap);
	clone_fn *next = RT_NEXT(clone, "clone");
	if ((flags & CLONE_VM) || !fn)
		return next(fn, stack, flags, arg, parent_tid, tls, child_tid);
	struct rt_clone_call call = {fn, arg};
	return next(clone_child, stack, flags, &call, parent_tid, tls, child_tid);
}

/*
 * Whether system call number with arguments a makes a child that has a
 * copy of the caller's memory and returns where the caller does.
 */
static int makes_copied_child(long number, const long a[6])
{
#ifdef SYS_fork
	if (number == SYS_fork)
		return 1;
#endif
	if (number == SYS_clone) {
#if defined(__s390__) || defined(__s390x__)
		long flags = a[1], stack = a[0]; /* the stack comes first there */
#else
		long flags = a[0], stack = a[1];
#endif
		return !(flags & CLONE_VM) && stack == 0;
	}
#ifdef SYS_clone3
	/* struct clone_args: flags first, the stack sixth (its first version is 64 bytes) */
	if (number == SYS_clone3 && a[0] && (unsigned long)a[1] >= 64) {
		/* the system call's argument: an address passed as an integer */
		// NOLINTNEXTLINE(performance-no-int-to-ptr)
		const uint64_t *args = (const uint64_t *)a[0];
		return !(args[0] & CLONE_VM) && args[5] == 0;
	}
#endif
	return 0;
}

/*
 * Not checked by AddressSanitizer: a caller that passes fewer than six
 * arguments leaves the last ones in its own frame, which the sanitizer
 * guards; reading them is what the C library's syscall does too.
 */
RT_EXPORT __attribute__((no_sanitize_address)) long syscall(long number, ...)
{
	/* as the C library's: six arguments, whatever the call takes */
	va_list ap;
	va_start(ap, number);
	long a[6];
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	syscall_fn *next = RT_NEXT(syscall, "syscall");
	if (!makes_copied_child(number, a))
		return next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	long r = next(number, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (r == 0)
		start_over();
	return r;
}
