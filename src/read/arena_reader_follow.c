/*
 * arena_reader_follow.c - following a live arena: reloading its tables, and
 * one ring read from a position on, as a tail reads it, a window at a time
 * (struct rt_ring_stream, read/arena_follow.h).
 *
 * (Part of read/arena_reader.h; the reader's private parts are
 * read/arena_reader_private.h.)
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "read/arena_follow.h"
#include "read/arena_reader_private.h"

int rt_reader_open_live_fd(int fd, const char *path, struct rt_reader **out,
			   struct rt_read_error *error)
{
	return rt_arena_open_fd(fd, path, 0, out, error);
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

/*
 * One ring read from a follower's cursor up to a head: the walk over the
 * ring in the file (never a copy of it: memory follows the window), the
 * owners its records are given to, and the losses found on the way.
 */
struct rt_ring_stream {
	struct rt_reader *rd;
	uint32_t ring;
	struct rt_ring_desc desc_copy;
	const struct rt_ring_desc *desc;
	struct rt_ring_cursor start;  /* where the stream began */
	struct rt_ring_cursor cursor; /* where it stands */
	uint64_t head, records;
	uint64_t asked, from; /* the window asked for, and where the file holds it from */
	int exact;	      /* no record in progress: records counts those below head */
	struct rt_walk_source src;
	struct rt_walk walk;
	struct rt_walk_runs runs;
	struct owner *owners;
	size_t owner_count, at;
	uint64_t given;	       /* records given */
	uint64_t missed;       /* losses given (their ranks) */
	uint64_t last_counter; /* of the last record given */
	int hole_given, done, stale;
	size_t window; /* records decoded at once */
	/* one window's records as decoded, where the walk stood before each, their payloads */
	struct rt_item *raw;
	uint64_t *raw_at;
	size_t *raw_payload;
	/* what a fill gives: records and losses, their ranks and payloads */
	struct rt_item *items;
	uint64_t *ranks;
	size_t *item_payload;
	size_t count, capacity;
	unsigned char *bytes;
	size_t bytes_used, bytes_capacity;
	uint64_t given_back; /* slots below it were read: their pages were given back */
};

/* A loss's rank comes after every record's; the hole's after every other loss's. */
#define RANK_LOSS (UINT64_C(1) << 63)
#define RANK_HOLE UINT64_MAX

int rt_ring_stream_open(struct rt_reader *rd, uint32_t ring, uint64_t head,
			const struct rt_ring_cursor *cursor, size_t window,
			struct rt_ring_stream **out)
{
	const uint64_t ring_slots = rt_layout_ring_slots(&rd->header);
	*out = NULL;
	if (ring >= rd->header.ring_count || head <= cursor->slot)
		return 0;
	uint64_t readable = rt_header_ring_slots_readable(&rd->header, rd->size, ring);
	if (readable < ring_slots)
		return 0; /* a file cut short is nobody's live arena */
	struct rt_ring_stream *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->rd = rd;
	s->ring = ring;
	s->desc = rt_arena_ring_desc(rd, ring, &s->desc_copy);
	s->start = *cursor;
	s->head = head;
	s->window = window ? window : 1024;
	/* acquire: a record counted here had its reserve published before (the writer's fence) */
	s->records = __atomic_load_n(&s->desc->records, __ATOMIC_ACQUIRE);
	uint64_t reserve = __atomic_load_n(&s->desc->reserve, __ATOMIC_RELAXED);
	/* nothing in progress: records counts exactly the records below head */
	s->exact = reserve == head;
	if (reserve < head)
		reserve = head;
	uint64_t from = reserve > ring_slots ? reserve - ring_slots : 0;
	if (from < cursor->slot)
		from = cursor->slot;
	if (from > head)
		from = head; /* the writer lapped the head taken: all of it is gone */
	/* slots in a hole were never written: only those after the last hole are read */
	s->asked = from;
	s->from = rt_arena_held_from(rd, ring, readable, from, head);
	struct ring_snapshot snap;
	memset(&snap, 0, sizeof(snap));
	snap.ring = ring;
	snap.live = 1;
	snap.head = head;
	snap.records = s->records;
	snap.readable = readable;
	snap.window_start = snap.walk_from = s->from;
	rt_arena_walk_source(rd, &snap, &s->src);
	s->owners = ring_owners(rd, ring, &s->owner_count);
	if (!s->owners) {
		free(s);
		return -ENOMEM;
	}
	rt_ring_stream_rewind(s);
	*out = s;
	return 0;
}

