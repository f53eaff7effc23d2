/*
 * together.c - threads whose first events come at the same moment, with no
 * event before them: one of them creates the arena, the others must wait
 * for it rather than lose what they trace meanwhile.
 *
 *   start_together THREADS EVENTS
 *
 * main starts THREADS threads and records nothing itself; they meet at a
 * barrier and each records EVENTS events (thread number, event number).
 * Prints "emitted N", the events recorded in all; start_together.sh holds
 * the arena or trace file to it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ringtrace.h"

#define MAX_THREADS 256

static pthread_barrier_t start_line;
static unsigned events;

static void *tracer(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	pthread_barrier_wait(&start_line);
	for (unsigned i = 0; i < events; i++)
		RT_TRACE("together", t, i);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: start_together THREADS EVENTS\n");
		return 2;
	}
	unsigned threads = (unsigned)strtoul(argv[1], NULL, 10);
	events = (unsigned)strtoul(argv[2], NULL, 10);
	if (threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "start_together: 1 to %d threads\n", MAX_THREADS);
		return 2;
	}
	pthread_t thread[MAX_THREADS];
	pthread_barrier_init(&start_line, NULL, threads);
	for (unsigned t = 0; t < threads; t++)
		if (pthread_create(&thread[t], NULL, tracer, (void *)(uintptr_t)t) != 0) {
			fprintf(stderr, "start_together: pthread_create failed\n");
			return 1;
		}
	for (unsigned t = 0; t < threads; t++)
		pthread_join(thread[t], NULL);
	printf("emitted %llu\n", (unsigned long long)threads * events);
	return 0;
}
