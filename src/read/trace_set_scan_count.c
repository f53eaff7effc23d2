/*
 * trace_set_scan_count.c - counting during the scan: the counts of the count
 * pass, taken while the scan reads each block, when the scan can be sure of
 * them.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include "read/trace_set_private.h"

/*
 * The count pass reads every SLOTS block again after the scan.  When the
 * scan can be sure of giving the very same counts, it counts each SLOTS
 * block from its own buffer instead, as rt_set_count_in_file_order would, and the
 * count pass only takes the results over.  Sure means: one trace file, one
 * recording, no damage, every ring's blocks in record order; the metadata a
 * block is decoded with may still grow, but nothing that changes a
 * decoding already done: a site already read stays as it was (and a new
 * one comes only if no record missed its site), no LOSS entry covers a
 * ring already counted, no RINGS entry moves its start, and every thread
 * table read later gives each record already counted the same owner
 * (checked whenever the table changes).  Anything else turns it off for
 * good, and the count pass reads the files as before.
 */

/* Metadata rebuilt while counting early, in entries; past it the count pass reads again. */
#define EARLY_WORK_MAX (1ull << 24)

void rt_set_free_early(struct early_source *es)
{
	if (!es)
		return;
	free(es->rd.threads);
	rt_site_table_free(&es->rd.sites);
	for (size_t i = 0; i < es->ring_capacity; i++) {
		free(es->rings[i].rs.covers);
		free(es->rings[i].owners);
	}
	free(es->rings);
	free(es->site_counts);
	free(es);
}

static struct file_source *early_source_of(struct rt_trace_set *set,
					   const struct rt_block_header *h)
{
	struct set_private *p = priv_of(set);
	if (p->recording_count != 1 || h->source >= p->recordings[0].source_capacity)
		return NULL;
	return p->recordings[0].sources[h->source];
}

/* Whether owners a and b give every record of [from, to) the same thread entry and tid. */
static int owners_agree(const struct owner *a, size_t na, const struct rt_reader_thread *ta,
			const struct owner *b, size_t nb, const struct rt_reader_thread *tb,
			uint64_t from, uint64_t to)
{
	size_t i = 0, k = 0;
	for (uint64_t at = from; at < to;) {
		while (i < na && a[i].end <= at)
			i++;
		while (k < nb && b[k].end <= at)
			k++;
		const struct owner *x = i < na && a[i].first <= at ? &a[i] : NULL;
		const struct owner *y = k < nb && b[k].first <= at ? &b[k] : NULL;
		if (!x != !y)
			return 0;
		if (x && y && (ta[x->thread].entry != tb[y->thread].entry || x->tid != y->tid))
			return 0;
		uint64_t next = to;
		uint64_t nx = x ? x->end : i < na ? a[i].first : to;
		uint64_t ny = y ? y->end : k < nb ? b[k].first : to;
		next = nx < next ? nx : next;
		next = ny < next ? ny : next;
		at = next;
	}
	return 1;
}

/* The thread table again from fs's entries: counts move along, owners must agree. */
static int early_threads(struct set_private *p, struct file_source *fs, struct early_source *es)
{
	struct rt_reader_thread *old = es->rd.threads;
	uint32_t old_count = es->rd.thread_count;
	es->rd.threads = calloc(fs->thread_capacity + 1, sizeof(*es->rd.threads));
	es->rd.thread_count = 0;
	int ok = es->rd.threads != NULL;
	if (ok)
		rt_set_fill_threads(&es->rd, fs, NULL);
	p->early_work += fs->thread_capacity + 1;
	for (size_t r = 0; ok && r < es->ring_capacity && p->early_work <= EARLY_WORK_MAX; r++) {
		struct early_ring *er = &es->rings[r];
		struct owner *owners;
		size_t n;
		if (!er->started)
			continue;
		if (rt_set_owners_of_ring(&es->rd, (uint32_t)r, &owners, &n)) {
			ok = 0;
			break;
		}
		p->early_work += es->rd.thread_count + n + er->owner_count;
		ok = old && owners_agree(er->owners, er->owner_count, old, owners, n,
					 es->rd.threads, er->start, er->expected);
		free(er->owners);
		er->owners = owners;
		er->owner_count = n;
		er->owner_at = 0;
	}
	/* both tables are in entry order */
	for (uint32_t i = 0, k = 0; ok && i < old_count; i++) {
		while (k < es->rd.thread_count && es->rd.threads[k].entry < old[i].entry)
			k++;
		struct rt_reader_thread *t =
		    k < es->rd.thread_count && es->rd.threads[k].entry == old[i].entry
			? &es->rd.threads[k]
			: NULL;
		if (!t) {
			static const struct rt_counts none;
			ok = !old[i].last.kind && !memcmp(&old[i].counts, &none, sizeof(none));
			continue;
		}
		t->counts = old[i].counts;
		t->last = old[i].last;
		if (t->last.kind)
			t->last.thread = k;
	}
	free(old);
	return ok && p->early_work <= EARLY_WORK_MAX;
}

