/*
 * cmd.h - the ringtrace tool's subcommands and what they share.
 *
 * Each subcommand is one file with a run function (argv[0] is the
 * subcommand's name) and a help function.  Exit statuses:
 */
#ifndef RT_CMD_CMD_H
#define RT_CMD_CMD_H

#include <errno.h>
#include <stdio.h>

/* every string from an input is printed by the rule of common/escape.h */
#include "common/escape.h"
#include "present/call_limits.h"
#include "present/item_filter.h"
#include "read/arena_reader.h"

#define RT_EXIT_OK 0
#define RT_EXIT_FAILURE 1 /* could not write the output */
#define RT_EXIT_USAGE 2	  /* bad command line, or an input that cannot be read */
/* read, but damaged: what could be read was shown, every damaged region reported */
#define RT_EXIT_DAMAGED 3

#ifndef RINGTRACE_VERSION
#define RINGTRACE_VERSION "0.1.0"
#endif

/* The tool: dispatch argv[1] to a subcommand. */
int rt_tool_main(int argc, char **argv);

int rt_cmd_dump(int argc, char **argv);
void rt_cmd_dump_help(FILE *to);
int rt_cmd_analyze(int argc, char **argv);
void rt_cmd_analyze_help(FILE *to);
int rt_cmd_ship(int argc, char **argv);
void rt_cmd_ship_help(FILE *to);
int rt_cmd_export(int argc, char **argv);
void rt_cmd_export_help(FILE *to);
int rt_cmd_info(int argc, char **argv);
void rt_cmd_info_help(FILE *to);
int rt_cmd_ls(int argc, char **argv);
void rt_cmd_ls_help(FILE *to);
int rt_cmd_rm(int argc, char **argv);
void rt_cmd_rm_help(FILE *to);
int rt_cmd_record(int argc, char **argv);
void rt_cmd_record_help(FILE *to);
int rt_cmd_snapshot(int argc, char **argv);
void rt_cmd_snapshot_help(FILE *to);
int rt_cmd_log(int argc, char **argv);
void rt_cmd_log_help(FILE *to);
int rt_cmd_level(int argc, char **argv);
void rt_cmd_level_help(FILE *to);
int rt_cmd_summary(int argc, char **argv);
void rt_cmd_summary_help(FILE *to);
int rt_cmd_cut(int argc, char **argv);
void rt_cmd_cut_help(FILE *to);
int rt_cmd_check(int argc, char **argv);
void rt_cmd_check_help(FILE *to);
int rt_cmd_recover(int argc, char **argv);
void rt_cmd_recover_help(FILE *to);
int rt_cmd_replay(int argc, char **argv);
void rt_cmd_replay_help(FILE *to);
int rt_cmd_report(int argc, char **argv);
void rt_cmd_report_help(FILE *to);
int rt_cmd_tail(int argc, char **argv);
void rt_cmd_tail_help(FILE *to);

struct rt_out;

/* What `ringtrace dump` prints, as its command line chose. */
#define RT_CMD_DEBUG_DIRS_MAX 16
struct rt_dump_options {
	const char *path;
	int json;
	int last_arena;	      /* --last: read path.last, the previous run's arena */
	int last_events_only; /* --last-events: only each thread's last event */
	int has_tail;
	uint64_t tail;
	int has_tid;
	int32_t tid;
	int hexdump;  /* --hexdump: the damaged regions as an annotated hex dump */
	char **paths; /* every input (path is the first) */
	size_t path_count;
	/* --debug-dir DIR: where else separate debug files are looked for */
	const char *debug_dirs[RT_CMD_DEBUG_DIRS_MAX];
	size_t debug_dir_count;
	/* --pid, --since, --until, -F, -N */
	struct rt_item_filter_options filter;
};

/*
 * The output of `ringtrace dump` and `ringtrace info` for an open arena,
 * to out: what the commands print after opening it (the fuzz target runs
 * them on any bytes).  rt_cmd_dump_print returns 0 or -ENOMEM.
 */
int rt_cmd_dump_print(const struct rt_reader *rd, const struct rt_dump_options *o,
		      struct rt_out *out);
