/*
 * crc32c.h - CRC-32C (Castagnoli), the checksum of trace-file blocks.
 *
 * Chosen over CRC-32 (zlib) because x86-64 computes it in hardware
 * (SSE4.2 `crc32`), which keeps checksumming far below the cost of writing
 * the bytes; other machines get a table-driven version with the same
 * result.  Standard parameters: reflected, initial value and final xor
 * 0xffffffff, so rt_crc32c("123456789", 9) == 0xe3069283.
 */
#ifndef RT_FORMAT_CRC32C_H
#define RT_FORMAT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continue a CRC: pass 0 to start, the previous result to go on. */
uint32_t rt_crc32c(uint32_t crc, const void *data, size_t size);

#endif /* RT_FORMAT_CRC32C_H */
