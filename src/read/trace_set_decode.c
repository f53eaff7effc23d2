/*
 * trace_set_decode.c - one block of a ring read and decoded into items:
 * the block checked against what the scan kept, each record's place in the
 * ring checked, its thread found, what is missing before it made a gap,
 * and, for a count, counted where it lies.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include "format/packed_walk.h"
#include "read/trace_set_private.h"

/* The owner of record seq (seqs only rise along a cursor), or NULL. */
static const struct owner *owner_of(struct ring_cursor *c, uint64_t seq)
{
	while (c->owner_at < c->owner_count && seq >= c->owners[c->owner_at].end)
		c->owner_at++;
	if (c->owner_at < c->owner_count && seq >= c->owners[c->owner_at].first)
		return &c->owners[c->owner_at];
	return NULL;
}

/* Records of [from, to) that no LOSS entry accounts for. */
static uint64_t uncovered(struct ring_cursor *c, uint64_t from, uint64_t to)
{
	return rt_set_uncovered_in(c->rs, &c->cover_at, from, to);
}

/* Whether the gap from record seq first is one a damaged region explains. */
static int gap_in_region(struct ring_cursor *c, uint64_t first)
{
	const struct ring_state *rs = c->rs;
	while (c->region_gap_at < rs->region_gap_count &&
	       rs->region_gaps[c->region_gap_at].first < first)
		c->region_gap_at++;
	return c->region_gap_at < rs->region_gap_count &&
	       rs->region_gaps[c->region_gap_at].first == first;
}

static struct rt_item *new_item(struct ring_cursor *c, size_t *n)
{
	struct rt_item *it = &c->items[(*n)++];
	rt_item_clear(it);
	it->cpu = RT_CPU_UNKNOWN;
	it->thread = RT_ITEM_NO_THREAD;
	return it;
}

/* Records [expected, to) are missing: what no LOSS entry explains is a damaged gap. */
void rt_set_gap_to(struct ring_cursor *c, uint64_t to, uint64_t counter, size_t *n)
{
	if (to <= c->expected)
		return;
	uint64_t missing = uncovered(c, c->expected, to);
	if (missing) {
		const struct owner *o = owner_of(c, c->expected);
		struct rt_item *it = new_item(c, n);
		it->kind = RT_ITEM_LOSS;
		it->flags = RT_ITEM_TIMED;
		it->counter = counter;
		it->seq = c->expected;
		if (o) {
			it->thread = o->thread;
			it->tid = o->tid;
		}
		it->loss.count = missing;
		it->loss.reason = RT_LOSS_DAMAGED;
		it->loss.note = RT_NOTE_GAP;
		if (gap_in_region(c, c->expected))
			it->flags |= RT_ITEM_IN_REGION;
	}
	c->expected = to;
}

/*
 * After the ring's last block: records up to where the files said the ring
 * ended that no block held are a damaged gap too, timed at its last counter.
 */
void rt_set_gap_to_end(struct ring_cursor *c, size_t *n)
{
	const struct ring_state *rs = c->rs;
	if (!rs->has_end)
		return;
	uint64_t counter =
	    rs->block_count ? rs->blocks[rs->block_count - 1].counter_last : rs->end_counter;
	rt_set_gap_to(c, rs->end_record, counter, n);
}

/*
 * Decode one checked SLOTS block into items (the rules of the arena
 * reader's ring walk, read/arena_reader.c steps 2 and 3, with the block's
 * record range standing for the ring's counters).
 */

/*
 * A TRACE record whose site no copy of the metadata describes is still an
 * event, marked: its raw site id and as many argument words as it holds.
 */
static unsigned site_lost_flags(const struct ring_cursor *c, const struct rt_slot_head *first)
{
	if (first->kind == RT_REC_LOST || rt_site_lookup(&c->rd->sites, first->site))
		return 0;
	return RT_ITEM_NO_SITE | (first->nslots == 2 ? RT_ITEM_WIDE : 0);
}

