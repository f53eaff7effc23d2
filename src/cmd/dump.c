/*
 * dump.c - `ringtrace dump`: every event of an arena, or of several arenas
 * and trace files, merged by time, with every loss in its place, then each
 * thread's last event.  One arena alone is printed from its reader; any
 * other inputs go through a trace set (read/trace_set.h), in two passes:
 * one to count (the summary line, --tail), one to print.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/arena_names.h"
#include "common/output.h"
#include "common/parse.h"
#include "event/event.h"
#include "present/hexdump.h"
#include "present/json.h"
#include "present/text.h"
#include "read/arena_cursor.h"
#include "read/arena_list.h"
#include "read/merge.h"
#include "read/trace_set.h"

#define DUMP_USAGE                                                                                 \
	"ringtrace dump [--json] [--last] [--last-events] [--tail N] [--tid "                      \
	"TID] " RT_CMD_FILTER_USAGE " [--hexdump] [--debug-dir DIR]... INPUT..."

void rt_cmd_dump_help(FILE *to)
{
	fprintf(
	    to,
	    "usage: " DUMP_USAGE "\n"
	    "\n"
	    "Print the events of arenas and trace files (or directories of them),\n"
	    "merged by time, one per line:\n"
	    "  [seconds.nanoseconds][cpu C tid T name] : arguments in hex : (time since the\n"
	    "  previous event) : file:function:line (tag)\n"
	    "Every loss is one line in its place: events overwritten, dropped, torn or\n"
	    "damaged, with the time span when it is known.  The last recorded event of\n"
	    "every thread follows.  Files of one recording (OUT.000000, OUT.000001...)\n"
	    "are read as one; several recordings or processes are merged by time, and\n"
	    "each event then names its process: [cpu C pid P tid T name].\n"
	    "A damaged arena is read as far as it can be: every region that does not\n"
	    "parse is a '--- damaged: bytes A..B ---' line, and the exit status is 3.\n"
	    "\n"
	    "Options:\n"
	    "  --json          one JSON object per line: kind trace, lost or last_event\n"
	    "  --last          the last arena: ARENA" RT_ARENA_LAST_SUFFIX
	    ", kept from the previous run at\n"
	    "                  this path (the one that crashed, say)\n"
	    "  --last-events   only the last recorded event of every thread\n"
	    "  --tail N        only the last N events (and the losses among them)\n"
	    "  --tid TID       only the thread TID\n" RT_CMD_FILTER_HELP
	    "                  (-F, -N: a call's enter and exit and all its thread\n"
	    "                  recorded between them; --last-events: only --tid and\n"
	    "                  --pid apply)\n"
	    "  --hexdump       only the damaged regions of one arena, as an annotated hex dump\n"
	    "  --debug-dir DIR look for separate debug files in DIR too (up to 16 times):\n"
	    "                  function enter and exit events are named from the module\n"
	    "                  loaded at their address, its symbols and DWARF lines\n"
	    "  --help          this text\n");
}

static int parse_options(int argc, char **argv, struct rt_dump_options *o)
{
	int rc;
	const char *value;
	int positional_only = 0;
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			if (!o->path)
				o->path = arg;
			argv[o->path_count++] = argv[i]; /* the inputs, packed at the front */
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_dump_help(stdout);
			return -1;
		} else if (strcmp(arg, "--json") == 0) {
			o->json = 1;
		} else if (strcmp(arg, "--last") == 0) {
			o->last_arena = 1;
		} else if (strcmp(arg, "--last-events") == 0) {
			o->last_events_only = 1;
		} else if (strcmp(arg, "--hexdump") == 0) {
			o->hexdump = 1;
		} else if ((rc = rt_cmd_option(argc, argv, &i, "--tail", &value)) != 0) {
			if (rc < 0 || rt_parse_u64(value, &o->tail) != 0)
				return rt_cmd_usage_error("dump", DUMP_USAGE,
							  "--tail needs a number of events");
			o->has_tail = 1;
		} else if ((rc = rt_cmd_filter_option(argc, argv, &i, "dump", DUMP_USAGE,
						      &o->filter)) != 0 ||
			   (rc = rt_cmd_reading_option(argc, argv, &i, "dump", DUMP_USAGE,
						       &o->has_tid, &o->tid, o->debug_dirs,
						       &o->debug_dir_count)) != 0) {
			/* 1: taken; else a usage error already said */
			if (rc != 1)
				return rc;
		} else {
			return rt_cmd_usage_error("dump", DUMP_USAGE, "unknown option '%s'", arg);
		}
	}
	if (!o->path)
		return rt_cmd_usage_error("dump", DUMP_USAGE, "which arena or trace file?");
	o->paths = argv;
	if (o->last_arena && o->path_count > 1)
		return rt_cmd_usage_error("dump", DUMP_USAGE, "--last reads one arena");
	if (o->hexdump && o->json)
		return rt_cmd_usage_error("dump", DUMP_USAGE, "--hexdump is text only, not --json");
	if (o->hexdump && rt_item_filter_wanted(&o->filter))
		return rt_cmd_usage_error("dump", DUMP_USAGE,
					  "--hexdump shows damaged bytes, no events: no filter");
	return rt_cmd_filter_check("dump", DUMP_USAGE, &o->filter);
}

