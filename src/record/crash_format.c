/*
 * crash_format.c - the crash dump: the arena's last events, printed from
 * inside a signal handler exactly as `ringtrace dump` prints them.
 *
 *   ringtrace: caught SIGSEGV (address 0x0) in thread 3702 worker: last 50 events
 *   [   7.718998976][cpu 2 tid 3702 worker] : 00000002 ... : (       0.308 uSec) : app.c:f:12 (tag)
 *   ...
 *
 *   Last recorded per-thread events
 *   [   7.718998976][cpu 2 tid 3702 worker] : 00000002 ... : (       0.000 uSec) : app.c:f:12 (tag)
 *
 *   Last timestamp [   7.718998976]
 *   ringtrace: the whole trace: ringtrace dump /dev/shm/ringtrace-app.3690.arena
 *
 * The lines are those of `ringtrace dump --tail N` (src/present/text.c):
 * the tests compare the two byte for byte.
 *
 * Async-signal-safe by construction: no stdio, no malloc, no locks; all
 * state is static (one dump at a time: crash.c serialises); output goes out
 * with write(2).  Nothing is taken from the program's memory: tags, files
 * and functions come from the arena's site table and string area, thread
 * names from its thread table, so a damaged heap does not change the dump.
 * Every count read from the arena is clamped twice, to the header's
 * capacity and to what the mapping (rt_arena, filled at creation, outside
 * the arena) can hold, so a header the crash overwrote cannot send a read
 * outside the mapping; every loop is bounded.
 *
 * Other threads may still be writing while we read.  Each ring is read as
 * docs/FORMAT.md's live reader does, but backwards from its head: a record
 * is taken only if every slot carries the seq of its position and the
 * right kind, its site is registered with the matching argument count, its
 * record number decreases, and after copying it `reserve` shows that it was
 * not overwritten meanwhile.  The newest events over all rings are kept in
 * a bounded min-heap, ordered as the tool's merge orders them (counter,
 * tid, record seq).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "decode/clock.h"
#include "decode/sites.h"
#include "record/record.h"

/* Slots a ring walk may look at per event wanted, beyond a fixed allowance. */
#define WALK_SLOTS_PER_EVENT 4u
#define WALK_SLOTS_EXTRA 256u
/* Slots looked at to find one thread's newest event in its ring. */
#define LAST_WALK_SLOTS 4096u
/* Thread-table entries read in all to tell which thread wrote a record. */
#define OWNER_READS_MAX (1u << 25)
/* 4 arguments of 8 hex digits, 2 of 16, a space between each (text.c). */
#define ARGS_WIDTH (4 * 8 + 2 * 16 + 5)
/* Give up on an output that has not taken a byte for this long. */
#define WRITE_TIMEOUT_MS 2000

/* ---- output: a static buffer, written out with write(2) --------------- */

static struct {
	int fd;
	int broken; /* a write failed or timed out: print nothing more */
	size_t used;
	char buf[4096];
} out;

static void out_flush(void)
{
	size_t done = 0;
	for (unsigned tries = 0; done < out.used && !out.broken && tries < 1000; tries++) {
		/* a pipe nobody reads must not hang the dying process */
		struct pollfd p = {.fd = out.fd, .events = POLLOUT};
		int ready = poll(&p, 1, WRITE_TIMEOUT_MS);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0) {
			out.broken = 1;
			break;
		}
		ssize_t n = write(out.fd, out.buf + done, out.used - done);
		if (n > 0)
			done += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else
			out.broken = 1;
	}
	out.used = 0;
}

static void out_bytes(const char *s, size_t n)
{
	while (n && !out.broken) {
		if (out.used == sizeof(out.buf))
			out_flush();
		size_t room = sizeof(out.buf) - out.used;
		size_t k = n < room ? n : room;
		memcpy(out.buf + out.used, s, k);
		out.used += k;
		s += k;
		n -= k;
	}
}

static void out_str(const char *s)
{
	out_bytes(s, strlen(s));
}

static void out_char(char c)
{
	out_bytes(&c, 1);
}

/* Bytes as they can go on a terminal line: control bytes as \xNN (text.c). */
static void out_printable(const char *s, size_t n)
{
	static const char hex[16] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x20 || c == 0x7f) {
			char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 0xf]};
			out_bytes(e, sizeof(e));
		} else {
			out_char((char)c);
		}
	}
}

