/*
 * arena_reader.h - open an arena file and recover its events and losses.
 *
 * rt_reader_open() maps the file read-only (rt_reader_open_memory() takes
 * the bytes from the caller instead), checks its header and repairs what
 * its redundancy allows (read/header_recovery.h), checks every thread entry
 * and site entry on its own, loads the site table, decodes every ring that
 * holds records, gives each record to the thread that owned the ring when
 * the record was written, and accounts for every record it could not
 * recover as a loss with a reason.  What it found damaged is listed with
 * byte offsets in `damage`; a record whose thread or site cannot be
 * believed is never an event, only a damaged loss.  The tables, counts and
 * losses are built once; the arena may keep changing underneath (a live
 * writer: its windows are copied when read) without affecting them.
 *
 * What the reader produces is, per thread, a count of its records and where
 * they lie, read a window at a time through a cursor (read/arena_cursor.h)
 * in record-sequence order, plus one list of losses, sorted, so that a
 * k-way merge (read/merge.h) by rt_item_compare() gives one time line.
 * Opening reads every ring once to check and count it, keeping no item:
 * memory follows the rings, threads, sites and damage, never the events.
 */
#ifndef RT_READ_ARENA_READER_H
#define RT_READ_ARENA_READER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/file_data.h"
#include "decode/clock.h"
#include "decode/fd_seeds.h"
#include "decode/sites.h"
#include "read/damage.h"
#include "read/modules.h"
#include "ringtrace/format.h"

enum rt_item_kind {
	RT_ITEM_TRACE = 1, /* an event */
	RT_ITEM_LOSS = 2,  /* events that could not be recovered */
	RT_ITEM_LOG = 3,   /* an RT_LOG message: an event whose arguments are a payload */
	RT_ITEM_IO = 4,	   /* a file I/O call (RT_REC_IO): an event with a payload, like LOG */
};

/* Events are trace events, log messages and I/O calls; every other item is a loss. */
static inline int rt_item_kind_is_event(unsigned kind)
{
	return kind == RT_ITEM_TRACE || kind == RT_ITEM_LOG || kind == RT_ITEM_IO;
}

/* Items whose record's payload is in item->log (RT_ITEM_LOG, RT_ITEM_IO). */
static inline int rt_item_has_payload(unsigned kind)
{
	return kind == RT_ITEM_LOG || kind == RT_ITEM_IO;
}

enum rt_loss_reason {
	RT_LOSS_OVERWRITTEN = 1, /* the ring wrapped over them (flight mode) */
	RT_LOSS_DROPPED = 2,	 /* never recorded: full ring, no ring, no site... */
	RT_LOSS_TORN = 3,	 /* the writer died while writing it */
	RT_LOSS_DAMAGED = 4,	 /* recorded, but what is left does not decode */
};

/* Why, in more words (the "note" of a loss). */
enum rt_loss_note {
	RT_NOTE_NONE = 0,
	RT_NOTE_RING_FULL,	   /* stream mode: the collector was behind */
	RT_NOTE_NESTED_SIGNAL,	   /* a signal handler traced mid-record */
	RT_NOTE_NO_RING,	   /* the thread found no free ring */
	RT_NOTE_UNTRACKED_THREADS, /* no thread-table entry, or the arena was starting */
	RT_NOTE_SITES_REFUSED,	   /* site table or string area full, or an ABI not served */
	RT_NOTE_WRITER_DIED,	   /* torn: the process died mid-record */
	RT_NOTE_NO_OWNER,	   /* records no thread-table entry claims */
	RT_NOTE_GAP,		   /* records missing between recovered ones */
	RT_NOTE_UNKNOWN_LOST,	   /* a LOST record with an unknown reason */
	RT_NOTE_UNNOTED,	   /* counted in the ring, not yet reported by a note */
	RT_NOTE_REGION,		   /* a damaged region (RT_ITEM_DAMAGE): events unknown */
	RT_NOTE_NOTED_DAMAGE,	   /* a LOSS entry: lost to damage of what a cut read */
	RT_NOTE_UNPLACED,	   /* counted by a file's END block, in no block of it */
	RT_NOTE_MISSED,		   /* a follower of a live arena read them too late */
	RT_NOTE_IMAGE_REPLACED,	   /* an earlier image's arena, replaced before record read it */
	RT_NOTE_THREAD_REUSED,	   /* records of an ended thread whose entry a later one took */
	RT_NOTE_HOLE,		   /* a follower met a hole of the file in a ring's window */
};

