/*
 * tail.c - `ringtrace tail [--json] [--from-start] PID|ARENA`: print a
 * running program's events as it records them, until it ends or the user
 * interrupts.
 *
 * A passive reader beside the program (and beside a collector, if one
 * drains the arena), through the follower of read/arena_follow.h: each
 * poll's records, in time order, are printed with the printers `ringtrace
 * dump` uses, then flushed.  Records the writer overwrote before a poll
 * took them are a loss line with their count.  A record a slow thread
 * published late may sort before lines already printed: it comes in the
 * next batch, never dropped, and what was printed is never taken back.
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
#include "present/json.h"
#include "present/text.h"
#include "read/arena_follow.h"
#include "symbols/function_names.h"

#define USAGE "ringtrace tail [--json] [--from-start] PID|ARENA"

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

struct tail {
	struct rt_follower follower;
	int json;
	struct rt_function_names *names; /* the printers' */
	struct rt_text_printer text;
	struct rt_json_printer jsonp;
	struct rt_out out;
};

/* One poll's events, printed and flushed. */
static int print_batch(void *state, struct rt_follower *f)
{
	struct tail *t = state;
	if (f->modules_changed) {
		/* the names are cached by module entry, and those entries are new */
		struct rt_function_names *names = rt_function_names_new(NULL, 0);
		if (!names)
			return -ENOMEM;
		rt_function_names_free(t->names);
		t->names = t->text.names = t->jsonp.names = names;
	}
	int rc;
	if (f->tables_reloaded && (rc = t->json ? rt_json_printer_reload(&t->jsonp, 0)
						: rt_text_printer_reload(&t->text, 0)) != 0)
		return rc;
	for (size_t i = 0; i < f->batch.count; i++) {
		if (t->json)
			rt_json_print_item(&t->jsonp, &f->batch.items[i]);
		else
			rt_text_print_item(&t->text, &f->batch.items[i]);
	}
	rt_out_flush(&t->out);
	return t->out.error ? -t->out.error : 0;
}

/* Follow the reader rd of path, and close it. */
static int run(const char *path, struct rt_reader *rd, int json, int from_start,
	       volatile sig_atomic_t *stop)
{
	struct tail t;
	struct rt_read_error error;
	memset(&t, 0, sizeof(t));
	t.json = json;
	int rc = rt_follower_init(&t.follower, rd);
	t.names = rt_function_names_new(NULL, 0);
	int out_open = 0;
	if (rc == 0 && (!t.names || rt_out_open(&t.out, STDOUT_FILENO) != 0))
		rc = -ENOMEM;
	if (rc == 0) {
		out_open = 1;
		rc = json ? rt_json_printer_init(&t.jsonp, &t.out, rd)
			  : rt_text_printer_init(&t.text, &t.out, rd);
	}
	int status = RT_EXIT_OK;
	int shrunk = 0;
	if (rc == 0) {
		t.text.names = t.jsonp.names = t.names;
		rc = rt_follower_run(&t.follower, from_start, stop, print_batch, &t, &shrunk,
				     &error);
		if (rc && error.message[0])
			rt_cmd_report_open_error(path, &error);
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
		rt_cmd_report_shrunk(rd, path);
		if (status == RT_EXIT_OK)
			status = RT_EXIT_DAMAGED;
	}
	rt_function_names_free(t.names);
	rt_follower_free(&t.follower);
	rt_reader_close(rd);
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

	struct rt_reader *rd;
	char *path = rt_cmd_follow_target("tail", target, &rd);
	if (!path)
		return RT_EXIT_USAGE;
	/* interrupted: the poll under way finishes, its lines are flushed, exit 0 */
	volatile sig_atomic_t *stop = rt_follow_stop_on_signals();
	int status = run(path, rd, json, from_start, stop);
	free(path);
	return status;
}