/* ---- number formatting into a small buffer ---------------------------- */

static char *fmt_u64(char *p, uint64_t v)
{
	char digits[20];
	unsigned n = 0;
	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = digits[--n];
	return p;
}

static char *fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return fmt_u64(p, 0 - (uint64_t)v);
	}
	return fmt_u64(p, (uint64_t)v);
}

static char *fmt_zero(char *p, uint64_t v, unsigned digits)
{
	for (unsigned i = digits; i > 0; i--) {
		p[i - 1] = (char)('0' + v % 10);
		v /= 10;
	}
	return p + digits;
}

static char *fmt_hex(char *p, uint64_t v, unsigned digits)
{
	static const char hex[16] = "0123456789abcdef";
	for (unsigned i = digits; i > 0; i--) {
		p[i - 1] = hex[v & 0xf];
		v >>= 4;
	}
	return p + digits;
}

/* "   7.718998976": seconds right-aligned to 4 columns (rt_text_format_timestamp). */
static char *fmt_timestamp(char *p, int64_t ns)
{
	uint64_t magnitude = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	char digits[24];
	unsigned len = (unsigned)(fmt_u64(digits, magnitude / 1000000000u) - digits);
	for (unsigned i = len + (ns < 0); i < 4; i++)
		*p++ = ' ';
	if (ns < 0)
		*p++ = '-';
	memcpy(p, digits, len);
	p += len;
	*p++ = '.';
	return fmt_zero(p, magnitude % 1000000000u, 9);
}

/* "       0.308": microseconds with 3 decimals, right-aligned to 12 (text.c). */
static char *fmt_delta(char *p, int64_t ns)
{
	uint64_t magnitude = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	char digits[24];
	unsigned len = (unsigned)(fmt_u64(digits, magnitude / 1000) - digits);
	for (unsigned i = len + 4 + (ns < 0); i < 12; i++)
		*p++ = ' ';
	if (ns < 0)
		*p++ = '-';
	memcpy(p, digits, len);
	p += len;
	*p++ = '.';
	return fmt_zero(p, magnitude % 1000, 3);
}

/* ---- the arena, bounded --------------------------------------------------- */

/* What may be read: the header's counts clamped by the mapping's own geometry. */
static struct {
	const struct rt_arena_header *h;
	const struct rt_thread_entry *threads;
	const struct rt_site_entry *sites;
	const char *strings;
	const struct rt_ring_desc *rings;
	uint32_t thread_count;
	uint32_t site_count;
	uint64_t string_bytes;
	uint32_t ring_count;
	uint64_t ring_slots;
	struct rt_timebase tb;
	uint64_t owner_reads; /* thread-table entries read by find_owner */
} arena;

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Bytes between two places of the mapping (0 if they are out of order). */
static uint64_t span(const void *from, const void *to)
{
	return (const char *)to > (const char *)from
		   ? (uint64_t)((const char *)to - (const char *)from)
		   : 0;
}

