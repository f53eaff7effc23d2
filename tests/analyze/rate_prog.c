/*
 * rate_prog.c - a program for the rate and by-arg tests: built with
 * -finstrument-functions and linked with ringtrace, run under
 * `ringtrace record --io` or into a flight arena.
 *
 *     rate_prog DIR
 *
 * Three named threads record at different paces:
 *   rate-tick     "tick" (i) every 200 us for 100 ms, then a burst of 3000
 *                 "burst" events as fast as it can
 *   rate-request  "request" (reason, delta, size, i, object, big): reason
 *                 i % 5, delta -(i % 3), size 64 * (reason + 1), a pointer
 *                 from a table of three, big (i % 4) << 40 (arguments 4
 *                 and 5 are the 64-bit ones); after each, a pause that grows with
 *                 the reason, so each reason holds the thread for its own
 *                 time (pause_us and handle are not instrumented); a log
 *                 line every tenth; the threads' bodies are instrumented
 *                 each inside a span "serve" (reason) that ends after the
 *                 pause, so a request is held until the span's end
 *   rate-quiet    "quiet" once every 20 ms, with spans "nest" (1) around
 *                 "nest" (2) of about 3 and 2 ms; then an end without a
 *                 start, and a "nest" (3) never ended
 * The main thread writes and reads a file in DIR (file I/O events).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ringtrace.h>

/* Not instrumented: the next event after a "request" is the next request or log line. */
__attribute__((no_instrument_function)) static void pause_us(long us)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = us * 1000};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void *tick(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "rate-tick");
	for (unsigned i = 0; i < 500; i++) {
		RT_TRACE("tick", i);
		pause_us(200);
	}
	for (unsigned i = 0; i < 3000; i++)
		RT_TRACE("burst", i);
	return NULL;
}

__attribute__((noinline, no_instrument_function)) static int handle(int reason)
{
	pause_us(50 * (reason + 1));
	return reason * 2;
}

static int objects[3];

static void *request(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "rate-request");
	int sum = 0;
	for (unsigned i = 0; i < 400; i++) {
		unsigned reason = i % 5;
		RT_BEGIN("serve", reason);
		RT_TRACE("request", reason, -(int)(i % 3), 64 * (reason + 1), i,
			 (void *)&objects[i % 3], (unsigned long long)(i % 4) << 40);
		sum += handle((int)reason);
		RT_END("serve");
		if (i % 10 == 0)
			RT_LOG(RT_LOG_INFO, "request %u done, sum %d", i, sum);
	}
	RT_TRACE("request done", sum);
	return NULL;
}

static void *quiet(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "rate-quiet");
	for (unsigned i = 0; i < 8; i++) {
		RT_TRACE("quiet", i);
		/* spans of one name nested: each end closes the innermost */
		RT_BEGIN("nest", 1u);
		pause_us(1000);
		RT_BEGIN("nest", 2u);
		pause_us(2000);
		RT_END("nest");
		RT_END("nest");
		pause_us(20000);
	}
	RT_END("nest");	      /* an end with no open span */
	RT_BEGIN("nest", 3u); /* a span never ended */
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: rate_prog DIR\n");
		return 2;
	}
	pthread_t threads[3];
	void *(*bodies[3])(void *) = {tick, request, quiet};
	for (int i = 0; i < 3; i++)
		if (pthread_create(&threads[i], NULL, bodies[i], NULL) != 0)
			return 1;
	char path[4096];
	snprintf(path, sizeof(path), "%s/rate_prog.data", argv[1]);
	char block[512];
	memset(block, 'r', sizeof(block));
	for (int round = 0; round < 20; round++) {
		int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
		if (fd < 0)
			return 1;
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block) ||
		    pread(fd, block, sizeof(block), 0) != (ssize_t)sizeof(block))
			return 1;
		close(fd);
		pause_us(5000);
	}
	unlink(path);
	for (int i = 0; i < 3; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
