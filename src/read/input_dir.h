/*
 * input_dir.h - the inputs a directory holds: its regular files whose
 * first bytes say they are arenas or trace files, in name order (the files
 * of a rotated set sort in time order).  Subdirectories and dot files are
 * not looked into.
 */
#ifndef RT_READ_INPUT_DIR_H
#define RT_READ_INPUT_DIR_H

#include <stddef.h>

/* Which kinds to list: bits 1 << enum rt_input_kind. */
#define RT_INPUT_DIR_ARENAS (1u << 1)
#define RT_INPUT_DIR_TRACES (1u << 2)

/*
 * The paths ("dir/name", malloc'd, in a malloc'd array) of the files of
 * the kinds asked.  0 with *paths and *count (possibly none), or -errno.
 */
int rt_input_dir_list(const char *dir, unsigned kinds, char ***paths, size_t *count);

/* Free what rt_input_dir_list gave. */
void rt_input_dir_free(char **paths, size_t count);

#endif /* RT_READ_INPUT_DIR_H */
