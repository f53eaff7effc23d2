/*
 * trace_set_cursors.c - ring cursors: the blocks of a ring in record order,
 * one block at a time, each decoded and checked into items.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include <unistd.h>

#include "format/packed_walk.h"
#include "read/trace_set_private.h"

static int compare_blocks(const void *a, const void *b)
{
	const struct block_ref *x = a, *y = b;
	if (x->first_record != y->first_record)
		return x->first_record < y->first_record ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

int rt_set_compare_covers(const void *a, const void *b)
{
	const struct cover *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

static int compare_owners(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The threads of rd that owned ring, by record range (as the arena reader splits a ring). */
int rt_set_owners_of_ring(const struct rt_reader *rd, uint32_t ring, struct owner **out,
			  size_t *count)
{
	size_t n = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++)
		n += rd->threads[i].ring == ring;
	struct owner *owners = calloc(n + 1, sizeof(*owners));
	if (!owners)
		return -ENOMEM;
	n = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		if (t->ring != ring)
			continue;
		struct owner *o = &owners[n++];
		o->first = t->first_record;
		o->end = t->end_record < t->first_record ? t->first_record : t->end_record;
		o->thread = i;
		o->tid = t->tid;
	}
	if (n > 1)
		qsort(owners, n, sizeof(*owners), compare_owners);
	for (size_t i = 0; i + 1 < n; i++)
		if (owners[i].end > owners[i + 1].first)
			owners[i].end = owners[i + 1].first;
	*out = owners;
	*count = n;
	return 0;
}

static int ring_owners(struct ring_cursor *c)
{
	return rt_set_owners_of_ring(c->rd, c->ring, &c->owners, &c->owner_count);
}

/* Records of [from, to) of ring rs that no LOSS entry accounts for (covers sorted; *at rises). */
uint64_t rt_set_uncovered_in(const struct ring_state *rs, size_t *at_cover, uint64_t from,
			     uint64_t to)
{
	const struct cover *cv = rs->covers;
	size_t n = rs->cover_count;
	while (*at_cover < n && cv[*at_cover].end <= from)
		(*at_cover)++;
	uint64_t covered = 0, at = from;
	for (size_t i = *at_cover; i < n && cv[i].first < to; i++) {
		uint64_t lo = cv[i].first > at ? cv[i].first : at;
		uint64_t hi = cv[i].end < to ? cv[i].end : to;
		if (hi > lo) {
			covered += hi - lo;
			at = hi;
		}
	}
	return to - from - covered;
}

/* A ring's blocks in record order (the first copy of a record first), its LOSS covers by seq. */
void rt_set_sort_ring(struct ring_state *rs)
{
	if (rs->block_count > 1)
		qsort(rs->blocks, rs->block_count, sizeof(*rs->blocks), compare_blocks);
	if (rs->cover_count > 1)
		qsort(rs->covers, rs->cover_count, sizeof(*rs->covers), rt_set_compare_covers);
}

/*
 * Where a ring's records begin: the first RINGS entry; a ring the head of
 * the first file did not list began with the recording when that file is
 * the recording's first, else with its first block.  Records the files hold
 * are read, whatever the head of the first file said.  Blocks sorted.
 */
/* The recording a trace-file source belongs to, or NULL. */
static const struct recording *rec_of(const struct set_private *p, const struct rt_set_source *src)
{
	for (size_t i = 0; i < p->recording_count; i++)
		if (p->recordings[i].context == src->recording)
			return &p->recordings[i];
	return NULL;
}

uint64_t rt_set_ring_first_record(const struct ring_state *rs, const struct recording *rec)
{
	uint64_t first_block = rs->block_count ? rs->blocks[0].first_record : 0;
	uint64_t first;
	if (rs->has_start)
		first = rs->start_record;
	else if (rec && rec->first_file_seq == 0)
		first = 0;
	else
		first = first_block;
	if (rs->block_count && first_block < first)
		first = first_block;
	return first;
}

