/*
 * record_preload.h - the recording library `ringtrace record` preloads into
 * PROGRAM, so that a program compiled with -finstrument-functions but not
 * linked with ringtrace records its calls: its __cyg_profile_func_* calls
 * then bind to the library's hooks instead of libc's empty ones.  A program
 * linked with ringtrace finds the library loaded already (same soname) and
 * uses that one copy.
 */
#ifndef RT_CMD_RECORD_PRELOAD_H
#define RT_CMD_RECORD_PRELOAD_H

#include <stddef.h>

#define RT_PRELOAD_LIBRARY "libringtrace.so.0"
#define RT_PRELOAD_VARIABLE "RINGTRACE_PRELOAD"
/* `record --io`: the I/O interposer, which brings the recording library with it */
#define RT_PRELOAD_IO_LIBRARY "libringtrace_io.so.0"
#define RT_PRELOAD_IO_VARIABLE "RINGTRACE_PRELOAD_IO"

/*
 * The library to preload (file name library), into out; the first that
 * exists of:
 *   the environment variable named variable (0 or empty: preload nothing)
 *   the tool's own directory (a build tree: DIR/ringtrace, DIR/library)
 *   the tool's DIR/../lib (an installed tree: bin/ringtrace, lib/library;
 *   the relative path from the bin to the lib directory it was configured with)
 * Returns 1 found, 0 nothing to preload: why then says why when the user
 * should know (a RINGTRACE_PRELOAD that does not exist, no library found),
 * else it is empty.  A tool built with a sanitizer looks only at
 * RINGTRACE_PRELOAD: its library needs the sanitizer's runtime, which only
 * programs built the same way carry.
 */
int rt_record_preload_find(const char *library, const char *variable, char *out, size_t size,
			   char *why, size_t why_size);

/* Append library to LD_PRELOAD (in the child, before exec); 0 or -errno. */
int rt_record_preload_apply(const char *library);

#endif /* RT_CMD_RECORD_PRELOAD_H */
