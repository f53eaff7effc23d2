/*
 * report.c - `ringtrace report`: time per function, from function enter and
 * exit events: calls, total time, self time, average and longest call,
 * merged over threads or per thread; or, with --folded, the time of every
 * call path as folded stacks for flame-graph tools.
 *
 * One pass over the merged time line (read/trace_set.h) with a stack per
 * thread (present/call_tree.h).  Functions are told apart by their full
 * name (or module+offset): the same address can hold another function
 * later, and the same function is one row over threads and processes.
 * Rows show the short name (symbols/demangle.h), unless two functions have
 * the same: overloads and template instances then show their full names,
 * so no two rows look alike (--full-names: always the full name).  A recursive
 * function's total counts its outermost calls only, so no time is counted
 * twice; its average is over every call.  -t and -D count the calls replay
 * shows with them (present/call_limits.h): a hidden callee's time is its
 * caller's own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/report_io.h"
#include "common/key_table.h"
#include "common/output.h"
#include "common/parse.h"
#include "present/call_tree.h"
#include "present/item_filter.h"
#include "present/units.h"
#include "read/trace_set.h"
#include "symbols/function_names.h"

#define REPORT_USAGE                                                                               \
	"ringtrace report [--tid TID] " RT_CMD_FILTER_USAGE " " RT_CMD_CALL_LIMITS_USAGE           \
	" [--per-thread] "                                                                         \
	"[--sort calls|total|self|avg|max] [--json] [--folded] [--full-names] "                    \
	"[--debug-dir DIR]... INPUT...\n"                                                          \
	"       ringtrace report --io [--tid TID] [--sort time|bytes|opens|reads|writes|errors] "  \
	"[--json] INPUT..."
#define NAME_MAX_BYTES 512

void rt_cmd_report_help(FILE *to)
{
	fprintf(to, "usage: " REPORT_USAGE "\n"
		    "\n"
		    "Time per function, from the enter and exit events of programs built with\n"
		    "-finstrument-functions: calls, total time (the outermost calls of a\n"
		    "recursive function only), self time (total minus the time in traced\n"
		    "callees), average and longest call; merged over threads, most total\n"
		    "time first.  Calls whose exit is missing count up to the event that\n"
		    "closed them, calls still open up to their thread's last event: the\n"
		    "'incomplete' count says how many there were.  C++ functions are named\n"
		    "short, their scopes and name ('std::sort'); functions whose short names\n"
		    "are the same (overloads, template instances) show their full names.\n"
		    "Filters choose the calls counted; a call left out counts as its\n"
		    "caller's own time.  Exit status 3 when an input was damaged.\n"
		    "\n"
		    "Options:\n"
		    "  --tid TID       only the thread TID\n" RT_CMD_FILTER_HELP);
	fputs(RT_CMD_CALL_LIMITS_HELP
	      "                  -t and -D count the calls replay shows with them, and so\n"
	      "                  does --folded: a hidden call's time is its caller's self\n"
	      "                  time\n",
	      to);
	fprintf(to,
		"  --per-thread    one row per function and thread\n"
		"  --sort KEY      calls, total, self, avg or max (largest first; default total)\n"
		"  --json          one JSON object per row (docs/JSON.md)\n"
		"  --folded        folded stacks instead: 'main;parent;func SELF_NS' per call\n"
		"                  path, weighted by self time in nanoseconds (--per-thread:\n"
		"                  the thread is the first frame, 'tid-TID')\n"
		"  --full-names    C++ functions with their whole signature: return type,\n"
		"                  template arguments, parameters\n"
		"  --debug-dir DIR look for separate debug files in DIR too (up to 16 times)\n"
		"  --help          this text\n"
		"\n"
		"With --io: file I/O per file and process, from a trace of 'ringtrace record\n"
		"--io': opens, reads and writes (stdio calls included), bytes read and\n"
		"written, the time spent in every call on the file, and the calls that\n"
		"failed; most time first.  Calls on a descriptor go to the file it named\n"
		"at the time; one whose name is not known has a row of its own, in\n"
		"parentheses.  --sort: time, bytes, opens, reads, writes or errors;\n"
		"--json: one object per row (docs/JSON.md).\n");
}

enum sort_key { SORT_TOTAL, SORT_CALLS, SORT_SELF, SORT_AVG, SORT_MAX };

struct report_options {
	int has_tid;
	int32_t tid;
	int per_thread, json, folded, io, full_names;
	struct rt_item_filter_options filter;
	struct rt_call_limits limits;
	enum sort_key sort;
	const char *sort_name;
	char **paths;
	size_t path_count;
	const char *debug_dirs[RT_CMD_DEBUG_DIRS_MAX];
	size_t debug_dir_count;
};

static int parse_sort(const char *v, enum sort_key *key)
{
	static const char *const names[] = {"total", "calls", "self", "avg", "max"};
	for (int i = 0; i < 5; i++)
		if (strcmp(v, names[i]) == 0) {
			*key = (enum sort_key)i;
			return 0;
		}
	return -1;
}

static int parse_options(int argc, char **argv, struct report_options *o)
{
	int rc, positional_only = 0;
	const char *value;
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			argv[o->path_count++] = argv[i];
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_report_help(stdout);
			return -1;
		} else if (strcmp(arg, "--json") == 0) {
			o->json = 1;
		} else if (strcmp(arg, "--folded") == 0) {
			o->folded = 1;
		} else if (strcmp(arg, "--io") == 0) {
			o->io = 1;
		} else if (strcmp(arg, "--per-thread") == 0) {
			o->per_thread = 1;
		} else if (strcmp(arg, "--full-names") == 0) {
			o->full_names = 1;
		} else if ((rc = rt_cmd_option(argc, argv, &i, "--sort", &value)) != 0) {
			if (rc < 0)
				return rt_cmd_usage_error("report", REPORT_USAGE,
							  "--sort needs a key");
			o->sort_name = value;
		} else if ((rc = rt_cmd_filter_option(argc, argv, &i, "report", REPORT_USAGE,
						      &o->filter)) != 0 ||
			   (rc = rt_cmd_call_limit_option(argc, argv, &i, "report", REPORT_USAGE,
							  &o->limits)) != 0 ||
			   (rc = rt_cmd_reading_option(argc, argv, &i, "report", REPORT_USAGE,
						       &o->has_tid, &o->tid, o->debug_dirs,
						       &o->debug_dir_count)) != 0) {
			/* 1: taken; else a usage error already said */
			if (rc != 1)
				return rc;
		} else {
			return rt_cmd_usage_error("report", REPORT_USAGE, "unknown option '%s'",
						  arg);
		}
	}
	if (!o->path_count)
		return rt_cmd_usage_error("report", REPORT_USAGE, "which arena or trace file?");
	if (o->folded && o->json)
		return rt_cmd_usage_error("report", REPORT_USAGE, "--folded is text, not --json");
	if (o->io && (o->folded || o->per_thread))
		return rt_cmd_usage_error("report", REPORT_USAGE,
					  "--io reports per file and process: no %s",
					  o->folded ? "--folded" : "--per-thread");
	if (!o->io && o->sort_name && parse_sort(o->sort_name, &o->sort) != 0)
		return rt_cmd_usage_error("report", REPORT_USAGE,
					  "--sort needs calls, total, self, avg or max");
	if (o->io && (rt_item_filter_wanted(&o->filter) || rt_call_limits_wanted(&o->limits)))
		return rt_cmd_usage_error(
		    "report", REPORT_USAGE,
		    "--io reports per file: no --pid, --since, --until, -F, -N, -t or -D");
	o->paths = argv;
	return rt_cmd_filter_check("report", REPORT_USAGE, &o->filter);
}

