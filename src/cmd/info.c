/*
 * info.c - `ringtrace info`: what an arena is and what is in it, as
 * aligned "Key : value" lines (or one JSON object).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/info_modules.h"
#include "common/arena_names.h"
#include "common/output.h"
#include "format/arena_layout.h"
#include "present/text.h"
#include "present/units.h"
#include "read/arena_list.h"
#include "read/trace_set.h"

#define INFO_USAGE "ringtrace info [--json] [--last] ARENA | INPUT..."
#define KEY_WIDTH 22

void rt_cmd_info_help(FILE *to)
{
	fprintf(to, "usage: " INFO_USAGE "\n"
		    "\n"
		    "Describe an arena: its writer and whether it is still running, its\n"
		    "geometry, its rings and threads, how many events it recorded, how many\n"
		    "are still present and how many were lost and why, its clock, how the\n"
		    "process ended (exit, the signal and faulting address, or killed without a\n"
		    "word), and its write-back to disk (RINGTRACE_SYNC) when there is one.\n"
		    "\n"
		    "Trace files (and directories of them, or several inputs): per file its\n"
		    "recording id, file number, blocks and size, how it ended (finished,\n"
		    "rotated, stopped, or cut short: no END block) and its damaged bytes; per\n"
		    "traced process its pid, parent, program, mode, threads, events and losses.\n"
		    "\n"
		    "Options:\n"
		    "  --json   one JSON object instead of text\n"
		    "  --last   the last arena: ARENA" RT_ARENA_LAST_SUFFIX
		    ", kept from the previous run\n"
		    "  --help   this text\n");
}

static const char *mode_name(uint32_t mode)
{
	return mode == RT_MODE_STREAM ? "stream" : "flight";
}

static const char *clock_name(uint32_t source)
{
	switch (source) {
	case RT_CLOCK_TSC:
		return "tsc";
	case RT_CLOCK_CNTVCT:
		return "cntvct";
	default:
		return "monotonic";
	}
}

static const char *basis_name(enum rt_timebase_basis basis)
{
	switch (basis) {
	case RT_TIMEBASE_NANOSECONDS:
		return "nanoseconds";
	case RT_TIMEBASE_SYNC:
		return "measured";
	default:
		return "estimated at start";
	}
}

static const char *thread_state_name(uint32_t state)
{
	return state == RT_THREAD_LIVE ? "live" : "exited";
}

/* Everything info prints that is computed rather than read. */
struct summary {
	uint32_t rings_used;
	uint32_t rings_released;
	int64_t duration_ns;
	char build_id[2 * RT_BUILD_ID_MAX + 1];
	const char *state_detail;
};

static void summarize(const struct rt_reader *rd, struct summary *s)
{
	const struct rt_arena_header *h = &rd->header;
	memset(s, 0, sizeof(*s));
	s->rings_used = rt_layout_ring_count_used(h);
	/* a descriptor in a hole is zeros, a ring never claimed: only those in the file */
	for (uint32_t i = rt_reader_next_ring(rd, 0); i < s->rings_used;
	     i = rt_reader_next_ring(rd, i + 1)) {
		struct rt_ring_desc copy;
		const struct rt_ring_desc *d = rt_reader_ring_desc(rd, i, &copy);
		s->rings_released +=
		    __atomic_load_n(&d->state, __ATOMIC_RELAXED) == RT_RING_RELEASED;
	}
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_item *last = &rd->threads[i].last;
		if (!last->kind)
			continue;
		int64_t ns = rt_timebase_ns(&rd->timebase, last->counter);
		if (ns > s->duration_ns)
			s->duration_ns = ns;
	}
	char *p = s->build_id;
	for (uint32_t i = 0; i < h->build_id_size; i++)
		p = rt_fmt_hex(p, h->build_id[i], 2);
	*p = 0;
	switch (rd->writer) {
	case RT_WRITER_RUNNING:
		s->state_detail = "the process is still writing";
		break;
	case RT_WRITER_CLOSED:
		s->state_detail = "closed by the program";
		break;
	case RT_WRITER_REPLACED:
		s->state_detail = "its image was replaced by exec";
		break;
	default:
		s->state_detail = "the process ended without closing it";
		break;
	}
}

