/*
 * check.h - assertions for the test programs.  A failed check prints where
 * it is and both values, counts the failure and lets the test go on, so one
 * run shows every failure rather than the first.  Safe to use from several
 * threads at once.
 */
#ifndef RT_TEST_CHECK_H
#define RT_TEST_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_failures;

__attribute__((format(printf, 3, 4))) static inline void check_fail(const char *file, int line,
								    const char *fmt, ...)
{
	char message[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	/* a broken loop invariant fails thousands of times: the first ones tell enough */
	int n = __atomic_fetch_add(&check_failures, 1, __ATOMIC_RELAXED);
	if (n < 40)
		fprintf(stderr, "%s:%d: check failed: %s\n", file, line, message);
	else if (n == 40)
		fprintf(stderr, "(more failed checks not shown)\n");
}

static inline int check_failure_count(void)
{
	return __atomic_load_n(&check_failures, __ATOMIC_RELAXED);
}

/* Evaluates to whether cond held, so a test can skip checks that depend on it. */
#define CHECK(cond) ((cond) ? 1 : (check_fail(__FILE__, __LINE__, "%s", #cond), 0))

/* Integers of any width and signedness, compared as 64-bit patterns. */
#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		uint64_t check_a_ = (uint64_t)(a), check_b_ = (uint64_t)(b);                       \
		if (check_a_ != check_b_)                                                          \
			check_fail(__FILE__, __LINE__,                                             \
				   "%s == %s: %" PRIu64 " (0x%" PRIx64 ") vs %" PRIu64             \
				   " (0x%" PRIx64 ")",                                             \
				   #a, #b, check_a_, check_a_, check_b_, check_b_);                \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *check_a_ = (a), *check_b_ = (b);                                       \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0)                     \
			check_fail(__FILE__, __LINE__, "%s == %s: \"%s\" vs \"%s\"", #a, #b,       \
				   check_a_ ? check_a_ : "(null)",                                 \
				   check_b_ ? check_b_ : "(null)");                                \
	} while (0)

#endif /* RT_TEST_CHECK_H */