static int early_sites(struct file_source *fs, struct early_source *es)
{
	rt_site_table_free(&es->rd.sites);
	memset(&es->rd.sites, 0, sizeof(es->rd.sites));
	if (rt_set_build_sites(&es->rd, fs))
		return 0;
	size_t slots = (size_t)es->rd.sites.count + 1;
	if (slots > es->site_slots) {
		uint64_t *more = realloc(es->site_counts, slots * sizeof(*more));
		if (!more)
			return 0;
		memset(more + es->site_slots, 0, (slots - es->site_slots) * sizeof(*more));
		es->site_counts = more;
		es->site_slots = slots;
	}
	return 1;
}

/* What a metadata block would change for records counted already. */
void rt_set_early_before(struct rt_trace_set *set, const struct rt_block_header *h,
			 const unsigned char *payload)
{
	struct set_private *p = priv_of(set);
	if (!p->early_have_file) {
		p->early_have_file = 1;
		p->early_file_id = h->file_id;
	} else if (h->file_id != p->early_file_id) {
		p->early_off = 1;
		return;
	}
	if (h->type == RT_BLOCK_FILE || h->type == RT_BLOCK_END)
		return;
	struct file_source *fs = early_source_of(set, h);
	struct early_source *es = fs ? fs->early : NULL;
	if (!es)
		return;
	int off = 0;
	if (h->type == RT_BLOCK_SITES) {
		size_t at = 0;
		for (uint32_t i = 0; i < h->count && !off; i++) {
			struct rt_block_site r;
			memcpy(&r, payload + at, sizeof(r));
			const unsigned char *strings = payload + at + sizeof(r);
			uint32_t strings_size = r.size - (uint32_t)sizeof(r);
			at += r.size;
			if (r.index >= MAX_SITES)
				continue;
			const struct site_copy *c =
			    r.index < fs->site_capacity ? &fs->sites[r.index] : NULL;
			if (c && c->present)
				off = memcmp(&c->entry, &r.entry, sizeof(r.entry)) != 0 ||
				      c->strings_size != strings_size ||
				      memcmp(c->strings, strings, strings_size) != 0;
			else
				off = es->misses != 0; /* a record may have named it */
		}
	} else if (h->type == RT_BLOCK_RINGS && !(h->flags & RT_BLOCK_F_FINAL)) {
		const struct recording *rec = &p->recordings[0];
		for (uint32_t i = 0; i < h->count && h->file_seq == rec->first_file_seq && !off;
		     i++) {
			struct rt_block_ring r;
			memcpy(&r, payload + (size_t)i * sizeof(r), sizeof(r));
			off = r.index < es->ring_capacity && es->rings[r.index].started &&
			      (r.index >= fs->ring_capacity || !fs->rings[r.index].has_start);
		}
	} else if (h->type == RT_BLOCK_LOSS) {
		for (uint32_t i = 0; i < h->count && !off; i++) {
			struct rt_block_loss l;
			memcpy(&l, payload + (size_t)i * sizeof(l), sizeof(l));
			off = l.count &&
			      (l.reason == RT_LOSS_REASON_OVERWRITTEN ||
			       l.reason == RT_LOSS_REASON_TORN ||
			       l.reason == RT_LOSS_REASON_DAMAGED) &&
			      l.ring < es->ring_capacity && es->rings[l.ring].started;
		}
	}
	if (off)
		p->early_off = 1;
}

static void early_tally(struct rt_trace_set *set, uint32_t source, struct early_source *es,
			const struct rt_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct rt_item *it = &items[i];
		struct rt_reader_thread *t =
		    it->thread < es->rd.thread_count ? &es->rd.threads[it->thread] : NULL;
		struct rt_counts *c = t ? &t->counts : &es->unattributed;
		/* counting decodes give losses, and events only of no known thread */
		if (rt_item_kind_is_event(it->kind)) {
			c->present++;
			set->events++;
			if (it->site < es->rd.sites.count)
				es->site_counts[it->site]++;
			rt_set_span_counter(set, it->counter, source);
			continue;
		}
		rt_set_count_loss(c, it);
	}
}