static void arena_bounds(void)
{
	const struct rt_arena_header *h = rt_arena.header;
	const uint8_t *end = rt_arena.base + rt_arena.size;
	memset(&arena, 0, sizeof(arena));
	arena.h = h;
	arena.threads = rt_arena.threads;
	arena.sites = rt_arena.sites;
	arena.strings = rt_arena.strings;
	arena.rings = rt_arena.rings;
	arena.ring_slots = rt_arena.ring_slots;
	arena.thread_count = (uint32_t)min_u64(
	    min_u64(__atomic_load_n(&h->threads_used, __ATOMIC_ACQUIRE), h->thread_capacity),
	    span(rt_arena.threads, rt_arena.sites) / sizeof(struct rt_thread_entry));
	arena.site_count = (uint32_t)min_u64(
	    min_u64(__atomic_load_n(&h->sites_used, __ATOMIC_ACQUIRE), h->site_capacity),
	    span(rt_arena.sites, rt_arena.strings) / sizeof(struct rt_site_entry));
	arena.string_bytes = min_u64(
	    min_u64(__atomic_load_n(&h->strings_used, __ATOMIC_ACQUIRE), h->string_capacity),
	    span(rt_arena.strings, rt_arena.rings));
	uint64_t ring_bytes = arena.ring_slots * RT_SLOT_SIZE;
	uint64_t rings = min_u64(__atomic_load_n(&h->rings_used, __ATOMIC_ACQUIRE), h->ring_count);
	rings =
	    min_u64(rings, span(rt_arena.rings, rt_arena.ring_area) / sizeof(struct rt_ring_desc));
	if (ring_bytes)
		rings = min_u64(rings, span(rt_arena.ring_area, end) / ring_bytes);
	arena.ring_count = (uint32_t)rings;

	/* the tool's conversion (decode/clock.c), from the same pairs it will read */
	struct rt_clock_pair start = h->start, sync;
	int have_sync = rt_timebase_read_sync(&h->sync, &sync);
	if (rt_timebase_init(&arena.tb, h->clock_source, h->counter_hz, &start,
			     have_sync ? &sync : NULL) != 0) {
		/* no frequency at all (a damaged header): show raw ticks */
		memset(&arena.tb, 0, sizeof(arena.tb));
		arena.tb.start_counter = start.counter;
		arena.tb.mult = 1;
	}
}

static int thread_live(const struct rt_thread_entry *e)
{
	uint32_t state = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
	return state == RT_THREAD_LIVE || state == RT_THREAD_EXITED;
}

/* A site with its strings checked, as decode/sites.c checks them. */
struct site {
	uint32_t line;
	uint8_t nargs;
	const char *tag, *file, *func;
	uint32_t tag_length, file_length, func_length;
};

static int take_string(uint32_t offset, uint32_t length, const char **s)
{
	uint64_t end = (uint64_t)offset + length + 1;
	if (length > RT_SITE_STRING_MAX || end > arena.string_bytes)
		return -1;
	*s = arena.strings + offset;
	return (*s)[length] == 0 ? 0 : -1;
}

static int site_at(uint32_t index, struct site *out_site)
{
	if (index >= arena.site_count)
		return -1;
	const struct rt_site_entry *live = &arena.sites[index];
	if (!__atomic_load_n(&live->valid, __ATOMIC_ACQUIRE))
		return -1;
	struct rt_site_entry e;
	memcpy(&e, live, sizeof(e));
	if (!rt_site_kind_known(e.kind) || e.nargs > RT_MAX_ARGS ||
	    take_string(e.tag_offset, e.tag_length, &out_site->tag) ||
	    take_string(e.file_offset, e.file_length, &out_site->file) ||
	    take_string(e.func_offset, e.func_length, &out_site->func))
		return -1;
	out_site->tag_length = e.tag_length;
	out_site->file_length = e.file_length;
	out_site->func_length = e.func_length;
	out_site->line = e.line;
	out_site->nargs = e.nargs;
	return 0;
}

/* ---- events -------------------------------------------------------------- */

struct event {
	uint64_t counter;
	uint64_t seq; /* record seq in its ring */
	int32_t tid;
	uint32_t thread; /* thread-table index */
	uint32_t site;
	uint16_t cpu;
	uint32_t a32[4];
	uint64_t a64[2];
};

/* The tool's time-line order (rt_item_compare): counter, tid, seq. */
static int older(const struct event *a, const struct event *b)
{
	if (a->counter != b->counter)
		return a->counter < b->counter;
	if (a->tid != b->tid)
		return a->tid < b->tid;
	return a->seq < b->seq;
}

/* The newest `wanted` events seen so far: a min-heap, the oldest at the root. */
static struct {
	struct event items[RT_CRASH_EVENTS_MAX];
	uint32_t count;
	uint32_t wanted;
} kept;

static void swap_events(struct event *a, struct event *b)
{
	struct event t = *a;
	*a = *b;
	*b = t;
}

static void sift_down(uint32_t i, uint32_t n)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && older(&kept.items[l], &kept.items[m]))
			m = l;
		if (r < n && older(&kept.items[r], &kept.items[m]))
			m = r;
		if (m == i)
			return;
		swap_events(&kept.items[i], &kept.items[m]);
		i = m;
	}
}

