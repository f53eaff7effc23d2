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
 *
 * Damage (docs/FORMAT.md, "Damaged arenas").  The header is repaired before
 * anything is read (read/header_recovery.h); thread entries and site
 * entries are checked one by one, and one that fails is not a thread or
 * site: its records are counted as damaged, never shown.  A dead writer's
 * ring counters are checked against its slots and rebuilt from them when
 * they do not fit (step 1).  The slots of a window that do not decode form
 * runs (step 2); the records missing where a run lies are damaged, and the
 * run is a damaged region with its byte offsets (step 5).  Every region
 * found is in rd->damage, and named by at least one loss.
 *
 * Long because: the jobs here (thread and site tables, the module map,
 * ring windows, opening, following a live arena) all read and write one
 * private state, the reader's internals behind struct rt_reader; each
 * should become a file of its own once that state has a private header.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/proc_stat.h"
#include "format/arena_layout.h"
#include "format/records.h"
#include "read/arena_reader.h"
#include "read/arena_walk.h"
#include "read/entry_checks.h"
#include "read/header_recovery.h"
#include "read/map_guard.h"

_Static_assert(RT_LOG_MAX_SLOTS <= 255, "a log record's slot count fits nslots");

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
	to->damaged_noted = add_saturating(to->damaged_noted, c->damaged_noted);
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

/*
 * The writer runs if a process with its pid and start time exists and is
 * not a zombie.  A killed process that nobody has reaped yet is still in
 * /proc; so is a process whose main thread exited while others run (its
 * main thread then shows Z), hence every task is looked at.
 */
int rt_process_alive(int32_t pid, uint64_t start)
{
	char path[64];
	struct rt_proc_stat st;
	if (pid <= 0)
		return 0;
	rt_proc_stat_path(path, sizeof(path), pid, 0);
	if (rt_proc_stat_read(path, &st) != 0)
		return 0;
	/* a writer that could not read its own start time recorded 0 */
	if (start != 0 && st.start_time != start)
		return 0;
	if (st.state != 'Z' && st.state != 'X')
		return 1;
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int alive = 0;
	struct dirent *e;
	while (!alive && (e = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (tid <= 0 || tid > INT32_MAX || *end)
			continue;
		rt_proc_stat_path(path, sizeof(path), pid, (int)tid);
		alive = rt_proc_stat_read(path, &st) == 0 && st.state != 'Z' && st.state != 'X';
	}
	closedir(d);
	return alive;
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
	case RT_NOTE_UNNOTED:
		return "not yet noted in the ring";
	case RT_NOTE_REGION:
		return "damaged bytes";
	case RT_NOTE_UNPLACED:
		return "records the file's end block counts and no good block of it holds";
	case RT_NOTE_NOTED_DAMAGE:
		return "noted in the file: lost to damage of what it was cut from";
	case RT_NOTE_MISSED:
		return "missed by tail: written over before it read them";
	case RT_NOTE_HOLE:
		return "a hole in the file where records should be: never written, not read; at "
		       "most that many, counted in slots";
	case RT_NOTE_IMAGE_REPLACED:
		return "an earlier image's arena (before an exec) replaced before record read it";
	case RT_NOTE_THREAD_REUSED:
		return "of a thread that ended and whose thread-table entry a later thread took";
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
	case RT_WRITER_REPLACED:
		return "replaced";
	default:
		return "crashed";
	}
}

enum rt_writer_status rt_writer_status_of(const struct rt_arena_header *h, int look_at_process)
{
	if (h->state == RT_ARENA_CLOSED)
		return RT_WRITER_CLOSED;
	/* the pid runs on after an exec, as another image with an arena of its own */
	if (h->end_reason == RT_END_EXEC)
		return RT_WRITER_REPLACED;
	if (look_at_process && rt_process_alive(h->pid, h->process_start))
		return RT_WRITER_RUNNING;
	return RT_WRITER_CRASHED;
}

/* ---- losses ------------------------------------------------------------- */

