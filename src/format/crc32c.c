/*
 * crc32c.c - CRC-32C in hardware where the CPU has it, else by table.
 */
#include <pthread.h>
#include <string.h>

#include "format/crc32c.h"

#define RT_CRC32C_POLY 0x82f63b78u /* Castagnoli, reflected */

static uint32_t table[8][256];
static int table_ready;

static void build_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (RT_CRC32C_POLY & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
	__atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

/* Slicing by 8: eight table lookups per 8 bytes. */
static uint32_t crc_table(uint32_t crc, const unsigned char *p, size_t n)
{
	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
		build_table(); /* idempotent: two threads building it write the same values */
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		v ^= crc;
		crc = table[7][v & 0xff] ^ table[6][(v >> 8) & 0xff] ^ table[5][(v >> 16) & 0xff] ^
		      table[4][(v >> 24) & 0xff] ^ table[3][(v >> 32) & 0xff] ^
		      table[2][(v >> 40) & 0xff] ^ table[1][(v >> 48) & 0xff] ^
		      table[0][(v >> 56) & 0xff];
		p += 8;
		n -= 8;
	}
	while (n--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return crc;
}

#if defined(__x86_64__)
/*
 * One `crc32` instruction waits for the one before it, but the CPU can run
 * three at once: long inputs are cut into rounds of three equal parts whose
 * CRCs are computed side by side, then joined.  The register after part A
 * then B is shift(crc(A)) ^ crc'(B), where crc' starts from 0 and shift is
 * the register after STREAM zero bytes: a linear map of the register, kept
 * as four tables, one per byte of it.
 */
#define STREAM ((size_t)256) /* bytes of each part; a multiple of 8 */

static uint32_t shift_table[4][256];
static int shift_ready;
static pthread_once_t shift_once = PTHREAD_ONCE_INIT;

__attribute__((target("sse4.2"))) static uint32_t after_zeros(uint32_t crc)
{
	uint64_t c = crc;
	for (size_t i = 0; i < STREAM / 8; i++)
		c = __builtin_ia32_crc32di(c, 0);
	return (uint32_t)c;
}

static void build_shift_table(void)
{
	for (unsigned j = 0; j < 4; j++)
		for (uint32_t b = 0; b < 256; b++)
			shift_table[j][b] = after_zeros(b << (8 * j));
	__atomic_store_n(&shift_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t shift(uint32_t c)
{
	return shift_table[0][c & 0xff] ^ shift_table[1][(c >> 8) & 0xff] ^
	       shift_table[2][(c >> 16) & 0xff] ^ shift_table[3][c >> 24];
}

__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const unsigned char *p,
							    size_t n)
{
	uint64_t c = crc;
	if (n >= 3 * STREAM && !__atomic_load_n(&shift_ready, __ATOMIC_ACQUIRE))
		pthread_once(&shift_once, build_shift_table);
	while (n >= 3 * STREAM) {
		uint64_t c1 = 0, c2 = 0;
		for (size_t i = 0; i < STREAM; i += 8) {
			uint64_t v0, v1, v2;
			memcpy(&v0, p + i, 8);
			memcpy(&v1, p + STREAM + i, 8);
			memcpy(&v2, p + 2 * STREAM + i, 8);
			c = __builtin_ia32_crc32di(c, v0);
			c1 = __builtin_ia32_crc32di(c1, v1);
			c2 = __builtin_ia32_crc32di(c2, v2);
		}
		c = shift(shift((uint32_t)c) ^ (uint32_t)c1) ^ (uint32_t)c2;
		p += 3 * STREAM;
		n -= 3 * STREAM;
	}
	while (n >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		n -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (n--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return c32;
}
#endif

uint32_t rt_crc32c(uint32_t crc, const void *data, size_t size)
{
	const unsigned char *p = data;
	crc = ~crc;
#if defined(__x86_64__)
	if (__builtin_cpu_supports("sse4.2"))
		return ~crc_sse42(crc, p, size);
#endif
	return ~crc_table(crc, p, size);
}