/* A log or I/O item's payload, gathered from its slots into the cursor's store. */
static void keep_payload(struct ring_cursor *c, struct rt_item *it, const union rt_slot *slots)
{
	if (!rt_item_has_payload(it->kind))
		return;
	/* the block's slots bound what its records' payloads take */
	unsigned char *p = c->payload + c->payload_used;
	uint32_t length = 0;
	for (unsigned k = 0; k < it->log.nslots; k++)
		length = rt_log_payload_add(p, length, &slots[k], k);
	c->payload_used += length;
	it->log.payload = p;
	it->log.length = length;
}

/* An event at rec (its head slot) as an item: the thread's newest so far. */
static void keep_last(struct ring_cursor *c, const union rt_slot *rec, uint64_t seq,
		      const struct owner *o)
{
	struct rt_slot_head first;
	struct rt_slot_cont second;
	memcpy(&first, &rec[0], sizeof(first));
	memset(&second, 0, sizeof(second));
	if (first.nslots == 2)
		memcpy(&second, &rec[1], sizeof(second));
	struct rt_item *it = &c->rd->threads[o->thread].last;
	rt_item_clear(it);
	rt_item_from_record(it, &first, &second);
	it->flags |= site_lost_flags(c, &first);
	it->seq = seq;
	it->thread = o->thread;
	it->tid = o->tid;
}

/* What decoding one block keeps from record to record. */
struct block_decode {
	uint64_t first_record, end_record;
	/*
	 * The reader's site table, copied: a record's site is looked up one
	 * load from here, not two (the table does not change within a block).
	 */
	struct rt_site_table sites;
	/* only the reading pass drops what its reader would */
	int (*skips)(void *, const struct rt_site *);
	void *skips_state;
	/* counting: the count pass's fast path (rt_set_decode_block) */
	int counting;
	uint64_t *site_counts;
	uint64_t events, lo, hi;
	const struct owner *owner, *present_owner, *last_owner;
	uint64_t *present;
	const union rt_slot *last_rec; /* the last counted event, in the block */
	uint64_t last_seq;
	size_t n;	       /* items made */
	size_t owner_lookups;  /* of d->owner: 1 when one thread owns the block's records */
	uint64_t *tally_sites; /* tallying (ring_cursor.tallying): where sites count */
};

static void block_decode_init(struct block_decode *d, struct ring_cursor *c,
			      const struct rt_block_header *h, int counting)
{
	struct set_private *p = priv_of(c->set);
	memset(d, 0, sizeof(*d));
	d->first_record = h->first_record;
	d->end_record = add_sat(h->first_record, h->count);
	d->sites = c->rd->sites;
	d->skips = counting ? NULL : p->skips;
	d->skips_state = p->skips_state;
	d->counting = counting;
	d->site_counts = c->site_counts ? c->site_counts : c->set->sources[c->source].site_counts;
	d->lo = UINT64_MAX;
	d->tally_sites = c->set->sources[c->source].site_counts;
	c->payload_used = 0;
	c->tallied = 0;
}

/* What tally_event keeps from event to event, in the decoding loop's locals. */
struct block_tally {
	uint64_t lo, hi; /* the events' span */
	size_t events;
};

/*
 * An event of a known thread tallied as it is made, as rt_set_tally would
 * count it in the item: its site now, while the record's fields are at
 * hand; its thread's count and last event once the block decoded.
 */
static inline __attribute__((always_inline)) void
tally_event(struct block_decode *d, struct block_tally *t, const struct rt_item *it)
{
	if (it->site < d->sites.count)
		d->tally_sites[it->site]++;
	t->lo = it->counter < t->lo ? it->counter : t->lo;
	t->hi = it->counter > t->hi ? it->counter : t->hi;
	t->events++;
}

/* A block decoded, t->events of its events tallied: what tally_event left for its end. */
static void tally_finish(struct ring_cursor *c, struct block_decode *d, const struct block_tally *t)
{
	struct rt_reader_thread *threads = c->rd->threads;
	if (d->owner_lookups == 1) {
		/* one thread owns every record (nearly every block): its last event is near the end
		 */
		struct rt_reader_thread *owner = &threads[d->owner->thread];
		owner->counts.present += t->events;
		for (size_t i = d->n; i-- > 0;)
			if (c->items[i].kind == RT_ITEM_TRACE &&
			    c->items[i].thread == d->owner->thread) {
				owner->last = c->items[i];
				break;
			}
	} else {
		/* the records of several threads, or of none: each event's thread in turn */
		for (size_t i = 0; i < d->n; i++) {
			const struct rt_item *it = &c->items[i];
			if (!rt_set_tallied_as_decoded(it, c->rd->thread_count))
				continue;
			threads[it->thread].counts.present++;
			threads[it->thread].last = *it;
		}
	}
	c->set->events += t->events;
	rt_set_span_counter(c->set, t->lo, c->source);
	rt_set_span_counter(c->set, t->hi, c->source);
	c->tallied = t->events;
}

