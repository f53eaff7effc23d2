/*
 * arena_reader_follow.c - following a live arena: reloading its tables, and
 * one ring read from a position on, as a tail reads it.
 *
 * (Part of read/arena_reader.h; the reader's private parts are
 * read/arena_reader_private.h.)
 */
#include <errno.h>
#include <stdlib.h>

#include "read/arena_reader_private.h"

int rt_reader_open_live(const char *path, struct rt_reader **out, struct rt_read_error *error)
{
	return rt_arena_open_mapped(path, 0, out, error);
}

static int same_modules(const struct rt_reader_modules *a, const struct rt_reader_modules *b)
{
	if (a->count != b->count)
		return 0;
	for (uint32_t i = 0; i < a->count; i++) {
		const struct rt_reader_module *x = &a->items[i], *y = &b->items[i];
		if (x->index != y->index || x->flags != y->flags || x->base != y->base ||
		    x->low != y->low || x->high != y->high || x->load_counter != y->load_counter ||
		    x->unload_counter != y->unload_counter ||
		    x->build_id_size != y->build_id_size ||
		    memcmp(x->build_id, y->build_id, sizeof(x->build_id)) != 0 ||
		    strcmp(x->path, y->path) != 0)
			return 0;
	}
	return 1;
}

int rt_reader_open_live_memory(const void *data, size_t size, const char *name,
			       struct rt_reader **out, struct rt_read_error *error)
{
	return rt_arena_open_arena(data, size, -1, name, 0, out, error);
}

int rt_reader_reload(struct rt_reader *rd, struct rt_read_error *error)
{
	struct rt_reader *fresh;
	int rc = rt_arena_open_arena(rd->file, (size_t)rd->size, rd->data->fd, rd->path, 0, &fresh,
				     error);
	if (rc)
		return rc;
	/* the caller's pointer keeps its reader; the mapping and payloads stay in it */
	struct rt_reader old = *rd;
	*rd = *fresh;
	rd->owns_mapping = old.owns_mapping;
	rd->fd = old.fd;
	rd->payloads = old.payloads;
	old.owns_mapping = 0;
	old.payloads = NULL;
	/* unchanged modules keep their addresses: names are cached by entry */
	int changed = !same_modules(&old.modules, &rd->modules);
	if (!changed) {
		struct rt_reader_modules kept = old.modules;
		old.modules = rd->modules;
		rd->modules = kept;
	}
	*fresh = old;
	rt_reader_close(fresh);
	return changed;
}

void rt_reader_forget_payloads(struct rt_reader *rd)
{
	while (rd->payloads) {
		struct rt_reader_payloads *next = rd->payloads->next;
		free(rd->payloads);
		rd->payloads = next;
	}
}

int rt_reader_ring_start(const struct rt_reader *rd, uint32_t ring, struct rt_ring_cursor *cursor)
{
	memset(cursor, 0, sizeof(*cursor));
	if (ring >= rd->header.ring_count)
		return 0;
	struct rt_ring_desc copy;
	const struct rt_ring_desc *d = rt_arena_ring_desc(rd, ring, &copy);
	/* a writer between two records: records counts those below head (see follow_ring) */
	for (int tries = 0; tries < 8; tries++) {
		uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
		uint64_t records = __atomic_load_n(&d->records, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&d->reserve, __ATOMIC_RELAXED) == head) {
			cursor->slot = head;
			cursor->record = records;
			cursor->record_known = 1;
			return 1;
		}
	}
	return 0;
}

uint64_t rt_reader_ring_head(const struct rt_reader *rd, uint32_t ring)
{
	if (ring >= rd->header.ring_count)
		return 0;
	struct rt_ring_desc copy;
	return __atomic_load_n(&rt_arena_ring_desc(rd, ring, &copy)->head, __ATOMIC_ACQUIRE);
}

static int compare_first_record(const void *a, const void *b)
{
	const struct owner *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->thread->entry < y->thread->entry ? -1 : x->thread->entry > y->thread->entry;
}