void rt_ring_stream_rewind(struct rt_ring_stream *s)
{
	s->cursor = s->start;
	rt_walk_begin(&s->walk, s->from);
	s->runs.count = 0;
	s->at = 0;
	s->given = s->missed = s->last_counter = 0;
	s->hole_given = s->done = s->stale = 0;
	s->given_back = s->from;
}

void rt_ring_stream_free(struct rt_ring_stream *s)
{
	if (!s)
		return;
	free(s->owners);
	free(s->runs.runs);
	free(s->raw);
	free(s->raw_at);
	free(s->raw_payload);
	free(s->items);
	free(s->ranks);
	free(s->item_payload);
	free(s->bytes);
	free(s);
}

int rt_ring_stream_stale(const struct rt_ring_stream *s)
{
	return s->stale;
}

void rt_ring_stream_cursor(const struct rt_ring_stream *s, struct rt_ring_cursor *cursor)
{
	*cursor = s->cursor;
}

/* Room for n more items in what a fill gives.  0 or -ENOMEM. */
static int room_for(struct rt_ring_stream *s, size_t n)
{
	if (s->count + n <= s->capacity)
		return 0;
	size_t capacity = s->capacity ? s->capacity : 64;
	while (capacity < s->count + n)
		capacity *= 2;
	struct rt_item *items = realloc(s->items, capacity * sizeof(*items));
	if (items)
		s->items = items;
	uint64_t *ranks = realloc(s->ranks, capacity * sizeof(*ranks));
	if (ranks)
		s->ranks = ranks;
	size_t *payload = realloc(s->item_payload, capacity * sizeof(*payload));
	if (payload)
		s->item_payload = payload;
	if (!items || !ranks || !payload)
		return -ENOMEM;
	s->capacity = capacity;
	return 0;
}

/* The next item a fill gives (room_for() made room), ranked. */
static struct rt_item *next_item(struct rt_ring_stream *s, uint64_t rank, size_t payload)
{
	s->ranks[s->count] = rank;
	s->item_payload[s->count] = payload;
	return &s->items[s->count++];
}

/* What a hole held instead of records: damage, counted in slots (at most). */
static void hole_loss(struct rt_ring_stream *s, const struct rt_item *first)
{
	size_t at = 0;
	struct rt_item *it = next_item(s, RANK_HOLE, SIZE_MAX);
	missed_loss(s->rd, it, owner_of(s->owners, s->owner_count, &at, first ? first->seq : 0), 0,
		    s->from - s->asked, first ? first->counter : 0, first ? RT_ITEM_TIMED : 0);
	it->flags |= RT_ITEM_ESTIMATED | RT_ITEM_NO_SEQ;
	it->loss.reason = RT_LOSS_DAMAGED;
	it->loss.note = RT_NOTE_HOLE;
	s->hole_given = 1;
}

/* A record the walk decoded, given to its owner, after the losses it shows. */
static void give_record(struct rt_ring_stream *s, struct rt_item *it, size_t payload)
{
	struct rt_reader_thread *t = owner_of(s->owners, s->owner_count, &s->at, it->seq);
	set_owner(s->rd, it, t);
	if (!t)
		s->stale = 1; /* a thread that took the ring since */
	if (!s->hole_given && s->from > s->asked)
		hole_loss(s, it);
	struct rt_ring_cursor *c = &s->cursor;
	if (c->record_known && it->seq > c->record)
		missed_loss(s->rd, next_item(s, RANK_LOSS + s->missed++, SIZE_MAX), t, c->record,
			    it->seq - c->record, it->counter, RT_ITEM_TIMED);
	if (!c->record_known || it->seq >= c->record)
		c->record = it->seq + 1;
	c->record_known = 1;
	s->last_counter = it->counter;
	*next_item(s, s->given++, payload) = *it;
}