/* A block that did not decode after all: the site counts tally_event moved, put back. */
static void tally_undo(struct ring_cursor *c, struct block_decode *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct rt_item *it = &c->items[i];
		if (rt_set_tallied_as_decoded(it, c->rd->thread_count) && it->site < d->sites.count)
			d->tally_sites[it->site]--;
	}
}

/*
 * One whole record of the block, its slots checked (head, continuations):
 * its record seq placed, its site checked, then made an item, counted,
 * skipped, or dropped as a copy.  rec: its slots (a log's payload is read
 * from them; a counted event's may be read again at the block's end), or
 * NULL for an event of a block that is not counted.
 * Returns the slots the walk moves on by: 1 when the head does not start
 * a record after all (its other slots are then looked at as heads).
 * plain (a constant where it is inlined): the caller knows that d skips no
 * site and counts nothing, and the record is not asked about either.
 * tally (NULL, or the caller's locals, with plain): an event of a known
 * thread is tallied as it is made (tally_event).
 */
static inline __attribute__((always_inline)) unsigned
take_record(struct ring_cursor *c, struct block_decode *d, const union rt_slot *rec,
	    const struct rt_slot_head *first, const struct rt_slot_cont *second, unsigned nslots,
	    const int plain, struct block_tally *tally)
{
	uint64_t seq = d->first_record + (uint32_t)(first->record - (uint32_t)d->first_record);
	if (seq >= d->end_record)
		return 1;
	unsigned lost_flags = 0; /* site_lost_flags, from the one lookup */
	const struct rt_site *site = NULL;
	if (first->kind != RT_REC_LOST) {
		site = rt_site_lookup(&d->sites, first->site);
		if (!site)
			lost_flags = RT_ITEM_NO_SITE | (first->nslots == 2 ? RT_ITEM_WIDE : 0);
		int fits = site && rt_site_fits_record(site, first->kind, nslots);
		if (!fits)
			c->site_misses++;
		if (site && !fits)
			return nslots; /* whole, but not what its site describes: a gap says it */
		/* no copy of its site survived: shown marked (site_lost_flags) */
		if (!site)
			c->unknown += seq >= c->expected;
	} else if (nslots != 2 || !rt_record_lost_count_ok(second)) {
		return 1;
	}
	if (seq < c->expected)
		return nslots; /* a copy of a record read already (overlapping snapshots) */
	if (seq > c->expected)
		rt_set_gap_to(c, seq, first->counter, &d->n);
	c->expected = seq + 1;
	const struct owner *o = d->owner && seq >= d->owner->first && seq < d->owner->end
				    ? d->owner
				    : (d->owner_lookups++, d->owner = owner_of(c, seq));
	if (!plain && d->skips && first->kind == RT_REC_TRACE && d->skips(d->skips_state, site)) {
		/* counted as rt_trace_set_next would have handed it out */
		struct set_private *p = priv_of(c->set);
		p->skipped += p->tid <= 0 || (o && o->tid == p->tid);
		return nslots;
	}
	if (!o) {
		/*
		 * No copy of a thread entry claims it: an event of its ring,
		 * marked, or the drops a LOST record reports, of no known thread.
		 */
		struct rt_item *it = new_item(c, &d->n);
		rt_item_from_record(it, first, second);
		keep_payload(c, it, rec);
		it->seq = seq;
		if (first->kind != RT_REC_LOST) {
			it->flags |= RT_ITEM_NO_OWNER | lost_flags;
			it->thread = RT_ITEM_RING_ONLY | c->ring;
		} else {
			c->lost_records++;
		}
		return nslots;
	}
	if (!plain && d->counting && first->kind == RT_REC_TRACE) {
		if (o != d->present_owner) {
			d->present = &c->rd->threads[o->thread].counts.present;
			d->present_owner = o;
		}
		(*d->present)++;
		if (first->site < d->sites.count)
			d->site_counts[first->site]++;
		d->events++;
		d->lo = first->counter < d->lo ? first->counter : d->lo;
		d->hi = first->counter > d->hi ? first->counter : d->hi;
		if (d->last_owner && d->last_owner != o)
			keep_last(c, d->last_rec, d->last_seq, d->last_owner);
		d->last_owner = o;
		d->last_rec = rec;
		d->last_seq = seq;
		return nslots;
	}
	struct rt_item *it = new_item(c, &d->n);
	rt_item_from_record(it, first, second);
	if (rt_item_has_payload(it->kind))
		keep_payload(c, it, rec);
	it->flags |= lost_flags;
	it->seq = seq;
	it->thread = o->thread;
	it->tid = o->tid;
	if (tally && first->kind == RT_REC_TRACE)
		tally_event(d, tally, it);
	/* a branch, not an add: nearly every record is an event, and the count stays in memory */
	if (first->kind == RT_REC_LOST)
		c->lost_records++;
	return nslots;
}

