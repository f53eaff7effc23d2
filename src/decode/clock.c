/*
 * clock.c - choose the counter frequency and the fixed-point conversion.
 */
#include <errno.h>

#include "decode/clock.h"

#define NS_PER_SEC 1000000000ull
#define NS_PER_MS 1000000ull

int rt_timebase_read_sync(const struct rt_clock_sync *live, struct rt_clock_pair *pair)
{
	const volatile struct rt_clock_sync *s = live;
	uint64_t before = __atomic_load_n(&live->sequence, __ATOMIC_ACQUIRE);
	pair->counter = s->pair.counter;
	pair->mono_ns = s->pair.mono_ns;
	pair->wall_ns = s->pair.wall_ns;
	/* the copy is complete before the sequence is read again */
	RT_FENCE_ACQUIRE();
	uint64_t after = __atomic_load_n(&live->sequence, __ATOMIC_RELAXED);
	return before == after && (before & 1) == 0;
}

/*
 * mult/2^shift = ns_span/ticks, with mult as large as fits 64 bits.  mult is
 * rounded up: the error is then below delta/2^shift < 1 ns and never takes a
 * result that is a whole number of nanoseconds below it.
 */
static void set_ratio(struct rt_timebase *tb, uint64_t ns_span, uint64_t ticks)
{
	tb->ns_span = ns_span;
	tb->ticks = ticks;
	/* ns_span < 2^64, so ns_span << 64 fits 128 bits: try the largest shift first */
	for (unsigned shift = 64;; shift--) {
		unsigned __int128 mult =
		    (((unsigned __int128)ns_span << shift) + ticks - 1) / ticks;
		if (mult <= UINT64_MAX || shift == 0) {
			tb->mult = mult > UINT64_MAX ? UINT64_MAX : (uint64_t)mult;
			tb->shift = shift;
			return;
		}
	}
}

int rt_timebase_init(struct rt_timebase *tb, uint32_t clock_source, uint64_t counter_hz,
		     const struct rt_clock_pair *start, const struct rt_clock_pair *sync)
{
	tb->start_counter = start->counter;
	if (clock_source == RT_CLOCK_MONOTONIC) {
		tb->basis = RT_TIMEBASE_NANOSECONDS;
		tb->mult = 1;
		tb->shift = 0;
		tb->ticks = tb->ns_span = 1;
		return 0;
	}
	/* a sync pair at least 1 ms after the start measures the real frequency */
	if (sync && sync->counter > start->counter && sync->mono_ns >= start->mono_ns &&
	    sync->mono_ns - start->mono_ns >= NS_PER_MS) {
		tb->basis = RT_TIMEBASE_SYNC;
		set_ratio(tb, sync->mono_ns - start->mono_ns, sync->counter - start->counter);
		return 0;
	}
	if (counter_hz == 0)
		return -EINVAL;
	tb->basis = RT_TIMEBASE_ESTIMATE;
	set_ratio(tb, NS_PER_SEC, counter_hz);
	return 0;
}

uint64_t rt_timebase_hz(const struct rt_timebase *tb)
{
	unsigned __int128 hz =
	    ((unsigned __int128)tb->ticks * NS_PER_SEC + tb->ns_span / 2) / tb->ns_span;
	return hz > UINT64_MAX ? UINT64_MAX : (uint64_t)hz;
}
