/*
 * test_merge.c - read/merge.c against a sort of the same items: sources of
 * random items with many equal ones, some handed over whole and some a few
 * items at each refill, must come out in rt_item_compare order, equal items
 * by their source's key and then in their source's order.  Runs of one
 * source (a thread running alone) and tight interleavings both occur.
 *
 * The items come one at a time (rt_merge_next) or a run at a time
 * (rt_merge_run), whole or in part (rt_merge_took): the same order each way.
 *
 * And event/event.c's thread names: an event's name is the thread's, cut
 * at its first NUL or at RT_NAME_MAX bytes, whatever the bytes after it,
 * and a length kept with a name that does not end where the name does is
 * not believed.  And its own event (rt_event_build_kept), which a trace
 * event after a trace event does not clear: over random items of every
 * kind, it must equal an event built afresh into storage full of garbage.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/check.h"
#include "event/event.h"
#include "read/merge.h"

#define SOURCES_MAX 9
#define ITEMS_MAX 600

static uint64_t next_random(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

struct chunked {
	const struct rt_item *items;
	size_t count, at, chunk;
};

/* A source that hands over its items chunk at a time (0 items between: never). */
static size_t refill_chunk(void *state, const struct rt_item **items)
{
	struct chunked *c = state;
	size_t n = c->count - c->at < c->chunk ? c->count - c->at : c->chunk;
	*items = c->items + c->at;
	c->at += n;
	return n;
}

/* Where an item came from, for the reference order. */
struct tagged {
	struct rt_item item;
	uint32_t key;
	size_t index;
};

static int compare_tagged(const void *a, const void *b)
{
	const struct tagged *x = a, *y = b;
	int c = rt_item_compare(&x->item, &y->item);
	if (c)
		return c;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int compare_items(const void *a, const void *b)
{
	return rt_item_compare(a, b);
}

/* How a round takes the merge's items. */
enum take {
	TAKE_ONE,	 /* rt_merge_next */
	TAKE_RUNS,	 /* rt_merge_run, every run whole */
	TAKE_SOME_OF_RUN /* rt_merge_run, then rt_merge_took of a random part of it (0 too) */
};

/*
 * The next item the merge gives, taken as `take` says: a run's items are
 * handed out one by one from *run (count left in *left) before the merge
 * is asked again.
 */
static const struct rt_item *take_next(struct rt_merge *m, enum take take, uint64_t *rng,
				       const struct rt_item **run, size_t *left)
{
	if (take == TAKE_ONE)
		return rt_merge_next(m);
	if (*left == 0) {
		size_t n = rt_merge_run(m, run);
		if (n == 0)
			return NULL;
		if (take == TAKE_SOME_OF_RUN) {
			size_t took = next_random(rng) % (n + 1);
			rt_merge_took(m, took);
			if (took == 0) {
				/* none taken: the same run again, whole or not */
				n = rt_merge_run(m, run);
				if (!CHECK(n > 0))
					return NULL;
			} else {
				n = took;
			}
		}
		*left = n;
	}
	(*left)--;
	return (*run)++;
}

/* One round: k sources of random sizes, counters from a narrow or a wide range. */
static void merge_round(uint64_t *rng, size_t k, int narrow, int runs, enum take take)
{
	static struct rt_item items[SOURCES_MAX][ITEMS_MAX];
	static struct tagged all[SOURCES_MAX * ITEMS_MAX];
	struct rt_merge_source sources[SOURCES_MAX];
	struct chunked chunks[SOURCES_MAX];
	size_t total = 0;
	memset(sources, 0, sizeof(sources));
	/* keys out of order with the sources (a shuffle): equal items go by key */
	uint32_t keys[SOURCES_MAX];
	for (size_t s = 0; s < k; s++)
		keys[s] = (uint32_t)s;
	for (size_t s = k; s > 1; s--) {
		size_t j = next_random(rng) % s;
		uint32_t t = keys[s - 1];
		keys[s - 1] = keys[j];
		keys[j] = t;
	}
	for (size_t s = 0; s < k; s++) {
		size_t n = next_random(rng) % ITEMS_MAX;
		uint64_t base = runs ? s * 1000000 : 0;
		for (size_t i = 0; i < n; i++) {
			struct rt_item *it = &items[s][i];
			memset(it, 0, sizeof(*it));
			it->counter =
			    base + (narrow ? next_random(rng) % 40 : next_random(rng) % 100000);
			it->tid = (int32_t)(next_random(rng) % 3);
			it->seq = next_random(rng) % 4;
			it->site =
			    (uint32_t)i; /* its place in the source, to tell equal items apart */
		}
		qsort(items[s], n, sizeof(items[s][0]), compare_items);
		uint32_t key = keys[s];
		for (size_t i = 0; i < n; i++) {
			all[total].item = items[s][i];
			all[total].key = key;
			all[total].index = i;
			total++;
		}
		sources[s].key = key;
		if (next_random(rng) % 2) {
			sources[s].items = items[s];
			sources[s].count = n;
		} else {
			chunks[s] = (struct chunked){items[s], n, 0, 1 + next_random(rng) % 7};
			sources[s].refill = refill_chunk;
			sources[s].state = &chunks[s];
		}
	}
	qsort(all, total, sizeof(all[0]), compare_tagged);
	struct rt_merge m;
	if (!CHECK(rt_merge_init(&m, sources, k) == 0))
		return;
	size_t n = 0, left = 0;
	const struct rt_item *it, *run = NULL;
	int wrong = 0;
	while ((it = take_next(&m, take, rng, &run, &left)) != NULL) {
		if (n >= total) {
			n++;
			continue;
		}
		const struct tagged *want = &all[n++];
		if (!wrong && !CHECK(rt_item_compare(it, &want->item) == 0 && m.key == want->key &&
				     it->site == want->item.site)) {
			wrong = 1;
			fprintf(stderr,
				"  item %zu of %zu: counter %llu key %u, want %llu key %u\n", n - 1,
				total, (unsigned long long)it->counter, m.key,
				(unsigned long long)want->item.counter, want->key);
		}
	}
	CHECK_EQ(n, total);
	rt_merge_free(&m);
}

static void merge_orders(void)
{
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 1800; round++) {
		size_t k = 1 + (size_t)(next_random(&rng) % SOURCES_MAX);
		merge_round(&rng, k, round % 3 == 0, round % 5 == 1, (enum take)(round % 3));
	}
}

