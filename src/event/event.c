/*
 * event.c - an item of a trace set as every consumer sees it
 * (event/event.h): the same decoding as present/json.c, into fields
 * instead of text.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/log_levels.h"
#include "decode/log_args.h"
#include "event/event.h"

/* The longest message kept; a longer one is cut (as dump --json cuts it). */
#define MESSAGE_MAX 8192

struct rt_event_builder {
	const struct rt_reader *const *readers;
	size_t count;
	struct rt_io_view io;
	struct rt_function_names *names;
	uint64_t log_damaged;
	int64_t previous_ns;	 /* the time of the last timed item: where an untimed loss sits */
	size_t *program_lengths; /* per source: its program name's, measured once */
	int shown_again;	 /* rt_event_build_again: an I/O call's state is not moved */
	int leave_names;	 /* rt_event_builder_leave_names: enters and exits get no place */
	/*
	 * The builder's own event (rt_event_build_kept), and whether it holds
	 * a trace event: then every field a trace event does not write is
	 * zero in it still, and the next trace event need not clear them.
	 */
	struct rt_event kept;
	int kept_trace;
	char message[MESSAGE_MAX];
};

struct rt_event_builder *rt_event_builder_new(const struct rt_reader *const *readers, size_t count,
					      const char *const *debug_dirs, size_t debug_dir_count)
{
	struct rt_event_builder *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->readers = readers;
	b->count = count;
	b->names = rt_function_names_new(debug_dirs, debug_dir_count);
	b->program_lengths = calloc(count + 1, sizeof(*b->program_lengths));
	if (!b->names || !b->program_lengths || rt_io_view_init(&b->io, readers, count) != 0) {
		rt_function_names_free(b->names);
		free(b->program_lengths);
		free(b);
		return NULL;
	}
	for (size_t i = 0; i < count; i++)
		b->program_lengths[i] =
		    strnlen(readers[i]->header.program, sizeof(readers[i]->header.program));
	return b;
}

void rt_event_builder_free(struct rt_event_builder *b)
{
	if (!b)
		return;
	rt_io_view_free(&b->io);
	rt_function_names_free(b->names);
	free(b->program_lengths);
	free(b);
}

void rt_event_builder_leave_names(struct rt_event_builder *b)
{
	b->leave_names = 1;
}

void rt_event_builder_forked(struct rt_event_builder *b, size_t source)
{
	rt_io_view_forked(&b->io, source);
}

uint64_t rt_event_builder_damaged(const struct rt_event_builder *b)
{
	return b->log_damaged + b->io.malformed;
}

const char *rt_event_kind_name(enum rt_event_kind kind)
{
	switch (kind) {
	case RT_EVENT_TRACE:
		return "trace";
	case RT_EVENT_LOG:
		return "log";
	case RT_EVENT_ENTER:
		return "enter";
	case RT_EVENT_EXIT:
		return "exit";
	case RT_EVENT_IO:
		return "io";
	case RT_EVENT_LOST:
		return "lost";
	}
	return "?";
}

/* The bytes set in x where x holds a zero byte, exactly (no borrow from one byte to the next). */
static inline uint64_t zero_bytes(uint64_t x)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7full;
	return ~(((x & low7) + low7) | x | low7);
}

/*
 * The length of a thread name (RT_NAME_MAX bytes, NUL-terminated unless
 * full), two words at a time: a call to strnlen for every event costs more
 * than its 16 bytes.
 */
static inline __attribute__((always_inline)) size_t name_length(const char *name)
{
	_Static_assert(RT_NAME_MAX == 16, "a name is two words");
	uint64_t w[2];
	memcpy(w, name, sizeof(w));
	for (unsigned i = 0; i < 2; i++) {
		uint64_t z = zero_bytes(w[i]);
		if (z)
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
			return i * 8 + (unsigned)__builtin_clzll(z) / 8;
#else
			return i * 8 + (unsigned)__builtin_ctzll(z) / 8;
#endif
	}
	return RT_NAME_MAX;
}

/*
 * A reader thread's name length: the one rt_reader_thread_name() kept with
 * it, when the name ends there (a thread filled some other way, whose
 * length is 0 or short, is measured).  Measuring costs twice the check.
 */
