/*
 * replay.c - `ringtrace replay`: the function calls of every thread as an
 * indented tree, each call with its duration, and the trace events and
 * losses at their place among them.
 *
 * Lines come in time order, every line with its thread: one pass over the
 * merged time line (read/trace_set.h) and a stack per thread
 * (present/call_tree.h), so memory never grows with the number of events,
 * and threads that ran at the same time show as they did.  --tid keeps one
 * thread: its tree alone.  A call's line is written once the thread's next
 * item says whether it has callees: none makes it one line "func();" with
 * its duration, else "func() {" opens it and "} \/\* func \*\/" closes it with
 * its duration.  -t and -D read the tree through present/call_limits.h: the
 * calls they hide never reach the view, and a call shown for -t reaches it
 * once it is known to last long enough, its line then.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/output.h"
#include "common/parse.h"
#include "decode/log_args.h"
#include "present/call_tree.h"
#include "present/io_view.h"
#include "present/item_filter.h"
#include "read/trace_set.h"
#include "symbols/function_names.h"

#define REPLAY_USAGE                                                                               \
	"ringtrace replay [--tid TID] " RT_CMD_FILTER_USAGE " " RT_CMD_CALL_LIMITS_USAGE           \
	" [--full-names] [--debug-dir DIR]... "                                                    \
	"INPUT..."
#define NAME_MAX_BYTES 512
#define INDENT_MAX 256 /* levels shown by indentation; deeper ones say their level */

void rt_cmd_replay_help(FILE *to)
{
	fprintf(to, "usage: " REPLAY_USAGE "\n"
		    "\n"
		    "Show the function calls recorded by programs built with\n"
		    "-finstrument-functions as an indented tree per thread, in time order:\n"
		    "  DURATION [TID] | func() {\n"
		    "  DURATION [TID] |   leaf();\n"
		    "  DURATION [TID] | } /* func */\n"
		    "A call without callees is one line; the others open with '{' and close\n"
		    "with '}' and their duration.  Trace events and losses are comment lines\n"
		    "'/* ... */' at their place.  Calls left open when the trace ends are\n"
		    "marked 'not returned', calls whose exit is missing (closed by the depth\n"
		    "of a later event) 'exit not recorded', exits whose enter is missing\n"
		    "'enter not recorded'.  Calls that never returned by themselves are\n"
		    "closed where the recording library noticed: 'unwound' (left by longjmp\n"
		    "or an exception), 'thread ended' (pthread_exit, cancellation) and\n"
		    "'open at exit()'.  With several processes the thread column is\n"
		    "[PID/TID].  C++ functions are named short, their scopes and name\n"
		    "('std::sort'); --full-names shows the whole signature.  Exit status 3\n"
		    "when an input was damaged.\n"
		    "\n"
		    "Options:\n"
		    "  --tid TID       only the thread TID\n" RT_CMD_FILTER_HELP
		    "                  (the calls shown are indented from the outermost one)\n");
	fputs(RT_CMD_CALL_LIMITS_HELP
	      "                  -t and -D hide calls only: trace events, log messages, I/O\n"
	      "                  calls and losses stay, under the innermost call shown.  A\n"
	      "                  call is known to last TIME at its end, or once its thread\n"
	      "                  records an event TIME after its enter: its line is written\n"
	      "                  then, after what it recorded before (as in a trace of\n"
	      "                  'record -t')\n",
	      to);
	fprintf(to, "  --full-names    C++ functions with their whole signature: return type,\n"
		    "                  template arguments, parameters\n"
		    "  --debug-dir DIR look for separate debug files in DIR too (up to 16 times)\n"
		    "  --help          this text\n");
}

struct replay_options {
	int has_tid;
	int32_t tid;
	int full_names;
	struct rt_item_filter_options filter;
	struct rt_call_limits limits;
	char **paths;
	size_t path_count;
	const char *debug_dirs[RT_CMD_DEBUG_DIRS_MAX];
	size_t debug_dir_count;
};

