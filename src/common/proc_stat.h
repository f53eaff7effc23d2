/*
 * proc_stat.h - the two fields of /proc/PID/stat that tell whether a
 * process is the one that wrote an arena and whether it still runs.
 * Shared by the library (which must stay async-signal-safe: no stdio, no
 * malloc) and the tool.
 */
#ifndef RT_COMMON_PROC_STAT_H
#define RT_COMMON_PROC_STAT_H

#include <stddef.h>
#include <stdint.h>

struct rt_proc_stat {
	char state;	     /* R, S, D, Z, X, ... (field 3) */
	uint64_t start_time; /* clock ticks after boot (field 22) */
};

/* "/proc/PID/stat", or "/proc/PID/task/TID/stat" when tid > 0. */
void rt_proc_stat_path(char *out, size_t size, int pid, int tid);

/* Read and parse a stat file; 0 on success, -1 if it cannot be read. */
int rt_proc_stat_read(const char *path, struct rt_proc_stat *out);

#endif /* RT_COMMON_PROC_STAT_H */
