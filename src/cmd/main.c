/*
 * main.c - `ringtrace COMMAND ...`: find the subcommand and run it.
 */
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#include "cmd/cmd.h"
#include "common/parse.h"
#include "present/item_filter.h"

struct command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*help)(FILE *to);
};

static const struct command commands[] = {
    {"dump", "print the events of arenas and trace files, merged by time", rt_cmd_dump,
     rt_cmd_dump_help},
    {"info", "describe an arena (owner, geometry, counts, clock) or trace files", rt_cmd_info,
     rt_cmd_info_help},
    {"ls", "list the arenas: whose, running or how they ended, disk space", rt_cmd_ls,
     rt_cmd_ls_help},
    {"rm", "remove arenas (--dead: those of ended processes)", rt_cmd_rm, rt_cmd_rm_help},
    {"record", "run a program and record its trace into a file", rt_cmd_record, rt_cmd_record_help},
    {"snapshot", "write a flight-mode arena's rings out now", rt_cmd_snapshot,
     rt_cmd_snapshot_help},
    {"tail", "print a running program's events as it records them", rt_cmd_tail, rt_cmd_tail_help},
    {"log", "print the RT_LOG messages, one a line, with wall-clock times", rt_cmd_log,
     rt_cmd_log_help},
    {"level", "show or set the RT_LOG threshold of a running program", rt_cmd_level,
     rt_cmd_level_help},
    {"summary", "counts per site, thread and kind; every loss by cause", rt_cmd_summary,
     rt_cmd_summary_help},
    {"cut", "write the part of a trace between two times into a new file", rt_cmd_cut,
     rt_cmd_cut_help},
    {"check", "find and report every damaged region of a trace", rt_cmd_check, rt_cmd_check_help},
    {"recover", "write what a damaged trace still holds into a clean file", rt_cmd_recover,
     rt_cmd_recover_help},
    {"replay", "function calls as an indented tree per thread, with durations", rt_cmd_replay,
     rt_cmd_replay_help},
    {"export", "write traces for other viewers: Chrome JSON, Perfetto, CTF", rt_cmd_export,
     rt_cmd_export_help},
    {"analyze", "spans, latencies, rates, argument shares, stalls: tables and plots",
     rt_cmd_analyze, rt_cmd_analyze_help},
    {"ship", "insert finished trace files into a ClickHouse table, exactly once", rt_cmd_ship,
     rt_cmd_ship_help},
    {"report", "time per function: calls, total, self, average, max; folded stacks", rt_cmd_report,
     rt_cmd_report_help},
};

#define COMMAND_COUNT (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < COMMAND_COUNT; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void usage(FILE *to)
{
	fprintf(to, "usage: ringtrace COMMAND [OPTIONS] [INPUT... | -- PROGRAM [ARGS...]]\n"
		    "       ringtrace help COMMAND | --help | --version\n"
		    "\n"
		    "Commands:\n");
	for (size_t i = 0; i < COMMAND_COUNT; i++)
		fprintf(to, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(to,
		"\nRun 'ringtrace help COMMAND' for a command's options, 'man ringtrace-COMMAND'\n"
		"for its manual.\n");
}

int rt_cmd_option(int argc, char **argv, int *i, const char *name, const char **value)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);
	if (strncmp(arg, name, n) != 0)
		return 0;
	if (!value)
		return arg[n] == 0;
	if (arg[n] == '=') {
		*value = arg + n + 1;
		return 1;
	}
	if (arg[n] != 0)
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 1;
}

int rt_cmd_tid_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
		      int *has_tid, int32_t *tid)
{
	const char *value;
	int rc = rt_cmd_option(argc, argv, i, "--tid", &value);
	if (rc == 0)
		return 0;
	int64_t n;
	if (rc < 0 || rt_parse_i64(value, &n) != 0 || n <= 0 || n > INT32_MAX)
		return rt_cmd_usage_error(cmd, usage, "--tid needs a thread id");
	*has_tid = 1;
	*tid = (int32_t)n;
	return 1;
}

int rt_cmd_debug_dir_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
			    const char **dirs, size_t *count)
{
	const char *value;
	int rc = rt_cmd_option(argc, argv, i, "--debug-dir", &value);
	if (rc == 0)
		return 0;
	if (rc < 0 || !value[0])
		return rt_cmd_usage_error(cmd, usage, "--debug-dir needs a directory");
	if (*count == RT_CMD_DEBUG_DIRS_MAX)
		return rt_cmd_usage_error(cmd, usage, "at most %d --debug-dir",
					  RT_CMD_DEBUG_DIRS_MAX);
	dirs[(*count)++] = value;
	return 1;
}