/* ---- rows by name ---------------------------------------------------------- */

struct row {
	const char *key;  /* the thread's number (4 bytes) then the function's name, or the path */
	const char *name; /* in key: the full name; a path's row indices (uint32_t each) */
	size_t name_length;
	char *short_name;		     /* a function's, made with its row */
	const char *shown;		     /* what names the function in the output */
	const struct rt_call_thread *thread; /* per thread: whose row */
	uint64_t calls, incomplete;
	int64_t total_ns, self_ns, sum_ns, max_ns;
};

struct table {
	struct rt_key_table keys; /* key i is row i's until the rows are sorted */
	struct row *rows;
	size_t count, capacity;
};

/* The row of (thread, name) (a new one when needed), or -1 when out of memory. */
static long table_find(struct table *t, uint32_t thread, const char *name, size_t name_length)
{
	char stack_key[4 + NAME_MAX_BYTES];
	char *key = stack_key;
	size_t n = 4 + name_length;
	if (n > sizeof(stack_key) && !(key = malloc(n)))
		return -1;
	memcpy(key, &thread, 4);
	memcpy(key + 4, name, name_length);
	long found = rt_key_table_find(&t->keys, key, n);
	if (key != stack_key)
		free(key);
	if (found < 0 || (size_t)found < t->count)
		return found;
	if (t->count == t->capacity) {
		size_t cap = t->capacity ? t->capacity * 2 : 256;
		struct row *rows = realloc(t->rows, cap * sizeof(*rows));
		if (!rows)
			return -1;
		t->rows = rows;
		t->capacity = cap;
	}
	struct row *r = &t->rows[t->count];
	memset(r, 0, sizeof(*r));
	r->key = t->keys.keys[found];
	r->name = r->key + 4;
	r->name_length = n - 4;
	t->count++;
	return found;
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->count; i++)
		free(t->rows[i].short_name);
	rt_key_table_free(&t->keys);
	free(t->rows);
}

