/*
 * trace_set_count.c - counting: every item of the set counted, in file order.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include <unistd.h>

#include "read/trace_set_private.h"

void rt_set_count_loss(struct rt_counts *c, const struct rt_item *it)
{
	switch (it->loss.reason) {
	case RT_LOSS_OVERWRITTEN:
		c->overwritten = add_sat(c->overwritten, it->loss.count);
		break;
	case RT_LOSS_DROPPED:
		c->dropped = add_sat(c->dropped, it->loss.count);
		break;
	case RT_LOSS_TORN:
		c->torn = add_sat(c->torn, it->loss.count);
		break;
	default:
		c->damaged = add_sat(c->damaged, it->loss.count);
		if (it->loss.note == RT_NOTE_NOTED_DAMAGE)
			c->damaged_noted = add_sat(c->damaged_noted, it->loss.count);
		break;
	}
}

void rt_set_counts_add(struct rt_counts *to, const struct rt_counts *c)
{
	to->committed = add_sat(to->committed, c->committed);
	to->present = add_sat(to->present, c->present);
	to->overwritten = add_sat(to->overwritten, c->overwritten);
	to->consumed = add_sat(to->consumed, c->consumed);
	to->dropped = add_sat(to->dropped, c->dropped);
	to->torn = add_sat(to->torn, c->torn);
	to->damaged = add_sat(to->damaged, c->damaged);
	to->damaged_noted = add_sat(to->damaged_noted, c->damaged_noted);
}

void rt_set_span_counter(struct rt_trace_set *set, uint64_t counter, uint32_t source)
{
	if (!set->have_span || counter < set->first_counter) {
		set->first_counter = counter;
		set->first_source = source;
	}
	if (!set->have_span || counter > set->last_counter) {
		set->last_counter = counter;
		set->last_source = source;
	}
	set->have_span = 1;
}

/* A thread entry's own copy of its last event, if newer than what the rings gave. */
void rt_set_entry_last(struct rt_reader *rd, struct file_source *fs)
{
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		struct rt_reader_thread *t = &rd->threads[i];
		struct rt_last_event ev = {0};
		if (!rt_last_event_read(&fs->threads[t->entry].entry, &ev) ||
		    ev.kind != RT_REC_TRACE || !rt_site_lookup(&rd->sites, ev.site) ||
		    rt_site_kind_long(rd->sites.sites[ev.site].kind))
			continue;
		struct rt_item from_entry;
		memset(&from_entry, 0, sizeof(from_entry));
		from_entry.kind = RT_ITEM_TRACE;
		from_entry.flags = RT_ITEM_TIMED | RT_ITEM_NO_SEQ;
		from_entry.counter = ev.counter;
		from_entry.tid = t->tid;
		from_entry.thread = i;
		from_entry.site = ev.site;
		from_entry.cpu = ev.cpu;
		memcpy(from_entry.args.a32, ev.a32, sizeof(ev.a32));
		memcpy(from_entry.args.a64, ev.a64, sizeof(ev.a64));
		if (rt_entry_last_is_newer(&ev, &from_entry, &t->last,
					   fs->threads[t->entry].entry.state == RT_THREAD_EXITED))
			t->last = from_entry;
	}
}

/* A run of one thread's events ends: its count, and its last trace item as the thread's last. */
static void tally_run_end(struct rt_reader *rd, struct file_source *fs, uint32_t thread,
			  uint64_t present, const struct rt_item *last)
{
	if (!present)
		return;
	if (thread < rd->thread_count) {
		rd->threads[thread].counts.present += present;
		if (last)
			rd->threads[thread].last = *last;
	} else {
		fs->unattributed.present += present;
	}
}

/*
 * Count n items of cursor cur's source.  The counts that every event moves
 * are kept in locals and added once a call: written through pointers item
 * by item, each would be read again after every per-site count, which
 * could be any of them.  known_events_tallied: the events of known threads
 * among them were tallied as they were decoded, and are left out.
 */
static inline __attribute__((always_inline)) void tally(struct rt_trace_set *set,
							const struct cursor *cur,
							const struct rt_item *items, size_t n,
							const int known_events_tallied)
{
	struct rt_set_source *s = &set->sources[cur->source];
	struct rt_reader *rd = s->reader;
	struct file_source *fs = s->arena || s->context ? NULL : s->priv;
	uint64_t *const site_counts = s->site_counts;
	const uint32_t site_count = rd->sites.count, thread_count = rd->thread_count;
	uint64_t events = 0, lo = UINT64_MAX, hi = 0;
	/*
	 * The run of one thread's events the loop is in: how many, and the
	 * last trace item, added to the thread when the run ends (a ring's
	 * block is nearly always one run).
	 */
	uint32_t run_thread = UINT32_MAX;
	uint64_t run_present = 0;
	const struct rt_item *run_last = NULL;
	for (size_t i = 0; i < n; i++) {
		const struct rt_item *it = &items[i];
		if (!rt_item_kind_is_event(it->kind)) {
			/* in a thread's items, a drop is a LOST record of its ring */
			if (s->arena && cur->base != rd->losses &&
			    it->loss.reason == RT_LOSS_DROPPED)
				s->lost_records++;
			if (fs) {
				struct rt_counts *c = it->thread < thread_count
							  ? &rd->threads[it->thread].counts
							  : &fs->unattributed;
				rt_set_count_loss(c, it);
			} else if (s->context) {
				rt_set_count_loss(&rd->totals, it);
			}
			continue;
		}
		if (known_events_tallied && rt_set_tallied_as_decoded(it, thread_count))
			continue;
		events++;
		if (it->site < site_count)
			site_counts[it->site]++;
		lo = it->counter < lo ? it->counter : lo;
		hi = it->counter > hi ? it->counter : hi;
		if (!fs)
			continue;
		if (it->thread != run_thread) {
			tally_run_end(rd, fs, run_thread, run_present, run_last);
			run_thread = it->thread;
			run_present = 0;
			run_last = NULL;
		}
		run_present++;
		/* a log item's payload lives no longer than its block */
		if (it->kind == RT_ITEM_TRACE)
			run_last = it;
	}
	if (fs)
		tally_run_end(rd, fs, run_thread, run_present, run_last);
	if (events) {
		set->events += events;
		rt_set_span_counter(set, lo, cur->source);
		rt_set_span_counter(set, hi, cur->source);
	}
}

