/*
 * tail.c - `ringtrace tail [--json] [--from-start] PID|ARENA`: print a
 * running program's events as it records them, until it ends or the user
 * interrupts.
 *
 * A passive reader beside the program (and beside a collector, if one
 * drains the arena): the arena is mapped read-only and never written.
 * Every poll reads each ring's head, reads the tables again when they grew
 * (threads, sites, modules, strings) or a thread was renamed, takes each
 * ring's records published since the previous poll (rt_reader_follow_ring),
 * and prints them sorted by time with the printers `ringtrace dump` uses,
 * then flushes.  Records the writer overwrote before a poll took them are
 * a loss line with their count.  A record a slow thread published late may
 * sort before lines already printed: it comes in the next batch, never
 * dropped, and what was printed is never taken back.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/arena_names.h"
#include "common/output.h"
#include "format/arena_layout.h"
#include "present/function_names.h"
#include "present/json.h"
#include "present/text.h"
#include "read/arena_list.h"

#define USAGE "ringtrace tail [--json] [--from-start] PID|ARENA"
/* Between two polls: well inside the 100 ms a record may wait to be shown. */
#define POLL_NS 25000000L

void rt_cmd_tail_help(FILE *to)
{
	fprintf(to, "usage: " USAGE "\n"
		    "\n"
		    "Print the events of a running program as it records them, one a line\n"
		    "as 'ringtrace dump' prints them (trace events, log messages, function\n"
		    "enters and exits, file I/O calls, losses), until the program ends or\n"
		    "you interrupt.  A file the program opened before tail attached is\n"
		    "named all the same, from the arena's descriptor table (record --io).\n"
		    "PID: the running arena of that process in " RT_ARENA_DIR_TEXT "\n"
		    "(see 'ringtrace ls'); ARENA: an arena file.  Only your own arenas (root:\n"
		    "any).  The arena is only read, never written: a 'ringtrace record'\n"
		    "draining it goes on undisturbed.\n"
		    "\n"
		    "The rings are read every 25 ms; each poll's events are printed sorted by\n"
		    "time and flushed.  Events the program overwrote before they were read\n"
		    "(a small flight-mode ring, a fast writer) are one line with their count:\n"
		    "'--- lost: tid T name, N events overwritten at S (missed by tail: ...) ---'.\n"
		    "\n"
		    "Options:\n"
		    "  --json          one JSON object per line, as 'ringtrace dump --json'\n"
		    "  --from-start    first what the rings hold already, then the new events\n"
		    "  --help          this text\n"
		    "\n"
		    "Exit status: 0 the program ended, or SIGINT or SIGTERM; 1 the output\n"
		    "could not be written; 2 bad usage, no such arena; 3 the arena file\n"
		    "shrank while it was read (truncated by another process): tail ends there.\n");
}

static volatile sig_atomic_t stop_requested;

static void on_stop(int signal_number)
{
	(void)signal_number;
	stop_requested = 1;
}

/* What the tables held when they were read: more means read them again. */
struct table_marks {
	uint32_t threads_used, sites_used, modules_used, module_unloads;
	uint64_t strings_used;
};

struct tail {
	struct rt_reader *rd;
	struct rt_ring_cursor *cursors; /* one per ring */
	struct rt_ring_cursor *saved;	/* the cursors before a poll read */
	uint64_t *heads;		/* each ring's head as a poll took it */
	struct rt_item_batch batch;
	struct table_marks marks;
	int json;
	struct rt_function_names *names; /* the printers' */
	struct rt_text_printer text;
	struct rt_json_printer jsonp;
	struct rt_out out;
};

static const struct rt_arena_header *live_header(const struct tail *t)
{
	return (const struct rt_arena_header *)t->rd->file;
}

static void read_marks(const struct tail *t, struct table_marks *m)
{
	const struct rt_arena_header *h = live_header(t);
	m->threads_used = __atomic_load_n(&h->threads_used, __ATOMIC_ACQUIRE);
	m->sites_used = __atomic_load_n(&h->sites_used, __ATOMIC_ACQUIRE);
	m->modules_used = __atomic_load_n(&h->modules_used, __ATOMIC_ACQUIRE);
	m->module_unloads = __atomic_load_n(&h->module_unloads, __ATOMIC_ACQUIRE);
	m->strings_used = __atomic_load_n(&h->strings_used, __ATOMIC_ACQUIRE);
}

/* A thread named itself since the table was read (the name is not counted anywhere). */
static int renamed(const struct tail *t)
{
	const struct rt_reader *rd = t->rd;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_thread_entry *e =
		    (const struct rt_thread_entry *)(rd->file +
						     rt_layout_thread_offset(&rd->header,
									     rd->threads[i].entry));
		char name[RT_NAME_MAX];
		memcpy(name, e->name, sizeof(name));
		name[sizeof(name) - 1] = 0;
		if (strncmp(name, rd->threads[i].name, sizeof(name)) != 0)
			return 1;
	}
	return 0;
}

