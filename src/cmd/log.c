/*
 * log.c - `ringtrace log`: the RT_LOG messages of arenas and trace files,
 * one a line, merged by time, formatted now from their recorded arguments.
 *
 * A line is "WALL LEVEL [tid T name] file.c:42 message", WALL the wall
 * clock of the event in UTC: the trace's wall-clock anchor (the start pair
 * of its header) plus the event's time since the start.  A source without
 * one (a trace file that lost its SOURCE blocks) shows "+S.NNNNNNNNNs", the
 * time since its start, or "raw N", the raw counter, when its clock
 * metadata is lost too.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/arena_names.h"
#include "common/escape.h"
#include "common/output.h"
#include "common/parse.h"
#include "decode/log_args.h"
#include "present/json.h"
#include "read/arena_follow.h"
#include "read/arena_reader.h"
#include "read/trace_set.h"

#define LOG_USAGE                                                                                  \
	"ringtrace log [--level NAME] [--since T] [--json] INPUT...\n"                             \
	"       ringtrace log -f [--level NAME] [--since T] [--json] PID|ARENA"
/* The longest message shown; a longer one is cut. */
#define LOG_MESSAGE_MAX 8192

void rt_cmd_log_help(FILE *to)
{
	fprintf(to,
		"usage: " LOG_USAGE "\n"
		"\n"
		"Print the log messages (RT_LOG) of arenas and trace files, merged by time,\n"
		"one a line, formatted now from the arguments recorded at the call:\n"
		"\n"
		"  2026-11-21T20:43:06.123456789Z INFO [tid 123 name] app.c:42 message\n"
		"\n"
		"The time is the wall clock (UTC) of the message, from the trace's clock\n"
		"calibration; a trace without a wall-clock anchor shows the time since its\n"
		"start instead (+1.250000000s), or the raw counter (raw N) when its clock\n"
		"metadata is lost.  Trace events and losses are not shown (`ringtrace dump`\n"
		"shows everything).  A message whose recorded arguments do not check is\n"
		"shown with a <damaged payload: ...> mark.\n"
		"INPUT: arenas, trace files, directories of them.\n"
		"\n"
		"Options:\n"
		"  --level NAME  only messages of this level or more severe: fatal, error,\n"
		"                warn, notice, info, debug\n"
		"  --since T     only messages at or after T: a time since the trace's start\n"
		"                with a unit (2.5s, 150ms, as `cut --from`), or seq:N, from the\n"
		"                N-th message that would be shown (0 is the first)\n"
		"  --json        one JSON object a line, as `dump --json` shows log messages\n"
		"  -f, --follow  one arena: print its messages, then the new ones as the\n"
		"                program writes them, until it ends (or SIGINT or SIGTERM);\n"
		"                a message the ring overwrote before it was seen is not\n"
		"                shown.  PID: the running arena of that process in\n"
		"                " RT_ARENA_DIR_TEXT " (see 'ringtrace ls'), as `tail` takes it\n"
		"  --help        this text\n"
		"\n"
		"Exit status: 0; 3 when an input or a message was damaged (what could be\n"
		"read is printed); 1 when the output cannot be written; 2 for bad usage or\n"
		"an input that cannot be read.\n");
}

struct log_options {
	unsigned level; /* 0: every level */
	int since_seq;	/* since is a message index, else nanoseconds */
	int has_since;
	uint64_t since;
	int json;
	int follow;
	char **inputs;
	size_t input_count;
	uint64_t *damaged; /* messages shown marked, for the exit status */
};

