/*
 * inputs.c - the life of a command that reads a set of inputs (arenas,
 * trace files, directories: read/trace_set.h): open them, print to
 * stdout, and turn what happened into the exit status every such command
 * shares (docs/man: 0, 1 output failed, 2 unreadable input, 3 damaged).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/output.h"
#include "read/trace_set.h"

int rt_cmd_set_damage_status(const struct rt_trace_set *set, const char *what, int status)
{
	for (size_t i = 0; i < set->source_count; i++)
		if (set->sources[i].arena)
			rt_cmd_report_shrunk(set->sources[i].reader, set->sources[i].name);
	if (status != RT_EXIT_OK || !rt_trace_set_damaged(set))
		return status;
	size_t regions = rt_trace_set_damage_regions(set);
	fprintf(stderr,
		"ringtrace: %s: damaged: %zu damaged region%s, %llu event%s lost to damage\n",
		rt_escaped(what), regions, regions == 1 ? "" : "s",
		(unsigned long long)set->totals.damaged, set->totals.damaged == 1 ? "" : "s");
	return RT_EXIT_DAMAGED;
}

/*
 * A trace file that does not end with a proper END block holds less than
 * its recording did, with nothing in its records to say so: say it.
 */
static void warn_unfinished(const struct rt_trace_set *set)
{
	for (size_t i = 0; i < set->file_count; i++) {
		const struct rt_trace_file *f = &set->files[i].file;
		if (!f->has_end)
			fprintf(stderr,
				"ringtrace: %s: no end block: still being written, or its "
				"recording was stopped without closing it; what came after its "
				"last block is not in it\n",
				f->path);
		else if (f->end.reason == RT_FILE_END_STOPPED)
			fprintf(stderr,
				"ringtrace: %s: writing stopped there (the output failed); the "
				"recording's later events are not in it\n",
				f->path);
	}
}

typedef int (*set_opener)(char *const *paths, size_t count, struct rt_trace_set **out,
			  char *message, size_t message_size);

static int print_opened_set(char *const *paths, size_t count, set_opener open,
			    rt_cmd_set_printer print, const void *options)
{
	struct rt_trace_set *set = NULL;
	char message[512];
	if (open(paths, count, &set, message, sizeof(message)) != 0) {
		fprintf(stderr, "ringtrace: %s\n", rt_escaped(message));
		return RT_EXIT_USAGE;
	}
	const char *what = count == 1 ? paths[0] : "the inputs";
	struct rt_out out;
	if (rt_out_open(&out, STDOUT_FILENO) != 0) {
		rt_trace_set_close(set);
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	int rc = print(set, options, &out);
	int status = rt_cmd_finish_output(rt_out_close(&out));
	if (rc) {
		if (rc != RT_CMD_REPORTED)
			fprintf(stderr, "ringtrace: %s: %s\n", rt_escaped(what), strerror(-rc));
		status = RT_EXIT_FAILURE;
	} else {
		warn_unfinished(set);
		status = rt_cmd_set_damage_status(set, what, status);
	}
	rt_trace_set_close(set);
	return status;
}

int rt_cmd_print_set(char *const *paths, size_t count, rt_cmd_set_printer print,
		     const void *options)
{
	return print_opened_set(paths, count, rt_trace_set_open_reading, print, options);
}

int rt_cmd_print_set_and_count(char *const *paths, size_t count, rt_cmd_set_printer print,
			       const void *options)
{
	return print_opened_set(paths, count, rt_trace_set_open, print, options);
}

int rt_cmd_print_counted_set(char *const *paths, size_t count, rt_cmd_set_printer print,
			     const void *options)
{
	return print_opened_set(paths, count, rt_trace_set_open_counting, print, options);
}
