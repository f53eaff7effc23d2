/*
 * export_prog.c - a little of everything an export shows, for perfetto.sh:
 * nested instrumented calls (built with -finstrument-functions), trace
 * events with signed and unsigned arguments, log messages and file I/O,
 * on the main thread and on a second one.
 *
 *     export_prog DIR
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ringtrace.h>

static const char *dir;

__attribute__((noinline)) static int leaf(int i)
{
	RT_TRACE("leaf", i, -i);
	return i * 2;
}

__attribute__((noinline)) static int middle(int i)
{
	return leaf(i) + leaf(i + 1);
}

__attribute__((noinline)) static int files(const char *name)
{
	char path[4096], buf[64];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	int ok = write(fd, "0123456789", 10) == 10;
	close(fd);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ok = ok && read(fd, buf, sizeof(buf)) == 10;
	close(fd);
	return ok ? 0 : -1;
}

__attribute__((noinline)) static int work(const char *name)
{
	int sum = 0;
	for (int i = 0; i < 3; i++) {
		sum += middle(i);
		RT_LOG(RT_INFO, "round %d of %s", i, name);
	}
	RT_LOG(RT_WARN, "done");
	return files(name) < 0 ? -1 : sum;
}

static void *second(void *arg)
{
	return work("second") < 0 ? arg : NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	dir = argv[1];
	pthread_t t;
	if (pthread_create(&t, NULL, second, (void *)1))
		return 1;
	void *failed;
	pthread_join(t, &failed);
	return work("main") < 0 || failed ? 1 : 0;
}
