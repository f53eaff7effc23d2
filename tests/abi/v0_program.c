/*
 * v0_program.c - a program written against the header of ABI version 0
 * (tests/abi/v0/include: ringtrace.h and ringtrace/abi.h as they were at
 * commit d363e12, before sites carried a version), which the library of
 * every later version must keep recording exactly.  Built once into
 * v0_program.o (see README); abi_v0.sh links that object against this
 * build's library and compares what the tool reads with what the program
 * says it emitted.
 *
 *     v0_program ROUNDS
 *
 * Three threads, named main, worker-1 and worker-2, each emit ROUNDS rounds
 * of every shape the inline code of version 0 writes or hands to the
 * library: RT_TRACE with 0 to 6 arguments of every class, RT_BEGIN, RT_END
 * and RT_SCOPE, RT_LOG of integers only (inline), with short strings
 * (inline), and with what only the library lays out (a double, a long
 * double, a long string, a NULL string, more than seven arguments); and one
 * RT_LOG below the threshold, which is not recorded.  When every thread is
 * done, each thread's events are printed in the order it emitted them, one
 * a line:
 *
 *     THREAD trace TAG SPAN ARG...    SPAN: begin, end or -
 *     THREAD log LEVEL MESSAGE        the message as snprintf prints it
 *
 * Level names here are the ones of version 0's header: RT_INFO, RT_WARN...
 * No message holds a quote, a backslash or a control character, so that its
 * JSON string is its text.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ringtrace.h>

#define THREADS 3
#define LINE_BYTES 512

struct thread_lines {
	const char *name;
	int rounds;
	char (*lines)[LINE_BYTES];
	size_t count, capacity;
};

static void add_line(struct thread_lines *t, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void add_line(struct thread_lines *t, const char *format, ...)
{
	if (t->count == t->capacity) {
		t->capacity = t->capacity ? 2 * t->capacity : 1024;
		t->lines = realloc(t->lines, t->capacity * sizeof(*t->lines));
		if (!t->lines) {
			perror("realloc");
			exit(1);
		}
	}
	va_list ap;
	va_start(ap, format);
	vsnprintf(t->lines[t->count++], LINE_BYTES, format, ap);
	va_end(ap);
}

/* Log, and keep the line the program's own snprintf makes of the same call. */
#define LOGGED(t, level, level_name, ...)                                                          \
	do {                                                                                       \
		RT_LOG(level, __VA_ARGS__);                                                        \
		char message_[LINE_BYTES - 64];                                                    \
		snprintf(message_, sizeof(message_), __VA_ARGS__);                                 \
		add_line(t, "%s log %s %s", (t)->name, level_name, message_);                      \
	} while (0)

static int object;
/* a NULL string, but not a constant snprintf would be warned about */
static const char *volatile null_string;

static void one_round(struct thread_lines *t, int r)
{
	const char *n = t->name;
	const unsigned long long pointer = (unsigned long long)(uintptr_t)&object;
	const char *nothing = null_string;
	char long_string[101];
	memset(long_string, 'a' + r % 26, 100);
	long_string[100] = 0;

	RT_TRACE("no arguments");
	add_line(t, "%s trace no arguments -", n);
	RT_TRACE("one signed", -r - 1);
	add_line(t, "%s trace one signed - %d", n, -r - 1);
	RT_TRACE("two", (unsigned)r, (short)-7);
	add_line(t, "%s trace two - %u -7", n, (unsigned)r);
	RT_TRACE("three", r, (unsigned char)200, (long)-100000);
	add_line(t, "%s trace three - %d 200 -100000", n, r);
	RT_TRACE("four", 1, 2u, (signed char)-3, 0xffffffffu);
	add_line(t, "%s trace four - 1 2 -3 4294967295", n);
	RT_TRACE("five", r, r + 1, r + 2, r + 3, 0xfedcba9876543210ull + (unsigned)r);
	add_line(t, "%s trace five - %d %d %d %d %llu", n, r, r + 1, r + 2, r + 3,
		 0xfedcba9876543210ull + (unsigned)r);
	RT_TRACE("six", -1, -2, -3, -4, (long long)-5000000000 - r, &object);
	add_line(t, "%s trace six - -1 -2 -3 -4 %lld %llu", n, (long long)-5000000000 - r, pointer);

	RT_BEGIN("request", r);
	add_line(t, "%s trace request begin %d", n, r);
	RT_END("request", r * 2, -r);
	add_line(t, "%s trace request end %d %d", n, r * 2, -r);
	{
		RT_SCOPE("scope");
		add_line(t, "%s trace scope begin", n);
	}
	add_line(t, "%s trace scope end", n);

	/* inline: integers and pointers only, up to seven */
	LOGGED(t, RT_INFO, "info", "words %d %u %lld %p", -r, (unsigned)r * 3u, (long long)r << 40,
	       (void *)&object);
	/* inline: strings among them, at most six arguments and 64 bytes of strings */
	LOGGED(t, RT_ERROR, "error", "string %s and %s %d", "short", n, r);
	/* the library: more than seven arguments */
	LOGGED(t, RT_WARN, "warn", "eight %d %d %d %d %d %d %d %d", r, 1, 2, 3, 4, 5, 6, 7);
	/* the library: a string longer than the inline path takes, and a NULL string */
	LOGGED(t, RT_NOTICE, "notice", "long %s null %s", long_string, nothing);
	/* the library: floating point */
	LOGGED(t, RT_FATAL, "fatal", "double %.3f long double %.2Lf", r / 8.0, (long double)r / 4);
	/* below the threshold (info): not recorded, so no line */
	RT_LOG(RT_DEBUG, "never %d", r);
}

static void *run(void *p)
{
	struct thread_lines *t = p;
	ringtrace_set_thread_name(t->name);
	for (int r = 0; r < t->rounds; r++)
		one_round(t, r);
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	static const char *const names[THREADS] = {"main", "worker-1", "worker-2"};
	struct thread_lines threads[THREADS];
	memset(threads, 0, sizeof(threads));
	for (int i = 0; i < THREADS; i++) {
		threads[i].name = names[i];
		threads[i].rounds = rounds;
	}
	if (ringtrace_get_level() != RT_INFO || !ringtrace_enabled() || !ringtrace_arena_path()) {
		fprintf(stderr, "v0_program: tracing is not on at level info\n");
		return 1;
	}
	pthread_t workers[THREADS];
	for (int i = 1; i < THREADS; i++) {
		if (pthread_create(&workers[i], NULL, run, &threads[i])) {
			perror("pthread_create");
			return 1;
		}
	}
	run(&threads[0]);
	for (int i = 1; i < THREADS; i++)
		pthread_join(workers[i], NULL);
	for (int i = 0; i < THREADS; i++) {
		for (size_t k = 0; k < threads[i].count; k++)
			printf("%s\n", threads[i].lines[k]);
		free(threads[i].lines);
	}
	return 0;
}
