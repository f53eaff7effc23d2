/*
 * ship.c - `ringtrace ship`: every event of finished trace files into a
 * ClickHouse table, exactly once, so that a fleet's recordings answer one
 * query (src/ship/; docs/SHIP.md).
 *
 * Inputs are trace files and directories of them.  Each file is shipped on
 * its own (every file of a rotated set decodes alone), in name order; with
 * --follow the directories are looked at again until the recording ends or
 * a signal says stop, and each file is shipped once it has its END block.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/ship_file.h"
#include "common/parse.h"
#include "read/input_dir.h"
#include "read/trace_file.h"
#include "ship/schema.h"

#define SHIP_USAGE                                                                                 \
	"ringtrace ship --to URL [--table T] [--journal FILE] [--host NAME] [--batch N]\n"         \
	"                      [--retry SECONDS] [--create] [--follow] [--unfinished]\n"           \
	"                      [--debug-dir DIR]... FILE|DIR...\n"                                 \
	"       ringtrace ship --schema [--table T]"

#define DEFAULT_BATCH 65536u
#define BATCH_MAX (16u << 20)
#define DEFAULT_RETRY 60u
#define FOLLOW_INTERVAL_NS 200000000L

void rt_cmd_ship_help(FILE *to)
{
	fprintf(
	    to,
	    "usage: " SHIP_USAGE "\n"
	    "\n"
	    "Insert every event of finished trace files, and every loss they record,\n"
	    "into a ClickHouse table over its HTTP interface: one row per item, with the\n"
	    "host, process, thread, wall-clock time, site, arguments, message, function,\n"
	    "I/O call and path, and span durations.  Each row is keyed by its file and\n"
	    "its place in it; the table (a ReplacingMergeTree) keeps one copy of a row\n"
	    "sent twice, and a journal of what the server acknowledged lets a stopped\n"
	    "ship go on where it stopped.  A file is done when the server counts all its\n"
	    "rows.  A file without its end block (still being written) is left for later.\n"
	    "\n"
	    "Options:\n"
	    "  --to URL          the server: http://HOST:8123 (user:password@ and\n"
	    "                    ?database=DB are passed on as written)\n"
	    "  --table T         the table, [DB.]NAME (default " RT_SHIP_DEFAULT_TABLE ")\n"
	    "  --create          create the table first if it does not exist\n"
	    "  --schema          print the CREATE TABLE the rows need, and stop\n"
	    "  --journal FILE    the journal (default $XDG_STATE_HOME/ringtrace/ship.journal,\n"
	    "                    else ~/.local/state/ringtrace/ship.journal)\n"
	    "  --host NAME       the host column (default: the machine that recorded the file)\n"
	    "  --batch N         rows per INSERT (default %u)\n"
	    "  --retry SECONDS   how long to keep trying while the server is unreachable or\n"
	    "                    busy, per request (default %u)\n"
	    "  --follow          look at the directories again every 0.2 s and ship each new\n"
	    "                    file once it is finished (a rotated set as it rotates), until\n"
	    "                    a file ends the recording or SIGINT/SIGTERM\n"
	    "  --unfinished      ship files without an end block too, as they are (a\n"
	    "                    recording whose collector was killed); one that grows after\n"
	    "                    is not shipped again\n"
	    "  --debug-dir DIR   look for separate debug files in DIR too (up to 16 times),\n"
	    "                    to name functions\n"
	    "  --help            this text\n"
	    "\n"
	    "Output: one line per file on standard output.  Exit status: 0; 1 when a file\n"
	    "could not be shipped (the server refused, stayed unreachable, or counted\n"
	    "other than the file holds) or was not finished; 2 for a bad command line or an\n"
	    "input that is not a trace file; 3 when an input was damaged (what it held\n"
	    "was shipped, its losses as rows of kind 'lost').  docs/SHIP.md has the table\n"
	    "and queries over a fleet.\n",
	    DEFAULT_BATCH, DEFAULT_RETRY);
}

struct ship_options {
	const char *url;
	const char *table;
	const char *journal;
	const char *host;
	uint64_t batch;
	uint64_t retry;
	int create, schema, follow, unfinished;
	char **paths;
	size_t path_count;
	const char *debug_dirs[RT_CMD_DEBUG_DIRS_MAX];
	size_t debug_dir_count;
};

static int number_option(const char *name, const char *value, uint64_t min, uint64_t max,
			 uint64_t *out)
{
	if (rt_parse_u64(value, out) != 0 || *out < min || *out > max)
		return rt_cmd_usage_error("ship", SHIP_USAGE,
					  "%s: '%s' is not a number from %llu to %llu", name, value,
					  (unsigned long long)min, (unsigned long long)max);
	return 0;
}

/* --to, --table, --journal or --host: 1 taken, 0 another option, -1 without its value. */
static int string_option(int argc, char **argv, int *i, const char **url, const char **table,
			 const char **journal, const char **host)
{
	static const char *const names[] = {"--to", "--table", "--journal", "--host"};
	const char **values[] = {url, table, journal, host};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		const char *value = NULL;
		int m = rt_cmd_option(argc, argv, i, names[k], &value);
		if (m > 0)
			*values[k] = value;
		if (m != 0)
			return m;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct ship_options *o)
{
	memset(o, 0, sizeof(*o));
	o->paths = argv; /* the inputs are packed at its front */
	o->table = RT_SHIP_DEFAULT_TABLE;
	o->batch = DEFAULT_BATCH;
	o->retry = DEFAULT_RETRY;
	int positional_only = 0, unused_tid = 0;
	int32_t tid = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i], *value = NULL;
		int m, rc;
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			argv[o->path_count++] = argv[i];
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_ship_help(stdout);
			return -1;
		} else if (strcmp(arg, "--create") == 0) {
			o->create = 1;
		} else if (strcmp(arg, "--schema") == 0) {
			o->schema = 1;
		} else if (strcmp(arg, "--follow") == 0) {
			o->follow = 1;
		} else if (strcmp(arg, "--unfinished") == 0) {
			o->unfinished = 1;
		} else if ((m = string_option(argc, argv, &i, &o->url, &o->table, &o->journal,
					      &o->host)) != 0) {
			if (m < 0)
				return rt_cmd_usage_error("ship", SHIP_USAGE, "%s needs a value",
							  arg);
		} else if ((m = rt_cmd_option(argc, argv, &i, "--batch", &value)) != 0) {
			if (m < 0 ||
			    (rc = number_option("--batch", value, 1, BATCH_MAX, &o->batch)))
				return m < 0 ? rt_cmd_usage_error("ship", SHIP_USAGE,
								  "--batch needs a value")
					     : rc;
		} else if ((m = rt_cmd_option(argc, argv, &i, "--retry", &value)) != 0) {
			if (m < 0 || (rc = number_option("--retry", value, 0, 86400, &o->retry)))
				return m < 0 ? rt_cmd_usage_error("ship", SHIP_USAGE,
								  "--retry needs a value")
					     : rc;
		} else if ((rc = rt_cmd_reading_option(argc, argv, &i, "ship", SHIP_USAGE,
						       &unused_tid, &tid, o->debug_dirs,
						       &o->debug_dir_count)) != 0) {
			if (rc != 1)
				return rc;
			if (unused_tid)
				return rt_cmd_usage_error("ship", SHIP_USAGE,
							  "--tid: a table holds every thread");
		} else {
			return rt_cmd_usage_error("ship", SHIP_USAGE, "unknown option '%s'", arg);
		}
	}
	o->paths = argv;
	if (!rt_ship_table_name_ok(o->table))
		return rt_cmd_usage_error("ship", SHIP_USAGE,
					  "--table '%s': [DB.]NAME of letters, digits and '_'",
					  o->table);
	if (o->schema)
		return 0;
	if (!o->url)
		return rt_cmd_usage_error("ship", SHIP_USAGE, "where to? --to http://HOST:8123");
	if (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0)
		return rt_cmd_usage_error("ship", SHIP_USAGE,
					  "--to '%s': an http:// or https:// URL", o->url);
	if (o->host && (o->host[0] == 0 || strlen(o->host) > 255))
		return rt_cmd_usage_error("ship", SHIP_USAGE, "--host: 1 to 255 bytes");
	if (o->path_count == 0)
		return rt_cmd_usage_error("ship", SHIP_USAGE, "which trace files?");
	return 0;
}