static int reload(struct tail *t)
{
	struct rt_read_error error;
	read_marks(t, &t->marks);
	int rc = rt_reader_reload(t->rd, &error);
	uint64_t shrunk;
	if (rc < 0) {
		/* zeros where the tables were: the file shrank, said once by run() */
		if (rt_reader_shrunk(t->rd, &shrunk) != 1)
			rt_cmd_report_open_error(t->rd->path, &error);
		return rc;
	}
	if (rc > 0) {
		/* the names are cached by module entry, and those entries are new */
		struct rt_function_names *names = rt_function_names_new(NULL, 0);
		if (!names)
			return -ENOMEM;
		rt_function_names_free(t->names);
		t->names = t->text.names = t->jsonp.names = names;
	}
	return t->json ? rt_json_printer_reload(&t->jsonp, 0) : rt_text_printer_reload(&t->text, 0);
}

static int compare_items(const void *a, const void *b)
{
	return rt_item_compare(a, b);
}

static int read_rings(struct tail *t)
{
	const uint32_t rings = t->rd->header.ring_count;
	t->batch.count = 0;
	t->batch.stale = 0;
	for (uint32_t r = rt_reader_next_ring(t->rd, 0); r < rings;
	     r = rt_reader_next_ring(t->rd, r + 1)) {
		if (t->heads[r] <= t->cursors[r].slot)
			continue;
		int rc = rt_reader_follow_ring(t->rd, r, t->heads[r], &t->cursors[r], &t->batch);
		if (rc)
			return rc;
	}
	return 0;
}

/* The cursors of the rings read (those with a descriptor in the file) into to. */
static void save_cursors(const struct tail *t, struct rt_ring_cursor *to,
			 const struct rt_ring_cursor *from)
{
	const uint32_t rings = t->rd->header.ring_count;
	for (uint32_t r = rt_reader_next_ring(t->rd, 0); r < rings;
	     r = rt_reader_next_ring(t->rd, r + 1))
		to[r] = from[r];
}

/*
 * One poll: what the rings published since the last one, printed and
 * flushed.  0, or -errno (after one line on stderr when it is the arena's
 * fault).
 */
static int poll_once(struct tail *t)
{
	const uint32_t rings = t->rd->header.ring_count;
	/* heads first: the tables read after them hold every site and thread below them */
	/* a ring whose descriptor lies in a hole was never claimed: its head is 0 */
	for (uint32_t r = rt_reader_next_ring(t->rd, 0); r < rings;
	     r = rt_reader_next_ring(t->rd, r + 1))
		t->heads[r] = rt_reader_ring_head(t->rd, r);
	struct table_marks now;
	read_marks(t, &now);
	int rc;
	if ((memcmp(&now, &t->marks, sizeof(now)) != 0 || renamed(t)) && (rc = reload(t)) != 0)
		return rc;
	save_cursors(t, t->saved, t->cursors);
	if ((rc = read_rings(t)) != 0)
		return rc;
	if (t->batch.stale) {
		/* a thread entry or site published after the tables were read: once more */
		save_cursors(t, t->cursors, t->saved);
		rt_reader_forget_payloads(t->rd);
		if ((rc = reload(t)) != 0 || (rc = read_rings(t)) != 0)
			return rc;
	}
	if (t->batch.count) {
		qsort(t->batch.items, t->batch.count, sizeof(*t->batch.items), compare_items);
		for (size_t i = 0; i < t->batch.count; i++) {
			if (t->json)
				rt_json_print_item(&t->jsonp, &t->batch.items[i]);
			else
				rt_text_print_item(&t->text, &t->batch.items[i]);
		}
		rt_out_flush(&t->out);
	}
	rt_reader_forget_payloads(t->rd);
	return t->out.error ? -t->out.error : 0;
}

/* The program closed its arena, or is gone (a crash, a kill). */
static int program_ended(const struct tail *t)
{
	const struct rt_arena_header *h = live_header(t);
	if (__atomic_load_n(&h->state, __ATOMIC_ACQUIRE) == RT_ARENA_CLOSED)
		return 1;
	return !rt_process_alive(t->rd->header.pid, t->rd->header.process_start);
}

/*
 * Where tail starts: at every ring's head, unless from_start.  A ring whose
 * writer is always mid-record when looked at is read to its head, unprinted.
 */