/* A loss, even of no events (a damaged region that held none, or an unknown number). */
static int push_loss(struct rt_reader *rd, const struct rt_reader_thread *t, uint32_t reason,
		     uint32_t note, uint64_t count, uint64_t counter, uint64_t seq, unsigned flags)
{
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

static int add_loss(struct rt_reader *rd, const struct rt_reader_thread *t, uint32_t reason,
		    uint32_t note, uint64_t count, uint64_t counter, uint64_t seq, unsigned flags)
{
	if (count == 0)
		return 0;
	return push_loss(rd, t, reason, note, count, counter, seq, flags);
}

static int compare_items(const void *a, const void *b)
{
	return rt_item_compare(a, b);
}

/* ---- threads ------------------------------------------------------------ */

/* A thread entry that cannot be believed: a damaged region, and not a thread. */
static int thread_entry_damage(struct rt_reader *rd, uint32_t index, const char *why)
{
	long rc = rt_damage_add(
	    &rd->damage, RT_DAMAGE_THREAD, RT_DAMAGE_UNPARSED, index,
	    rt_layout_thread_offset(&rd->header, index), sizeof(struct rt_thread_entry),
	    "thread entry %u: %s: not a thread, its records are not shown", index, why);
	return rc < 0 ? (int)rc : 0;
}

/*
 * A counter at or above RT_COUNT_MAX counts nothing: its 8 bytes are a
 * damaged region, and the counter is taken as 0.
 */
static int absurd_count(struct rt_reader *rd, uint32_t part, uint32_t index, uint64_t offset,
			const char *entry, const char *field, uint64_t *value)
{
	long rc = rt_damage_add(&rd->damage, part, RT_DAMAGE_UNPARSED, index, offset,
				sizeof(*value), "%s %u: %s %llu is no count: taken as 0", entry,
				index, field, (unsigned long long)*value);
	*value = 0;
	return rc < 0 ? (int)rc : 0;
}

/* The live header's count of used entries of a table now (a live writer claims more). */
static uint64_t used_now(const struct rt_reader *rd, size_t field, int wide)
{
	const unsigned char *p = rd->file + field;
	if (wide)
		return __atomic_load_n((const uint64_t *)p, __ATOMIC_ACQUIRE);
	return __atomic_load_n((const uint32_t *)p, __ATOMIC_ACQUIRE);
}

/* Room for more threads in rd->threads: twice as many, the new ones zero. */
static int grow_threads(struct rt_reader *rd, uint32_t *room)
{
	uint32_t more = *room ? *room * 2 : 64;
	if (more < *room)
		return -ENOMEM;
	struct rt_reader_thread *t = realloc(rd->threads, (size_t)more * sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(t + *room, 0, (size_t)(more - *room) * sizeof(*t));
	rd->threads = t;
	*room = more;
	return 0;
}

/*
 * Every claimed entry that checks on its own (read/entry_checks.h); each
 * one that does not is a damaged region.  The entries past threads_used are
 * looked at too: they are zero unless that counter is damaged (or a live
 * writer claimed one since we read it).
 */
static int load_threads(struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	const uint32_t used = rt_layout_thread_count(h);
	const uint32_t capacity = h->thread_capacity;
	uint32_t beyond = 0; /* 1 + the last thread found past threads_used */
	char why[96];
	const uint64_t base = h->thread_table_offset, each = sizeof(struct rt_thread_entry);
	uint32_t room = 0; /* rd->threads holds room entries: as many as threads found */
	/* an entry in a hole is zeros, a free entry: only entries with data are read */
	for (uint32_t i = (uint32_t)rt_file_data_next_entry(rd->data, base, each, 0, capacity);
	     i < capacity;
	     i = (uint32_t)rt_file_data_next_entry(rd->data, base, each, i + 1ull, capacity)) {
		struct rt_thread_entry copy;
		const struct rt_thread_entry *live = rt_file_data_at(
		    rd->data, rd->file, rt_layout_thread_offset(h, i), sizeof(copy), &copy);
		uint32_t state = __atomic_load_n(&live->state, __ATOMIC_ACQUIRE);
		if (state == RT_THREAD_FREE) {
			/* below threads_used: claimed, and not published (yet, or ever) */
			if (i >= used && !rt_bytes_zero(live, sizeof(*live)) &&
			    i >= used_now(rd, offsetof(struct rt_arena_header, threads_used), 0) &&
			    thread_entry_damage(rd, i, "bytes in an entry never claimed"))
				return -ENOMEM;
			continue;
		}
		/* state was published last: the entry is complete */
		struct rt_thread_entry e;
		memcpy(&e, live, sizeof(e));
		if (state != RT_THREAD_LIVE && state != RT_THREAD_EXITED) {
			snprintf(why, sizeof(why), "state %u", state);
		} else if (rt_thread_entry_ok(&e, rd->rings_recorded, why, sizeof(why))) {
			if (i >= used)
				beyond = i + 1;
			if (rd->thread_count == room && grow_threads(rd, &room))
				return -ENOMEM;
			struct rt_reader_thread *t = &rd->threads[rd->thread_count++];
			t->entry = i;
			t->tid = e.tid;
			t->state = state;
			t->ring = e.ring < h->ring_count ? e.ring : RT_NO_RING;
			t->flags = e.flags;
			memcpy(t->name, e.name, sizeof(t->name));
			t->name[sizeof(t->name) - 1] = 0;
			t->first_record = e.first_record;
			t->end_record = e.end_record;
			t->start_counter = e.start_counter;
			t->exit_counter = e.exit_counter;
			t->lost_no_ring = e.lost_no_ring;
			if (e.lost_no_ring >= RT_COUNT_MAX &&
			    absurd_count(rd, RT_DAMAGE_THREAD, i,
					 rt_layout_thread_offset(h, i) +
					     offsetof(struct rt_thread_entry, lost_no_ring),
					 "thread entry", "lost_no_ring", &t->lost_no_ring))
				return -ENOMEM;
			continue;
		}
		if (thread_entry_damage(rd, i, why))
			return -ENOMEM;
	}
	uint64_t now = used_now(rd, offsetof(struct rt_arena_header, threads_used), 0);
	if (beyond > now &&
	    rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0,
			  offsetof(struct rt_arena_header, threads_used), sizeof(h->threads_used),
			  "threads_used %llu, but entry %u is a thread's: every entry read",
			  (unsigned long long)now, beyond - 1) < 0)
		return -ENOMEM;
	return 0;
}

/* The entry's own copy of the thread's last event, as an item (kind 0 if none). */
static void entry_last_event(const struct rt_reader *rd, const struct rt_reader_thread *t,
			     struct rt_item *out)
{
	struct rt_thread_entry copy;
	const struct rt_thread_entry *live =
	    rt_file_data_at(rd->data, rd->file, rt_layout_thread_offset(&rd->header, t->entry),
			    sizeof(copy), &copy);
	memset(out, 0, sizeof(*out));
	struct rt_last_event ev;
	if (!rt_last_event_read(live, &ev))
		return;
	const struct rt_site *site = rt_site_lookup(&rd->sites, ev.site);
	if (ev.kind != RT_REC_TRACE || !site || rt_site_kind_long(site->kind))
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

/* t->last holds its ring's newest event (the check pass found it), or kind 0. */
static void find_last_event(const struct rt_reader *rd, struct rt_reader_thread *t)
{
	struct rt_item from_entry;
	entry_last_event(rd, t, &from_entry);
	/* the entry keeps events the ring could not: take it only if newer */
	if (from_entry.kind && (!t->last.kind || from_entry.counter > t->last.counter))
		t->last = from_entry;
}

/* ---- sites -------------------------------------------------------------- */

/*
 * Whether an entry of the site table says it is a published log site,
 * before the table is checked: the rings' counters are checked before the
 * sites are loaded, and a log record may leave a dead writer's reserve up
 * to RT_LOG_MAX_SLOTS past head.  Without such an entry the stricter bounds
 * of trace records hold.
 */
/*
 * Entries of the site table before its first hole.  The writer fills the
 * table from its start, so every entry it claimed lies in data: the table
 * is read up to there, and no entry past it costs memory or time.
 */
static uint32_t site_entries_held(const struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	const uint64_t each = sizeof(struct rt_site_entry);
	return (uint32_t)(rt_file_data_run(rd->data, h->site_table_offset,
					   h->site_table_offset + h->site_capacity * each) /
			  each);
}

static int raw_long_records(const struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	const uint32_t held = site_entries_held(rd);
	for (uint32_t i = 0; i < held; i++) {
		const struct rt_site_entry *e =
		    (const struct rt_site_entry *)(rd->file + rt_layout_site_offset(h, i));
		if (__atomic_load_n(&e->valid, __ATOMIC_ACQUIRE) == 1 && rt_site_kind_long(e->kind))
			return 1;
	}
	return 0;
}

/* Log payloads: chunks that never move, so items can point into them. */
struct rt_reader_payloads {
	struct rt_reader_payloads *next;
	size_t used, size;
	unsigned char bytes[];
};

unsigned char *rt_reader_payload_room(struct rt_reader *rd, size_t n)
{
	struct rt_reader_payloads *c = rd->payloads;
	if (!c || c->size - c->used < n) {
		size_t size = c && c->size < (4u << 20) ? c->size * 2 : 64u << 10;
		if (size < n)
			size = n;
		struct rt_reader_payloads *more = malloc(sizeof(*more) + size);
		if (!more)
			return NULL;
		more->next = c;
		more->used = 0;
		more->size = size;
		rd->payloads = c = more;
	}
	unsigned char *p = c->bytes + c->used;
	c->used += n;
	return p;
}

static int site_damage(struct rt_reader *rd, uint32_t index, const char *why)
{
	long rc =
	    rt_damage_add(&rd->damage, RT_DAMAGE_SITE, RT_DAMAGE_UNPARSED, index,
			  rt_layout_site_offset(&rd->header, index), sizeof(struct rt_site_entry),
			  "site entry %u: %s: its records are not shown", index, why);
	if (rc < 0)
		return (int)rc;
	rd->site_region[index] = rc;
	return 0;
}

/* The damaged region of site entry `index`, reported (as why) if it is not yet. */
static long site_region(struct rt_reader *rd, uint32_t index, const char *why)
{
	if (rd->site_region[index] < 0 && site_damage(rd, index, why))
		return -ENOMEM;
	return rd->site_region[index];
}

/* Where a valid site's strings end in the string area. */
static uint64_t site_strings_end(const struct rt_reader *rd, const struct rt_site *s)
{
	const char *area = (const char *)rd->file + rd->header.string_area_offset;
	uint64_t end = (uint64_t)(s->tag - area) + s->tag_length + 1;
	uint64_t file = (uint64_t)(s->file - area) + s->file_length + 1;
	uint64_t func = (uint64_t)(s->func - area) + s->func_length + 1;
	end = file > end ? file : end;
	return func > end ? func : end;
}

/*
 * Site entries past the table's first hole (held entries before it) that
 * hold bytes: nothing was claimed there (common/file_data.h), each is damage.
 */
static int past_hole_sites(struct rt_reader *rd, uint32_t held)
{
	const struct rt_arena_header *h = &rd->header;
	const uint64_t base = h->site_table_offset, each = sizeof(struct rt_site_entry);
	for (uint64_t i = rt_file_data_next_entry(rd->data, base, each, held, h->site_capacity);
	     i < h->site_capacity;
	     i = rt_file_data_next_entry(rd->data, base, each, i + 1, h->site_capacity)) {
		struct rt_site_entry copy;
		if (rt_bytes_zero(rt_file_data_at(rd->data, rd->file, base + i * each, each, &copy),
				  each))
			continue;
		if (rt_damage_add(&rd->damage, RT_DAMAGE_SITE, RT_DAMAGE_UNPARSED, (uint32_t)i,
				  base + i * each, each,
				  "site entry %u: past a hole in the site table, where no site "
				  "was claimed: not a site, its records are not shown",
				  (uint32_t)i) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* 1 + the offset of the last nonzero byte of [from, end) with data; 0 if none. */
static uint64_t last_byte_set(const struct rt_reader *rd, uint64_t from, uint64_t end)
{
	uint64_t last = 0, data_end;
	for (uint64_t at = rt_file_data_next(rd->data, from, end, &data_end); at < end;
	     at = rt_file_data_next(rd->data, data_end, end, &data_end)) {
		for (uint64_t i = data_end; i > at; i--) {
			if (rd->file[i - 1]) {
				last = i;
				break;
			}
		}
	}
	return last;
}

/*
 * The site table, with every entry that does not check reported.  Entries
 * past sites_used, and strings past strings_used, are zero: the writer
 * claims before it writes.  When they are not (and a live writer did not
 * claim them since), either the counter is damaged - a valid site lies
 * there, or uses those strings: the counter is reported and the tables are
 * read to their end - or those bytes are, and are reported.
 */
static int load_sites(struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	const size_t sites_field = offsetof(struct rt_arena_header, sites_used);
	const size_t strings_field = offsetof(struct rt_arena_header, strings_used);
	uint64_t sites_seen = used_now(rd, sites_field, 0);
	uint32_t count = sites_seen < h->site_capacity ? (uint32_t)sites_seen : h->site_capacity;
	uint64_t strings_seen = used_now(rd, strings_field, 1);
	uint64_t strings = strings_seen < h->string_capacity ? strings_seen : h->string_capacity;
	/* read up to the table's first hole; bytes past it are damage, not sites */
	const uint64_t each = sizeof(struct rt_site_entry);
	const uint32_t held = site_entries_held(rd);
	if (count > held)
		count = held;
	uint32_t site_end = count;
	for (uint32_t i = held; i > count; i--) {
		if (!rt_bytes_zero(rd->file + rt_layout_site_offset(h, i - 1), each)) {
			site_end = i;
			break;
		}
	}
	if (past_hole_sites(rd, held))
		return -ENOMEM;
	uint64_t string_end = strings;
	const uint64_t last = last_byte_set(rd, h->string_area_offset + strings,
					    h->string_area_offset + h->string_capacity);
	if (last) {
		/* with the NUL that ends the string */
		uint64_t i = last - h->string_area_offset;
		string_end = i < h->string_capacity ? i + 1 : i;
	}
	/* a live writer may have claimed them since the counters were read */
	uint64_t sites_now = used_now(rd, sites_field, 0);
	uint64_t strings_now = used_now(rd, strings_field, 1);
	if (site_end <= sites_now)
		count = site_end;
	if (string_end <= strings_now)
		strings = string_end;
	int rc = rt_site_table_load(&rd->sites, h, rd->file, rd->data, site_end, string_end);
	if (rc)
		return rc;
	rd->site_region = malloc((rd->sites.count + 1) * sizeof(*rd->site_region));
	if (!rd->site_region)
		return -ENOMEM;
	for (uint32_t i = 0; i <= rd->sites.count; i++)
		rd->site_region[i] = -1;
	static const char *const string_names[4] = {"tag", "file name", "function name",
						    "argument types"};
	char why[96];
	uint32_t valid_past = 0;   /* 1 + the last valid site past sites_used */
	uint64_t strings_past = 0; /* the furthest end of a valid site's strings */
	for (uint32_t i = 1; i < rd->sites.count; i++) {
		const struct rt_site *s = &rd->sites.sites[i];
		const unsigned char *entry = rd->file + rt_layout_site_offset(h, i);
		switch (s->fault) {
		case RT_SITE_OK: {
			uint64_t end = site_strings_end(rd, s);
			strings_past = end > strings_past ? end : strings_past;
			if (i >= count)
				valid_past = i + 1;
			continue;
		}
		case RT_SITE_UNPUBLISHED:
			/* below sites_used: claimed, not (yet, or ever) published */
			if (i < count || rt_bytes_zero(entry, sizeof(struct rt_site_entry)))
				continue;
			snprintf(why, sizeof(why), "bytes in an entry never registered");
			break;
		case RT_SITE_BAD_FLAG:
			snprintf(why, sizeof(why), "valid is %u",
				 ((const struct rt_site_entry *)entry)->valid);
			break;
		case RT_SITE_BAD_ENTRY:
			snprintf(why, sizeof(why),
				 "kind, arguments or reserved bytes out of range");
			break;
		default:
			if (s->fault_length) {
				long at = rt_damage_add(
				    &rd->damage, RT_DAMAGE_STRING, RT_DAMAGE_UNPARSED, i,
				    h->string_area_offset + s->fault_offset, s->fault_length,
				    "%s of site %u: not a string where its entry says (a NUL "
				    "inside or missing): its records are not shown",
				    string_names[s->string], i);
				if (at < 0)
					return -ENOMEM;
				rd->site_region[i] = at;
				continue;
			}
			snprintf(why, sizeof(why), "its %s lies outside the string area",
				 string_names[s->string]);
			break;
		}
		if (site_damage(rd, i, why))
			return -ENOMEM;
	}
	if (valid_past &&
	    rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0, sites_field,
			  sizeof(h->sites_used),
			  "sites_used %llu, but site entry %u is a valid site: every entry read",
			  (unsigned long long)sites_seen, valid_past - 1) < 0)
		return -ENOMEM;
	if (string_end > strings) {
		long at =
		    strings_past > strings
			? rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0,
					strings_field, sizeof(h->strings_used),
					"strings_used %llu, but sites' strings reach %llu: the "
					"string area read to there",
					(unsigned long long)strings_seen,
					(unsigned long long)strings_past)
			: rt_damage_add(
			      &rd->damage, RT_DAMAGE_STRING, RT_DAMAGE_UNPARSED, 0,
			      h->string_area_offset + strings, string_end - strings,
			      "string area past strings_used %llu: written, but no site's",
			      (unsigned long long)strings_seen);
		if (at < 0)
			return -ENOMEM;
	}
	return 0;
}

/* ---- modules ------------------------------------------------------------ */

static int module_damage(struct rt_reader *rd, uint64_t offset, uint64_t length, uint32_t index,
			 const char *why)
{
	long rc = rt_damage_add(&rd->damage, RT_DAMAGE_MODULE, RT_DAMAGE_UNPARSED, index, offset,
				length, "module entry %u: %s: not a module, not shown", index, why);
	return rc < 0 ? (int)rc : 0;
}

/*
 * The module table: every published entry that checks, with its path.
 * Entries past modules_used are zero unless that counter is damaged (or a
 * live writer claimed one since): such an entry is read if it checks, and
 * the counter reported.  An entry whose path is not where it says is
 * reported over the path's bytes.
 */
static int load_modules(struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	const size_t used_field = offsetof(struct rt_arena_header, modules_used);
	const uint32_t used = rt_layout_module_count(h);
	uint32_t beyond = 0;
	char why[128];
	const uint64_t base = h->module_table_offset, each = sizeof(struct rt_module_entry);
	/* an entry in a hole is zeros, never claimed: only entries with data are read */
	for (uint32_t i =
		 (uint32_t)rt_file_data_next_entry(rd->data, base, each, 0, h->module_capacity);
	     i < h->module_capacity; i = (uint32_t)rt_file_data_next_entry(
					 rd->data, base, each, i + 1ull, h->module_capacity)) {
		const uint64_t at = rt_layout_module_offset(h, i);
		struct rt_module_entry copy;
		const struct rt_module_entry *live =
		    rt_file_data_at(rd->data, rd->file, at, sizeof(copy), &copy);
		uint32_t valid = __atomic_load_n(&live->valid, __ATOMIC_ACQUIRE);
		if (valid == 0) {
			/* below modules_used: claimed, not published (yet, or ever) */
			if (i >= used && !rt_bytes_zero(live, sizeof(*live)) &&
			    i >= used_now(rd, used_field, 0) &&
			    module_damage(rd, at, sizeof(*live), i,
					  "bytes in an entry never claimed"))
				return -ENOMEM;
			continue;
		}
		struct rt_module_entry e;
		memcpy(&e, live, sizeof(e));
		/* written after valid, once: a live writer may be setting it now */
		e.unload_counter = __atomic_load_n(&live->unload_counter, __ATOMIC_RELAXED);
		if (!rt_module_entry_ok(&e, why, sizeof(why))) {
			if (module_damage(rd, at, sizeof(*live), i, why))
				return -ENOMEM;
			continue;
		}
		const char *path = (const char *)rd->file + h->string_area_offset + e.path_offset;
		if ((uint64_t)e.path_offset + e.path_length >= h->string_capacity) {
			if (module_damage(rd, at, sizeof(*live), i,
					  "its path lies outside the string area"))
				return -ENOMEM;
			continue;
		}
		const uint64_t path_at = h->string_area_offset + e.path_offset;
		const uint64_t nul_at = path_at + e.path_length;
		/* a byte in a hole, its NUL's included, is damage: never read */
		if (!rt_file_data_whole(rd->data, path_at, nul_at + 1) ||
		    !rt_module_path_ok(path, e.path_length)) {
			if (module_damage(rd, h->string_area_offset + e.path_offset,
					  (uint64_t)e.path_length + 1, i,
					  "its path is not a string where the entry says (a NUL "
					  "inside or missing)"))
				return -ENOMEM;
			continue;
		}
		if (i >= used)
			beyond = i + 1;
		if (rt_reader_modules_add(&rd->modules, i, &e, path))
			return -ENOMEM;
	}
	uint64_t now = used_now(rd, used_field, 0);
	if (beyond > now &&
	    rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0, used_field,
			  sizeof(h->modules_used),
			  "modules_used %llu, but entry %u is a module's: every entry read",
			  (unsigned long long)now, beyond - 1) < 0)
		return -ENOMEM;
	return 0;
}

/* ---- rings -------------------------------------------------------------- */

/* One thread's claim on a ring: records [first, end), and what the check pass saw of them. */
struct owner {
	struct rt_reader_thread *thread;
	uint64_t first;
	uint64_t end;
	size_t begin;	 /* the ring's items before its first one */
	size_t count;	 /* its items */
	size_t position; /* the ring's items whose seq is below first */
	uint64_t first_seq, first_counter, last_seq, last_counter;
	uint64_t present;	     /* its events */
	uint64_t dropped;	     /* what its LOST records count */
	size_t gap_begin, gap_count; /* its gaps between two items (struct gap) */
	struct rt_walk start;	     /* the walk just before its first item */
	struct rt_walk last_event;   /* the walk just before its newest event */
	int has_last_event;
};

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

/* The ring's control words, taken before the site table is loaded. */
struct ring_snapshot {
	uint32_t ring;
	uint64_t head;
	uint64_t reserve;
	uint64_t records;
	uint64_t dropped;
	uint64_t noted;
	int live;	       /* the writer may still be writing: the walk reads a copy */
	int torn;	       /* a dead writer left [head, reserve) half-written */
	uint64_t window_start; /* max(reserve - ring_slots, 0) */
	uint64_t walk_from;    /* where the walk starts: window_start, or later if lapped */
	union rt_slot *copy;   /* live writer: slots [window_start, head), else NULL */
	uint64_t readable;     /* slots of the ring the file holds (fewer if it is cut short) */
	long desc_damage;      /* its descriptor's damaged region, or -1 */
	/* the check pass's: slots that did not decode, and the walk's totals */
	struct rt_walk_runs runs;
	struct rt_walk walk;
	size_t item_count;
	int oldest_estimated; /* window_oldest() counted back over slots that did not decode */
};

/*
 * Ring's descriptor: in the file when the file holds it, else in *copy
 * with its holes as zeros (a ring never claimed), not read.
 */
static const struct rt_ring_desc *ring_desc(const struct rt_reader *rd, uint32_t ring,
					    struct rt_ring_desc *copy)
{
	return rt_file_data_at(rd->data, rd->file, rt_layout_ring_desc_offset(&rd->header, ring),
			       sizeof(*copy), copy);
}

const struct rt_ring_desc *rt_reader_ring_desc(const struct rt_reader *rd, uint32_t ring,
					       struct rt_ring_desc *copy)
{
	return ring_desc(rd, ring, copy);
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
static uint64_t held_from(const struct rt_reader *rd, uint32_t ring, uint64_t readable,
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
static int copy_window(const struct rt_reader *rd, const struct rt_ring_desc *d,
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
	const struct rt_ring_desc *d = ring_desc(rd, ring, &copy);
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
	     absurd_count(rd, RT_DAMAGE_RING_DESC, ring,
			  desc + offsetof(struct rt_ring_desc, dropped), "ring", "dropped",
			  &snap->dropped)) ||
	    (snap->noted >= RT_COUNT_MAX &&
	     absurd_count(rd, RT_DAMAGE_RING_DESC, ring,
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
	    held_from(rd, ring, snap->readable, snap->window_start, head) != snap->window_start)
		return 0;
	return copy_window(rd, d, snap);
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
		r->damage = site_region(rd, r->site, "not registered, but records name it");
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
	int rc = add_loss(rd, t, RT_LOSS_DAMAGED, RT_NOTE_GAP, missing, counter, seq, flags);
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
			rc = add_loss(rd, t, RT_LOSS_OVERWRITTEN, RT_NOTE_NONE, before_window, at,
				      o->first, 0);
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
	entry_last_event(rd, t, &last);
	t->counts.dropped = add_saturating(t->counts.dropped, unnoted);
	return add_loss(rd, t, RT_LOSS_DROPPED, RT_NOTE_UNNOTED, unnoted, last.counter,
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
	return add_loss(rd, NULL, RT_LOSS_OVERWRITTEN, RT_NOTE_THREAD_REUSED, unowned, 0, 0, 0);
}

/* The source a walk of the snapshot's ring reads: the live copy, or the ring in the file. */
static void walk_source(const struct rt_reader *rd, const struct ring_snapshot *snap,
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
	if (snap->copy) {
		src->slots = snap->copy;
		src->base = snap->window_start;
		src->mask = UINT64_MAX;
		src->readable = UINT64_MAX;
		src->in_file = 0;
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

/* The newest event of an owner, decoded again with its payload (kept by the reader). */
static int owner_last_event(struct rt_reader *rd, const struct rt_walk_source *src,
			    const struct owner *o)
{
	struct rt_reader_thread *t = o->thread;
	memset(&t->last, 0, sizeof(t->last));
	if (!o->has_last_event)
		return 0;
	unsigned char payload[RT_LOG_PAYLOAD_MAX];
	struct rt_walk w = o->last_event;
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
	walk_source(rd, snap, &src);
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
	rt_walk_begin(&snap->walk, snap->walk_from);
	for (;;) {
		const struct rt_walk before = snap->walk;
		struct rt_item it;
		rc = rt_walk_next(rd, &src, &snap->walk, &snap->runs, &it, NULL);
		if (rc < 0)
			goto out;
		if (rc == 0)
			break;
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
		rc = add_loss(rd, NULL, RT_LOSS_OVERWRITTEN, RT_NOTE_THREAD_REUSED, orphans,
			      orphan_counter, 0, RT_ITEM_TIMED);
		if (rc)
			goto out;
	} else if (orphans) {
		rd->orphans = add_saturating(rd->orphans, orphans);
		rd->totals.damaged = add_saturating(rd->totals.damaged, orphans);
		rc = add_loss(rd, NULL, RT_LOSS_DAMAGED, RT_NOTE_NO_OWNER, orphans, orphan_counter,
			      0, 0);
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
		tw->start = ow->start;
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
		    (rc = owner_last_event(rd, &src, ow)) != 0)
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
		rc =
		    add_loss(rd, t, RT_LOSS_TORN, RT_NOTE_WRITER_DIED, 1, at, snap->records, flags);
	}
out:
	free(gaps);
	return rc;
}

/* Every ring that holds records, split between its owners (none: no entry claims it). */
struct ring_plan {
	struct owner *owners; /* sorted by ring, then first record */
	size_t owner_count;
	struct ring_snapshot *snaps; /* sorted by ring */
	size_t ring_count;
};

static void free_plan(struct ring_plan *plan)
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
static int plan_rings(struct rt_reader *rd, struct ring_plan *plan)
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
	uint64_t rings_used = used_now(rd, rings_field, 0);
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
		const struct rt_ring_desc *d = ring_desc(rd, ring, &copy);
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
	if (rings_past > used_now(rd, rings_field, 0) &&
	    rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0, rings_field,
			  sizeof(h->rings_used), "rings_used %llu, but ring %u is in use",
			  (unsigned long long)rings_used, rings_past - 1) < 0)
		return -ENOMEM;
	return 0;
}

static int decode_rings(struct rt_reader *rd, struct ring_plan *plan)
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

/* ---- open and close ----------------------------------------------------- */

uint64_t rt_header_counted_lost(const struct rt_arena_header *h)
{
	uint64_t n = add_saturating(h->lost_untracked, h->lost_no_site);
	return add_saturating(add_saturating(n, h->lost_replaced), h->lost_reused);
}

int rt_reader_add_counted_losses(struct rt_reader *rd)
{
	int rc;
	const struct rt_arena_header *h = &rd->header;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		rc = add_loss(rd, t, RT_LOSS_DROPPED, RT_NOTE_NO_RING, t->lost_no_ring,
			      t->start_counter, 0, 0);
		if (rc)
			return rc;
	}
	if ((rc = add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_UNTRACKED_THREADS, h->lost_untracked,
			   0, 0, 0)) ||
	    (rc = add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_SITES_REFUSED, h->lost_no_site, 0, 0,
			   0)) ||
	    (rc = add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_IMAGE_REPLACED, h->lost_replaced, 0,
			   0, 0)) ||
	    (rc = add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_NO_RING, h->lost_reused, 0, 0, 0)))
		return rc;
	return 0;
}

