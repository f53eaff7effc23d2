/*
 * shrink_target.c - a program that fills a large arena, for shrink.sh to
 * truncate while the tool reads it.
 *
 *     shrink_target THREADS EVENTS
 *
 * THREADS threads each record EVENTS events, every fourth one an RT_LOG
 * message, and end; then it prints "arena PATH", "pid PID" and "filled" and
 * waits for stdin to close (the arena untouched until then: truncating it
 * cannot hurt the program), and exits 0.  Its exit writes into the arena
 * again: a cut before it ends can stop the program with SIGBUS.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <ringtrace.h>

static long events;

static void *fill(void *arg)
{
	int thread = (int)(intptr_t)arg;
	for (long i = 0; i < events; i++) {
		if (i % 4 == 0)
			RT_LOG(RT_LOG_INFO, "thread %d message %ld", thread, i);
		else
			RT_TRACE("fill", thread, i);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: shrink_target THREADS EVENTS\n");
		return 2;
	}
	int threads = atoi(argv[1]);
	events = atol(argv[2]);
	pthread_t t[64];
	if (threads < 1 || threads > 64)
		return 2;
	for (int i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, fill, (void *)(intptr_t)i) != 0)
			return 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	printf("arena %s\npid %d\nfilled\n", ringtrace_arena_path(), (int)getpid());
	fflush(stdout);
	while (getchar() != EOF)
		;
	return 0;
}