/* The owners of a ring, by first record, each range ending where the next begins. */
static struct owner *ring_owners(const struct rt_reader *rd, uint32_t ring, size_t *count)
{
	struct owner *owners = calloc((size_t)rd->thread_count + 1, sizeof(*owners));
	size_t n = 0;
	if (!owners)
		return NULL;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		struct rt_reader_thread *t = &rd->threads[i];
		if (t->ring != ring)
			continue;
		owners[n].thread = t;
		owners[n].first = t->first_record;
		owners[n].end = t->end_record < t->first_record ? t->first_record : t->end_record;
		n++;
	}
	qsort(owners, n, sizeof(*owners), compare_first_record);
	for (size_t i = 0; i + 1 < n; i++)
		if (owners[i].end > owners[i + 1].first)
			owners[i].end = owners[i + 1].first;
	*count = n;
	return owners;
}

/* The owner of record seq among owners (from *at on: seqs are asked in rising order). */
static struct rt_reader_thread *owner_of(const struct owner *owners, size_t count, size_t *at,
					 uint64_t seq)
{
	while (*at < count && seq >= owners[*at].end)
		++*at;
	if (*at < count && seq >= owners[*at].first)
		return owners[*at].thread;
	return NULL;
}

static void set_owner(const struct rt_reader *rd, struct rt_item *it,
		      const struct rt_reader_thread *t)
{
	it->thread = t ? (uint32_t)(t - rd->threads) : RT_ITEM_NO_THREAD;
	it->tid = t ? t->tid : 0;
}

/* Records [seq, seq + count) the follower missed: one loss item. */
static void missed_loss(const struct rt_reader *rd, struct rt_item *it,
			const struct rt_reader_thread *t, uint64_t seq, uint64_t count,
			uint64_t counter, unsigned flags)
{
	memset(it, 0, sizeof(*it));
	it->kind = RT_ITEM_LOSS;
	it->flags = (uint8_t)flags;
	it->counter = counter;
	it->seq = seq;
	it->cpu = RT_CPU_UNKNOWN;
	it->loss.count = count;
	it->loss.reason = RT_LOSS_OVERWRITTEN;
	it->loss.note = RT_NOTE_MISSED;
	set_owner(rd, it, t);
}

/* Every record of the follower's window into items, payloads kept by the reader. */
static int follow_walk(struct rt_reader *rd, struct ring_snapshot *snap,
		       const struct rt_walk_source *src, struct rt_item *items, size_t *count)
{
	unsigned char payload[RT_LOG_PAYLOAD_MAX];
	int rc;
	rt_walk_begin(&snap->walk, snap->walk_from);
	while ((rc = rt_walk_next(rd, src, &snap->walk, &snap->runs, &items[*count], payload)) ==
	       1) {
		struct rt_item *it = &items[(*count)++];
		if (!rt_item_has_payload(it->kind))
			continue;
		unsigned char *kept = rt_reader_payload_room(rd, it->log.length);
		if (!kept)
			return -ENOMEM;
		memcpy(kept, payload, it->log.length);
		it->log.payload = kept;
	}
	return rc;
}

int rt_reader_follow_ring(struct rt_reader *rd, uint32_t ring, uint64_t head,
			  struct rt_ring_cursor *cursor, struct rt_item_batch *batch)
{
	const uint64_t ring_slots = rt_layout_ring_slots(&rd->header);
	if (ring >= rd->header.ring_count || head <= cursor->slot)
		return 0;
	struct rt_ring_desc copy;
	const struct rt_ring_desc *d = rt_arena_ring_desc(rd, ring, &copy);
	struct ring_snapshot snap;
	memset(&snap, 0, sizeof(snap));
	snap.ring = ring;
	snap.live = 1;
	snap.desc_damage = -1;
	snap.readable = rt_header_ring_slots_readable(&rd->header, rd->size, ring);
	if (snap.readable < ring_slots)
		return 0; /* a file cut short is nobody's live arena */
	snap.head = head;
	/* acquire: a record counted here had its reserve published before (the writer's fence) */
	snap.records = __atomic_load_n(&d->records, __ATOMIC_ACQUIRE);
	snap.reserve = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
	/* nothing in progress: records counts exactly the records below head */
	const int exact = snap.reserve == head;
	uint64_t reserve = snap.reserve < head ? head : snap.reserve;
	uint64_t from = reserve > ring_slots ? reserve - ring_slots : 0;
	if (from < cursor->slot)
		from = cursor->slot;
	if (from > head)
		from = head; /* the writer lapped the head taken: all of it is gone */
	/* slots in a hole were never written: only those after the last hole are copied */
	const uint64_t asked = from;
	from = rt_arena_held_from(rd, ring, snap.readable, from, head);
	snap.window_start = snap.walk_from = from;
	int rc = from < head ? rt_arena_copy_window(rd, d, &snap) : 0;
	if (rc)
		return rc;

