/*
 * log_workload.c - an arena of RT_LOG messages for timing how fast the
 * tool decodes them (scripts/bench, figure 14).
 *
 *     bench_log_workload ARENA MESSAGES
 *
 * One thread, flight mode, a ring large enough for every message: half of
 * them with three integers ("request %llu from %d took %u us", two slots),
 * half with an integer and a short string ("user %s logged in from %d",
 * three slots).  Prints "result messages N".
 */
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

static const char *const users[] = {"alice", "bob", "carol", "dave"};

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s ARENA MESSAGES\n", argv[0]);
		return 2;
	}
	unsigned long long n = strtoull(argv[2], NULL, 10);
	/* 96 bytes a message at most, rounded up to a power of two by the library */
	unsigned long long bytes = 4096;
	while (bytes < n * 96)
		bytes *= 2;
	struct ringtrace_options options = {.size = sizeof(options),
					    .arena_path = argv[1],
					    .buffer_bytes = bytes,
					    .mode = RINGTRACE_FLIGHT,
					    .rings = 1};
	if (ringtrace_init(&options) != 0)
		return 1;
	for (unsigned long long i = 0; i < n; i++) {
		if (i & 1)
			RT_LOG(RT_LOG_INFO, "user %s logged in from %d", users[i & 3],
			       (int)(i % 1000));
		else
			RT_LOG(RT_LOG_INFO, "request %llu from %d took %u us", i, 7,
			       (unsigned)(i % 977));
	}
	printf("result messages %llu\n", n);
	return 0;
}
