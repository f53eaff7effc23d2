/*
 * big_arena.c - an arena of millions of records for the first poll's memory
 * test (tests/tail/first_poll.py).
 *
 *     tail_big_arena ARENA THREADS EVENTS_PER_THREAD
 *
 * THREADS threads each record EVENTS_PER_THREAD records into a ring of its
 * own, flight mode, made big enough that nothing is overwritten: one-slot
 * trace events, and every 64th a log message with a string (three slots).
 * The arena is closed cleanly and left at ARENA.  Prints "events N logs M":
 * the records the arena holds, and how many of them are log messages.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

static unsigned long long per_thread;

static void *record(void *arg)
{
	unsigned id = (unsigned)(size_t)arg;
	char name[16];
	snprintf(name, sizeof(name), "big-%u", id);
	ringtrace_set_thread_name(name);
	for (unsigned long long i = 0; i < per_thread; i++) {
		if ((i & 63) == 63)
			RT_LOG(RT_LOG_INFO, "message %llu of %s", i, name);
		else if (i & 1)
			RT_TRACE("odd", i);
		else
			RT_TRACE("even", i, id);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: %s ARENA THREADS EVENTS_PER_THREAD\n", argv[0]);
		return 2;
	}
	unsigned threads = (unsigned)strtoul(argv[2], NULL, 10);
	per_thread = strtoull(argv[3], NULL, 10);
	if (threads == 0 || threads > 64)
		return 2;
	/* a slot of 32 bytes an event, three a message, and room to spare */
	unsigned long long bytes = 4096;
	while (bytes < per_thread * 48)
		bytes *= 2;
	struct ringtrace_options options = {.size = sizeof(options),
					    .arena_path = argv[1],
					    .buffer_bytes = bytes,
					    .mode = RINGTRACE_FLIGHT,
					    .rings = threads};
	if (ringtrace_init(&options) != 0)
		return 1;
	pthread_t t[64];
	for (unsigned i = 0; i < threads; i++)
		if (pthread_create(&t[i], NULL, record, (void *)(size_t)i) != 0)
			return 1;
	for (unsigned i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	ringtrace_shutdown();
	printf("events %llu logs %llu\n", threads * per_thread, threads * (per_thread / 64));
	return 0;
}