static int account_threads(struct rt_reader *rd)
{
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		struct rt_reader_thread *t = &rd->threads[i];
		t->counts.dropped = add_saturating(t->counts.dropped, t->lost_no_ring);
		find_last_event(rd, t);
		counts_add(&rd->totals, &t->counts);
	}
	rd->totals.dropped =
	    add_saturating(rd->totals.dropped, rt_header_counted_lost(&rd->header));
	int rc = rt_reader_add_counted_losses(rd);
	if (rc)
		return rc;
	if (rd->loss_count)
		qsort(rd->losses, rd->loss_count, sizeof(*rd->losses), compare_items);
	return 0;
}

/*
 * Records no thread entry claims were found: the entries that should have
 * claimed them are damaged.  Those that failed their checks are reported
 * already; an entry never published (state 0) below threads_used is one
 * too then - zeroed, most likely (a thread killed while claiming its entry
 * leaves one as well, but no records).
 */
static int report_unpublished_threads(struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	uint32_t used = rt_layout_thread_count(h);
	if (!rd->orphans)
		return 0;
	for (uint32_t i = 0; i < used; i++) {
		const struct rt_thread_entry *live =
		    (const struct rt_thread_entry *)(rd->file + rt_layout_thread_offset(h, i));
		if (__atomic_load_n(&live->state, __ATOMIC_ACQUIRE) == RT_THREAD_FREE &&
		    thread_entry_damage(rd, i,
					"never published (zeroed?), and records no entry claims "
					"exist"))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Every damaged region no loss names yet (header fields, table entries,
 * descriptors, the missing end of a file, slots nobody's records were in)
 * becomes a loss of its own, so that the dump shows each one in its place:
 * at its time when it has one, else first.
 */
static int add_region_losses(struct rt_reader *rd)
{
	size_t regions = rd->damage.count;
	if (regions == 0)
		return 0;
	unsigned char *named = calloc(regions, 1);
	if (!named)
		return -ENOMEM;
	for (size_t i = 0; i < rd->loss_count; i++)
		if (rd->losses[i].flags & RT_ITEM_DAMAGE)
			named[rd->losses[i].loss.damage] = 1;
	int rc = 0;
	for (size_t i = 0; i < regions && rc == 0; i++) {
		if (named[i])
			continue;
		const struct rt_damage *d = &rd->damage.items[i];
		rc = push_loss(rd, NULL, RT_LOSS_DAMAGED, RT_NOTE_REGION, d->events, d->counter, 0,
			       RT_ITEM_DAMAGE | (d->timed ? RT_ITEM_TIMED : 0));
		if (rc == 0)
			rd->losses[rd->loss_count - 1].loss.damage = (uint32_t)i;
	}
	free(named);
	return rc;
}

static const unsigned char empty_file[1];

/*
 * Map path read-only: *file, *size and *fd (kept open: it says where the
 * file holds data, common/file_data.h), or -errno with error filled.
 */
static int map_file(const char *path, const unsigned char **file, uint64_t *size, int *fd_out,
		    struct rt_read_error *error)
{
	/* O_NONBLOCK: a FIFO without a writer would block the open; refused below */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
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
	*size = (uint64_t)st.st_size;
	if (*size == 0) {
		close(fd);
		*file = empty_file;
		*fd_out = -1;
		return 0;
	}
	void *map = mmap(NULL, (size_t)*size, PROT_READ, MAP_SHARED, fd, 0);
	int err = errno;
	if (map == MAP_FAILED) {
		close(fd);
		return fail_errno(error, err, "cannot map the file");
	}
	/* another process may cut the file short at any time: then zeros, not SIGBUS */
	rt_map_guard_watch(map, (size_t)*size, 0);
	*file = map;
	*fd_out = fd;
	return 0;
}

static void unmap_file(const unsigned char *file, uint64_t size)
{
	rt_map_guard_forget(file);
	munmap((void *)file, (size_t)size);
}

/* The words of the damaged region, the message of a failed open, and the tool's line. */
#define SHRUNK_TEXT                                                                                \
	"the file shrank while it was read (another process truncated it): bytes from %llu on "    \
	"are damage"

int rt_reader_shrunk(struct rt_reader *rd, uint64_t *offset)
{
	if (!rd->size || !rt_map_guard_shrunk(rd->file, offset))
		return 0;
	if (rd->shrunk_from && rd->shrunk_from - 1 <= *offset)
		return 1;
	if (rd->shrunk_from) {
		struct rt_damage *d = &rd->damage.items[rd->shrunk_region];
		d->offset = *offset;
		d->length = rd->size - *offset;
		snprintf(d->what, sizeof(d->what), SHRUNK_TEXT, (unsigned long long)*offset);
	} else {
		long region =
		    rt_damage_add(&rd->damage, RT_DAMAGE_MISSING, 0, 0, *offset, rd->size - *offset,
				  SHRUNK_TEXT, (unsigned long long)*offset);
		if (region < 0)
			return (int)region;
		rd->shrunk_region = (size_t)region;
	}
	rd->shrunk_from = *offset + 1;
	return 1;
}

static int open_arena(const void *data, size_t size, int fd, const char *name, int rings,
		      struct rt_reader **out, struct rt_read_error *error);

/* Map path and read it as an arena (rings: its records too, else only its tables). */
static int open_mapped(const char *path, int rings, struct rt_reader **out,
		       struct rt_read_error *error)
{
	const unsigned char *file = NULL;
	uint64_t size = 0;
	int fd = -1;
	memset(error, 0, sizeof(*error));
	*out = NULL;
	int rc = map_file(path, &file, &size, &fd, error);
	if (rc)
		return rc;
	rc = open_arena(file, (size_t)size, fd, path, rings, out, error);
	uint64_t shrunk;
	if (rc && size && rt_map_guard_shrunk(file, &shrunk)) {
		/* what did not parse was the zeros of a file cut short under the reader */
		error->has_offset = 1;
		error->offset = shrunk;
		snprintf(error->message, sizeof(error->message), SHRUNK_TEXT,
			 (unsigned long long)shrunk);
		rc = -ENODATA;
	}
	if (rc) {
		if (size)
			unmap_file(file, size);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	(*out)->owns_mapping = 1;
	(*out)->fd = fd;
	return 0;
}

int rt_reader_open(const char *path, struct rt_reader **out, struct rt_read_error *error)
{
	return open_mapped(path, 1, out, error);
}

int rt_reader_open_memory(const void *data, size_t size, const char *name, struct rt_reader **out,
			  struct rt_read_error *error)
{
	return open_arena(data, size, -1, name, 1, out, error);
}

/* The reader of rt_reader_open_memory(), or with rings 0 only its tables (a live arena's). */
static int open_arena(const void *data, size_t size, int fd, const char *name, int rings,
		      struct rt_reader **out, struct rt_read_error *error)
{
	struct rt_layout_error layout;
	struct rt_clock_pair sync;
	int rc;

	memset(error, 0, sizeof(*error));
	*out = NULL;
	/* the tables are read with atomic loads at 8-byte aligned offsets */
	if (size && (uintptr_t)data % 8) {
		snprintf(error->message, sizeof(error->message), "arena buffer not 8-byte aligned");
		return -EINVAL;
	}
	struct rt_reader *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return fail_errno(error, ENOMEM, NULL);
	rd->path = name;
	rd->file = size ? data : empty_file;
	rd->size = size;
	rd->fd = -1;
	rd->data = malloc(sizeof(*rd->data));
	if (!rd->data) {
		free(rd);
		return fail_errno(error, ENOMEM, NULL);
	}
	rt_file_data_init(rd->data, fd);

	memset(&layout, 0, sizeof(layout));
	rc = rt_header_recover(rd->file, rd->size, rd->data, &rd->header, &rd->rings_recorded,
			       &rd->damage, &layout);
	if (rc == -ENOMEM)
		goto fail_memory;
	if (rc) {
		error->has_offset = 1;
		error->offset = layout.offset;
		snprintf(error->message, sizeof(error->message), "%s", layout.message);
		goto fail;
	}
	struct rt_arena_header *h = &rd->header;
	rd->writer = rt_writer_status_of(h, 1);

	struct ring_plan plan = {0};
	if ((rc = load_threads(rd)) != 0)
		goto fail_memory;

	/* the clock's time zero is checked against the threads (read/header_recovery.h) */
	const struct rt_arena_header *live = (const struct rt_arena_header *)rd->file;
	int have_sync = rt_timebase_read_sync(&live->sync, &sync);
	uint64_t earliest = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++)
		if (rd->threads[i].start_counter &&
		    (!earliest || rd->threads[i].start_counter < earliest))
			earliest = rd->threads[i].start_counter;
	if ((rc = rt_header_check_clock(h, have_sync ? &sync : NULL, earliest, &rd->damage,
					&have_sync)) != 0)
		goto fail_memory;
	rc = rt_timebase_init(&rd->timebase, h->clock_source, h->counter_hz, &h->start,
			      have_sync ? &sync : NULL);
	if (rc) {
		/* header recovery makes counter_hz usable; kept for safety */
		error->has_offset = 1;
		error->offset = offsetof(struct rt_arena_header, counter_hz);
		snprintf(error->message, sizeof(error->message), "no usable counter frequency");
		goto fail;
	}

	rd->long_records = raw_long_records(rd);
	rc = rings ? plan_rings(rd, &plan) : 0;
	if (!rc)
		rc = load_sites(rd);
	/* events per site, as the check pass finds them (a trace set counts with them) */
	if (!rc && rings &&
	    !(rd->site_events = calloc((size_t)rd->sites.count + 1, sizeof(*rd->site_events))))
		rc = -ENOMEM;
	if (!rc) {
		rd->long_records |= rt_site_table_has_long(&rd->sites);
		rd->max_slots = rt_site_table_max_slots(&rd->sites);
	}
	if (!rc)
		rc = load_modules(rd);
	if (!rc)
		rc = rt_fd_seeds_read_table(&rd->fds, rd->file, &rd->header, rd->data);
	if (!rc && rings)
		rc = decode_rings(rd, &plan);
	free_plan(&plan);
	if (rc)
		goto fail_memory;
	/* the file cut short while it was read: one region more, and a loss as the others */
	uint64_t shrunk;
	if (rings &&
	    ((rc = report_unpublished_threads(rd)) || (rc = rt_reader_shrunk(rd, &shrunk)) < 0 ||
	     (rc = add_region_losses(rd)) || (rc = account_threads(rd))))
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
	for (size_t i = 0; i < rd->walks.source_count; i++)
		free(rd->walks.sources[i].copy);
	free(rd->walks.sources);
	free(rd->walks.threads);
	free(rd->site_events);
	while (rd->payloads) {
		struct rt_reader_payloads *next = rd->payloads->next;
		free(rd->payloads);
		rd->payloads = next;
	}
	free(rd->threads);
	free(rd->losses);
	free(rd->site_region);
	rt_site_table_free(&rd->sites);
	rt_reader_modules_free(&rd->modules);
	rt_fd_seeds_free(&rd->fds);
	rt_damage_free(&rd->damage);
	if (rd->owns_mapping && rd->size)
		unmap_file(rd->file, rd->size);
	if (rd->owns_mapping && rd->fd >= 0)
		close(rd->fd);
	free(rd->data);
	free(rd);
}

/* ---- following a live arena --------------------------------------------- */

int rt_reader_open_live(const char *path, struct rt_reader **out, struct rt_read_error *error)
{
	return open_mapped(path, 0, out, error);
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
	return open_arena(data, size, -1, name, 0, out, error);
}

int rt_reader_reload(struct rt_reader *rd, struct rt_read_error *error)
{
	struct rt_reader *fresh;
	int rc = open_arena(rd->file, (size_t)rd->size, rd->data->fd, rd->path, 0, &fresh, error);
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
	const struct rt_ring_desc *d = ring_desc(rd, ring, &copy);
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
	return __atomic_load_n(&ring_desc(rd, ring, &copy)->head, __ATOMIC_ACQUIRE);
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
	const struct rt_ring_desc *d = ring_desc(rd, ring, &copy);
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
	from = held_from(rd, ring, snap.readable, from, head);
	snap.window_start = snap.walk_from = from;
	int rc = from < head ? copy_window(rd, d, &snap) : 0;
	if (rc)
		return rc;

	struct rt_walk_source src;
	walk_source(rd, &snap, &src);
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