/* The walk is at head: the records below it it did not get, the hole, and the cursor there. */
static void finish(struct rt_ring_stream *s)
{
	struct rt_ring_cursor *c = &s->cursor;
	/* records below head the walk did not get: overwritten while it read */
	if (s->exact && c->record_known && s->records > c->record) {
		size_t at = 0;
		missed_loss(s->rd, next_item(s, RANK_LOSS + s->missed++, SIZE_MAX),
			    owner_of(s->owners, s->owner_count, &at, c->record), c->record,
			    s->records - c->record, s->given ? s->last_counter : 0,
			    s->given ? RT_ITEM_TIMED : 0);
	}
	if (s->exact) {
		c->record = s->records;
		c->record_known = 1;
	}
	if (!s->hole_given && s->from > s->asked)
		hole_loss(s, NULL);
	c->slot = s->head;
	s->done = 1;
}

/* Room for a window of raw records.  0 or -ENOMEM. */
static int raw_room(struct rt_ring_stream *s)
{
	if (s->raw)
		return 0;
	s->raw = malloc(s->window * sizeof(*s->raw));
	s->raw_at = malloc(s->window * sizeof(*s->raw_at));
	s->raw_payload = malloc(s->window * sizeof(*s->raw_payload));
	return s->raw && s->raw_at && s->raw_payload ? 0 : -ENOMEM;
}

/* Keep n payload bytes of a fill: where they are in s->bytes, or SIZE_MAX when out of memory. */
static size_t keep_payload(struct rt_ring_stream *s, const unsigned char *payload, size_t n)
{
	if (s->bytes_used + n > s->bytes_capacity) {
		size_t capacity = s->bytes_capacity ? s->bytes_capacity : 4096;
		while (capacity < s->bytes_used + n)
			capacity *= 2;
		unsigned char *bigger = realloc(s->bytes, capacity);
		if (!bigger)
			return SIZE_MAX;
		s->bytes = bigger;
		s->bytes_capacity = capacity;
	}
	memcpy(s->bytes + s->bytes_used, payload, n);
	s->bytes_used += n;
	return s->bytes_used - n;
}

/*
 * The pages of the ring's slots below `to` that the walk is done with go
 * back to the file: what stays mapped follows the window, not the ring.
 * Only for the reader's own read-only mapping of the arena file (whose
 * bytes stay in the file); never for memory a caller gave.
 */
static void give_back_pages(struct rt_ring_stream *s, uint64_t to)
{
	const struct rt_reader *rd = s->rd;
	if (!rd->owns_mapping || to <= s->given_back)
		return;
	const uint64_t ring_slots = rt_layout_ring_slots(&rd->header);
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	const unsigned char *ring = rd->file + rt_layout_ring_offset(&rd->header, s->ring);
	for (uint64_t slot = s->given_back; slot < to;) {
		uint64_t index = slot & (ring_slots - 1);
		uint64_t run = ring_slots - index < to - slot ? ring_slots - index : to - slot;
		/* whole pages inside the run only, kept as pointers into the mapping */
		const unsigned char *begin = ring + index * RT_SLOT_SIZE;
		const unsigned char *end = begin + run * RT_SLOT_SIZE;
		begin += (page - (uintptr_t)begin % page) % page;
		end -= (uintptr_t)end % page;
		if (end > begin)
			madvise((void *)begin, (size_t)(end - begin), MADV_DONTNEED);
		slot += run;
	}
	s->given_back = to;
}