/* The block's end: records it holds that did not decode, and what counting kept. */
static size_t block_decode_finish(struct ring_cursor *c, struct block_decode *d,
				  const struct rt_block_header *h)
{
	rt_set_gap_to(c, d->end_record, h->counter_last, &d->n);
	if (d->events) {
		keep_last(c, d->last_rec, d->last_seq, d->last_owner);
		c->set->events += d->events;
		rt_set_span_counter(c->set, d->lo, c->source);
		rt_set_span_counter(c->set, d->hi, c->source);
	}
	return d->n;
}

/*
 * counting: the count pass's fast path - an event owned by a thread is
 * counted where it lies (site, thread, span, the thread's last event)
 * instead of becoming an item; losses still become items.
 */
size_t rt_set_decode_block(struct ring_cursor *c, const unsigned char *b,
			   const struct rt_block_header *h, int counting)
{
	struct block_decode d;
	block_decode_init(&d, c, h, counting);
	const union rt_slot *slots = (const union rt_slot *)(b + RT_BLOCK_HEADER_SIZE);
	const uint64_t total = (h->size - RT_BLOCK_HEADER_SIZE) / RT_SLOT_SIZE;
	for (uint64_t s = 0; s < total;) {
		struct rt_slot_head first;
		struct rt_slot_cont second;
		memcpy(&first, &slots[s], sizeof(first));
		unsigned nslots = first.nslots;
		/* a record never spans blocks: a SLOTS block holds whole records */
		if (first.seq != (uint32_t)(h->first + s) || !rt_record_head_ok(&first, 1) ||
		    nslots > total - s) {
			s++;
			continue;
		}
		memset(&second, 0, sizeof(second));
		unsigned k = 1;
		for (; k < nslots; k++) {
			memcpy(&second, &slots[s + k], sizeof(second));
			if (!rt_record_cont_ok(&second, h->first + s, k))
				break;
		}
		if (k < nslots) {
			s++;
			continue;
		}
		s += take_record(c, &d, &slots[s], &first, &second, nslots, 0, NULL);
	}
	return block_decode_finish(c, &d, h);
}

/* What decoding a block changes in its cursor, kept to be put back. */
struct cursor_mark {
	uint64_t expected, unknown, lost_records, site_misses, skipped;
	size_t owner_at, cover_at, region_gap_at;
};

static void cursor_mark(const struct ring_cursor *c, struct cursor_mark *m)
{
	m->expected = c->expected;
	m->unknown = c->unknown;
	m->lost_records = c->lost_records;
	m->site_misses = c->site_misses;
	m->skipped = priv_of(c->set)->skipped;
	m->owner_at = c->owner_at;
	m->cover_at = c->cover_at;
	m->region_gap_at = c->region_gap_at;
}

static void cursor_back_to(struct ring_cursor *c, const struct cursor_mark *m)
{
	c->expected = m->expected;
	c->unknown = m->unknown;
	c->lost_records = m->lost_records;
	c->site_misses = m->site_misses;
	priv_of(c->set)->skipped = m->skipped;
	c->owner_at = m->owner_at;
	c->cover_at = m->cover_at;
	c->region_gap_at = m->region_gap_at;
	c->payload_used = 0;
}

