/*
 * arena_reader_rings.c - the rings of an arena: each window captured, walked,
 * its records given to the threads that own them, and what is missing counted
 * as losses.
 *
 * (Part of read/arena_reader.h; the reader's private parts are
 * read/arena_reader_private.h.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "read/arena_reader_private.h"

/* Records missing between two items of one owner: [expected, seq) before item position. */
struct gap {
	size_t position;
	uint64_t expected, seq, counter;
};

static int compare_owners(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;
	if (x->thread->ring != y->thread->ring)
		return x->thread->ring < y->thread->ring ? -1 : 1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->thread->entry < y->thread->entry ? -1 : x->thread->entry > y->thread->entry;
}

/*
 * Ring's descriptor: in the file when the file holds it, else in *copy
 * with its holes as zeros (a ring never claimed), not read.
 */
const struct rt_ring_desc *rt_arena_ring_desc(const struct rt_reader *rd, uint32_t ring,
					      struct rt_ring_desc *copy)
{
	return rt_file_data_at(rd->data, rd->file, rt_layout_ring_desc_offset(&rd->header, ring),
			       sizeof(*copy), copy);
}

const struct rt_ring_desc *rt_reader_ring_desc(const struct rt_reader *rd, uint32_t ring,
					       struct rt_ring_desc *copy)
{
	return rt_arena_ring_desc(rd, ring, copy);
}

uint32_t rt_reader_next_ring(const struct rt_reader *rd, uint32_t ring)
{
	const struct rt_arena_header *h = &rd->header;
	return (uint32_t)rt_file_data_next_entry(rd->data, h->ring_desc_offset,
						 sizeof(struct rt_ring_desc), ring, h->ring_count);
}

static const union rt_slot *ring_slots_of(const struct rt_reader *rd, uint32_t ring)
{
	return (const union rt_slot *)(rd->file + rt_layout_ring_offset(&rd->header, ring));
}

/* The ring's slots as the file holds them: readable from its start, less its holes. */
static struct rt_ring_view ring_view(const struct rt_reader *rd, uint32_t ring, uint64_t readable)
{
	struct rt_ring_view v = {ring_slots_of(rd, ring), rt_layout_ring_slots(&rd->header),
				 readable, rd->data, rt_layout_ring_offset(&rd->header, ring)};
	return v;
}

/*
 * Where the slots of [from, head) that the file holds without a gap up to
 * head begin: from when it holds them all, head when it does not hold the
 * slot before head.  Its time follows the runs of data, not the slots.
 */
uint64_t rt_arena_held_from(const struct rt_reader *rd, uint32_t ring, uint64_t readable,
			    uint64_t from, uint64_t head)
{
	const struct rt_ring_view v = ring_view(rd, ring, readable);
	uint64_t start = from;
	for (uint64_t s = from; s < head;) {
		uint64_t index = s & (v.ring_slots - 1);
		uint64_t n = v.ring_slots - index < head - s ? v.ring_slots - index : head - s;
		for (uint64_t i = index; i < index + n;) {
			uint64_t next = rt_ring_view_next(&v, i);
			if (next >= index + n) {
				start = s + n; /* a gap to the part's end */
				break;
			}
			if (next > i)
				start = s + (next - index);
			uint64_t data_end;
			rt_file_data_next(rd->data, v.offset + next * RT_SLOT_SIZE,
					  v.offset + (index + n) * RT_SLOT_SIZE, &data_end);
			i = (data_end - v.offset) / RT_SLOT_SIZE;
			if (i <= next)
				i = next + 1;
		}
		s += n;
	}
	return start < head ? start : head;
}

/*
 * A dead writer's counters must fit each other and the slots
 * (read/entry_checks.h).  When they do not, the descriptor is a damaged
 * region and the counters are rebuilt from the slots; when the slots do not
 * say either, the ring is read as empty.  Its drop counters are not
 * believed either then.
 */
static int check_counters(struct rt_reader *rd, struct ring_snapshot *snap)
{
	const struct rt_ring_view view = ring_view(rd, snap->ring, snap->readable);
	struct rt_ring_counters c = {snap->head, snap->reserve, snap->records}, from;
	char why[128];
	if (rt_ring_counters_ok(&c, &view, rd->long_records, why, sizeof(why)))
		return 0;
	int rebuilt = rt_ring_counters_from_slots(&view, rd->long_records, &from);
	uint64_t at = rt_layout_ring_desc_offset(&rd->header, snap->ring);
	long index =
	    rebuilt ? rt_damage_add(&rd->damage, RT_DAMAGE_RING_DESC, RT_DAMAGE_UNPARSED,
				    snap->ring, at, sizeof(struct rt_ring_desc),
				    "ring %u descriptor: %s: head %llu and records %llu rebuilt "
				    "from its slots",
				    snap->ring, why, (unsigned long long)from.head,
				    (unsigned long long)from.records)
		    : rt_damage_add(&rd->damage, RT_DAMAGE_RING_DESC, RT_DAMAGE_UNPARSED,
				    snap->ring, at, sizeof(struct rt_ring_desc),
				    "ring %u descriptor: %s, and no slot says better: the ring "
				    "is not read",
				    snap->ring, why);
	if (index < 0)
		return -ENOMEM;
	snap->desc_damage = index;
	snap->dropped = snap->noted = 0;
	if (!rebuilt)
		memset(&from, 0, sizeof(from));
	snap->head = from.head;
	snap->reserve = from.reserve;
	snap->records = from.records;
	return 0;
}

