/*
 * json.c - the machine-readable dump format, printed from the event model
 * (event/event.h): an item is decoded there, once for every consumer, and
 * shown here.  Strings are escaped once per thread and per site; an event
 * line is then numbers and copies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "event/event.h"
#include "present/io_view.h"
#include "present/json.h"

/* Longest rendered site: three escaped strings, a line number, the keys. */
#define SITE_FIELDS_MAX (3 * RT_JSON_ESCAPED_MAX(RT_SITE_STRING_MAX) + 128)
/* Everything on an event line but the thread and site fields. */
#define LINE_FIXED_MAX 320
/* What an event whose metadata was lost adds: metadata, site_id, ring, ts_raw. */
#define LOST_FIELDS_MAX 128

static char *put(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

static char *render_thread(char *buf, const struct rt_reader_thread *t)
{
	char *p = put(buf, ",\"tid\":");
	p = rt_fmt_i64(p, t->tid);
	p = put(p, ",\"thread\":\"");
	p = rt_fmt_json_escaped(p, t->name, strnlen(t->name, sizeof(t->name)));
	/* a process of its own that recorded as a thread of its parent (vfork) */
	if (t->flags & RT_THREAD_F_VFORK_CHILD)
		p = put(p, "\",\"vfork_child\":true,\"cpu\":");
	else
		p = put(p, "\",\"cpu\":");
	return p;
}

/* Every source's fragments; p is zeroed but for readers. */
static int init_sources(struct rt_json_printer *p, struct rt_out *out,
			const struct rt_reader *const *readers, size_t count)
{
	p->out = out;
	p->readers = readers;
	int rc = rt_fragments_init_all(&p->all_fragments, readers, count, SITE_FIELDS_MAX,
				       render_thread);
	if (rc)
		return rc;
	if (!(p->events = rt_event_builder_new(readers, count, NULL, 0))) {
		rt_fragments_free_all(p->all_fragments, count);
		return -ENOMEM;
	}
	rt_event_builder_leave_names(p->events);
	p->source_count = count;
	rt_json_printer_source(p, 0);
	return 0;
}

int rt_json_printer_init_sources(struct rt_json_printer *p, struct rt_out *out,
				 const struct rt_reader *const *readers, size_t count)
{
	memset(p, 0, sizeof(*p));
	return init_sources(p, out, readers, count);
}

int rt_json_printer_init(struct rt_json_printer *p, struct rt_out *out,
			 const struct rt_reader *reader)
{
	memset(p, 0, sizeof(*p));
	p->single = reader;
	return init_sources(p, out, &p->single, 1);
}

int rt_json_printer_reload(struct rt_json_printer *p, size_t source)
{
	if (source >= p->source_count)
		return 0;
	rt_fragments_free(&p->all_fragments[source]);
	return rt_fragments_init(&p->all_fragments[source], p->readers[source], SITE_FIELDS_MAX,
				 render_thread);
}

void rt_json_printer_source(struct rt_json_printer *p, size_t source)
{
	if (source >= p->source_count)
		return;
	p->reader = p->readers[source];
	p->fragments = &p->all_fragments[source];
	p->source = source;
}

void rt_json_printer_free(struct rt_json_printer *p)
{
	rt_fragments_free_all(p->all_fragments, p->source_count);
	rt_event_builder_free(p->events);
	memset(p, 0, sizeof(*p));
}

/* A site's fields rendered, and kept when the cache has room. */
static struct rt_fragment render_site_fields(struct rt_json_printer *p, const struct rt_site *site,
					     uint32_t index)
{
	char *s = p->fragments->scratch;
	/* a span's start or end is a trace event with one more field */
	if (site->kind == RT_SITE_BEGIN)
		s = put(s, ",\"span\":\"begin\"");
	else if (site->kind == RT_SITE_END)
		s = put(s, ",\"span\":\"end\"");
	s = put(s, ",\"tag\":\"");
	s = rt_fmt_json_escaped(s, site->tag, site->tag_length);
	s = put(s, "\",\"file\":\"");
	s = rt_fmt_json_escaped(s, site->file, site->file_length);
	s = put(s, "\",\"line\":");
	s = rt_fmt_u64(s, site->line);
	s = put(s, ",\"func\":\"");
	s = rt_fmt_json_escaped(s, site->func, site->func_length);
	s = put(s, "\",\"args\":[");
	return rt_fragments_keep_site(p->fragments, index, s);
}

/* Inline: nearly always the site's fields are kept already. */
static inline struct rt_fragment site_fields(struct rt_json_printer *p, const struct rt_site *site,
					     uint32_t index)
{
	if (index < p->fragments->site_count && p->fragments->sites[index].bytes)
		return p->fragments->sites[index];
	return render_site_fields(p, site, index);
}

/*
 * What every event object begins with: the opening, the time, the pid when
 * several processes are shown, the thread, cpu and seq.  Metadata lost
 * (arena_reader.h): what the record says, marked, never a known name.  A
 * thread is shown from its rendered fragment (item->thread indexes them);
 * of a ring no thread owns, the ring's number.  Inline where it is called:
 * the opening is a literal there, its length known as it is compiled.
 */
static inline __attribute__((always_inline)) char *
put_head(struct rt_json_printer *p, char *s, const struct rt_item *item, const struct rt_event *ev,
	 const char *opening, const struct rt_fragment *thread)
{
	s = put(s, opening);
	if (ev->raw_time) {
		s = put(s, "\"ts_raw\":");
		s = rt_fmt_u64(s, (uint64_t)ev->ts_ns);
	} else if (ev->ts_ns >= 0) {
		s = put(s, "\"ts_ns\":");
		s = rt_fmt_u64_prefixed(s, (uint64_t)ev->ts_ns, &p->time_prefix);
	} else {
		s = put(s, "\"ts_ns\":");
		s = rt_fmt_i64(s, ev->ts_ns);
	}
	if (p->show_pid) {
		memcpy(s, ",\"pid\":", 7);
		s = rt_fmt_i64(s + 7, ev->pid);
	}
	if (item->flags & RT_ITEM_NO_OWNER) {
		s = put(s, ",\"tid\":0,\"ring\":");
		s = rt_fmt_u64(s, item->thread & ~RT_ITEM_RING_ONLY);
		s = put(s, ",\"cpu\":");
	} else {
		memcpy(s, thread->bytes, thread->length);
		s += thread->length;
	}
	if (ev->cpu < 0) {
		*s++ = '-';
		*s++ = '1';
	} else {
		s = rt_fmt_u64(s, (unsigned)ev->cpu);
	}
	if (ev->has_seq) {
		memcpy(s, ",\"seq\":", 7);
		s = rt_fmt_u64_prefixed(s + 7, ev->seq,
					&p->seq_prefix[item->thread % RT_JSON_SEQ_PREFIXES]);
	}
	return s;
}

static const struct rt_fragment unknown_thread = {(char *)",\"tid\":0,\"cpu\":", 15};

/* The rendered thread of an item: a thread the reader does not know shows as tid 0. */
static const struct rt_fragment *thread_of(const struct rt_json_printer *p,
					   const struct rt_item *item)
{
	return item->thread < p->reader->thread_count ? &p->fragments->threads[item->thread]
						      : &unknown_thread;
}

/* Inline too, for the same reason. */
static inline __attribute__((always_inline)) void print_event(struct rt_json_printer *p,
							      const struct rt_item *item,
							      const struct rt_event *ev,
							      const char *opening)
{
	const struct rt_site *site = ev->site;
	static const struct rt_fragment unknown_site = {(char *)",\"args\":[", 9};
	const struct rt_fragment *thread = thread_of(p, item);
	struct rt_fragment fields = site ? site_fields(p, site, ev->site_id) : unknown_site;

	char *s = rt_out_reserve(p->out,
				 LINE_FIXED_MAX + LOST_FIELDS_MAX + thread->length + fields.length);
	s = put_head(p, s, item, ev, opening, thread);
	if (ev->metadata_lost)
		s = put(s, ",\"metadata\":\"lost\"");
	if (!site) {
		s = put(s, ",\"site_id\":");
		s = rt_fmt_u64(s, ev->site_id);
	}
	memcpy(s, fields.bytes, fields.length);
	s += fields.length;
	/* of a lost site, the record's raw words (event.h): never signed */
	s = rt_event_put_args(s, ev);
	memcpy(s, "]}\n", 3);
	rt_out_commit(p->out, s + 3);
}

static void print_loss(struct rt_json_printer *p, const struct rt_item *item,
		       const struct rt_event *ev)
{
	const char *note = ev->note;
	char *start = rt_out_reserve(
	    p->out, 512 + RT_JSON_ESCAPED_MAX(sizeof(((struct rt_damage *)0)->what)) +
			(note ? RT_JSON_ESCAPED_MAX(strlen(note)) : 0));
	char *s = put(start, "{\"kind\":\"lost\"");
	if (p->show_pid && ev->pid) {
		s = put(s, ",\"pid\":");
		s = rt_fmt_i64(s, ev->pid);
	}
	s = put(s, ",\"tid\":");
	s = rt_fmt_i64(s, ev->tid);
	s = put(s, ",\"count\":");
	s = rt_fmt_u64(s, ev->count);
	s = put(s, ",\"reason\":\"");
	s = put(s, ev->reason);
	*s++ = '"';
	const struct rt_damage *d = ev->damage;
	if (d) {
		/* where in the file, and what it was: read/damage.h */
		s = put(s, ",\"offset\":");
		s = rt_fmt_u64(s, d->offset);
		s = put(s, ",\"length\":");
		s = rt_fmt_u64(s, d->length);
		s = put(s, ",\"part\":\"");
		s = put(s, rt_damage_part_name(d->part));
		s = put(s, "\",\"what\":\"");
		s = rt_fmt_json_escaped(s, d->what, strnlen(d->what, sizeof(d->what)));
		*s++ = '"';
		if (ev->estimated)
			s = put(s, ",\"estimated\":true");
		uint64_t from, to;
		if (rt_damage_gap(d, &from, &to)) {
			s = put(s, ",\"gap_ns\":");
			s = rt_fmt_i64(s, rt_timebase_ns(&p->reader->timebase, to) -
					      rt_timebase_ns(&p->reader->timebase, from));
		}
	}
	if (ev->in_region)
		s = put(s, ",\"in_region\":true");
	if (ev->timed) {
		s = put(s, ",\"ts_ns\":");
		s = rt_fmt_i64(s, ev->ts_ns);
		if (ev->has_last) {
			s = put(s, ",\"ts_last_ns\":");
			s = rt_fmt_i64(s, ev->ts_last_ns);
		}
	} else if (item->flags & RT_ITEM_TIMED) {
		/* a source whose clock was lost: the time its timebase gives, as before */
		s = put(s, ",\"ts_ns\":");
		s = rt_fmt_i64(s, rt_timebase_ns(&p->reader->timebase, item->counter));
		if (item->loss.last_counter) {
			s = put(s, ",\"ts_last_ns\":");
			s = rt_fmt_i64(
			    s, rt_timebase_ns(&p->reader->timebase, item->loss.last_counter));
		}
	}
	if (note) {
		s = put(s, ",\"note\":\"");
		s = rt_fmt_json_escaped(s, note, strlen(note));
		*s++ = '"';
	}
	s = put(s, "}\n");
	rt_out_commit(p->out, s);
}

/* key, then "str" escaped, or null when str is NULL */
static char *put_string_or_null(char *s, const char *key, const char *str, size_t length)
{
	s = put(s, key);
	if (!str)
		return put(s, "null");
	*s++ = '"';
	s = rt_fmt_json_escaped(s, str, length);
	*s++ = '"';
	return s;
}

/*
 * An enter or exit event: {"kind":"enter",...,"depth":0,"addr":A,"call_site":C,
 * "func":"main","file":"app.c","line":12,"module":"app","offset":4660}, with
 * null for what is not known; opening NULL for "kind":"enter" or "exit".
 */
static void print_function(struct rt_json_printer *p, const struct rt_item *item,
			   const struct rt_event *ev, const char *opening)
{
	const struct rt_reader *rd = p->reader;
	const struct rt_fragment *thread = thread_of(p, item);
	const int enter = ev->kind == RT_EVENT_ENTER;
	struct rt_function_place place = {0};
	if (p->names)
		rt_function_names_find(p->names, rd, ev->addr, item->counter, &place);
	size_t func_len = place.func ? strlen(place.func) : 0;
	size_t file_len = place.file ? strlen(place.file) : 0;
	size_t module_len = place.module ? strlen(place.module) : 0;
	/* a last event keeps the fields it had as a trace event: tag and args (128 more bytes) */
	char *s = rt_out_reserve(p->out, LINE_FIXED_MAX + LOST_FIELDS_MAX + thread->length + 128 +
					     RT_JSON_ESCAPED_MAX(func_len + file_len + module_len));
	const int last_event = opening != NULL;
	if (!opening)
		opening = enter ? "{\"kind\":\"enter\"," : "{\"kind\":\"exit\",";
	s = put_head(p, s, item, ev, opening, thread);
	if (ev->metadata_lost)
		s = put(s, ",\"metadata\":\"lost\"");
	s = put(s, ",\"depth\":");
	s = rt_fmt_u64(s, ev->depth);
	s = put(s, ",\"flags\":");
	s = rt_fmt_u64(s, ev->function_flags);
	s = put(s, ",\"addr\":");
	s = rt_fmt_u64(s, ev->addr);
	s = put(s, ",\"call_site\":");
	s = rt_fmt_u64(s, ev->call_site);
	s = put_string_or_null(s, ",\"func\":", place.func, func_len);
	s = put_string_or_null(s, ",\"file\":", place.file, file_len);
	s = put(s, ",\"line\":");
	s = place.file ? rt_fmt_u64(s, place.line) : put(s, "null");
	s = put_string_or_null(s, ",\"module\":", place.module, module_len);
	s = put(s, ",\"offset\":");
	s = place.module ? rt_fmt_u64(s, place.offset) : put(s, "null");
	if (last_event) {
		/* JSON fields are only ever added: what a last event showed before stays */
		s = put(s,
			enter ? ",\"tag\":\"enter\",\"args\":[" : ",\"tag\":\"exit\",\"args\":[");
		/* the record's words as they are */
		for (unsigned i = 0; i < RT_MAX_ARGS; i++) {
			if (i)
				*s++ = ',';
			s = rt_fmt_u64(s, i < 4 ? item->args.a32[i] : item->args.a64[i - 4]);
		}
		*s++ = ']';
	}
	s = put(s, "}\n");
	rt_out_commit(p->out, s);
}

/* The longest message shown; a longer one is cut. */
#define LOG_MESSAGE_MAX 8192

/*
 * A log message: {"kind":"log",...,"level":"info","msg":"..","format":"..",
 * "file":"app.c","line":88,"func":"main"}, "damaged":true when its payload
 * did not check (msg then carries the mark); of a site whose metadata is
 * lost, "metadata":"lost" and the raw "site_id" only.
 */
static void print_log(struct rt_json_printer *p, const struct rt_item *item,
		      const struct rt_event *ev, const char *opening)
{
	const struct rt_site *site = ev->site;
	const struct rt_fragment *thread = thread_of(p, item);
	p->log_damaged += (uint64_t)ev->damaged;
	size_t strings =
	    site ? ev->msg.length + site->tag_length + site->file_length + site->func_length : 0;
	char *s = rt_out_reserve(p->out, LINE_FIXED_MAX + LOST_FIELDS_MAX + thread->length +
					     RT_JSON_ESCAPED_MAX(strings));
	s = put_head(p, s, item, ev, opening, thread);
	if (ev->metadata_lost)
		s = put(s, ",\"metadata\":\"lost\"");
	if (!site) {
		s = put(s, ",\"site_id\":");
		s = rt_fmt_u64(s, ev->site_id);
		s = put(s, "}\n");
		rt_out_commit(p->out, s);
		return;
	}
	s = put(s, ",\"level\":\"");
	s = put(s, ev->level);
	s = put_string_or_null(s, "\",\"msg\":", ev->msg.s, ev->msg.length);
	if (ev->damaged)
		s = put(s, ",\"damaged\":true");
	s = put_string_or_null(s, ",\"format\":", site->tag, site->tag_length);
	s = put_string_or_null(s, ",\"file\":", site->file, site->file_length);
	s = put(s, ",\"line\":");
	s = rt_fmt_u64(s, site->line);
	s = put_string_or_null(s, ",\"func\":", site->func, site->func_length);
	s = put(s, "}\n");
	rt_out_commit(p->out, s);
}

/* ,"path":"..", or ,"path_unknown":true,"path_why":".." (key: path or path2) */
static char *put_name(char *s, const char *key, const struct rt_fd_name *name)
{
	s = put(s, ",\"");
	s = put(s, key);
	if (name->known) {
		s = put(s, "\":\"");
		s = rt_fmt_json_escaped(s, name->name, name->name_length);
		return put(s, "\"");
	}
	s = put(s, "_unknown\":true,\"");
	s = put(s, key);
	s = put(s, "_why\":\"");
	s = put(s, name->why ? name->why : "unseen");
	return put(s, "\"");
}

static char *put_path(char *s, const char *key, const char *path, uint32_t length)
{
	s = put(s, ",\"");
	s = put(s, key);
	s = put(s, "\":\"");
	s = rt_fmt_json_escaped(s, path ? path : "", length);
	return put(s, "\"");
}

static char *put_i64(char *s, const char *key, int64_t v)
{
	s = put(s, key);
	return rt_fmt_i64(s, v);
}

/*
 * A file I/O call: {"kind":"io",...,"op":"read","fd":3,"path":"/etc/hosts",
 * "offset":0,"offset_derived":true,"size":4096,"result":516,"errno":0,
 * "dur_ns":3100} (docs/JSON.md); a payload that does not parse:
 * "malformed":true and "problem" only.
 */
static void print_io(struct rt_json_printer *p, const struct rt_item *item,
		     const struct rt_event *ev_head, const char *opening)
{
	const struct rt_fragment *thread = thread_of(p, item);
	const struct rt_io_shown shown = ev_head->io;
	const struct rt_io_event *ev = &shown.ev;
	size_t strings = (size_t)ev->path_length + ev->path2_length + shown.names.fd.name_length +
			 shown.names.fd2.name_length;
	char *s = rt_out_reserve(p->out, LINE_FIXED_MAX + LOST_FIELDS_MAX + thread->length + 512 +
					     RT_JSON_ESCAPED_MAX(strings));
	s = put_head(p, s, item, ev_head, opening, thread);
	if (!shown.ok) {
		s = put(s, ",\"malformed\":true,\"problem\":\"");
		s = put(s, shown.problem ? shown.problem : "?");
		s = put(s, "\"}\n");
		rt_out_commit(p->out, s);
		return;
	}
	s = put(s, ",\"op\":\"");
	s = put(s, rt_io_op_json_name(ev->op));
	s = put(s, "\"");
	if (ev->fd >= 0)
		s = put_i64(s, ",\"fd\":", ev->fd);
	if (rt_io_shows_named_path(ev))
		s = put_path(s, "path", ev->path, ev->path_length);
	else
		s = put_name(s, "path", &shown.names.fd);
	if (ev->op == RT_IO_RENAME)
		s = put_path(s, "path2", ev->path2, ev->path2_length);
	if (ev->op == RT_IO_COPY_FILE_RANGE || ev->op == RT_IO_SENDFILE) {
		if (ev->flags & RT_IO_F_AUX)
			s = put_i64(s, ",\"fd2\":", (int32_t)ev->aux[0]);
		s = put_name(s, "path2", &shown.names.fd2);
	}
	if (ev->op == RT_IO_DUP && !rt_io_event_failed(ev))
		s = put_i64(s, ",\"fd2\":", ev->result);
	if (ev->flags & RT_IO_F_OFFSET) {
		s = put_i64(s, ",\"offset\":", ev->offset);
	} else if (shown.names.offset_derived) {
		s = put_i64(s, ",\"offset\":", shown.names.offset);
		s = put(s, ",\"offset_derived\":true");
	}
	if (ev->flags & RT_IO_F_AUX) {
		s = put(s, ",\"aux\":[");
		s = rt_fmt_u64(s, ev->aux[0]);
		*s++ = ',';
		s = rt_fmt_u64(s, ev->aux[1]);
		*s++ = ']';
	}
	if (ev->flags & RT_IO_F_STREAM) {
		s = put(s, ",\"stream\":");
		s = rt_fmt_u64(s, ev->stream);
	}
	s = put_i64(s, ",\"size\":", ev->size);
	s = put_i64(s, ",\"result\":", ev->result);
	const int failed = rt_io_event_failed(ev);
	s = put_i64(s, ",\"errno\":", failed ? -ev->result : 0);
	if (failed) {
		const char *name = rt_io_errno_name((int)-ev->result);
		s = put(s, ",\"error\":\"");
		s = name ? put(s, name) : rt_fmt_i64(put(s, "errno "), -ev->result);
		s = put(s, "\"");
	}
	if (ev->flags & RT_IO_F_PATH_CUT)
		s = put(s, ",\"path_cut\":true");
	if (shown.has_duration)
		s = put_i64(s, ",\"dur_ns\":", shown.dur_ns);
	s = put(s, "}\n");
	rt_out_commit(p->out, s);
}

/*
 * The item as an event, in the builder's own.  An enter or exit is named
 * with the printer's own function names (none: raw addresses), never the
 * builder's (it is told to leave them); its words are the span tracker's
 * reading of them.  An I/O call is shown as the printer's own descriptor
 * view takes it: a last event does not move it (rt_event_build_again), and
 * dump feeds it the calls it does not show.  Inline in both callers below:
 * a run of items pays for one call, not one per item.
 */
static inline __attribute__((always_inline)) void print_item(struct rt_json_printer *p,
							     const struct rt_item *item)
{
	const struct rt_event *ev = rt_event_build_kept(p->events, (uint32_t)p->source, item);
	/* nearly every event: a branch before the jump on kind */
	if (__builtin_expect(ev->kind == RT_EVENT_TRACE, 1)) {
		print_event(p, item, ev, "{\"kind\":\"trace\",");
		return;
	}
	switch (ev->kind) {
	case RT_EVENT_IO:
		print_io(p, item, ev, "{\"kind\":\"io\",");
		break;
	case RT_EVENT_LOG:
		print_log(p, item, ev, "{\"kind\":\"log\",");
		break;
	case RT_EVENT_LOST:
		print_loss(p, item, ev);
		break;
	case RT_EVENT_ENTER:
	case RT_EVENT_EXIT:
		print_function(p, item, ev, NULL);
		break;
	case RT_EVENT_TRACE: /* printed above */
		break;
	}
}

void rt_json_print_item(struct rt_json_printer *p, const struct rt_item *item)
{
	print_item(p, item);
}

void rt_json_print_items(struct rt_json_printer *p, const struct rt_item *items, size_t n)
{
	for (size_t i = 0; i < n; i++)
		print_item(p, &items[i]);
}

void rt_json_print_last_event(struct rt_json_printer *p, const struct rt_item *item)
{
	struct rt_event ev;
	rt_event_build_again(p->events, (uint32_t)p->source, item, &ev);
	switch (ev.kind) {
	case RT_EVENT_IO:
		print_io(p, item, &ev, "{\"kind\":\"last_event\",\"event\":\"io\",");
		break;
	case RT_EVENT_LOG:
		print_log(p, item, &ev, "{\"kind\":\"last_event\",");
		break;
	/* a function's enter or exit: its name, as the event itself is shown */
	case RT_EVENT_ENTER:
		print_function(p, item, &ev, "{\"kind\":\"last_event\",\"event\":\"enter\",");
		break;
	case RT_EVENT_EXIT:
		print_function(p, item, &ev, "{\"kind\":\"last_event\",\"event\":\"exit\",");
		break;
	case RT_EVENT_TRACE:
	case RT_EVENT_LOST:
		print_event(p, item, &ev, "{\"kind\":\"last_event\",");
		break;
	}
}