static void keep_event(const struct event *ev)
{
	if (kept.count < kept.wanted) {
		uint32_t i = kept.count++;
		kept.items[i] = *ev;
		while (i > 0) {
			uint32_t parent = (i - 1) / 2;
			if (!older(&kept.items[i], &kept.items[parent]))
				break;
			swap_events(&kept.items[i], &kept.items[parent]);
			i = parent;
		}
	} else if (kept.count > 0 && older(&kept.items[0], ev)) {
		kept.items[0] = *ev;
		sift_down(0, kept.count);
	}
}

/* Heap sort: afterwards items[0] is the newest and items[count - 1] the oldest. */
static void sort_kept(void)
{
	for (uint32_t n = kept.count; n > 1; n--) {
		swap_events(&kept.items[0], &kept.items[n - 1]);
		sift_down(0, n - 1);
	}
}

/* ---- rings ----------------------------------------------------------- */

/* Which thread wrote record `seq` of ring `ring`: [first, end) of its entry. */
struct owner {
	int valid;
	uint32_t thread;
	int32_t tid;
	uint64_t first, end;
};

enum owner_found {
	OWNER_NONE_BELOW = -1, /* no thread owns this record or any older one */
	OWNER_GAP = 0,	       /* nobody owns this one; an older one may be owned */
	OWNER_FOUND = 1,
};

/*
 * The owner is the entry pointing at the ring whose first record is the
 * highest at or below seq; its range ends at its end_record or where the
 * next owner's begins, whichever is first (as the tool splits a ring).
 */
static enum owner_found find_owner(uint32_t ring, uint64_t seq, struct owner *cache)
{
	if (cache->valid && seq >= cache->first)
		return seq < cache->end ? OWNER_FOUND : OWNER_GAP;
	if (arena.owner_reads + arena.thread_count > OWNER_READS_MAX)
		return OWNER_NONE_BELOW; /* out of budget: treated as the end of the ring */
	arena.owner_reads += arena.thread_count;
	struct owner best = {0};
	uint64_t next_first = UINT64_MAX;
	for (uint32_t i = 0; i < arena.thread_count; i++) {
		const struct rt_thread_entry *e = &arena.threads[i];
		if (!thread_live(e) || __atomic_load_n(&e->ring, __ATOMIC_ACQUIRE) != ring)
			continue;
		uint64_t first = e->first_record;
		if (first > seq) {
			next_first = min_u64(next_first, first);
		} else if (!best.valid || first > best.first) {
			uint64_t end = e->end_record;
			best.valid = 1;
			best.thread = i;
			best.tid = e->tid;
			best.first = first;
			best.end = end < first ? first : end;
		}
	}
	if (!best.valid)
		return OWNER_NONE_BELOW;
	best.end = min_u64(best.end, next_first);
	*cache = best;
	return seq < best.end ? OWNER_FOUND : OWNER_GAP;
}

/* One record of a ring, copied out and checked. */
struct record {
	uint64_t start; /* slot seq of its first slot */
	unsigned nslots;
	struct rt_slot_head head;
	struct rt_slot_cont cont;
};

/*
 * The record that ends at slot seq `end` (exclusive), if one does: returns
 * 1 and fills *rec, or 0 if the slot below end is not the last slot of a
 * well-formed record (the caller then steps one slot down).
 */
static int record_ending_at(const union rt_slot *slots, uint64_t low, uint64_t end,
			    struct record *rec)
{
	const uint64_t mask = arena.ring_slots - 1;
	struct rt_slot_head last;
	memcpy(&last, &slots[(end - 1) & mask], sizeof(last));
	if (last.seq != (uint32_t)(end - 1))
		return 0;
	memset(rec, 0, sizeof(*rec));
	if (last.kind == RT_REC_CONT) {
		if (end - 1 <= low)
			return 0;
		memcpy(&rec->cont, &last, sizeof(rec->cont));
		memcpy(&rec->head, &slots[(end - 2) & mask], sizeof(rec->head));
		if (rec->cont.index != 1 || rec->head.seq != (uint32_t)(end - 2) ||
		    rec->head.nslots != 2)
			return 0;
		rec->nslots = 2;
	} else {
		memcpy(&rec->head, &last, sizeof(rec->head));
		if (rec->head.nslots != 1)
			return 0;
		rec->nslots = 1;
	}
	rec->start = end - rec->nslots;
	if (rec->head.kind == RT_REC_TRACE) {
		struct site site;
		return site_at(rec->head.site, &site) == 0 &&
		       RT_TRACE_SLOTS(site.nargs) == rec->nslots;
	}
	/* a lost note always has its count in a continuation */
	return rec->head.kind == RT_REC_LOST && rec->nslots == 2;
}