/* What the options select: the sources to merge and what they add up to. */
struct selection {
	struct rt_merge_source *sources;
	size_t source_count;
	struct rt_arena_cursor *cursors; /* one per selected thread, read a window at a time */
	size_t cursor_count;
	struct rt_item *losses; /* the reader's, or a filtered copy */
	int losses_owned;
	struct rt_counts counts;
	uint32_t threads_with_events;
	int64_t last_ns;
	int have_last;
	/* sources whose clock metadata was lost: their newest raw counter apart */
	uint64_t last_raw;
	int have_raw;
};

/* Whether --tid and --pid keep thread tid of rd's process. */
static int wanted(const struct rt_dump_options *o, const struct rt_reader *rd, int32_t tid)
{
	int pid_kept = !o->filter.pid_count;
	for (size_t i = 0; i < o->filter.pid_count; i++)
		pid_kept |= o->filter.pids[i] == rd->header.pid;
	return pid_kept && (!o->has_tid || tid == o->tid);
}

/* A selected thread: its counts (when add_counts), and its last event's time. */
static void select_thread(struct selection *sel, const struct rt_reader *rd,
			  const struct rt_reader_thread *t, int add_counts)
{
	const struct rt_counts *c = &t->counts;
	if (add_counts) {
		sel->counts.present += c->present;
		sel->counts.overwritten += c->overwritten;
		sel->counts.dropped += c->dropped;
		sel->counts.torn += c->torn;
		sel->counts.damaged += c->damaged;
	}
	sel->threads_with_events += c->present > 0;
	if (t->last.kind && rd->raw_time) {
		if (!sel->have_raw || t->last.counter > sel->last_raw)
			sel->last_raw = t->last.counter;
		sel->have_raw = 1;
	} else if (t->last.kind) {
		int64_t ns = rt_timebase_ns(&rd->timebase, t->last.counter);
		if (!sel->have_last || ns > sel->last_ns)
			sel->last_ns = ns;
		sel->have_last = 1;
	}
}

static int select_items(const struct rt_reader *rd, const struct rt_dump_options *o,
			struct selection *sel)
{
	memset(sel, 0, sizeof(*sel));
	sel->sources = calloc((size_t)rd->thread_count + 1, sizeof(*sel->sources));
	sel->cursors = calloc((size_t)rd->thread_count + 1, sizeof(*sel->cursors));
	if (!sel->sources || !sel->cursors)
		return -ENOMEM;
	size_t reading = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++)
		reading += wanted(o, rd, rd->threads[i].tid) && rd->threads[i].item_count;
	const size_t window = rt_arena_window_for(reading);
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		if (!wanted(o, rd, t->tid))
			continue;
		struct rt_arena_cursor *c = &sel->cursors[sel->cursor_count];
		if (rt_arena_cursor_init(c, rd, i, window))
			return -ENOMEM;
		sel->cursor_count++;
		sel->sources[sel->source_count].refill = rt_arena_cursor_refill;
		sel->sources[sel->source_count].state = c;
		sel->source_count++;
		select_thread(sel, rd, t, 1);
	}
	size_t loss_count = rd->loss_count;
	if (o->has_tid) {
		sel->losses = malloc((rd->loss_count + 1) * sizeof(*sel->losses));
		if (!sel->losses)
			return -ENOMEM;
		sel->losses_owned = 1;
		loss_count = 0;
		for (size_t i = 0; i < rd->loss_count; i++)
			if (rd->losses[i].tid == o->tid)
				sel->losses[loss_count++] = rd->losses[i];
	} else if (!wanted(o, rd, 0)) {
		loss_count = 0; /* --pid: another process's arena */
	} else {
		sel->losses = rd->losses;
		sel->counts = rd->totals;
	}
	sel->sources[sel->source_count].items = sel->losses;
	sel->sources[sel->source_count].count = loss_count;
	sel->source_count++;
	return 0;
}

