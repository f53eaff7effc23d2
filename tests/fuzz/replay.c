/*
 * replay.c - a fuzz target without libFuzzer: every input file named on
 * the command line, and every file in every directory named (in name
 * order, not recursively), goes through LLVMFuzzerTestOneInput once.
 * `make test` replays the checked-in corpus this way, in the plain build
 * and under ASan+UBSan, so that a crash once found stays fixed.
 *
 *   replay_arena DIR|FILE...
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/* The file in a buffer of exactly its size, as libFuzzer hands an input over. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
	unsigned char *data = size >= 0 ? malloc(size ? (size_t)size : 1) : NULL;
	int ok =
	    data && fseek(f, 0, SEEK_SET) == 0 && fread(data, 1, (size_t)size, f) == (size_t)size;
	fclose(f);
	if (!ok) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		free(data);
		return -1;
	}
	LLVMFuzzerTestOneInput(data, (size_t)size);
	free(data);
	return 0;
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file in dir, in name order; returns how many, or -1. */
static int replay_directory(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t count = 0, capacity = 0;
	struct dirent *entry;
	int status = 0;
	while ((entry = readdir(d)) != NULL) {
		if (entry->d_name[0] == '.')
			continue;
		if (count == capacity) {
			capacity = capacity ? capacity * 2 : 64;
			char **bigger = realloc(names, capacity * sizeof(*names));
			if (!bigger) {
				status = -1;
				break;
			}
			names = bigger;
		}
		size_t length = strlen(dir) + strlen(entry->d_name) + 2;
		if (!(names[count] = malloc(length))) {
			status = -1;
			break;
		}
		snprintf(names[count++], length, "%s/%s", dir, entry->d_name);
	}
	closedir(d);
	if (count)
		qsort(names, count, sizeof(*names), compare_names);
	int replayed = 0;
	for (size_t i = 0; i < count; i++) {
		struct stat st;
		if (status == 0 && stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			if (replay_file(names[i]) != 0)
				status = -1;
			else
				replayed++;
		}
		free(names[i]);
	}
	free(names);
	return status ? status : replayed;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
		return 2;
	}
	int inputs = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int n;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			n = replay_directory(argv[i]);
		else
			n = replay_file(argv[i]) == 0 ? 1 : -1;
		if (n < 0)
			return 1;
		inputs += n;
	}
	if (inputs == 0) {
		fprintf(stderr, "replay: no inputs\n");
		return 1;
	}
	printf("replay: %d inputs, no crash\n", inputs);
	return 0;
}