static int early_slots(struct rt_trace_set *set, struct file_source *fs, uint64_t offset,
		       const struct rt_block_header *h, const unsigned char *b)
{
	struct set_private *p = priv_of(set);
	struct early_source *es = fs->early;
	if (h->count == 0 || h->ring >= fs->ring_capacity)
		return 1;
	struct ring_state *rs = &fs->rings[h->ring];
	if (rs->block_count == 0 || rs->last.offset != offset || rs->last.file != p->current_file)
		return 1; /* not indexed */
	const struct block_ref *ref = &rs->last;
	if (!es) {
		es = fs->early = calloc(1, sizeof(*es));
		if (!es || !early_threads(p, fs, es) || !early_sites(fs, es))
			return 0;
	}
	if (!p->early_cursor && !(p->early_cursor = calloc(1, sizeof(*p->early_cursor))))
		return 0;
	if (grow((void **)&es->rings, &es->ring_capacity, (size_t)h->ring + 1, sizeof(*es->rings)))
		return 0;
	struct early_ring *er = &es->rings[h->ring];
	if (!er->started) {
		/* as rt_set_cursor_rewind: its first block is its lowest, or the ring is off */
		const struct recording *rec = &p->recordings[0];
		if (rs->has_start)
			er->expected = rs->start_record;
		else
			er->expected = rec->first_file_seq == 0 ? 0 : ref->first_record;
		if (ref->first_record < er->expected)
			er->expected = ref->first_record;
		er->start = er->expected;
		if (rs->cover_count) {
			er->rs.covers = malloc(rs->cover_count * sizeof(*rs->covers));
			if (!er->rs.covers)
				return 0;
			memcpy(er->rs.covers, rs->covers, rs->cover_count * sizeof(*rs->covers));
			er->rs.cover_count = rs->cover_count;
			qsort(er->rs.covers, er->rs.cover_count, sizeof(*er->rs.covers),
			      rt_set_compare_covers);
		}
		if (rt_set_owners_of_ring(&es->rd, h->ring, &er->owners, &er->owner_count))
			return 0;
		er->started = 1;
	} else if (ref->first_record < er->last_first) {
		return 0; /* not in record order: the count pass sorts it */
	}
	er->last_first = ref->first_record;
	if (add_sat(ref->first_record, ref->count) <= er->expected)
		return 1; /* every record in it was read already */
	struct ring_cursor *c = p->early_cursor;
	c->set = set;
	c->rd = &es->rd;
	c->fs = fs;
	c->rs = &er->rs;
	c->ring = h->ring;
	c->source = fs->index;
	c->owners = er->owners;
	c->owner_count = er->owner_count;
	c->owner_at = er->owner_at;
	c->cover_at = er->cover_at;
	c->expected = er->expected;
	c->unknown = c->lost_records = c->site_misses = 0;
	c->site_counts = es->site_counts;
	struct rt_block_header bh;
	size_t n;
	if (rt_set_block_matches(c, ref, b, h->size, &bh)) {
		n = rt_set_decode_block(c, b, &bh, 1);
	} else {
		n = 0;
		rt_set_gap_to(c, add_sat(ref->first_record, ref->count), ref->counter_first, &n);
	}
	early_tally(set, fs->index, es, c->items, n);
	er->expected = c->expected;
	er->owner_at = c->owner_at;
	er->cover_at = c->cover_at;
	es->unknown += c->unknown;
	es->lost_records += c->lost_records;
	es->misses += c->site_misses;
	c->owners = NULL;
	return 1;
}

/* After a block was kept: the metadata as it stands now, or the SLOTS block counted. */
void rt_set_early_after(struct rt_trace_set *set, uint64_t offset, const struct rt_block_header *h,
			const unsigned char *b)
{
	struct set_private *p = priv_of(set);
	if (h->type == RT_BLOCK_FILE || h->type == RT_BLOCK_END)
		return;
	struct file_source *fs = early_source_of(set, h);
	if (!fs) {
		p->early_off = h->type == RT_BLOCK_SLOTS && h->count && h->source < MAX_SOURCES;
		return;
	}
	int ok = 1;
	if (h->type == RT_BLOCK_SLOTS)
		ok = early_slots(set, fs, offset, h, b);
	else if (fs->early && (h->type == RT_BLOCK_THREADS || h->type == RT_BLOCK_SOURCE))
		ok = early_threads(p, fs, fs->early);
	else if (fs->early && h->type == RT_BLOCK_SITES)
		ok = early_sites(fs, fs->early);
	if (!ok)
		p->early_off = 1;
}

