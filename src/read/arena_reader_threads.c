/*
 * arena_reader_threads.c - the thread table of an arena: each entry checked,
 * the readable ones made the reader's threads.
 *
 * (Part of read/arena_reader.h; the reader's private parts are
 * read/arena_reader_private.h.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "read/arena_reader_private.h"

/* A thread entry that cannot be believed: a damaged region, and not a thread. */
int rt_arena_thread_entry_damage(struct rt_reader *rd, uint32_t index, const char *why)
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
int rt_arena_absurd_count(struct rt_reader *rd, uint32_t part, uint32_t index, uint64_t offset,
			  const char *entry, const char *field, uint64_t *value)
{
	long rc = rt_damage_add(&rd->damage, part, RT_DAMAGE_UNPARSED, index, offset,
				sizeof(*value), "%s %u: %s %llu is no count: taken as 0", entry,
				index, field, (unsigned long long)*value);
	*value = 0;
	return rc < 0 ? (int)rc : 0;
}

/* The live header's count of used entries of a table now (a live writer claims more). */
uint64_t rt_arena_used_now(const struct rt_reader *rd, size_t field, int wide)
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
int rt_arena_load_threads(struct rt_reader *rd)
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
			    i >= rt_arena_used_now(
				     rd, offsetof(struct rt_arena_header, threads_used), 0) &&
			    rt_arena_thread_entry_damage(rd, i, "bytes in an entry never claimed"))
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
			rt_reader_thread_name(t, e.name);
			t->first_record = e.first_record;
			t->end_record = e.end_record;
			t->start_counter = e.start_counter;
			t->exit_counter = e.exit_counter;
			t->lost_no_ring = e.lost_no_ring;
			if (e.lost_no_ring >= RT_COUNT_MAX &&
			    rt_arena_absurd_count(
				rd, RT_DAMAGE_THREAD, i,
				rt_layout_thread_offset(h, i) +
				    offsetof(struct rt_thread_entry, lost_no_ring),
				"thread entry", "lost_no_ring", &t->lost_no_ring))
				return -ENOMEM;
			continue;
		}
		if (rt_arena_thread_entry_damage(rd, i, why))
			return -ENOMEM;
	}
	uint64_t now = rt_arena_used_now(rd, offsetof(struct rt_arena_header, threads_used), 0);
	if (beyond > now &&
	    rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0,
			  offsetof(struct rt_arena_header, threads_used), sizeof(h->threads_used),
			  "threads_used %llu, but entry %u is a thread's: every entry read",
			  (unsigned long long)now, beyond - 1) < 0)
		return -ENOMEM;
	return 0;
}

/*
 * The entry's own copy of the thread's last event, as an item (kind 0 if
 * none), and as the entry holds it in *kept (when not NULL).
 */
void rt_arena_entry_last_event(const struct rt_reader *rd, const struct rt_reader_thread *t,
			       struct rt_item *out, struct rt_last_event *kept)
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
	if (kept)
		*kept = ev;
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
void rt_arena_find_last_event(const struct rt_reader *rd, struct rt_reader_thread *t)
{
	struct rt_item from_entry;
	struct rt_last_event kept;
	rt_arena_entry_last_event(rd, t, &from_entry, &kept);
	if (from_entry.kind &&
	    rt_entry_last_is_newer(&kept, &from_entry, &t->last, t->state == RT_THREAD_EXITED))
		t->last = from_entry;
}
