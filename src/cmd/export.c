/*
 * export.c - `ringtrace export`: every event of arenas and trace files in
 * a format other viewers read.  One pass over the set in time order; each
 * item is flattened once (event/event.h) and handed to the chosen
 * exporter (export/exporter.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "event/set_events.h"
#include "export/exporter.h"

#define EXPORT_USAGE                                                                               \
	"ringtrace export (--chrome | --perfetto) [--tid TID] [--debug-dir DIR]... INPUT... > "    \
	"OUT\n"                                                                                    \
	"       ringtrace export --ctf [--tid TID] [--debug-dir DIR]... INPUT... DIR"

void rt_cmd_export_help(FILE *to)
{
	fprintf(to,
		"usage: " EXPORT_USAGE "\n"
		"\n"
		"Write every event of arenas and trace files (or directories of them), in\n"
		"time order, in a format another viewer opens.  The events, names and\n"
		"losses are those of 'ringtrace dump --json'; losses and damaged regions are\n"
		"events of their own, so a gap in the record is visible in the viewer.\n"
		"The inputs are read once and memory does not grow with their length.\n"
		"\n"
		"Formats (one of):\n"
		"  --chrome        Chrome trace-event JSON on standard output: the Perfetto UI,\n"
		"                  chrome://tracing and speedscope open it.  Function calls are\n"
		"                  spans nested per thread, I/O calls complete events with\n"
		"                  their path and bytes, trace events and log messages instant\n"
		"                  events with their arguments\n"
		"  --perfetto      Perfetto's protobuf trace (track events) on standard output\n"
		"  --ctf           a CTF 1.8 trace written into DIR (created; an existing DIR\n"
		"                  must be empty): babeltrace2 and Trace Compass read it\n"
		"\n"
		"Options:\n"
		"  --tid TID       only the thread TID\n"
		"  --debug-dir DIR look for separate debug files in DIR too (up to 16 times),\n"
		"                  to name the functions of enter and exit events\n"
		"  --help          this text\n"
		"\n"
		"Exit status: 0, 1 when the output could not be written, 2 for a bad command\n"
		"line or an input that cannot be read, 3 when an input was damaged (what\n"
		"it still held is exported, its losses marked).  docs/EXPORT.md says what\n"
		"each format holds.\n");
}

struct export_options {
	const struct rt_exporter *exporter;
	char **paths;
	size_t path_count;
	const char *dir;
	int has_tid;
	int32_t tid;
	const char *debug_dirs[RT_CMD_DEBUG_DIRS_MAX];
	size_t debug_dir_count;
};

static const struct rt_exporter *const exporters[] = {&rt_exporter_chrome, &rt_exporter_perfetto,
						      &rt_exporter_ctf};

static const struct rt_exporter *exporter_option(const char *arg)
{
	for (size_t i = 0; i < sizeof(exporters) / sizeof(exporters[0]); i++)
		if (arg[0] == '-' && arg[1] == '-' && strcmp(arg + 2, exporters[i]->name) == 0)
			return exporters[i];
	return NULL;
}

static int parse_options(int argc, char **argv, struct export_options *o)
{
	int rc;
	int positional_only = 0;
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		const struct rt_exporter *e;
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			argv[o->path_count++] = argv[i]; /* the inputs, packed at the front */
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_export_help(stdout);
			return -1;
		} else if ((e = exporter_option(arg)) != NULL) {
			if (o->exporter && o->exporter != e)
				return rt_cmd_usage_error("export", EXPORT_USAGE,
							  "one format at a time: --%s or --%s",
							  o->exporter->name, e->name);
			o->exporter = e;
		} else if ((rc = rt_cmd_reading_option(argc, argv, &i, "export", EXPORT_USAGE,
						       &o->has_tid, &o->tid, o->debug_dirs,
						       &o->debug_dir_count)) != 0) {
			if (rc != 1)
				return rc;
		} else {
			return rt_cmd_usage_error("export", EXPORT_USAGE, "unknown option '%s'",
						  arg);
		}
	}
	if (!o->exporter)
		return rt_cmd_usage_error("export", EXPORT_USAGE,
					  "which format? --chrome, --perfetto or --ctf");
	o->paths = argv;
	if (o->exporter->writes_dir) {
		if (o->path_count < 2)
			return rt_cmd_usage_error(
			    "export", EXPORT_USAGE,
			    "--%s needs the inputs, then a directory to write", o->exporter->name);
		o->dir = argv[--o->path_count];
	}
	if (o->path_count == 0)
		return rt_cmd_usage_error("export", EXPORT_USAGE, "which arena or trace file?");
	return 0;
}

/* The walk: every item, flattened, to the exporter. */
static int export_items(struct rt_trace_set *set, const struct export_options *o, void *state,
			struct rt_event_builder *b)
{
	int rc = rt_trace_set_start(set, o->has_tid ? o->tid : 0);
	if (rc)
		return rc;
	const struct rt_item *run;
	uint32_t source;
	size_t n;
	/* a run of one source's items at a time: one call to the set for them all */
	while ((n = rt_trace_set_run(set, &source, &run)) > 0) {
		for (size_t i = 0; i < n; i++) {
			const struct rt_event *ev = rt_event_build_kept(b, source, &run[i]);
			if ((rc = o->exporter->event(state, ev)) != 0) {
				rt_trace_set_took(set, i + 1);
				return rc;
			}
		}
	}
	return rt_trace_set_error(set);
}

/* Payloads shown marked (damaged logs, malformed I/O): damage, as dump counts it. */
static uint64_t payloads_damaged;
/* the status when the output could not be made (rt_cmd_output_status), else 0 */
static int output_status;

static int export_set(struct rt_trace_set *set, const void *options, struct rt_out *out)
{
	const struct export_options *o = options;
	struct rt_set_events set_events;
	if (rt_set_events_open(&set_events, set, o->debug_dirs, o->debug_dir_count))
		return -ENOMEM;
	struct rt_event_builder *b = set_events.builder;
	struct rt_export_target target = {.out = out, .dir = o->dir, .set = set};
	void *state = NULL;
	char message[512] = "";
	int rc = o->exporter->open(&state, &target, message, sizeof(message));
	if (rc) {
		fprintf(stderr, "ringtrace export: %s: %s\n",
			rt_escaped(o->dir ? o->dir : "output"),
			rt_escaped(message[0] ? message : strerror(-rc)));
		output_status = rt_cmd_output_status(rc);
		rc = RT_CMD_REPORTED;
		if (state)
			o->exporter->free(state);
	} else {
		rc = export_items(set, o, state, b);
		if (!rc)
			rc = o->exporter->finish(state);
		o->exporter->free(state);
	}
	payloads_damaged += rt_set_events_close(&set_events, "exported marked");
	return rc;
}

int rt_cmd_export_print(struct rt_trace_set *set, const char *format, const char *dir,
			struct rt_out *out)
{
	struct export_options o;
	memset(&o, 0, sizeof(o));
	for (size_t i = 0; i < sizeof(exporters) / sizeof(exporters[0]); i++)
		if (strcmp(exporters[i]->name, format) == 0)
			o.exporter = exporters[i];
	if (!o.exporter || (o.exporter->writes_dir && !dir))
		return -EINVAL;
	o.dir = dir;
	return export_set(set, &o, out);
}

int rt_cmd_export(int argc, char **argv)
{
	struct export_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? RT_EXIT_OK : rc;
	int status = rt_cmd_print_set(o.paths, o.path_count, export_set, &o);
	if (output_status)
		return output_status;
	return status == RT_EXIT_OK && payloads_damaged ? RT_EXIT_DAMAGED : status;
}