/*
 * A PACKED block of compact entries only, decoded record by record into
 * items as rt_set_decode_block decodes its expansion, without writing the
 * expansion: the same items, the same counts.  A compact entry is one
 * whole record whose slots are in place by construction (seq, continuation),
 * so of the slot checks only the head's kind and size are left to do; a
 * head that fails them starts no record, and neither does its continuation,
 * as in the expansion.  Returns the items, or (the cursor as it was) a
 * PACKED_* value: the block holds a raw entry, whose slots can hold records
 * that run on into the next entry (the caller expands the block), or does
 * not decode.
 */
#define PACKED_RAW ((size_t)-1)
#define PACKED_BAD ((size_t)-2)

/*
 * The records of decode_packed's block; plain: no site is skipped (d->skips
 * NULL).  An event (nearly every record) is decoded into locals of its
 * own, of whose second slot the item reads the arguments only; another
 * record, whose payload may be read from its slots, as slots.  (Slots for
 * all cost 7 instructions an event more over a trace file's dump --json.)
 */
static inline __attribute__((always_inline)) size_t
packed_records(struct ring_cursor *c, struct rt_packed_walk *w, struct block_decode *d,
	       const struct rt_block_header *h, const struct cursor_mark *mark, const int plain,
	       const int tally)
{
	struct block_tally t = {UINT64_MAX, 0, 0};
	for (;;) {
		struct rt_slot_head first;
		struct rt_slot_cont second;
		const int nslots = rt_packed_walk_next_record(w, &first, &second);
		if (nslots <= 0) {
			if (nslots == RT_PACKED_WALK_END) {
				if (tally && t.events)
					tally_finish(c, d, &t);
				return block_decode_finish(c, d, h);
			}
			if (tally)
				tally_undo(c, d);
			cursor_back_to(c, mark);
			return nslots == RT_PACKED_WALK_RAW ? PACKED_RAW : PACKED_BAD;
		}
		if (!rt_record_head_ok(&first, 1))
			continue;
		/* a one-slot record's second slot reads as zeros, as in rt_set_decode_block */
		if (first.kind == RT_REC_TRACE) {
			/* of the second slot, an event's item reads its arguments only */
			if (nslots == 1) {
				second.a2 = second.a3 = 0;
				second.a4 = second.a5 = 0;
			}
			take_record(c, d, NULL, &first, &second, (unsigned)nslots, plain,
				    tally ? &t : NULL);
		} else {
			union rt_slot rec[2];
			rec[0].head = first;
			if (nslots == 2)
				rec[1].cont = second;
			else
				memset(&rec[1], 0, sizeof(rec[1]));
			take_record(c, d, rec, &rec[0].head, &rec[1].cont, (unsigned)nslots, plain,
				    tally ? &t : NULL);
		}
	}
}

static size_t decode_packed(struct ring_cursor *c, const unsigned char *b,
			    const struct rt_block_header *packed, const struct rt_block_header *h)
{
	struct rt_packed_walk w;
	if (rt_packed_walk_start(&w, packed, b + RT_BLOCK_HEADER_SIZE,
				 (size_t)packed->size - RT_BLOCK_HEADER_SIZE))
		return PACKED_BAD;
	struct cursor_mark mark;
	cursor_mark(c, &mark);
	struct block_decode d;
	block_decode_init(&d, c, h, 0);
	/* a walk that skips no site (nearly every one) asks nothing per record of it */
	if (d.skips)
		return packed_records(c, &w, &d, h, &mark, 0, 0);
	return c->tallying ? packed_records(c, &w, &d, h, &mark, 1, 1)
			   : packed_records(c, &w, &d, h, &mark, 1, 0);
}

/*
 * Whether the bytes at b (avail of them) are still the SLOTS block the scan
 * checked at ref: its header, field by field.  The checksum was verified by
 * the scan; a file that changed since is caught by the header or, in its
 * slots, by the record checks every slot passes anyway.
 */
/* Whether h, the header of a block avail bytes long at most, is the SLOTS block the scan kept at
 * ref. */
