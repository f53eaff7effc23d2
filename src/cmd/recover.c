/*
 * recover.c - `ringtrace recover`: a clean trace file of everything a
 * damaged trace still holds.
 *
 * It is `ringtrace cut` over the whole time line (cmd/cut.c, cmd/cut_out.h):
 * every event the reader recovers, the metadata of every process, and every
 * loss, damage included, as LOSS entries or as the same record-seq gaps, so
 * that the new file reads back clean and dumps exactly what its input dumps.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

#define RECOVER_USAGE "ringtrace recover [-q] INPUT... OUT"

void rt_cmd_recover_help(FILE *to)
{
	fprintf(to, "usage: " RECOVER_USAGE "\n"
		    "\n"
		    "Write every event that can be read from INPUT (arenas, trace files,\n"
		    "directories of them, damaged or not) into OUT, a new, clean trace file: the\n"
		    "metadata of every process, the events, and every loss, those to damage\n"
		    "included, so that `ringtrace dump OUT` shows what `ringtrace dump INPUT...`\n"
		    "shows and `ringtrace check OUT` finds nothing wrong.\n"
		    "\n"
		    "Options:\n"
		    "  -q, --quiet   no closing line on stderr\n"
		    "  --help        this text\n"
		    "\n"
		    "An existing OUT that is not a trace file is never overwritten, nor an input.\n"
		    "Exit status: 0 when the inputs were clean; 3 when they were damaged and what\n"
		    "could be read was recovered; 1 when OUT cannot be written; 2 for bad usage\n"
		    "or an input that cannot be read.\n");
}

int rt_cmd_recover(int argc, char **argv)
{
	int quiet = 0, positional_only = 0;
	size_t positional = 0;
	char **args = calloc((size_t)argc + 6, sizeof(*args));
	if (!args) {
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	/* the whole time line: nothing is before time 0 (cut counts an unknown time there) */
	size_t n = 0;
	args[n++] = "cut";
	args[n++] = "--from";
	args[n++] = "0s";
	args[n++] = "--";
	for (int i = 1; i < argc; i++) {
		char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			args[n++] = arg;
			positional++;
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			free(args);
			rt_cmd_recover_help(stdout);
			return RT_EXIT_OK;
		} else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
			quiet = 1;
		} else {
			free(args);
			return rt_cmd_usage_error("recover", RECOVER_USAGE, "unknown option '%s'",
						  arg);
		}
	}
	if (positional < 2) {
		free(args);
		return rt_cmd_usage_error("recover", RECOVER_USAGE,
					  positional
					      ? "which output file? (the last argument is OUT)"
					      : "which trace, and which output file?");
	}
	if (quiet) {
		memmove(args + 2, args + 1, (n - 1) * sizeof(*args));
		args[1] = "-q";
		n++;
	}
	int status = rt_cmd_cut((int)n, args);
	free(args);
	return status;
}