static inline __attribute__((always_inline)) size_t
thread_name_length(const struct rt_reader_thread *t)
{
	const size_t n = t->name_length;
	if (n < RT_NAME_MAX && !t->name[n] && (n == 0 || t->name[n - 1]))
		return n;
	return name_length(t->name);
}

static struct rt_event_str str_of(const char *s, size_t length)
{
	return (struct rt_event_str){s, s ? length : 0};
}

/*
 * The length of source's program name, measured when the builder was made
 * and measured again if the header read since says otherwise.
 */
static inline __attribute__((always_inline)) size_t
program_length(struct rt_event_builder *b, uint32_t source, const struct rt_reader *rd)
{
	const char *p = rd->header.program;
	size_t max = sizeof(rd->header.program);
	size_t *n = &b->program_lengths[source < b->count ? source : 0];
	if ((*n < max && p[*n]) || (*n && !p[*n - 1]))
		*n = strnlen(p, max);
	return *n;
}

/*
 * What every kind shares: time, process, thread, cpu, seq.  Every field of
 * the head is written but metadata_lost, only ever set: a trace event built
 * over the one before (build_event) counts on it.
 */
static inline __attribute__((always_inline)) void
build_head(struct rt_event_builder *b, uint32_t source, const struct rt_reader *rd,
	   const struct rt_item *item, struct rt_event *ev)
{
	ev->raw_time = rd->raw_time;
	ev->ts_ns =
	    rd->raw_time ? (int64_t)item->counter : rt_timebase_ns(&rd->timebase, item->counter);
	ev->timed = 1;
	ev->pid = rd->header.pid;
	ev->program = str_of(rd->header.program, program_length(b, source, rd));
	ev->cpu = item->cpu == RT_CPU_UNKNOWN ? -1 : (int)item->cpu;
	ev->has_seq = !(item->flags & RT_ITEM_NO_SEQ);
	ev->seq = item->seq;
	ev->site_id = item->site;
	if (item->flags & RT_ITEM_NO_OWNER) {
		ev->tid = 0;
		ev->thread = str_of("", 0);
		ev->metadata_lost = 1;
	} else if (item->thread < rd->thread_count) {
		const struct rt_reader_thread *t = &rd->threads[item->thread];
		ev->tid = t->tid;
		ev->thread = str_of(t->name, thread_name_length(t));
	} else {
		ev->tid = item->tid;
		ev->thread = str_of("", 0);
	}
	if (rd->raw_time)
		ev->metadata_lost = 1;
	if (!rd->raw_time)
		b->previous_ns = ev->ts_ns;
}

/* What build_trace writes, zero as a cleared event has it. */
static void clear_trace_fields(struct rt_event *ev)
{
	ev->site = NULL;
	ev->nargs = 0;
	memset(ev->args, 0, sizeof(ev->args));
	ev->signed_args = 0;
	ev->span = RT_EVENT_SPAN_NONE;
}

/*
 * A trace event of site (NULL: lost): every field of its own written, so
 * that none is left of a trace event built before into the same storage.
 */
static inline __attribute__((always_inline)) void
build_trace(const struct rt_site *site, const struct rt_item *item, struct rt_event *ev)
{
	ev->kind = RT_EVENT_TRACE;
	if (!site) {
		/* the record's raw words: two in one slot, six in two */
		clear_trace_fields(ev);
		ev->metadata_lost = 1;
		ev->nargs = item->flags & RT_ITEM_WIDE ? RT_MAX_ARGS : 2;
		for (unsigned i = 0; i < ev->nargs; i++)
			ev->args[i] = i < 4 ? item->args.a32[i] : item->args.a64[i - 4];
		return;
	}
	ev->site = site;
	memset(ev->args, 0, sizeof(ev->args));
	ev->nargs = site->nargs;
	ev->signed_args = site->signed_args;
	/* a table, one load, where two comparisons cost eight instructions an event */
	static const uint8_t span_of_kind[UINT8_MAX + 1] = {
	    [RT_SITE_BEGIN] = RT_EVENT_SPAN_BEGIN,
	    [RT_SITE_END] = RT_EVENT_SPAN_END,
	};
	ev->span = (enum rt_event_span)span_of_kind[site->kind];
	/* into the words just cleared: only the site's are written */
	rt_site_decode_args(site, item->args.a32, item->args.a64, ev->args);
}