/*
 * Copy a live ring's slots [window_start, head), then read reserve again
 * (step 4): walk_from moves past the slots the writer may have overwritten
 * while they were copied.
 */
int rt_arena_copy_window(const struct rt_reader *rd, const struct rt_ring_desc *d,
			 struct ring_snapshot *snap)
{
	const uint64_t ring_slots = rt_layout_ring_slots(&rd->header);
	const uint64_t head = snap->head;
	const union rt_slot *slots = ring_slots_of(rd, snap->ring);
	union rt_slot *copy = malloc((size_t)(head - snap->window_start) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	for (uint64_t s = snap->window_start; s < head;) {
		uint64_t index = s & (ring_slots - 1);
		uint64_t run = ring_slots - index < head - s ? ring_slots - index : head - s;
		memcpy(&copy[s - snap->window_start], &slots[index], (size_t)run * sizeof(*copy));
		s += run;
	}
	/* the copy is complete before reserve is read again */
	RT_FENCE_ACQUIRE();
	uint64_t now = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
	uint64_t cutoff = now > ring_slots ? now - ring_slots : 0;
	if (cutoff > snap->walk_from)
		snap->walk_from = cutoff < head ? cutoff : head;
	snap->copy = copy;
	return 0;
}

/*
 * Take a ring's control words and fix its window (step 1).  For a live
 * writer also copy the window at once (step 4), so that as little time as
 * possible passes between reading head and copying what lies below it.
 */
static int capture_ring(struct rt_reader *rd, uint32_t ring, struct ring_snapshot *snap)
{
	struct rt_ring_desc copy;
	const struct rt_ring_desc *d = rt_arena_ring_desc(rd, ring, &copy);
	const uint64_t ring_slots = rt_layout_ring_slots(&rd->header);
	const int alive = rd->writer == RT_WRITER_RUNNING;
	memset(snap, 0, sizeof(*snap));
	snap->ring = ring;
	snap->live = alive;
	snap->desc_damage = -1;
	snap->readable = rt_header_ring_slots_readable(&rd->header, rd->size, ring);
	/* acquire: the slots below head, and records, are at least as new as head */
	snap->head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
	snap->records = __atomic_load_n(&d->records, __ATOMIC_RELAXED);
	snap->reserve = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
	snap->dropped = __atomic_load_n(&d->dropped, __ATOMIC_RELAXED);
	snap->noted = __atomic_load_n(&d->noted, __ATOMIC_RELAXED);
	/* what waiting for the collector cost (stream mode): a count, never an event */
	const uint64_t waits = __atomic_load_n(&d->waits, __ATOMIC_RELAXED);
	if (waits < RT_COUNT_MAX)
		rd->ring_waits = add_saturating(rd->ring_waits, waits);
	const uint64_t desc = rt_layout_ring_desc_offset(&rd->header, ring);
	if ((snap->dropped >= RT_COUNT_MAX &&
	     rt_arena_absurd_count(rd, RT_DAMAGE_RING_DESC, ring,
				   desc + offsetof(struct rt_ring_desc, dropped), "ring", "dropped",
				   &snap->dropped)) ||
	    (snap->noted >= RT_COUNT_MAX &&
	     rt_arena_absurd_count(rd, RT_DAMAGE_RING_DESC, ring,
				   desc + offsetof(struct rt_ring_desc, noted), "ring", "noted",
				   &snap->noted)))
		return -ENOMEM;
	if (!alive) {
		int rc = check_counters(rd, snap);
		if (rc)
			return rc;
	}

	uint64_t head = snap->head, reserve = snap->reserve;
	/* a dead writer leaves at most one record between head and reserve */
	if (reserve < head || (!alive && reserve - head > rt_records_max_slots(rd->long_records)))
		reserve = head;
	else if (!alive && reserve != head)
		snap->torn = 1;
	snap->window_start = reserve > ring_slots ? reserve - ring_slots : 0;
	if (snap->window_start > head)
		snap->window_start = head; /* a live writer lapped us between two loads */
	snap->walk_from = snap->window_start;
	/*
	 * a ring the file cuts short, or with holes where records should be, is
	 * read where it lies (nobody writes such a file): the copy would cost
	 * what the window claims, not what the file holds
	 */
	if (!alive || head == snap->window_start || snap->readable < ring_slots ||
	    rt_arena_held_from(rd, ring, snap->readable, snap->window_start, head) !=
		snap->window_start)
		return 0;
	return rt_arena_copy_window(rd, d, snap);
}

/* Counter of the torn record: its own if it looks written, else the thread's newest. */
static uint64_t torn_counter(const struct rt_reader *rd, const struct ring_snapshot *snap,
			     const struct owner *o, unsigned *flags)
{
	const struct rt_ring_view view = ring_view(rd, snap->ring, snap->readable);
	struct rt_slot_head first;
	memset(&first, 0, sizeof(first));
	uint64_t index = snap->head & (view.ring_slots - 1);
	if (rt_ring_view_has(&view, index))
		memcpy(&first, &view.slots[index], sizeof(first));
	uint64_t newest = 0;
	if (o && o->count)
		newest = o->last_counter;
	else if (o)
		newest = o->thread->start_counter;
	*flags = RT_ITEM_TIMED;
	if (first.seq == (uint32_t)snap->head && rt_record_kind_ok(first.kind, rd->long_records) &&
	    first.counter >= newest)
		return first.counter;
	if (!newest)
		*flags = 0;
	return newest;
}

/* Records in a run of slots, as the records the ring decoded are sized (at least 1). */
static uint64_t run_records(const struct ring_snapshot *snap, const struct rt_walk_run *r)
{
	uint64_t slots = r->end - r->first;
	const uint64_t decoded = snap->walk.decoded_slots;
	uint64_t n = snap->item_count && decoded
			 ? (slots * snap->item_count + decoded / 2) / decoded
			 : (slots + 1) / 2;
	return n ? n : 1;
}

/*
 * The oldest record still in the window: the older ones were overwritten
 * (flight) or consumed (stream).  Without damage it is the first record
 * decoded; slots that did not decode at the start of the window held
 * records too, about as many as the slots' count says.
 */
static uint64_t window_oldest(struct ring_snapshot *snap)
{
	if (snap->walk_from == 0)
		return 0;
	const struct rt_walk_run *lead = rt_walk_run_before(&snap->runs, 0);
	uint64_t first = snap->item_count ? snap->walk.first_seq : snap->records;
	uint64_t lost = lead ? run_records(snap, lead) : 0;
	snap->oldest_estimated = lead != NULL;
	return lost < first ? first - lost : 0;
}

/* The damaged region of a run of slots: made the first time it is asked for. */
static long run_region(struct rt_reader *rd, struct ring_snapshot *snap, struct rt_walk_run *r)
{
	if (r->damage >= 0)
		return r->damage;
	/* events of a site whose entry is damaged: the damage is the entry, the slots are fine */
	if (r->reasons == RT_RUN_BAD_SITE && !r->other_sites && r->site > 0 &&
	    r->site < rd->sites.count) {
		r->damage =
		    rt_arena_site_region(rd, r->site, "not registered, but records name it");
		return r->damage;
	}
	const uint64_t ring_slots = rt_layout_ring_slots(&rd->header);
	const uint64_t base = rt_layout_ring_offset(&rd->header, snap->ring);
	char reasons[200] = "", *p = reasons;
	static const struct {
		uint32_t bit;
		const char *text;
	} names[] = {{RT_RUN_BAD_TAG, "seq tags that do not fit their slots"},
		     {RT_RUN_BAD_RECORD, "bad record kinds or sizes"},
		     {RT_RUN_BAD_SITE, "events of an unknown site"},
		     {RT_RUN_BAD_NUMBER, "record numbers out of place"},
		     {RT_RUN_PAST_END, "past the end of the file"},
		     {RT_RUN_HOLE, "a hole in the file where records should be: never written, "
				   "not read"},
		     {RT_RUN_BAD_COUNT, "a lost note whose count no ring reaches"}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(r->reasons & names[i].bit))
			continue;
		int n = snprintf(p, sizeof(reasons) - (size_t)(p - reasons), "%s%s",
				 p == reasons ? "" : ", ", names[i].text);
		if (n > 0 && (size_t)n < sizeof(reasons) - (size_t)(p - reasons))
			p += n;
		if ((names[i].bit & RT_RUN_BAD_SITE) &&
		    (size_t)(p - reasons) + 24 < sizeof(reasons))
			p += snprintf(p, 24, " %u%s", r->site, r->other_sites ? " and others" : "");
	}
	/* when: the records around it */
	uint64_t counter = 0;
	if (r->has_after)
		counter = r->counter_after;
	else if (r->before > 0)
		counter = r->counter_before;
	/* a run that wraps past the ring's end is two ranges of bytes */
	uint64_t first_index = r->first & (ring_slots - 1);
	uint64_t n = r->end - r->first;
	uint64_t parts[2][2] = {{first_index, n}, {0, 0}};
	if (first_index + n > ring_slots) {
		parts[0][1] = ring_slots - first_index;
		parts[1][1] = n - parts[0][1];
	}
	/* slots that are whole records of unknown sites parse: the damage is elsewhere */
	const uint32_t flags = (r->reasons & RT_RUN_NO_BYTES) || r->reasons == RT_RUN_BAD_SITE
				   ? 0
				   : RT_DAMAGE_UNPARSED;
	for (int k = 0; k < 2 && parts[k][1]; k++) {
		uint64_t first = k ? r->first + parts[0][1] : r->first;
		uint64_t at = base + parts[k][0] * RT_SLOT_SIZE;
		long index = rt_damage_add(
		    &rd->damage, RT_DAMAGE_SLOTS,
		    at + parts[k][1] * RT_SLOT_SIZE <= rd->size ? flags : 0, snap->ring, at,
		    parts[k][1] * RT_SLOT_SIZE, "ring %u slots %llu..%llu (seq %llu..%llu): %s%s",
		    snap->ring, (unsigned long long)parts[k][0],
		    (unsigned long long)(parts[k][0] + parts[k][1] - 1), (unsigned long long)first,
		    (unsigned long long)(first + parts[k][1] - 1), reasons,
		    k ? " (continued from the ring's end)" : "");
		if (index < 0)
			return index;
		struct rt_damage *d = &rd->damage.items[index];
		d->first_seq = first;
		d->end_seq = first + parts[k][1];
		d->counter = counter;
		d->timed = snap->item_count > 0;
		if (k == 0)
			r->damage = index;
	}
	return r->damage;
}