/* ---- the walk ------------------------------------------------------------ */

struct report {
	const struct report_options *o;
	struct rt_function_names *names;
	struct rt_item_filter *filter;
	struct table functions; /* name, per thread or merged */
	struct table paths;	/* --folded: call path */
	uint32_t threads;	/* numbering the threads (per thread) */
	char *path;		/* --folded: scratch for a path */
	size_t path_capacity;
	int error;
	char name[NAME_MAX_BYTES];
};

static uint32_t thread_number(struct report *r, struct rt_call_thread *t)
{
	if (!r->o->per_thread)
		return 0;
	if (!t->view)
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): the view slot holds a number here */
		t->view = (void *)(uintptr_t)++r->threads;
	return (uint32_t)(uintptr_t)t->view;
}

static void on_enter(void *ctx, struct rt_call_thread *t, struct rt_call_frame *f)
{
	struct report *r = ctx;
	const char *name =
	    rt_call_name(r->names, t->reader, f->addr, f->enter_counter, r->name, sizeof(r->name));
	long row = table_find(&r->functions, thread_number(r, t), name, strlen(name));
	struct row *rw = row >= 0 ? &r->functions.rows[row] : NULL;
	if (rw && !rw->short_name && !r->o->full_names) {
		rt_call_short_name(r->names, t->reader, f->addr, f->enter_counter, r->name,
				   sizeof(r->name));
		rw->short_name = strdup(r->name);
	}
	if (!rw || (!rw->short_name && !r->o->full_names)) {
		r->error = -ENOMEM;
		row = 0;
	} else {
		rw->thread = t;
	}
	f->view = (uint32_t)row;
}