static int header_matches(const struct ring_cursor *c, const struct block_ref *ref,
			  const struct rt_block_header *h, uint64_t avail)
{
	return h->size <= avail && h->size >= RT_BLOCK_HEADER_SIZE &&
	       h->size <= RT_BLOCK_MAX_BYTES &&
	       (h->size - RT_BLOCK_HEADER_SIZE) % RT_SLOT_SIZE == 0 && h->type == RT_BLOCK_SLOTS &&
	       h->ring == c->ring && h->first_record == ref->first_record &&
	       h->count == ref->count &&
	       h->count <= (h->size - RT_BLOCK_HEADER_SIZE) / RT_SLOT_SIZE;
}

int rt_set_block_matches(const struct ring_cursor *c, const struct block_ref *ref,
			 const unsigned char *b, uint64_t avail, struct rt_block_header *h)
{
	if (avail < RT_BLOCK_HEADER_SIZE || !rt_block_magic_at(b))
		return 0;
	memcpy(h, b, sizeof(*h));
	return header_matches(c, ref, h, avail);
}

/*
 * The SLOTS block of ref in the bytes read at b (avail of them), a PACKED
 * one expanded into the cursor's block (not sealed: it is only decoded);
 * NULL if it is no longer the block the scan checked.
 */
const unsigned char *rt_set_block_found(struct ring_cursor *c, const struct block_ref *ref,
					const unsigned char *b, uint64_t avail,
					struct rt_block_header *h)
{
	struct rt_block_header packed;
	if (avail >= RT_BLOCK_HEADER_SIZE && rt_block_magic_at(b)) {
		memcpy(&packed, b, sizeof(packed));
		if (packed.type == RT_BLOCK_PACKED) {
			/* a payload that changed since the scan does not decode */
			if (packed.size < RT_BLOCK_HEADER_SIZE || packed.size > avail ||
			    packed.size > RT_BLOCK_MAX_BYTES ||
			    rt_packed_to_slots_unsealed(b, &packed, c->block, &packed) != 0)
				return NULL;
			b = c->block;
			avail = RT_BLOCK_MAX_BYTES;
		}
	}
	return rt_set_block_matches(c, ref, b, avail, h) ? b : NULL;
}

/*
 * Decode the block of ref at b (avail bytes) into the cursor's items (*n):
 * 1, or 0 when it is no longer the block the scan kept (or does not
 * decode).  A PACKED block of compact entries is decoded without being
 * expanded (decode_packed); one with a raw entry is expanded first.
 */
static int decode_ref(struct ring_cursor *c, const struct block_ref *ref, const unsigned char *b,
		      uint64_t avail, size_t *n)
{
	struct rt_block_header packed, h;
	if (avail >= RT_BLOCK_HEADER_SIZE && rt_block_magic_at(b)) {
		memcpy(&packed, b, sizeof(packed));
		if (packed.type == RT_BLOCK_PACKED && packed.size >= RT_BLOCK_HEADER_SIZE &&
		    packed.size <= avail &&
		    rt_packed_claimed_header(&packed, b + RT_BLOCK_HEADER_SIZE, &h) == 0 &&
		    header_matches(c, ref, &h, RT_BLOCK_MAX_BYTES)) {
			const size_t got = decode_packed(c, b, &packed, &h);
			if (got == PACKED_BAD)
				return 0;
			if (got != PACKED_RAW) {
				*n = got;
				return 1;
			}
		}
	}
	b = rt_set_block_found(c, ref, b, avail, &h);
	if (!b)
		return 0;
	*n = rt_set_decode_block(c, b, &h, 0);
	return 1;
}

/* Read and decode the block of ref into the cursor's items; a gap when it no longer checks. */
size_t rt_set_read_ref(struct ring_cursor *c, const struct block_ref *ref)
{
	int error = 0;
	uint64_t avail = 0;
	const unsigned char *b = rt_set_cursor_bytes(c, ref, &avail, &error);
	size_t n = 0;
	if (!b || !decode_ref(c, ref, b, avail, &n)) {
		/* it checked during the scan: the file changed, or cannot be read */
		if (error)
			priv_of(c->set)->error = error;
		n = 0;
		rt_set_gap_to(c, add_sat(ref->first_record, ref->count), ref->counter_first, &n);
	}
	return n;
}