/*
 * The thread name length of an event of thread t, the one thread of a
 * reader: the event is built and checked to name t.
 */
static size_t built_name_length(struct rt_reader_thread *t)
{
	struct rt_reader rd;
	memset(&rd, 0, sizeof(rd));
	rd.threads = t;
	rd.thread_count = 1;
	const struct rt_reader *readers[1] = {&rd};
	struct rt_event_builder *b = rt_event_builder_new(readers, 1, NULL, 0);
	if (!CHECK(b != NULL))
		return SIZE_MAX;
	struct rt_item item;
	memset(&item, 0, sizeof(item));
	item.kind = RT_ITEM_TRACE;
	item.flags = RT_ITEM_TIMED;
	item.thread = 0;
	item.cpu = RT_CPU_UNKNOWN;
	struct rt_event ev;
	rt_event_build(b, 0, &item, &ev);
	CHECK_EQ(ev.tid, t->tid);
	CHECK(ev.thread.s == t->name);
	rt_event_builder_free(b);
	return ev.thread.length;
}

/* An event of a thread whose name is name (RT_NAME_MAX bytes, as its table holds them). */
static void name_of_thread(const char name[RT_NAME_MAX], size_t want)
{
	struct rt_reader_thread thread;
	memset(&thread, 0, sizeof(thread));
	thread.tid = 77;
	memcpy(thread.name, name, RT_NAME_MAX);
	CHECK_EQ(built_name_length(&thread), want);
}