/* --folded: add self_ns to the path of t's open calls (their rows' indices). */
static void add_path(struct report *r, struct rt_call_thread *t, int64_t self_ns)
{
	size_t n = t->depth * sizeof(uint32_t);
	if (n > r->path_capacity) {
		char *p = realloc(r->path, n);
		if (!p) {
			r->error = -ENOMEM;
			return;
		}
		r->path = p;
		r->path_capacity = n;
	}
	for (size_t i = 0; i < t->depth; i++)
		memcpy(r->path + i * sizeof(uint32_t), &t->stack[i].view, sizeof(uint32_t));
	long row = table_find(&r->paths, r->o->per_thread ? (uint32_t)t->tid : 0, r->path, n);
	if (row < 0)
		r->error = -ENOMEM;
	else
		r->paths.rows[row].self_ns += self_ns;
}

static void on_leave(void *ctx, struct rt_call_thread *t, struct rt_call_frame *f, uint64_t end,
		     enum rt_call_end how)
{
	struct report *r = ctx;
	const struct rt_timebase *tb = &t->reader->timebase;
	int64_t ns = end > f->enter_counter ? rt_timebase_span_ns(tb, end - f->enter_counter) : 0;
	int64_t child_ns = rt_timebase_span_ns(tb, f->child_ticks);
	int64_t self_ns = ns > child_ns ? ns - child_ns : 0;
	struct row *row = &r->functions.rows[f->view];
	row->calls++;
	row->incomplete += how == RT_CALL_EXIT_LOST || how == RT_CALL_OPEN;
	row->sum_ns += ns;
	row->self_ns += self_ns;
	if (ns > row->max_ns)
		row->max_ns = ns;
	int outermost = 1;
	for (size_t i = 0; i + 1 < t->depth && outermost; i++)
		outermost = t->stack[i].view != f->view;
	if (outermost)
		row->total_ns += ns;
	if (r->o->folded)
		add_path(r, t, self_ns);
}

static void on_stray_exit(void *ctx, struct rt_call_thread *t, const struct rt_item *item)
{
	(void)ctx, (void)t, (void)item; /* no time to give it: its enter is unknown */
}

static const struct rt_call_tree_ops report_ops = {
    .enter = on_enter,
    .leave = on_leave,
    .stray_exit = on_stray_exit,
};

/* ---- output -------------------------------------------------------------- */

static enum sort_key sort_by;

static int64_t avg_ns(const struct row *r)
{
	return r->calls ? r->sum_ns / (int64_t)r->calls : 0;
}

static int64_t sort_value(const struct row *r)
{
	switch (sort_by) {
	case SORT_CALLS:
		return (int64_t)r->calls;
	case SORT_SELF:
		return r->self_ns;
	case SORT_AVG:
		return avg_ns(r);
	case SORT_MAX:
		return r->max_ns;
	default:
		return r->total_ns;
	}
}

static int by_key(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int64_t vx = sort_value(x), vy = sort_value(y);
	if (vx != vy)
		return vx > vy ? -1 : 1;
	int c = strcmp(x->shown, y->shown);
	if (c)
		return c;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	return x->thread && y->thread && x->thread->tid != y->thread->tid
		   ? (x->thread->tid < y->thread->tid ? -1 : 1)
		   : 0;
}

static void put_duration(struct rt_out *out, int64_t ns)
{
	char text[RT_UNITS_MAX];
	rt_out_str(out, rt_units_duration_column(text, sizeof(text), ns));
}

