/*
 * spans_prog.c - spans of a known shape for the analyze tests, built with
 * -finstrument-functions and linked with ringtrace, run under `ringtrace
 * record`.
 *
 *     spans_prog shape    3 worker threads, each 5 x outer() > 3 x middle()
 *                         > 2 x inner(); a producer's "request" events with
 *                         ids answered by "reply" events on two consumer
 *                         threads; "tick" .. "tock" pairs on each worker,
 *                         some ticks repeated before their tock
 *     spans_prog many     one thread: 10000 calls of tiny(), of varied length
 *                         (0.1 to 10 us or so: more values than quantiles keep
 *                         exactly, most past 128 ns)
 *
 * With RT_BEGIN and RT_END available, each outer() is also a marked span
 * "round" and each middle() a "step" inside it.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <ringtrace.h>

#define WORKERS 3
#define ROUNDS 5
#define REQUESTS 200
#define CONSUMERS 2
#define MANY 10000

static volatile unsigned sink;

__attribute__((noinline)) static void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline)) static void inner(unsigned i)
{
	spin(50 + 37 * (i % 7));
}

__attribute__((noinline)) static void middle(unsigned i)
{
#ifdef RT_BEGIN
	RT_BEGIN("step", i);
#endif
	for (unsigned k = 0; k < 2; k++)
		inner(i * 2 + k);
#ifdef RT_END
	RT_END("step", i);
#endif
}

__attribute__((noinline)) static void outer(unsigned i)
{
#ifdef RT_BEGIN
	RT_BEGIN("round", i);
#endif
	for (unsigned k = 0; k < 3; k++)
		middle(i * 3 + k);
#ifdef RT_END
	RT_END("round", i);
#endif
}

static void *worker(void *arg)
{
	unsigned w = (unsigned)(long)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%u", w);
	pthread_setname_np(pthread_self(), name);
	for (unsigned i = 0; i < ROUNDS; i++) {
		RT_TRACE("tick", i);
		if (i % 2 == 0)
			RT_TRACE("tick", i); /* a second tick: the first goes unmatched */
		outer(i + w * ROUNDS);
		RT_TRACE("tock", i);
	}
	RT_TRACE("tick", 99); /* never followed by a tock */
	return NULL;
}

/* A queue of request ids from the producer to the consumers. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
static unsigned queue[REQUESTS + CONSUMERS], head, tail;

static void *consumer(void *arg)
{
	char name[16];
	snprintf(name, sizeof(name), "consumer-%d", (int)(long)arg);
	pthread_setname_np(pthread_self(), name);
	for (;;) {
		pthread_mutex_lock(&lock);
		while (head == tail)
			pthread_cond_wait(&ready, &lock);
		unsigned id = queue[head++];
		pthread_mutex_unlock(&lock);
		if (id == 0)
			return NULL;
		spin(100 + 13 * (id % 11));
		RT_TRACE("reply", id);
	}
}

static void push(unsigned id)
{
	pthread_mutex_lock(&lock);
	queue[tail++] = id;
	pthread_cond_signal(&ready);
	pthread_mutex_unlock(&lock);
}

static int shape(void)
{
	pthread_t w[WORKERS], c[CONSUMERS];
	for (long i = 0; i < WORKERS; i++)
		if (pthread_create(&w[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (long i = 0; i < CONSUMERS; i++)
		if (pthread_create(&c[i], NULL, consumer, (void *)i) != 0)
			return 1;
	for (unsigned id = 1; id <= REQUESTS; id++) {
		RT_TRACE("request", id);
		push(id);
		if (id % 50 == 0)
			RT_TRACE("request", 100000 + id); /* never answered */
	}
	RT_TRACE("reply", 424242); /* answers nothing */
	for (int i = 0; i < CONSUMERS; i++)
		push(0);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);
	return 0;
}

__attribute__((noinline)) static void tiny(unsigned i)
{
	spin(200 + 20 * (i % 97)); /* past 128 ns, where the sketch's buckets widen */
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	if (strcmp(argv[1], "shape") == 0)
		return shape();
	if (strcmp(argv[1], "many") == 0) {
		for (unsigned i = 0; i < MANY; i++)
			tiny(i);
		return 0;
	}
	return 2;
}