static void key(struct rt_out *out, const char *name)
{
	rt_out_printf(out, "%-*s : ", KEY_WIDTH, name);
}

static void key_u64(struct rt_out *out, const char *name, uint64_t v)
{
	key(out, name);
	rt_out_u64(out, v);
	rt_out_char(out, '\n');
}

/* When it started, how the process ended, and the write-back to disk. */
static void print_end_text(struct rt_out *out, const struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	enum rt_arena_fate fate = rt_arena_fate(h, rd->writer);
	const char *signal = rt_signal_name(h->end_signal);
	char wall[64], ts[40];

	key(out, "Started");
	rt_out_printf(out, "%s\n", rt_units_wall(wall, sizeof(wall), h->start.wall_ns, 9));
	key(out, "Ended");
	switch (fate) {
	case RT_FATE_RUNNING:
		rt_out_str(out, "not yet: the process is running\n");
		break;
	case RT_FATE_EXIT:
		rt_out_str(out, "exit (the program closed the arena)");
		if (h->end_signal > 0)
			rt_out_printf(out, ", after its own handler took %s (signal %d)",
				      signal ? signal : "a signal", (int)h->end_signal);
		rt_out_char(out, '\n');
		break;
	case RT_FATE_SIGNAL:
		rt_out_printf(out, "%s (signal %d) in thread %d", signal ? signal : "a signal",
			      (int)h->end_signal, (int)h->end_tid);
		if (rt_signal_is_fault(h->end_signal))
			rt_out_printf(out, ", address 0x%llx", (unsigned long long)h->end_address);
		rt_out_char(out, '\n');
		break;
	case RT_FATE_EXEC:
		rt_out_str(out, "exec (the image was replaced: the process went on as another "
				"program)\n");
		break;
	default:
		rt_out_str(out, "unknown: killed or crashed without a word (SIGKILL, the OOM "
				"killer, ...)\n");
		break;
	}
	if (fate != RT_FATE_RUNNING && h->end_counter) {
		int64_t ns = rt_timebase_ns(&rd->timebase, h->end_counter);
		*rt_text_format_timestamp(ts, ns) = 0;
		key(out, "End time");
		rt_out_printf(
		    out, "%s s (%s)\n", ts + strspn(ts, " "),
		    rt_units_wall(wall, sizeof(wall), h->start.wall_ns + (uint64_t)ns, 9));
	}
	if (h->sync_ms || h->synced_counter) {
		key(out, "Write-back to disk");
		if (h->sync_ms)
			rt_out_printf(out, "every %u ms", h->sync_ms);
		else
			rt_out_str(out, "stopped");
		if (h->synced_counter) {
			*rt_text_format_timestamp(
			    ts, rt_timebase_ns(&rd->timebase, h->synced_counter)) = 0;
			rt_out_printf(out, "; on disk: everything recorded before %s s\n",
				      ts + strspn(ts, " "));
		} else {
			rt_out_str(out, "; none completed yet\n");
		}
	}
}

static void print_threads_text(struct rt_out *out, const struct rt_reader *rd);
static void print_threads_json(struct rt_out *out, const struct rt_reader *rd, const char *key);

