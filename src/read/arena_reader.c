/*
 * arena_reader.c - recover events and losses from an arena file.
 *
 * How a ring is read (see the ring protocol in ringtrace/format.h):
 *
 *  1. Take head (acquire), then records and reserve.  Slots
 *     [max(reserve - ring_slots, 0), head) hold the newest committed records;
 *     anything older was overwritten (flight) or drained (stream).
 *  2. Walk the window forward.  A slot starts a record only if it carries
 *     the low 32 bits of its own seq, a record kind, a slot count that fits
 *     below head, continuation slots that fit their positions, and (for an
 *     event) a valid site whose argument count matches the slot count.
 *     Anything else is skipped one slot at a time, so damage costs only the
 *     slots it touched.
 *  3. The record's full 64-bit seq comes from the ring's records counter
 *     and the record's low 32 bits.  It must also fit the record's position:
 *     every slot after it up to head belongs to a later record of 1 or 2
 *     slots, which bounds how many records came after it.  Seqs must rise
 *     strictly along the window.
 *  4. If the writer is alive, the window is copied first and reserve read
 *     again: only slots it cannot have overwritten meanwhile are walked
 *     (the others count as overwritten), and the walk reads the copy.
 *  5. Each record goes to the thread-table entry whose [first_record,
 *     end_record) holds its seq: a ring that passed between threads is
 *     split between them.  Records between two recovered ones that are
 *     missing are damaged; missing older ones were overwritten (flight) or
 *     consumed by a collector (stream).
 *  6. A dead writer with reserve != head left the record at [head, reserve)
 *     torn.  A live writer's is simply in progress: not shown, not counted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/arena_layout.h"
#include "read/arena_reader.h"

_Static_assert(sizeof(struct rt_item) == 64, "an item is one cache line");
_Static_assert(RT_RECORD_MAX_SLOTS == 2, "the record walk knows one continuation slot");

/* ---- small helpers ------------------------------------------------------ */

static uint64_t add_saturating(uint64_t a, uint64_t b)
{
	uint64_t sum;
	return __builtin_add_overflow(a, b, &sum) ? UINT64_MAX : sum;
}

static void counts_add(struct rt_counts *to, const struct rt_counts *c)
{
	to->committed = add_saturating(to->committed, c->committed);
	to->present = add_saturating(to->present, c->present);
	to->overwritten = add_saturating(to->overwritten, c->overwritten);
	to->consumed = add_saturating(to->consumed, c->consumed);
	to->dropped = add_saturating(to->dropped, c->dropped);
	to->torn = add_saturating(to->torn, c->torn);
	to->damaged = add_saturating(to->damaged, c->damaged);
}

static int fail_errno(struct rt_read_error *error, int err, const char *what)
{
	error->has_offset = 0;
	if (what)
		snprintf(error->message, sizeof(error->message), "%s: %s", what, strerror(err));
	else
		snprintf(error->message, sizeof(error->message), "%s", strerror(err));
	return -err;
}

