/*
 * input_dir.c - listing a directory's arenas and trace files.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "read/input_dir.h"
#include "read/trace_file.h"

static int compare_paths(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int rt_input_dir_list(const char *dir, unsigned kinds, char ***paths, size_t *count)
{
	*paths = NULL;
	*count = 0;
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	char **list = NULL;
	size_t n = 0, capacity = 0;
	int rc = 0;
	struct dirent *e;
	while (!rc && (e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		size_t size = strlen(dir) + strlen(e->d_name) + 2;
		char *path = malloc(size);
		if (!path) {
			rc = -ENOMEM;
			break;
		}
		snprintf(path, size, "%s/%s", dir, e->d_name);
		struct stat st;
		int kind;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
		    (kind = rt_input_kind_of(path)) <= RT_INPUT_UNKNOWN ||
		    !(kinds & (1u << kind))) {
			free(path);
			continue;
		}
		if (n == capacity) {
			size_t grown_capacity = capacity ? 2 * capacity : 16;
			char **grown = realloc(list, grown_capacity * sizeof(*grown));
			if (!grown) {
				free(path);
				rc = -ENOMEM;
				break;
			}
			list = grown;
			capacity = grown_capacity;
		}
		list[n++] = path;
	}
	closedir(d);
	if (rc) {
		rt_input_dir_free(list, n);
		return rc;
	}
	if (n > 1)
		qsort(list, n, sizeof(*list), compare_paths);
	*paths = list;
	*count = n;
	return 0;
}

void rt_input_dir_free(char **paths, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(paths[i]);
	free(paths);
}
