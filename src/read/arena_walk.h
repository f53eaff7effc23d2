/*
 * arena_walk.h - the records of one ring's window, decoded one at a time.
 *
 * The arena reader walks a ring twice: once to check and count it (what
 * damage, what losses, how many events each thread has), keeping runs and
 * totals but no item; then as often as a reading command asks, through a
 * cursor (read/arena_cursor.h) that decodes a bounded window of items at a
 * time.  Both walks go through rt_walk_next(), so a record is an item, a
 * loss or damage by the very same checks, and a walk stopped anywhere can
 * go on later from a copy of its state as if it never stopped.
 *
 * Internal to the arena reader and its cursors.
 */
#ifndef RT_READ_ARENA_WALK_H
#define RT_READ_ARENA_WALK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/records.h"
#include "read/arena_reader.h"
#include "read/entry_checks.h"

/*
 * The slots a walk reads: slot s is at slots[(s - base) & mask].  Either the
 * ring itself in the mapping (in_file: base 0, mask ring_slots - 1; view says
 * which slots the file holds), or a private copy of a live ring's window
 * (base window_start, mask all ones, every slot readable).
 */
struct rt_walk_source {
	const union rt_slot *slots;
	uint64_t base;
	uint64_t mask;
	uint64_t readable;
	int in_file;
	struct rt_ring_view view;
	uint64_t head;	  /* the walk ends here */
	uint64_t records; /* the ring's records counter, as the window was taken */
	int live;	  /* the writer may still be writing (its counters move) */
	/*
	 * Slots [dense_from, head) are all readable (the copy, or data the file
	 * holds without a hole): none of them needs asking.  UINT64_MAX: ask
	 * for each.
	 */
	uint64_t dense_from;
};

/* Where a walk stands; copying it keeps the place. */
struct rt_walk {
	uint64_t from; /* where the walk began */
	uint64_t slot; /* the next slot to look at */
	uint64_t previous_seq;
	int have_previous;
	uint64_t leading_end; /* continuation slots at the window's start end here */
	unsigned leading_index;
	size_t count;		/* items given so far */
	uint64_t last_counter;	/* of the last item given */
	uint64_t first_seq;	/* of the first item given, once count > 0 */
	uint64_t decoded_slots; /* slots the items given took */
};

/* Slots of a window that did not decode, and why (bits of rt_walk_run.reasons). */
#define RT_RUN_BAD_TAG 0x1u    /* a seq tag that does not fit its position */
#define RT_RUN_BAD_RECORD 0x2u /* a bad record kind, slot count or continuation slot */
#define RT_RUN_BAD_SITE 0x4u   /* an event of a site the table does not hold */
#define RT_RUN_BAD_NUMBER 0x8u /* a record number that does not fit its place */
#define RT_RUN_PAST_END 0x10u  /* past the end of a truncated file */
#define RT_RUN_HOLE 0x20u      /* in a hole of the file: never written, not read */
#define RT_RUN_NO_BYTES (RT_RUN_PAST_END | RT_RUN_HOLE)
#define RT_RUN_BAD_COUNT 0x40u /* a LOST record whose count is no count (RT_COUNT_MAX) */
/* Runs kept per ring; past it the last one grows (its region says "and more"). */
#define RT_RUN_MAX 4096u

struct rt_walk_run {
	uint64_t first, end; /* slot seqs [first, end) */
	size_t before;	     /* the ring's items decoded before it */
	uint32_t reasons;    /* RT_RUN_* */
	uint32_t site;	     /* RT_RUN_BAD_SITE: the first such site */
	int other_sites;     /* RT_RUN_BAD_SITE: events of other sites too */
	long damage;	     /* its region in rd->damage once reported, else -1 */
	uint64_t events;     /* records lost in it, as the owners' accounts say */
	int referenced;	     /* a loss names it */
	/* the counters of the items around it: item before - 1, and item before */
	uint64_t counter_before, counter_after;
	int has_after;
};

struct rt_walk_runs {
	struct rt_walk_run *runs;
	size_t count, capacity;
};

/* A ring the reader checked, kept for its threads' cursors. */
struct rt_reader_ring_walk {
	struct rt_walk_source source;
	union rt_slot *copy; /* the live window source reads, freed with the reader */
};

/* Where a thread's items lie: its cursor walks source from start over [first, end). */
struct rt_thread_walk {
	uint32_t source; /* index in rd->walks.sources, UINT32_MAX: no ring read */
	struct rt_walk start;
	uint64_t first, end;
};

/* A walk of src from slot `from`. */
void rt_walk_begin(struct rt_walk *w, uint64_t from);

/*
 * Where a walk stood just before it gave an item, in three words, where
 * the whole state is ten.  A walk of the same source from the same `from`
 * resumed there gives that item and those after it by the very same checks
 * (the continuation slots that open a window are behind it but when it is
 * the first item, and then it stands at `from`); only its counts start
 * over, which only the walk that keeps runs reads.
 */
struct rt_walk_mark {
	uint64_t slot;
	uint64_t previous_seq;
	int have_previous;
};

static inline struct rt_walk_mark rt_walk_mark_of(const struct rt_walk *w)
{
	struct rt_walk_mark m = {w->slot, w->previous_seq, w->have_previous};
	return m;
}

static inline void rt_walk_resume(struct rt_walk *w, uint64_t from, const struct rt_walk_mark *m)
{
	rt_walk_begin(w, from);
	w->slot = m->slot;
	w->previous_seq = m->previous_seq;
	w->have_previous = m->have_previous;
}

