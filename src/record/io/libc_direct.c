/*
 * libc_direct.c - whether the wrappers of read and write may make the
 * system call themselves, as the C library does, rather than call it.
 *
 * Why: after a system call on a kernel with page-table isolation and no
 * PCID, every page touched is a TLB miss, paid one after another along
 * the chain of instructions.  A wrapper that calls the C library's read
 * comes back from the system call through two pages of code, the C
 * library's and then its own; one that makes the call itself comes back
 * through its own only.
 *
 * When it is the same: glibc's read and write on x86-64 (2.36, as Debian
 * 12 ships it) begin with a fast path for a process it counts as having
 * one thread: test a byte of its own, make the system call, return, with
 * errno set on failure.  The byte is 0 once another thread was created,
 * or once the thread was sent pthread_cancel; then the call takes the
 * path that can act on a cancellation.  The public __libc_single_threaded
 * is no substitute for that byte: a program that reads it has its own
 * copy, which pthread_cancel does not clear.  So the wrappers would test
 * the byte the C library's own code tests, found in that code.
 *
 * Why it is off unless asked for: that byte is the C library's private
 * state, found by matching one build's machine code, and cancellation's
 * correctness would rest on it, for a gain of tens of nanoseconds on a
 * call of more than a microsecond.  A library that runs inside other
 * people's programs calls the C library's functions.  So only
 * RINGTRACE_IO_DIRECT=1 turns it on, and then only if the first
 * instructions of the C library's read and write are that fast path byte
 * for byte and both test the same byte of the C library; any other C
 * library, any other build of it, another interposer between this one and
 * the C library, or another architecture: the wrappers call the next read
 * and write, and say so on stderr.  A value other than 0 and 1 is said on
 * stderr too.  The variable is read with secure_getenv: a privileged
 * process (set-user-ID, set-group-ID, file capabilities) obeys no
 * RINGTRACE_ variable.
 */
#include "record/io/interpose.h"
#include "record/io/libc_fast_path.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
/* One line on stderr, made with a system call the wrappers do not see. */
static void say(const char *line)
{
	syscall(SYS_write, 2, line, strlen(line));
}
#endif

const volatile char *rt_io_libc_one_thread(void)
{
#if defined(__x86_64__)
	const char *env = secure_getenv("RINGTRACE_IO_DIRECT");
	if (!env || !env[0] || strcmp(env, "0") == 0)
		return NULL;
	if (strcmp(env, "1") != 0) {
		char line[160];
		snprintf(line, sizeof(line),
			 "ringtrace: RINGTRACE_IO_DIRECT=%.40s: neither 0 nor 1; read and write "
			 "call the C library's\n",
			 env);
		say(line);
		return NULL;
	}
	const volatile char *byte = NULL;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *libc_read = libc ? dlsym(libc, "read") : NULL;
	void *libc_write = libc ? dlsym(libc, "write") : NULL;
	/* the next read and write must be the C library's: no other interposer is passed by */
	if (libc_read && libc_write && libc_read == rt_io_hot.real_read &&
	    libc_write == rt_io_hot.real_write) {
		const volatile char *r = rt_libc_one_thread_byte(libc_read, SYS_read);
		const volatile char *w = rt_libc_one_thread_byte(libc_write, SYS_write);
		/* and the byte must be the C library's own, as its read and write both say */
		Dl_info where_read, where_byte;
		if (r && r == w && dladdr(libc_read, &where_read) &&
		    dladdr((const void *)r, &where_byte) &&
		    where_read.dli_fbase == where_byte.dli_fbase)
			byte = r;
	}
	if (libc)
		dlclose(libc);
	if (!byte)
		say("ringtrace: RINGTRACE_IO_DIRECT=1: the C library's read and write are not "
		    "the fast path expected; they are called\n");
	return byte;
#else
	return NULL;
#endif
}