static int parse_options(int argc, char **argv, struct log_options *o)
{
	int rc;
	const char *value;
	int positional_only = 0;
	size_t positional = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			argv[positional++] = argv[i];
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_log_help(stdout);
			return -1;
		} else if (strcmp(arg, "--json") == 0) {
			o->json = 1;
		} else if (strcmp(arg, "-f") == 0 || strcmp(arg, "--follow") == 0) {
			o->follow = 1;
		} else if ((rc = rt_cmd_option(argc, argv, &i, "--level", &value)) != 0) {
			if (rc < 0 || !(o->level = rt_log_level_parse(value)))
				return rt_cmd_usage_error(
				    "log", LOG_USAGE,
				    "--level %s: fatal, error, warn, notice, info or debug",
				    rc < 0 ? "needs a name" : value);
		} else if ((rc = rt_cmd_option(argc, argv, &i, "--since", &value)) != 0) {
			if (rc < 0)
				return rt_cmd_usage_error("log", LOG_USAGE,
							  "--since needs a time or seq:N");
			if (strncmp(value, "seq:", 4) == 0) {
				if (rt_parse_u64(value + 4, &o->since) != 0)
					return rt_cmd_usage_error(
					    "log", LOG_USAGE,
					    "--since %s: seq: needs a message number (0, 1, ...)",
					    value);
				o->since_seq = 1;
			} else if (rt_parse_duration(value, &o->since) != 0) {
				return rt_cmd_usage_error("log", LOG_USAGE,
							  "--since %s: not a time with a unit "
							  "(2.5s, 150ms, 40us) nor seq:N",
							  value);
			}
			o->has_since = 1;
		} else {
			return rt_cmd_usage_error("log", LOG_USAGE, "unknown option '%s'", arg);
		}
	}
	if (positional == 0)
		return rt_cmd_usage_error("log", LOG_USAGE, "which arenas or trace files?");
	if (o->follow && positional != 1)
		return rt_cmd_usage_error("log", LOG_USAGE, "-f follows one PID or ARENA");
	o->inputs = argv;
	o->input_count = positional;
	return 0;
}

/*
 * "2026-11-21T20:43:06.123456789Z".  Messages come in time order, so the
 * date and time of day are formatted once a second, not once a message.
 */