int rt_cmd_reading_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
			  int *has_tid, int32_t *tid, const char **dirs, size_t *count)
{
	int rc = rt_cmd_tid_option(argc, argv, i, cmd, usage, has_tid, tid);
	return rc ? rc : rt_cmd_debug_dir_option(argc, argv, i, cmd, usage, dirs, count);
}

/* A pattern of -F or -N into list; 1, or the status of the usage error. */
static int add_pattern(const char *cmd, const char *usage, const char *option, int rc,
		       const char *value, const char **list, size_t *count)
{
	if (rc < 0 || !value[0])
		return rt_cmd_usage_error(cmd, usage, "%s needs a function name pattern", option);
	if (*count == RT_FILTER_PATTERNS_MAX)
		return rt_cmd_usage_error(cmd, usage, "at most %d %s patterns",
					  RT_FILTER_PATTERNS_MAX, option);
	list[(*count)++] = value;
	return 1;
}

/* A time of --since or --until; 1, or the status of the usage error. */
static int parse_time(const char *cmd, const char *usage, const char *option, int rc,
		      const char *value, int *has, uint64_t *ns)
{
	if (rc < 0 || rt_parse_duration(value, ns) != 0)
		return rt_cmd_usage_error(cmd, usage,
					  "%s needs a time since the trace's start with a unit "
					  "(2.5s, 150ms, 40us)",
					  option);
	*has = 1;
	return 1;
}

int rt_cmd_filter_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
			 struct rt_item_filter_options *o)
{
	const char *value = NULL;
	int rc;
	if ((rc = rt_cmd_option(argc, argv, i, "-F", &value)) != 0 ||
	    (rc = rt_cmd_option(argc, argv, i, "--filter", &value)) != 0)
		return add_pattern(cmd, usage, "-F", rc, value, o->include, &o->include_count);
	if ((rc = rt_cmd_option(argc, argv, i, "-N", &value)) != 0 ||
	    (rc = rt_cmd_option(argc, argv, i, "--notrace", &value)) != 0)
		return add_pattern(cmd, usage, "-N", rc, value, o->exclude, &o->exclude_count);
	if ((rc = rt_cmd_option(argc, argv, i, "--since", &value)) != 0)
		return parse_time(cmd, usage, "--since", rc, value, &o->has_since, &o->since_ns);
	if ((rc = rt_cmd_option(argc, argv, i, "--until", &value)) != 0)
		return parse_time(cmd, usage, "--until", rc, value, &o->has_until, &o->until_ns);
	if ((rc = rt_cmd_option(argc, argv, i, "--pid", &value)) != 0) {
		int64_t n;
		if (rc < 0 || rt_parse_i64(value, &n) != 0 || n <= 0 || n > INT32_MAX)
			return rt_cmd_usage_error(cmd, usage, "--pid needs a process id");
		if (o->pid_count == RT_FILTER_PIDS_MAX)
			return rt_cmd_usage_error(cmd, usage, "at most %d --pid",
						  RT_FILTER_PIDS_MAX);
		o->pids[o->pid_count++] = (int32_t)n;
		return 1;
	}
	return 0;
}

/* Whether s is a number with no unit ("5", "2.5"): what -t is most often given by mistake. */
static int bare_number(const char *s)
{
	return s[0] >= '0' && s[0] <= '9' && !s[strspn(s, "0123456789.")];
}

int rt_cmd_call_limit_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
			     struct rt_call_limits *l)
{
	const char *value = NULL;
	int rc;
	if ((rc = rt_cmd_option(argc, argv, i, "-t", &value)) != 0 ||
	    (rc = rt_cmd_option(argc, argv, i, "--time-filter", &value)) != 0 ||
	    (rc = rt_cmd_option(argc, argv, i, "--min-duration", &value)) != 0) {
		if (rc > 0 && bare_number(value))
			return rt_cmd_usage_error(cmd, usage,
						  "-t '%s' has no unit: a duration needs one "
						  "(ns, us, ms, s, min, h: 10us, 1.5ms)",
						  value);
		if (rc < 0 || rt_parse_duration(value, &l->min_ns) != 0)
			return rt_cmd_usage_error(
			    cmd, usage,
			    "-t needs a duration with a unit (2.5s, 150ms, 40us, 500ns)");
		return 1;
	}
	if ((rc = rt_cmd_option(argc, argv, i, "-D", &value)) != 0 ||
	    (rc = rt_cmd_option(argc, argv, i, "--depth", &value)) != 0) {
		uint64_t n;
		if (rc < 0 || rt_parse_u64(value, &n) != 0 || n == 0 || n > UINT32_MAX)
			return rt_cmd_usage_error(cmd, usage,
						  "-D needs a number of levels of at least 1");
		l->max_depth = (uint32_t)n;
		return 1;
	}
	return 0;
}