static void print_rows(struct report *r, struct rt_out *out, int show_pid)
{
	struct table *t = &r->functions;
	sort_by = r->o->sort;
	if (t->count) /* rows is NULL before the first */
		qsort(t->rows, t->count, sizeof(*t->rows), by_key);
	uint64_t incomplete = 0;
	if (!r->o->json) {
		rt_out_str(out, "  Total time    Self time        Calls      Average          Max");
		rt_out_str(out, r->o->per_thread ? "      TID  Function\n" : "  Function\n");
	}
	for (size_t i = 0; i < t->count; i++) {
		const struct row *row = &t->rows[i];
		incomplete += row->incomplete;
		if (r->o->json) {
			rt_out_str(out, "{\"function\":");
			rt_out_json_string(out, row->shown, strlen(row->shown));
			if (r->o->per_thread) {
				if (show_pid)
					rt_out_printf(out, ",\"pid\":%d",
						      row->thread->reader->header.pid);
				rt_out_printf(out, ",\"tid\":%d", row->thread->tid);
			}
			rt_out_printf(out,
				      ",\"calls\":%llu,\"total_ns\":%lld,\"self_ns\":%lld,"
				      "\"avg_ns\":%lld,\"max_ns\":%lld,\"incomplete\":%llu}\n",
				      (unsigned long long)row->calls, (long long)row->total_ns,
				      (long long)row->self_ns, (long long)avg_ns(row),
				      (long long)row->max_ns, (unsigned long long)row->incomplete);
			continue;
		}
		put_duration(out, row->total_ns);
		rt_out_str(out, "  ");
		put_duration(out, row->self_ns);
		rt_out_printf(out, "  %11llu  ", (unsigned long long)row->calls);
		put_duration(out, avg_ns(row));
		rt_out_str(out, "  ");
		put_duration(out, row->max_ns);
		if (r->o->per_thread)
			rt_out_printf(out, "  %7d", row->thread->tid);
		rt_out_printf(out, "  %s\n", rt_escaped(row->shown));
	}
	if (!r->o->json && incomplete)
		rt_out_printf(out,
			      "# %llu call%s without an exit: timed up to the event that closed "
			      "them, or their thread's last event\n",
			      (unsigned long long)incomplete, incomplete == 1 ? "" : "s");
}

/* What names each function row: its short name, or its full name when the short one is not its own.
 */
static int by_short_name(const void *a, const void *b)
{
	const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
	int c = strcmp(x->short_name, y->short_name);
	return c ? c : strcmp(x->name, y->name);
}

static int name_rows(struct report *r)
{
	struct table *t = &r->functions;
	for (size_t i = 0; i < t->count; i++)
		t->rows[i].shown = r->o->full_names ? t->rows[i].name : t->rows[i].short_name;
	if (r->o->full_names || t->count < 2)
		return 0;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	struct row **order = malloc(t->count * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < t->count; i++)
		order[i] = &t->rows[i];
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	qsort(order, t->count, sizeof(*order), by_short_name);
	for (size_t i = 0, j; i < t->count; i = j) {
		int shared = 0; /* by another function */
		for (j = i + 1; j < t->count && !strcmp(order[j]->short_name, order[i]->short_name);
		     j++)
			shared |= strcmp(order[j]->name, order[i]->name) != 0;
		for (size_t k = i; shared && k < j; k++)
			order[k]->shown = order[k]->name;
	}
	free(order);
	return 0;
}

struct folded_line {
	char *text;
	int64_t self_ns;
};

static int by_text(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->text, ((const struct folded_line *)b)->text);
}

/* Each path as its functions' names, "main;parent;func", in the order of that text. */
static int print_folded(struct report *r, struct rt_out *out)
{
	const struct table *t = &r->paths;
	struct folded_line *lines = calloc(t->count + 1, sizeof(*lines));
	int rc = lines ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < t->count; i++) {
		const struct row *path = &t->rows[i];
		size_t frames = path->name_length / sizeof(uint32_t), n = 24;
		uint32_t view[1];
		for (size_t k = 0; k < frames; k++) {
			memcpy(view, path->name + k * sizeof(uint32_t), sizeof(uint32_t));
			n += strlen(r->functions.rows[view[0]].shown) + 1;
		}
		char *text = malloc(n), *e = text;
		if (!text) {
			rc = -ENOMEM;
			break;
		}
		if (r->o->per_thread) {
			int32_t tid;
			memcpy(&tid, path->key, sizeof(tid));
			e += sprintf(e, "tid-%d;", tid);
		}
		for (size_t k = 0; k < frames; k++) {
			memcpy(view, path->name + k * sizeof(uint32_t), sizeof(uint32_t));
			const char *name = r->functions.rows[view[0]].shown;
			size_t len = strlen(name);
			memcpy(e, name, len);
			e += len;
			*e++ = ';';
		}
		e[-1] = 0;
		lines[i] = (struct folded_line){text, path->self_ns};
	}
	if (!rc) {
		if (t->count)
			qsort(lines, t->count, sizeof(*lines), by_text);
		for (size_t i = 0; i < t->count; i++)
			rt_out_printf(out, "%s %lld\n", rt_escaped(lines[i].text),
				      (long long)lines[i].self_ns);
	}
	for (size_t i = 0; lines && i < t->count; i++)
		free(lines[i].text);
	free(lines);
	return rc;
}

