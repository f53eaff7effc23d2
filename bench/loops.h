/*
 * loops.h - the loops under test, shared by the benchmarks that compare them
 * so that a figure measured in two programs is the same machine code.  Each
 * records n events; none can be optimised away (see floor.h and the
 * ringtrace fast path, whose stores are atomic).
 */
#ifndef BENCH_LOOPS_H
#define BENCH_LOOPS_H

#include <stdint.h>

void loop_trace1(uint64_t n);	  /* RT_TRACE with one argument */
void loop_trace2(uint64_t n);	  /* RT_TRACE with two int arguments */
void loop_trace6(uint64_t n);	  /* RT_TRACE with six arguments */
void loop_trace_pair(uint64_t n); /* n / 2 pairs of RT_TRACEs with one argument */
void loop_span_pair(uint64_t n);  /* n / 2 pairs of RT_BEGIN and RT_END with one argument */
void loop_scope(uint64_t n);	  /* n / 2 blocks with an RT_SCOPE: its begin and its end */
void loop_floor32(uint64_t n);	  /* floor_event32() */
void loop_floor64(uint64_t n);	  /* floor_event64() */
void loop_counter(uint64_t n);	  /* the counter read alone: what limits the rest */

#endif /* BENCH_LOOPS_H */