/* counter says when it happened; without it, it only says where it sorts. */
#define RT_ITEM_TIMED 0x1u
/* last-event items: seq is not known (the copy in the thread entry). */
#define RT_ITEM_NO_SEQ 0x2u
/* a damaged loss with a place in the file: loss.damage indexes rt_reader.damage */
#define RT_ITEM_DAMAGE 0x4u
/* a loss whose count is estimated from the size of the damage, not counted */
#define RT_ITEM_ESTIMATED 0x8u
/*
 * A thread's records lost to a damaged region of a trace file: the region's
 * own item (RT_ITEM_DAMAGE) counts them too, in all its threads.
 */
#define RT_ITEM_IN_REGION 0x80u

#define RT_ITEM_NO_THREAD UINT32_MAX

/* One event or one loss: 64 bytes, the unit every later stage works on. */
struct rt_item {
	uint64_t counter; /* raw clock */
	uint64_t seq;	  /* record sequence in its ring (losses: the first one concerned) */
	int32_t tid;	  /* 0: not any thread's (global losses) */
	uint32_t thread;  /* index in rt_reader.threads, RT_ITEM_NO_THREAD, or see NO_OWNER */
	uint32_t site;	  /* trace: site-table index */
	uint8_t kind;	  /* enum rt_item_kind */
	uint8_t flags;	  /* RT_ITEM_* */
	uint16_t cpu;	  /* trace: RT_CPU_UNKNOWN when not known */
	union {
		struct {
			uint32_t a32[4];
			uint64_t a64[2];
		} args;
		struct {
			uint64_t count;
			uint64_t last_counter; /* dropped: counter of the last one, else 0 */
			uint32_t reason;       /* enum rt_loss_reason */
			uint32_t note;	       /* enum rt_loss_note */
			uint32_t damage;       /* RT_ITEM_DAMAGE: the region */
			uint32_t reserved;
		} loss;
		/*
		 * RT_ITEM_LOG, RT_ITEM_IO: the record's payload (format.h: all its slots hold,
		 * RT_LOG_PAYLOAD_BYTES(nslots)), copied out of the ring or block
		 * into the reader's (or the trace set's) own store, where it
		 * lives as long as the reader (for a trace set's items: until
		 * the next rt_trace_set_next()).
		 */
		struct {
			const unsigned char *payload;
			uint32_t length;
			uint32_t nslots;
			uint64_t reserved[2];
		} log;
	};
};

_Static_assert(sizeof(struct rt_item) == 64, "an item is one cache line");

/*
 * An item cleared, 16 bytes at a time: GCC makes one memset of the 64 bytes
 * a rep stos where items are made, whose start-up costs more than the
 * bytes on every record read (a fifth of decoding a trace file's block).
 */
static inline void rt_item_clear(struct rt_item *it)
{
	char *clear = (char *)it;
	memset(clear, 0, 16);
	memset(clear + 16, 0, 16);
	memset(clear + 32, 0, 16);
	memset(clear + 48, 0, 16);
}

/*
 * Metadata lost (trace files: every copy of it was damaged).  The event is
 * shown with what its record says, and marked, never as if it were known:
 * RT_ITEM_NO_SITE: no site entry; site is the raw site id, and the
 *   arguments are the record's raw words (RT_ITEM_WIDE: it held two slots,
 *   six words; else one slot, two words);
 * RT_ITEM_NO_OWNER: no thread entry claims it; tid is 0, and thread is
 *   RT_ITEM_RING_ONLY | its ring (never below any thread count).
 * A source whose clock metadata is lost says so in rt_reader.raw_time.
 */
#define RT_ITEM_NO_SITE 0x10u
#define RT_ITEM_WIDE 0x20u
#define RT_ITEM_NO_OWNER 0x40u
#define RT_ITEM_RING_ONLY 0x80000000u

