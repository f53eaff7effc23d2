/*
 * test_libc_fast_path.c - recognising the one-thread fast path of the C
 * library's read and write (src/record/io/libc_fast_path.h): on code made
 * by hand, as glibc 2.36 lays it out and altered one instruction at a
 * time, and on this machine's own C library where it is glibc 2.36 on
 * x86-64.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>

#include "../lib/check.h"
#include "record/io/libc_fast_path.h"

/* Where the byte is, in the code below: 40 bytes past the end of the cmpb. */
#define BYTE_AT 40

/*
 * The fast path of system call nr (xorl for 0, movl otherwise) into
 * code, from offset at (after an endbr64 when endbr); its length.
 */
static size_t fast_path(unsigned char *code, size_t at, int endbr, long nr)
{
	size_t n = at;
	if (endbr) {
		memcpy(code + n, "\xf3\x0f\x1e\xfa", 4);
		n += 4;
	}
	/* cmpb $0, BYTE_AT(%rip) */
	code[n++] = 0x80;
	code[n++] = 0x3d;
	int32_t disp = BYTE_AT;
	memcpy(code + n, &disp, 4);
	n += 4;
	code[n++] = 0x00;
	memcpy(code + n, "\x74\x17", 2); /* je */
	n += 2;
	if (nr == 0) {
		memcpy(code + n, "\x31\xc0", 2);
		n += 2;
	} else {
		code[n++] = 0xb8;
		uint32_t imm = (uint32_t)nr;
		memcpy(code + n, &imm, 4);
		n += 4;
	}
	memcpy(code + n, "\x0f\x05\x48\x3d\x00\xf0\xff\xff\x77\x5b\xc3", 11);
	return n + 11;
}

static void test_made_by_hand(void)
{
	unsigned char code[128];
	for (int endbr = 0; endbr <= 1; endbr++) {
		size_t cmpb_end = (endbr ? 4 : 0) + 7;
		const volatile char *want = (const volatile char *)(code + cmpb_end + BYTE_AT);

		memset(code, 0xcc, sizeof(code));
		fast_path(code, 0, endbr, SYS_read);
		CHECK(rt_libc_one_thread_byte(code, SYS_read) == want);
		CHECK(rt_libc_one_thread_byte(code, SYS_write) == NULL); /* xorl: read's only */

		memset(code, 0xcc, sizeof(code));
		size_t n = fast_path(code, 0, endbr, SYS_write);
		CHECK(rt_libc_one_thread_byte(code, SYS_write) == want);
		CHECK(rt_libc_one_thread_byte(code, SYS_read) == NULL);
		CHECK(rt_libc_one_thread_byte(code, SYS_pwrite64) == NULL); /* another number */

		/* each instruction altered in turn: no longer the fast path */
		static const struct {
			size_t at; /* from the cmpb, for write */
			unsigned char byte;
		} alter[] = {
		    {0, 0x81},	/* not cmpb */
		    {1, 0x3c},	/* not rip-relative */
		    {6, 0x01},	/* compared with 1, not 0 */
		    {7, 0x75},	/* jne, not je */
		    {9, 0xb9},	/* movl into another register */
		    {14, 0x90}, /* no syscall */
		    {17, 0x2d}, /* not a compare with -4096 */
		    {22, 0x76}, /* jbe, not ja */
		    {24, 0xc2}, /* ret with an immediate */
		};
		size_t base = endbr ? 4 : 0;
		CHECK(n == base + 25);
		for (size_t i = 0; i < sizeof(alter) / sizeof(alter[0]); i++) {
			memset(code, 0xcc, sizeof(code));
			fast_path(code, 0, endbr, SYS_write);
			code[base + alter[i].at] = alter[i].byte;
			if (!CHECK(rt_libc_one_thread_byte(code, SYS_write) == NULL))
				fprintf(stderr, "  altered at %zu, endbr %d\n", alter[i].at, endbr);
		}
	}
}

/* On glibc 2.36 for x86-64, the byte of its read and write is its own __libc_single_threaded. */
static void test_this_libc(void)
{
#if defined(__x86_64__)
	if (strcmp(gnu_get_libc_version(), "2.36") != 0) {
		printf("test_libc_fast_path: glibc %s, not 2.36: its code not checked\n",
		       gnu_get_libc_version());
		return;
	}
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!CHECK(libc != NULL))
		return;
	const void *own = dlsym(libc, "__libc_single_threaded");
	const void *read_code = dlsym(libc, "read"), *write_code = dlsym(libc, "write");
	CHECK(own != NULL && read_code != NULL && write_code != NULL);
	CHECK(rt_libc_one_thread_byte(read_code, SYS_read) == own);
	CHECK(rt_libc_one_thread_byte(write_code, SYS_write) == own);
	CHECK(rt_libc_one_thread_byte(read_code, SYS_write) == NULL);
	dlclose(libc);
#else
	printf("test_libc_fast_path: not x86-64: the C library's code not checked\n");
#endif
}

int main(void)
{
	test_made_by_hand();
	test_this_libc();
	int failures = check_failure_count();
	printf("test_libc_fast_path: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