void rt_cmd_info_print(const struct rt_reader *rd, int json, struct rt_out *out);

/*
 * The same for several inputs, arenas and trace files (read/trace_set.h):
 * `ringtrace dump` and `ringtrace summary` of an open set.  0 or -errno.
 */
struct rt_trace_set;
int rt_cmd_dump_set_print(struct rt_trace_set *set, const struct rt_dump_options *o,
			  struct rt_out *out);
int rt_cmd_summary_print(struct rt_trace_set *set, int json, struct rt_out *out);
/* `ringtrace export` of an open set in format ("chrome"...), into dir or out.  0 or -errno. */
int rt_cmd_export_print(struct rt_trace_set *set, const char *format, const char *dir,
			struct rt_out *out);
/*
 * `ringtrace analyze` of an open set: argv as the command line's words
 * from "analyze" on (the inputs named there are not read).  0 or -errno.
 */
int rt_cmd_analyze_print(struct rt_trace_set *set, int argc, char **argv, struct rt_out *out);
/* Like rt_cmd_damage_status, for a set: what names the inputs in the message. */
int rt_cmd_set_damage_status(const struct rt_trace_set *set, const char *what, int status);

/*
 * Open the inputs, run print on them with stdout as out, and return the
 * command's exit status (print returns 0 or -errno).  For a print that
 * reads the items and does not count them (rt_trace_set_open_reading).
 */
typedef int (*rt_cmd_set_printer)(struct rt_trace_set *set, const void *options,
				  struct rt_out *out);
int rt_cmd_print_set(char *const *paths, size_t count, rt_cmd_set_printer print,
		     const void *options);
/*
 * The same for a print that reads the items and counts them too
 * (rt_trace_set_count): the scan counts as it goes, when it can.
 */
int rt_cmd_print_set_and_count(char *const *paths, size_t count, rt_cmd_set_printer print,
			       const void *options);
/* The same for a print that only counts (rt_trace_set_open_counting): flat memory. */
int rt_cmd_print_counted_set(char *const *paths, size_t count, rt_cmd_set_printer print,
			     const void *options);
/* What print returns when it failed and said why on stderr already. */
#define RT_CMD_REPORTED (-ECANCELED)

/*
 * Match argv[*i] against option `name` ("--tail").  For an option that
 * takes a value (value != NULL), accepts "--tail=N" and "--tail N" (taking
 * the next argument).  Returns 1 on a match, 0 if it is another option, -1
 * when the value is missing.
 */
int rt_cmd_option(int argc, char **argv, int *i, const char *name, const char **value);

/*
 * Options the reading commands share: --tid TID, and --debug-dir DIR (at
 * most RT_CMD_DEBUG_DIRS_MAX).  0 when argv[*i] is another option, 1 when
 * it was taken, else the status of the usage error printed (RT_EXIT_USAGE).
 */
int rt_cmd_tid_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
		      int *has_tid, int32_t *tid);
int rt_cmd_debug_dir_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
			    const char **dirs, size_t *count);
/* Either of the two: what the one that matched returned, or 0. */
int rt_cmd_reading_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
			  int *has_tid, int32_t *tid, const char **dirs, size_t *count);

/*
 * The filters of the reading views (present/item_filter.h), the same in
 * `replay`, `report` and `dump`: --pid PID, --since T, --until T,
 * -F/--filter PATTERN, -N/--notrace PATTERN.  0 when argv[*i] is another
 * option, 1 when it was taken, else the status of the usage error printed
 * (RT_EXIT_USAGE).  rt_cmd_filter_check says whether the whole is sound.
 */
int rt_cmd_filter_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
			 struct rt_item_filter_options *o);
