/*
 * clock.h - raw counter values to nanoseconds since the trace's start.
 *
 * The conversion is a fixed-point multiply: ns = (delta * mult) >> shift,
 * with delta = counter - start.counter, a 128-bit product and no division
 * on the hot path.  mult and shift are chosen so that mult uses as many of
 * its 64 bits as possible, which keeps the result within 1 ns of the exact
 * quotient for any realistic trace length.
 */
#ifndef RT_DECODE_CLOCK_H
#define RT_DECODE_CLOCK_H

#include <stdint.h>

#include "ringtrace/format.h"

/* Where the frequency came from. */
enum rt_timebase_basis {
	RT_TIMEBASE_NANOSECONDS = 1, /* the counter is CLOCK_MONOTONIC ns */
	RT_TIMEBASE_SYNC = 2,	     /* measured between start and the sync pair */
	RT_TIMEBASE_ESTIMATE = 3,    /* counter_hz, estimated at arena creation */
};

struct rt_timebase {
	uint64_t start_counter;
	uint64_t mult;
	unsigned shift;
	enum rt_timebase_basis basis;
	uint64_t ticks; /* the frequency as a ratio: ticks per ns_span nanoseconds */
	uint64_t ns_span;
};

/*
 * Read the live sync pair of a mapped header consistently (sequence even
 * and unchanged around the copy).  Returns 1 and fills *pair, or 0 when a
 * writer was inside (or died inside) the pair.
 */
int rt_timebase_read_sync(const struct rt_clock_sync *live, struct rt_clock_pair *pair);

/*
 * Set up the conversion for a header's clock.  sync is the pair read by
 * rt_timebase_read_sync, or NULL when none could be read.  Returns 0, or
 * -EINVAL when neither the sync pair nor counter_hz gives a frequency.
 */
int rt_timebase_init(struct rt_timebase *tb, uint32_t clock_source, uint64_t counter_hz,
		     const struct rt_clock_pair *start, const struct rt_clock_pair *sync);

/* The counter's frequency in Hz, rounded (for display). */
uint64_t rt_timebase_hz(const struct rt_timebase *tb);

/* Nanoseconds of positive counter ticks, saturating at INT64_MAX. */
static inline int64_t rt_timebase_span_ns(const struct rt_timebase *tb, uint64_t ticks)
{
	unsigned __int128 ns = ((unsigned __int128)ticks * tb->mult) >> tb->shift;
	return ns > (unsigned __int128)INT64_MAX ? INT64_MAX : (int64_t)ns;
}

/* Signed nanoseconds from the trace's start to counter. */
static inline int64_t rt_timebase_ns(const struct rt_timebase *tb, uint64_t counter)
{
	if (counter >= tb->start_counter)
		return rt_timebase_span_ns(tb, counter - tb->start_counter);
	return -rt_timebase_span_ns(tb, tb->start_counter - counter);
}

#endif /* RT_DECODE_CLOCK_H */