long rt_ring_stream_fill(struct rt_ring_stream *s, int payloads, size_t most,
			 struct rt_item **items, const uint64_t **ranks)
{
	const uint64_t ring_slots = rt_layout_ring_slots(&s->rd->header);
	unsigned char payload[RT_LOG_PAYLOAD_MAX];
	int rc;
	s->count = 0;
	s->bytes_used = 0;
	if ((rc = raw_room(s)) != 0)
		return rc;
	while (!s->done && s->count < most) {
		size_t want = most - s->count < s->window ? most - s->count : s->window;
		size_t n = 0;
		while (n < want) {
			const uint64_t at = s->walk.slot;
			rc = rt_walk_next(s->rd, &s->src, &s->walk, &s->runs, &s->raw[n],
					  payloads ? payload : NULL);
			if (rc < 0)
				return rc;
			if (rc == 0)
				break;
			struct rt_item *it = &s->raw[n];
			s->raw_at[n] = at;
			s->raw_payload[n] = SIZE_MAX;
			if (payloads && rt_item_has_payload(it->kind) &&
			    (s->raw_payload[n] = keep_payload(s, payload, it->log.length)) ==
				SIZE_MAX)
				return -ENOMEM;
			n++;
		}
		for (size_t i = 0; i < s->runs.count; i++)
			if (s->runs.runs[i].reasons & RT_RUN_BAD_SITE)
				s->stale = 1; /* a site registered since the tables were read */
		s->runs.count = 0;
		/*
		 * The walk read the ring in the file, not a copy: what a live
		 * writer overwrote meanwhile (slots below its reserve less a
		 * ring) is not believed, as if it had been missed.
		 */
		RT_FENCE_ACQUIRE();
		uint64_t now = __atomic_load_n(&s->desc->reserve, __ATOMIC_RELAXED);
		uint64_t cutoff = now > ring_slots ? now - ring_slots : 0;
		size_t kept = 0;
		while (kept < n && s->raw_at[kept] < cutoff)
			kept++;
		if (s->walk.slot < cutoff && s->walk.slot < s->head)
			rt_walk_begin(&s->walk, cutoff < s->head ? cutoff : s->head);
		/* a record gives at most three items (the hole, a gap, itself); the end two */
		if ((rc = room_for(s, 3 * (n - kept) + 2)) != 0)
			return rc;
		for (size_t i = kept; i < n; i++)
			give_record(s, &s->raw[i], s->raw_payload[i]);
		give_back_pages(s, s->walk.slot);
		if (n < want)
			finish(s);
	}
	if (s->done)
		give_back_pages(s, s->head);
	for (size_t i = 0; i < s->count; i++)
		if (s->item_payload[i] != SIZE_MAX)
			s->items[i].log.payload = s->bytes + s->item_payload[i];
	*items = s->items;
	if (ranks)
		*ranks = s->ranks;
	return (long)s->count;
}

int rt_reader_follow_ring(struct rt_reader *rd, uint32_t ring, uint64_t head,
			  struct rt_ring_cursor *cursor, struct rt_item_batch *batch)
{
	struct rt_ring_stream *s;
	int rc = rt_ring_stream_open(rd, ring, head, cursor, 0, &s);
	if (rc || !s)
		return rc;
	struct rt_item *items;
	long n;
	while (rc == 0 && (n = rt_ring_stream_fill(s, 1, 4096, &items, NULL)) != 0) {
		if (n < 0) {
			rc = (int)n;
			break;
		}
		size_t need = batch->count + (size_t)n;
		if (need > batch->capacity) {
			size_t capacity = batch->capacity ? batch->capacity : 64;
			while (capacity < need)
				capacity *= 2;
			struct rt_item *bigger = realloc(batch->items, capacity * sizeof(*bigger));
			if (!bigger) {
				rc = -ENOMEM;
				break;
			}
			batch->items = bigger;
			batch->capacity = capacity;
		}
		for (long i = 0; i < n; i++) {
			struct rt_item *it = &batch->items[batch->count++];
			*it = items[i];
			if (!rt_item_has_payload(it->kind) || !it->log.payload)
				continue;
			unsigned char *kept = rt_reader_payload_room(rd, it->log.length);
			if (!kept) {
				rc = -ENOMEM;
				break;
			}
			memcpy(kept, it->log.payload, it->log.length);
			it->log.payload = kept;
		}
	}
	if (rc == 0) {
		if (rt_ring_stream_stale(s))
			batch->stale = 1;
		rt_ring_stream_cursor(s, cursor);
	}
	rt_ring_stream_free(s);
	return rc;
}