/*
 * Records [seq, seq + missing) of thread t are damaged: lost between the
 * ring's items position - 1 and position, where the run of slots that did
 * not decode (if the walk saw one) says which bytes.
 */
static int add_damaged(struct rt_reader *rd, struct ring_snapshot *snap, struct rt_reader_thread *t,
		       uint64_t missing, uint64_t counter, uint64_t seq, size_t position,
		       unsigned flags)
{
	if (!missing)
		return 0;
	if (t)
		t->counts.damaged = add_saturating(t->counts.damaged, missing);
	else
		rd->totals.damaged = add_saturating(rd->totals.damaged, missing);
	struct rt_walk_run *r = rt_walk_run_before(&snap->runs, position);
	long region = r ? run_region(rd, snap, r) : -1;
	if (r && region < 0)
		return -ENOMEM;
	if (region >= 0) {
		r->referenced = 1;
		r->events = add_saturating(r->events, missing);
		struct rt_damage *d = &rd->damage.items[region];
		d->events = add_saturating(d->events, missing);
		flags |= RT_ITEM_DAMAGE;
	}
	int rc =
	    rt_arena_add_loss(rd, t, RT_LOSS_DAMAGED, RT_NOTE_GAP, missing, counter, seq, flags);
	if (rc == 0 && region >= 0)
		rd->losses[rd->loss_count - 1].loss.damage = (uint32_t)region;
	return rc;
}

