/*
 * demo.c - a small multi-threaded program that records events: producers
 * hand work items to consumers through a bounded queue, and every step is
 * traced; each item's processing is a span.  `make demo` runs it, dumps
 * the tail of its trace and analyzes how long the spans took.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ringtrace.h>

#define QUEUE_SIZE 16
#define ITEMS_PER_PRODUCER 2000

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	int items[QUEUE_SIZE];
	unsigned head, tail;
	int closed;
};

static struct queue q = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .not_empty = PTHREAD_COND_INITIALIZER,
    .not_full = PTHREAD_COND_INITIALIZER,
};

static void put(int item)
{
	pthread_mutex_lock(&q.lock);
	while (q.tail - q.head == QUEUE_SIZE) {
		RT_TRACE("queue full, producer waits", q.tail - q.head);
		pthread_cond_wait(&q.not_full, &q.lock);
	}
	q.items[q.tail++ % QUEUE_SIZE] = item;
	RT_TRACE("put", item, q.tail - q.head);
	pthread_cond_signal(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
}

static int get(int *item)
{
	pthread_mutex_lock(&q.lock);
	while (q.tail == q.head && !q.closed)
		pthread_cond_wait(&q.not_empty, &q.lock);
	int ok = q.tail != q.head;
	if (ok) {
		*item = q.items[q.head++ % QUEUE_SIZE];
		pthread_cond_signal(&q.not_full);
	}
	pthread_mutex_unlock(&q.lock);
	return ok;
}

static void *producer(void *arg)
{
	long id = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "producer-%ld", id);
	ringtrace_set_thread_name(name);
	for (int i = 0; i < ITEMS_PER_PRODUCER; i++)
		put((int)(id * 100000 + i));
	RT_TRACE("producer done", id, ITEMS_PER_PRODUCER);
	return NULL;
}

static unsigned long checksum(int item)
{
	unsigned long h = 1469598103934665603ul;
	for (int i = 0; i < 64; i++)
		h = (h ^ (unsigned long)(item + i)) * 1099511628211ul;
	return h;
}

static void *consumer(void *arg)
{
	long id = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "consumer-%ld", id);
	ringtrace_set_thread_name(name);
	int item, count = 0;
	while (get(&item)) {
		RT_SCOPE("process item"); /* a span to the end of this block */
		unsigned long sum = checksum(item);
		RT_TRACE("consumed (item, count, worker, 0, checksum, &item)", item, count, id, 0,
			 sum, &item);
		count++;
	}
	RT_TRACE("consumer done", id, count);
	return NULL;
}

int main(void)
{
	enum { PRODUCERS = 2, CONSUMERS = 3 };
	pthread_t p[PRODUCERS], c[CONSUMERS];
	RT_TRACE("demo start", PRODUCERS, CONSUMERS);
	for (long i = 0; i < CONSUMERS; i++)
		pthread_create(&c[i], NULL, consumer, (void *)i);
	for (long i = 0; i < PRODUCERS; i++)
		pthread_create(&p[i], NULL, producer, (void *)i);
	for (int i = 0; i < PRODUCERS; i++)
		pthread_join(p[i], NULL);
	pthread_mutex_lock(&q.lock);
	q.closed = 1;
	pthread_cond_broadcast(&q.not_empty);
	pthread_mutex_unlock(&q.lock);
	for (int i = 0; i < CONSUMERS; i++)
		pthread_join(c[i], NULL);
	RT_TRACE("demo end", PRODUCERS * ITEMS_PER_PRODUCER);
	const char *path = ringtrace_arena_path();
	fprintf(stderr, "demo: %d items through the queue, trace in %s\n",
		PRODUCERS * ITEMS_PER_PRODUCER, path ? path : "(tracing off)");
	return 0;
}