static int report_set(struct rt_trace_set *set, const void *options, struct rt_out *out)
{
	struct report r;
	memset(&r, 0, sizeof(r));
	r.o = options;
	r.names = rt_function_names_new(r.o->debug_dirs, r.o->debug_dir_count);
	int filtered = rt_item_filter_wanted(&r.o->filter);
	r.filter = filtered ? rt_item_filter_new(&r.o->filter, r.names) : NULL;
	struct rt_call_limiter *limiter;
	struct rt_call_tree *tree = rt_call_tree_limited(&r.o->limits, &report_ops, &r, &limiter);
	int rc = r.names && tree && (r.filter || !filtered) ? 0 : -ENOMEM;
	if (!rc)
		rc = rt_trace_set_start_from(set, r.o->has_tid ? r.o->tid : 0,
					     rt_item_filter_from_ns(&r.o->filter));
	if (!rc) {
		const struct rt_item *item;
		uint32_t source;
		while (!rc && !r.error && !rt_item_filter_done(r.filter) &&
		       (item = rt_trace_set_next(set, &source)) != NULL) {
			int verdict = rt_item_filter_feed(r.filter, tree, source,
							  set->sources[source].reader, item);
			rc = verdict < 0 ? verdict : 0;
		}
		if (!rc)
			rc = rt_trace_set_error(set);
		if (!rc)
			rt_call_tree_finish(tree);
		if (!rc)
			rc = r.error;
		if (!rc)
			rc = rt_call_limiter_error(limiter);
		if (!rc)
			rc = name_rows(&r);
	}
	if (!rc && r.o->folded)
		rc = print_folded(&r, out);
	else if (!rc)
		print_rows(&r, out, rt_trace_set_multi_process(set));
	rt_call_tree_free(tree);
	rt_call_limiter_free(limiter);
	rt_item_filter_free(r.filter);
	rt_function_names_free(r.names);
	table_free(&r.functions);
	table_free(&r.paths);
	free(r.path);
	return rc;
}

static int parse_io_sort(const char *v, enum rt_report_io_sort *key)
{
	static const char *const names[] = {"time", "bytes", "opens", "reads", "writes", "errors"};
	for (int i = 0; i < 6; i++)
		if (strcmp(v, names[i]) == 0) {
			*key = (enum rt_report_io_sort)i;
			return 0;
		}
	return -1;
}

int rt_cmd_report(int argc, char **argv)
{
	struct report_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? RT_EXIT_OK : rc;
	if (o.io) {
		struct rt_report_io_options io = {
		    .has_tid = o.has_tid, .tid = o.tid, .json = o.json};
		if (o.sort_name && parse_io_sort(o.sort_name, &io.sort) != 0)
			return rt_cmd_usage_error("report", REPORT_USAGE,
						  "--sort needs time, bytes, opens, reads, "
						  "writes or errors with --io");
		return rt_cmd_print_set(o.paths, o.path_count, rt_report_io_set, &io);
	}
	return rt_cmd_print_set(o.paths, o.path_count, report_set, &o);
}
