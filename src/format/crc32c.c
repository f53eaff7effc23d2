/*
 * crc32c.c - CRC-32C in hardware where the CPU has it, else by table.
 */
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
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const unsigned char *p,
							    size_t n)
{
	uint64_t c = crc;
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