int rt_process_alive(int32_t pid, uint64_t start)
{
	char path[64], buf[1024];
	if (pid <= 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* the command name (field 2) may hold spaces and ')': fields resume after the last ')' */
	const char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	int field = 2;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	uint64_t started = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		started = started * 10 + (uint64_t)(*p - '0');
	/* a writer that could not read its own start time recorded 0 */
	return start == 0 || started == start;
}

const char *rt_loss_reason_name(uint32_t reason)
{
	switch (reason) {
	case RT_LOSS_OVERWRITTEN:
		return "overwritten";
	case RT_LOSS_DROPPED:
		return "dropped";
	case RT_LOSS_TORN:
		return "torn";
	default:
		return "damaged";
	}
}

const char *rt_loss_note_text(uint32_t note)
{
	switch (note) {
	case RT_NOTE_RING_FULL:
		return "ring full";
	case RT_NOTE_NESTED_SIGNAL:
		return "signal handler traced mid-record";
	case RT_NOTE_NO_RING:
		return "no ring";
	case RT_NOTE_UNTRACKED_THREADS:
		return "no thread-table entry, or tracing still starting";
	case RT_NOTE_SITES_REFUSED:
		return "trace sites refused: site table or string area full";
	case RT_NOTE_WRITER_DIED:
		return "the process died while writing it";
	case RT_NOTE_NO_OWNER:
		return "records no thread claims";
	case RT_NOTE_GAP:
		return "records missing between recovered ones";
	case RT_NOTE_UNKNOWN_LOST:
		return "lost record with an unknown reason";
	default:
		return NULL;
	}
}

const char *rt_writer_status_name(enum rt_writer_status status)
{
	switch (status) {
	case RT_WRITER_RUNNING:
		return "running";
	case RT_WRITER_CLOSED:
		return "closed";
	default:
		return "crashed";
	}
}

/* ---- losses ------------------------------------------------------------- */

static int add_loss(struct rt_reader *rd, const struct rt_reader_thread *t, uint32_t reason,
		    uint32_t note, uint64_t count, uint64_t counter, uint64_t seq, unsigned flags)
{
	if (count == 0)
		return 0;
	if (rd->loss_count == rd->loss_capacity) {
		size_t capacity = rd->loss_capacity ? rd->loss_capacity * 2 : 64;
		struct rt_item *bigger = realloc(rd->losses, capacity * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		rd->losses = bigger;
		rd->loss_capacity = capacity;
	}
	struct rt_item *it = &rd->losses[rd->loss_count++];
	memset(it, 0, sizeof(*it));
	it->kind = RT_ITEM_LOSS;
	it->flags = (uint8_t)flags;
	it->counter = counter;
	it->seq = seq;
	it->tid = t ? t->tid : 0;
	it->thread = t ? (uint32_t)(t - rd->threads) : RT_ITEM_NO_THREAD;
	it->cpu = RT_CPU_UNKNOWN;
	it->loss.count = count;
	it->loss.reason = reason;
	it->loss.note = note;
	return 0;
}

static int compare_items(const void *a, const void *b)
{
	return rt_item_compare(a, b);
}

/* ---- threads ------------------------------------------------------------ */

static int load_threads(struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	uint32_t count = rt_layout_thread_count(h);
	if (count == 0)
		return 0;
	rd->threads = calloc(count, sizeof(*rd->threads));
	if (!rd->threads)
		return -ENOMEM;
	for (uint32_t i = 0; i < count; i++) {
		const struct rt_thread_entry *live =
		    (const struct rt_thread_entry *)(rd->file + rt_layout_thread_offset(h, i));
		uint32_t state = __atomic_load_n(&live->state, __ATOMIC_ACQUIRE);
		if (state != RT_THREAD_LIVE && state != RT_THREAD_EXITED)
			continue;
		/* state was published last: the entry is complete */
		struct rt_thread_entry e;
		memcpy(&e, live, sizeof(e));
		struct rt_reader_thread *t = &rd->threads[rd->thread_count++];
		t->entry = i;
		t->tid = e.tid;
		t->state = state;
		t->ring = e.ring < h->ring_count ? e.ring : RT_NO_RING;
		memcpy(t->name, e.name, sizeof(t->name));
		t->name[sizeof(t->name) - 1] = 0;
		t->first_record = e.first_record;
		t->end_record = e.end_record;
		t->start_counter = e.start_counter;
		t->exit_counter = e.exit_counter;
		t->lost_no_ring = e.lost_no_ring;
	}
	return 0;
}

/* The entry's own copy of the thread's last event, as an item (kind 0 if none). */
static void entry_last_event(const struct rt_reader *rd, const struct rt_reader_thread *t,
			     struct rt_item *out)
{
	const struct rt_thread_entry *live =
	    (const struct rt_thread_entry *)(rd->file +
					     rt_layout_thread_offset(&rd->header, t->entry));
	memset(out, 0, sizeof(*out));
	if (__atomic_load_n(&live->last.valid, __ATOMIC_ACQUIRE) != 1)
		return;
	struct rt_last_event ev;
	memcpy(&ev, &live->last, sizeof(ev));
	/* the copy is complete before valid is checked again */
	RT_FENCE_ACQUIRE();
	if (__atomic_load_n(&live->last.valid, __ATOMIC_RELAXED) != 1)
		return;
	if (ev.kind != RT_REC_TRACE || !rt_site_lookup(&rd->sites, ev.site))
		return;
	out->kind = RT_ITEM_TRACE;
	out->flags = RT_ITEM_TIMED | RT_ITEM_NO_SEQ;
	out->counter = ev.counter;
	out->tid = t->tid;
	out->thread = (uint32_t)(t - rd->threads);
	out->site = ev.site;
	out->cpu = ev.cpu;
	memcpy(out->args.a32, ev.a32, sizeof(ev.a32));
	memcpy(out->args.a64, ev.a64, sizeof(ev.a64));
}

static void find_last_event(const struct rt_reader *rd, struct rt_reader_thread *t)
{
	struct rt_item from_entry;
	memset(&t->last, 0, sizeof(t->last));
	for (size_t i = t->item_count; i > 0; i--) {
		if (t->items[i - 1].kind == RT_ITEM_TRACE) {
			t->last = t->items[i - 1];
			break;
		}
	}
	entry_last_event(rd, t, &from_entry);
	/* the entry keeps events the ring could not: take it only if newer */
	if (from_entry.kind && (!t->last.kind || from_entry.counter > t->last.counter))
		t->last = from_entry;
}

/* ---- rings -------------------------------------------------------------- */

/* One thread's claim on a ring: records [first, end). */
struct owner {
	struct rt_reader_thread *thread;
	uint64_t first;
	uint64_t end;
	size_t begin; /* its items in the ring's item array */
	size_t count;
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

/* The ring's control words, taken before the site table is loaded. */
struct ring_snapshot {
	uint32_t ring;
	uint64_t head;
	uint64_t reserve;
	uint64_t records;
	uint64_t dropped;
	int torn;	       /* a dead writer left [head, reserve) half-written */
	uint64_t window_start; /* max(reserve - ring_slots, 0) */
	uint64_t walk_from;    /* where the walk starts: window_start, or later if lapped */
	union rt_slot *copy;   /* live writer: slots [window_start, head), else NULL */
};

static const struct rt_ring_desc *ring_desc(const struct rt_reader *rd, uint32_t ring)
{
	return (const struct rt_ring_desc *)(rd->file +
					     rt_layout_ring_desc_offset(&rd->header, ring));
}

/*
 * Take a ring's control words and fix its window (step 1).  For a live
 * writer also copy the window at once (step 4), so that as little time as
 * possible passes between reading head and copying what lies below it.
 */
static int capture_ring(const struct rt_reader *rd, uint32_t ring, struct ring_snapshot *snap)
{
	const struct rt_ring_desc *d = ring_desc(rd, ring);
	const uint64_t ring_slots = rt_layout_ring_slots(&rd->header);
	const int alive = rd->writer == RT_WRITER_RUNNING;
	memset(snap, 0, sizeof(*snap));
	snap->ring = ring;
	/* acquire: the slots below head, and records, are at least as new as head */
	snap->head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
	snap->records = __atomic_load_n(&d->records, __ATOMIC_RELAXED);
	snap->reserve = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
	snap->dropped = __atomic_load_n(&d->dropped, __ATOMIC_RELAXED);

	uint64_t head = snap->head, reserve = snap->reserve;
	/* a dead writer leaves at most one record between head and reserve */
	if (reserve < head || (!alive && reserve - head > RT_RECORD_MAX_SLOTS))
		reserve = head;
	else if (!alive && reserve != head)
		snap->torn = 1;
	snap->window_start = reserve > ring_slots ? reserve - ring_slots : 0;
	if (snap->window_start > head)
		snap->window_start = head; /* a live writer lapped us between two loads */
	snap->walk_from = snap->window_start;
	if (!alive || head == snap->window_start)
		return 0;

	const union rt_slot *slots =
	    (const union rt_slot *)(rd->file + rt_layout_ring_offset(&rd->header, ring));
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
 * Room for a ring's items: at most one per slot of the window, which the
 * header check bounded by the file's size.  Reserved, not touched: only the
 * pages the items fill become memory, and huge pages make filling them
 * cheap (first-touch faults were most of the time of a large dump).
 */
static struct rt_item *reserve_ring_items(size_t count, size_t *bytes)
{
	const size_t huge = 2u << 20;
	if (count == 0)
		count = 1;
	if (count > SIZE_MAX / sizeof(struct rt_item) - huge)
		return NULL;
	*bytes = (count * sizeof(struct rt_item) + huge - 1) / huge * huge;
	void *p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, *bytes, MADV_HUGEPAGE);
	return p;
}

/*
 * The slots a walk reads: slot s is at slots[(s - base) & mask].  Either the
 * ring itself in the mapping (base 0, mask ring_slots - 1), or a private
 * copy of a live ring's window (base window_start, mask all ones).
 */
struct slot_source {
	const union rt_slot *slots;
	uint64_t base;
	uint64_t mask;
};

static const union rt_slot *slot_at(const struct slot_source *src, uint64_t s)
{
	return &src->slots[(s - src->base) & src->mask];
}

/* Decode slots [from, head) of one ring into items (steps 2-3 above). */
static int walk_ring(struct rt_reader *rd, const struct ring_snapshot *snap,
		     const struct slot_source *src, uint64_t from, struct rt_item **out,
		     size_t *out_count)
{
	const uint64_t head = snap->head;
	const uint64_t records = snap->records;
	const uint64_t newest = records - 1; /* seq of the newest committed record */
	const int alive = rd->writer == RT_WRITER_RUNNING;
	struct rt_item *items;
	size_t count = 0;
	uint64_t previous_seq = 0;
	int have_previous = 0;

	*out = NULL;
	*out_count = 0;
	if (records == 0 || head <= from)
		return 0;
	struct rt_reader_ring_items *keep = &rd->ring_items[rd->ring_items_count];
	items = reserve_ring_items((size_t)(head - from), &keep->bytes);
	if (!items)
		return -ENOMEM;
	keep->items = items;
	rd->ring_items_count++;
	for (uint64_t s = from; s < head;) {
		struct rt_slot_head first;
		struct rt_slot_cont second;
		memcpy(&first, slot_at(src, s), sizeof(first));
		unsigned nslots = first.nslots;
		if (first.seq != (uint32_t)s ||
		    (first.kind != RT_REC_TRACE && first.kind != RT_REC_LOST) || nslots < 1 ||
		    nslots > RT_RECORD_MAX_SLOTS || nslots > head - s) {
			s++;
			continue;
		}
		memset(&second, 0, sizeof(second));
		if (nslots == 2) {
			memcpy(&second, slot_at(src, s + 1), sizeof(second));
			if (second.seq != (uint32_t)(s + 1) || second.kind != RT_REC_CONT ||
			    second.index != 1) {
				s++;
				continue;
			}
		}
		if (first.kind == RT_REC_TRACE) {
			const struct rt_site *site = rt_site_lookup(&rd->sites, first.site);
			if (!site || RT_TRACE_SLOTS(site->nargs) != nslots) {
				s++;
				continue;
			}
		} else if (nslots != 2) {
			s++; /* a LOST record carries its count in the continuation */
			continue;
		}

		/* full seq: the newest seq <= newest with these low 32 bits */
		uint64_t back = (uint32_t)((uint32_t)newest - first.record);
		uint64_t slots_after = head - s - nslots;
		/*
		 * Later records fill slots_after slots, 1 or 2 slots each, so between
		 * ceil(slots_after / 2) and slots_after of them follow, plus one more
		 * when a dead writer counted a record it never published.
		 */
		if (back > newest || back < (slots_after + 1) / 2 ||
		    (!alive && back > slots_after + 1)) {
			s++;
			continue;
		}
		uint64_t seq = newest - back;
		if (have_previous && seq <= previous_seq) {
			s++;
			continue;
		}

		struct rt_item *it = &items[count++];
		memset(it, 0, sizeof(*it));
		it->counter = first.counter;
		it->seq = seq;
		it->flags = RT_ITEM_TIMED;
		it->cpu = first.cpu;
		if (first.kind == RT_REC_TRACE) {
			it->kind = RT_ITEM_TRACE;
			it->site = first.site;
			it->args.a32[0] = first.a0;
			it->args.a32[1] = first.a1;
			it->args.a32[2] = second.a2;
			it->args.a32[3] = second.a3;
			it->args.a64[0] = second.a4;
			it->args.a64[1] = second.a5;
		} else {
			it->kind = RT_ITEM_LOSS;
			it->loss.reason = RT_LOSS_DROPPED;
			it->loss.note = first.a0 == RT_LOST_DROPPED  ? RT_NOTE_RING_FULL
					: first.a0 == RT_LOST_NESTED ? RT_NOTE_NESTED_SIGNAL
								     : RT_NOTE_UNKNOWN_LOST;
			it->loss.count = second.a4;
			it->loss.last_counter = second.a5;
		}
		previous_seq = seq;
		have_previous = 1;
		s += nslots;
	}
	*out = items;
	*out_count = count;
	return 0;
}

/* Counter of the torn record: its own if it looks written, else the thread's newest. */
static uint64_t torn_counter(const struct rt_reader *rd, const struct ring_snapshot *snap,
			     const struct owner *o, const struct rt_item *items, unsigned *flags)
{
	const struct rt_arena_header *h = &rd->header;
	const union rt_slot *slots =
	    (const union rt_slot *)(rd->file + rt_layout_ring_offset(h, snap->ring));
	struct rt_slot_head first;
	memcpy(&first, &slots[snap->head & (rt_layout_ring_slots(h) - 1)], sizeof(first));
	uint64_t newest = 0;
	if (o && o->count)
		newest = items[o->begin + o->count - 1].counter;
	else if (o)
		newest = o->thread->start_counter;
	*flags = RT_ITEM_TIMED;
	if (first.seq == (uint32_t)snap->head &&
	    (first.kind == RT_REC_TRACE || first.kind == RT_REC_LOST) && first.counter >= newest)
		return first.counter;
	if (!newest)
		*flags = 0;
	return newest;
}

/*
 * One owner's share of a ring: count what is there, and turn what is
 * missing into losses (step 5).  torn_here: the ring's torn record is this
 * owner's (it may already be counted in records).
 */
static int account_owner(struct rt_reader *rd, const struct ring_snapshot *snap,
			 const struct owner *o, const struct rt_item *items, int torn_here)
{
	struct rt_reader_thread *t = o->thread;
	struct rt_counts *c = &t->counts;
	const int alive = rd->writer == RT_WRITER_RUNNING;
	const int stream = rd->header.mode == RT_MODE_STREAM;
	uint64_t limit = o->end < snap->records ? o->end : snap->records;
	uint64_t expected = o->first;
	uint64_t before_window = 0;
	int rc;

	c->committed = limit > o->first ? limit - o->first : 0;
	for (size_t i = 0; i < o->count; i++) {
		const struct rt_item *it = &items[o->begin + i];
		if (it->kind == RT_ITEM_TRACE)
			c->present++;
		else
			c->dropped = add_saturating(c->dropped, it->loss.count);
		if (it->seq > expected) {
			uint64_t missing = it->seq - expected;
			if (i == 0) {
				before_window = missing;
			} else {
				c->damaged += missing;
				rc = add_loss(rd, t, RT_LOSS_DAMAGED, RT_NOTE_GAP, missing,
					      it->counter, expected, 0);
				if (rc)
					return rc;
			}
		}
		expected = it->seq + 1;
	}
	if (o->count == 0) {
		before_window = c->committed - (torn_here ? 1 : 0);
	} else if (!alive && limit > expected) {
		/* (a live writer's newest records may be newer than the head we read) */
		uint64_t missing = limit - expected;
		if (torn_here)
			missing--; /* the writer counted the record it died in */
		if (missing) {
			c->damaged += missing;
			rc = add_loss(rd, t, RT_LOSS_DAMAGED, RT_NOTE_GAP, missing,
				      items[o->begin + o->count - 1].counter, expected, 0);
			if (rc)
				return rc;
		}
	}
	if (before_window) {
		if (stream) {
			/* stream mode never overwrites: a collector took them */
			c->consumed += before_window;
		} else {
			c->overwritten += before_window;
			uint64_t at = o->count ? items[o->begin].counter : t->start_counter;
			rc = add_loss(rd, t, RT_LOSS_OVERWRITTEN, RT_NOTE_NONE, before_window, at,
				      o->first, 0);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/*
 * A writer notes its drops in the ring only when room returns, so the last
 * ones may be in the ring's dropped counter alone.  When the window still
 * holds every record the ring ever had, the notes in it are all the notes
 * there were, and the rest of the counter is the ring's current owner's
 * (only it can have been dropping when the trace ended).  When records left
 * the window, so may have notes, and the remainder cannot be told apart.
 */
static int account_unnoted_drops(struct rt_reader *rd, const struct ring_snapshot *snap,
				 struct owner *owners, size_t owner_count,
				 const struct rt_item *items, size_t count)
{
	if (snap->window_start != 0 || owner_count == 0)
		return 0;
	uint64_t noted = 0;
	for (size_t i = 0; i < count; i++)
		if (items[i].kind == RT_ITEM_LOSS)
			noted = add_saturating(noted, items[i].loss.count);
	if (snap->dropped <= noted)
		return 0;
	uint64_t unnoted = snap->dropped - noted;
	struct rt_reader_thread *t = owners[owner_count - 1].thread;
	struct rt_item last;
	entry_last_event(rd, t, &last);
	t->counts.dropped = add_saturating(t->counts.dropped, unnoted);
	return add_loss(rd, t, RT_LOSS_DROPPED, RT_NOTE_RING_FULL, unnoted, last.counter,
			snap->records, last.kind ? RT_ITEM_TIMED : 0);
}

static int decode_ring(struct rt_reader *rd, const struct ring_snapshot *snap, struct owner *owners,
		       size_t owner_count)
{
	const uint64_t ring_slots = rt_layout_ring_slots(&rd->header);
	int rc;

	rd->ring_dropped = add_saturating(rd->ring_dropped, snap->dropped);
	struct rt_item *items;
	size_t count;
	struct slot_source src = {
	    (const union rt_slot *)(rd->file + rt_layout_ring_offset(&rd->header, snap->ring)), 0,
	    ring_slots - 1};
	if (snap->copy) {
		src.slots = snap->copy;
		src.base = snap->window_start;
		src.mask = UINT64_MAX;
	}
	rc = walk_ring(rd, snap, &src, snap->walk_from, &items, &count);
	if (rc)
		return rc;
	rd->rings_decoded++;

	/* give each record to its owner; owners are sorted and disjoint */
	size_t o = 0;
	uint64_t orphans = 0, orphan_counter = 0;
	for (size_t i = 0; i < count; i++) {
		struct rt_item *it = &items[i];
		while (o < owner_count && it->seq >= owners[o].end)
			o++;
		if (o < owner_count && it->seq >= owners[o].first) {
			if (owners[o].count++ == 0)
				owners[o].begin = i;
			it->thread = (uint32_t)(owners[o].thread - rd->threads);
			it->tid = owners[o].thread->tid;
		} else {
			if (orphans++ == 0)
				orphan_counter = it->counter;
			it->thread = RT_ITEM_NO_THREAD;
		}
	}
	if (orphans) {
		rd->totals.damaged = add_saturating(rd->totals.damaged, orphans);
		rc = add_loss(rd, NULL, RT_LOSS_DAMAGED, RT_NOTE_NO_OWNER, orphans, orphan_counter,
			      0, 0);
		if (rc)
			return rc;
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
	for (size_t k = 0; k < owner_count; k++) {
		struct owner *ow = &owners[k];
		ow->thread->items = ow->count ? items + ow->begin : NULL;
		ow->thread->item_count = ow->count;
		/* the torn record may be counted in records: then it is not missing */
		int torn_counted = 0;
		if (ow == torn_owner) {
			uint64_t last =
			    ow->count ? items[ow->begin + ow->count - 1].seq + 1 : ow->first;
			uint64_t limit = ow->end < snap->records ? ow->end : snap->records;
			torn_counted = limit > last;
		}
		rc = account_owner(rd, snap, ow, items, torn_counted);
		if (rc)
			return rc;
	}
	rc = account_unnoted_drops(rd, snap, owners, owner_count, items, count);
	if (rc)
		return rc;
	if (snap->torn) {
		unsigned flags;
		uint64_t at = torn_counter(rd, snap, torn_owner, items, &flags);
		struct rt_reader_thread *t = torn_owner ? torn_owner->thread : NULL;
		if (t)
			t->counts.torn++;
		else
			rd->totals.torn++;
		rc =
		    add_loss(rd, t, RT_LOSS_TORN, RT_NOTE_WRITER_DIED, 1, at, snap->records, flags);
		if (rc)
			return rc;
	}
	return 0;
}

/* Every ring a thread points to, split between its owners. */
struct ring_plan {
	struct owner *owners; /* sorted by ring, then first record */
	size_t owner_count;
	struct ring_snapshot *snaps;
	size_t ring_count;
};

static void free_plan(struct ring_plan *plan)
{
	for (size_t i = 0; i < plan->ring_count; i++)
		free(plan->snaps[i].copy);
	free(plan->owners);
	free(plan->snaps);
}

/*
 * Group the threads by ring and capture every ring.  This comes before the
 * site table is loaded, so that every site a record below a head uses is
 * in the table.
 */
static int plan_rings(struct rt_reader *rd, struct ring_plan *plan)
{
	size_t n = 0;
	memset(plan, 0, sizeof(*plan));
	for (uint32_t i = 0; i < rd->thread_count; i++)
		n += rd->threads[i].ring != RT_NO_RING;
	if (n == 0)
		return 0;
	plan->owners = calloc(n, sizeof(*plan->owners));
	plan->snaps = calloc(n, sizeof(*plan->snaps));
	rd->ring_items = calloc(n, sizeof(*rd->ring_items));
	if (!plan->owners || !plan->snaps || !rd->ring_items)
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
	qsort(owners, n, sizeof(*owners), compare_owners); /* n > 0 */
	/* an owner's range ends where the next one's starts, whatever it claims */
	for (size_t i = 0; i + 1 < n; i++)
		if (owners[i].thread->ring == owners[i + 1].thread->ring &&
		    owners[i].end > owners[i + 1].first)
			owners[i].end = owners[i + 1].first;
	plan->owner_count = n;
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && owners[i].thread->ring == owners[i - 1].thread->ring)
			continue;
		int rc = capture_ring(rd, owners[i].thread->ring, &plan->snaps[plan->ring_count]);
		if (rc)
			return rc;
		plan->ring_count++;
	}
	return 0;
}

static int decode_rings(struct rt_reader *rd, struct ring_plan *plan)
{
	size_t begin = 0;
	for (size_t r = 0; r < plan->ring_count; r++) {
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

/* ---- open and close ----------------------------------------------------- */

static int account_threads(struct rt_reader *rd)
{
	int rc;
	const struct rt_arena_header *h = &rd->header;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		struct rt_reader_thread *t = &rd->threads[i];
		t->counts.dropped = add_saturating(t->counts.dropped, t->lost_no_ring);
		rc = add_loss(rd, t, RT_LOSS_DROPPED, RT_NOTE_NO_RING, t->lost_no_ring,
			      t->start_counter, 0, 0);
		if (rc)
			return rc;
		find_last_event(rd, t);
		counts_add(&rd->totals, &t->counts);
	}
	rd->totals.dropped = add_saturating(rd->totals.dropped, h->lost_untracked);
	rd->totals.dropped = add_saturating(rd->totals.dropped, h->lost_no_site);
	if ((rc = add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_UNTRACKED_THREADS, h->lost_untracked,
			   0, 0, 0)) ||
	    (rc = add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_SITES_REFUSED, h->lost_no_site, 0, 0,
			   0)))
		return rc;
	if (rd->loss_count)
		qsort(rd->losses, rd->loss_count, sizeof(*rd->losses), compare_items);
	return 0;
}

static int map_file(struct rt_reader *rd, struct rt_read_error *error)
{
	int fd = open(rd->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail_errno(error, errno, NULL);
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return fail_errno(error, err, NULL);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		error->has_offset = 0;
		snprintf(error->message, sizeof(error->message), "not a regular file");
		return -EINVAL;
	}
	rd->size = (uint64_t)st.st_size;
	if (rd->size == 0) {
		close(fd);
		static const unsigned char empty[1];
		rd->file = empty;
		return 0;
	}
	void *map = mmap(NULL, (size_t)rd->size, PROT_READ, MAP_SHARED, fd, 0);
	int err = errno;
	close(fd);
	if (map == MAP_FAILED)
		return fail_errno(error, err, "cannot map the file");
	rd->file = map;
	return 0;
}

int rt_reader_open(const char *path, struct rt_reader **out, struct rt_read_error *error)
{
	struct rt_layout_error layout;
	struct rt_clock_pair sync;
	int rc;

	memset(error, 0, sizeof(*error));
	*out = NULL;
	struct rt_reader *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return fail_errno(error, ENOMEM, NULL);
	rd->path = path;
	rc = map_file(rd, error);
	if (rc)
		goto fail;

	rc = rt_layout_check(rd->file, rd->size, &rd->header, &layout);
	if (rc) {
		error->has_offset = 1;
		error->offset = layout.offset;
		snprintf(error->message, sizeof(error->message), "%s", layout.message);
		goto fail;
	}
	const struct rt_arena_header *h = &rd->header;
	if (h->state == RT_ARENA_CLOSED)
		rd->writer = RT_WRITER_CLOSED;
	else
		rd->writer = rt_process_alive(h->pid, h->process_start) ? RT_WRITER_RUNNING
									: RT_WRITER_CRASHED;

	const struct rt_arena_header *live = (const struct rt_arena_header *)rd->file;
	int have_sync = rt_timebase_read_sync(&live->sync, &sync);
	rc = rt_timebase_init(&rd->timebase, h->clock_source, h->counter_hz, &h->start,
			      have_sync ? &sync : NULL);
	if (rc) {
		/* arena_layout rejects counter_hz 0 already; kept for safety */
		error->has_offset = 1;
		error->offset = offsetof(struct rt_arena_header, counter_hz);
		snprintf(error->message, sizeof(error->message), "no usable counter frequency");
		goto fail;
	}

	struct ring_plan plan = {0};
	rc = load_threads(rd);
	if (!rc)
		rc = plan_rings(rd, &plan);
	if (!rc) {
		uint32_t sites_now = __atomic_load_n(&live->sites_used, __ATOMIC_ACQUIRE);
		rc = rt_site_table_load(&rd->sites, h, rd->file, sites_now);
	}
	if (!rc)
		rc = decode_rings(rd, &plan);
	free_plan(&plan);
	if (rc)
		goto fail_memory;
	if ((rc = account_threads(rd)))
		goto fail_memory;
	*out = rd;
	return 0;

fail_memory:
	fail_errno(error, -rc, NULL);
fail:
	rt_reader_close(rd);
	return rc;
}

void rt_reader_close(struct rt_reader *rd)
{
	if (!rd)
		return;
	for (uint32_t i = 0; i < rd->ring_items_count; i++)
		munmap(rd->ring_items[i].items, rd->ring_items[i].bytes);
	free(rd->ring_items);
	free(rd->threads);
	free(rd->losses);
	rt_site_table_free(&rd->sites);
	if (rd->file && rd->size)
		munmap((void *)rd->file, (size_t)rd->size);
	free(rd);
}
