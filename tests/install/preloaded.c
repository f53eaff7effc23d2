/*
 * preloaded.c - a program built with -finstrument-functions and not linked
 * with ringtrace, as `ringtrace record` is meant to trace it: its calls reach
 * the recording library only if record preloads it.  It writes one byte to
 * the file argv[1] (an I/O event under `record --io`) and prints the path of
 * every ringtrace library mapped into it, from /proc/self/maps, so that the
 * caller sees which copy was preloaded.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static int preloaded_work(int x)
{
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	int sum = 0;
	for (int i = 0; i < 5; i++)
		sum += preloaded_work(i);
	if (argc > 1) {
		int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
		if (fd < 0 || write(fd, "x", 1) != 1 || close(fd) != 0) {
			perror(argv[1]);
			return 1;
		}
	}
	FILE *maps = fopen("/proc/self/maps", "r");
	if (!maps) {
		perror("/proc/self/maps");
		return 1;
	}
	char line[4096], last[4096] = "";
	while (fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');
		if (!path || !strstr(path, "/libringtrace") || strcmp(path, last) == 0)
			continue;
		snprintf(last, sizeof(last), "%s", path);
		fputs(path, stdout);
	}
	fclose(maps);
	return sum == 35 ? 0 : 1;
}