static void event_of(const struct record *rec, uint64_t seq, const struct owner *o,
		     struct event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->counter = rec->head.counter;
	ev->seq = seq;
	ev->tid = o->tid;
	ev->thread = o->thread;
	ev->site = rec->head.site;
	ev->cpu = rec->head.cpu;
	ev->a32[0] = rec->head.a0;
	ev->a32[1] = rec->head.a1;
	if (rec->nslots == 2) {
		ev->a32[2] = rec->cont.a2;
		ev->a32[3] = rec->cont.a3;
		ev->a64[0] = rec->cont.a4;
		ev->a64[1] = rec->cont.a5;
	}
}

/*
 * Walk ring `ring` down from its head, giving each event found to `take`
 * until it returns 0, at most `max_slots` slots looked at.  only_thread, if
 * not UINT32_MAX, skips events of other threads.
 */
static void walk_ring(uint32_t ring, uint64_t max_slots, uint32_t only_thread,
		      int (*take)(const struct event *ev))
{
	const struct rt_ring_desc *d = &arena.rings[ring];
	uint32_t state = __atomic_load_n(&d->state, __ATOMIC_ACQUIRE);
	if ((state != RT_RING_OWNED && state != RT_RING_RELEASED) || arena.ring_slots == 0)
		return;
	const union rt_slot *slots =
	    (const union rt_slot *)(rt_arena.ring_area +
				    (uint64_t)ring * arena.ring_slots * RT_SLOT_SIZE);
	/* the head first: everything below it is published (FORMAT.md, "Reading") */
	uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
	uint64_t reserve = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
	uint64_t records = __atomic_load_n(&d->records, __ATOMIC_RELAXED);
	if (records == 0)
		return;
	uint64_t top = reserve > head ? reserve : head;
	uint64_t low = top > arena.ring_slots ? top - arena.ring_slots : 0;
	const uint64_t newest = records - 1;
	uint64_t previous_seq = UINT64_MAX;
	struct owner owner = {0};
	uint64_t end = head;
	for (uint64_t looked = 0; end > low && looked < max_slots; looked++) {
		struct record rec;
		if (!record_ending_at(slots, low, end, &rec)) {
			end--;
			continue;
		}
		/* the copy is complete before reserve is read again */
		RT_FENCE_ACQUIRE();
		uint64_t now = __atomic_load_n(&d->reserve, __ATOMIC_RELAXED);
		if (now > arena.ring_slots && rec.start < now - arena.ring_slots)
			return; /* overwritten while we read: so is everything below */
		/* the 64-bit record seq, from its low 32 bits, checked as the reader does */
		uint64_t back = (uint32_t)((uint32_t)newest - rec.head.record);
		uint64_t slots_after = head - end;
		if (back > newest || back < (slots_after + 1) / 2 ||
		    newest - back >= previous_seq) {
			end--;
			continue;
		}
		uint64_t seq = newest - back;
		previous_seq = seq;
		end = rec.start;
		if (rec.head.kind != RT_REC_TRACE)
			continue;
		enum owner_found found = find_owner(ring, seq, &owner);
		if (found == OWNER_NONE_BELOW)
			return;
		if (found == OWNER_GAP)
			continue;
		if (only_thread != UINT32_MAX && owner.thread != only_thread)
			continue;
		struct event ev;
		event_of(&rec, seq, &owner, &ev);
		if (!take(&ev))
			return;
	}
}

static uint32_t ring_events; /* events taken from the ring being walked */

static int take_for_heap(const struct event *ev)
{
	keep_event(ev);
	return ++ring_events < kept.wanted;
}

static struct event newest_of_thread;
static int have_newest_of_thread;

static int take_newest(const struct event *ev)
{
	newest_of_thread = *ev;
	have_newest_of_thread = 1;
	return 0;
}

