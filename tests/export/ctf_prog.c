/*
 * ctf_prog.c - a program for the CTF export test: three threads, each
 * recording trace points (signed and unsigned arguments of 32 and 64 bits,
 * negative ones and ones past INT64_MAX, and pointers), log messages with
 * strings, nested and recursive function calls (built with
 * -finstrument-functions) and file I/O in DIR.
 *
 *   ctf_prog DIR
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ringtrace.h>

static const char *dir;

static int depth_sum(int n)
{
	RT_TRACE("depth", n, -n, -((long long)n << 40));
	return n <= 0 ? 0 : n + depth_sum(n - 1);
}

static void file_round(int id, int round)
{
	char path[4096], buf[64];
	snprintf(path, sizeof path, "%s/t%d", dir, id);
	int fd = open(path, O_CREAT | O_WRONLY | O_APPEND, 0644);
	if (fd < 0)
		return;
	int n = snprintf(buf, sizeof buf, "round %d\n", round);
	if (write(fd, buf, (size_t)n) != n)
		RT_LOG(RT_LOG_ERROR, "short write to %s", path);
	close(fd);
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	char name[16];
	snprintf(name, sizeof name, "worker-%d", id);
	ringtrace_set_thread_name(name);
	for (int round = 0; round < 40; round++) {
		/* unsigned values past INT32_MAX and INT64_MAX, negative signed ones */
		RT_TRACE("round", id, round, (unsigned)round * 3000000000u, -round,
			 0xfffffffffffffff0ull - (unsigned long long)round, arg);
		RT_LOG(RT_LOG_INFO, "worker %s round %d sum %d", name, round, depth_sum(round % 6));
		if (round % 4 == 0)
			RT_LOG(RT_LOG_WARN, "a quote \" and a tab\t in round %d", round);
		file_round(id, round);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ctf_prog DIR\n");
		return 2;
	}
	dir = argv[1];
	pthread_t t[3];
	for (long i = 0; i < 3; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	RT_LOG(RT_LOG_NOTICE, "done");
	return 0;
}