/*
 * The item a whole, checked record stands for: an event (RT_REC_TRACE), a
 * log message or an I/O call (RT_REC_LOG, RT_REC_IO: its payload is the
 * caller's to gather, see rt_item_set_payload) or the drops a LOST record reports.  second is the
 * continuation slot, zeroed for a one-slot record.  Fills what the slots say (kind, counter, cpu,
 * site, arguments or loss); seq, thread and tid are the caller's.  Arenas
 * and trace files decode their records through this one function.
 */
static inline void rt_item_from_record(struct rt_item *it, const struct rt_slot_head *first,
				       const struct rt_slot_cont *second)
{
	it->counter = first->counter;
	it->flags = RT_ITEM_TIMED;
	it->cpu = first->cpu;
	if (first->kind == RT_REC_TRACE) {
		it->kind = RT_ITEM_TRACE;
		it->site = first->site;
		it->args.a32[0] = first->a0;
		it->args.a32[1] = first->a1;
		it->args.a32[2] = second->a2;
		it->args.a32[3] = second->a3;
		it->args.a64[0] = second->a4;
		it->args.a64[1] = second->a5;
	} else if (first->kind == RT_REC_LOG || first->kind == RT_REC_IO) {
		it->kind = first->kind == RT_REC_LOG ? RT_ITEM_LOG : RT_ITEM_IO;
		it->site = first->site;
		it->log.payload = NULL;
		it->log.length = 0;
		it->log.nslots = first->nslots;
	} else {
		it->kind = RT_ITEM_LOSS;
		it->loss.reason = RT_LOSS_DROPPED;
		it->loss.note = first->a0 == RT_LOST_DROPPED  ? RT_NOTE_RING_FULL
				: first->a0 == RT_LOST_NESTED ? RT_NOTE_NESTED_SIGNAL
							      : RT_NOTE_UNKNOWN_LOST;
		it->loss.count = second->a4;
		it->loss.last_counter = second->a5;
	}
}

/*
 * The time-line order: by counter, then tid, then seq.  Within one thread
 * this is record order as long as its clock never goes backwards.
 */