static volatile sig_atomic_t stop_requested;

static void on_stop(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* A file found in a directory, or named: its path, and whether this run is done with it. */
struct input {
	char *path;
	int done;
};

struct inputs {
	struct input *items;
	size_t count, capacity;
};

static int known(const struct inputs *in, const char *path)
{
	for (size_t i = 0; i < in->count; i++)
		if (strcmp(in->items[i].path, path) == 0)
			return 1;
	return 0;
}

static int add(struct inputs *in, const char *path)
{
	if (known(in, path))
		return 0;
	if (in->count == in->capacity) {
		size_t c = in->capacity ? 2 * in->capacity : 16;
		struct input *grown = realloc(in->items, c * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		in->items = grown;
		in->capacity = c;
	}
	char *copy = strdup(path);
	if (!copy)
		return -ENOMEM;
	struct input *slot = &in->items[in->count++];
	slot->path = copy;
	slot->done = 0;
	return 0;
}

/* The trace files of dir not seen yet, in name order (rotated files sort in time order). */
static int scan_directory(struct inputs *in, const char *dir)
{
	char **paths;
	size_t count;
	int rc = rt_input_dir_list(dir, RT_INPUT_DIR_TRACES, &paths, &count);
	for (size_t i = 0; !rc && i < count; i++)
		rc = add(in, paths[i]);
	rt_input_dir_free(paths, count);
	return rc;
}

/* Find the inputs: 0, or the exit status after a line on stderr. */
static int gather(struct inputs *in, const struct ship_options *o)
{
	for (size_t i = 0; i < o->path_count; i++) {
		struct stat st;
		const char *p = o->paths[i];
		if (stat(p, &st) != 0) {
			fprintf(stderr, "ringtrace ship: %s: %s\n", rt_escaped(p), strerror(errno));
			return RT_EXIT_USAGE;
		}
		int rc = S_ISDIR(st.st_mode) ? scan_directory(in, p) : add(in, p);
		if (rc) {
			fprintf(stderr, "ringtrace ship: %s: %s\n", rt_escaped(p), strerror(-rc));
			return RT_EXIT_USAGE;
		}
	}
	return 0;
}

/* Ship every input not done yet; *ended: a file ended its recording. */
static int ship_pending(struct inputs *in, const struct rt_ship_target *t,
			const struct ship_options *o, int *ended, int *waiting)
{
	int status = 0;
	*waiting = 0;
	for (size_t i = 0; i < in->count && !stop_requested; i++) {
		struct input *f = &in->items[i];
		if (f->done)
			continue;
		struct rt_ship_file_result r;
		int unfinished_now = 0;
		if (o->follow && !o->unfinished) {
			/* a file still being written is looked at again later, silently */
			struct rt_trace_file probe;
			char message[256];
			struct rt_block_end end;
			if (rt_trace_file_open(&probe, f->path, message, sizeof(message)) == 0) {
				unfinished_now = rt_trace_file_ended(&probe, &end) == 0;
				rt_trace_file_close(&probe);
			}
			if (unfinished_now) {
				*waiting = 1;
				continue;
			}
		}
		int s = rt_ship_file(t, f->path, o->unfinished, &r);
		f->done = 1;
		if (s == RT_EXIT_OK || s == RT_EXIT_DAMAGED) {
			if (r.already)
				printf(
				    "%s: already shipped (%llu events, file_id %016llx, file_seq "
				    "%u)\n",
				    rt_escaped(f->path), (unsigned long long)r.rows,
				    (unsigned long long)r.file_id, r.file_seq);
			else
				printf("%s: %llu events shipped (file_id %016llx, file_seq %u)\n",
				       rt_escaped(f->path), (unsigned long long)r.rows,
				       (unsigned long long)r.file_id, r.file_seq);
			fflush(stdout);
		}
		if (r.finished)
			*ended = 1;
		/* the worst wins: 2 (unreadable) over 1 (failed) over 3 (damaged) */
		if (s == RT_EXIT_USAGE || (s == RT_EXIT_FAILURE && status != RT_EXIT_USAGE) ||
		    (s == RT_EXIT_DAMAGED && status == 0))
			status = s;
	}
	return status;
}

static int follow(struct inputs *in, const struct rt_ship_target *t, const struct ship_options *o)
{
	int status = 0, ended = 0, waiting = 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (;;) {
		int s = ship_pending(in, t, o, &ended, &waiting);
		if (s == RT_EXIT_USAGE || (s == RT_EXIT_FAILURE && status != RT_EXIT_USAGE) ||
		    (s == RT_EXIT_DAMAGED && status == 0))
			status = s;
		if (stop_requested || (ended && !waiting))
			break;
		struct timespec ts = {0, FOLLOW_INTERVAL_NS};
		nanosleep(&ts, NULL);
		for (size_t i = 0; i < o->path_count; i++) {
			struct stat st;
			if (stat(o->paths[i], &st) == 0 && S_ISDIR(st.st_mode) &&
			    scan_directory(in, o->paths[i]) == -ENOMEM)
				return RT_EXIT_FAILURE;
		}
	}
	if (stop_requested && waiting)
		fprintf(stderr, "ringtrace ship: stopped; files still being written were not "
				"shipped\n");
	return status;
}

static int create_table(struct rt_ship_http *http, const char *table, const char *url)
{
	char *sql = rt_ship_create_table(table);
	struct rt_ship_buffer answer = {0};
	char message[1024];
	if (!sql) {
		fprintf(stderr, "ringtrace ship: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	enum rt_ship_http_result r =
	    rt_ship_http_run(http, sql, NULL, 0, &answer, message, sizeof(message));
	free(sql);
	rt_ship_buffer_free(&answer);
	if (r != RT_SHIP_HTTP_OK) {
		fprintf(stderr, "ringtrace ship: %s: creating %s: %s\n", rt_escaped(url),
			rt_escaped(table), rt_escaped(message));
		return RT_EXIT_FAILURE;
	}
	return 0;
}

int rt_cmd_ship(int argc, char **argv)
{
	struct ship_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? RT_EXIT_OK : rc;
	if (o.schema) {
		char *sql = rt_ship_create_table(o.table);
		if (!sql) {
			fprintf(stderr, "ringtrace ship: out of memory\n");
			return RT_EXIT_FAILURE;
		}
		fputs(sql, stdout);
		free(sql);
		return rt_cmd_finish_output(fflush(stdout) == 0 ? 0 : -errno);
	}
	char journal_path[4096];
	if (o.journal)
		snprintf(journal_path, sizeof(journal_path), "%s", o.journal);
	else if (rt_ship_journal_default_path(journal_path, sizeof(journal_path)) != 0)
		return rt_cmd_usage_error(
		    "ship", SHIP_USAGE,
		    "no HOME or XDG_STATE_HOME for the journal: --journal FILE");
	struct inputs in = {0};
	int status = gather(&in, &o);
	char url[2048], dest[2400], message[1024];
	rt_ship_url_without_password(o.url, url, sizeof(url));
	snprintf(dest, sizeof(dest), "%s#%s", url, o.table);
	struct rt_ship_journal *journal = NULL;
	struct rt_ship_http *http = NULL;
	char *columns = NULL;
	if (!status) {
		journal = rt_ship_journal_open(journal_path, message, sizeof(message));
		if (!journal) {
			status = rt_cmd_output_status(-errno);
			fprintf(stderr, "ringtrace ship: %s\n", rt_escaped(message));
		}
	}
	if (!status) {
		http = rt_ship_http_new(o.url, message, sizeof(message));
		columns = rt_ship_column_list();
		if (!http || !columns) {
			fprintf(stderr, "ringtrace ship: %s\n",
				rt_escaped(http ? "out of memory" : message));
			status = RT_EXIT_FAILURE;
		}
	}
	if (!status && o.create)
		status = create_table(http, o.table, url);
	if (!status) {
		struct rt_ship_target t = {
		    .http = http,
		    .table = o.table,
		    .dest = dest,
		    .url = url,
		    .columns = columns,
		    .journal = journal,
		    .host = o.host,
		    .batch_rows = (size_t)o.batch,
		    .retry_seconds = (unsigned)o.retry,
		    .debug_dirs = o.debug_dirs,
		    .debug_dir_count = o.debug_dir_count,
		    .stop = &stop_requested,
		};
		if (o.follow) {
			status = follow(&in, &t, &o);
		} else {
			int ended, waiting;
			status = ship_pending(&in, &t, &o, &ended, &waiting);
		}
	}
	free(columns);
	rt_ship_http_free(http);
	rt_ship_journal_close(journal);
	for (size_t i = 0; i < in.count; i++)
		free(in.items[i].path);
	free(in.items);
	int out = rt_cmd_finish_output(fflush(stdout) == 0 ? 0 : -errno);
	return status ? status : out;
}
