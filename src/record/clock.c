/*
 * clock.c - the raw counter every record is stamped with, and its
 * calibration.  The arena keeps a reading at creation (start) and a later
 * one (sync) refreshed from slow paths; a reader derives the frequency from
 * the two, which gets more exact the longer the program runs.
 */
#include <time.h>

#include "record/record.h"

#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
uint64_t ringtrace__counter(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

uint32_t rt_clock_source(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return RT_CLOCK_TSC;
#elif defined(__aarch64__)
	return RT_CLOCK_CNTVCT;
#else
	return RT_CLOCK_MONOTONIC;
#endif
}

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rt_clock_read(struct rt_clock_pair *pair)
{
	/* bracket the counter read between two monotonic reads; keep the tightest */
	*pair = (struct rt_clock_pair){0};
	uint64_t best_gap = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		uint64_t m0 = ns_of(CLOCK_MONOTONIC);
		uint64_t c = ringtrace__counter();
		uint64_t m1 = ns_of(CLOCK_MONOTONIC);
		if (m1 - m0 < best_gap) {
			best_gap = m1 - m0;
			pair->counter = c;
			pair->mono_ns = m0 + (m1 - m0) / 2;
		}
	}
	pair->wall_ns = ns_of(CLOCK_REALTIME);
}

uint64_t rt_clock_estimate_hz(void)
{
	if (rt_clock_source() == RT_CLOCK_MONOTONIC)
		return 1000000000u;
#if defined(__aarch64__)
	uint64_t f;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
	if (f)
		return f;
#endif
	/* ~200 us of watching the monotonic clock: good to a few parts in 10^4 */
	struct rt_clock_pair a, b;
	rt_clock_read(&a);
	do
		rt_clock_read(&b);
	while (b.mono_ns - a.mono_ns < 200000);
	return (uint64_t)((unsigned __int128)(b.counter - a.counter) * 1000000000u /
			  (b.mono_ns - a.mono_ns));
}

/* Refresh at most every ~100 ms of counter time, unless forced. */
void rt_clock_refresh(struct rt_arena_header *header, int force)
{
	struct rt_clock_sync *sync = &header->sync;
	uint64_t seq = __atomic_load_n(&sync->sequence, __ATOMIC_ACQUIRE);
	if (seq & 1)
		return; /* another thread is refreshing */
	uint64_t last = __atomic_load_n(&sync->pair.counter, __ATOMIC_RELAXED);
	if (!force && ringtrace__counter() - last < header->counter_hz / 10)
		return;
	if (!__atomic_compare_exchange_n(&sync->sequence, &seq, seq + 1, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	struct rt_clock_pair pair;
	rt_clock_read(&pair);
	__atomic_store_n(&sync->pair.counter, pair.counter, __ATOMIC_RELAXED);
	__atomic_store_n(&sync->pair.mono_ns, pair.mono_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&sync->pair.wall_ns, pair.wall_ns, __ATOMIC_RELAXED);
	/* publishes: the new pair, complete */
	__atomic_store_n(&sync->sequence, seq + 2, __ATOMIC_RELEASE);
}

uint64_t rt_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