/* The scan is over: what it counted waits for rt_trace_set_count, the set looks as before. */
void rt_set_early_finish(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	p->early_done = !p->early_off;
	/* records lost at a ring's end (rt_set_gap_to_end): the count pass reports them */
	for (size_t i = 0; i < p->recording_count && p->early_done; i++)
		for (size_t k = 0; k < p->recordings[i].source_capacity && p->early_done; k++) {
			const struct file_source *fs = p->recordings[i].sources[k];
			const struct early_source *es = fs ? fs->early : NULL;
			for (size_t r = 0; es && r < fs->ring_capacity && p->early_done; r++) {
				const struct ring_state *rs = &fs->rings[r];
				uint64_t at = r < es->ring_capacity && es->rings[r].started
						  ? es->rings[r].expected
						  : rs->start_record;
				p->early_done = !rs->has_end || rs->end_record <= at;
			}
		}
	p->early_events = set->events;
	p->early_have_span = set->have_span;
	p->early_first = set->first_counter;
	p->early_last = set->last_counter;
	p->early_first_source = set->first_source;
	p->early_last_source = set->last_source;
	set->events = 0;
	set->have_span = 0;
	set->first_counter = set->last_counter = 0;
	set->first_source = set->last_source = 0;
	for (size_t i = 0; i < p->recording_count && !p->early_done; i++)
		for (size_t k = 0; k < p->recordings[i].source_capacity; k++) {
			struct file_source *fs = p->recordings[i].sources[k];
			if (fs) {
				rt_set_free_early(fs->early);
				fs->early = NULL;
			}
		}
}

/* Whether the two thread tables are the same threads in the same order. */
static int same_threads(const struct rt_reader *a, const struct rt_reader *b)
{
	if (a->thread_count != b->thread_count)
		return 0;
	for (uint32_t i = 0; i < a->thread_count; i++) {
		const struct rt_reader_thread *x = &a->threads[i], *y = &b->threads[i];
		if (x->entry != y->entry || x->tid != y->tid || x->ring != y->ring ||
		    x->first_record != y->first_record || x->end_record != y->end_record)
			return 0;
	}
	return 1;
}

/*
 * Take over what the scan counted, when it counted every ring there is
 * (the count pass was reset just before).  0: the count pass must read.
 */
static int early_apply(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	if (!p->early_done)
		return 0;
	for (size_t i = 0; i < p->cursor_count; i++) {
		const struct ring_cursor *c = p->cursors[i].ring;
		if (!c)
			continue;
		const struct early_source *es = c->fs->early;
		if (!es || c->ring >= es->ring_capacity || !es->rings[c->ring].started ||
		    !same_threads(&es->rd, c->rd) ||
		    es->site_slots != (size_t)c->rd->sites.count + 1)
			return 0;
	}
	for (size_t i = 0; i < p->cursor_count; i++)
		if (p->cursors[i].ring)
			p->cursors[i].ring->counted = 1;
	set->events = p->early_events;
	set->have_span = p->early_have_span;
	set->first_counter = p->early_first;
	set->last_counter = p->early_last;
	set->first_source = p->early_first_source;
	set->last_source = p->early_last_source;
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		struct file_source *fs = s->arena || s->context ? NULL : s->priv;
		const struct early_source *es = fs ? fs->early : NULL;
		if (!es)
			continue;
		memcpy(s->site_counts, es->site_counts, es->site_slots * sizeof(uint64_t));
		s->unknown_records += es->unknown;
		s->lost_records += es->lost_records;
		for (uint32_t t = 0; t < s->reader->thread_count; t++) {
			s->reader->threads[t].counts = es->rd.threads[t].counts;
			s->reader->threads[t].last = es->rd.threads[t].last;
		}
		fs->unattributed = es->unattributed;
	}
	return 1;
}

/* For tests: whether rt_trace_set_count takes over what the scan counted. */
int rt_trace_set_counted_in_scan(const struct rt_trace_set *set)
{
	return priv_of(set)->early_done;
}

static int count_set(struct rt_trace_set *set);

int rt_trace_set_count(struct rt_trace_set *set)
{
	/* a count counts everything: what a reader drops is read here */
	struct set_private *p = priv_of(set);
	int (*skips)(void *, const struct rt_site *) = p->skips;
	p->skips = NULL;
	int rc = count_set(set);
	priv_of(set)->skips = skips;
	return rc;
}

