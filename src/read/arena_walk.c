/*
 * arena_walk.c - decode a ring's window record by record (read/arena_walk.h).
 *
 * Steps 2 and 3 of reading a ring (read/arena_reader.c says all of them):
 * a slot starts a record only if it carries the low 32 bits of its own seq,
 * a record kind, a slot count that fits below head, continuation slots
 * that fit their positions, and (for an event) a valid site whose argument
 * count matches the slot count; anything else is skipped one slot at a
 * time, so damage costs only the slots it touched.  The record's full seq
 * comes from the ring's records counter and its low 32 bits, must fit its
 * position (every slot after it up to head belongs to a later record), and
 * must rise strictly along the window.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "format/records.h"
#include "read/arena_walk.h"

static const union rt_slot *slot_at(const struct rt_walk_source *src, uint64_t s)
{
	return &src->slots[(s - src->base) & src->mask];
}

_Static_assert(RT_RECORD_MAX_SLOTS == 2,
	       "trace and lost records take one or two slots (RT_TRACE_SLOTS, the LOST layout)");

static int slot_readable(const struct rt_walk_source *src, uint64_t s)
{
	if (s >= src->dense_from && s < src->head)
		return 1;
	uint64_t index = (s - src->base) & src->mask;
	return src->in_file ? rt_ring_view_has(&src->view, index) : index < src->readable;
}

/* Why the file does not hold slot s: past its end, or in a hole. */
static uint32_t slot_missing(const struct rt_walk_source *src, uint64_t s)
{
	return ((s - src->base) & src->mask) < src->readable ? RT_RUN_HOLE : RT_RUN_PAST_END;
}