static int parse_options(int argc, char **argv, struct replay_options *o)
{
	int rc, positional_only = 0;
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			argv[o->path_count++] = argv[i];
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_replay_help(stdout);
			return -1;
		} else if (strcmp(arg, "--full-names") == 0) {
			o->full_names = 1;
		} else if ((rc = rt_cmd_filter_option(argc, argv, &i, "replay", REPLAY_USAGE,
						      &o->filter)) != 0 ||
			   (rc = rt_cmd_call_limit_option(argc, argv, &i, "replay", REPLAY_USAGE,
							  &o->limits)) != 0 ||
			   (rc = rt_cmd_reading_option(argc, argv, &i, "replay", REPLAY_USAGE,
						       &o->has_tid, &o->tid, o->debug_dirs,
						       &o->debug_dir_count)) != 0) {
			/* 1: taken; else a usage error already said */
			if (rc != 1)
				return rc;
		} else {
			return rt_cmd_usage_error("replay", REPLAY_USAGE, "unknown option '%s'",
						  arg);
		}
	}
	if (!o->path_count)
		return rt_cmd_usage_error("replay", REPLAY_USAGE, "which arena or trace file?");
	o->paths = argv;
	return rt_cmd_filter_check("replay", REPLAY_USAGE, &o->filter);
}

struct replay {
	struct rt_out *out;
	struct rt_function_names *names;
	int full_names;
	int show_pid;
	struct rt_io_view io; /* I/O calls: each source's descriptor names */
	uint32_t source;      /* of the item being fed */
	char name[NAME_MAX_BYTES];
};