/* An enter or exit: its words as the span tracker reads them (one reading for every view). */
static void build_function(struct rt_event_builder *b, const struct rt_reader *rd,
			   const struct rt_item *item, const struct rt_span_event *call,
			   struct rt_event *ev)
{
	ev->kind = call->input == RT_SPAN_ENTER ? RT_EVENT_ENTER : RT_EVENT_EXIT;
	ev->depth = call->depth;
	ev->function_flags = call->flags;
	ev->addr = call->addr;
	ev->call_site = call->call_site;
	if (!b->leave_names)
		rt_function_names_find(b->names, rd, ev->addr, item->counter, &ev->place);
}

static void build_log(struct rt_event_builder *b, const struct rt_reader *rd,
		      const struct rt_item *item, struct rt_event *ev)
{
	const struct rt_site *site = rt_site_lookup(&rd->sites, item->site);
	ev->kind = RT_EVENT_LOG;
	if (item->flags & RT_ITEM_NO_SITE || !site || site->kind != RT_SITE_LOG) {
		ev->metadata_lost = 1;
		return;
	}
	ev->site = site;
	ev->level = rt_log_level_name(site->level);
	size_t n = rt_log_render(b->message, sizeof(b->message), site, item->log.payload,
				 item->log.length, &ev->damaged);
	if (n >= sizeof(b->message))
		n = sizeof(b->message) - 1;
	b->log_damaged += (uint64_t)ev->damaged;
	ev->msg = str_of(b->message, n);
}

static void build_loss(struct rt_event_builder *b, const struct rt_reader *rd,
		       const struct rt_item *item, struct rt_event *ev)
{
	ev->kind = RT_EVENT_LOST;
	ev->pid = rd->header.pid;
	ev->program =
	    str_of(rd->header.program, strnlen(rd->header.program, sizeof(rd->header.program)));
	ev->tid = item->tid;
	ev->thread = str_of("", 0);
	for (uint32_t i = 0; i < rd->thread_count && item->tid; i++)
		if (rd->threads[i].tid == item->tid) {
			const char *name = rd->threads[i].name;
			ev->thread = str_of(name, name_length(name));
			break;
		}
	ev->cpu = -1;
	ev->raw_time = rd->raw_time;
	ev->count = item->loss.count;
	ev->reason = rt_loss_reason_name(item->loss.reason);
	ev->note = rt_loss_note_text(item->loss.note);
	if (item->flags & RT_ITEM_DAMAGE) {
		ev->damage = &rd->damage.items[item->loss.damage];
		rt_damage_events(ev->damage, item->loss.count, &ev->count);
		ev->estimated = (item->flags & RT_ITEM_ESTIMATED) ||
				(ev->damage->events_estimated && item->loss.note == RT_NOTE_REGION);
	}
	ev->in_region = (item->flags & RT_ITEM_IN_REGION) != 0;
	ev->timed = (item->flags & RT_ITEM_TIMED) && !rd->raw_time;
	if (ev->timed) {
		ev->ts_ns = rt_timebase_ns(&rd->timebase, item->counter);
		b->previous_ns = ev->ts_ns;
		if (item->loss.last_counter) {
			ev->has_last = 1;
			ev->ts_last_ns = rt_timebase_ns(&rd->timebase, item->loss.last_counter);
		}
	} else {
		ev->ts_ns = b->previous_ns;
	}
}

/*
 * The item of source into ev; kept: ev is the builder's own.  Into it, a
 * trace event's before, a trace item writes every field of the head and of
 * a trace event, and the other kinds' are zero still: nothing is cleared.
 * Inline in both callers, with its parts: kept is known as each compiles.
 */
