/*
 * libc_fast_path.h - reading the C library's read and write: whether
 * their code begins with the fast path glibc on x86-64 takes in a process
 * of one thread, and which byte it tests (libc_direct.c says what for).
 */
#ifndef RT_RECORD_IO_LIBC_FAST_PATH_H
#define RT_RECORD_IO_LIBC_FAST_PATH_H

/*
 * The byte code tests if code begins with the one-thread fast path of
 * system call nr (x86-64):
 *
 *     [endbr64]
 *     cmpb  $0, BYTE(%rip)
 *     je    <the path that can act on a cancellation>
 *     xorl  %eax, %eax          (nr 0) or  movl $nr, %eax
 *     syscall
 *     cmpq  $-4096, %rax
 *     ja    <set errno, return -1>
 *     ret
 *
 * NULL when it does not.  Reads at most 31 bytes from code.
 */
const volatile char *rt_libc_one_thread_byte(const void *code, long nr);

#endif /* RT_RECORD_IO_LIBC_FAST_PATH_H */