int rt_cmd_filter_check(const char *cmd, const char *usage, const struct rt_item_filter_options *o);
#define RT_CMD_FILTER_USAGE "[--pid PID]... [--since T] [--until T] [-F PATTERN]... [-N PATTERN]..."
#define RT_CMD_FILTER_HELP                                                                         \
	"  --pid PID       only the process PID (up to 64 times)\n"                                \
	"  --since T       only what was recorded from T on: a time since the trace's\n"           \
	"                  start with a unit (2.5s, 150ms, 40us)\n"                                \
	"  --until T       only what was recorded up to T (a call entered by then is\n"            \
	"                  shown with its exit)\n"                                                 \
	"  -F, --filter PATTERN\n"                                                                 \
	"                  only the calls of the functions PATTERN names, with all\n"              \
	"                  inside them: a glob ('*', '?', '[...]') on the whole short\n"           \
	"                  name ('ns::f') or full name ('ns::f(int)'); up to 64 times\n"           \
	"  -N, --notrace PATTERN\n"                                                                \
	"                  leave out the calls of the functions PATTERN names, with\n"             \
	"                  all inside them; up to 64 times\n"

/*
 * The limits of the views of calls (present/call_limits.h), the same in
 * `replay` and `report`: -t/--time-filter TIME (--min-duration, as record
 * names it) and -D/--depth N.  Returns as rt_cmd_filter_option.
 */
int rt_cmd_call_limit_option(int argc, char **argv, int *i, const char *cmd, const char *usage,
			     struct rt_call_limits *l);
#define RT_CMD_CALL_LIMITS_USAGE "[-t TIME] [-D N]"
#define RT_CMD_CALL_LIMITS_HELP                                                                    \
	"  -t, --time-filter TIME\n"                                                               \
	"                  only the calls that lasted TIME or more, a duration with a\n"           \
	"                  unit (2.5s, 150ms, 40us, 500ns), nested as if the shorter\n"            \
	"                  ones were not there (--min-duration, as record names it)\n"             \
	"  -D, --depth N   only the calls at levels below N: 0 is a thread's outermost\n"          \
	"                  call kept, with -F the call it selects (record -D counts\n"             \
	"                  from the thread's outermost call always)\n"

/*
 * The exit status for an output file that could not be opened (-errno):
 * RT_EXIT_USAGE for a file of another user (-EPERM, common/out_file.h),
 * which the command line named and which is never written; else
 * RT_EXIT_FAILURE.
 */
int rt_cmd_output_status(int err);

/* "ringtrace CMD: WHAT", the usage line, and a hint; returns RT_EXIT_USAGE. */
int rt_cmd_usage_error(const char *cmd, const char *usage, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* One line on stderr for a failed rt_reader_open: file, byte offset, what. */
void rt_cmd_report_open_error(const char *path, const struct rt_read_error *error);

/*
 * The arena a command writes into (arena_target.c): TARGET a PID (its
 * running arena in the user's arena directory) or a path, owned by the
 * caller unless root, and an arena whose header checks (read into f, for
 * the caller to free).  Malloc'd path, or NULL after one line on stderr.
 */
struct rt_arena_file;
char *rt_cmd_arena_target(const char *command, const char *target, struct rt_arena_file *f);
/*
 * The arena a command follows (tail, log -f), chosen and checked as
 * rt_cmd_arena_target() does it, in one open: *rd reads the very file
 * checked, even if its program ends and its name is removed meanwhile (a
 * recording removes the arena it collected).  Malloc'd path (the reader
 * names it in messages: free it after the reader), or NULL after one line
 * on stderr.
 */
struct rt_reader;
char *rt_cmd_follow_target(const char *command, const char *target, struct rt_reader **rd);

/* One line on stderr when writing stdout failed; returns the exit status. */
int rt_cmd_finish_output(int close_result);

/*
 * The exit status of a command that read rd and wrote its output: status,
 * or RT_EXIT_DAMAGED (with one line on stderr) when status is RT_EXIT_OK
 * and the arena was damaged.  A file that shrank while it was read (even
 * after the reader was opened: rt_reader_shrunk) is damage, and says so.
 */
int rt_cmd_damage_status(struct rt_reader *rd, const char *path, int status);
/* The line on stderr for an arena whose file shrank while it was read, if it did. */
void rt_cmd_report_shrunk(const struct rt_reader *rd, const char *path);

#endif /* RT_CMD_CMD_H */