static int start(struct tail *t, int from_start)
{
	if (from_start)
		return poll_once(t);
	const uint32_t rings = t->rd->header.ring_count;
	int rc = 0;
	t->batch.count = 0;
	for (uint32_t r = rt_reader_next_ring(t->rd, 0); r < rings && rc == 0;
	     r = rt_reader_next_ring(t->rd, r + 1))
		if (!rt_reader_ring_start(t->rd, r, &t->cursors[r]))
			rc = rt_reader_follow_ring(t->rd, r, rt_reader_ring_head(t->rd, r),
						   &t->cursors[r], &t->batch);
	t->batch.count = 0;
	rt_reader_forget_payloads(t->rd);
	return rc;
}

/*
 * Until the program ends, or the arena file shrinks under the mapping (a
 * truncated arena is nobody's live arena any more: what was read of it is
 * printed, the rest is damage, and tail ends, *shrunk set).
 */
static int follow(struct tail *t, int from_start, int *shrunk)
{
	uint64_t from;
	int rc = start(t, from_start);
	while (rc == 0) {
		/* looked at before the poll: what the program wrote before it ended is read */
		int ended = stop_requested || program_ended(t);
		rc = poll_once(t);
		if ((*shrunk = rt_reader_shrunk(t->rd, &from)) != 0)
			return *shrunk < 0 ? *shrunk : 0;
		if (ended)
			break;
		struct timespec pause = {0, POLL_NS};
		nanosleep(&pause, NULL); /* a signal cuts it short: fine */
	}
	return rc;
}

static int run(const char *path, int json, int from_start)
{
	struct tail t;
	struct rt_read_error error;
	memset(&t, 0, sizeof(t));
	t.json = json;
	if (rt_reader_open_live(path, &t.rd, &error) != 0) {
		rt_cmd_report_open_error(path, &error);
		return RT_EXIT_USAGE;
	}
	read_marks(&t, &t.marks);
	const size_t rings = (size_t)t.rd->header.ring_count + 1;
	t.cursors = calloc(rings, sizeof(*t.cursors));
	t.saved = calloc(rings, sizeof(*t.saved));
	t.heads = calloc(rings, sizeof(*t.heads));
	t.names = rt_function_names_new(NULL, 0);
	int rc = -ENOMEM;
	int out_open = 0;
	if (t.cursors && t.saved && t.heads && t.names && rt_out_open(&t.out, STDOUT_FILENO) == 0) {
		out_open = 1;
		rc = json ? rt_json_printer_init(&t.jsonp, &t.out, t.rd)
			  : rt_text_printer_init(&t.text, &t.out, t.rd);
	}
	int status = RT_EXIT_OK;
	int shrunk = 0;
	if (rc == 0) {
		t.text.names = t.jsonp.names = t.names;
		rc = follow(&t, from_start, &shrunk);
		if (json)
			rt_json_printer_free(&t.jsonp);
		else
			rt_text_printer_free(&t.text);
	}
	if (out_open) {
		int closed = rt_out_close(&t.out);
		status = rt_cmd_finish_output(closed);
		if (closed)
			rc = 0; /* said once, by finish_output */
	}
	if (rc == -ENOMEM) {
		fprintf(stderr, "ringtrace tail: %s: out of memory\n", rt_escaped(path));
		status = RT_EXIT_FAILURE;
	} else if (rc) {
		status = RT_EXIT_FAILURE;
	}
	if (shrunk > 0) {
		rt_cmd_report_shrunk(t.rd, path);
		if (status == RT_EXIT_OK)
			status = RT_EXIT_DAMAGED;
	}
	rt_function_names_free(t.names);
	free(t.batch.items);
	free(t.cursors);
	free(t.saved);
	free(t.heads);
	rt_reader_close(t.rd);
	return status;
}

int rt_cmd_tail(int argc, char **argv)
{
	const char *target = NULL;
	int json = 0, from_start = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_tail_help(stdout);
			return RT_EXIT_OK;
		} else if (strcmp(arg, "--json") == 0) {
			json = 1;
		} else if (strcmp(arg, "--from-start") == 0) {
			from_start = 1;
		} else if (arg[0] == '-' && arg[1] != 0) {
			return rt_cmd_usage_error("tail", USAGE, "unknown option '%s'", arg);
		} else if (target) {
			return rt_cmd_usage_error("tail", USAGE, "one PID or ARENA only");
		} else {
			target = arg;
		}
	}
	if (!target)
		return rt_cmd_usage_error("tail", USAGE, "no PID or ARENA");

	struct rt_arena_file f;
	char *path = rt_cmd_arena_target("tail", target, &f);
	if (!path)
		return RT_EXIT_USAGE;
	rt_arena_file_free(&f);
	/* interrupted: the poll under way finishes, its lines are flushed, exit 0 */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	int status = run(path, json, from_start);
	free(path);
	return status;
}