static void free_selection(struct selection *sel)
{
	for (size_t i = 0; i < sel->cursor_count; i++)
		rt_arena_cursor_free(&sel->cursors[i]);
	free(sel->cursors);
	free(sel->sources);
	if (sel->losses_owned)
		free(sel->losses);
}

/* The printers behind one interface, so the walk below is written once. */
struct printer {
	int json;
	struct rt_text_printer text;
	struct rt_json_printer jsonp;
};

static void print_item(struct printer *pr, uint32_t source, const struct rt_item *item)
{
	if (pr->json) {
		/* a call per event only when the source changes: most runs have one */
		if (source != pr->jsonp.source)
			rt_json_printer_source(&pr->jsonp, source);
		rt_json_print_item(&pr->jsonp, item);
	} else {
		rt_text_printer_source(&pr->text, source);
		rt_text_print_item(&pr->text, item);
	}
}

/* A run of one source's items, every one shown. */
static void print_run(struct printer *pr, uint32_t source, const struct rt_item *run, size_t n)
{
	if (pr->json) {
		if (source != pr->jsonp.source)
			rt_json_printer_source(&pr->jsonp, source);
		rt_json_print_items(&pr->jsonp, run, n);
	} else {
		rt_text_printer_source(&pr->text, source);
		for (size_t i = 0; i < n; i++)
			rt_text_print_item(&pr->text, &run[i]);
	}
}

/* The event builder the printer prints from (event/event.h). */
static struct rt_event_builder *events_of(const struct printer *pr)
{
	return pr->json ? pr->jsonp.events : pr->text.events;
}

/* An I/O call not shown: the descriptor names it gives still count for later ones. */
static void take_io(struct printer *pr, uint32_t source, const struct rt_item *item)
{
	rt_event_builder_take_io(events_of(pr), source, item);
}

/* The time line of one arena (its selection merged) or of a trace set. */
struct walk {
	struct rt_trace_set *set; /* or: */
	const struct rt_reader *rd;
	const struct selection *sel;
	struct rt_merge merge;
	int merging;
	int32_t tid;	 /* set: --tid, or 0 */
	int64_t from_ns; /* set: where it may begin (--since), or INT64_MIN */
};

static int walk_start(struct walk *w)
{
	if (w->set)
		return rt_trace_set_start_from(w->set, w->tid, w->from_ns);
	if (w->merging)
		rt_merge_free(&w->merge);
	/* a second walk (--tail counts first) reads every thread from its start again */
	for (size_t i = 0; i < w->sel->cursor_count; i++)
		rt_arena_cursor_rewind(&w->sel->cursors[i]);
	int rc = rt_merge_init(&w->merge, w->sel->sources, w->sel->source_count);
	w->merging = !rc;
	return rc;
}

static const struct rt_item *walk_next(struct walk *w, uint32_t *source,
				       const struct rt_reader **rd)
{
	if (!w->set) {
		*source = 0;
		*rd = w->rd;
		return rt_merge_next(&w->merge);
	}
	const struct rt_item *item = rt_trace_set_next(w->set, source);
	if (item)
		*rd = w->set->sources[*source].reader;
	return item;
}

/*
 * The next items one source gives in a row (read/merge.h): how many, 0 at
 * the end.  A run costs the walk one call where an item would cost one.
 */
static size_t walk_run(struct walk *w, uint32_t *source, const struct rt_reader **rd,
		       const struct rt_item **items)
{
	if (!w->set) {
		*source = 0;
		*rd = w->rd;
		return rt_merge_run(&w->merge, items);
	}
	const size_t n = rt_trace_set_run(w->set, source, items);
	if (n)
		*rd = w->set->sources[*source].reader;
	return n;
}

/* Of the run walk_run gave, only the first n were taken. */
static void walk_took(struct walk *w, size_t n)
{
	if (w->set)
		rt_trace_set_took(w->set, n);
	else
		rt_merge_took(&w->merge, n);
}

static int walk_end(struct walk *w)
{
	if (w->merging)
		rt_merge_free(&w->merge);
	w->merging = 0;
	return w->set ? rt_trace_set_error(w->set) : 0;
}

