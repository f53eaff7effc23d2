/*
 * floor.h - the floor of a recording fast path: the least that any tracer
 * which stamps every event must do, with nothing of ringtrace in it.
 *
 * One event reads the timestamp counter with the same instruction as
 * include/ringtrace.h, stores a 32-byte record (64 bytes for the six-argument
 * figure) at head & mask of a per-thread power-of-two ring, and publishes
 * head + 1 with a release store, as a reader in another process would need.
 * The ring wraps like ringtrace's: same size, same alignment.  It differs
 * from ringtrace only by what ringtrace adds: the site id, the signal guard,
 * the limit check, reserve, the CPU number, the record counters.
 *
 * head is loaded and stored atomically so that the compiler keeps it in
 * memory, as a trace call in real code must; the ring is reachable from
 * outside (floor_checksum reads it) so that no store can be optimised away.
 */
#ifndef BENCH_FLOOR_H
#define BENCH_FLOOR_H

#include <stdint.h>

struct floor_slot {
	uint64_t word[4]; /* 32 bytes, like a ringtrace slot */
};

struct floor_ring {
	struct floor_slot *slots;
	uint64_t mask;
	uint64_t head;
};

extern __thread struct floor_ring floor_ring;

/* Give the calling thread a ring of `bytes` (a power of two), pages touched. */
void floor_ring_create(uint64_t bytes);
void floor_ring_destroy(void);

/* Something that depends on every slot of the calling thread's ring. */
uint64_t floor_checksum(void);

#if defined(__x86_64__) || defined(__i386__)
/* The same instruction as ringtrace__counter() in include/ringtrace.h. */
static inline __attribute__((always_inline)) uint64_t floor_counter(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
static inline __attribute__((always_inline)) uint64_t floor_counter(void)
{
	uint64_t v;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
}
#else
#include <time.h>
static inline uint64_t floor_counter(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* One 32-byte event: sequence, time, what, one argument. */
static inline __attribute__((always_inline)) void floor_event32(uint64_t what, uint64_t a0)
{
	struct floor_ring *r = &floor_ring;
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t *s = r->slots[h & r->mask].word;
	s[0] = h;
	s[1] = floor_counter();
	s[2] = what;
	s[3] = a0;
	/* publishes: the slot, to a reader that loads head with acquire */
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
}

/*
 * One 64-byte event over two slots, laid out as ringtrace lays out six
 * arguments: four 32-bit ones, then two 64-bit ones.
 */
static inline __attribute__((always_inline)) void floor_event64(uint64_t what, uint32_t a0,
								uint32_t a1, uint32_t a2,
								uint32_t a3, uint64_t a4,
								uint64_t a5)
{
	struct floor_ring *r = &floor_ring;
	uint64_t h = __atomic_load_n(&r->head, __ATOMIC_RELAXED);
	uint64_t *s = r->slots[h & r->mask].word;
	uint64_t *c = r->slots[(h + 1) & r->mask].word;
	s[0] = h;
	s[1] = floor_counter();
	s[2] = what;
	s[3] = a0 | (uint64_t)a1 << 32;
	c[0] = h + 1;
	c[1] = a2 | (uint64_t)a3 << 32;
	c[2] = a4;
	c[3] = a5;
	/* publishes: both slots */
	__atomic_store_n(&r->head, h + 2, __ATOMIC_RELEASE);
}

#endif /* BENCH_FLOOR_H */