/* ---- printing -------------------------------------------------------------- */

static void print_thread_label(uint32_t thread)
{
	char buf[48];
	char *p = fmt_i64(buf, arena.threads[thread].tid);
	out_str("tid ");
	out_bytes(buf, (size_t)(p - buf));
	char name[RT_NAME_MAX];
	memcpy(name, arena.threads[thread].name, sizeof(name));
	name[sizeof(name) - 1] = 0;
	size_t n = strnlen(name, sizeof(name));
	if (n) {
		out_char(' ');
		out_printable(name, n);
	}
}

static void print_event(const struct event *ev, int64_t delta_ns)
{
	struct site site;
	if (site_at(ev->site, &site) != 0)
		return; /* checked when the event was taken: only damage since */
	char buf[160];
	char *p = buf;
	*p++ = '[';
	p = fmt_timestamp(p, rt_timebase_ns(&arena.tb, ev->counter));
	memcpy(p, "][cpu ", 6);
	p += 6;
	if (ev->cpu == RT_CPU_UNKNOWN)
		*p++ = '?';
	else
		p = fmt_u64(p, ev->cpu);
	*p++ = ' ';
	out_bytes(buf, (size_t)(p - buf));
	print_thread_label(ev->thread);
	p = buf;
	memcpy(p, "] : ", 4);
	p += 4;
	char *args = p;
	for (unsigned i = 0; i < site.nargs; i++) {
		if (i)
			*p++ = ' ';
		p = i < 4 ? fmt_hex(p, ev->a32[i], 8) : fmt_hex(p, ev->a64[i - 4], 16);
	}
	while (p < args + ARGS_WIDTH)
		*p++ = ' ';
	memcpy(p, " : (", 4);
	p += 4;
	p = fmt_delta(p, delta_ns);
	memcpy(p, " uSec) : ", 9);
	p += 9;
	out_bytes(buf, (size_t)(p - buf));

	/* file name without its directories, as decode/sites.c shortens it */
	uint32_t base = 0;
	for (uint32_t i = 0; i < site.file_length; i++)
		if (site.file[i] == '/' && i + 1 < site.file_length)
			base = i + 1;
	out_printable(site.file + base, site.file_length - base);
	out_char(':');
	out_printable(site.func, site.func_length);
	out_char(':');
	p = fmt_u64(buf, site.line);
	out_bytes(buf, (size_t)(p - buf));
	out_str(" (");
	out_printable(site.tag, site.tag_length);
	out_str(")\n");
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV";
	case SIGBUS:
		return "SIGBUS";
	case SIGILL:
		return "SIGILL";
	case SIGFPE:
		return "SIGFPE";
	case SIGABRT:
		return "SIGABRT";
	default:
		return NULL;
	}
}

static void print_heading(const struct rt_crash_info *info, uint32_t count)
{
	char buf[64];
	char *p;
	out_str("ringtrace: caught ");
	const char *name = signal_name(info->signal);
	if (name) {
		out_str(name);
	} else {
		out_str("signal ");
		p = fmt_i64(buf, info->signal);
		out_bytes(buf, (size_t)(p - buf));
	}
	if (info->has_address) {
		out_str(" (address 0x");
		uint64_t a = info->address;
		unsigned digits = 1;
		while (digits < 16 && (a >> (4 * digits)))
			digits++;
		p = fmt_hex(buf, a, digits);
		out_bytes(buf, (size_t)(p - buf));
		out_char(')');
	}
	out_str(" in thread ");
	p = fmt_i64(buf, info->tid);
	out_bytes(buf, (size_t)(p - buf));
	if (info->thread < arena.thread_count && thread_live(&arena.threads[info->thread])) {
		char tname[RT_NAME_MAX];
		memcpy(tname, arena.threads[info->thread].name, sizeof(tname));
		tname[sizeof(tname) - 1] = 0;
		size_t n = strnlen(tname, sizeof(tname));
		if (n) {
			out_char(' ');
			out_printable(tname, n);
		}
	}
	out_str(": last ");
	p = fmt_u64(buf, count);
	out_bytes(buf, (size_t)(p - buf));
	out_str(count == 1 ? " event\n" : " events\n");
}