/* A name set as the readers set it, with its length; a length that does not fit is measured. */
static void kept_name_lengths(void)
{
	struct rt_reader_thread thread;
	memset(&thread, 0, sizeof(thread));
	thread.tid = 78;
	const char long_name[RT_NAME_MAX] = "worker-with-a-lo"; /* sixteen bytes, no NUL */
	rt_reader_thread_name(&thread, long_name);
	CHECK_EQ(thread.name_length, RT_NAME_MAX - 1);
	CHECK_EQ(built_name_length(&thread), RT_NAME_MAX - 1);
	/* a length short of the name (a thread filled without the helper): measured */
	const char short_name[RT_NAME_MAX] = "ab";
	rt_reader_thread_name(&thread, short_name);
	CHECK_EQ(thread.name_length, 2);
	thread.name_length = 1;
	CHECK_EQ(built_name_length(&thread), 2);
	thread.name_length = 0;
	CHECK_EQ(built_name_length(&thread), 2);
	/* one past its end: measured */
	thread.name_length = 3;
	CHECK_EQ(built_name_length(&thread), 2);
}

static void thread_names(void)
{
	for (size_t length = 0; length <= RT_NAME_MAX; length++) {
		/* bytes after the NUL of every value: none may count */
		for (unsigned fill = 0; fill < 256; fill += 51) {
			char name[RT_NAME_MAX];
			memset(name, (int)fill, sizeof(name));
			for (size_t i = 0; i < length; i++)
				name[i] = (char)(0x80 | (i * 37 % 127) | 1);
			if (length < RT_NAME_MAX)
				name[length] = 0;
			name_of_thread(name, length);
		}
	}
}

/* A site of kind with nargs arguments (signed: the odd ones), valid. */
static struct rt_site site_of(uint8_t kind, uint8_t nargs)
{
	struct rt_site site;
	memset(&site, 0, sizeof(site));
	site.valid = 1;
	site.kind = kind;
	site.nargs = nargs;
	site.signed_args = (uint8_t)(0x2a & ((1u << nargs) - 1));
	site.tag = site.file = site.func = site.file_base = "";
	return site;
}

/* An item of every kind and flag the builder tells apart, at random. */
static struct rt_item random_item(uint64_t *rng, uint32_t site_count, uint64_t *counter)
{
	struct rt_item item;
	memset(&item, 0, sizeof(item));
	uint64_t r = next_random(rng);
	*counter += r % 50;
	item.counter = *counter;
	item.seq = r >> 40;
	item.thread = (uint32_t)(r >> 8) % 3; /* 2: no thread the reader knows */
	item.tid = 900 + (int32_t)item.thread;
	item.cpu = r & 0x10 ? RT_CPU_UNKNOWN : (uint16_t)(r >> 20 & 7);
	item.flags = RT_ITEM_TIMED;
	for (unsigned i = 0; i < 4; i++)
		item.args.a32[i] = (uint32_t)next_random(rng);
	item.args.a64[0] = next_random(rng);
	item.args.a64[1] = next_random(rng);
	switch (r >> 32 & 15) {
	case 0:
		item.kind = RT_ITEM_LOSS;
		item.loss.count = r >> 50;
		item.loss.reason = RT_LOSS_DROPPED;
		item.loss.last_counter = r & 1 ? *counter : 0;
		item.flags = r & 2 ? RT_ITEM_TIMED : 0;
		break;
	case 1:
		item.kind = RT_ITEM_LOG;
		item.site = (uint32_t)(r >> 4) % (site_count + 1);
		/* no payload (the arguments' words share its place): a damaged message */
		item.log.payload = NULL;
		item.log.length = 0;
		break;
	case 2:
		item.kind = RT_ITEM_IO;
		item.log.payload = NULL;
		item.log.length = 0;
		break;
	default:
		item.kind = RT_ITEM_TRACE;
		/* one past the table: a site that is not known */
		item.site = (uint32_t)(r >> 4) % (site_count + 1);
		if ((r & 0x300) == 0x300)
			item.flags |= RT_ITEM_NO_SITE;
		if ((r & 0xc00) == 0xc00)
			item.flags |= RT_ITEM_NO_OWNER;
		if ((r & 0x3000) == 0x3000)
			item.flags |= RT_ITEM_NO_SEQ;
		if (r & 0x4000)
			item.flags |= RT_ITEM_WIDE;
		break;
	}
	return item;
}

