/*
 * fuzz_trace.c - the trace-file reader, and everything `ringtrace dump` and
 * `ringtrace summary` print from what it read, on any bytes.
 *
 * The input is a trace file.  The reader reads files by descriptor (pread,
 * never a mapping of the whole file), so the input goes into a memfd and
 * is opened by its /proc/self/fd path, as any file would be.  Then the set
 * is counted, merged and printed: text, JSON, --tail with --tid,
 * --last-events, summary text and JSON, export --chrome and --perfetto,
 * into /dev/null, export --ctf into a temporary directory, removed after,
 * every analyzer, as tables, JSON and pages (to /dev/null), and the rows
 * `ringtrace ship` would send, with span durations.  Whatever the bytes, none of this
 * may crash, leak, hang or read out of bounds, and the set must keep the promises the printers rely
 * on (check_promises).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/output.h"
#include "event/set_events.h"
#include "fuzz.h"
#include "decode/io_event.h"
#include "decode/log_args.h"
#include "format/records.h"
#include "read/trace_set.h"
#include "ship/durations.h"
#include "ship/rows.h"

static int null_fd = -1;

/*
 * What read/trace_set.h promises: the merge hands out items each of a
 * source that exists, each event of a valid site and a known thread (or
 * none), or marked as having lost them, each damaged region named by an index that exists; the
 * events counted are the events merged.
 */
static void check_promises(struct rt_trace_set *set)
{
	PROMISE(rt_trace_set_count(set) == 0);
	PROMISE(rt_trace_set_start(set, 0) == 0);
	const struct rt_item *it;
	uint32_t source;
	uint64_t events = 0;
	while ((it = rt_trace_set_next(set, &source)) != NULL) {
		PROMISE(source < set->source_count);
		const struct rt_reader *rd = set->sources[source].reader;
		PROMISE(it->kind == RT_ITEM_TRACE || it->kind == RT_ITEM_LOSS ||
			it->kind == RT_ITEM_LOG || it->kind == RT_ITEM_IO);
		if (it->kind == RT_ITEM_IO) {
			/* whole slots' worth, of the I/O site when it is known */
			PROMISE(it->log.payload && it->log.nslots >= 2 &&
				it->log.nslots <= RT_LOG_MAX_SLOTS &&
				it->log.length == RT_LOG_PAYLOAD_BYTES(it->log.nslots));
			const struct rt_site *site = rt_site_lookup(&rd->sites, it->site);
			PROMISE(!site || (it->flags & RT_ITEM_NO_SITE) || site->kind == RT_SITE_IO);
			struct rt_io_event ev;
			if (rt_io_event_parse(it->log.payload, it->log.length, &ev, NULL) == 0)
				PROMISE(!ev.path ||
					ev.path + ev.path_length <=
					    (const char *)it->log.payload + it->log.length);
		}
		/* an event whose thread entry is lost names its ring, marked */
		PROMISE(it->thread == RT_ITEM_NO_THREAD || it->thread < rd->thread_count ||
			(rt_item_kind_is_event(it->kind) && (it->flags & RT_ITEM_NO_OWNER) &&
			 it->thread >= RT_ITEM_RING_ONLY && it->tid == 0));
		if (it->kind == RT_ITEM_LOG) {
			/* the payload is whole slots' worth, whatever the site says of it */
			PROMISE(it->log.payload && it->log.nslots >= 1 &&
				it->log.nslots <= RT_LOG_MAX_SLOTS &&
				it->log.length == RT_LOG_PAYLOAD_BYTES(it->log.nslots));
			const struct rt_site *site = rt_site_lookup(&rd->sites, it->site);
			if (site && !(it->flags & RT_ITEM_NO_SITE)) {
				char message[512];
				PROMISE(site->kind == RT_SITE_LOG);
				rt_log_render(message, sizeof(message), site, it->log.payload,
					      it->log.length, NULL);
				PROMISE(memchr(message, 0, sizeof(message)) != NULL);
			}
		}
		if (rt_item_kind_is_event(it->kind)) {
			/* an unknown site is never shown as a known one */
			PROMISE((rt_site_lookup(&rd->sites, it->site) != NULL) ==
				!(it->flags & RT_ITEM_NO_SITE));
			events++;
		}
		PROMISE(!(it->flags & RT_ITEM_DAMAGE) || it->loss.damage < rd->damage.count);
	}
	PROMISE(events == set->totals.present);
}