/* The thread's copy of its last event (rt_thread_keep_last), if complete. */
static int entry_last_event(uint32_t thread, struct event *ev, struct rt_last_event *copy)
{
	const struct rt_thread_entry *e = &arena.threads[thread];
	struct rt_last_event last;
	struct site site;
	if (!rt_last_event_read(e, &last) || last.kind != RT_REC_TRACE ||
	    site_at(last.site, &site) != 0)
		return 0;
	*copy = last;
	memset(ev, 0, sizeof(*ev));
	ev->counter = last.counter;
	ev->tid = e->tid;
	ev->thread = thread;
	ev->site = last.site;
	ev->cpu = last.cpu;
	memcpy(ev->a32, last.a32, sizeof(ev->a32));
	memcpy(ev->a64, last.a64, sizeof(ev->a64));
	return 1;
}

/* "Last recorded per-thread events": each thread's newest, from its ring or its entry. */
static void print_last_events(void)
{
	int64_t last_ns = 0;
	int have_last = 0;
	out_str("\nLast recorded per-thread events\n");
	for (uint32_t i = 0; i < arena.thread_count && !out.broken; i++) {
		const struct rt_thread_entry *e = &arena.threads[i];
		if (!thread_live(e))
			continue;
		have_newest_of_thread = 0;
		uint32_t ring = __atomic_load_n(&e->ring, __ATOMIC_ACQUIRE);
		if (ring < arena.ring_count)
			walk_ring(ring, LAST_WALK_SLOTS, i, take_newest);
		struct event from_entry;
		struct rt_last_event copy;
		/*
		 * The entry keeps events the ring could not: take it only if
		 * newer (at the same stamp, as the ring's record count kept with
		 * it says: ringtrace/format.h).
		 */
		if (entry_last_event(i, &from_entry, &copy) &&
		    (!have_newest_of_thread || from_entry.counter > newest_of_thread.counter ||
		     (from_entry.counter == newest_of_thread.counter &&
		      (copy.flags & RT_LAST_F_RING_RECORDS) &&
		      (int32_t)(copy.ring_records - (uint32_t)newest_of_thread.seq) > 0))) {
			newest_of_thread = from_entry;
			have_newest_of_thread = 1;
		}
		if (!have_newest_of_thread)
			continue;
		print_event(&newest_of_thread, 0);
		int64_t ns = rt_timebase_ns(&arena.tb, newest_of_thread.counter);
		if (!have_last || ns > last_ns)
			last_ns = ns;
		have_last = 1;
	}
	if (have_last) {
		char buf[64];
		char *p = fmt_timestamp(buf, last_ns);
		out_str("\nLast timestamp [");
		out_bytes(buf, (size_t)(p - buf));
		out_str("]\n");
	}
}

void rt_crash_write_dump(int fd, const struct rt_crash_info *info, uint32_t events)
{
	out.fd = fd;
	out.broken = 0;
	out.used = 0;
	arena_bounds();

	kept.count = 0;
	kept.wanted = events < RT_CRASH_EVENTS_MAX ? events : RT_CRASH_EVENTS_MAX;
	for (uint32_t r = 0; r < arena.ring_count && kept.wanted; r++) {
		ring_events = 0;
		walk_ring(r, (uint64_t)kept.wanted * WALK_SLOTS_PER_EVENT + WALK_SLOTS_EXTRA,
			  UINT32_MAX, take_for_heap);
	}
	sort_kept();

	print_heading(info, kept.count);
	int64_t previous_ns = 0;
	for (uint32_t i = kept.count; i > 0 && !out.broken; i--) {
		const struct event *ev = &kept.items[i - 1];
		int64_t ns = rt_timebase_ns(&arena.tb, ev->counter);
		int64_t delta = 0;
		if (i != kept.count && __builtin_sub_overflow(ns, previous_ns, &delta))
			delta = ns < previous_ns ? INT64_MIN : INT64_MAX;
		previous_ns = ns;
		print_event(ev, delta);
	}
	print_last_events();
	out_str("ringtrace: the whole trace: ringtrace dump ");
	out_printable(rt_arena.path, strnlen(rt_arena.path, sizeof(rt_arena.path)));
	out_char('\n');
	out_flush();
}
