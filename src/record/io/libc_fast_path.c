/*
 * libc_fast_path.c - the one-thread fast path of the C library's read and
 * write, recognised byte for byte (libc_fast_path.h).
 */
#include "record/io/libc_fast_path.h"

#include <stdint.h>
#include <string.h>

const volatile char *rt_libc_one_thread_byte(const void *code, long nr)
{
	static const unsigned char endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	static const unsigned char tail[] = {0x0f, 0x05, 0x48, 0x3d, 0x00, 0xf0, 0xff, 0xff, 0x77};
	const unsigned char *p = code;
	if (memcmp(p, endbr64, sizeof(endbr64)) == 0)
		p += sizeof(endbr64);
	if (p[0] != 0x80 || p[1] != 0x3d || p[6] != 0x00) /* cmpb $0, disp32(%rip) */
		return NULL;
	int32_t disp;
	memcpy(&disp, p + 2, sizeof(disp));
	/* rip-relative: from the end of the 7-byte instruction */
	const unsigned char *byte = p + 7 + disp;
	p += 7;
	if (p[0] != 0x74) /* je rel8 */
		return NULL;
	p += 2;
	if (nr == 0 && p[0] == 0x31 && p[1] == 0xc0) { /* xorl %eax, %eax */
		p += 2;
	} else {
		uint32_t imm;
		memcpy(&imm, p + 1, sizeof(imm));
		if (p[0] != 0xb8 || imm != (uint32_t)nr) /* movl $nr, %eax */
			return NULL;
		p += 5;
	}
	if (memcmp(p, tail, sizeof(tail)) != 0)
		return NULL;
	p += sizeof(tail) + 1; /* ja's rel8 */
	if (p[0] != 0xc3)      /* ret */
		return NULL;
	return (const volatile char *)byte;
}