/* Zero what a count fills, before every item is tallied again. */
int rt_set_count_reset(struct rt_trace_set *set)
{
	memset(&set->totals, 0, sizeof(set->totals));
	set->events = 0;
	set->have_span = 0;
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		struct rt_reader *rd = s->reader;
		free(s->site_counts);
		s->site_counts = calloc((size_t)rd->sites.count + 1, sizeof(uint64_t));
		if (!s->site_counts)
			return -ENOMEM;
		s->unknown_records = s->lost_records = 0;
		if (s->context)
			memset(&rd->totals, 0, sizeof(rd->totals));
		if (s->arena || s->context)
			continue;
		for (uint32_t t = 0; t < rd->thread_count; t++) {
			memset(&rd->threads[t].counts, 0, sizeof(rd->threads[t].counts));
			memset(&rd->threads[t].last, 0, sizeof(rd->threads[t].last));
		}
		if (s->priv)
			memset(&((struct file_source *)s->priv)->unattributed, 0,
			       sizeof(struct rt_counts));
	}
	return 0;
}

/*
 * Once every cursor's items were tallied (ring cursors read to their end):
 * what the ring cursors found besides items, and every source's totals.
 */
void rt_set_count_finish(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	for (size_t i = 0; i < p->cursor_count; i++) {
		const struct ring_cursor *c = p->cursors[i].ring;
		if (c && !c->counted) {
			set->sources[p->cursors[i].source].unknown_records += c->unknown;
			set->sources[p->cursors[i].source].lost_records += c->lost_records;
		}
	}
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		struct rt_reader *rd = s->reader;
		struct file_source *fs = s->priv;
		if (!s->arena && !s->context && fs) {
			memset(&rd->totals, 0, sizeof(rd->totals));
			for (uint32_t t = 0; t < rd->thread_count; t++) {
				struct rt_counts *c = &rd->threads[t].counts;
				c->committed = add_sat(c->present, rt_counts_lost(c));
				rt_set_counts_add(&rd->totals, c);
			}
			fs->unattributed.committed =
			    add_sat(fs->unattributed.present, rt_counts_lost(&fs->unattributed));
			rt_set_counts_add(&rd->totals, &fs->unattributed);
			rt_set_entry_last(rd, fs);
			/* records before the first file read are in earlier files: not lost */
			if (fs->first_file_seq > 0)
				for (size_t r = 0; r < fs->ring_capacity; r++)
					s->earlier_records =
					    add_sat(s->earlier_records, fs->rings[r].start_record);
		}
		rt_set_counts_add(&set->totals, &rd->totals);
	}
	set->processes = rt_set_count_processes(set);
}

/* Tally what cursor i holds now: an arena source's count once, for its first thread. */
void rt_set_tally_cursor(struct rt_trace_set *set, size_t i)
{
	struct set_private *p = priv_of(set);
	struct cursor *cur = &p->cursors[i];
	if (cur->arena) {
		/* the arena reader counted its threads' items: none is read again */
		if (i == 0 || p->cursors[i - 1].source != cur->source)
			rt_set_tally_arena(set, cur->source);
		return;
	}
	rt_set_tally_block(set, cur, cur->next, (size_t)(cur->end - cur->next));
}

static int count_set(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	int rc = rt_set_make_cursors(set);
	if (rc)
		return rc;
	p->error = 0;
	if ((rc = rt_set_count_reset(set)) != 0)
		return rc;
	int counted = early_apply(set);
	if (!counted && (p->index_merged || p->index_runs)) {
		/* the runs cannot be read in file order: the whole index, then count as any set */
		if ((rc = rt_set_reopen_indexed(set)) != 0)
			return rc;
		return count_set(set);
	}
	rc = counted ? 0 : rt_set_count_in_file_order(set);
	if (rc)
		return rc;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct cursor *cur = &p->cursors[i];
		if (cur->ring && cur->ring->counted)
			continue;
		if (cur->arena) {
			rt_set_tally_cursor(set, i);
			continue;
		}
		if (cur->ring)
			cur->ring->tallying = 0; /* items one at a time, below */
		for (rt_set_cursor_start(cur, INT64_MIN); cur->next < cur->end;
		     rt_set_cursor_advance(cur))
			rt_set_tally(set, cur, cur->next, 1);
	}
	rt_set_count_finish(set);
	return p->error;
}