static inline __attribute__((always_inline)) void build_event(struct rt_event_builder *b,
							      uint32_t source,
							      const struct rt_item *item,
							      struct rt_event *ev, const int kept)
{
	const int over_trace = kept && b->kept_trace && item->kind == RT_ITEM_TRACE;
	if (kept)
		b->kept_trace = 0;
	if (over_trace) {
		ev->metadata_lost = 0;
	} else {
		/*
		 * 64 bytes at a time: wide stores, where one memset of the whole is a
		 * rep stos whose start-up costs more than the bytes, on every event.
		 */
		_Static_assert(offsetof(struct rt_event, io) == (size_t)5 * 64,
			       "the cleared part is five chunks");
		char *clear = (char *)ev;
		/* written out: a loop's counter and branch cost more than the stores (callgrind) */
		memset(clear, 0, 64);
		memset(clear + 64, 0, 64);
		memset(clear + 128, 0, 64);
		memset(clear + 192, 0, 64);
		memset(clear + 256, 0, 64);
	}
	ev->source = source;
	const struct rt_reader *rd = b->readers[source < b->count ? source : 0];
	/* trace items first: nearly every item is one */
	if (item->kind != RT_ITEM_TRACE) {
		if (!rt_item_kind_is_event(item->kind)) {
			build_loss(b, rd, item, ev);
		} else if (item->kind == RT_ITEM_IO) {
			build_head(b, source, rd, item, ev);
			ev->kind = RT_EVENT_IO;
			rt_io_view_take(&b->io, source, item, !b->shown_again, &ev->io);
		} else {
			build_head(b, source, rd, item, ev);
			build_log(b, rd, item, ev);
		}
		return;
	}
	build_head(b, source, rd, item, ev);
	/* the site looked up once: an enter or exit's words are read as the tracker reads them */
	const struct rt_site *site = rt_site_lookup(&rd->sites, item->site);
	if (!(item->flags & RT_ITEM_NO_SITE) && site &&
	    (site->kind == RT_SITE_ENTER || site->kind == RT_SITE_EXIT)) {
		struct rt_span_event call;
		rt_span_event_of_item(rd, item, &call);
		/* a trace event's fields, of the one before, are not an enter's */
		if (over_trace)
			clear_trace_fields(ev);
		build_function(b, rd, item, &call, ev);
		return;
	}
	build_trace(site, item, ev);
	if (kept)
		b->kept_trace = 1;
}

void rt_event_build(struct rt_event_builder *b, uint32_t source, const struct rt_item *item,
		    struct rt_event *ev)
{
	build_event(b, source, item, ev, 0);
}

/* One function builds every event, so that its parts stay inline in it: a flag says "again". */
void rt_event_build_again(struct rt_event_builder *b, uint32_t source, const struct rt_item *item,
			  struct rt_event *ev)
{
	b->shown_again = 1;
	rt_event_build(b, source, item, ev);
	b->shown_again = 0;
}

const struct rt_event *rt_event_build_kept(struct rt_event_builder *b, uint32_t source,
					   const struct rt_item *item)
{
	build_event(b, source, item, &b->kept, 1);
	return &b->kept;
}

void rt_event_builder_take_io(struct rt_event_builder *b, uint32_t source,
			      const struct rt_item *item)
{
	struct rt_io_shown shown;
	rt_io_view_take(&b->io, source, item, 1, &shown);
}

uint64_t rt_event_builder_io_malformed(const struct rt_event_builder *b)
{
	return b->io.malformed;
}

enum rt_span_input rt_event_as_span(const struct rt_event *ev, struct rt_span_event *out)
{
	memset(out, 0, sizeof(*out));
	out->ts = ev->ts_ns;
	out->origin = ev;
	switch (ev->kind) {
	case RT_EVENT_ENTER:
	case RT_EVENT_EXIT:
		out->input = ev->kind == RT_EVENT_ENTER ? RT_SPAN_ENTER : RT_SPAN_EXIT;
		out->depth = ev->depth;
		out->flags = ev->function_flags;
		out->addr = ev->addr;
		out->call_site = ev->call_site;
		break;
	case RT_EVENT_TRACE:
		/* a begin or end whose site is lost has no name to pair by: a trace event */
		if (ev->site && ev->span != RT_EVENT_SPAN_NONE) {
			out->input = ev->span == RT_EVENT_SPAN_BEGIN ? RT_SPAN_BEGIN : RT_SPAN_END;
			out->site = ev->site;
		}
		break;
	default:
		break;
	}
	return out->input;
}
