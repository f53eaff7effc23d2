/*
 * victim.c - a traced program that writes down what it traced, so that a
 * test can damage its arena and compare what `ringtrace dump` still shows
 * with what was recorded (tests/damaged/damaged.c).
 *
 *   victim LOG      (with RINGTRACE_ARENA set, RINGTRACE_RINGS=4)
 *
 * The main thread traces, then threads 1-3 trace at once, each through every
 * argument shape (thread 3 enough to wrap its ring); thread 4 starts after
 * thread 1 has exited and takes its ring over.  Every event's first argument
 * is unique (thread << 24 | i).  At exit each event is written to LOG as
 * "tid tag arg...", the arguments in decimal as `ringtrace dump --json`
 * prints them; then the program exits cleanly.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ringtrace.h>

#define THREADS 5 /* main and four more */
#define MAX_EVENTS 4000

struct event {
	const char *tag;
	unsigned nargs;
	uint64_t args[6];
};

struct thread_log {
	int index;
	int events;
	int32_t tid;
	int count;
	struct event *log;
};

static struct thread_log logs[THREADS];

/* One event of shape i % 6 (1 to 6 arguments), traced and written down. */
static void trace_one(struct thread_log *t, int i)
{
	uint32_t a = (uint32_t)t->index << 24 | (uint32_t)i;
	uint32_t b = a ^ 0x5a5a5a5au, c = (uint32_t)i * 7u, d = 0xffffffffu - (uint32_t)i;
	uint64_t e = (uint64_t)a << 32 | 0x1234u, f = ~(uint64_t)i;
	struct event *ev = &t->log[t->count++];
	switch (i % 6) {
	case 0:
		RT_TRACE("one", a);
		*ev = (struct event){"one", 1, {a}};
		break;
	case 1:
		RT_TRACE("two", a, b);
		*ev = (struct event){"two", 2, {a, b}};
		break;
	case 2:
		RT_TRACE("three", a, b, c);
		*ev = (struct event){"three", 3, {a, b, c}};
		break;
	case 3:
		RT_TRACE("four", a, b, c, d);
		*ev = (struct event){"four", 4, {a, b, c, d}};
		break;
	case 4:
		RT_TRACE("five", a, b, c, d, e);
		*ev = (struct event){"five", 5, {a, b, c, d, e}};
		break;
	default:
		RT_TRACE("six", a, b, c, d, e, f);
		*ev = (struct event){"six", 6, {a, b, c, d, e, f}};
		break;
	}
}

static void *run(void *arg)
{
	struct thread_log *t = arg;
	char name[16];
	snprintf(name, sizeof(name), "victim-%d", t->index);
	ringtrace_set_thread_name(name);
	t->tid = (int32_t)syscall(SYS_gettid);
	for (int i = 0; i < t->events; i++)
		trace_one(t, i);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: victim LOG\n");
		return 2;
	}
	static const int events[THREADS] = {50, 600, 700, 3000, 400};
	for (int i = 0; i < THREADS; i++) {
		logs[i].index = i;
		logs[i].events = events[i];
		logs[i].log = calloc(MAX_EVENTS, sizeof(struct event));
		if (!logs[i].log)
			return 1;
	}
	run(&logs[0]);
	pthread_t threads[THREADS];
	for (int i = 1; i <= 3; i++)
		pthread_create(&threads[i], NULL, run, &logs[i]);
	pthread_join(threads[1], NULL);
	/* thread 1 has exited: its ring is free for thread 4 */
	pthread_create(&threads[4], NULL, run, &logs[4]);
	for (int i = 2; i <= 4; i++)
		pthread_join(threads[i], NULL);

	FILE *f = fopen(argv[1], "w");
	if (!f)
		return 1;
	for (int i = 0; i < THREADS; i++) {
		for (int k = 0; k < logs[i].count; k++) {
			const struct event *ev = &logs[i].log[k];
			fprintf(f, "%d %s", (int)logs[i].tid, ev->tag);
			for (unsigned a = 0; a < ev->nargs; a++)
				fprintf(f, " %llu", (unsigned long long)ev->args[a]);
			fputc('\n', f);
		}
	}
	return fclose(f) == 0 ? 0 : 1;
}