static void print_text(struct rt_out *out, const struct rt_reader *rd, const struct summary *s)
{
	const struct rt_arena_header *h = &rd->header;
	const struct rt_counts *c = &rd->totals;
	char ts[40];

	rt_out_str(out, "ringtrace arena\n---------------\n");
	key(out, "File");
	rt_out_printf(out, "%s\n", rt_escaped(rd->path));
	key(out, "Format version");
	rt_out_printf(out, "%u (readable from version %u)\n", h->version, h->compat_version);
	key(out, "State");
	rt_out_printf(out, "%s (%s)\n", rt_writer_status_name(rd->writer), s->state_detail);
	key(out, "Program");
	rt_out_printf(out, "%s\n",
		      h->program[0]
			  ? rt_escaped_n(h->program, strnlen(h->program, sizeof(h->program)))
			  : "(unknown)");
	key_u64(out, "Pid", (uint64_t)(int64_t)h->pid);
	key(out, "Build-id");
	rt_out_printf(out, "%s\n", s->build_id[0] ? s->build_id : "(none)");
	key(out, "Mode");
	rt_out_printf(out, "%s\n", mode_name(h->mode));
	key_u64(out, "Requested ring size", h->ring_bytes_requested);
	key_u64(out, "Allocated ring size", h->ring_bytes);
	key_u64(out, "Slot size", h->slot_size);
	key_u64(out, "Arena size", h->arena_size);
	key_u64(out, "Rings total", h->ring_count);
	key_u64(out, "Rings used", s->rings_used);
	key(out, "Rings free");
	rt_out_printf(out, "%u never used, %u released\n", h->ring_count - s->rings_used,
		      s->rings_released);
	key_u64(out, "Rings reused", h->ring_reuses);
	key(out, "Threads");
	rt_out_printf(out, "%u of %u (untracked: %llu)\n", rd->thread_count, h->thread_capacity,
		      (unsigned long long)h->threads_untracked);
	key_u64(out, "Thread entries reused", h->threads_reused);
	key(out, "Sites used");
	rt_out_printf(out, "%u of %u (refused: %llu)\n", rd->sites.valid_count, h->site_capacity,
		      (unsigned long long)h->sites_refused);
	key_u64(out, "Events recorded", c->committed);
	key_u64(out, "Events present", c->present);
	key_u64(out, "Events overwritten", c->overwritten);
	if (h->mode == RT_MODE_STREAM)
		key_u64(out, "Events consumed", c->consumed);
	key_u64(out, "Events dropped", c->dropped);
	if (h->mode == RT_MODE_STREAM)
		key_u64(out, "Full-ring waits", rd->ring_waits);
	key_u64(out, "Events torn", c->torn);
	key_u64(out, "Events damaged", c->damaged);
	key(out, "Damaged regions");
	if (rd->damage.count)
		rt_out_printf(out, "%zu ('ringtrace dump' lists them, '--hexdump' shows them)\n",
			      rd->damage.count);
	else
		rt_out_str(out, "none\n");
	key(out, "Clock source");
	rt_out_printf(out, "%s\n", clock_name(h->clock_source));
	key(out, "Clock frequency");
	rt_out_printf(out, "%llu Hz (%s)\n", (unsigned long long)rt_timebase_hz(&rd->timebase),
		      basis_name(rd->timebase.basis));
	*rt_text_format_timestamp(ts, s->duration_ns) = 0;
	key(out, "Trace duration");
	rt_out_printf(out, "%s s\n", ts + strspn(ts, " "));
	print_end_text(out, rd);
	print_threads_text(out, rd);
	rt_info_modules_text(out, rd);
}

/* One line per thread: its latest name, ring, state and counts; a vfork child says so. */
static void print_threads_text(struct rt_out *out, const struct rt_reader *rd)
{
	rt_out_printf(out, "\n%10s  %-16s %6s  %-6s  %12s %12s %12s %6s %8s\n", "tid", "name",
		      "ring", "state", "events", "overwritten", "dropped", "torn", "damaged");
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		char ring[16];
		const char *name = rt_escaped_n(t->name, strnlen(t->name, sizeof(t->name)));
		if (t->ring == RT_NO_RING)
			snprintf(ring, sizeof(ring), "-");
		else
			snprintf(ring, sizeof(ring), "%u", t->ring);
		rt_out_printf(out, "%10d  %-16s %6s  %-6s  %12llu %12llu %12llu %6llu %8llu%s\n",
			      t->tid, name[0] ? name : "-", ring, thread_state_name(t->state),
			      (unsigned long long)t->counts.present,
			      (unsigned long long)t->counts.overwritten,
			      (unsigned long long)t->counts.dropped,
			      (unsigned long long)t->counts.torn,
			      (unsigned long long)t->counts.damaged,
			      t->flags & RT_THREAD_F_VFORK_CHILD ? "  vfork child" : "");
	}
}

static void json_key(struct rt_out *out, const char *name, int first)
{
	if (!first)
		rt_out_char(out, ',');
	rt_out_json_string(out, name, strlen(name));
	rt_out_char(out, ':');
}

static void json_u64(struct rt_out *out, const char *name, uint64_t v)
{
	json_key(out, name, 0);
	rt_out_u64(out, v);
}

static void json_str(struct rt_out *out, const char *name, const char *v, size_t n)
{
	json_key(out, name, 0);
	rt_out_json_string(out, v, n);
}