static void put_wall(struct rt_out *out, uint64_t wall_ns)
{
	static uint64_t last_second = UINT64_MAX;
	static char text[64];
	static size_t text_length;
	uint64_t second = wall_ns / 1000000000u;
	if (second != last_second) {
		time_t t = (time_t)second;
		struct tm tm;
		if (!gmtime_r(&t, &tm) ||
		    strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S.", &tm) == 0)
			snprintf(text, sizeof(text), "?.");
		text_length = strlen(text);
		last_second = second;
	}
	char buf[96];
	memcpy(buf, text, text_length);
	char *s = rt_fmt_u64_zero(buf + text_length, wall_ns % 1000000000u, 9);
	*s++ = 'Z';
	rt_out_bytes(out, buf, (size_t)(s - buf));
}

/* The time column: wall clock, else the time since the start, else the raw counter. */
static void put_time(struct rt_out *out, const struct rt_reader *rd, uint64_t counter)
{
	if (rd->raw_time) {
		rt_out_printf(out, "raw %llu", (unsigned long long)counter);
		return;
	}
	int64_t ns = rt_timebase_ns(&rd->timebase, counter);
	uint64_t anchor = rd->header.start.wall_ns;
	if (anchor && (ns >= 0 || (uint64_t)-ns <= anchor)) {
		put_wall(out, ns >= 0 ? anchor + (uint64_t)ns : anchor - (uint64_t)-ns);
		return;
	}
	uint64_t mag = ns < 0 ? (uint64_t)-ns : (uint64_t)ns;
	rt_out_printf(out, "%s%llu.%09llus", ns < 0 ? "-" : "+",
		      (unsigned long long)(mag / 1000000000u),
		      (unsigned long long)(mag % 1000000000u));
}

static void put_line(struct rt_out *out, const struct rt_reader *rd, const struct rt_site *site,
		     const struct rt_item *it, uint64_t *damaged)
{
	static char message[LOG_MESSAGE_MAX];
	int bad = 0;
	size_t n =
	    rt_log_render(message, sizeof(message), site, it->log.payload, it->log.length, &bad);
	if (n >= sizeof(message))
		n = sizeof(message) - 1;
	*damaged += (uint64_t)bad;
	put_time(out, rd, it->counter);
	rt_out_str(out, " ");
	char upper[16];
	size_t u = 0;
	for (const char *l = rt_log_level_name(site->level); *l && u < sizeof(upper); l++)
		upper[u++] = (char)toupper((unsigned char)*l);
	rt_out_bytes(out, upper, u);
	if (it->flags & RT_ITEM_NO_OWNER) {
		rt_out_printf(out, " [ring %u] ", it->thread & ~RT_ITEM_RING_ONLY);
	} else if (it->thread < rd->thread_count) {
		const struct rt_reader_thread *t = &rd->threads[it->thread];
		char tid[32] = " [tid ";
		char *e = tid + 6;
		if (t->tid < 0)
			*e++ = '-';
		e = rt_fmt_u64(e, t->tid < 0 ? (uint64_t) - (int64_t)t->tid : (uint64_t)t->tid);
		rt_out_bytes(out, tid, (size_t)(e - tid));
		if (t->name[0]) {
			rt_out_str(out, " ");
			rt_out_escaped(out, t->name, strnlen(t->name, sizeof(t->name)));
		}
		rt_out_str(out, "] ");
	} else {
		rt_out_str(out, " [tid ?] ");
	}
	rt_out_escaped(out, site->file_base, site->file_base_length);
	char line[16] = ":";
	char *e = rt_fmt_u64(line + 1, site->line);
	*e++ = ' ';
	rt_out_bytes(out, line, (size_t)(e - line));
	rt_out_escaped(out, message, n);
	rt_out_str(out, "\n");
}

/* The log site of a message --level and a time --since keep, or NULL. */
static const struct rt_site *wanted(const struct log_options *o, const struct rt_reader *rd,
				    const struct rt_item *it)
{
	if (it->kind != RT_ITEM_LOG)
		return NULL;
	const struct rt_site *site =
	    it->flags & RT_ITEM_NO_SITE ? NULL : rt_site_lookup(&rd->sites, it->site);
	/* a message whose site is lost has no level, format nor place: dump shows it */
	if (!site || site->kind != RT_SITE_LOG)
		return NULL;
	if (o->level && site->level > o->level)
		return NULL;
	if (o->has_since && !o->since_seq) {
		int64_t ns = rd->raw_time ? 0 : rt_timebase_ns(&rd->timebase, it->counter);
		if (ns < 0 || (uint64_t)ns < o->since)
			return NULL;
	}
	return site;
}

static int print_log(struct rt_trace_set *set, const void *options, struct rt_out *out)
{
	const struct log_options *o = options;
	struct rt_json_printer jp;
	const struct rt_reader **readers = NULL;
	int rc;
	if (o->json) {
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		readers = calloc(set->source_count + 1, sizeof(*readers));
		if (!readers)
			return -ENOMEM;
		for (size_t i = 0; i < set->source_count; i++)
			readers[i] = set->sources[i].reader;
		if (rt_json_printer_init_sources(&jp, out, readers, set->source_count)) {
			free(readers);
			return -ENOMEM;
		}
		jp.show_pid = rt_trace_set_multi_process(set);
	}
	rc = rt_trace_set_start(set, 0);
	const struct rt_item *it;
	uint32_t source;
	uint64_t shown = 0;
	while (!rc && (it = rt_trace_set_next(set, &source)) != NULL) {
		const struct rt_reader *rd = set->sources[source].reader;
		const struct rt_site *site = wanted(o, rd, it);
		if (!site)
			continue;
		if (o->has_since && o->since_seq && shown++ < o->since)
			continue;
		if (o->json) {
			rt_json_printer_source(&jp, source);
			rt_json_print_item(&jp, it);
		} else {
			put_line(out, rd, site, it, o->damaged);
		}
	}
	if (!rc)
		rc = rt_trace_set_error(set);
	if (o->json) {
		*o->damaged += jp.log_damaged;
		rt_json_printer_free(&jp);
		free(readers);
	}
	return rc;
}

/* ---- -f: one live arena, followed as its program writes it --------------- */

struct log_follow {
	const struct log_options *o;
	struct rt_out out;
	struct rt_json_printer jp;
	uint64_t shown; /* for --since seq:N, over every poll */
};

/* One poll's messages, printed and flushed. */
static int print_polled(void *state, struct rt_follower *f)
{
	struct log_follow *lf = state;
	const struct log_options *o = lf->o;
	int rc;
	if (o->json && f->tables_reloaded && (rc = rt_json_printer_reload(&lf->jp, 0)) != 0)
		return rc;
	for (size_t i = 0; i < f->batch.count; i++) {
		const struct rt_item *it = &f->batch.items[i];
		const struct rt_site *site = wanted(o, f->rd, it);
		if (!site || (o->has_since && o->since_seq && lf->shown++ < o->since))
			continue;
		if (o->json)
			rt_json_print_item(&lf->jp, it);
		else
			put_line(&lf->out, f->rd, site, it, o->damaged);
	}
	rt_out_flush(&lf->out);
	return lf->out.error ? -lf->out.error : 0;
}

/*
 * What the rings hold, then what the program writes, poll by poll (the
 * follower `tail` uses), until it ends or SIGINT or SIGTERM.
 */
static int follow(const struct log_options *o)
{
	if (!o->inputs || o->input_count != 1) /* parse_options() sees to it */
		return RT_EXIT_USAGE;
	struct rt_reader *rd;
	char *path = rt_cmd_follow_target("log", o->inputs[0], &rd);
	if (!path)
		return RT_EXIT_USAGE;
	struct rt_read_error error;
	memset(&error, 0, sizeof(error));
	volatile sig_atomic_t *stop = rt_follow_stop_on_signals();
	struct log_follow lf;
	struct rt_follower f;
	memset(&lf, 0, sizeof(lf));
	lf.o = o;
	int rc = rt_follower_init(&f, rd);
	int out_open = 0;
	if (rc == 0 && rt_out_open(&lf.out, STDOUT_FILENO) != 0)
		rc = -ENOMEM;
	out_open = rc == 0;
	if (rc == 0 && o->json && rt_json_printer_init(&lf.jp, &lf.out, rd))
		rc = -ENOMEM;
	int shrunk = 0;
	if (rc == 0) {
		rc = rt_follower_run(&f, 1, stop, print_polled, &lf, &shrunk, &error);
		if (rc && error.message[0])
			rt_cmd_report_open_error(path, &error);
		if (o->json) {
			*o->damaged += lf.jp.log_damaged;
			rt_json_printer_free(&lf.jp);
		}
	}
	int status = RT_EXIT_FAILURE;
	if (out_open) {
		int closed = rt_out_close(&lf.out);
		status = rt_cmd_finish_output(closed);
		if (closed)
			rc = 0; /* said once, by finish_output */
	}
	if (rc) {
		if (!error.message[0])
			fprintf(stderr, "ringtrace: %s: %s\n", rt_escaped(path), strerror(-rc));
		status = RT_EXIT_FAILURE;
	}
	if (shrunk > 0) {
		/* cut short while it was read: what was read is printed, the rest is damage */
		rt_cmd_report_shrunk(rd, path);
		if (status == RT_EXIT_OK)
			status = RT_EXIT_DAMAGED;
	}
	rt_follower_free(&f);
	rt_reader_close(rd);
	free(path);
	return status;
}

int rt_cmd_log(int argc, char **argv)
{
	struct log_options o;
	uint64_t damaged = 0;
	memset(&o, 0, sizeof(o));
	o.damaged = &damaged;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? RT_EXIT_OK : rc;
	int status =
	    o.follow ? follow(&o) : rt_cmd_print_set(o.inputs, o.input_count, print_log, &o);
	if (damaged) {
		fprintf(stderr,
			"ringtrace: %llu log message%s with a damaged payload, shown marked\n",
			(unsigned long long)damaged, damaged == 1 ? "" : "s");
		if (status == RT_EXIT_OK)
			status = RT_EXIT_DAMAGED;
	}
	return status;
}
