/*
 * lttng_tp.h - the LTTng-UST tracepoint that ringtrace is compared with: one
 * event with two integer fields, the classic provider form (LTTng-UST 2.x).
 * lttng_tp.c instantiates the probe; vs_lttng.c fires it.
 */
#undef TRACEPOINT_PROVIDER
#define TRACEPOINT_PROVIDER ringtrace_bench

#undef TRACEPOINT_INCLUDE
#define TRACEPOINT_INCLUDE "./lttng_tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

TRACEPOINT_EVENT(ringtrace_bench, two_ints, TP_ARGS(int, a, int, b),
		 TP_FIELDS(ctf_integer(int, a, a) ctf_integer(int, b, b)))

#endif /* BENCH_LTTNG_TP_H */

#include <lttng/tracepoint-event.h>