static void json_null(struct rt_out *out, const char *name)
{
	json_key(out, name, 0);
	rt_out_str(out, "null");
}

static void json_i64(struct rt_out *out, const char *name, int64_t v)
{
	json_key(out, name, 0);
	rt_out_i64(out, v);
}

/* The same as print_end_text: null where a field does not apply. */
static void print_end_json(struct rt_out *out, const struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	enum rt_arena_fate fate = rt_arena_fate(h, rd->writer);
	json_u64(out, "start_wall_ns", h->start.wall_ns);
	const char *end = fate == RT_FATE_EXIT	   ? "exit"
			  : fate == RT_FATE_SIGNAL ? "signal"
			  : fate == RT_FATE_EXEC   ? "exec"
			  : fate == RT_FATE_KILLED ? "unknown"
						   : NULL;
	if (end)
		json_str(out, "end", end, strlen(end));
	else
		json_null(out, "end");
	if (end && h->end_signal > 0) {
		const char *signal = rt_signal_name(h->end_signal);
		json_i64(out, "end_signal", h->end_signal);
		if (signal)
			json_str(out, "end_signal_name", signal, strlen(signal));
		else
			json_null(out, "end_signal_name");
		json_i64(out, "end_tid", h->end_tid);
		json_u64(out, "end_address", h->end_address);
	} else {
		json_null(out, "end_signal");
		json_null(out, "end_signal_name");
		json_null(out, "end_tid");
		json_null(out, "end_address");
	}
	if (end && h->end_counter) {
		int64_t ns = rt_timebase_ns(&rd->timebase, h->end_counter);
		json_i64(out, "end_ns", ns);
		json_u64(out, "end_wall_ns", h->start.wall_ns + (uint64_t)ns);
	} else {
		json_null(out, "end_ns");
		json_null(out, "end_wall_ns");
	}
	json_u64(out, "sync_ms", h->sync_ms);
	if (h->synced_counter)
		json_i64(out, "synced_ns", rt_timebase_ns(&rd->timebase, h->synced_counter));
	else
		json_null(out, "synced_ns");
}

static void print_json(struct rt_out *out, const struct rt_reader *rd, const struct summary *s)
{
	const struct rt_arena_header *h = &rd->header;
	const struct rt_counts *c = &rd->totals;
	const char *state = rt_writer_status_name(rd->writer);
	const char *mode = mode_name(h->mode);
	const char *source = clock_name(h->clock_source);
	const char *basis = basis_name(rd->timebase.basis);

	rt_out_char(out, '{');
	json_key(out, "file", 1);
	rt_out_json_string(out, rd->path, strlen(rd->path));
	json_u64(out, "format_version", h->version);
	json_u64(out, "compat_version", h->compat_version);
	json_str(out, "state", state, strlen(state));
	json_str(out, "program", h->program, strnlen(h->program, sizeof(h->program)));
	json_key(out, "pid", 0);
	rt_out_i64(out, h->pid);
	json_str(out, "build_id", s->build_id, strlen(s->build_id));
	json_str(out, "mode", mode, strlen(mode));
	json_u64(out, "ring_bytes_requested", h->ring_bytes_requested);
	json_u64(out, "ring_bytes", h->ring_bytes);
	json_u64(out, "slot_size", h->slot_size);
	json_u64(out, "arena_size", h->arena_size);
	json_u64(out, "rings_total", h->ring_count);
	json_u64(out, "rings_used", s->rings_used);
	json_u64(out, "rings_free", h->ring_count - s->rings_used);
	json_u64(out, "rings_released", s->rings_released);
	json_u64(out, "rings_reused", h->ring_reuses);
	json_u64(out, "thread_capacity", h->thread_capacity);
	json_u64(out, "threads_untracked", h->threads_untracked);
	json_u64(out, "sites_used", rd->sites.valid_count);
	json_u64(out, "site_capacity", h->site_capacity);
	json_u64(out, "sites_refused", h->sites_refused);
	json_u64(out, "events_recorded", c->committed);
	json_u64(out, "events_present", c->present);
	json_u64(out, "events_overwritten", c->overwritten);
	json_u64(out, "events_consumed", c->consumed);
	json_u64(out, "events_dropped", c->dropped);
	json_u64(out, "full_ring_waits", rd->ring_waits);
	json_u64(out, "events_torn", c->torn);
	json_u64(out, "events_damaged", c->damaged);
	json_u64(out, "damaged_regions", rd->damage.count);
	json_str(out, "clock_source", source, strlen(source));
	json_u64(out, "clock_hz", rt_timebase_hz(&rd->timebase));
	json_str(out, "clock_basis", basis, strlen(basis));
	json_key(out, "duration_ns", 0);
	rt_out_i64(out, s->duration_ns);
	print_end_json(out, rd);
	print_threads_json(out, rd, "threads");
	rt_info_modules_json(out, rd);
	rt_out_str(out, "}\n");
}