/* The builder's own event against one built afresh, over items of every kind in random order. */
static void kept_events(void)
{
	struct rt_site sites[] = {
	    site_of(RT_SITE_TRACE, 0), site_of(RT_SITE_TRACE, 1), site_of(RT_SITE_TRACE, 2),
	    site_of(RT_SITE_TRACE, 6), site_of(RT_SITE_BEGIN, 1), site_of(RT_SITE_END, 0),
	    site_of(RT_SITE_ENTER, 0), site_of(RT_SITE_EXIT, 0),  site_of(RT_SITE_LOG, 0),
	};
	struct rt_reader_thread threads[2];
	memset(threads, 0, sizeof(threads));
	const char names[2][RT_NAME_MAX] = {"first", "second"};
	threads[0].tid = 900;
	rt_reader_thread_name(&threads[0], names[0]);
	threads[1].tid = 901;
	rt_reader_thread_name(&threads[1], names[1]);
	struct rt_reader rd;
	memset(&rd, 0, sizeof(rd));
	rd.threads = threads;
	rd.thread_count = 2;
	rd.sites.sites = sites;
	rd.sites.count = (uint32_t)(sizeof(sites) / sizeof(sites[0]));
	rd.header.pid = 4242;
	memcpy(rd.header.program, "kept", 5);
	const struct rt_reader *readers[1] = {&rd};
	struct rt_event_builder *kept = rt_event_builder_new(readers, 1, NULL, 0);
	struct rt_event_builder *fresh = rt_event_builder_new(readers, 1, NULL, 0);
	if (!CHECK(kept && fresh))
		return;
	rt_event_builder_leave_names(kept);
	rt_event_builder_leave_names(fresh);
	uint64_t rng = 0x6b657074, counter = 1000;
	unsigned trace_after_trace = 0, kinds_seen = 0;
	enum rt_event_kind before = RT_EVENT_LOST;
	for (int i = 0; i < 20000; i++) {
		const struct rt_item item = random_item(&rng, rd.sites.count, &counter);
		const struct rt_event *k = rt_event_build_kept(kept, 0, &item);
		struct rt_event f;
		memset(&f, 0xa5, sizeof(f));
		rt_event_build(fresh, 0, &item, &f);
		kinds_seen |= 1u << k->kind;
		trace_after_trace += k->kind == RT_EVENT_TRACE && before == RT_EVENT_TRACE;
		before = k->kind;
		/* a message is rendered into each builder's own buffer: the same text */
		struct rt_event a = *k;
		if (!CHECK(a.msg.length == f.msg.length &&
			   (a.msg.length == 0 || memcmp(a.msg.s, f.msg.s, a.msg.length) == 0)))
			break;
		a.msg.s = f.msg.s = NULL;
		/* all but the I/O call, which only an I/O event has (and both clear then) */
		if (!CHECK(memcmp(&a, &f, offsetof(struct rt_event, io)) == 0)) {
			fprintf(stderr,
				"kept_events: item %d (kind %u, flags %#x, site %u) differs\n", i,
				(unsigned)item.kind, (unsigned)item.flags, (unsigned)item.site);
			break;
		}
	}
	/* every kind, and many trace events after trace events (the ones not cleared) */
	CHECK_EQ(kinds_seen, (1u << RT_EVENT_TRACE) | (1u << RT_EVENT_LOG) | (1u << RT_EVENT_IO) |
				 (1u << RT_EVENT_LOST) | (1u << RT_EVENT_ENTER) |
				 (1u << RT_EVENT_EXIT));
	CHECK(trace_after_trace > 5000);
	rt_event_builder_free(kept);
	rt_event_builder_free(fresh);
}

int main(void)
{
	merge_orders();
	thread_names();
	kept_name_lengths();
	kept_events();
	if (check_failure_count()) {
		fprintf(stderr, "test_merge: %d checks failed\n", check_failure_count());
		return 1;
	}
	printf("test_merge: ok\n");
	return 0;
}
