/*
 * fd_table.h - the arena's descriptor table, as the recording library
 * writes it (fd_table.c).  Every function is a no-op for a descriptor the
 * table has no entry for (no table, or fd at or above its capacity).
 */
#ifndef RT_RECORD_IO_FD_TABLE_H
#define RT_RECORD_IO_FD_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "record/io/io_call.h"
#include "ringtrace/format.h"

/*
 * Descriptors the table names as open, one bit each, in process memory
 * (ringtrace__fd_known, io_call.h: the library's own, or the interposer's):
 * the check every call makes reads one word, rather than the table's entry
 * and the arena header, both cold after a system call.
 */

/* The table names fd as open (or cannot hold it: nothing to do). */
int rt_fd_table_known_slow(int fd);
static inline int rt_fd_table_known(int fd)
{
	if (rt_io_fd_known(__atomic_load_n(&ringtrace__fd_known, __ATOMIC_ACQUIRE), fd))
		return 1;
	return rt_fd_table_known_slow(fd);
}
/* Forget every bit: a forked child's new arena starts with an empty table. */
void rt_fd_table_forget(void);
/* fd is open under name from counter on (op: the call that named it). */
void rt_fd_table_set(int fd, uint8_t op, uint64_t counter, uint32_t open_flags, const char *name,
		     uint32_t length);
/* to now names what from names (dup). */
void rt_fd_table_copy(int from, int to, uint64_t counter);
/* fd is closed from counter on; its name stays for readers of older records. */
void rt_fd_table_close(int fd, uint64_t counter);
/*
 * dir then fd in decimal ("/proc/self/fd/" 7), into out: no stdio, so that
 * it runs in a forked child and a signal handler.  "" when it does not fit.
 */
void rt_fd_proc_path(char *out, size_t size, const char *dir, int fd);
/* The name /proc/self/fd gives fd, without a NUL; its length, 0 when there is none. */
uint32_t rt_fd_proc_name(int fd, char *out, uint32_t size);

#endif /* RT_RECORD_IO_FD_TABLE_H */
