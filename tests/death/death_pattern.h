/*
 * death_pattern.h - what the victim (victim.c) records, shared with the
 * test that checks what survived its death (death.c).
 *
 * Event i of tracer thread t is RT_TRACE("kill", t, i), and every seventh
 * one the two-slot RT_TRACE("kill6", t, i, arg2(i), arg3(t), arg4(t, i),
 * arg5(i)): every argument is a function of (t, i), so a record mixing two
 * events, two threads or stale slots cannot pass for a real one.
 */
#ifndef RT_TEST_DEATH_PATTERN_H
#define RT_TEST_DEATH_PATTERN_H

#include <stdint.h>

static inline int death_is_large(uint32_t i)
{
	return i % 7 == 6;
}

static inline uint32_t death_arg2(uint32_t i)
{
	return ~i;
}

static inline int32_t death_arg3(uint32_t t)
{
	return -(int32_t)t - 1;
}

static inline uint64_t death_arg4(uint32_t t, uint32_t i)
{
	return (uint64_t)i << 20 | t;
}

static inline int64_t death_arg5(uint32_t i)
{
	return -(int64_t)i - 1;
}

/* the other tracers recorded this many events before tracer 0 starts */
#define DEATH_UNDER_WAY 1000u

/* fork: how the child ends, and how many events each parent thread records */
#define DEATH_CHILD_STATUS 7
#define DEATH_PARENT_EVENTS 20000u

/* a victim that is not killed dies by itself after this long */
#define DEATH_VICTIM_SECONDS 60

/* deadlock: the stuck threads, their last events' second argument */
#define DEADLOCK_STUCK 3
#define DEADLOCK_HOLDER_A 0
#define DEADLOCK_HOLDER_B 1
#define DEADLOCK_WAITER 2
#define DEADLOCK_MAGIC_A 0xa11ceu
#define DEADLOCK_MAGIC_B 0xb0b0u
#define DEADLOCK_MAGIC_W 0xca7u
#define DEADLOCK_WARMUP 1000u

#endif /* RT_TEST_DEATH_PATTERN_H */