/* key: one object per thread, as print_threads_text says them. */
static void print_threads_json(struct rt_out *out, const struct rt_reader *rd, const char *key)
{
	json_key(out, key, 0);
	rt_out_char(out, '[');
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		const char *tstate = thread_state_name(t->state);
		if (i)
			rt_out_char(out, ',');
		rt_out_char(out, '{');
		json_key(out, "tid", 1);
		rt_out_i64(out, t->tid);
		json_str(out, "name", t->name, strnlen(t->name, sizeof(t->name)));
		json_key(out, "ring", 0);
		if (t->ring == RT_NO_RING)
			rt_out_str(out, "null");
		else
			rt_out_u64(out, t->ring);
		json_str(out, "state", tstate, strlen(tstate));
		json_key(out, "vfork_child", 0);
		rt_out_str(out, t->flags & RT_THREAD_F_VFORK_CHILD ? "true" : "false");
		json_u64(out, "events", t->counts.present);
		json_u64(out, "recorded", t->counts.committed);
		json_u64(out, "overwritten", t->counts.overwritten);
		json_u64(out, "consumed", t->counts.consumed);
		json_u64(out, "dropped", t->counts.dropped);
		json_u64(out, "torn", t->counts.torn);
		json_u64(out, "damaged", t->counts.damaged);
		rt_out_char(out, '}');
	}
	rt_out_char(out, ']');
}

void rt_cmd_info_print(const struct rt_reader *rd, int json, struct rt_out *out)
{
	struct summary s;
	summarize(rd, &s);
	if (json)
		print_json(out, rd, &s);
	else
		print_text(out, rd, &s);
}

/* ---- trace files ---------------------------------------------------------- */

static const char *file_end_name(const struct rt_trace_file *f)
{
	if (!f->has_end)
		return NULL;
	switch (f->end.reason) {
	case RT_FILE_END_FINISHED:
		return "finished";
	case RT_FILE_END_ROTATED:
		return "rotated";
	case RT_FILE_END_STOPPED:
		return "stopped";
	default:
		return "unknown";
	}
}

/* Words for how the file ended, for text. */
static const char *file_end_text(const struct rt_trace_file *f)
{
	const char *name = file_end_name(f);
	if (!name)
		return "cut short: no END block (the collector was killed?)";
	if (f->end.reason == RT_FILE_END_FINISHED)
		return "finished (closed at the end of the recording)";
	if (f->end.reason == RT_FILE_END_ROTATED)
		return "rotated (closed at its size limit; the next file goes on)";
	if (f->end.reason == RT_FILE_END_STOPPED)
		return "stopped (writing failed: nothing after this file)";
	return "closed, for a reason this reader does not know";
}

/* The sources that are traced processes (not a recording's file damage). */
static int is_process(const struct rt_set_source *src)
{
	return !src->context;
}