/* export --ctf into a new directory, then remove it and its stream files */
static void export_ctf(struct rt_trace_set *set, struct rt_out *out)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/fuzz-ctf.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return;
	rt_cmd_export_print(set, "ctf", dir, out);
	DIR *d = opendir(dir);
	if (d) {
		struct dirent *de;
		while ((de = readdir(d)) != NULL)
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				unlinkat(dirfd(d), de->d_name, 0);
		closedir(d);
	}
	rmdir(dir);
}

/* Every analyzer, with the options that take each one's other paths. */
static void analyze_all(struct rt_trace_set *set, struct rt_out *out)
{
	static const char *const runs[][12] = {
	    {"analyze", "spans", "--per-thread", "--html", "/dev/null", "in"},
	    {"analyze", "spans", "--json", "--top", "2", "in"},
	    {"analyze", "latency", "--from", "two", "--to", "six", "--per-thread", "--html",
	     "/dev/null", "in"},
	    {"analyze", "latency", "--from", "wrap", "--to", "wrap", "--key", "arg0", "--json",
	     "in"},
	    {"analyze", "rate", "--html", "/dev/null", "in"},
	    {"analyze", "rate", "--interval", "1us", "--json", "in"},
	    {"analyze", "by-arg", "--tag", "wrap", "--arg", "1", "--per-thread", "--html",
	     "/dev/null", "in"},
	    {"analyze", "by-arg", "--tag", "six", "--arg", "4", "--json", "in"},
	    {"analyze", "stalls", "--html", "/dev/null", "in"},
	    {"analyze", "stalls", "--top", "1", "--min", "1ns", "--json", "in"},
	};
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		char *argv[12];
		int argc = 0;
		while (argc < 12 && runs[r][argc]) {
			argv[argc] = (char *)runs[r][argc];
			argc++;
		}
		rt_cmd_analyze_print(set, argc, argv, out);
	}
}

/* ship's rows of every item, in batches of 256 (no server: the bytes are dropped) */
static void ship_rows(struct rt_trace_set *set)
{
	struct rt_set_events events;
	if (rt_set_events_open(&events, set, NULL, 0))
		return;
	struct rt_ship_durations durations;
	rt_ship_durations_init(&durations);
	struct rt_ship_buffer rows = {0};
	struct rt_ship_row_context c = {
	    .host = "fuzz", .host_length = 4, .wall0 = rt_trace_set_wall_start(set)};
	const struct rt_item *item;
	uint32_t source;
	struct rt_event ev;
	if (rt_trace_set_start(set, 0) == 0) {
		while ((item = rt_trace_set_next(set, &source)) != NULL) {
			rt_event_build(events.builder, source, item, &ev);
			if (rt_ship_durations_take(&durations, &ev, &c.dur_ns) ||
			    rt_ship_row_encode(&rows, &c, &ev))
				break;
			if (++c.ordinal % 256 == 0)
				rows.length = 0;
		}
	}
	rt_ship_buffer_free(&rows);
	rt_ship_durations_free(&durations);
	rt_set_events_close(&events, "fuzzed");
}

static void print_all(struct rt_trace_set *set, struct rt_out *out)
{
	struct rt_dump_options o;
	memset(&o, 0, sizeof(o));
	rt_cmd_dump_set_print(set, &o, out);
	o.json = 1;
	rt_cmd_dump_set_print(set, &o, out);
	memset(&o, 0, sizeof(o));
	o.has_tail = 1;
	o.tail = 2;
	o.has_tid = 1;
	o.tid = 101;
	rt_cmd_dump_set_print(set, &o, out);
	memset(&o, 0, sizeof(o));
	o.json = 1;
	o.last_events_only = 1;
	rt_cmd_dump_set_print(set, &o, out);
	rt_cmd_summary_print(set, 0, out);
	rt_cmd_summary_print(set, 1, out);
	rt_cmd_export_print(set, "chrome", NULL, out);
	rt_cmd_export_print(set, "perfetto", NULL, out);
	export_ctf(set, out);
	analyze_all(set, out);
	ship_rows(set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (null_fd < 0)
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int fd = memfd_create("fuzz-trace", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	char *paths[] = {path};
	struct rt_trace_set *set;
	char message[512];
	if (rt_trace_set_open(paths, 1, &set, message, sizeof(message)) == 0) {
		check_promises(set);
		struct rt_out out;
		if (rt_out_open(&out, null_fd) == 0) {
			print_all(set, &out);
			rt_out_close(&out);
		}
		rt_trace_set_close(set);
	}
	close(fd);
	return 0;
}