/* Slots [s, s + n) did not decode: they join the run before them, or start one. */
static int add_run(struct rt_walk_runs *runs, const struct rt_walk *w, uint64_t s, uint64_t n,
		   uint32_t why, uint32_t site)
{
	struct rt_walk_run *last = runs->count ? &runs->runs[runs->count - 1] : NULL;
	/* slots the file does not hold are runs of their own: they have no bytes to show */
	int same_kind = last && ((last->reasons & RT_RUN_NO_BYTES) || (why & RT_RUN_NO_BYTES)
				     ? last->reasons == why
				     : 1);
	if (last && ((last->end == s && last->before == w->count && same_kind) ||
		     runs->count >= RT_RUN_MAX)) {
		last->end = s + n;
		if ((why & RT_RUN_BAD_SITE) && !(last->reasons & RT_RUN_BAD_SITE))
			last->site = site;
		else if ((why & RT_RUN_BAD_SITE) && site != last->site)
			last->other_sites = 1;
		last->reasons |= why;
		return 0;
	}
	if (runs->count == runs->capacity) {
		size_t capacity = runs->capacity ? runs->capacity * 2 : 8;
		struct rt_walk_run *bigger = realloc(runs->runs, capacity * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		runs->runs = bigger;
		runs->capacity = capacity;
	}
	struct rt_walk_run *r = &runs->runs[runs->count++];
	/* runs is NULL only while capacity is 0, and then it was just allocated */
	// NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker)
	memset(r, 0, sizeof(*r));
	r->first = s;
	r->end = s + n;
	r->before = w->count;
	r->reasons = why;
	r->site = site;
	r->damage = -1;
	r->counter_before = w->count ? w->last_counter : 0;
	return 0;
}

void rt_walk_runs_meet_item(struct rt_walk_runs *runs, size_t index, uint64_t counter)
{
	for (size_t i = runs->count; i > 0; i--) {
		struct rt_walk_run *r = &runs->runs[i - 1];
		if (r->before != index || r->has_after)
			break;
		r->counter_after = counter;
		r->has_after = 1;
	}
}

void rt_walk_begin(struct rt_walk *w, uint64_t from)
{
	memset(w, 0, sizeof(*w));
	w->from = from;
	w->slot = from;
	w->leading_end = from;
}

/*
 * Any record, and whatever does not decode.  A continuation slot at the
 * start of a window that lost the slots before it is the tail of an
 * overwritten record, not damage.
 */
int rt_walk_any(const struct rt_reader *rd, const struct rt_walk_source *src, struct rt_walk *w,
		struct rt_walk_runs *runs, struct rt_item *it, unsigned char *payload)
{
	const uint64_t head = src->head;
	const uint64_t records = src->records;
	const uint64_t newest = records - 1; /* seq of the newest committed record */
	const int alive = src->live;
	/* as few slots per record as the sites allow: the number check below stays strict */
	const uint64_t most =
	    rd->max_slots > RT_RECORD_MAX_SLOTS ? rd->max_slots : RT_RECORD_MAX_SLOTS;
	const uint64_t from = w->from;
	uint32_t payload_length;
	int rc;

	for (uint64_t s = w->slot; s < head;) {
		struct rt_slot_head first;
		struct rt_slot_cont second;
		uint32_t why, bad_site = 0;
		uint64_t skipped = 1; /* slots skipped at once: a record, or what the file lacks */
		if (!slot_readable(src, s)) {
			/*
			 * past the end: up to the ring's end (where its readable start
			 * follows) or head; in a hole: up to the data after it
			 */
			uint64_t index = (s - src->base) & src->mask;
			uint64_t left = src->mask + 1 - index;
			why = slot_missing(src, s);
			if (why == RT_RUN_HOLE &&
			    rt_ring_view_next(&src->view, index) < src->readable)
				left = rt_ring_view_next(&src->view, index) - index;
			skipped = left < head - s ? left : head - s;
			goto skip;
		}
		memcpy(&first, slot_at(src, s), sizeof(first));
		unsigned nslots = first.nslots;
		if (first.seq != (uint32_t)s) {
			why = RT_RUN_BAD_TAG;
			goto skip;
		}
		/* cont.index lies where head.nslots does */
		if (s == w->leading_end && from > 0 && first.kind == RT_REC_CONT &&
		    (s == from || first.nslots == w->leading_index + 1)) {
			/* the later slots of a record that began before the window */
			w->leading_index = first.nslots;
			w->leading_end = ++s;
			continue;
		}
		if (!rt_record_head_ok(&first, rd->long_records) || nslots > head - s ||
		    records == 0) {
			why = RT_RUN_BAD_RECORD;
			goto skip;
		}
		memset(&second, 0, sizeof(second));
		const int gather = payload && rt_record_has_payload(first.kind);
		payload_length = gather ? rt_log_payload_add(payload, 0, slot_at(src, s), 0) : 0;
		for (unsigned k = 1; k < nslots; k++) {
			if (!slot_readable(src, s + k)) {
				why = slot_missing(src, s + k);
				goto skip;
			}
			const union rt_slot *cont = slot_at(src, s + k);
			memcpy(&second, cont, sizeof(second));
			if (second.seq != (uint32_t)(s + k)) {
				why = RT_RUN_BAD_TAG;
				goto skip;
			}
			if (!rt_record_cont_ok(&second, s, k)) {
				why = RT_RUN_BAD_RECORD;
				goto skip;
			}
			if (gather)
				payload_length =
				    rt_log_payload_add(payload, payload_length, cont, k);
		}
		if (first.kind != RT_REC_LOST) {
			const struct rt_site *site = rt_site_lookup(&rd->sites, first.site);
			if (!site || !rt_site_fits_record(site, first.kind, nslots)) {
				why = RT_RUN_BAD_SITE;
				bad_site = first.site;
				skipped =
				    nslots; /* the record is whole: only its site is not known */
				goto skip;
			}
		} else if (nslots != 2) {
			/* a LOST record carries its count in the continuation */
			why = RT_RUN_BAD_RECORD;
			goto skip;
		} else if (!rt_record_lost_count_ok(&second)) {
			why = RT_RUN_BAD_COUNT;
			goto skip;
		}

		/* full seq: the newest seq <= newest with these low 32 bits */
		uint64_t back = (uint32_t)((uint32_t)newest - first.record);
		uint64_t slots_after = head - s - nslots;
		/*
		 * Later records fill slots_after slots, 1..most slots each, so between
		 * ceil(slots_after / most) and slots_after of them follow, plus one more
		 * when a dead writer counted a record it never published.
		 */
		if (back > newest || back < (slots_after + most - 1) / most ||
		    (!alive && back > slots_after + 1)) {
			why = RT_RUN_BAD_NUMBER;
			goto skip;
		}
		uint64_t seq = newest - back;
		if (w->have_previous && seq <= w->previous_seq) {
			why = RT_RUN_BAD_NUMBER;
			goto skip;
		}

		rt_item_clear(it);
		rt_item_from_record(it, &first, &second);
		if (gather)
			it->log.length = payload_length;
		it->seq = seq;
		rt_walk_gave(w, runs, s, nslots, seq, it->counter);
		return 1;
	skip:
		if (runs && (rc = add_run(runs, w, s, skipped, why, bad_site)) != 0) {
			w->slot = s;
			return rc;
		}
		s += skipped;
	}
	w->slot = head > w->slot ? head : w->slot;
	return 0;
}

struct rt_walk_run *rt_walk_run_before(const struct rt_walk_runs *runs, size_t position)
{
	size_t lo = 0, hi = runs->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (runs->runs[mid].before < position)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < runs->count && runs->runs[lo].before == position ? &runs->runs[lo] : NULL;
}