void rt_set_cursor_rewind(struct ring_cursor *c)
{
	const struct recording *rec = rec_of(priv_of(c->set), &c->set->sources[c->source]);
	c->block_at = c->cover_at = c->owner_at = c->region_gap_at = 0;
	c->run_left = 0;
	c->unknown = c->lost_records = 0;
	c->readahead_length = 0;
	c->expected = rt_set_ring_first_record(c->rs, rec);
}

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
	const struct rt_site_table *sites;
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
	size_t n; /* items made */
};

static void block_decode_init(struct block_decode *d, struct ring_cursor *c,
			      const struct rt_block_header *h, int counting)
{
	struct set_private *p = priv_of(c->set);
	memset(d, 0, sizeof(*d));
	d->first_record = h->first_record;
	d->end_record = add_sat(h->first_record, h->count);
	d->sites = &c->rd->sites;
	d->skips = counting ? NULL : p->skips;
	d->skips_state = p->skips_state;
	d->counting = counting;
	d->site_counts = c->site_counts ? c->site_counts : c->set->sources[c->source].site_counts;
	d->lo = UINT64_MAX;
	c->payload_used = 0;
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
 */
static inline __attribute__((always_inline)) unsigned
take_record(struct ring_cursor *c, struct block_decode *d, const union rt_slot *rec,
	    const struct rt_slot_head *first, const struct rt_slot_cont *second, unsigned nslots,
	    const int plain)
{
	uint64_t seq = d->first_record + (uint32_t)(first->record - (uint32_t)d->first_record);
	if (seq >= d->end_record)
		return 1;
	unsigned lost_flags = 0; /* site_lost_flags, from the one lookup */
	const struct rt_site *site = NULL;
	if (first->kind != RT_REC_LOST) {
		site = rt_site_lookup(d->sites, first->site);
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
				    : (d->owner = owner_of(c, seq));
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
		if (first->site < d->sites->count)
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
		s += take_record(c, &d, &slots[s], &first, &second, nslots, 0);
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
	       const struct rt_block_header *h, const struct cursor_mark *mark, const int plain)
{
	for (;;) {
		struct rt_slot_head first;
		struct rt_slot_cont second;
		const int nslots = rt_packed_walk_next_record(w, &first, &second);
		if (nslots <= 0) {
			if (nslots == RT_PACKED_WALK_END)
				return block_decode_finish(c, d, h);
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
			take_record(c, d, NULL, &first, &second, (unsigned)nslots, plain);
		} else {
			union rt_slot rec[2];
			rec[0].head = first;
			if (nslots == 2)
				rec[1].cont = second;
			else
				memset(&rec[1], 0, sizeof(rec[1]));
			take_record(c, d, rec, &rec[0].head, &rec[1].cont, (unsigned)nslots, plain);
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
	return d.skips ? packed_records(c, &w, &d, h, &mark, 0)
		       : packed_records(c, &w, &d, h, &mark, 1);
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
static size_t read_ref(struct ring_cursor *c, const struct block_ref *ref)
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

/*
 * The header, as the file holds it, of the block at offset of the run's
 * file: through the read-ahead, or read alone.  0, or -1 when there is no
 * block there (the file changed since the scan, or cannot be read).
 */
static int header_at(struct ring_cursor *c, uint64_t offset, struct rt_block_header *h)
{
	const struct block_ref at = {.offset = offset, .file = c->run->file};
	if (c->readahead_capacity >= RT_BLOCK_MAX_BYTES) {
		int error = 0;
		uint64_t avail = 0;
		const unsigned char *b = rt_set_cursor_bytes(c, &at, &avail, &error);
		if (error)
			priv_of(c->set)->error = error;
		if (!b || avail < RT_BLOCK_HEADER_SIZE || !rt_block_magic_at(b))
			return -1;
		memcpy(h, b, sizeof(*h));
	} else {
		const struct rt_trace_file *f = &c->set->files[at.file].file;
		ssize_t got;
		do
			got = pread(f->fd, h, sizeof(*h), (off_t)offset);
		while (got < 0 && errno == EINTR);
		if (got != (ssize_t)sizeof(*h) || !rt_block_magic_at(h))
			return -1;
	}
	return h->size >= RT_BLOCK_HEADER_SIZE && h->size <= RT_BLOCK_MAX_BYTES &&
		       h->size % RT_BLOCK_ALIGN == 0
		   ? 0
		   : -1;
}

/*
 * The next block of the run the cursor walks: past the blocks of other
 * rings, sources and kinds, as the scan stepped from block to block (the
 * run spans no damage), to the next of its ring that holds records.  It
 * must start at the run's next record.  0: found, *ref its place; -1: the
 * file no longer holds it.
 */
static int next_in_run(struct ring_cursor *c, struct block_ref *ref)
{
	const struct rt_set_source *src = &c->set->sources[c->source];
	const uint64_t end = c->run->last_offset;
	while (c->run_at <= end) {
		struct rt_block_header h;
		if (header_at(c, c->run_at, &h))
			return -1;
		const uint64_t offset = c->run_at;
		c->run_at += h.size;
		if ((h.type != RT_BLOCK_SLOTS && h.type != RT_BLOCK_PACKED) || h.ring != c->ring ||
		    h.source != src->number || h.file_id != src->file_id || h.count == 0)
			continue;
		if (h.first_record != c->run_next || h.count > c->run_left)
			return -1;
		ref->offset = ref->last_offset = offset;
		ref->first_record = h.first_record;
		ref->count = h.count;
		ref->counter_first = h.counter_first;
		ref->counter_last = h.counter_last;
		ref->file = c->run->file;
		ref->order = c->run->order;
		c->run_next += h.count;
		c->run_left -= h.count;
		return 0;
	}
	return -1;
}

/* Fill the cursor with the next block that gives items.  0: the ring is done. */
size_t rt_set_cursor_refill(struct ring_cursor *c)
{
	for (;;) {
		size_t n = 0;
		if (c->run_left) {
			struct block_ref ref;
			if (next_in_run(c, &ref)) {
				/* the file changed since the scan: the rest of the run is a gap */
				rt_set_gap_to(c, add_sat(c->run->first_record, c->run->count),
					      c->run->counter_last, &n);
				c->run_left = 0;
			} else if (add_sat(ref.first_record, ref.count) > c->expected) {
				n = read_ref(c, &ref);
			}
		} else if (c->block_at < c->rs->block_count) {
			const struct block_ref *ref = &c->rs->blocks[c->block_at++];
			if (add_sat(ref->first_record, ref->count) <= c->expected)
				continue; /* every record in it was read already */
			if (ref->last_offset != ref->offset) {
				/* a run: its blocks are walked to, one at a time */
				c->run = ref;
				c->run_at = ref->offset;
				c->run_next = ref->first_record;
				c->run_left = ref->count;
				continue;
			}
			n = read_ref(c, ref);
		} else {
			rt_set_gap_to_end(c, &n); /* once: it moves expected to the end */
			return n;
		}
		if (n)
			return n;
	}
}

/* The next window of an arena thread's cursor: 0 when it is done. */
int rt_set_arena_refill(struct cursor *cur)
{
	size_t n = rt_arena_cursor_fill(cur->arena);
	cur->next = cur->end = NULL;
	if (n) {
		cur->next = cur->arena->items;
		cur->end = cur->arena->items + n;
	}
	return n > 0;
}

int rt_set_cursor_advance(struct cursor *cur)
{
	if (cur->next < cur->end)
		cur->next++;
	if (cur->next == cur->end && cur->arena)
		return rt_set_arena_refill(cur);
	if (cur->next < cur->end || !cur->ring)
		return cur->next < cur->end;
	size_t n = rt_set_cursor_refill(cur->ring);
	cur->next = cur->ring->items;
	cur->end = cur->ring->items + n;
	return n > 0;
}

/* Past the records of a block (its end) as if they had been read. */
static void skip_to(struct ring_cursor *c, uint64_t first_record, uint32_t count)
{
	uint64_t end = add_sat(first_record, count);
	if (end > c->expected)
		c->expected = end;
}

/*
 * Past the blocks at the start of the run ref whose records all come before
 * ns, walking to them (their headers say their last record's time).  1 when
 * the whole run was passed; 0 when the cursor's walk of the run stands at
 * the first block that may hold a record at or after ns (or at one the file
 * no longer holds: the walk reports it).
 */
static int skip_in_run(struct ring_cursor *c, const struct block_ref *ref, int64_t ns)
{
	c->run = ref;
	c->run_at = ref->offset;
	c->run_next = ref->first_record;
	c->run_left = ref->count;
	while (c->run_left) {
		const uint64_t at = c->run_at, next = c->run_next, left = c->run_left;
		struct block_ref one;
		if (next_in_run(c, &one) ||
		    rt_timebase_ns(&c->rd->timebase, one.counter_last) >= ns) {
			c->run_at = at;
			c->run_next = next;
			c->run_left = left;
			return 0;
		}
		skip_to(c, one.first_record, one.count);
	}
	return 1;
}

/*
 * Past the first blocks of c whose records all come before ns (by the
 * index, or a run's blocks' headers: their last record's time), as if they
 * had been read: no gap is reported for them, and the walk begins at the
 * first block that may hold a record at or after ns.  Only a prefix is
 * skipped, so a block out of time order is never passed over.
 */
static void cursor_skip_before(struct ring_cursor *c, int64_t ns)
{
	const struct ring_state *rs = c->rs;
	size_t b = 0;
	for (; b < rs->block_count; b++) {
		const struct block_ref *ref = &rs->blocks[b];
		if (ref->last_offset != ref->offset) {
			if (!skip_in_run(c, ref, ns)) {
				c->block_at = b + 1; /* the walk of its run goes on from there */
				return;
			}
			continue;
		}
		if (rt_timebase_ns(&c->rd->timebase, ref->counter_last) >= ns)
			break;
		skip_to(c, ref->first_record, ref->count);
	}
	c->block_at = b;
}

void rt_set_cursor_start(struct cursor *cur, int64_t from_ns)
{
	if (cur->ring) {
		rt_set_cursor_rewind(cur->ring);
		if (from_ns != INT64_MIN)
			cursor_skip_before(cur->ring, from_ns);
		size_t n = rt_set_cursor_refill(cur->ring);
		cur->next = cur->ring->items;
		cur->end = cur->ring->items + n;
	} else if (cur->arena) {
		rt_arena_cursor_rewind(cur->arena);
		rt_set_arena_refill(cur);
	} else {
		cur->next = cur->base;
		cur->end = cur->base + cur->count;
	}
}

static int add_cursor(struct set_private *p, size_t *capacity, uint32_t source,
		      const struct rt_item *items, size_t count, struct ring_cursor *ring)
{
	if (!ring && count == 0)
		return 0;
	if (grow((void **)&p->cursors, capacity, p->cursor_count + 1, sizeof(*p->cursors)))
		return -ENOMEM;
	struct cursor *c = &p->cursors[p->cursor_count++];
	c->source = source;
	c->base = items;
	c->count = count;
	c->ring = ring;
	c->arena = NULL;
	return 0;
}

/* A cursor over thread `thread` of an arena source, if it has items. */
static int add_arena_cursor(struct set_private *p, size_t *capacity, uint32_t source,
			    const struct rt_reader *rd, uint32_t thread, size_t window)
{
	if (!rd->threads[thread].item_count)
		return 0;
	struct rt_arena_cursor *a = malloc(sizeof(*a));
	if (!a || rt_arena_cursor_init(a, rd, thread, window) ||
	    grow((void **)&p->cursors, capacity, p->cursor_count + 1, sizeof(*p->cursors))) {
		if (a)
			rt_arena_cursor_free(a);
		free(a);
		return -ENOMEM;
	}
	struct cursor *c = &p->cursors[p->cursor_count++];
	memset(c, 0, sizeof(*c));
	c->source = source;
	c->arena = a;
	return 0;
}

/* Every item list of every source, as cursors. */
int rt_set_make_cursors(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	size_t capacity = 0, rings = 0, arena_threads = 0;
	/* the merge's sources are made last: without, the cursors are not made yet */
	if (p->merge_sources)
		return 0;
	for (size_t i = 0; i < set->source_count; i++)
		for (uint32_t t = 0;
		     set->sources[i].arena && t < set->sources[i].reader->thread_count; t++)
			arena_threads += set->sources[i].reader->threads[t].item_count > 0;
	const size_t window = rt_arena_window_for(arena_threads);
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		struct rt_reader *rd = s->reader;
		uint32_t src = (uint32_t)i;
		if (s->arena) {
			for (uint32_t t = 0; t < rd->thread_count; t++)
				if (add_arena_cursor(p, &capacity, src, rd, t, window))
					return -ENOMEM;
			if (add_cursor(p, &capacity, src, rd->losses, rd->loss_count, NULL))
				return -ENOMEM;
			continue;
		}
		if (s->context) {
			for (size_t r = 0; r < p->recording_count; r++)
				if (p->recordings[r].context == src &&
				    (add_cursor(p, &capacity, src, p->recordings[r].regions,
						p->recordings[r].region_count, NULL) ||
				     add_cursor(p, &capacity, src, p->recordings[r].unplaced,
						p->recordings[r].unplaced_count, NULL)))
					return -ENOMEM;
			continue;
		}
		struct file_source *fs = s->priv;
		if (add_cursor(p, &capacity, src, fs->loss_items, fs->loss_item_count, NULL))
			return -ENOMEM;
		for (size_t r = 0; r < fs->ring_capacity; r++) {
			struct ring_state *rs = &fs->rings[r];
			/*
			 * A ring with no block left: only an end past its start says
			 * something (all its records lost with the damage).
			 */
			if (rs->block_count == 0 &&
			    !(rs->has_end &&
			      rs->end_record > rt_set_ring_first_record(rs, rec_of(p, s))))
				continue;
			rt_set_sort_ring(rs);
			struct ring_cursor *c =
			    aligned_alloc(_Alignof(struct ring_cursor), sizeof(*c));
			if (c)
				memset(c, 0, sizeof(*c));
			if (!c)
				return -ENOMEM;
			c->set = set;
			c->rd = rd;
			c->fs = fs;
			c->rs = rs;
			c->ring = (uint32_t)r;
			c->source = src;
			if (ring_owners(c) || add_cursor(p, &capacity, src, NULL, 0, c)) {
				free(c->owners);
				free(c);
				return -ENOMEM;
			}
			rings++;
		}
	}
	/* read-ahead: what the budget gives each ring cursor, at least one block */
	size_t each = rings ? READAHEAD_BUDGET / rings : 0;
	if (each > READAHEAD_MAX)
		each = READAHEAD_MAX;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *c = p->cursors[i].ring;
		if (!c || each < 2 * (size_t)RT_BLOCK_MAX_BYTES)
			continue;
		c->readahead = malloc(each);
		if (!c->readahead)
			return -ENOMEM;
		c->readahead_capacity = each;
	}
	p->merge_sources = calloc(p->cursor_count + 1, sizeof(*p->merge_sources));
	return p->merge_sources ? 0 : -ENOMEM;
}