/* The general walk behind rt_walk_next(): any record, and whatever does not decode. */
int rt_walk_any(const struct rt_reader *rd, const struct rt_walk_source *src, struct rt_walk *w,
		struct rt_walk_runs *runs, struct rt_item *it, unsigned char *payload);

/* The runs that end where item `index` begins learn its counter. */
void rt_walk_runs_meet_item(struct rt_walk_runs *runs, size_t index, uint64_t counter);

/* The walk gives the item it just decoded, of nslots slots starting at slot s. */
static inline __attribute__((always_inline)) void rt_walk_gave(struct rt_walk *w,
							       struct rt_walk_runs *runs,
							       uint64_t s, unsigned nslots,
							       uint64_t seq, uint64_t counter)
{
	if (runs && runs->count)
		rt_walk_runs_meet_item(runs, w->count, counter);
	if (w->count == 0)
		w->first_seq = seq;
	w->count++;
	w->last_counter = counter;
	w->previous_seq = seq;
	w->have_previous = 1;
	w->decoded_slots += nslots;
	w->slot = s + nslots;
}

/*
 * Nearly every record is a trace event, whole, in a window the file holds
 * without a hole (or in the copy of a live one).  Such a record is decoded
 * here by the checks of the general walk (rt_walk_any), in its order,
 * written for that one kind: 1 with the item, as the general walk would
 * give it; 0 for anything else, nothing touched: the general walk decides
 * it, by all its checks.  The record's number is checked by a
 * multiplication where the general walk divides (a division per record
 * was a tenth of the walk).
 */
static inline __attribute__((always_inline)) int
rt_walk_trace(const struct rt_reader *rd, const struct rt_walk_source *src, struct rt_walk *w,
	      struct rt_walk_runs *runs, struct rt_item *it)
{
	const uint64_t s = w->slot;
	const uint64_t head = src->head;
	const uint64_t records = src->records;
	if (s < src->dense_from || s >= head || records == 0)
		return 0;
	struct rt_slot_head first;
	memcpy(&first, &src->slots[(s - src->base) & src->mask], sizeof(first));
	const unsigned nslots = first.nslots;
	/* the tag, a trace record's kind and size (never a leading continuation) */
	if (first.seq != (uint32_t)s || first.kind != RT_REC_TRACE || nslots < 1 ||
	    nslots > RT_RECORD_MAX_SLOTS || nslots > head - s)
		return 0;
	struct rt_slot_cont second;
	if (nslots == 2) {
		memcpy(&second, &src->slots[(s + 1 - src->base) & src->mask], sizeof(second));
		if (!rt_record_cont_ok(&second, s, 1))
			return 0;
	} else {
		memset(&second, 0, sizeof(second));
	}
	const struct rt_site *site = rt_site_lookup(&rd->sites, first.site);
	if (!site || !rt_site_fits_record(site, RT_REC_TRACE, nslots))
		return 0;
	/* the record's number, as rt_walk_any checks it: back * most < slots_after is back < ceil
	 */
	const uint64_t newest = records - 1;
	const uint64_t most =
	    rd->max_slots > RT_RECORD_MAX_SLOTS ? rd->max_slots : RT_RECORD_MAX_SLOTS;
	const uint64_t back = (uint32_t)((uint32_t)newest - first.record);
	const uint64_t slots_after = head - s - nslots;
	if (slots_after > UINT64_MAX - most || back > newest || back * most < slots_after ||
	    (!src->live && back > slots_after + 1))
		return 0;
	const uint64_t seq = newest - back;
	if (w->have_previous && seq <= w->previous_seq)
		return 0;
	/* every byte of the item, as rt_item_from_record() fills a cleared one */
	it->counter = first.counter;
	it->seq = seq;
	it->tid = 0;
	it->thread = 0;
	it->site = first.site;
	it->kind = RT_ITEM_TRACE;
	it->flags = RT_ITEM_TIMED;
	it->cpu = first.cpu;
	it->args.a32[0] = first.a0;
	it->args.a32[1] = first.a1;
	it->args.a32[2] = second.a2;
	it->args.a32[3] = second.a3;
	it->args.a64[0] = second.a4;
	it->args.a64[1] = second.a5;
	rt_walk_gave(w, runs, s, nslots, seq, first.counter);
	return 1;
}

/*
 * Decode the next record of the walk into *it: kind, counter, cpu, site,
 * arguments or loss, seq (thread and tid are the caller's).  A log or I/O
 * record's payload goes to payload (room for RT_LOG_PAYLOAD_MAX bytes), its
 * length to it->log.length, and it->log.payload is left NULL for the caller
 * to point at its own copy; with payload NULL it is not gathered.  Slots
 * that do not decode are skipped, noted in runs when runs is not NULL.
 * Returns 1 with an item, 0 at head, -ENOMEM.
 *
 * Inline where it is called: the common record (rt_walk_trace) costs no
 * call.
 */
static inline int rt_walk_next(const struct rt_reader *rd, const struct rt_walk_source *src,
			       struct rt_walk *w, struct rt_walk_runs *runs, struct rt_item *it,
			       unsigned char *payload)
{
	if (rt_walk_trace(rd, src, w, runs, it))
		return 1;
	return rt_walk_any(rd, src, w, runs, it, payload);
}

/* The run of undecoded slots just before the ring's item `position`, or NULL. */
struct rt_walk_run *rt_walk_run_before(const struct rt_walk_runs *runs, size_t position);

#endif /* RT_READ_ARENA_WALK_H */
