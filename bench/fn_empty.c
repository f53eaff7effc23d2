/*
 * fn_empty.c - the functions whose calls the function-tracing benchmarks
 * time: empty, and kept out of line so that every call is a real call.
 * bench/CMakeLists.txt builds this file twice: with -finstrument-functions
 * (bench_fn_traced) and without (bench_fn_plain, the same call untraced).
 */
#ifndef BENCH_FN_NAME
#error "BENCH_FN_NAME names the function"
#endif

void BENCH_FN_NAME(void);

__attribute__((noinline)) void BENCH_FN_NAME(void)
{
	__asm__ __volatile__("" ::: "memory");
}