static void print_set_text(struct rt_out *out, const struct rt_trace_set *set)
{
	char wall[64];
	rt_out_str(out, "ringtrace trace files\n---------------------\n");
	for (size_t i = 0; i < set->file_count; i++) {
		const struct rt_trace_file *f = &set->files[i].file;
		if (i)
			rt_out_char(out, '\n');
		key(out, "File");
		rt_out_printf(out, "%s\n", rt_escaped(f->path));
		key(out, "Recording id");
		rt_out_printf(out, "%016llx\n", (unsigned long long)f->file_id);
		key_u64(out, "File number", f->file_seq);
		if (f->has_file_block) {
			key(out, "Created");
			rt_out_printf(
			    out, "%s\n",
			    rt_units_wall(wall, sizeof(wall), f->info.created_wall_ns, 3));
		}
		key_u64(out, "Size", f->size);
		key_u64(out, "Blocks", f->blocks);
		key(out, "Ended");
		rt_out_printf(out, "%s\n", file_end_text(f));
		key_u64(out, "Damaged bytes", f->damaged_bytes);
	}
	rt_out_printf(out, "\n%10s %10s  %-6s  %7s %12s %10s %12s %8s %8s  %s\n", "pid", "parent",
		      "mode", "threads", "events", "dropped", "overwritten", "torn", "damaged",
		      "program");
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *src = &set->sources[i];
		if (!is_process(src))
			continue;
		const struct rt_reader *rd = src->reader;
		const struct rt_arena_header *h = &rd->header;
		const struct rt_counts *c = &rd->totals;
		rt_out_printf(
		    out, "%10d %10d  %-6s  %7u %12llu %10llu %12llu %8llu %8llu  %s%s\n",
		    src->has_header ? (int)h->pid : 0, (int)src->parent_pid,
		    src->has_header ? mode_name(h->mode) : "-", rd->thread_count,
		    (unsigned long long)c->present, (unsigned long long)c->dropped,
		    (unsigned long long)c->overwritten, (unsigned long long)c->torn,
		    (unsigned long long)c->damaged,
		    src->has_header && h->program[0]
			? rt_escaped_n(h->program, strnlen(h->program, sizeof(h->program)))
			: "(unknown)",
		    src->arena ? " (arena)" : "");
	}
	/* each process: how it ended and its threads, as `info` of its arena says them */
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *src = &set->sources[i];
		if (!is_process(src) || src->arena)
			continue;
		rt_out_printf(out, "\nProcess %d:\n", (int)src->reader->header.pid);
		if (src->has_header)
			print_end_text(out, src->reader);
		print_threads_text(out, src->reader);
	}
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *src = &set->sources[i];
		if (!is_process(src) || !src->reader->modules.count)
			continue;
		rt_out_printf(out, "\nModules of pid %d:", (int)src->reader->header.pid);
		rt_info_modules_text(out, src->reader);
	}
	rt_out_char(out, '\n');
	key_u64(out, "Events", set->events);
	key(out, "Damaged regions");
	rt_out_printf(out, "%zu\n", rt_trace_set_damage_regions(set));
}

static void print_set_json(struct rt_out *out, const struct rt_trace_set *set)
{
	rt_out_str(out, "{\"files\":[");
	for (size_t i = 0; i < set->file_count; i++) {
		const struct rt_trace_file *f = &set->files[i].file;
		char id[24];
		snprintf(id, sizeof(id), "%016llx", (unsigned long long)f->file_id);
		const char *end = file_end_name(f);
		if (i)
			rt_out_char(out, ',');
		rt_out_char(out, '{');
		json_key(out, "file", 1);
		rt_out_json_string(out, f->path, strlen(f->path));
		json_str(out, "recording_id", id, strlen(id));
		json_u64(out, "file_seq", f->file_seq);
		if (f->has_file_block)
			json_u64(out, "created_wall_ns", f->info.created_wall_ns);
		else
			json_null(out, "created_wall_ns");
		json_u64(out, "size", f->size);
		json_u64(out, "blocks", f->blocks);
		if (end)
			json_str(out, "end", end, strlen(end));
		else
			json_null(out, "end");
		json_u64(out, "damaged_bytes", f->damaged_bytes);
		rt_out_char(out, '}');
	}
	rt_out_str(out, "],\"processes\":[");
	int first = 1;
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *src = &set->sources[i];
		if (!is_process(src))
			continue;
		const struct rt_reader *rd = src->reader;
		const struct rt_arena_header *h = &rd->header;
		const struct rt_counts *c = &rd->totals;
		if (!first)
			rt_out_char(out, ',');
		first = 0;
		rt_out_char(out, '{');
		json_key(out, "input", 1);
		rt_out_json_string(out, src->name, strlen(src->name));
		const char *kind = src->arena ? "arena" : "trace";
		json_str(out, "kind", kind, strlen(kind));
		if (src->has_header) {
			const char *mode = mode_name(h->mode);
			json_i64(out, "pid", h->pid);
			json_str(out, "program", h->program,
				 strnlen(h->program, sizeof(h->program)));
			json_str(out, "mode", mode, strlen(mode));
		} else {
			json_null(out, "pid");
			json_null(out, "program");
			json_null(out, "mode");
		}
		json_i64(out, "parent_pid", src->parent_pid);
		json_u64(out, "threads", rd->thread_count);
		json_u64(out, "events", c->present);
		json_u64(out, "dropped", c->dropped);
		json_u64(out, "overwritten", c->overwritten);
		json_u64(out, "torn", c->torn);
		json_u64(out, "damaged", c->damaged);
		if (src->has_header)
			print_end_json(out, rd);
		/* "threads" is their count here */
		print_threads_json(out, rd, "thread_list");
		rt_info_modules_json(out, rd);
		rt_out_char(out, '}');
	}
	rt_out_str(out, "]");
	json_u64(out, "events", set->events);
	json_u64(out, "damaged_regions", rt_trace_set_damage_regions(set));
	rt_out_str(out, "}\n");
}

