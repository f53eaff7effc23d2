/*
 * fd_table.h - the arena's descriptor table, as the recording library
 * writes it (fd_table.c).  Every function is a no-op for a descriptor the
 * table has no entry for (no table, or fd at or above its capacity).
 */
#ifndef RT_RECORD_IO_FD_TABLE_H
#define RT_RECORD_IO_FD_TABLE_H

#include <stdint.h>

/* The table names fd as open (or cannot hold it: nothing to do). */
int rt_fd_table_known(int fd);
/* fd is open under name from counter on (op: the call that named it). */
void rt_fd_table_set(int fd, uint8_t op, uint64_t counter, uint32_t open_flags, const char *name,
		     uint32_t length);
/* to now names what from names (dup). */
void rt_fd_table_copy(int from, int to, uint64_t counter);
/* fd is closed from counter on; its name stays for readers of older records. */
void rt_fd_table_close(int fd, uint64_t counter);
/* The name /proc/self/fd gives fd, without a NUL; its length, 0 when there is none. */
uint32_t rt_fd_proc_name(int fd, char *out, uint32_t size);

#endif /* RT_RECORD_IO_FD_TABLE_H */