static inline int rt_item_compare(const struct rt_item *a, const struct rt_item *b)
{
	if (a->counter != b->counter)
		return a->counter < b->counter ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

/* What happened to the records of a thread (or of the whole arena). */
struct rt_counts {
	uint64_t committed;   /* records the writer committed */
	uint64_t present;     /* events recovered */
	uint64_t overwritten; /* flight mode: wrapped over */
	uint64_t consumed;    /* stream mode: drained by a collector, not lost */
	uint64_t dropped;     /* never recorded */
	uint64_t torn;
	uint64_t damaged;
	uint64_t
	    damaged_noted; /* of damaged: told by the input (a cut's LOSS entries), not found */
};

/* The events lost in all, for "recovered N/M events (K lost)". */
static inline uint64_t rt_counts_lost(const struct rt_counts *c)
{
	return c->overwritten + c->dropped + c->torn + c->damaged;
}

struct rt_reader_thread {
	uint32_t entry; /* index in the arena's thread table */
	int32_t tid;
	uint32_t state;		/* enum rt_thread_state */
	uint32_t ring;		/* RT_NO_RING when it has none (or an invalid one) */
	uint32_t flags;		/* RT_THREAD_F_* of its entry */
	char name[RT_NAME_MAX]; /* NUL-terminated, may be empty */
	uint8_t name_length;	/* strlen(name), set with it by rt_reader_thread_name() */
	uint64_t first_record;
	uint64_t end_record;
	uint64_t start_counter;
	uint64_t exit_counter;
	uint64_t lost_no_ring; /* events dropped while it had no ring */
	/*
	 * Its records: events and ring-full losses, in record-sequence order,
	 * read through a cursor (read/arena_cursor.h); only their number is kept.
	 */
	size_t item_count;
	struct rt_counts counts;
	/* its newest event (from its ring or its thread entry); kind 0 if none */
	struct rt_item last;
};

/* Set t's name from a thread entry's (RT_NAME_MAX bytes, NUL-terminated or not), and its length. */
static inline void rt_reader_thread_name(struct rt_reader_thread *t, const char name[RT_NAME_MAX])
{
	memcpy(t->name, name, sizeof(t->name));
	t->name[sizeof(t->name) - 1] = 0;
	t->name_length = (uint8_t)strlen(t->name);
}

/*
 * Whether from_entry, a thread entry's copy of its last event (kept, as
 * the entry holds it), is newer than ring_last, its ring's newest event
 * (kind 0 if none).  The entry keeps events the ring could not.  A coarse
 * counter can stamp both alike: then the ring's record count kept with
 * the copy says (RT_LAST_F_RING_RECORDS); from a writer before it, an
 * ended thread's entry is taken when it holds another event than the
 * ring's last (the library keeps its last event there when it ends).
 */
static inline int rt_entry_last_is_newer(const struct rt_last_event *kept,
					 const struct rt_item *from_entry,
					 const struct rt_item *ring_last, int thread_ended)
{
	if (!ring_last->kind || from_entry->counter > ring_last->counter)
		return 1;
	if (from_entry->counter < ring_last->counter)
		return 0;
	if (kept->flags & RT_LAST_F_RING_RECORDS)
		return (int32_t)(kept->ring_records - (uint32_t)ring_last->seq) > 0;
	return thread_ended && ring_last->kind == RT_ITEM_TRACE &&
	       (from_entry->site != ring_last->site ||
		memcmp(&from_entry->args, &ring_last->args, sizeof(ring_last->args)) != 0);
}

/* The writing process, as far as the reader can tell. */
enum rt_writer_status {
	RT_WRITER_RUNNING = 1,	/* header RUNNING and the same process still exists */
	RT_WRITER_CLOSED = 2,	/* the program closed the arena */
	RT_WRITER_CRASHED = 3,	/* header RUNNING but the process is gone */
	RT_WRITER_REPLACED = 4, /* header RUNNING, end_reason EXEC: the image was replaced */
};

struct rt_reader {
	const char *path;	   /* or the name given to rt_reader_open_memory() */
	const unsigned char *file; /* the arena's bytes: the read-only mapping, or the caller's */
	uint64_t size;
	/* copied once, then checked; damaged fields repaired (damage says which) */
	struct rt_arena_header header;
	enum rt_writer_status writer;
	struct rt_timebase timebase;
	struct rt_site_table sites;
	/* the module map: every entry that checks, in table order (read/modules.h) */
	struct rt_reader_modules modules;
	/*
	 * The descriptors named when it was read (decode/fd_seeds.h): an arena's
	 * descriptor table, or a trace file's newest FDS block of the source.
	 * Empty for a process traced without --io.
	 */
	struct rt_fd_seeds fds;
	struct rt_reader_thread *threads; /* LIVE and EXITED entries, in table order */
	uint32_t thread_count;
	struct rt_item *losses; /* losses not inside a thread's items, sorted */
	size_t loss_count;
	struct rt_counts totals;
	uint64_t ring_dropped; /* the rings' own dropped counters, summed */
	uint64_t ring_waits;   /* the rings' waits for a collector (stream mode), summed */
	uint32_t rings_decoded;
	/*
	 * Every damaged region found, in the order found (read/damage.h).  The
	 * losses that name one (RT_ITEM_DAMAGE) say what it cost.
	 */
	struct rt_damage_list damage;
	/* no clock metadata (a trace file that lost every SOURCE copy): counters are raw */
	int raw_time;
	/* some valid site is a log or I/O site: rings may hold RT_REC_LOG/RT_REC_IO records */
	int long_records;
	/* the most slots a record of the loaded sites takes (rt_site_table_max_slots) */
	unsigned max_slots;
	/*
	 * What the check pass counted of the threads' items, so that a trace
	 * set counts an arena without reading it again: events per site index
	 * (sites.count entries; NULL for a reader without rings), LOST records,
	 * and the first and last event's counters.
	 */
	uint64_t *site_events;
	uint64_t lost_records;
	uint64_t first_event_counter, last_event_counter;
	int have_events;
	/* private */
	struct rt_reader_payloads *payloads; /* the last events' payload bytes */
	/* where each thread's items lie in its ring (read/arena_walk.h) */
	struct rt_reader_walks {
		struct rt_reader_ring_walk *sources;
		size_t source_count, source_capacity;
		struct rt_thread_walk *threads; /* thread_count entries */
	} walks;
	size_t loss_capacity;
	long *site_region;	   /* per site: its entry's damaged region, or -1 */
	uint32_t rings_recorded;   /* ring_count before a truncated file cut it */
	uint64_t orphans;	   /* records decoded that no thread entry claims */
	int owns_mapping;	   /* file is the reader's own mapping of path: close unmaps it */
	int fd;			   /* path, open while the mapping is (owns_mapping), else -1 */
	struct rt_file_data *data; /* where the file holds data: only that is read */
	uint64_t shrunk_from;	   /* 1 + where the file stopped (rt_reader_shrunk), or 0 */
	size_t shrunk_region;	   /* the damaged region that says so, when shrunk_from */
};

/* A failed open: message, and the file offset when there is one. */
struct rt_read_error {
	int has_offset;
	uint64_t offset;
	char message[256];
};

/*
 * Open and decode the arena at path.  Returns 0 and *out, or:
 *   -errno (from open/fstat/mmap, or -ENOMEM), with error->message
 *   -EINVAL / -EPROTONOSUPPORT for a file that is not a readable arena,
 *    with error->offset;
 *   -ENODATA when the file shrank while it was read, so much that it was
 *    no arena any more (error->offset: where it stopped; rt_reader_shrunk).
 * A damaged arena that still reads returns 0, its damage in (*out)->damage.
 * The reader keeps a pointer to path: it must outlive the reader.
 */
int rt_reader_open(const char *path, struct rt_reader **out, struct rt_read_error *error);
/*
 * Decode the arena in size bytes at data, as rt_reader_open() does a
 * file's (which it does through this function); name stands for the path
 * in what the reader reports.  data must be 8-byte aligned (as malloc and
 * mmap return it), and it and name must outlive the reader, which points
 * into both.  The bytes may change underneath (a live arena mapped by the
 * caller).  Returns 0 and *out, or -ENOMEM, -EINVAL or -EPROTONOSUPPORT as
 * rt_reader_open() does.
 */
int rt_reader_open_memory(const void *data, size_t size, const char *name, struct rt_reader **out,
			  struct rt_read_error *error);
/* Free everything; NULL is allowed. */
void rt_reader_close(struct rt_reader *reader);

/*
 * Room for n payload bytes that lives as long as the reader (never moves:
 * items point into it), or NULL when memory ran out.
 */
unsigned char *rt_reader_payload_room(struct rt_reader *reader, size_t n);

/*
 * Whether the arena was damaged: a region that did not parse, or records
 * lost to damage.  `ringtrace` then exits with status 3 (docs/man).
 */
static inline int rt_reader_damaged(const struct rt_reader *rd)
{
	return rd->damage.count > 0 || rd->totals.damaged > 0;
}

/*
 * Whether the file under the reader's own mapping shrank while it was read
 * (another process truncated or emptied it): its bytes from *offset on
 * read as zeros (read/map_guard.h), and are a damaged region of the reader
 * (RT_DAMAGE_MISSING, added the first time it is seen, moved down when the
 * file shrank further).  1, 0 when it did not, -ENOMEM.  rt_reader_open()
 * asks once its reading is done; a caller that reads the mapping later
 * (tail, info) asks again.
 */
int rt_reader_shrunk(struct rt_reader *reader, uint64_t *offset);

/*
 * Following a live arena (`ringtrace tail`): its tables are read once, and
 * again when they grew; its rings are read window by window as the writer
 * publishes records, never written.
 *
 * rt_reader_open_live_fd() maps the file open at fd as rt_reader_open()
 * maps a file, names it path in messages, and reads its tables (header,
 * threads, sites, modules, clock) but no ring: the reader has no items and
 * no losses.  The reader takes fd (closed when it fails), so it reads the
 * file opened even if its name is removed or reused meanwhile.
 * rt_reader_reload() reads the tables of such a reader again, in place
 * (what pointed into the old tables, such as items' thread indices, must
 * be taken again).  The module list stays where it was when it did not
 * change: reload returns 0 then, 1 when it changed (pointers to its
 * entries are gone), or -errno.
 */
int rt_reader_open_live_fd(int fd, const char *path, struct rt_reader **out,
			   struct rt_read_error *error);
/* The same of the bytes at data, as rt_reader_open_memory() takes them. */
int rt_reader_open_live_memory(const void *data, size_t size, const char *name,
			       struct rt_reader **out, struct rt_read_error *error);
int rt_reader_reload(struct rt_reader *reader, struct rt_read_error *error);

/* Where a follower stands in one ring. */
struct rt_ring_cursor {
	uint64_t slot;	  /* the next window starts at this slot seq */
	uint64_t record;  /* the next record seq expected, when record_known */
	int record_known; /* 0 until a record or the ring's counters said it */
};

/* The items of one poll: grown as needed, the caller's to free. */
struct rt_item_batch {
	struct rt_item *items;
	size_t count;
	size_t capacity;
	/* records of a site or thread the tables did not hold: reload and read again */
	int stale;
};

/*
 * Where a follower that starts now stands in `ring`: its head, and the
 * next record's seq.  1 done; 0 when the writer was always mid-record, and
 * the cursor is at the ring's start (read the window to find the place).
 */
int rt_reader_ring_start(const struct rt_reader *reader, uint32_t ring,
			 struct rt_ring_cursor *cursor);
/*
 * The first ring at or past `ring` whose descriptor the file holds data
 * for, or ring_count: a descriptor in a hole is a ring never claimed, and
 * walking the rings this way costs what the file holds, not its size.
 */
uint32_t rt_reader_next_ring(const struct rt_reader *reader, uint32_t ring);
/*
 * Ring's descriptor (ring below ring_count): in the file where the file
 * holds all of it, else in *copy, its bytes in holes zeros and not read.
 */
const struct rt_ring_desc *rt_reader_ring_desc(const struct rt_reader *reader, uint32_t ring,
					       struct rt_ring_desc *copy);
/* The ring's head now (acquire): rt_reader_follow_ring reads up to it. */
uint64_t rt_reader_ring_head(const struct rt_reader *reader, uint32_t ring);
/*
 * Append to batch the records of `ring` published in slots [cursor->slot,
 * head), checked and decoded as rt_reader_open() decodes them, each given
 * to its thread, and advance the cursor.  Records the writer overwrote
 * before they were read (flight mode, or a collector consumed them and
 * the writer wrapped) are one loss item per gap, reason overwritten, note
 * RT_NOTE_MISSED, with their count, placed right before the record after
 * the gap.  Log payloads live in the reader until
 * rt_reader_forget_payloads().  0 or -ENOMEM.
 */
int rt_reader_follow_ring(struct rt_reader *reader, uint32_t ring, uint64_t head,
			  struct rt_ring_cursor *cursor, struct rt_item_batch *batch);
/* Free the payloads of the items decoded so far: no item may point into them any more. */
void rt_reader_forget_payloads(struct rt_reader *reader);

/* Whether process pid exists and was started at start (/proc/PID/stat). */
int rt_process_alive(int32_t pid, uint64_t start);

/* "overwritten", "dropped", "torn", "damaged" */
const char *rt_loss_reason_name(uint32_t reason);
/* A few words for the note, or NULL when there is none. */
const char *rt_loss_note_text(uint32_t note);

/*
 * The losses that no ring holds, counted by the writer outside them: every
 * thread's lost_no_ring (rd->threads), and the header's lost_untracked,
 * lost_no_site and lost_replaced (rd->header).  Appended to rd->losses
 * as dropped losses, one per thread and cause; counts are the caller's to
 * make.  The one place these counters become losses: the arena reader
 * uses it, and so does the trace set for a trace file's newest copies of
 * the header and the thread entries.  0, or -ENOMEM.
 */
int rt_reader_add_counted_losses(struct rt_reader *rd);
/* The events the header counts lost outside the rings (the part above that is not a thread's). */
uint64_t rt_header_counted_lost(const struct rt_arena_header *h);
/* "running", "closed", "crashed", "replaced" */
const char *rt_writer_status_name(enum rt_writer_status status);
/*
 * The writer of a checked header: CLOSED, REPLACED, else RUNNING when
 * look_at_process and its process runs (rt_process_alive), else CRASHED.
 * look_at_process is 0 for a header copied into a trace file.
 */
enum rt_writer_status rt_writer_status_of(const struct rt_arena_header *h, int look_at_process);

#endif /* RT_READ_ARENA_READER_H */