static int info_set(char **paths, size_t count, int json)
{
	struct rt_trace_set *set;
	char message[512];
	const char *what = count == 1 ? paths[0] : "the inputs";
	if (rt_trace_set_open(paths, count, &set, message, sizeof(message)) != 0) {
		fprintf(stderr, "ringtrace: %s\n", rt_escaped(message));
		return RT_EXIT_USAGE;
	}
	int rc = rt_trace_set_count(set);
	if (rc) {
		fprintf(stderr, "ringtrace: %s: %s\n", rt_escaped(what), strerror(-rc));
		rt_trace_set_close(set);
		return RT_EXIT_FAILURE;
	}
	struct rt_out out;
	if (rt_out_open(&out, STDOUT_FILENO) != 0) {
		rt_trace_set_close(set);
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	if (json)
		print_set_json(&out, set);
	else
		print_set_text(&out, set);
	int status = rt_cmd_set_damage_status(set, what, rt_cmd_finish_output(rt_out_close(&out)));
	rt_trace_set_close(set);
	return status;
}

/* Whether the inputs are read as a set: a trace file or a directory among them. */
static int wants_set(char **paths, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		struct stat st;
		if ((stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) ||
		    rt_input_kind_of(paths[i]) == RT_INPUT_TRACE)
			return 1;
	}
	return 0;
}

int rt_cmd_info(int argc, char **argv)
{
	const char *path = NULL;
	size_t path_count = 0;
	int json = 0, positional_only = 0, last_arena = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			if (!path)
				path = arg;
			argv[path_count++] = argv[i]; /* the inputs, packed at the front */
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_info_help(stdout);
			return RT_EXIT_OK;
		} else if (strcmp(arg, "--json") == 0) {
			json = 1;
		} else if (strcmp(arg, "--last") == 0) {
			last_arena = 1;
		} else {
			return rt_cmd_usage_error("info", INFO_USAGE, "unknown option '%s'", arg);
		}
	}
	if (!path)
		return rt_cmd_usage_error("info", INFO_USAGE, "which arena?");
	if (!last_arena && wants_set(argv, path_count))
		return info_set(argv, path_count, json);
	if (path_count > 1)
		return rt_cmd_usage_error("info", INFO_USAGE, "one arena at a time ('%s' is extra)",
					  argv[1]);
	char *last = NULL;
	if (last_arena) {
		if (!(last = rt_arena_last_path(path))) {
			fprintf(stderr, "ringtrace: out of memory\n");
			return RT_EXIT_FAILURE;
		}
		path = last;
	}

	struct rt_reader *rd;
	struct rt_read_error error;
	if (rt_reader_open(path, &rd, &error) != 0) {
		rt_cmd_report_open_error(path, &error);
		free(last);
		return RT_EXIT_USAGE;
	}
	struct rt_out out;
	if (rt_out_open(&out, STDOUT_FILENO) != 0) {
		rt_reader_close(rd);
		free(last);
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	rt_cmd_info_print(rd, json, &out);
	int status = rt_cmd_damage_status(rd, path, rt_cmd_finish_output(rt_out_close(&out)));
	rt_reader_close(rd);
	free(last);
	return status;
}
