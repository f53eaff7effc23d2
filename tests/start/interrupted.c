/*
 * interrupted.c - the process's first event, the one that creates the
 * arena, interrupted: tracing must end up on (or off with a line saying
 * why), never stuck half-started.
 *
 *   start_interrupted cancel|signal|longjmp
 *
 * cancel   a thread with a cancellation pending makes the first event: the
 *          cancellation must not act inside it (at the open of the arena),
 *          only at the thread's next cancellation point.
 * signal   another thread sends SIGUSR1 to the one making the first event,
 *          over and over; the handler records an event each time.
 * longjmp  the same, and the handler's first run longjmps out of whatever
 *          it interrupted.
 *
 * Then WORKERS threads record EVENTS events each.  Prints "emitted N" (every
 * event recorded, the handler's included; with longjmp, the events of the
 * workers only: the event the handler jumped out of is abandoned by the
 * program) and "handler N".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ringtrace.h"

#define WORKERS 4
#define EVENTS 1000

static int mode_longjmp;
static pthread_t first;
static int ready, done, jumped;
static unsigned long handled;
static sigjmp_buf back;

static void on_usr1(int sig)
{
	(void)sig;
	unsigned long n = __atomic_add_fetch(&handled, 1, __ATOMIC_RELAXED);
	RT_TRACE("handler", (uint32_t)n);
	if (mode_longjmp && !jumped) {
		jumped = 1;
		siglongjmp(back, 1);
	}
}

static void *cancelled(void *arg)
{
	(void)arg;
	pthread_cancel(pthread_self()); /* pending: acts at the next cancellation point */
	RT_TRACE("first", 1);
	pthread_testcancel();
	return NULL;
}

static void *signalled(void *arg)
{
	(void)arg;
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	if (sigsetjmp(back, 1) == 0)
		RT_TRACE("first", 1);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *sender(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		sched_yield();
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		pthread_kill(first, SIGUSR1);
	return NULL;
}

static void *worker(void *arg)
{
	unsigned w = (unsigned)(uintptr_t)arg;
	for (unsigned i = 0; i < EVENTS; i++)
		RT_TRACE("worker", w, i);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc == 2 ? argv[1] : "";
	unsigned long emitted = 0;
	if (strcmp(mode, "cancel") == 0) {
		void *result = NULL;
		pthread_create(&first, NULL, cancelled, NULL);
		pthread_join(first, &result);
		if (result != PTHREAD_CANCELED) {
			fprintf(stderr, "start_interrupted: the thread was not cancelled\n");
			return 1;
		}
		emitted = 1;
	} else if (strcmp(mode, "signal") == 0 || strcmp(mode, "longjmp") == 0) {
		mode_longjmp = mode[0] == 'l';
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr1;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		pthread_t send;
		pthread_create(&first, NULL, signalled, NULL);
		pthread_create(&send, NULL, sender, NULL);
		pthread_join(first, NULL);
		pthread_join(send, NULL);
		/* no signal is pending any more: the thread that took them has ended */
		if (!mode_longjmp)
			emitted = 1 + __atomic_load_n(&handled, __ATOMIC_RELAXED);
	} else {
		fprintf(stderr, "usage: start_interrupted cancel|signal|longjmp\n");
		return 2;
	}
	pthread_t workers[WORKERS];
	for (unsigned w = 0; w < WORKERS; w++)
		pthread_create(&workers[w], NULL, worker, (void *)(uintptr_t)w);
	for (unsigned w = 0; w < WORKERS; w++)
		pthread_join(workers[w], NULL);
	emitted += WORKERS * EVENTS;
	printf("emitted %lu\nhandler %lu\n", emitted, __atomic_load_n(&handled, __ATOMIC_RELAXED));
	return 0;
}