int rt_cmd_filter_check(const char *cmd, const char *usage, const struct rt_item_filter_options *o)
{
	if (o->has_since && o->has_until && o->until_ns < o->since_ns)
		return rt_cmd_usage_error(cmd, usage, "--until is before --since");
	return 0;
}

int rt_cmd_output_status(int err)
{
	return err == -EPERM ? RT_EXIT_USAGE : RT_EXIT_FAILURE;
}

int rt_cmd_usage_error(const char *cmd, const char *usage_line, const char *format, ...)
{
	/* the message quotes the command line, which may hold anything */
	char message[4096];
	va_list ap;
	va_start(ap, format);
	vsnprintf(message, sizeof(message), format, ap);
	va_end(ap);
	fprintf(stderr, "ringtrace %s: %s\nusage: %s\nTry 'ringtrace %s --help'.\n", cmd,
		rt_escaped(message), usage_line, cmd);
	return RT_EXIT_USAGE;
}

void rt_cmd_report_open_error(const char *path, const struct rt_read_error *error)
{
	if (error->has_offset)
		fprintf(stderr, "ringtrace: %s: byte %llu: %s\n", rt_escaped(path),
			(unsigned long long)error->offset, rt_escaped(error->message));
	else
		fprintf(stderr, "ringtrace: %s: %s\n", rt_escaped(path),
			rt_escaped(error->message));
}

void rt_cmd_report_shrunk(const struct rt_reader *rd, const char *path)
{
	if (rd->shrunk_from)
		fprintf(stderr,
			"ringtrace: %s: the file shrank while it was read (another process "
			"truncated it): bytes from %llu on are damage\n",
			rt_escaped(path), (unsigned long long)(rd->shrunk_from - 1));
}

int rt_cmd_damage_status(struct rt_reader *rd, const char *path, int status)
{
	uint64_t shrunk;
	if (rt_reader_shrunk(rd, &shrunk) < 0 && status == RT_EXIT_OK) {
		fprintf(stderr, "ringtrace: %s: out of memory\n", path);
		return RT_EXIT_FAILURE;
	}
	rt_cmd_report_shrunk(rd, path);
	if (status != RT_EXIT_OK || !rt_reader_damaged(rd))
		return status;
	fprintf(stderr,
		"ringtrace: %s: damaged: %zu damaged region%s, %llu event%s lost to damage; "
		"'ringtrace dump --hexdump' shows the regions\n",
		rt_escaped(path), rd->damage.count, rd->damage.count == 1 ? "" : "s",
		(unsigned long long)rd->totals.damaged, rd->totals.damaged == 1 ? "" : "s");
	return RT_EXIT_DAMAGED;
}

int rt_cmd_finish_output(int close_result)
{
	if (close_result == 0)
		return RT_EXIT_OK;
	fprintf(stderr, "ringtrace: cannot write the output: %s\n", strerror(-close_result));
	return RT_EXIT_FAILURE;
}

int rt_tool_main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return RT_EXIT_USAGE;
	}
	const char *name = argv[1];
	if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
		usage(stdout);
		return RT_EXIT_OK;
	}
	if (strcmp(name, "--version") == 0) {
		printf("ringtrace %s (arena format %d)\n", RINGTRACE_VERSION, RT_FORMAT_VERSION);
		return RT_EXIT_OK;
	}
	if (strcmp(name, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return RT_EXIT_OK;
		}
		const struct command *c = find_command(argv[2]);
		if (!c) {
			fprintf(stderr, "ringtrace: no such command '%s'\n", rt_escaped(argv[2]));
			usage(stderr);
			return RT_EXIT_USAGE;
		}
		c->help(stdout);
		return RT_EXIT_OK;
	}
	const struct command *c = find_command(name);
	if (!c) {
		fprintf(stderr, "ringtrace: unknown command '%s'\n", rt_escaped(name));
		usage(stderr);
		return RT_EXIT_USAGE;
	}
	return c->run(argc - 1, argv + 1);
}
