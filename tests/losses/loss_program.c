/*
 * loss_program.c - a traced program whose events are lost in known numbers,
 * for tests/losses/losses.sh.  Every mode prints nothing on stdout but
 * "emitted N" (the events it traced, all of them, lost or not) at its end.
 *
 *   loss_program together THREADS EVENTS
 *       one event "start" in main, then THREADS threads that wait for each
 *       other, each trace EVENTS events "tick" (thread, i), and wait for each
 *       other again before they end: all hold their thread entry (and a ring,
 *       if they found one) at once, so with fewer rings than threads the
 *       threads that found none lose all their events, a known number.
 *   loss_program sites EVENTS
 *       300 sites with a 4 KiB tag each trace EVENTS events: the string
 *       area fills and the sites past it are refused, their events lost.
 *   loss_program stopped-exec LEFT EVENTS
 *       stop the parent (`ringtrace record`) with SIGSTOP; then trace EVENTS
 *       events "image" (LEFT, i) and exec itself with LEFT - 1 while LEFT > 0:
 *       a chain of LEFT + 1 images of one process that record cannot see.
 *       The last image prints "emitted N" (N for the whole chain) and lets
 *       the parent go on with SIGCONT.
 *   loss_program end exit CODE | end segv
 *       main traces, renames itself "renamed-main" and starts a thread that
 *       traces, renames itself "renamed-live" and stays alive; then main
 *       exits with CODE, or crashes with SIGSEGV (a store through a null
 *       pointer).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ringtrace.h>

static pthread_barrier_t barrier;

struct ticker {
	pthread_t thread;
	unsigned index;
	unsigned events;
};

static void *tick(void *arg)
{
	const struct ticker *t = arg;
	pthread_barrier_wait(&barrier);
	for (unsigned i = 0; i < t->events; i++)
		RT_TRACE("tick", t->index, i);
	pthread_barrier_wait(&barrier);
	return NULL;
}

static int together(unsigned threads, unsigned events)
{
	struct ticker *t = calloc(threads, sizeof(*t));
	if (!t || pthread_barrier_init(&barrier, NULL, threads) != 0)
		return 1;
	RT_TRACE("start", threads, events);
	for (unsigned i = 0; i < threads; i++) {
		t[i].index = i;
		t[i].events = events;
		if (pthread_create(&t[i].thread, NULL, tick, &t[i]) != 0)
			return 1;
	}
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i].thread, NULL);
	free(t);
	printf("emitted %llu\n", 1 + (unsigned long long)threads * events);
	return 0;
}

/* 4 KiB of tag: the library keeps at most 4096 bytes of a string */
#define X16 "xxxxxxxxxxxxxxxx"
#define X256 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16 X16
#define X4K X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256 X256
#define SITE(n) RT_TRACE(X4K, n, i)
#define SITES10(n)                                                                                 \
	SITE(n##0);                                                                                \
	SITE(n##1);                                                                                \
	SITE(n##2);                                                                                \
	SITE(n##3);                                                                                \
	SITE(n##4);                                                                                \
	SITE(n##5);                                                                                \
	SITE(n##6);                                                                                \
	SITE(n##7);                                                                                \
	SITE(n##8);                                                                                \
	SITE(n##9)

/* 300 sites of 4 KiB strings: more than the 1 MiB string area holds */
static unsigned long long many_sites(unsigned events)
{
	for (unsigned i = 0; i < events; i++) {
		SITES10(1);
		SITES10(2);
		SITES10(3);
		SITES10(4);
		SITES10(5);
		SITES10(6);
		SITES10(7);
		SITES10(8);
		SITES10(9);
		SITES10(10);
		SITES10(11);
		SITES10(12);
		SITES10(13);
		SITES10(14);
		SITES10(15);
		SITES10(16);
		SITES10(17);
		SITES10(18);
		SITES10(19);
		SITES10(20);
		SITES10(21);
		SITES10(22);
		SITES10(23);
		SITES10(24);
		SITES10(25);
		SITES10(26);
		SITES10(27);
		SITES10(28);
		SITES10(29);
		SITES10(30);
	}
	return 300ull * events;
}

/* Stop the parent (`ringtrace record`) and return once it is stopped (5 s at most). */
static void stop_parent(void)
{
	char path[64], stat[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)getppid());
	kill(getppid(), SIGSTOP);
	for (int tries = 0; tries < 5000; tries++) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(stat, 1, sizeof(stat) - 1, f) : 0;
		if (f)
			fclose(f);
		stat[n] = 0;
		const char *state = strrchr(stat, ')');
		if (state && state[1] == ' ' && state[2] == 'T')
			return;
		usleep(1000);
	}
}

static int chain(const char *self, unsigned left, unsigned events, unsigned long long before,
		 int stopped)
{
	if (stopped == 1) {
		stop_parent();
		stopped = 2;
	}
	for (unsigned i = 0; i < events; i++)
		RT_TRACE("image", left, i);
	unsigned long long emitted = before + events;
	if (left == 0) {
		printf("emitted %llu\n", emitted);
		fflush(stdout);
		if (stopped)
			kill(getppid(), SIGCONT);
		return 0;
	}
	char l[32], e[32], b[32], s[8];
	snprintf(l, sizeof(l), "%u", left - 1);
	snprintf(e, sizeof(e), "%u", events);
	snprintf(b, sizeof(b), "%llu", emitted);
	snprintf(s, sizeof(s), "%d", stopped);
	execl(self, self, "exec", l, e, b, s, (char *)NULL);
	return 127;
}

static volatile int live_ready;

static void *live(void *arg)
{
	(void)arg;
	/* named after its first event: its entry took the name it had then */
	RT_TRACE("live");
	pthread_setname_np(pthread_self(), "renamed-live");
	__atomic_store_n(&live_ready, 1, __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

static int end(const char *how, int code)
{
	RT_TRACE("main");
	pthread_setname_np(pthread_self(), "renamed-main");
	pthread_t t;
	if (pthread_create(&t, NULL, live, NULL) != 0)
		return 1;
	while (!__atomic_load_n(&live_ready, __ATOMIC_ACQUIRE))
		usleep(1000);
	printf("emitted 2\n");
	fflush(stdout);
	if (strcmp(how, "segv") == 0)
		*(volatile int *)0 = 1;
	exit(code);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "together") == 0)
		return together((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], "sites") == 0) {
		unsigned long long emitted = many_sites((unsigned)atoi(argv[2]));
		printf("emitted %llu\n", emitted);
		return 0;
	}
	if (argc == 4 && strcmp(argv[1], "stopped-exec") == 0)
		return chain(argv[0], (unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]), 0, 1);
	if (argc == 6 && strcmp(argv[1], "exec") == 0)
		return chain(argv[0], (unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]),
			     strtoull(argv[4], NULL, 10), atoi(argv[5]));
	if (argc >= 3 && strcmp(argv[1], "end") == 0)
		return end(argv[2], argc >= 4 ? atoi(argv[3]) : 0);
	fprintf(stderr, "usage: loss_program together|sites|stopped-exec|end ...\n");
	return 2;
}
