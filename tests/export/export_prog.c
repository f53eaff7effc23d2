/*
 * export_prog.c - a program with every kind of event, for the export
 * tests: built with -finstrument-functions and linked with ringtrace, run
 * under `ringtrace record --io`.
 *
 *     export_prog DIR
 *
 * Three named threads each make nested and recursive calls, trace events
 * with signed and unsigned arguments, and log messages (one with a string
 * that needs escaping); the main thread writes and reads a file in DIR.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ringtrace.h>

#define THREADS 3
#define ROUNDS 20

__attribute__((noinline)) static int leaf(int i)
{
	RT_TRACE("leaf", i, -i);
	return i * 2;
}

__attribute__((noinline)) static int recurse(int depth)
{
	if (depth == 0)
		return leaf(depth);
	return recurse(depth - 1) + 1;
}

__attribute__((noinline)) static int work(int i)
{
	int r = recurse(i % 4) + leaf(i);
	RT_LOG(RT_LOG_INFO, "round %d gave %d in \"%s\"", i, r, "quotes\tand tab");
	return r;
}

static void *worker(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "worker-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	int sum = 0;
	for (int i = 0; i < ROUNDS; i++)
		sum += work(i);
	RT_TRACE("worker done", (unsigned)sum);
	return NULL;
}

__attribute__((noinline)) static int file_calls(const char *dir)
{
	char path[4096], buf[64];
	snprintf(path, sizeof(path), "%s/data.txt", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "hello, export\n", 14) != 14 || close(fd) != 0)
		return 1;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 1;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	return close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	pthread_t t[THREADS];
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	int rc = file_calls(argv[1]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	RT_LOG(RT_LOG_WARN, "all %d threads done", THREADS);
	return rc;
}
