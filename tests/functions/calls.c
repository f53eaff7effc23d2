/*
 * calls.c - a program compiled with -finstrument-functions whose calls are
 * known exactly, for tests/functions/check_calls.py to compare with what
 * `ringtrace dump --json` shows.
 *
 *     calls ADDRESSES SCENARIO
 *
 * Writes "NAME 0xADDRESS" for each of its instrumented functions (and those
 * of fn_lib.c) to ADDRESSES, then runs SCENARIO; check_calls.py describes
 * the calls of each.  Everything but main and the scenario's functions is
 * no_instrument_function, so that the calls are only those described.
 * Built linked with ringtrace (the scenarios that use the API) and not
 * (RINGTRACE_API 0: run under `ringtrace record`, which preloads the
 * library).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if RINGTRACE_API
#include <ringtrace.h>
#endif

#define QUIET __attribute__((no_instrument_function))
/* keep the compiler from folding or inlining the calls the test counts */
#ifdef __clang__
#define CALLED __attribute__((noinline))
#else
#define CALLED __attribute__((noinline, noclone))
#endif

int lib_outer(int x);
int lib_inner(int x);

static volatile int sink;

CALLED int fact(int n);
CALLED int ping(int n);
CALLED int pong(int n);
CALLED int tail_a(int n, int acc);
CALLED int tail_b(int n, int acc);
CALLED int leaf(int n);
CALLED void *thread_body(void *arg);
int main(int argc, char **argv);

int fact(int n)
{
	return n <= 0 ? 1 : n * fact(n - 1);
}

/* mutual recursion, not in tail position */
int ping(int n)
{
	return n <= 0 ? 0 : 1 + pong(n - 1);
}

int pong(int n)
{
	return n <= 0 ? 0 : 2 + ping(n - 1);
}

/* mutual recursion in tail position: sibling calls at -O2 without the hooks */
int tail_a(int n, int acc)
{
	if (n <= 0)
		return acc;
	return tail_b(n - 1, acc + 1);
}

int tail_b(int n, int acc)
{
	if (n <= 0)
		return acc;
	return tail_a(n - 1, acc + 2);
}

int leaf(int n)
{
	sink = n;
#if RINGTRACE_API
	/* RT_TRACE's inline fast path must not show up among the calls */
	RT_TRACE("leaf", n);
#endif
	return n + 1;
}

/* thread i: leaf(i), then fact(i + 2) */
void *thread_body(void *arg)
{
	int i = (int)(long)arg;
	sink = leaf(i);
	sink = fact(i + 2);
	return NULL;
}

QUIET static void write_addresses(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	const struct {
		const char *name;
		void *fn;
	} fns[] = {
	    {"main", (void *)main},	      {"fact", (void *)fact},
	    {"ping", (void *)ping},	      {"pong", (void *)pong},
	    {"tail_a", (void *)tail_a},	      {"tail_b", (void *)tail_b},
	    {"leaf", (void *)leaf},	      {"thread_body", (void *)thread_body},
	    {"lib_outer", (void *)lib_outer}, {"lib_inner", (void *)lib_inner},
	};
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		fprintf(f, "%s %p\n", fns[i].name, fns[i].fn);
	if (fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

QUIET static void run_threads(int n)
{
	pthread_t t[8];
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, thread_body, (void *)(long)i) != 0) {
			fprintf(stderr, "calls: pthread_create failed\n");
			exit(2);
		}
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
}

/* The calls every "basic" scenario makes, in main. */
QUIET static void basic(void)
{
	sink = fact(4);
	sink = ping(5);
	sink = tail_a(6, 0);
	sink = lib_outer(2);
	sink = leaf(7);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: calls ADDRESSES SCENARIO\n");
		return 2;
	}
	write_addresses(argv[1]);
	const char *s = argv[2];
	if (strcmp(s, "basic") == 0) {
		basic();
	} else if (strcmp(s, "threads") == 0) {
		basic();
		run_threads(4);
#if RINGTRACE_API
	} else if (strcmp(s, "api-depth") == 0) {
		ringtrace_set_max_depth(3);
		basic();
	} else if (strcmp(s, "api-exclude-function") == 0) {
		if (ringtrace_exclude_function((void *)fact) != 0 ||
		    ringtrace_exclude_function((void *)pong) != 0) {
			fprintf(stderr, "calls: ringtrace_exclude_function failed\n");
			return 1;
		}
		basic();
	} else if (strcmp(s, "api-exclude-module") == 0) {
		int r = ringtrace_exclude_module("libfn_lib");
		if (r != 1) {
			fprintf(stderr, "calls: ringtrace_exclude_module gave %d, not 1\n", r);
			return 1;
		}
		if (ringtrace_exclude_module("no-such-module") != 0 ||
		    ringtrace_exclude_module("") >= 0) {
			fprintf(stderr,
				"calls: ringtrace_exclude_module matched what it should not\n");
			return 1;
		}
		basic();
#endif
	} else {
		fprintf(stderr, "calls: unknown scenario %s\n", s);
		return 2;
	}
	return 0;
}