/*
 * One owner's share of a ring: count what is there, and turn what is
 * missing into losses (step 5): records older than the window's oldest
 * (oldest) were overwritten or consumed; those inside it that are not there
 * are damaged.  torn_here: the ring's torn record is this owner's (it may
 * already be counted in records).
 */
static int account_owner(struct rt_reader *rd, struct ring_snapshot *snap, const struct owner *o,
			 const struct gap *gaps, uint64_t oldest, int torn_here)
{
	struct rt_reader_thread *t = o->thread;
	struct rt_counts *c = &t->counts;
	const int alive = rd->writer == RT_WRITER_RUNNING;
	const int stream = rd->header.mode == RT_MODE_STREAM;
	uint64_t limit = o->end < snap->records ? o->end : snap->records;
	uint64_t gone_end = oldest < limit ? oldest : limit;
	uint64_t before_window = gone_end > o->first ? gone_end - o->first : 0;
	uint64_t expected = o->first > oldest ? o->first : oldest;
	size_t position = o->count ? o->begin : o->position;
	int rc;

	c->committed = limit > o->first ? limit - o->first : 0;
	if (torn_here && oldest >= limit && before_window)
		before_window--; /* the record it died in is counted, and was never written */
	c->present += o->present;
	c->dropped = add_saturating(c->dropped, o->dropped);
	if (o->count && o->first_seq > expected) {
		/* counted back from the window's first record over undecoded slots */
		unsigned estimated = o->begin == 0 && expected == oldest && snap->oldest_estimated
					 ? RT_ITEM_ESTIMATED
					 : 0;
		rc = add_damaged(rd, snap, t, o->first_seq - expected, o->first_counter, expected,
				 o->begin, estimated);
		if (rc)
			return rc;
	}
	/* the gaps between its items, in record order */
	for (size_t i = 0; i < o->gap_count; i++) {
		const struct gap *g = &gaps[o->gap_begin + i];
		rc = add_damaged(rd, snap, t, g->seq - g->expected, g->counter, g->expected,
				 g->position, 0);
		if (rc)
			return rc;
	}
	if (o->count)
		expected = o->last_seq + 1;
	/* (a live writer's newest records may be newer than the head we read) */
	if (!alive && limit > expected) {
		uint64_t missing = limit - expected;
		if (torn_here)
			missing--; /* the writer counted the record it died in */
		uint64_t at = o->count ? o->last_counter : t->start_counter;
		rc = add_damaged(rd, snap, t, missing, at, expected, position + o->count,
				 expected == oldest && snap->oldest_estimated ? RT_ITEM_ESTIMATED
									      : 0);
		if (rc)
			return rc;
	}
	if (before_window) {
		if (stream) {
			/* stream mode never overwrites: a collector took them */
			c->consumed += before_window;
		} else {
			c->overwritten += before_window;
			uint64_t at = o->count ? o->first_counter : t->start_counter;
			rc = rt_arena_add_loss(rd, t, RT_LOSS_OVERWRITTEN, RT_NOTE_NONE,
					       before_window, at, o->first, 0);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/*
 * A writer notes its drops in the ring only when room returns, and counts
 * in `noted` what its notes reported; the rest of `dropped` was never
 * noted and belongs to the ring's current owner (only it can have been
 * dropping when the trace ended).
 */
static int account_unnoted_drops(struct rt_reader *rd, const struct ring_snapshot *snap,
				 struct owner *owners, size_t owner_count)
{
	if (owner_count == 0 || snap->dropped <= snap->noted)
		return 0;
	uint64_t unnoted = snap->dropped - snap->noted;
	struct rt_reader_thread *t = owners[owner_count - 1].thread;
	struct rt_item last;
	rt_arena_entry_last_event(rd, t, &last, NULL);
	t->counts.dropped = add_saturating(t->counts.dropped, unnoted);
	return rt_arena_add_loss(rd, t, RT_LOSS_DROPPED, RT_NOTE_UNNOTED, unnoted, last.counter,
				 snap->records, last.kind ? RT_ITEM_TIMED : 0);
}

/*
 * Slots that did not decode and that no owner's account named: records of
 * nobody the reader knows (or of a ring no thread entry claims).  Each is
 * a damaged region of its own, its records counted as damaged, estimated
 * from its size.
 */
static int account_unclaimed_runs(struct rt_reader *rd, struct ring_snapshot *snap)
{
	for (size_t i = 0; i < snap->runs.count; i++) {
		struct rt_walk_run *r = &snap->runs.runs[i];
		if (r->referenced)
			continue;
		long region = run_region(rd, snap, r);
		if (region < 0)
			return -ENOMEM;
		if (r->reasons == RT_RUN_PAST_END)
			continue; /* the missing part of the file is reported once, as a whole */
		uint64_t lost = run_records(snap, r);
		struct rt_damage *d = &rd->damage.items[region];
		d->events = add_saturating(d->events, lost);
		d->events_estimated = 1;
		rd->totals.damaged = add_saturating(rd->totals.damaged, lost);
	}
	return 0;
}

/*
 * Whether records no entry claims are those of ended threads whose entries
 * later threads took (the header counts such takeovers), rather than of
 * entries that are damaged: so when no entry was found damaged.
 */
static int entries_reused(const struct rt_reader *rd)
{
	if (!rd->header.threads_reused)
		return 0;
	for (size_t i = 0; i < rd->damage.count; i++)
		if (rd->damage.items[i].part == RT_DAMAGE_THREAD)
			return 0;
	return 1;
}

/*
 * Records before the window (below oldest) that no owner's range holds: of
 * ended threads whose entries later threads took.  Overwritten in flight
 * mode, taken by a collector in stream mode; those in the window that
 * decoded were counted as they were walked.
 */
static int account_unowned(struct rt_reader *rd, const struct ring_snapshot *snap,
			   const struct owner *owners, size_t owner_count, uint64_t oldest)
{
	uint64_t limit = oldest < snap->records ? oldest : snap->records;
	uint64_t unowned = 0, at = 0;
	for (size_t k = 0; k < owner_count && at < limit; k++) {
		uint64_t first = owners[k].first < limit ? owners[k].first : limit;
		if (first > at)
			unowned += first - at;
		if (owners[k].end > at)
			at = owners[k].end;
	}
	if (at < limit)
		unowned += limit - at;
	if (rd->header.mode == RT_MODE_STREAM) {
		rd->totals.consumed = add_saturating(rd->totals.consumed, unowned);
		return 0;
	}
	rd->totals.overwritten = add_saturating(rd->totals.overwritten, unowned);
	return rt_arena_add_loss(rd, NULL, RT_LOSS_OVERWRITTEN, RT_NOTE_THREAD_REUSED, unowned, 0,
				 0, 0);
}

/* The source a walk of the snapshot's ring reads: the live copy, or the ring in the file. */
void rt_arena_walk_source(const struct rt_reader *rd, const struct ring_snapshot *snap,
			  struct rt_walk_source *src)
{
	const uint64_t ring_slots = rt_layout_ring_slots(&rd->header);
	memset(src, 0, sizeof(*src));
	src->view = ring_view(rd, snap->ring, snap->readable);
	src->slots = src->view.slots;
	src->base = 0;
	src->mask = ring_slots - 1;
	src->readable = snap->readable;
	src->in_file = 1;
	src->dense_from = rt_ring_view_holds(&src->view, snap->walk_from, snap->head)
			      ? snap->walk_from
			      : UINT64_MAX;
	if (snap->copy) {
		src->slots = snap->copy;
		src->base = snap->window_start;
		src->mask = UINT64_MAX;
		src->readable = UINT64_MAX;
		src->in_file = 0;
		src->dense_from = snap->window_start;
	}
	src->head = snap->head;
	src->records = snap->records;
	src->live = snap->live;
}

/* Keep the ring's walk source for the cursors of its threads; the reader owns copy now. */
static int keep_walk_source(struct rt_reader *rd, const struct rt_walk_source *src,
			    union rt_slot *copy, uint32_t *index)
{
	struct rt_reader_walks *w = &rd->walks;
	if (w->source_count == w->source_capacity) {
		size_t capacity = w->source_capacity ? w->source_capacity * 2 : 16;
		struct rt_reader_ring_walk *bigger =
		    realloc(w->sources, capacity * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		w->sources = bigger;
		w->source_capacity = capacity;
	}
	struct rt_reader_ring_walk *r = &w->sources[w->source_count];
	r->source = *src;
	r->copy = copy;
	*index = (uint32_t)w->source_count++;
	return 0;
}

/*
 * The newest event of an owner, decoded again with its payload (kept by the
 * reader), by a walk of src resumed where the check pass met it (from: where
 * that walk began).
 */
static int owner_last_event(struct rt_reader *rd, const struct rt_walk_source *src, uint64_t from,
			    const struct owner *o)
{
	struct rt_reader_thread *t = o->thread;
	memset(&t->last, 0, sizeof(t->last));
	if (!o->has_last_event)
		return 0;
	unsigned char payload[RT_LOG_PAYLOAD_MAX];
	struct rt_walk w;
	rt_walk_resume(&w, from, &o->last_event);
	struct rt_item it;
	if (rt_walk_next(rd, src, &w, NULL, &it, payload) != 1 || !rt_item_kind_is_event(it.kind))
		return 0; /* as the check pass found it, so never */
	if (rt_item_has_payload(it.kind)) {
		unsigned char *kept = rt_reader_payload_room(rd, it.log.length);
		if (!kept)
			return -ENOMEM;
		memcpy(kept, payload, it.log.length);
		it.log.payload = kept;
	}
	it.thread = (uint32_t)(t - rd->threads);
	it.tid = t->tid;
	t->last = it;
	return 0;
}

/* What the check pass counts of one event of a thread, for a trace set's counts. */
static void count_event(struct rt_reader *rd, const struct rt_item *it)
{
	if (it->site < rd->sites.count)
		rd->site_events[it->site]++;
	if (!rd->have_events || it->counter < rd->first_event_counter)
		rd->first_event_counter = it->counter;
	if (!rd->have_events || it->counter > rd->last_event_counter)
		rd->last_event_counter = it->counter;
	rd->have_events = 1;
}

/*
 * The trace records that follow an event of owner ow, each numbered one
 * more than the one before and below limit (where its range ends or the
 * next owner's begins), counted as decode_ring() counts an event, with
 * the walk and the counts in registers.  The first record that is not
 * such is left in *it, the walk's place before it in *before, for
 * decode_ring() to take: 1.  0 when the walk stops at a record
 * rt_walk_trace() does not decode (rt_walk_next() then does).  The arena
 * has events already (have_events).
 */
static int owner_run(struct rt_reader *rd, const struct rt_walk_source *src, struct rt_walk *walk,
		     struct rt_walk_runs *runs, struct owner *ow, uint64_t limit,
		     struct rt_item *it, struct rt_walk_mark *before)
{
	struct rt_walk w = *walk;
	struct rt_item cur;
	uint64_t last_seq = ow->last_seq, last_counter = ow->last_counter;
	size_t count = ow->count;
	uint64_t present = ow->present;
	struct rt_walk_mark last_event = ow->last_event;
	uint64_t first = rd->first_event_counter, last = rd->last_event_counter;
	uint64_t *const site_events = rd->site_events;
	const uint32_t site_count = rd->sites.count;
	int pending = 0;
	for (;;) {
		const struct rt_walk_mark at = rt_walk_mark_of(&w);
		if (!rt_walk_trace(rd, src, &w, runs, &cur))
			break;
		if (cur.seq != last_seq + 1 || cur.seq >= limit) {
			*it = cur;
			*before = at;
			pending = 1;
			break;
		}
		count++;
		last_seq = cur.seq;
		last_counter = cur.counter;
		present++;
		last_event = at;
		/* count_event() */
		if (cur.site < site_count)
			site_events[cur.site]++;
		if (cur.counter < first)
			first = cur.counter;
		if (cur.counter > last)
			last = cur.counter;
	}
	*walk = w;
	ow->count = count;
	ow->last_seq = last_seq;
	ow->last_counter = last_counter;
	ow->present = present;
	ow->last_event = last_event;
	rd->first_event_counter = first;
	rd->last_event_counter = last;
	return pending;
}

/*
 * The check pass over one ring (steps 2-6): every record is decoded and
 * given to its owner, but not kept: each owner keeps where its items begin
 * (for its cursor), how many there are, its first and last, its counts,
 * and the gaps between them; the ring keeps the runs of slots that did not
 * decode.  From those come the same losses and regions a pass over every
 * item would give, in the same order.
 */
static int decode_ring(struct rt_reader *rd, struct ring_snapshot *snap, struct owner *owners,
		       size_t owner_count)
{
	int rc;
	struct gap *gaps = NULL;
	size_t gap_count = 0, gap_capacity = 0;

	rd->ring_dropped = add_saturating(rd->ring_dropped, snap->dropped);
	struct rt_walk_source src;
	rt_arena_walk_source(rd, snap, &src);
	uint32_t source_index;
	if (keep_walk_source(rd, &src, snap->copy, &source_index))
		return -ENOMEM;
	snap->copy = NULL; /* the reader's now */
	rd->rings_decoded++;

	for (size_t k = 0; k < owner_count; k++) {
		struct owner *ow = &owners[k];
		ow->begin = ow->count = ow->position = 0;
		ow->present = ow->dropped = 0;
		ow->gap_begin = ow->gap_count = 0;
		ow->has_last_event = 0;
	}
	/* give each record to its owner; owners are sorted and disjoint */
	size_t o = 0, placed = 0;
	uint64_t orphans = 0, orphan_counter = 0;
	struct rt_walk_mark before;
	struct rt_item it;
	int pending = 0; /* it is the record owner_run() stopped at */
	rt_walk_begin(&snap->walk, snap->walk_from);
	for (;;) {
		if (!pending) {
			before = rt_walk_mark_of(&snap->walk);
			rc = rt_walk_next(rd, &src, &snap->walk, &snap->runs, &it, NULL);
			if (rc < 0)
				goto out;
			if (rc == 0)
				break;
		}
		pending = 0;
		const size_t i = snap->walk.count - 1;
		while (placed < owner_count && owners[placed].first <= it.seq)
			owners[placed++].position = i;
		while (o < owner_count && it.seq >= owners[o].end)
			o++;
		if (!(o < owner_count && it.seq >= owners[o].first)) {
			if (orphans++ == 0)
				orphan_counter = it.counter;
			continue;
		}
		struct owner *ow = &owners[o];
		if (ow->count++ == 0) {
			ow->begin = i;
			ow->start = before;
			ow->first_seq = it.seq;
			ow->first_counter = it.counter;
			ow->gap_begin = gap_count;
		} else if (it.seq > ow->last_seq + 1) {
			if (gap_count == gap_capacity) {
				size_t capacity = gap_capacity ? gap_capacity * 2 : 16;
				struct gap *bigger = realloc(gaps, capacity * sizeof(*bigger));
				if (!bigger) {
					rc = -ENOMEM;
					goto out;
				}
				gaps = bigger;
				gap_capacity = capacity;
			}
			gaps[gap_count++] = (struct gap){i, ow->last_seq + 1, it.seq, it.counter};
			ow->gap_count++;
		}
		ow->last_seq = it.seq;
		ow->last_counter = it.counter;
		if (rt_item_kind_is_event(it.kind)) {
			ow->present++;
			ow->last_event = before;
			ow->has_last_event = 1;
			count_event(rd, &it);
			/* the records of this owner that follow it in order, in one go */
			const uint64_t limit =
			    placed < owner_count && owners[placed].first < ow->end
				? owners[placed].first
				: ow->end;
			pending =
			    owner_run(rd, &src, &snap->walk, &snap->runs, ow, limit, &it, &before);
		} else {
			ow->dropped = add_saturating(ow->dropped, it.loss.count);
			rd->lost_records++;
		}
	}
	snap->item_count = snap->walk.count;
	while (placed < owner_count)
		owners[placed++].position = snap->item_count;

	if (orphans && entries_reused(rd)) {
		/* who wrote them is gone from the table, not damaged: lost as overwritten */
		rd->totals.overwritten = add_saturating(rd->totals.overwritten, orphans);
		rc = rt_arena_add_loss(rd, NULL, RT_LOSS_OVERWRITTEN, RT_NOTE_THREAD_REUSED,
				       orphans, orphan_counter, 0, RT_ITEM_TIMED);
		if (rc)
			goto out;
	} else if (orphans) {
		rd->orphans = add_saturating(rd->orphans, orphans);
		rd->totals.damaged = add_saturating(rd->totals.damaged, orphans);
		rc = rt_arena_add_loss(rd, NULL, RT_LOSS_DAMAGED, RT_NOTE_NO_OWNER, orphans,
				       orphan_counter, 0, 0);
		if (rc)
			goto out;
	}

	/* the torn record belongs to whoever owns the next record seq */
	struct owner *torn_owner = NULL;
	if (snap->torn) {
		for (size_t k = 0; k < owner_count; k++) {
			uint64_t next = snap->records;
			if ((next >= owners[k].first && next < owners[k].end) ||
			    (next > 0 && next - 1 >= owners[k].first && next - 1 < owners[k].end))
				torn_owner = &owners[k];
		}
	}
	uint64_t oldest = window_oldest(snap);
	for (size_t k = 0; k < owner_count; k++) {
		struct owner *ow = &owners[k];
		struct rt_reader_thread *t = ow->thread;
		struct rt_thread_walk *tw = &rd->walks.threads[t - rd->threads];
		t->item_count = ow->count;
		tw->source = source_index;
		rt_walk_resume(&tw->start, snap->walk_from, &ow->start);
		tw->first = ow->first;
		tw->end = ow->end;
		/* the torn record may be counted in records: then it is not missing */
		int torn_counted = 0;
		if (ow == torn_owner) {
			uint64_t last = ow->count ? ow->last_seq + 1 : ow->first;
			uint64_t limit = ow->end < snap->records ? ow->end : snap->records;
			torn_counted = limit > last;
		}
		if ((rc = account_owner(rd, snap, ow, gaps, oldest, torn_counted)) != 0 ||
		    (rc = owner_last_event(rd, &src, snap->walk_from, ow)) != 0)
			goto out;
	}
	if (entries_reused(rd) && (rc = account_unowned(rd, snap, owners, owner_count, oldest)))
		goto out;
	if ((rc = account_unclaimed_runs(rd, snap)) != 0)
		goto out;
	rc = account_unnoted_drops(rd, snap, owners, owner_count);
	if (rc)
		goto out;
	if (snap->torn) {
		unsigned flags;
		uint64_t at = torn_counter(rd, snap, torn_owner, &flags);
		struct rt_reader_thread *t = torn_owner ? torn_owner->thread : NULL;
		if (t)
			t->counts.torn++;
		else
			rd->totals.torn++;
		rc = rt_arena_add_loss(rd, t, RT_LOSS_TORN, RT_NOTE_WRITER_DIED, 1, at,
				       snap->records, flags);
	}
out:
	free(gaps);
	return rc;
}

void rt_arena_free_plan(struct ring_plan *plan)
{
	for (size_t i = 0; i < plan->ring_count; i++) {
		free(plan->snaps[i].copy);
		free(plan->snaps[i].runs.runs);
	}
	free(plan->owners);
	free(plan->snaps);
}

/*
 * Group the threads by ring and capture every ring that a thread points to,
 * and every other ring that holds records (its thread entry is damaged:
 * its records are decoded only to be counted).  This comes before the site
 * table is loaded, so that every site a record below a head uses is in the
 * table.
 */
int rt_arena_plan_rings(struct rt_reader *rd, struct ring_plan *plan)
{
	const struct rt_arena_header *h = &rd->header;
	size_t n = 0;
	memset(plan, 0, sizeof(*plan));
	for (uint32_t i = 0; i < rd->thread_count; i++)
		n += rd->threads[i].ring != RT_NO_RING;
	plan->owners = calloc(n + 1, sizeof(*plan->owners));
	if (!plan->owners)
		return -ENOMEM;

	struct owner *owners = plan->owners;
	for (uint32_t i = 0, k = 0; i < rd->thread_count; i++) {
		struct rt_reader_thread *t = &rd->threads[i];
		if (t->ring == RT_NO_RING)
			continue;
		owners[k].thread = t;
		owners[k].first = t->first_record;
		owners[k].end = t->end_record < t->first_record ? t->first_record : t->end_record;
		k++;
	}
	if (n)
		qsort(owners, n, sizeof(*owners), compare_owners);
	/* an owner's range ends where the next one's starts, whatever it claims */
	for (size_t i = 0; i + 1 < n; i++)
		if (owners[i].thread->ring == owners[i + 1].thread->ring &&
		    owners[i].end > owners[i + 1].first)
			owners[i].end = owners[i + 1].first;
	plan->owner_count = n;
	const size_t rings_field = offsetof(struct rt_arena_header, rings_used);
	uint64_t rings_used = rt_arena_used_now(rd, rings_field, 0);
	uint32_t rings_past = 0; /* 1 + the last ring in use past rings_used */
	size_t room = 0;	 /* plan->snaps holds room: as many as rings captured */
	/*
	 * the rings a thread points to, and those whose descriptors hold data:
	 * a descriptor in a hole is zeros, a ring never claimed (not read)
	 */
	for (uint32_t ring = rt_reader_next_ring(rd, 0), k = 0; ring < h->ring_count || k < n;) {
		if (k < n && owners[k].thread->ring < ring)
			ring = owners[k].thread->ring;
		int owned = k < n && owners[k].thread->ring == ring;
		while (k < n && owners[k].thread->ring == ring)
			k++;
		struct rt_ring_desc copy;
		const struct rt_ring_desc *d = rt_arena_ring_desc(rd, ring, &copy);
		uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
		if (ring >= rings_used && (head || __atomic_load_n(&d->state, __ATOMIC_RELAXED)))
			rings_past = ring + 1;
		uint32_t at = ring;
		ring = rt_reader_next_ring(rd, ring + 1);
		if (!owned && !head)
			continue;
		if (plan->ring_count == room) {
			size_t more = room ? room * 2 : 16;
			struct ring_snapshot *snaps = realloc(plan->snaps, more * sizeof(*snaps));
			if (!snaps)
				return -ENOMEM;
			plan->snaps = snaps;
			room = more;
		}
		int rc = capture_ring(rd, at, &plan->snaps[plan->ring_count]);
		if (rc)
			return rc;
		plan->ring_count++;
	}
	rd->walks.threads = calloc((size_t)rd->thread_count + 1, sizeof(*rd->walks.threads));
	if (!rd->walks.threads)
		return -ENOMEM;
	for (uint32_t i = 0; i < rd->thread_count; i++)
		rd->walks.threads[i].source = UINT32_MAX;
	/* rings are handed out in order: one in use past rings_used says it is damaged */
	if (rings_past > rt_arena_used_now(rd, rings_field, 0) &&
	    rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0, rings_field,
			  sizeof(h->rings_used), "rings_used %llu, but ring %u is in use",
			  (unsigned long long)rings_used, rings_past - 1) < 0)
		return -ENOMEM;
	return 0;
}

int rt_arena_decode_rings(struct rt_reader *rd, struct ring_plan *plan)
{
	size_t begin = 0;
	for (size_t r = 0; r < plan->ring_count; r++) {
		while (begin < plan->owner_count &&
		       plan->owners[begin].thread->ring < plan->snaps[r].ring)
			begin++;
		size_t end = begin;
		while (end < plan->owner_count &&
		       plan->owners[end].thread->ring == plan->snaps[r].ring)
			end++;
		int rc = decode_ring(rd, &plan->snaps[r], plan->owners + begin, end - begin);
		if (rc)
			return rc;
		begin = end;
	}
	return 0;
}
