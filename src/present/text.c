/*
 * text.c - the human-readable dump format.  An event is printed from the
 * event model (event/event.h), as dump --json prints it: its time, cpu,
 * site, log message, I/O call and function come decoded from there; what
 * the line shows of the record itself is its argument words, in hex.  A
 * loss line shows the loss item's count, reason, note and times.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "event/event.h"
#include "present/io_view.h"
#include "present/text.h"
#include "present/call_tree.h"

/* Longest rendered site: three strings of 4-byte escapes, a line number, punctuation. */
#define SITE_TAIL_MAX (3 * 4 * RT_SITE_STRING_MAX + 64)
/* Everything on an event line but the thread label and the site. */
#define LINE_FIXED_MAX 256
/* What a raw counter and a delta in ticks add to an event line. */
#define RAW_TIME_MAX 64
/* 4 arguments of 8 hex digits, 2 of 16, a space between each. */
#define ARGS_WIDTH (4 * 8 + 2 * 16 + 5)

static char *put(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

char *rt_text_format_timestamp(char *p, int64_t ns)
{
	uint64_t magnitude = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	char digits[RT_FMT_U64_MAX];
	unsigned len = (unsigned)(rt_fmt_u64(digits, magnitude / 1000000000u) - digits);
	for (unsigned i = len + (ns < 0); i < 4; i++)
		*p++ = ' ';
	if (ns < 0)
		*p++ = '-';
	memcpy(p, digits, len);
	p += len;
	*p++ = '.';
	return rt_fmt_u64_zero(p, magnitude % 1000000000u, 9);
}

/* "1.234567890": a timestamp without the padding of the event lines. */
static char *put_time(char *p, int64_t ns)
{
	char buf[32];
	char *end = rt_text_format_timestamp(buf, ns);
	char *q = buf;
	while (*q == ' ')
		q++;
	memcpy(p, q, (size_t)(end - q));
	return p + (end - q);
}

/* "       0.308": signed microseconds with 3 decimals, right-aligned to 12. */
static char *format_delta(char *p, int64_t ns)
{
	uint64_t magnitude = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
	char digits[RT_FMT_U64_MAX];
	unsigned len = (unsigned)(rt_fmt_u64(digits, magnitude / 1000) - digits);
	unsigned total = len + 4 + (ns < 0);
	for (unsigned i = total; i < 12; i++)
		*p++ = ' ';
	if (ns < 0)
		*p++ = '-';
	memcpy(p, digits, len);
	p += len;
	*p++ = '.';
	return rt_fmt_u64_zero(p, magnitude % 1000, 3);
}

static char *render_thread(char *buf, const struct rt_reader_thread *t)
{
	char *p = put(buf, "tid ");
	p = rt_fmt_i64(p, t->tid);
	if (t->name[0]) {
		*p++ = ' ';
		p = rt_fmt_escaped(p, t->name, strnlen(t->name, sizeof(t->name)));
	}
	return put(p, "] : ");
}

/* Every source's fragments; p is zeroed but for readers. */
static int init_sources(struct rt_text_printer *p, struct rt_out *out,
			const struct rt_reader *const *readers, size_t count)
{
	p->out = out;
	p->readers = readers;
	int rc =
	    rt_fragments_init_all(&p->all_fragments, readers, count, SITE_TAIL_MAX, render_thread);
	if (rc)
		return rc;
	if (!(p->events = rt_event_builder_new(readers, count, NULL, 0))) {
		rt_fragments_free_all(p->all_fragments, count);
		return -ENOMEM;
	}
	/* functions are named with the printer's names (none: raw addresses) */
	rt_event_builder_leave_names(p->events);
	p->source_count = count;
	rt_text_printer_source(p, 0);
	return 0;
}

int rt_text_printer_init_sources(struct rt_text_printer *p, struct rt_out *out,
				 const struct rt_reader *const *readers, size_t count)
{
	memset(p, 0, sizeof(*p));
	return init_sources(p, out, readers, count);
}

int rt_text_printer_init(struct rt_text_printer *p, struct rt_out *out,
			 const struct rt_reader *reader)
{
	memset(p, 0, sizeof(*p));
	p->single = reader;
	return init_sources(p, out, &p->single, 1);
}

int rt_text_printer_reload(struct rt_text_printer *p, size_t source)
{
	if (source >= p->source_count)
		return 0;
	rt_fragments_free(&p->all_fragments[source]);
	return rt_fragments_init(&p->all_fragments[source], p->readers[source], SITE_TAIL_MAX,
				 render_thread);
}

void rt_text_printer_source(struct rt_text_printer *p, size_t source)
{
	if (source >= p->source_count)
		return;
	p->reader = p->readers[source];
	p->fragments = &p->all_fragments[source];
	p->source = source;
}

void rt_text_printer_free(struct rt_text_printer *p)
{
	rt_fragments_free_all(p->all_fragments, p->source_count);
	rt_event_builder_free(p->events);
	memset(p, 0, sizeof(*p));
}

/*
 * "app.c:main:12 (tag)\n", cached while the budget lasts.  A span's start or
 * end reads like a function's enter or exit: "begin tag (app.c:main:12)\n".
 */
static struct rt_fragment site_tail(struct rt_text_printer *p, const struct rt_site *site,
				    uint32_t index)
{
	if (index < p->fragments->site_count && p->fragments->sites[index].bytes)
		return p->fragments->sites[index];
	char *s = p->fragments->scratch;
	if (site->kind == RT_SITE_BEGIN || site->kind == RT_SITE_END) {
		s = put(s, site->kind == RT_SITE_BEGIN ? "begin " : "end ");
		s = rt_fmt_escaped(s, site->tag, site->tag_length);
		s = put(s, " (");
		s = rt_fmt_escaped(s, site->file_base, site->file_base_length);
		*s++ = ':';
		s = rt_fmt_escaped(s, site->func, site->func_length);
		*s++ = ':';
		s = rt_fmt_u64(s, site->line);
		*s++ = ')';
		*s++ = '\n';
		return rt_fragments_keep_site(p->fragments, index, s);
	}
	s = rt_fmt_escaped(s, site->file_base, site->file_base_length);
	*s++ = ':';
	s = rt_fmt_escaped(s, site->func, site->func_length);
	*s++ = ':';
	s = rt_fmt_u64(s, site->line);
	*s++ = ' ';
	*s++ = '(';
	s = rt_fmt_escaped(s, site->tag, site->tag_length);
	*s++ = ')';
	*s++ = '\n';
	return rt_fragments_keep_site(p->fragments, index, s);
}

/*
 * What is shown of an event whose metadata is lost (arena_reader.h,
 * RT_ITEM_NO_SITE and friends): "ring 3 (thread metadata lost)] : " for the
 * thread, "site #12 (site metadata lost)" for the site; into buf.
 */
static struct rt_fragment lost_thread(char *buf, const struct rt_item *item)
{
	char *s = put(buf, "ring ");
	s = rt_fmt_u64(s, item->thread & ~RT_ITEM_RING_ONLY);
	s = put(s, " (thread metadata lost)] : ");
	return (struct rt_fragment){buf, (uint32_t)(s - buf)};
}

static struct rt_fragment lost_site(char *buf, const struct rt_event *ev)
{
	char *s = put(buf, "site #");
	s = rt_fmt_u64(s, ev->site_id);
	s = put(s, " (site metadata lost)\n");
	return (struct rt_fragment){buf, (uint32_t)(s - buf)};
}

/* An enter or exit event's end of line: "enter main (app.c:12)" and a newline. */
#define FUNCTION_TAIL_MAX 1280
#define END_TEXT_MAX 32 /* room kept for " [open at exit()]" and the newline */
static struct rt_fragment function_tail(struct rt_text_printer *p, char *buf,
					const struct rt_item *item, const struct rt_event *ev)
{
	struct rt_function_place place = {0};
	if (p->names)
		rt_function_names_find(p->names, p->reader, ev->addr, item->counter, &place);
	char *s = put(buf, ev->kind == RT_EVENT_ENTER ? "enter " : "exit ");
	/* the names come from the program's ELF files, as untrusted as the trace */
	char raw[(FUNCTION_TAIL_MAX - END_TEXT_MAX) / 4 - 8];
	size_t raw_length = rt_function_place_text(&place, ev->addr, raw, sizeof(raw));
	size_t n = (size_t)(rt_fmt_escaped(s, raw, raw_length) - buf);
	if (ev->kind == RT_EVENT_EXIT && ev->function_flags & RT_FUNC_F_CLOSED) {
		/* the library's exit for a call that did not return by itself: " [unwound]" */
		s = put(buf + n, " [");
		s = put(s, rt_call_end_text(rt_call_end_of(ev->function_flags)));
		s = put(s, "]");
		n = (size_t)(s - buf);
	}
	buf[n++] = '\n';
	return (struct rt_fragment){buf, n};
}

/* A log message (cut by the builder past 8 KiB), its level, its place, 4-byte escapes. */
#define LOG_TAIL_MAX (8192 * 4 + RT_SITE_STRING_MAX * 4 + 64)

/* A log message's end of line: "INFO request 42 from alice (app.c:88)" and a newline. */
static struct rt_fragment log_tail(struct rt_text_printer *p, char *buf, const struct rt_event *ev)
{
	const struct rt_site *site = ev->site;
	p->log_damaged += (uint64_t)ev->damaged;
	char *s = buf;
	for (const char *l = ev->level; *l; l++)
		*s++ = (char)(*l >= 'a' && *l <= 'z' ? *l - 'a' + 'A' : *l);
	*s++ = ' ';
	s = rt_fmt_escaped(s, ev->msg.s, ev->msg.length);
	s = put(s, " (");
	s = rt_fmt_escaped(s, site->file_base, site->file_base_length);
	*s++ = ':';
	s = rt_fmt_u64(s, site->line);
	s = put(s, ")\n");
	return (struct rt_fragment){buf, (uint32_t)(s - buf)};
}

static void print_event(struct rt_text_printer *p, const struct rt_item *item,
			const struct rt_event *ev, int64_t delta_ns)
{
	const struct rt_reader *rd = p->reader;
	static const struct rt_fragment unknown_thread = {(char *)"tid ?] : ", 9};
	char thread_buf[64], site_buf[64];
	const struct rt_fragment *label = item->thread < rd->thread_count
					      ? &p->fragments->threads[item->thread]
					      : &unknown_thread;
	struct rt_fragment ring_label;
	if (item->flags & RT_ITEM_NO_OWNER) {
		ring_label = lost_thread(thread_buf, item);
		label = &ring_label;
	}
	/* the record's argument words, as they are: every one it holds when its site is lost */
	unsigned nargs = 0;
	const uint64_t *words = NULL;
	uint64_t raw[RT_MAX_ARGS];
	struct rt_fragment tail;
	char function_buf[FUNCTION_TAIL_MAX];
	static char log_buf[LOG_TAIL_MAX];
	static char io_buf[RT_IO_TEXT_MAX];
	switch (ev->kind) {
	case RT_EVENT_ENTER:
	case RT_EVENT_EXIT:
		tail = function_tail(p, function_buf, item, ev);
		nargs = rt_site_lookup(&rd->sites, item->site)->nargs;
		if (nargs > RT_MAX_ARGS)
			nargs = RT_MAX_ARGS;
		for (unsigned i = 0; i < RT_MAX_ARGS; i++)
			raw[i] = i < 4 ? item->args.a32[i] : item->args.a64[i - 4];
		words = raw;
		break;
	case RT_EVENT_LOG:
		/* the message stands where an event's tag does; its arguments are in it */
		tail = ev->site ? log_tail(p, log_buf, ev) : lost_site(site_buf, ev);
		break;
	case RT_EVENT_IO:
		/* the payload says it all */
		tail = (struct rt_fragment){io_buf, rt_io_text(io_buf, RT_IO_TEXT_MAX, &ev->io)};
		break;
	default:
		tail = ev->site ? site_tail(p, ev->site, ev->site_id) : lost_site(site_buf, ev);
		nargs = ev->nargs < RT_MAX_ARGS ? ev->nargs : RT_MAX_ARGS;
		words = ev->args;
		break;
	}

	char *start =
	    rt_out_reserve(p->out, LINE_FIXED_MAX + RAW_TIME_MAX + label->length + tail.length);
	char *s = start;
	*s++ = '[';
	if (ev->raw_time) {
		/* no clock metadata: the raw counter */
		s = put(s, "raw ");
		s = rt_fmt_u64(s, (uint64_t)ev->ts_ns);
	} else {
		s = rt_text_format_timestamp(s, ev->ts_ns);
	}
	memcpy(s, "][cpu ", 6);
	s += 6;
	if (ev->cpu < 0)
		*s++ = '?';
	else
		s = rt_fmt_u64(s, (unsigned)ev->cpu);
	*s++ = ' ';
	if (p->show_pid) {
		memcpy(s, "pid ", 4);
		s = rt_fmt_i64(s + 4, ev->pid);
		*s++ = ' ';
	}
	memcpy(s, label->bytes, label->length);
	s += label->length;
	char *args = s;
	for (unsigned i = 0; i < nargs; i++) {
		if (i)
			*s++ = ' ';
		s = rt_fmt_hex(s, words[i], i < 4 ? 8 : 16);
	}
	while (s < args + ARGS_WIDTH)
		*s++ = ' ';
	memcpy(s, " : (", 4);
	s += 4;
	if (ev->raw_time) {
		/* the timebase is then one tick a nanosecond: the delta is in ticks */
		char digits[RT_FMT_U64_MAX + 1];
		unsigned len = (unsigned)(rt_fmt_i64(digits, delta_ns) - digits);
		for (unsigned i = len; i < 12; i++)
			*s++ = ' ';
		memcpy(s, digits, len);
		s = put(s + len, " ticks) : ");
	} else {
		s = format_delta(s, delta_ns);
		memcpy(s, " uSec) : ", 9);
		s += 9;
	}
	memcpy(s, tail.bytes, tail.length);
	s += tail.length;
	rt_out_commit(p->out, s);
}

/* "tid 3702 name" */
static char *put_thread(char *s, const struct rt_reader_thread *t)
{
	s = put(s, "tid ");
	s = rt_fmt_i64(s, t->tid);
	if (t->name[0]) {
		*s++ = ' ';
		s = rt_fmt_escaped(s, t->name, strnlen(t->name, sizeof(t->name)));
	}
	return s;
}

/*
 * A damaged region: "--- damaged: bytes 1048576..1049088 (512 B), tid 3702
 * name, ~14 events lost, 0.903000000 s gap: ring 3 slots 120..135 (seq
 * 4216..4231): seq tags that do not fit their slots ---" ("~14" when the
 * count is estimated; the thread when the loss is one thread's; the gap when
 * the clock before and after it is known).
 */
static void print_damage(struct rt_text_printer *p, const struct rt_item *item)
{
	const struct rt_reader *rd = p->reader;
	const struct rt_damage *d = &rd->damage.items[item->loss.damage];
	char *start = rt_out_reserve(p->out, 512 + 4 * sizeof(d->what));
	char *s = put(start, "--- damaged: bytes ");
	s = rt_fmt_u64(s, d->offset);
	s = put(s, "..");
	s = rt_fmt_u64(s, d->offset + d->length);
	s = put(s, " (");
	s = rt_fmt_u64(s, d->length);
	s = put(s, " B)");
	if (item->thread < rd->thread_count) {
		s = put(s, ", ");
		s = put_thread(s, &rd->threads[item->thread]);
	}
	uint64_t events, from, to;
	if (rt_damage_events(d, item->loss.count, &events)) {
		int estimated = (item->flags & RT_ITEM_ESTIMATED) ||
				(d->events_estimated && item->loss.note == RT_NOTE_REGION);
		s = put(s, estimated ? ", ~" : ", ");
		s = rt_fmt_u64(s, events);
		s = put(s, events == 1 ? " event lost" : " events lost");
	}
	if (rt_damage_gap(d, &from, &to)) {
		s = put(s, ", ");
		s = put_time(s, rt_timebase_ns(&rd->timebase, to) -
				    rt_timebase_ns(&rd->timebase, from));
		s = put(s, " s gap");
	}
	s = put(s, ": ");
	s = rt_fmt_escaped(s, d->what, strnlen(d->what, sizeof(d->what)));
	s = put(s, " ---\n");
	rt_out_commit(p->out, s);
}

static void print_loss(struct rt_text_printer *p, const struct rt_item *item)
{
	const struct rt_reader *rd = p->reader;
	if (item->flags & RT_ITEM_DAMAGE) {
		print_damage(p, item);
		return;
	}
	char *start = rt_out_reserve(p->out, 512);
	char *s = put(start, "--- lost: ");
	if (item->thread < rd->thread_count) {
		s = put_thread(s, &rd->threads[item->thread]);
		s = put(s, ", ");
	}
	s = rt_fmt_u64(s, item->loss.count);
	s = put(s, item->loss.count == 1 ? " event " : " events ");
	s = put(s, rt_loss_reason_name(item->loss.reason));
	if (item->flags & RT_ITEM_TIMED) {
		/* when: as ACRN's "incontinuous logs" warning says where the sequence jumped */
		int64_t from = rt_timebase_ns(&rd->timebase, item->counter);
		if (item->loss.last_counter && item->loss.last_counter != item->counter) {
			s = put(s, " between ");
			s = put_time(s, from);
			s = put(s, " and ");
			s = put_time(s, rt_timebase_ns(&rd->timebase, item->loss.last_counter));
		} else {
			s = put(s, " at ");
			s = put_time(s, from);
		}
	}
	const char *note = item->flags & RT_ITEM_IN_REGION && item->loss.note == RT_NOTE_GAP
			       ? "lost in the damaged region before them, counted there too"
			       : rt_loss_note_text(item->loss.note);
	if (note) {
		s = put(s, " (");
		s = put(s, note);
		*s++ = ')';
	}
	s = put(s, " ---\n");
	rt_out_commit(p->out, s);
}

void rt_text_print_item(struct rt_text_printer *p, const struct rt_item *item)
{
	if (!rt_item_kind_is_event(item->kind)) {
		print_loss(p, item);
		return;
	}
	const struct rt_event *ev = rt_event_build_kept(p->events, (uint32_t)p->source, item);
	/* of a source without clock metadata, the timebase's reading of the raw counter */
	int64_t ns = ev->raw_time ? rt_timebase_ns(&p->reader->timebase, item->counter) : ev->ts_ns;
	int64_t delta = 0;
	if (p->have_previous && __builtin_sub_overflow(ns, p->previous_ns, &delta))
		delta = ns < p->previous_ns ? INT64_MIN : INT64_MAX;
	p->previous_ns = ns;
	p->have_previous = 1;
	print_event(p, item, ev, delta);
}

void rt_text_print_summary(struct rt_text_printer *p, const struct rt_counts *counts,
			   uint32_t threads)
{
	uint64_t lost = rt_counts_lost(counts);
	uint64_t total = counts->present + lost;
	if (total < counts->present)
		total = UINT64_MAX;
	rt_out_printf(p->out,
		      "ringtrace: recovered %llu/%llu events from %u thread%s (%llu lost)\n",
		      (unsigned long long)counts->present, (unsigned long long)total, threads,
		      threads == 1 ? "" : "s", (unsigned long long)lost);
}

void rt_text_print_last_heading(struct rt_text_printer *p)
{
	rt_out_str(p->out, "\nLast recorded per-thread events\n");
}

void rt_text_print_last_event(struct rt_text_printer *p, const struct rt_item *item)
{
	struct rt_event ev;
	rt_event_build_again(p->events, (uint32_t)p->source, item, &ev);
	print_event(p, item, &ev, 0);
}

void rt_text_print_last_raw(struct rt_text_printer *p, uint64_t counter)
{
	char *start = rt_out_reserve(p->out, 64);
	char *s = put(start, "\nLast timestamp [raw ");
	s = rt_fmt_u64(s, counter);
	s = put(s, "]\n");
	rt_out_commit(p->out, s);
}

void rt_text_print_last_timestamp(struct rt_text_printer *p, int64_t ns)
{
	char *start = rt_out_reserve(p->out, 64);
	char *s = put(start, "\nLast timestamp [");
	s = rt_text_format_timestamp(s, ns);
	s = put(s, "]\n");
	rt_out_commit(p->out, s);
}
