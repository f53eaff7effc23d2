/*
 * churn.c - a process that starts and ends far more threads than the thread
 * table holds, and the check of what `ringtrace dump --json` shows of it.
 *
 *   thread_churn run SEQUENTIAL BURSTS BURST EVENTS MANIFEST
 *	Starts and joins SEQUENTIAL threads one after another, then BURSTS
 *	times BURST threads at once.  Thread number n names itself "c%05u"
 *	and records EVENTS events RT_TRACE("churn", n, i, tid).  MANIFEST
 *	gets one line "n tid" per thread.
 *
 *   thread_churn check MANIFEST EVENTS stream|flight < DUMP_JSON
 *	Every churn event shown is the thread's own: the dump's tid and
 *	thread name are those of the thread that recorded it (its arguments
 *	say which), and no event is shown twice.  Events shown plus events
 *	counted lost equal the events recorded, exactly.  stream: every
 *	thread shows all its events, none is lost, and every thread of the
 *	manifest appears with its own tid and name.
 *
 * Prints what it saw and "N passed, M failed"; exits non-zero on a failure.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ringtrace.h>

#include "../lib/check.h"
#include "../stress/dump_json.h"

#define MAX_THREADS 100000u

struct churner {
	pthread_t thread;
	uint32_t number;
	uint32_t events;
	pid_t tid;
};

static void *churn(void *arg)
{
	struct churner *c = arg;
	char name[16];
	snprintf(name, sizeof(name), "c%05u", c->number);
	ringtrace_set_thread_name(name);
	c->tid = (pid_t)syscall(SYS_gettid);
	for (uint32_t i = 0; i < c->events; i++)
		RT_TRACE("churn", c->number, i, (uint32_t)c->tid);
	return NULL;
}

static int run(uint32_t sequential, uint32_t bursts, uint32_t burst, uint32_t events,
	       const char *manifest)
{
	uint32_t total = sequential + bursts * burst;
	if (total > MAX_THREADS)
		return 2;
	struct churner *c = calloc(total, sizeof(*c));
	if (!c)
		return 2;
	for (uint32_t n = 0; n < total; n++) {
		c[n].number = n;
		c[n].events = events;
	}
	for (uint32_t n = 0; n < sequential; n++) {
		if (pthread_create(&c[n].thread, NULL, churn, &c[n]) != 0)
			return 2;
		pthread_join(c[n].thread, NULL);
	}
	for (uint32_t b = 0; b < bursts; b++) {
		uint32_t first = sequential + b * burst;
		for (uint32_t n = first; n < first + burst; n++)
			if (pthread_create(&c[n].thread, NULL, churn, &c[n]) != 0)
				return 2;
		for (uint32_t n = first; n < first + burst; n++)
			pthread_join(c[n].thread, NULL);
	}
	FILE *f = fopen(manifest, "w");
	if (!f)
		return 2;
	for (uint32_t n = 0; n < total; n++)
		fprintf(f, "%u %d\n", n, (int)c[n].tid);
	fclose(f);
	free(c);
	return 0;
}

struct seen {
	pid_t tid; /* from the manifest */
	uint32_t shown;
	uint8_t *events; /* one flag per event number */
};

static int check(const char *manifest, uint32_t events, int stream)
{
	static struct seen seen[MAX_THREADS];
	uint32_t total = 0;
	FILE *f = fopen(manifest, "r");
	if (!f)
		return 2;
	unsigned n;
	int tid;
	while (fscanf(f, "%u %d", &n, &tid) == 2 && n < MAX_THREADS) {
		seen[n].tid = tid;
		seen[n].events = calloc(events, 1);
		if (n + 1 > total)
			total = n + 1;
	}
	fclose(f);
	uint64_t shown = 0, lost = 0, lines = 0;
	char text[4096], error[256];
	while (fgets(text, sizeof(text), stdin)) {
		text[strcspn(text, "\n")] = 0;
		struct dump_line l;
		lines++;
		if (!CHECK(dump_json_parse(text, &l, error, sizeof(error)) == 0)) {
			fprintf(stderr, "line %llu: %s\n", (unsigned long long)lines, error);
			continue;
		}
		if (strcmp(l.kind, "lost") == 0) {
			lost += l.count;
			continue;
		}
		if (strcmp(l.kind, "trace") != 0 || strcmp(l.tag, "churn") != 0)
			continue;
		if (!CHECK(l.nargs == 3))
			continue;
		uint64_t number = l.args[0].bits, i = l.args[1].bits, arg_tid = l.args[2].bits;
		if (!CHECK(number < total && i < events && seen[number].events))
			continue;
		struct seen *s = &seen[number];
		char name[16];
		snprintf(name, sizeof(name), "c%05u", (unsigned)number);
		/* the event is shown as its own thread's, under its own name */
		CHECK_EQ(arg_tid, (uint64_t)s->tid);
		CHECK_EQ(l.tid, (int64_t)s->tid);
		CHECK_STR(l.thread, name);
		CHECK(!s->events[i]); /* never shown twice */
		s->events[i] = 1;
		s->shown++;
		shown++;
	}
	uint32_t whole = 0, present = 0;
	for (uint32_t k = 0; k < total; k++) {
		whole += seen[k].shown == events;
		present += seen[k].shown > 0;
		if (stream)
			CHECK_EQ(seen[k].shown, events);
		free(seen[k].events);
	}
	CHECK_EQ(shown + lost, (uint64_t)total * events);
	if (stream)
		CHECK_EQ(lost, 0);
	printf("%u threads: %u shown whole, %u in part or whole; %llu events shown, %llu lost\n",
	       total, whole, present, (unsigned long long)shown, (unsigned long long)lost);
	int failed = check_failure_count() != 0;
	printf("%d passed, %d failed\n", !failed, failed);
	return failed;
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "run") == 0)
		return run((uint32_t)strtoul(argv[2], NULL, 10),
			   (uint32_t)strtoul(argv[3], NULL, 10),
			   (uint32_t)strtoul(argv[4], NULL, 10),
			   (uint32_t)strtoul(argv[5], NULL, 10), argv[6]);
	if (argc == 5 && strcmp(argv[1], "check") == 0)
		return check(argv[2], (uint32_t)strtoul(argv[3], NULL, 10),
			     strcmp(argv[4], "stream") == 0);
	fprintf(stderr, "usage: thread_churn run SEQUENTIAL BURSTS BURST EVENTS MANIFEST\n"
			"       thread_churn check MANIFEST EVENTS stream|flight < DUMP_JSON\n");
	return 2;
}