void rt_set_tally(struct rt_trace_set *set, const struct cursor *cur, const struct rt_item *items,
		  size_t n)
{
	tally(set, cur, items, n, 0);
}

void rt_set_tally_block(struct rt_trace_set *set, const struct cursor *cur,
			const struct rt_item *items, size_t n)
{
	const size_t tallied = cur->ring ? cur->ring->tallied : 0;
	if (tallied == 0)
		tally(set, cur, items, n, 0);
	else if (tallied < n)
		tally(set, cur, items, n, 1);
}

/*
 * What rt_set_tally() would count of an arena source's thread items, from what the
 * arena reader counted of them: events, per site, LOST records, time span.
 */
void rt_set_tally_arena(struct rt_trace_set *set, uint32_t source)
{
	struct rt_set_source *s = &set->sources[source];
	const struct rt_reader *rd = s->reader;
	for (uint32_t t = 0; t < rd->thread_count; t++)
		set->events += rd->threads[t].counts.present;
	for (uint32_t i = 0; rd->site_events && i < rd->sites.count; i++)
		s->site_counts[i] += rd->site_events[i];
	s->lost_records += rd->lost_records;
	if (rd->have_events) {
		rt_set_span_counter(set, rd->first_event_counter, source);
		rt_set_span_counter(set, rd->last_event_counter, source);
	}
}

/* One block of a ring, in the order the file holds it. */
struct file_order_ref {
	uint64_t order;
	struct cursor *cursor;
	size_t block;
};

static int compare_file_order_refs(const void *a, const void *b)
{
	const struct file_order_ref *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * The count pass over the rings whose blocks the file holds in record order
 * already (stream mode, one snapshot): all of them in one sequential read of
 * the files, block by block, each block decoded by its ring's cursor.  Rings
 * read this way are marked counted; the others are read ring by ring.
 */
int rt_set_count_in_file_order(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	size_t n = 0;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *c = p->cursors[i].ring;
		if (!c)
			continue;
		c->counted = c->rs->block_count > 0;
		for (size_t k = 1; k < c->rs->block_count && c->counted; k++)
			c->counted = c->rs->blocks[k - 1].order < c->rs->blocks[k].order;
		n += c->counted ? c->rs->block_count : 0;
	}
	if (n == 0)
		return 0;
	struct file_order_ref *refs = malloc(n * sizeof(*refs));
	unsigned char *buf = malloc(SEQUENTIAL_READ);
	if (!refs || !buf) {
		free(refs);
		free(buf);
		return -ENOMEM;
	}
	n = 0;
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *c = p->cursors[i].ring;
		if (!c || !c->counted)
			continue;
		rt_set_cursor_rewind(c);
		for (size_t k = 0; k < c->rs->block_count; k++) {
			refs[n].order = c->rs->blocks[k].order;
			refs[n].cursor = &p->cursors[i];
			refs[n].block = k;
			n++;
		}
	}
	qsort(refs, n, sizeof(*refs), compare_file_order_refs);
	uint32_t buf_file = UINT32_MAX;
	uint64_t buf_offset = 0, buf_length = 0;
	for (size_t i = 0; i < n; i++) {
		struct cursor *cur = refs[i].cursor;
		struct ring_cursor *c = cur->ring;
		const struct block_ref *ref = &c->rs->blocks[refs[i].block];
		c->block_at = refs[i].block + 1;
		if (add_sat(ref->first_record, ref->count) <= c->expected)
			continue;
		if (ref->file != buf_file || ref->offset < buf_offset ||
		    ref->offset + RT_BLOCK_MAX_BYTES > buf_offset + buf_length) {
			const struct rt_trace_file *f = &set->files[ref->file].file;
			ssize_t got = pread(f->fd, buf, SEQUENTIAL_READ, (off_t)ref->offset);
			if (got < 0 && errno != EINTR)
				p->error = -errno;
			buf_file = ref->file;
			buf_offset = ref->offset;
			buf_length = got > 0 ? (uint64_t)got : 0;
		}
		struct rt_block_header h;
		const unsigned char *b =
		    rt_set_block_found(c, ref, buf + (ref->offset - buf_offset),
				       buf_offset + buf_length - ref->offset, &h);
		size_t items;
		if (b) {
			items = rt_set_decode_block(c, b, &h, 1);
		} else {
			items = 0;
			rt_set_gap_to(c, add_sat(ref->first_record, ref->count), ref->counter_first,
				      &items);
		}
		rt_set_tally(set, cur, c->items, items);
	}
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *c = p->cursors[i].ring;
		if (c && c->counted) {
			size_t items = 0;
			rt_set_gap_to_end(c, &items);
			rt_set_tally(set, &p->cursors[i], c->items, items);
			set->sources[p->cursors[i].source].unknown_records += c->unknown;
			set->sources[p->cursors[i].source].lost_records += c->lost_records;
		}
	}
	free(refs);
	free(buf);
	return 0;
}