/* The events the filter keeps, counted in a walk of their own (for --tail). */
static int count_kept(struct walk *w, struct rt_item_filter *filter, uint64_t *events)
{
	int rc = walk_start(w);
	const struct rt_item *item;
	uint32_t source;
	const struct rt_reader *rd;
	*events = 0;
	while (!rc && !rt_item_filter_done(filter) && (item = walk_next(w, &source, &rd))) {
		int verdict = rt_item_filter_check(filter, source, rd, item);
		if (verdict < 0)
			rc = verdict;
		else if (verdict == RT_FILTER_KEEP)
			*events += rt_item_kind_is_event(item->kind);
	}
	int end = walk_end(w);
	rt_item_filter_reset(filter);
	return rc ? rc : end;
}

/* The events and losses of the walk that the options keep. */
static int print_events(struct printer *pr, const struct rt_dump_options *o,
			const struct selection *sel, struct walk *w,
			struct rt_function_names *names)
{
	struct rt_item_filter *filter = NULL;
	if (rt_item_filter_wanted(&o->filter) && !(filter = rt_item_filter_new(&o->filter, names)))
		return -ENOMEM;
	uint64_t events = sel->counts.present;
	int rc = filter && o->has_tail ? count_kept(w, filter, &events) : 0;
	if (!rc)
		rc = walk_start(w);
	/* --tail N: walk past all but the last N events (losses before them go too) */
	uint64_t skip = o->has_tail && events > o->tail ? events - o->tail : 0;
	const struct rt_item *run;
	uint32_t source;
	const struct rt_reader *rd;
	size_t n;
	while (!rc && !(filter && rt_item_filter_done(filter)) &&
	       (n = walk_run(w, &source, &rd, &run)) > 0) {
		if (!filter && !skip) {
			/* nothing left out: no question per item */
			print_run(pr, source, run, n);
			continue;
		}
		for (size_t i = 0; i < n; i++) {
			const struct rt_item *item = &run[i];
			int verdict = filter ? rt_item_filter_check(filter, source, rd, item)
					     : RT_FILTER_KEEP;
			if (verdict < 0) {
				rc = verdict;
			} else if (verdict == RT_FILTER_KEEP && !skip) {
				print_item(pr, source, item);
			} else {
				if (verdict == RT_FILTER_KEEP)
					skip -= rt_item_kind_is_event(item->kind);
				/* left out, or before the tail: its descriptors still move */
				if (item->kind == RT_ITEM_IO)
					take_io(pr, source, item);
			}
			/* stopped within the run: the walk took what was seen, as one by one */
			if (rc || (filter && rt_item_filter_done(filter))) {
				walk_took(w, i + 1);
				break;
			}
		}
	}
	int end = walk_end(w);
	rt_item_filter_free(filter);
	return rc ? rc : end;
}

static void print_last_events(struct printer *pr, const struct rt_reader *rd,
			      const struct rt_dump_options *o, const struct selection *sel)
{
	if (!pr->json)
		rt_text_print_last_heading(&pr->text);
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		if (!wanted(o, rd, t->tid) || !t->last.kind)
			continue;
		if (pr->json)
			rt_json_print_last_event(&pr->jsonp, &t->last);
		else
			rt_text_print_last_event(&pr->text, &t->last);
	}
	if (!pr->json && sel->have_last)
		rt_text_print_last_timestamp(&pr->text, sel->last_ns);
	else if (!pr->json && sel->have_raw)
		rt_text_print_last_raw(&pr->text, sel->last_raw);
}

/* Log messages shown marked because their payload did not check: damage too. */
static uint64_t log_damaged_seen;

static void note_log_damage(const struct printer *pr)
{
	uint64_t n = pr->json ? pr->jsonp.log_damaged : pr->text.log_damaged;
	if (n)
		fprintf(stderr,
			"ringtrace: %llu log message%s with a damaged payload, shown marked\n",
			(unsigned long long)n, n == 1 ? "" : "s");
	log_damaged_seen += n;
	/* an I/O record that does not parse is damage too, shown as malformed */
	uint64_t io = rt_event_builder_io_malformed(events_of(pr));
	if (io)
		fprintf(stderr, "ringtrace: %llu malformed I/O record%s, shown as such\n",
			(unsigned long long)io, io == 1 ? "" : "s");
	log_damaged_seen += io;
}

