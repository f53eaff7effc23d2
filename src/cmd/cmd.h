/*
 * cmd.h - the ringtrace tool's subcommands and what they share.
 *
 * Each subcommand is one file with a run function (argv[0] is the
 * subcommand's name) and a help function.  Exit statuses:
 */
#ifndef RT_CMD_CMD_H
#define RT_CMD_CMD_H

#include <stdio.h>

#include "read/arena_reader.h"

#define RT_EXIT_OK 0
#define RT_EXIT_FAILURE 1 /* could not write the output */
#define RT_EXIT_USAGE 2	  /* bad command line, or an input that cannot be read */

#ifndef RINGTRACE_VERSION
#define RINGTRACE_VERSION "0.1.0"
#endif

/* The tool: dispatch argv[1] to a subcommand. */
int rt_tool_main(int argc, char **argv);

int rt_cmd_dump(int argc, char **argv);
void rt_cmd_dump_help(FILE *to);
int rt_cmd_info(int argc, char **argv);
void rt_cmd_info_help(FILE *to);

/*
 * Match argv[*i] against option `name` ("--tail").  For an option that
 * takes a value (value != NULL), accepts "--tail=N" and "--tail N" (taking
 * the next argument).  Returns 1 on a match, 0 if it is another option, -1
 * when the value is missing.
 */
int rt_cmd_option(int argc, char **argv, int *i, const char *name, const char **value);

/* "ringtrace CMD: WHAT", the usage line, and a hint; returns RT_EXIT_USAGE. */
int rt_cmd_usage_error(const char *cmd, const char *usage, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* One line on stderr for a failed rt_reader_open: file, byte offset, what. */
void rt_cmd_report_open_error(const char *path, const struct rt_read_error *error);

/* One line on stderr when writing stdout failed; returns the exit status. */
int rt_cmd_finish_output(int close_result);

#endif /* RT_CMD_CMD_H */