/* "  12.345 us" and the like, 10 columns; blank when unknown. */
static void put_duration(struct rt_out *out, const struct rt_call_thread *t, uint64_t ticks,
			 int known)
{
	if (!known) {
		rt_out_str(out, "          ");
		return;
	}
	int64_t ns = rt_timebase_span_ns(&t->reader->timebase, ticks);
	if (ns < 1000000)
		rt_out_printf(out, "%7.3f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		rt_out_printf(out, "%7.3f ms", (double)ns / 1e6);
	else
		rt_out_printf(out, "%7.3f  s", (double)ns / 1e9);
}

/* " [TID] | ", or " [PID/TID] | " with several processes, and the indentation of level. */
static void put_thread(struct replay *r, const struct rt_call_thread *t, size_t level)
{
	if (!t)
		rt_out_str(r->out, r->show_pid ? " [             ] | " : " [      ] | ");
	else if (r->show_pid)
		rt_out_printf(r->out, " [%6d/%-6d] | ", t->reader->header.pid, t->tid);
	else
		rt_out_printf(r->out, " [%6d] | ", t->tid);
	if (level >
	    INDENT_MAX) { /* calls nested this deep (or exits lost) must not make every line huge */
		rt_out_printf(r->out, "[level %zu] ", level);
		level = INDENT_MAX;
	}
	for (size_t i = 0; i < level; i++)
		rt_out_str(r->out, "  ");
}

static const char *name_of(struct replay *r, const struct rt_call_thread *t, uint64_t addr,
			   uint64_t counter)
{
	if (r->full_names)
		return rt_call_name(r->names, t->reader, addr, counter, r->name, sizeof(r->name));
	return rt_call_short_name(r->names, t->reader, addr, counter, r->name, sizeof(r->name));
}

/*
 * What follows a name to make it a call: "()", but for a name that carries
 * its parameters already (a full C++ name, "AAA::bar(int)").  A short name
 * carries none, though it may hold parentheses ("(anonymous
 * namespace)::f", "S::operator()").
 */
static const char *call_parens(const struct replay *r, const char *name)
{
	return r->full_names && strchr(name, '(') ? "" : "()";
}

/* The open line of the thread's top call, if it was not written yet. */
static void show_top(struct replay *r, struct rt_call_thread *t)
{
	if (!t || !t->depth || t->stack[t->depth - 1].shown)
		return;
	struct rt_call_frame *f = &t->stack[t->depth - 1];
	put_duration(r->out, t, 0, 0);
	put_thread(r, t, t->depth - 1);
	const char *name = name_of(r, t, f->addr, f->enter_counter);
	rt_out_escaped_str(r->out, name);
	rt_out_str(r->out, call_parens(r, name));
	rt_out_str(r->out, " {\n");
	f->shown = 1;
}

static void on_enter(void *ctx, struct rt_call_thread *t, struct rt_call_frame *f)
{
	(void)f;
	if (t->depth > 1) {
		t->depth--; /* the caller's line, before this one */
		show_top(ctx, t);
		t->depth++;
	}
}

static void on_leave(void *ctx, struct rt_call_thread *t, struct rt_call_frame *f, uint64_t end,
		     enum rt_call_end how)
{
	struct replay *r = ctx;
	int timed = how != RT_CALL_EXIT_LOST && how != RT_CALL_OPEN;
	const char *name = name_of(r, t, f->addr, f->enter_counter);
	put_duration(r->out, t, end - f->enter_counter, timed && end >= f->enter_counter);
	put_thread(r, t, t->depth - 1);
	if (f->shown)
		rt_out_printf(r->out, "} /* %s", rt_escaped(name));
	else
		rt_out_printf(r->out, "%s%s", rt_escaped(name), call_parens(r, name));
	if (how == RT_CALL_RETURNED)
		rt_out_str(r->out, f->shown ? " */\n" : ";\n");
	else if (f->shown)
		rt_out_printf(r->out, ": %s */\n", rt_call_end_text(how));
	else
		rt_out_printf(r->out, "; /* %s */\n", rt_call_end_text(how));
}

static void on_stray_exit(void *ctx, struct rt_call_thread *t, const struct rt_item *item)
{
	struct replay *r = ctx;
	show_top(r, t);
	put_duration(r->out, t, 0, 0);
	put_thread(r, t, t->depth);
	rt_out_printf(r->out, "} /* %s: enter not recorded */\n",
		      rt_escaped(name_of(r, t, item->args.a64[0], item->counter)));
}

/* Text from an input inside a comment: escaped (common/escape.h), and no end of comment. */
static void put_comment_text(struct rt_out *out, const char *s, size_t n)
{
	char *start = rt_out_reserve(out, RT_ESCAPED_MAX(n));
	char *end = rt_fmt_escaped(start, s, n);
	for (char *p = start; p + 1 < end; p++)
		if (p[0] == '*' && p[1] == '/')
			p[0] = '+'; /* the comment stays one comment */
	rt_out_commit(out, end);
}

static void put_event(struct rt_out *out, const struct rt_reader *rd, const struct rt_item *item)
{
	const struct rt_site *site =
	    item->flags & RT_ITEM_NO_SITE ? NULL : rt_site_lookup(&rd->sites, item->site);
	if (!site) {
		rt_out_printf(out, "/* event of site #%u (site metadata lost) */\n", item->site);
		return;
	}
	uint64_t values[RT_MAX_ARGS];
	rt_site_decode_args(site, item->args.a32, item->args.a64, values);
	rt_out_str(out, "/* ");
	put_comment_text(out, site->tag, site->tag_length);
	for (unsigned i = 0; i < site->nargs; i++) {
		rt_out_str(out, i ? ", " : "(");
		if (site->signed_args & (1u << i))
			rt_out_i64(out, (int64_t)values[i]);
		else
			rt_out_u64(out, values[i]);
	}
	rt_out_str(out, site->nargs ? ") */\n" : " */\n");
}

static void put_log(struct rt_out *out, const struct rt_reader *rd, const struct rt_item *item)
{
	const struct rt_site *site =
	    item->flags & RT_ITEM_NO_SITE ? NULL : rt_site_lookup(&rd->sites, item->site);
	if (!site || site->kind != RT_SITE_LOG || item->kind != RT_ITEM_LOG) {
		rt_out_printf(out, "/* log message of site #%u (site metadata lost) */\n",
			      item->site);
		return;
	}
	char message[4096];
	size_t n = rt_log_render(message, sizeof(message), site, item->log.payload,
				 item->log.length, NULL);
	if (n >= sizeof(message))
		n = sizeof(message) - 1;
	rt_out_printf(out, "/* %s ", rt_log_level_name(site->level));
	put_comment_text(out, message, n);
	rt_out_str(out, " */\n");
}

/* An I/O call as a comment line, like a log message: FileIO/Read fd 3 '/etc/hosts' ... */
static void put_io(struct replay *r, const struct rt_item *item)
{
	static char text[RT_IO_TEXT_MAX];
	struct rt_io_shown shown;
	rt_io_view_take(&r->io, r->source, item, 1, &shown);
	size_t n = rt_io_text(text, sizeof(text), &shown);
	if (n && text[n - 1] == '\n')
		n--;
	for (size_t i = 0; i + 1 < n; i++)
		if (text[i] == '*' && text[i + 1] == '/')
			text[i] = '+'; /* the comment stays one comment */
	rt_out_str(r->out, "/* ");
	rt_out_bytes(r->out, text, n);
	rt_out_str(r->out, " */\n");
}

static void put_loss(struct rt_out *out, const struct rt_item *item)
{
	rt_out_printf(out, "/* lost: %llu event%s %s", (unsigned long long)item->loss.count,
		      item->loss.count == 1 ? "" : "s", rt_loss_reason_name(item->loss.reason));
	const char *note = rt_loss_note_text(item->loss.note);
	if (note)
		rt_out_printf(out, " (%s)", note);
	rt_out_str(out, " */\n");
}

static void on_other(void *ctx, struct rt_call_thread *t, const struct rt_reader *rd,
		     const struct rt_item *item)
{
	struct replay *r = ctx;
	show_top(r, t);
	put_duration(r->out, t, 0, 0);
	put_thread(r, t, t ? t->depth : 0);
	if (item->kind == RT_ITEM_IO)
		put_io(r, item);
	else if (rt_item_has_payload(item->kind))
		put_log(r->out, rd, item);
	else if (item->kind == RT_ITEM_TRACE)
		put_event(r->out, rd, item);
	else
		put_loss(r->out, item);
}

static const struct rt_call_tree_ops replay_ops = {
    .enter = on_enter,
    .leave = on_leave,
    .stray_exit = on_stray_exit,
    .other = on_other,
};

static int replay_set(struct rt_trace_set *set, const void *options, struct rt_out *out)
{
	const struct replay_options *o = options;
	struct replay r = {
	    .out = out, .full_names = o->full_names, .show_pid = rt_trace_set_multi_process(set)};
	r.names = rt_function_names_new(o->debug_dirs, o->debug_dir_count);
	struct rt_item_filter *filter =
	    rt_item_filter_wanted(&o->filter) ? rt_item_filter_new(&o->filter, r.names) : NULL;
	struct rt_call_limiter *limiter;
	struct rt_call_tree *tree = rt_call_tree_limited(&o->limits, &replay_ops, &r, &limiter);
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	const struct rt_reader **readers = calloc(set->source_count + 1, sizeof(*readers));
	for (size_t i = 0; readers && i < set->source_count; i++)
		readers[i] = set->sources[i].reader;
	int rc = r.names && tree && readers && (filter || !rt_item_filter_wanted(&o->filter))
		     ? 0
		     : -ENOMEM;
	if (!rc)
		rc = rt_io_view_init(&r.io, readers, set->source_count);
	for (size_t i = 0; !rc && i < set->source_count; i++)
		if (rt_trace_set_shares_files(set, i))
			rt_io_view_forked(&r.io, i);
	if (!rc)
		rc = rt_trace_set_start_from(set, o->has_tid ? o->tid : 0,
					     rt_item_filter_from_ns(&o->filter));
	if (!rc) {
		rt_out_str(out, r.show_pid ? "# DURATION [   PID/TID   ] | FUNCTION\n"
					   : "# DURATION [   TID] | FUNCTION\n");
		const struct rt_item *item;
		uint32_t source;
		while (!rc && !rt_item_filter_done(filter) &&
		       (item = rt_trace_set_next(set, &source)) != NULL) {
			r.source = source;
			int verdict = rt_item_filter_feed(filter, tree, source,
							  set->sources[source].reader, item);
			rc = verdict < 0 ? verdict : 0;
			if (verdict != RT_FILTER_KEEP && item->kind == RT_ITEM_IO) {
				struct rt_io_shown shown; /* not shown: its names still count */
				rt_io_view_take(&r.io, source, item, 1, &shown);
			}
		}
		if (!rc)
			rc = rt_trace_set_error(set);
		rt_call_tree_finish(tree);
		if (!rc)
			rc = rt_call_limiter_error(limiter);
	}
	rt_call_tree_free(tree);
	rt_call_limiter_free(limiter);
	rt_item_filter_free(filter);
	rt_function_names_free(r.names);
	rt_io_view_free(&r.io);
	free(readers);
	return rc;
}

int rt_cmd_replay(int argc, char **argv)
{
	struct replay_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? RT_EXIT_OK : rc;
	return rt_cmd_print_set(o.paths, o.path_count, replay_set, &o);
}