int rt_cmd_dump_print(const struct rt_reader *rd, const struct rt_dump_options *o,
		      struct rt_out *out)
{
	struct selection sel;
	struct printer pr;
	int rc;

	if (o->hexdump)
		return rt_hexdump_print(out, rd, RT_HEXDUMP_REGION_MAX, RT_HEXDUMP_TOTAL_MAX);
	memset(&pr, 0, sizeof(pr));
	pr.json = o->json;
	rc = select_items(rd, o, &sel);
	if (!rc)
		rc = pr.json ? rt_json_printer_init(&pr.jsonp, out, rd)
			     : rt_text_printer_init(&pr.text, out, rd);
	struct rt_function_names *names = rt_function_names_new(o->debug_dirs, o->debug_dir_count);
	if (!rc && !names)
		rc = -ENOMEM;
	pr.text.names = pr.jsonp.names = names;
	if (!rc) {
		if (!pr.json && !o->last_events_only)
			rt_text_print_summary(&pr.text, &sel.counts, sel.threads_with_events);
		struct walk w = {.rd = rd, .sel = &sel};
		if (!o->last_events_only)
			rc = print_events(&pr, o, &sel, &w, names);
		if (!rc)
			print_last_events(&pr, rd, o, &sel);
		note_log_damage(&pr);
		if (pr.json)
			rt_json_printer_free(&pr.jsonp);
		else
			rt_text_printer_free(&pr.text);
	}
	rt_function_names_free(names);
	free_selection(&sel);
	return rc;
}

/* ---- several inputs: a trace set ---------------------------------------- */

/* What --tid and --pid select of the counts: their threads' in every source, or everything. */
static void set_selection(const struct rt_trace_set *set, const struct rt_dump_options *o,
			  struct selection *sel)
{
	memset(sel, 0, sizeof(*sel));
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_reader *rd = set->sources[i].reader;
		for (uint32_t k = 0; k < rd->thread_count; k++) {
			const struct rt_reader_thread *t = &rd->threads[k];
			if (!wanted(o, rd, t->tid))
				continue;
			select_thread(sel, rd, t, o->has_tid || o->filter.pid_count);
		}
	}
	if (!o->has_tid && !o->filter.pid_count)
		sel->counts = set->totals;
}

static void print_set_last_events(struct printer *pr, const struct rt_trace_set *set,
				  const struct rt_dump_options *o, const struct selection *sel)
{
	if (!pr->json)
		rt_text_print_last_heading(&pr->text);
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_reader *rd = set->sources[i].reader;
		for (uint32_t k = 0; k < rd->thread_count; k++) {
			const struct rt_reader_thread *t = &rd->threads[k];
			if (!wanted(o, rd, t->tid) || !t->last.kind)
				continue;
			if (pr->json) {
				rt_json_printer_source(&pr->jsonp, i);
				rt_json_print_last_event(&pr->jsonp, &t->last);
			} else {
				rt_text_printer_source(&pr->text, i);
				rt_text_print_last_event(&pr->text, &t->last);
			}
		}
	}
	if (!pr->json && sel->have_last)
		rt_text_print_last_timestamp(&pr->text, sel->last_ns);
	else if (!pr->json && sel->have_raw)
		rt_text_print_last_raw(&pr->text, sel->last_raw);
}

/*
 * Whether the counts can come from the walk that prints: JSON shows them
 * only after the events (each thread's last event, the damage line), and a
 * walk of everything reads every item a count reads.
 */
static int counts_after_walk(const struct rt_dump_options *o)
{
	return o->json && !o->last_events_only && !o->has_tail && !o->has_tid &&
	       !rt_item_filter_wanted(&o->filter);
}

