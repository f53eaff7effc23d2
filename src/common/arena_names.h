/*
 * arena_names.h - where arenas live and what they are called, shared by
 * the recording library (which names them) and the tool (which finds them).
 *
 * A program with no RINGTRACE_ARENA records into
 *   DIR "/" RT_ARENA_PREFIX "PROGRAM.PID" RT_ARENA_SUFFIX
 * and removes it when it exits cleanly.  DIR is RINGTRACE_DIR when set,
 * else the user's own directory RT_ARENA_BASE "/" RT_ARENA_USER_DIR "UID"
 * (rt_arena_dir()).  The library makes DIR with mode 0700 if it is missing
 * and records into it only if it is a directory (not a symbolic link) of
 * the user's that no one else may enter (arena_dir.c), so that no other
 * user can read an arena, plant a file or link where one will be created,
 * or swap the directory: /dev/shm is sticky, only the owner may rename or
 * remove an entry of it.
 *
 * A program that finds an arena of a previous run at its path keeps it as
 * PATH RT_ARENA_LAST_SUFFIX (the "last" arena, as ACRN keeps the logs of
 * the last crashed run apart from the current ones), replacing an older
 * last arena.  Under `ringtrace record` (RT_ARENA_COLLECTOR_ENV names it),
 * a last arena of an earlier image of the same process (an exec) that the
 * recorder has not attached yet is not replaced but kept as
 * PATH RT_ARENA_LAST_SUFFIX ".N", N from 1 to RT_ARENA_KEPT_MAX, until the
 * recorder has attached it (arena_last.c).
 */
#ifndef RT_COMMON_ARENA_NAMES_H
#define RT_COMMON_ARENA_NAMES_H

#include <stddef.h>
#include <string.h>

#define RT_ARENA_BASE "/dev/shm"
#define RT_ARENA_USER_DIR "ringtrace-"
#define RT_ARENA_DIR_ENV "RINGTRACE_DIR"
/* how the documentation and --help name the default directory */
#define RT_ARENA_DIR_TEXT RT_ARENA_BASE "/" RT_ARENA_USER_DIR "UID"
#define RT_ARENA_PREFIX "ringtrace-"
#define RT_ARENA_SUFFIX ".arena"
#define RT_ARENA_LAST_SUFFIX ".last"
/* the pid of the `ringtrace record` that attaches a program's arenas, set by it */
#define RT_ARENA_COLLECTOR_ENV "RINGTRACE_COLLECTOR"
/*
 * stream mode: microseconds a writer waits at a full ring for the collector
 * (the header's full_wait_us from the start), set by `ringtrace record`
 */
#define RT_FULL_WAIT_ENV "RINGTRACE_FULL_WAIT_US"
#define RT_FULL_WAIT_US_MAX 10000000u
/*
 * `ringtrace record -F/-N` and -t: the file of function address ranges the
 * library reads at load (its first line is RT_FUNCTION_FILTER_MAGIC:
 * symbols/function_filter.h), and the shortest call recorded (at most an hour)
 */
#define RT_FUNCTION_FILTER_ENV "RINGTRACE_FUNCTION_FILTER"
#define RT_FUNCTION_FILTER_MAGIC "ringtrace-function-filter 1\n"
#define RT_MIN_DURATION_ENV "RINGTRACE_MIN_DURATION"
#define RT_MIN_DURATION_NS_MAX 3600000000000ull
/* PATH.last.N kept for a recorder at most, per PATH */
#define RT_ARENA_KEPT_MAX 16

/*
 * The length of name (n bytes) without a kept copy's number: for
 * X RT_ARENA_LAST_SUFFIX ".N" (N of 1 to 3 digits, no leading zero) the
 * length of X RT_ARENA_LAST_SUFFIX, else n.  The tool's one reading of
 * those names, for `record` and for `ls` and `rm`.
 */
static inline size_t rt_arena_name_unkept(const char *name, size_t n)
{
	size_t digits = 0, last = sizeof(RT_ARENA_LAST_SUFFIX) - 1;
	while (digits < n && digits < 3 && name[n - 1 - digits] >= '0' &&
	       name[n - 1 - digits] <= '9')
		digits++;
	if (!digits || name[n - digits] == '0' || n < digits + 1 + last ||
	    name[n - 1 - digits] != '.' ||
	    memcmp(name + n - 1 - digits - last, RT_ARENA_LAST_SUFFIX, last) != 0)
		return n;
	return n - 1 - digits;
}

/*
 * The directory of default arenas for the calling user: RINGTRACE_DIR, or
 * RT_ARENA_BASE/ringtrace-EUID.  0, or -ENAMETOOLONG.  No allocation: the
 * library calls it while starting.
 */
int rt_arena_dir(char *out, size_t size);
/* The same with RINGTRACE_DIR's value given (NULL: not set), as the library reads it. */
int rt_arena_dir_from(const char *env, char *out, size_t size);

/*
 * Whether dir is fit to hold arenas: a directory, not a symbolic link,
 * owned by the effective user, with no access for group or others.  With
 * create, a missing dir is made first (mode 0700; its parent must exist).
 * 0, or -errno with why (naming dir) filled in.
 */
int rt_arena_dir_check(const char *dir, int create, char *why, size_t why_size);

#endif /* RT_COMMON_ARENA_NAMES_H */
