/*
 * counter.c - the counter records are stamped with on AArch64: the virtual
 * counter cntvct_el0 (ringtrace__counter in ringtrace.h), at the frequency
 * cntfrq_el0 gives.  Under qemu-user both are emulated (the counter follows
 * the host's clock), so this checks that what the library takes for granted
 * on real hardware holds there too, and that the library says what it uses.
 *
 *   aarch64_counter ARENA
 *
 * In this process: the clock source is RT_CLOCK_CNTVCT, the frequency the
 * library takes is cntfrq_el0's and the arena header says both; the counter
 * never goes back, and it ticks: across a sleep, the time it counts lies
 * between the CLOCK_MONOTONIC times read just inside and just outside its
 * two readings (no bound on how long anything takes: a slow or loaded
 * machine only widens the outer interval).  Then it records "before" and
 * "after" around another sleep into ARENA and prints, for aarch64/clock.sh:
 *   hz HZ                the frequency cntfrq_el0 gives
 *   slept INNER OUTER    ns between the two events, bounded from inside and outside
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "record/record.h"

#include "../lib/check.h"

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec t = {0, ms * 1000000L};
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

static uint64_t frequency_register(void)
{
	uint64_t hz;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
	return hz;
}

/*
 * Counter ticks as nanoseconds must lie in [inner, outer], give or take
 * what neither clock can tell apart: a tick of the counter, a microsecond
 * (qemu reads the host's clock in microseconds), and 1% for the rates of
 * two clocks that need not be disciplined alike (a system clock slewed by
 * NTP runs at most 0.05% off).
 */
static int within(uint64_t ticks, uint64_t hz, uint64_t inner, uint64_t outer)
{
	uint64_t ns = (uint64_t)((unsigned __int128)ticks * 1000000000u / hz);
	uint64_t slack = 1000000000u / hz + 1 + 1000 + outer / 100;
	if (ns + slack >= inner && ns <= outer + slack)
		return 1;
	check_fail(__FILE__, __LINE__,
		   "%llu ticks at %llu Hz = %llu ns, not within [%llu, %llu] ns",
		   (unsigned long long)ticks, (unsigned long long)hz, (unsigned long long)ns,
		   (unsigned long long)inner, (unsigned long long)outer);
	return 0;
}

/* One event, out of line: aarch64/fences.sh reads the fast path's instructions here. */
__attribute__((noinline)) static void record_event(const char *why)
{
	if (strcmp(why, "before") == 0)
		RT_TRACE("before");
	else
		RT_TRACE("after");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: aarch64_counter ARENA\n");
		return 2;
	}
	uint64_t hz = frequency_register();
	CHECK(hz != 0);
	CHECK_EQ(rt_clock_source(), RT_CLOCK_CNTVCT);
	CHECK_EQ(rt_clock_estimate_hz(), hz);

	/* never back, read after read */
	uint64_t last = ringtrace__counter(), backwards = 0, advanced = 0;
	for (int i = 0; i < 100000; i++) {
		uint64_t now = ringtrace__counter();
		backwards += now < last;
		advanced += now > last;
		last = now;
	}
	CHECK_EQ(backwards, 0);
	CHECK(advanced > 0);

	/* it ticks at hz: 20 ms of sleep measured by both clocks */
	uint64_t m0 = monotonic_ns(), c0 = ringtrace__counter(), m1 = monotonic_ns();
	sleep_ms(20);
	uint64_t m2 = monotonic_ns(), c1 = ringtrace__counter(), m3 = monotonic_ns();
	if (CHECK(c1 > c0) && hz)
		within(c1 - c0, hz, m2 - m1, m3 - m0);

	/* what the arena says, and two events a sleep apart for the tool to time */
	struct ringtrace_options o;
	memset(&o, 0, sizeof(o));
	o.size = sizeof(o);
	o.arena_path = argv[1];
	o.mode = RINGTRACE_FLIGHT;
	CHECK_EQ(ringtrace_init(&o), 0);
	RT_TRACE("start"); /* creates the arena: the slow path, outside the measurement */
	if (CHECK(rt_arena.header != NULL)) {
		CHECK_EQ(rt_arena.header->clock_source, RT_CLOCK_CNTVCT);
		CHECK_EQ(rt_arena.header->counter_hz, hz);
	}
	m0 = monotonic_ns();
	record_event("before");
	m1 = monotonic_ns();
	sleep_ms(50);
	m2 = monotonic_ns();
	record_event("after");
	m3 = monotonic_ns();
	printf("hz %llu\n", (unsigned long long)hz);
	printf("slept %llu %llu\n", (unsigned long long)(m2 - m1), (unsigned long long)(m3 - m0));
	int failed = check_failure_count() != 0;
	printf("%d passed, %d failed\n", !failed, failed);
	return failed;
}
