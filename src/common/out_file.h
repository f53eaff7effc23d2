/*
 * out_file.h - the files the tool writes (trace files, pages, journals)
 * are made new, never found.
 *
 * An output path may name a file someone else made first, in a directory
 * several users share (/tmp), so that they could read or change what is
 * written into it.  So an existing file is never opened for writing unless
 * it is the caller's:
 *   - nothing at the path: the file is created there, O_CREAT | O_EXCL,
 *     mode 0666 less the caller's umask;
 *   - a regular file of the caller's that the caller may replace (the
 *     replaceable callback, given it open for reading; NULL: any): a new
 *     file is made beside it in the same way and renamed over it, so that
 *     a descriptor someone holds on the old file, or another link to it,
 *     never sees the new contents;
 *   - a file of another user (whatever it holds), a symbolic link (never
 *     followed), a directory, a regular file the callback refuses: refused,
 *     with one line in message naming the path;
 *   - anything else: a character device (only root makes those; /dev/null)
 *     or a FIFO or socket of the caller's is opened for writing as it is.
 */
#ifndef RT_COMMON_OUT_FILE_H
#define RT_COMMON_OUT_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/*
 * Whether the caller's regular file at a path, open for reading as fd
 * (st its status), may be replaced: 1 yes, 0 no (and a reason for "PATH
 * exists and ...: not overwritten" in why, e.g. "is not a trace file").
 */
typedef int (*rt_out_file_replaceable_fn)(int fd, const struct stat *st, char *why,
					  size_t why_size);

/*
 * Open path for writing as a new file (or a device or FIFO: *regular 0),
 * O_RDWR | O_CLOEXEC where it can be, else O_WRONLY.  The descriptor, or
 * -errno with one line in message: -EPERM for a file of another user,
 * -EEXIST for a file the callback refused, -ELOOP for a symbolic link.
 */
int rt_out_file_open(const char *path, rt_out_file_replaceable_fn replaceable, int *regular,
		     char *message, size_t message_size);

#endif
