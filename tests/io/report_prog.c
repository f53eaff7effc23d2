/*
 * report_prog.c - a fixed sequence of file calls in DIR, for report_io.sh,
 * which knows exactly what `ringtrace report --io` must count for each file.
 *
 *     report_prog DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char path[4096];

static const char *in(const char *dir, const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	char block[100], buf[128];
	memset(block, 'a', sizeof(block));
	/* a: three writes of 100 bytes, then four reads (128, 128, 44, 0) */
	int fd = open(in(argv[1], "a"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	for (int i = 0; i < 3; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return 1;
	close(fd);
	fd = open(in(argv[1], "a"), O_RDONLY);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	/* c: written through a duplicate, both closed */
	fd = open(in(argv[1], "c"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int copy = dup(fd);
	if (write(copy, "0123456789", 10) != 10)
		return 1;
	close(copy);
	close(fd);
	/* d: does not exist */
	if (open(in(argv[1], "d"), O_RDONLY) >= 0)
		return 1;
	/* e: a stream */
	FILE *f = fopen(in(argv[1], "e"), "w");
	fprintf(f, "hello %d\n", 42);
	fclose(f);
	/* g: opened once, then made a stream with fdopen: one open, not two */
	fd = open(in(argv[1], "g"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	f = fdopen(fd, "w");
	if (!f)
		return 1;
	fprintf(f, "fd %d\n", 7);
	fclose(f);
	/* a pipe the interposer never saw made */
	int p[2];
	if (pipe(p) != 0 || write(p[1], "pipe!", 5) != 5 || read(p[0], buf, 5) != 5)
		return 1;
	return 0;
}
