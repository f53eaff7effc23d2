/*
 * check_dump.c - every event the stress threads emitted must come out of
 * `ringtrace dump --json` exactly once: decoded with its arguments intact,
 * or counted in a lost line of its thread.  Per thread, decoded events come
 * in order (argument i and seq strictly increasing, time never running
 * back) and form one unbroken run: the newest ones in flight mode, the
 * oldest ones in stream mode with nobody draining.  Where a thread had a
 * fresh ring to itself, how many survive follows from the ring's size, and
 * is checked exactly.  When the file system filled (limited_room), a ring
 * stops where its pages could not be claimed: the oldest events survive in
 * both modes, how many is not known, and some must.
 */
#include <stdlib.h>
#include <string.h>

#include "ringtrace.h"

#include "../lib/check.h"
#include "check_dump.h"

struct tally {
	uint64_t decoded;
	int any;
	uint32_t first_i, last_i;
	uint64_t last_seq;
	int64_t last_ts;
	uint64_t gaps; /* events missing between two decoded ones */
	uint64_t overwritten, dropped, torn, damaged;
	uint32_t last_events;
	uint32_t last_event_i;
};

struct dump_check {
	const struct stress_run *run;
	struct tally *tally;
	uint64_t lines;
	uint64_t unattributed_lost; /* lost lines with no thread of ours */
	int tail_started;	    /* last_event lines have begun */
};

struct dump_check *dump_check_begin(const struct stress_run *run)
{
	struct dump_check *c = calloc(1, sizeof(*c));
	c->run = run;
	c->tally = calloc(run->nthreads, sizeof(*c->tally));
	return c;
}

static int thread_of_tid(const struct dump_check *c, int64_t tid)
{
	for (uint32_t t = 0; t < c->run->nthreads; t++)
		if (c->run->threads[t].tid == tid)
			return (int)t;
	return -1;
}

static int int_is(const struct json_int *v, int negative, uint64_t bits)
{
	return v->negative == negative && v->bits == bits;
}

/* The site and the arguments of event (t, i), as the source wrote them. */
static int event_matches(const struct dump_check *c, const struct dump_line *l, uint32_t t,
			 uint32_t i)
{
	const struct stress_run *run = c->run;
	if (strcmp(l->file, run->file) != 0)
		return 0;
	if (!stress_is_large(i))
		return strcmp(l->tag, "stress") == 0 && strcmp(l->func, "emit_small") == 0 &&
		       l->line == run->small_line && l->nargs == 2;
	return strcmp(l->tag, "stress6") == 0 && strcmp(l->func, "emit_large") == 0 &&
	       l->line == run->large_line && l->nargs == 6 &&
	       int_is(&l->args[2], 0, (uint32_t)~i) &&
	       int_is(&l->args[3], 1, (uint64_t)(-(int64_t)t - 1)) &&
	       int_is(&l->args[4], 0, (uint64_t)i << 20 | t) &&
	       int_is(&l->args[5], 1, (uint64_t)(-(int64_t)i));
}

/* Thread t and event i named by the first two arguments, or -1. */
static int event_of(const struct dump_check *c, const struct dump_line *l, int t, uint32_t *i)
{
	if (l->nargs < 2 || !int_is(&l->args[0], 0, (uint64_t)t) || l->args[1].negative ||
	    l->args[1].bits >= c->run->threads[t].events)
		return -1;
	*i = (uint32_t)l->args[1].bits;
	return event_matches(c, l, (uint32_t)t, *i) ? 0 : -1;
}

static void check_trace(struct dump_check *c, const struct dump_line *l, int t)
{
	struct tally *y = &c->tally[t];
	uint32_t i;
	if (!CHECK(event_of(c, l, t, &i) == 0)) {
		fprintf(stderr, "  line %llu: tid %lld tag \"%s\" func %s line %lld\n",
			(unsigned long long)c->lines, (long long)l->tid, l->tag, l->func,
			(long long)l->line);
		return;
	}
	CHECK_STR(l->thread, c->run->threads[t].name);
	CHECK(l->cpu >= -1 && l->cpu < 4096);
	CHECK(l->has_seq && l->has_ts);
	if (y->any) {
		if (!CHECK(i > y->last_i)) /* no duplicate, no reordering */
			return;
		CHECK(l->seq > y->last_seq);
		CHECK(l->ts_ns >= y->last_ts);
		y->gaps += i - y->last_i - 1;
	} else {
		y->first_i = i;
		y->any = 1;
	}
	y->last_i = i;
	y->last_seq = l->seq;
	y->last_ts = l->ts_ns;
	y->decoded++;
}

static void check_lost(struct dump_check *c, const struct dump_line *l, int t)
{
	if (t < 0) {
		/* tid 0: a loss the reader could give to no thread */
		if (CHECK(l->tid == 0))
			c->unattributed_lost += l->count;
		return;
	}
	struct tally *y = &c->tally[t];
	CHECK(l->count > 0);
	if (strcmp(l->reason, "overwritten") == 0)
		y->overwritten += l->count;
	else if (strcmp(l->reason, "dropped") == 0)
		y->dropped += l->count;
	else if (strcmp(l->reason, "torn") == 0)
		y->torn += l->count;
	else if (strcmp(l->reason, "damaged") == 0)
		y->damaged += l->count;
	else
		check_fail(__FILE__, __LINE__, "lost line with reason \"%s\"", l->reason);
}

/* A thread's last event, kept even when its ring no longer holds it. */
static void check_last_event(struct dump_check *c, const struct dump_line *l, int t)
{
	struct tally *y = &c->tally[t];
	uint32_t i;
	y->last_events++;
	if (CHECK(event_of(c, l, t, &i) == 0))
		y->last_event_i = i;
}

