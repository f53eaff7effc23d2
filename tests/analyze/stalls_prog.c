/*
 * stalls_prog.c - threads that go quiet for known times, for the stalls
 * tests: linked with ringtrace, run under `ringtrace record` or with a
 * flight arena.
 *
 *     stalls_prog sleeps   the thread "sleeper" is quiet for 50 ms, 200 ms
 *                          and 500 ms between events tagged "before N ms"
 *                          and "after N ms"; the thread "blocked" blocks on
 *                          a pipe after its event "blocking" until the
 *                          process exits
 *     stalls_prog burst    the thread "burst" writes bursts of events with
 *                          30 ms pauses between them, more than a small
 *                          ring holds: some are lost
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringtrace.h>

static sem_t blocking;
static int never[2];

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&t, &t) != 0)
		;
}

/* Some events close together: short gaps around the long ones. */
static void chatter(int n)
{
	for (int i = 0; i < n; i++)
		RT_TRACE("chatter", i);
}

static void *sleeper(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	chatter(10);
	RT_TRACE("before 50 ms");
	sleep_ms(50);
	RT_TRACE("after 50 ms");
	chatter(10);
	RT_TRACE("before 200 ms");
	sleep_ms(200);
	RT_TRACE("after 200 ms");
	chatter(10);
	RT_TRACE("before 500 ms");
	sleep_ms(500);
	RT_TRACE("after 500 ms");
	chatter(10);
	return NULL;
}

static void *blocked(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "blocked");
	char c;
	RT_TRACE("blocking");
	sem_post(&blocking);
	/* nobody writes: the thread waits here until the process exits */
	while (read(never[0], &c, 1) != 0)
		;
	RT_TRACE("never reached");
	return NULL;
}

static void *burst(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "burst");
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 3000; i++)
			RT_TRACE("burst", round, i);
		sleep_ms(30);
	}
	RT_TRACE("burst done");
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t, b;
	if (argc != 2) {
		fprintf(stderr, "usage: stalls_prog sleeps|burst\n");
		return 2;
	}
	RT_TRACE("main start");
	if (strcmp(argv[1], "burst") == 0) {
		if (pthread_create(&t, NULL, burst, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
		RT_TRACE("main done");
		return 0;
	}
	if (sem_init(&blocking, 0, 0) != 0 || pipe(never) != 0 ||
	    pthread_create(&b, NULL, blocked, NULL) != 0)
		return 1;
	while (sem_wait(&blocking) != 0)
		;
	RT_TRACE("starting the sleeper");
	RT_BEGIN("wait for sleeper");
	if (pthread_create(&t, NULL, sleeper, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	RT_END("wait for sleeper");
	RT_TRACE("main done");
	return 0; /* the blocked thread ends with the process */
}
