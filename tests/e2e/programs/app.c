/*
 * app.c - a user's program, built by the end-to-end tests against the
 * installed library with every supported compiler and language standard
 * (as C, and as C++ with -x c++).
 *
 * Every event is traced through TRACED(), which also prints to stdout what
 * `ringtrace dump` must show for it, computed by printf from the same values:
 *
 *   expect <TAB> tag <TAB> line <TAB> func <TAB> JSON args <TAB> hex args
 *
 * so the test compares the tool's output with the program's own account of
 * what it passed, rather than with numbers written into the test.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include <ringtrace.h>

/* One argument as the dump shows it: decimal in JSON, hex of its field in text. */
struct shown {
	char json[32];
	char hex[24];
};

static struct shown show_signed(long long v, int wide)
{
	struct shown s;
	snprintf(s.json, sizeof(s.json), "%lld", v);
	if (wide)
		snprintf(s.hex, sizeof(s.hex), "%016llx", (unsigned long long)v);
	else
		snprintf(s.hex, sizeof(s.hex), "%08x", (unsigned)(uint32_t)v);
	return s;
}

static struct shown show_unsigned(unsigned long long v, int wide)
{
	struct shown s;
	snprintf(s.json, sizeof(s.json), "%llu", v);
	if (wide)
		snprintf(s.hex, sizeof(s.hex), "%016llx", v);
	else
		snprintf(s.hex, sizeof(s.hex), "%08x", (unsigned)(uint32_t)v);
	return s;
}

static void expect(const char *tag, int line, const char *func, int n, ...)
{
	char json[256] = "[", hex[256] = "";
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++) {
		struct shown s = va_arg(ap, struct shown);
		strcat(json, i ? "," : "");
		strcat(json, s.json);
		strcat(hex, i ? " " : "");
		strcat(hex, s.hex);
	}
	va_end(ap);
	strcat(json, "]");
	printf("expect\t%s\t%d\t%s\t%s\t%s\n", tag, line, func, json, hex);
}

#define S(v, i) show_signed((long long)(v), (i) >= 4)
#define U(v, i) show_unsigned((unsigned long long)(v), (i) >= 4)

enum color { RED, GREEN = 7 };

static void *worker(void *arg)
{
	(void)arg;
	ringtrace_set_thread_name("e2e-worker");
	for (unsigned i = 0; i < 3; i++) {
		RT_TRACE("worker step", i);
		expect("worker step", __LINE__ - 1, __func__, 1, U(i, 0));
	}
	return NULL;
}

/* Each expect() names the line above it: the line of its RT_TRACE. */
int main(void)
{
	int len = 1500;
	unsigned flags = 0x8001u;
	int minus_one = -1;
	short minus_two = -2;
	long long minus_three = -3;
	int8_t smallest = -128;
	uint8_t largest = 255;
	char letter = 'A';
	bool yes = true;
	enum color color = GREEN;
	uint64_t wide = 0xffffffff0024c720ull;
	int64_t negative_wide = -0x6ae6f881a0ll;
	static int object;
	void *pointer = &object;

	RT_TRACE("no arguments");
	expect("no arguments", __LINE__ - 1, __func__, 0);
	RT_TRACE("before send", len, flags);
	expect("before send", __LINE__ - 1, __func__, 2, S(len, 0), U(flags, 1));
	RT_TRACE("negative", minus_one, minus_two, minus_three, smallest);
	expect("negative", __LINE__ - 1, __func__, 4, S(minus_one, 0), S(minus_two, 1),
	       S(minus_three, 2), S(smallest, 3));
	RT_TRACE("small types", largest, letter, yes, color);
	expect("small types", __LINE__ - 1, __func__, 4, U(largest, 0), S(letter, 1), U(yes, 2),
	       U(color, 3));
	RT_TRACE("six", 2, 6, 1, 0, wide, negative_wide);
	expect("six", __LINE__ - 1, __func__, 6, S(2, 0), S(6, 1), S(1, 2), S(0, 3), U(wide, 4),
	       S(negative_wide, 5));
	RT_TRACE("pointer", 0, 0, 0, 0, pointer);
	expect("pointer", __LINE__ - 1, __func__, 5, S(0, 0), S(0, 1), S(0, 2), S(0, 3),
	       U((uintptr_t)pointer, 4));

	pthread_t thread;
	pthread_create(&thread, NULL, worker, NULL);
	pthread_join(thread, NULL);

	RT_TRACE("end", 42);
	expect("end", __LINE__ - 1, __func__, 1, S(42, 0));
	const char *path = ringtrace_arena_path();
	printf("pid\t%d\narena\t%s\n", (int)getpid(), path ? path : "(off)");
	return 0;
}
