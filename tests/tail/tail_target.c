/*
 * tail_target.c - a program that records in phases, each when told, for
 * tail.sh to follow with `ringtrace tail`.
 *
 *     tail_target
 *
 * Records "start" and prints "arena PATH", then reads commands on stdin,
 * one a line, and prints "done COMMAND" after each:
 *   pre        "pre" 0..4 and "pre log 0..4" (info); starts the thread
 *              "worker", which records "worker pre" 0..2
 *   post       "post" 0..4 and "post log 0..4"; the worker records
 *              "worker post" 0..2 (new sites, after tail attached)
 *   late       a new thread "late" records "late" 0..2 and ends
 *   threads N  N threads, one after the other: thread I, named "tI",
 *              records "thread" (I, 0..2) and ends
 *   marker K   "marker" K
 *   flood N    "flood" 0..N-1 as fast as it can; prints "emitted N"
 *   quit       ends the worker and the program
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringtrace.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int worker_phase; /* 1 pre, 2 post, 3 quit: what the worker is asked to do */
static int worker_done;	 /* the last phase it finished */

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "worker");
	for (int phase = 0; phase != 3;) {
		pthread_mutex_lock(&lock);
		while (worker_phase == worker_done)
			pthread_cond_wait(&changed, &lock);
		phase = worker_phase;
		pthread_mutex_unlock(&lock);
		for (int i = 0; i < 3 && phase == 1; i++)
			RT_TRACE("worker pre", i);
		for (int i = 0; i < 3 && phase == 2; i++)
			RT_TRACE("worker post", i);
		pthread_mutex_lock(&lock);
		worker_done = phase;
		pthread_cond_broadcast(&changed);
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

/* Ask the worker for a phase and wait until it did it. */
static void worker_run(int phase)
{
	pthread_mutex_lock(&lock);
	worker_phase = phase;
	pthread_cond_broadcast(&changed);
	while (worker_done != phase)
		pthread_cond_wait(&changed, &lock);
	pthread_mutex_unlock(&lock);
}

/* "threads N": thread i, named "tI", records "thread" (i, 0..2) and ends. */
static void *numbered(void *arg)
{
	char name[16];
	int i = (int)(intptr_t)arg;
	snprintf(name, sizeof(name), "t%d", i);
	pthread_setname_np(pthread_self(), name);
	for (int k = 0; k < 3; k++)
		RT_TRACE("thread", i, k);
	return NULL;
}

static void *late(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "late");
	for (int i = 0; i < 3; i++)
		RT_TRACE("late", i);
	return NULL;
}

int main(void)
{
	char line[64];
	pthread_t w, l;
	int have_worker = 0;
	RT_TRACE("start");
	printf("arena %s\n", ringtrace_arena_path());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line, "pre") == 0) {
			for (int i = 0; i < 5; i++) {
				RT_TRACE("pre", i);
				RT_LOG(RT_LOG_INFO, "pre log %d", i);
			}
			if (pthread_create(&w, NULL, worker, NULL) != 0)
				return 1;
			have_worker = 1;
			worker_run(1);
		} else if (strcmp(line, "post") == 0 && have_worker) {
			for (int i = 0; i < 5; i++) {
				RT_TRACE("post", i);
				RT_LOG(RT_LOG_INFO, "post log %d", i);
			}
			worker_run(2);
		} else if (strcmp(line, "late") == 0) {
			if (pthread_create(&l, NULL, late, NULL) != 0 || pthread_join(l, NULL) != 0)
				return 1;
		} else if (strncmp(line, "threads ", 8) == 0) {
			/* one after the other: with few rings, each takes the last one's over */
			for (int i = 0, n = atoi(line + 8); i < n; i++)
				if (pthread_create(&l, NULL, numbered, (void *)(intptr_t)i) != 0 ||
				    pthread_join(l, NULL) != 0)
					return 1;
		} else if (strncmp(line, "marker ", 7) == 0) {
			RT_TRACE("marker", atoi(line + 7));
		} else if (strncmp(line, "flood ", 6) == 0) {
			int n = atoi(line + 6), i;
			for (i = 0; i < n; i++)
				RT_TRACE("flood", i);
			printf("emitted %d\n", i);
		} else if (strcmp(line, "quit") == 0) {
			break;
		} else {
			fprintf(stderr, "tail_target: unknown command '%s'\n", line);
			return 2;
		}
		printf("done %s\n", line);
		fflush(stdout);
	}
	if (have_worker) {
		worker_run(3);
		pthread_join(w, NULL);
	}
	return 0;
}