	struct rt_walk_source src;
	rt_arena_walk_source(rd, &snap, &src);
	uint64_t room = head - snap.walk_from;
	/*
	 * every record, and the losses: one before the first record and one after
	 * the last, and one per run of slots that did not decode between records
	 */
	size_t need = batch->count + (size_t)room + 3;
	if (need > batch->capacity) {
		struct rt_item *bigger = realloc(batch->items, need * sizeof(*bigger));
		if (!bigger) {
			rc = -ENOMEM;
			goto out;
		}
		batch->items = bigger;
		batch->capacity = need;
	}
	struct rt_item *items = batch->items + batch->count;
	size_t count = 0;
	if (room && (rc = follow_walk(rd, &snap, &src, items, &count)) != 0)
		goto out;
	for (size_t i = 0; i < snap.runs.count; i++)
		if (snap.runs.runs[i].reasons & RT_RUN_BAD_SITE)
			batch->stale = 1; /* a site registered since the tables were read */

	size_t owner_count = 0, at = 0;
	struct owner *owners = ring_owners(rd, ring, &owner_count);
	if (!owners) {
		rc = -ENOMEM;
		goto out;
	}
	struct rt_item *losses = items + count;
	size_t loss_count = 0;
	/* at least 2; a hostile ring's record numbers could ask for more: then they add up */
	const size_t loss_room = batch->capacity - batch->count - count;
	for (size_t i = 0; i < count; i++) {
		struct rt_item *it = &items[i];
		struct rt_reader_thread *t = owner_of(owners, owner_count, &at, it->seq);
		set_owner(rd, it, t);
		if (!t)
			batch->stale = 1; /* a thread that took the ring since */
		if (cursor->record_known && it->seq > cursor->record) {
			if (loss_count + 1 < loss_room)
				missed_loss(rd, &losses[loss_count++], t, cursor->record,
					    it->seq - cursor->record, it->counter, RT_ITEM_TIMED);
			else
				losses[loss_count - 1].loss.count += it->seq - cursor->record;
		}
		if (!cursor->record_known || it->seq >= cursor->record)
			cursor->record = it->seq + 1;
		cursor->record_known = 1;
	}
	/* records below head the walk did not get: overwritten while it copied */
	if (exact && cursor->record_known && snap.records > cursor->record) {
		at = 0;
		struct rt_reader_thread *t = owner_of(owners, owner_count, &at, cursor->record);
		uint64_t counter = count ? items[count - 1].counter : 0;
		missed_loss(rd, &losses[loss_count++], t, cursor->record,
			    snap.records - cursor->record, counter, count ? RT_ITEM_TIMED : 0);
	}
	if (exact) {
		cursor->record = snap.records;
		cursor->record_known = 1;
	}
	if (from > asked) {
		/* what a hole held instead of records: damage, counted in slots (at most) */
		at = 0;
		struct rt_item *it = &losses[loss_count++];
		missed_loss(rd, it, owner_of(owners, owner_count, &at, count ? items[0].seq : 0), 0,
			    from - asked, count ? items[0].counter : 0, count ? RT_ITEM_TIMED : 0);
		it->flags |= RT_ITEM_ESTIMATED | RT_ITEM_NO_SEQ;
		it->loss.reason = RT_LOSS_DAMAGED;
		it->loss.note = RT_NOTE_HOLE;
	}
	free(owners);
	cursor->slot = head;
	batch->count += count + loss_count;
out:
	free(snap.copy);
	free(snap.runs.runs);
	return rc;
}