int rt_cmd_dump_set_print(struct rt_trace_set *set, const struct rt_dump_options *o,
			  struct rt_out *out)
{
	struct selection sel;
	struct printer pr;
	const int later = counts_after_walk(o);
	int rc = 0;
	if (later)
		rt_trace_set_count_while_reading(set);
	else if ((rc = rt_trace_set_count(set)) != 0)
		return rc;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	const struct rt_reader **readers = calloc(set->source_count + 1, sizeof(*readers));
	if (!readers)
		return -ENOMEM;
	for (size_t i = 0; i < set->source_count; i++)
		readers[i] = set->sources[i].reader;
	memset(&pr, 0, sizeof(pr));
	pr.json = o->json;
	set_selection(set, o, &sel);
	rc = pr.json ? rt_json_printer_init_sources(&pr.jsonp, out, readers, set->source_count)
		     : rt_text_printer_init_sources(&pr.text, out, readers, set->source_count);
	if (rc) {
		free(readers);
		return -ENOMEM;
	}
	pr.jsonp.show_pid = rt_trace_set_multi_process(set);
	pr.text.show_pid = rt_trace_set_multi_process(set);
	/* a process forked from or forking a traced one shares file positions with it */
	for (size_t i = 0; i < set->source_count; i++) {
		if (!rt_trace_set_shares_files(set, i))
			continue;
		rt_event_builder_forked(events_of(&pr), i);
	}
	struct rt_function_names *names = rt_function_names_new(o->debug_dirs, o->debug_dir_count);
	pr.text.names = pr.jsonp.names = names; /* NULL: addresses stay raw */
	if (!pr.json && !o->last_events_only)
		rt_text_print_summary(&pr.text, &sel.counts, sel.threads_with_events);
	struct walk w = {.set = set,
			 .tid = o->has_tid ? o->tid : 0,
			 .from_ns = rt_item_filter_from_ns(&o->filter)};
	if (!o->last_events_only)
		rc = print_events(&pr, o, &sel, &w, names);
	if (!rc && later && !rt_trace_set_counted_while_reading(set))
		rc =
		    rt_trace_set_count(set); /* a walk cut short: the counts of a pass of its own */
	if (!rc && later)
		set_selection(set, o, &sel);
	if (!rc)
		print_set_last_events(&pr, set, o, &sel);
	note_log_damage(&pr);
	if (pr.json)
		rt_json_printer_free(&pr.jsonp);
	else
		rt_text_printer_free(&pr.text);
	rt_function_names_free(names);
	free(readers);
	return rc;
}

/*
 * Whether the input is one arena alone (or one file that is no trace file:
 * the arena reader says what is wrong with it): then its reader prints it.
 */
static int one_arena(const struct rt_dump_options *o)
{
	struct stat st;
	if (o->path_count != 1 || (stat(o->path, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	return rt_input_kind_of(o->path) != RT_INPUT_TRACE;
}

static int print_set(struct rt_trace_set *set, const void *options, struct rt_out *out)
{
	return rt_cmd_dump_set_print(set, options, out);
}

static int dump_set(const struct rt_dump_options *o)
{
	if (o->hexdump)
		return rt_cmd_usage_error("dump", DUMP_USAGE, "--hexdump reads one arena");
	/* counted as it is printed (counts_after_walk): nothing to count while opening */
	int status = counts_after_walk(o)
			 ? rt_cmd_print_set(o->paths, o->path_count, print_set, o)
			 : rt_cmd_print_set_and_count(o->paths, o->path_count, print_set, o);
	return status == RT_EXIT_OK && log_damaged_seen ? RT_EXIT_DAMAGED : status;
}

int rt_cmd_dump(int argc, char **argv)
{
	struct rt_dump_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? RT_EXIT_OK : rc;
	char *last = NULL;
	if (o.last_arena) {
		if (!(last = rt_arena_last_path(o.path))) {
			fprintf(stderr, "ringtrace: out of memory\n");
			return RT_EXIT_FAILURE;
		}
		o.path = last;
		if (o.paths) /* always, once parse_options accepted a path */
			o.paths[0] = last;
	}
	if (!one_arena(&o)) {
		rc = dump_set(&o);
		free(last);
		return rc;
	}

	struct rt_reader *rd;
	struct rt_read_error error;
	if (rt_reader_open(o.path, &rd, &error) != 0) {
		rt_cmd_report_open_error(o.path, &error);
		free(last);
		return RT_EXIT_USAGE;
	}
	struct rt_out out;
	if (rt_out_open(&out, STDOUT_FILENO) != 0) {
		rt_reader_close(rd);
		free(last);
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	rc = rt_cmd_dump_print(rd, &o, &out);
	int status = rt_cmd_finish_output(rt_out_close(&out));
	if (!rc)
		status = rt_cmd_damage_status(rd, o.path, status);
	if (!rc && status == RT_EXIT_OK && log_damaged_seen)
		status = RT_EXIT_DAMAGED;
	rt_reader_close(rd);
	if (rc) {
		fprintf(stderr, "ringtrace: %s: %s\n", rt_escaped(o.path), strerror(-rc));
		status = RT_EXIT_FAILURE;
	}
	free(last);
	return status;
}