void dump_check_line(struct dump_check *c, const struct dump_line *l)
{
	c->lines++;
	int t = thread_of_tid(c, l->tid);
	int tail = strcmp(l->kind, "last_event") == 0;
	if (!tail && !CHECK(!c->tail_started)) /* last_event lines come at the end */
		return;
	c->tail_started |= tail;
	if (strcmp(l->kind, "lost") == 0) {
		check_lost(c, l, t);
		return;
	}
	if (!CHECK(t >= 0)) {
		fprintf(stderr, "  line %llu: %s of unknown tid %lld\n",
			(unsigned long long)c->lines, l->kind, (long long)l->tid);
		return;
	}
	if (strcmp(l->kind, "trace") == 0)
		check_trace(c, l, t);
	else if (tail)
		check_last_event(c, l, t);
	else
		check_fail(__FILE__, __LINE__, "line %llu: unknown kind \"%s\"",
			   (unsigned long long)c->lines, l->kind);
}

/* How many of a thread's events a fresh ring of its own keeps. */
static uint64_t expected_survivors(const struct stress_run *run, uint32_t events)
{
	uint64_t head = 0, kept = 0;
	if (run->mode == RINGTRACE_STREAM) {
		/* nobody drains: the ring fills once, then everything is dropped */
		for (uint32_t i = 0; i < events; i++) {
			unsigned n = stress_is_large(i) ? 2 : 1;
			if (head + n > run->ring_slots)
				break;
			head += n;
			kept++;
		}
		return kept;
	}
	uint64_t *start = malloc((size_t)events * sizeof(*start));
	for (uint32_t i = 0; i < events; i++) {
		start[i] = head;
		head += stress_is_large(i) ? 2 : 1;
	}
	/* the newest records whose first slot is still inside the last ring_slots */
	for (uint32_t i = events; i > 0 && start[i - 1] + run->ring_slots >= head; i--)
		kept++;
	free(start);
	return kept;
}

/*
 * In stream mode a thread that exits while its ring is full leaves drops
 * that no lost note in the ring covers; only the ring's own counter has
 * them.  When the ring passed between threads, the arena cannot say whose
 * they were, so there the accounting is exact for all threads together.
 * So in both modes when the file system filled: a thread that found no
 * room for a ring of its own takes the ring of one that exited, with that
 * one's drops.
 */
static int exact_per_thread(const struct stress_run *run)
{
	return !run->limited_room && (run->mode == RINGTRACE_FLIGHT || run->own_rings);
}

int dump_check_end(struct dump_check *c)
{
	const struct stress_run *run = c->run;
	uint64_t emitted = 0, decoded = 0, overwritten = 0, dropped = 0;
	for (uint32_t t = 0; t < run->nthreads; t++) {
		const struct tally *y = &c->tally[t];
		uint32_t events = run->threads[t].events;
		emitted += events;
		decoded += y->decoded;
		overwritten += y->overwritten;
		dropped += y->dropped;
		uint64_t accounted =
		    y->decoded + y->overwritten + y->dropped + y->torn + y->damaged;
		if (accounted != events && exact_per_thread(run))
			check_fail(
			    __FILE__, __LINE__,
			    "thread %u (tid %d): %u events, but %llu decoded + %llu "
			    "overwritten + %llu dropped + %llu torn + %llu damaged",
			    t, (int)run->threads[t].tid, events, (unsigned long long)y->decoded,
			    (unsigned long long)y->overwritten, (unsigned long long)y->dropped,
			    (unsigned long long)y->torn, (unsigned long long)y->damaged);
		CHECK_EQ(y->torn, 0);
		CHECK_EQ(y->damaged, 0);
		CHECK_EQ(y->gaps, 0); /* one unbroken run */
		if (run->limited_room) {
			CHECK_EQ(y->overwritten, 0);
			if (y->any)
				CHECK_EQ(y->first_i, 0);
		} else if (run->mode == RINGTRACE_FLIGHT) {
			CHECK_EQ(y->dropped, 0);
			if (y->any)
				CHECK_EQ(y->last_i, events - 1);
		} else {
			CHECK_EQ(y->overwritten, 0);
			if (y->any && run->own_rings)
				CHECK_EQ(y->first_i, 0);
		}
		if (run->own_rings && !run->limited_room)
			CHECK_EQ(y->decoded, expected_survivors(run, events));
		CHECK_EQ(y->last_events, 1);
		CHECK_EQ(y->last_event_i, events - 1);
	}
	if (run->limited_room && !CHECK(decoded > 0))
		fprintf(stderr, "  the file system filled, but no event at all was kept\n");
	if (exact_per_thread(run)) {
		CHECK_EQ(c->unattributed_lost, 0);
	} else if (decoded + dropped + c->unattributed_lost != emitted) {
		check_fail(__FILE__, __LINE__,
			   "%llu events, but %llu decoded + %llu dropped + %llu lost by no thread",
			   (unsigned long long)emitted, (unsigned long long)decoded,
			   (unsigned long long)dropped, (unsigned long long)c->unattributed_lost);
	}
	printf("%llu events: %llu decoded, %llu overwritten, %llu dropped, in %llu lines\n",
	       (unsigned long long)emitted, (unsigned long long)decoded,
	       (unsigned long long)overwritten, (unsigned long long)dropped,
	       (unsigned long long)c->lines);
	free(c->tally);
	free(c);
	return check_failure_count();
}
