/*
 * summary.c - `ringtrace summary`: what a trace holds, counted, without
 * printing a single event: the time span, events and events per second,
 * counts per site, tag, thread and record kind, and every loss by cause.
 *
 * It reads every input once, ring by ring, without merging (read/trace_set.h,
 * rt_trace_set_count): nothing is allocated per event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/output.h"
#include "present/units.h"
#include "read/arena_list.h"
#include "read/trace_set.h"

#define SUMMARY_USAGE "ringtrace summary [--json] INPUT..."

void rt_cmd_summary_help(FILE *to)
{
	fprintf(to, "usage: " SUMMARY_USAGE "\n"
		    "\n"
		    "Count what arenas and trace files (or directories of them) hold: the time\n"
		    "span, events and events per second, events per site, per tag, per thread\n"
		    "and per record kind, records of unknown sites, and every loss by cause\n"
		    "(dropped, overwritten, torn, damaged).  A process's function enters are\n"
		    "one site, 'function enter', and its exits another, 'function exit'\n"
		    "('ringtrace report' counts calls per function).  Exit status 3 when an\n"
		    "input was damaged.\n"
		    "\n"
		    "Options:\n"
		    "  --json   one JSON object (docs/JSON.md)\n"
		    "  --help   this text\n");
}

/* One site of one source, with its count. */
struct site_row {
	const struct rt_site *site;
	int32_t pid;
	uint64_t events;
};

static int by_events(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;
	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return 0;
}

static int by_tag(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;
	uint32_t n =
	    x->site->tag_length < y->site->tag_length ? x->site->tag_length : y->site->tag_length;
	int c = memcmp(x->site->tag, y->site->tag, n);
	if (c)
		return c;
	return x->site->tag_length < y->site->tag_length   ? -1
	       : x->site->tag_length > y->site->tag_length ? 1
							   : 0;
}

struct tallies {
	struct site_row *sites; /* sites with events, most first */
	size_t site_count;
	struct site_row *tags; /* one row per tag (site: the first with it), most first */
	size_t tag_count;
	uint64_t unknown, lost_records, earlier;
	uint64_t logs;		   /* of the events, RT_LOG messages (of log sites) */
	uint64_t io;		   /* of the events, file I/O calls (of the I/O site) */
	int64_t first_ns, last_ns; /* 0 with raw_clock */
	int raw_clock;		   /* the span's clock metadata was lost */
	uint32_t threads;
};

static int tally(const struct rt_trace_set *set, struct tallies *t)
{
	size_t n = 0;
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *s = &set->sources[i];
		for (uint32_t k = 0; k < s->reader->sites.count; k++)
			n += s->site_counts && s->site_counts[k] > 0;
		t->unknown += s->unknown_records;
		t->lost_records += s->lost_records;
		t->earlier += s->earlier_records;
		t->threads += s->reader->thread_count;
	}
	t->sites = calloc(n + 1, sizeof(*t->sites));
	t->tags = calloc(n + 1, sizeof(*t->tags));
	if (!t->sites || !t->tags)
		return -ENOMEM;
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *s = &set->sources[i];
		for (uint32_t k = 0; k < s->reader->sites.count; k++) {
			const struct rt_site *site = rt_site_lookup(&s->reader->sites, k);
			if (!s->site_counts || !s->site_counts[k] || !site)
				continue;
			if (site->kind == RT_SITE_LOG)
				t->logs += s->site_counts[k];
			else if (site->kind == RT_SITE_IO)
				t->io += s->site_counts[k];
			struct site_row *r = &t->sites[t->site_count++];
			r->site = site;
			r->pid = s->reader->header.pid;
			r->events = s->site_counts[k];
		}
	}
	/* tags: the sites sorted by tag, runs summed */
	memcpy(t->tags, t->sites, t->site_count * sizeof(*t->tags));
	if (t->site_count > 1)
		qsort(t->tags, t->site_count, sizeof(*t->tags), by_tag);
	for (size_t i = 0; i < t->site_count; i++) {
		if (t->tag_count && by_tag(&t->tags[t->tag_count - 1], &t->tags[i]) == 0)
			t->tags[t->tag_count - 1].events += t->tags[i].events;
		else
			t->tags[t->tag_count++] = t->tags[i];
	}
	if (t->site_count > 1)
		qsort(t->sites, t->site_count, sizeof(*t->sites), by_events);
	if (t->tag_count > 1)
		qsort(t->tags, t->tag_count, sizeof(*t->tags), by_events);
	/* a clock whose metadata was lost has no nanoseconds: its raw counters are told */
	t->raw_clock = set->have_span && (set->sources[set->first_source].reader->raw_time ||
					  set->sources[set->last_source].reader->raw_time);
	if (set->have_span && !t->raw_clock) {
		t->first_ns = rt_timebase_ns(&set->sources[set->first_source].reader->timebase,
					     set->first_counter);
		t->last_ns = rt_timebase_ns(&set->sources[set->last_source].reader->timebase,
					    set->last_counter);
	}
	return 0;
}

static double per_second(uint64_t events, int64_t span_ns)
{
	return span_ns > 0 ? (double)events * 1e9 / (double)span_ns : 0;
}

/* "   1.234567890" without the padding */
static void put_time(struct rt_out *out, int64_t ns)
{
	char buf[32];
	int64_t mag = ns < 0 ? -ns : ns;
	snprintf(buf, sizeof(buf), "%s%lld.%09lld", ns < 0 ? "-" : "",
		 (long long)(mag / 1000000000), (long long)(mag % 1000000000));
	rt_out_str(out, buf);
}

/* "begin " or "end " for a span's site, as dump shows its events; else "" */
static const char *span_word(const struct rt_site *s)
{
	return s->kind == RT_SITE_BEGIN ? "begin " : s->kind == RT_SITE_END ? "end " : "";
}

/*
 * A site as "file:line func (tag)".  The library's own sites have no place
 * in the source: every function's enters are one site, its exits another
 * (`report` counts calls per function), and the I/O interposer's calls one.
 */
static void text_site(struct rt_out *out, const struct rt_site *s)
{
	if (s->kind == RT_SITE_ENTER || s->kind == RT_SITE_EXIT || s->kind == RT_SITE_IO) {
		rt_out_str(out, s->kind == RT_SITE_ENTER  ? "function enter"
				: s->kind == RT_SITE_EXIT ? "function exit"
							  : "file I/O");
		return;
	}
	rt_out_printf(out, "%s:%u %s (%s%s)", rt_escaped_n(s->file_base, s->file_base_length),
		      s->line, rt_escaped_n(s->func, s->func_length), span_word(s),
		      rt_escaped_n(s->tag, s->tag_length));
}

/* How a process ended ("exited", "SIGSEGV at 0x0", "running"...), as `ls` says it. */
static void process_end(const struct rt_set_source *s, char *out, size_t size)
{
	const struct rt_reader *rd = s->reader;
	rt_arena_fate_text(rt_arena_fate(&rd->header, rd->writer), &rd->header, out, size);
}

static void print_text(const struct rt_trace_set *set, const struct tallies *t, struct rt_out *out)
{
	const struct rt_counts *c = &set->totals;
	int64_t span = t->last_ns - t->first_ns;
	char units[RT_UNITS_MAX];
	size_t arenas = 0;
	for (size_t i = 0; i < set->source_count; i++)
		arenas += (size_t)set->sources[i].arena;
	rt_out_printf(out, "inputs       %zu trace file%s, %zu arena%s\n", set->file_count,
		      set->file_count == 1 ? "" : "s", arenas, arenas == 1 ? "" : "s");
	rt_out_str(out, "span         ");
	if (t->raw_clock) {
		rt_out_printf(out, "clock metadata lost: raw counter %llu .. %llu\n",
			      (unsigned long long)set->first_counter,
			      (unsigned long long)set->last_counter);
	} else if (set->have_span) {
		put_time(out, t->first_ns);
		rt_out_str(out, " .. ");
		put_time(out, t->last_ns);
		rt_out_printf(out, " (%s)\n", rt_units_duration(units, sizeof(units), span));
	} else {
		rt_out_str(out, "no events\n");
	}
	rt_out_printf(out, "events       %llu", (unsigned long long)c->present);
	if (span > 0)
		rt_out_printf(out, " (%.0f per second)", per_second(c->present, span));
	rt_out_printf(out, "\nlost         %llu\n", (unsigned long long)rt_counts_lost(c));

	rt_out_str(out, "\nprocesses\n      pid   parent  end                     program\n");
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *s = &set->sources[i];
		if (s->context || (!s->arena && !s->has_header))
			continue;
		const struct rt_arena_header *h = &s->reader->header;
		char end[64];
		process_end(s, end, sizeof(end));
		rt_out_printf(out, "  %7d  %7d  %-22s  %s\n", h->pid, s->parent_pid, end,
			      rt_escaped_n(h->program, strnlen(h->program, sizeof(h->program))));
	}

	rt_out_str(out, "\nthreads\n      pid      tid  name                  events     "
			"dropped overwritten        torn     damaged\n");
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_reader *rd = set->sources[i].reader;
		for (uint32_t k = 0; k < rd->thread_count; k++) {
			const struct rt_reader_thread *th = &rd->threads[k];
			const struct rt_counts *tc = &th->counts;
			rt_out_printf(
			    out, "  %7d  %7d  %-16s  %10llu  %10llu  %10llu  %10llu  %10llu\n",
			    rd->header.pid, th->tid,
			    rt_escaped_n(th->name, strnlen(th->name, sizeof(th->name))),
			    (unsigned long long)tc->present, (unsigned long long)tc->dropped,
			    (unsigned long long)tc->overwritten, (unsigned long long)tc->torn,
			    (unsigned long long)tc->damaged);
		}
	}

	rt_out_str(out, "\nsites\n      events  site\n");
	for (size_t i = 0; i < t->site_count; i++) {
		rt_out_printf(out, "  %10llu  ", (unsigned long long)t->sites[i].events);
		text_site(out, t->sites[i].site);
		rt_out_char(out, '\n');
	}
	rt_out_str(out, "\ntags\n      events  tag\n");
	for (size_t i = 0; i < t->tag_count; i++) {
		const struct rt_site *s = t->tags[i].site;
		rt_out_printf(out, "  %10llu  %s\n", (unsigned long long)t->tags[i].events,
			      rt_escaped_n(s->tag, s->tag_length));
	}

	rt_out_printf(out,
		      "\nkinds\n"
		      "  %10llu  trace events\n"
		      "  %10llu  of them log messages (RT_LOG)\n",
		      (unsigned long long)c->present, (unsigned long long)t->logs);
	/* a trace without I/O tracing keeps the lines it always had */
	if (t->io)
		rt_out_printf(out, "  %10llu  of them file I/O calls (record --io)\n",
			      (unsigned long long)t->io);
	rt_out_printf(out,
		      "  %10llu  lost records (drops the rings reported)\n"
		      "  %10llu  events of unknown sites (site metadata lost: shown by site id)\n",
		      (unsigned long long)t->lost_records, (unsigned long long)t->unknown);
	rt_out_printf(out,
		      "\nlosses\n"
		      "  %10llu  dropped\n"
		      "  %10llu  overwritten\n"
		      "  %10llu  torn\n"
		      "  %10llu  damaged (%zu damaged region%s)\n",
		      (unsigned long long)c->dropped, (unsigned long long)c->overwritten,
		      (unsigned long long)c->torn, (unsigned long long)c->damaged,
		      rt_trace_set_damage_regions(set),
		      rt_trace_set_damage_regions(set) == 1 ? "" : "s");
	if (t->earlier)
		rt_out_printf(out, "  %10llu  in earlier files, not given (not lost)\n",
			      (unsigned long long)t->earlier);
}

static void json_counts(struct rt_out *out, const struct rt_counts *c)
{
	rt_out_printf(out,
		      "\"events\":%llu,\"dropped\":%llu,\"overwritten\":%llu,\"torn\":%llu,"
		      "\"damaged\":%llu",
		      (unsigned long long)c->present, (unsigned long long)c->dropped,
		      (unsigned long long)c->overwritten, (unsigned long long)c->torn,
		      (unsigned long long)c->damaged);
}

static void print_json(const struct rt_trace_set *set, const struct tallies *t, struct rt_out *out)
{
	const struct rt_counts *c = &set->totals;
	rt_out_printf(out, "{\"kind\":\"summary\",\"trace_files\":%zu", set->file_count);
	if (t->raw_clock)
		rt_out_printf(out, ",\"clock\":\"lost\",\"first_raw\":%llu,\"last_raw\":%llu",
			      (unsigned long long)set->first_counter,
			      (unsigned long long)set->last_counter);
	else if (set->have_span)
		rt_out_printf(out, ",\"first_ns\":%lld,\"last_ns\":%lld,\"span_ns\":%lld",
			      (long long)t->first_ns, (long long)t->last_ns,
			      (long long)(t->last_ns - t->first_ns));
	rt_out_printf(out, ",\"events\":%llu,\"events_per_second\":%.0f,\"lost\":{",
		      (unsigned long long)c->present,
		      per_second(c->present, t->last_ns - t->first_ns));
	rt_out_printf(out, "\"dropped\":%llu,\"overwritten\":%llu,\"torn\":%llu,\"damaged\":%llu}",
		      (unsigned long long)c->dropped, (unsigned long long)c->overwritten,
		      (unsigned long long)c->torn, (unsigned long long)c->damaged);
	rt_out_printf(out,
		      ",\"kinds\":{\"trace\":%llu,\"log\":%llu,\"io\":%llu,\"lost_records\":%llu,"
		      "\"unknown\":%llu},\"damaged_regions\":%zu,\"earlier_records\":%llu",
		      (unsigned long long)c->present, (unsigned long long)t->logs,
		      (unsigned long long)t->io, (unsigned long long)t->lost_records,
		      (unsigned long long)t->unknown, rt_trace_set_damage_regions(set),
		      (unsigned long long)t->earlier);
	rt_out_str(out, ",\"processes\":[");
	int first = 1;
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *s = &set->sources[i];
		if (s->context || (!s->arena && !s->has_header))
			continue;
		const struct rt_arena_header *h = &s->reader->header;
		rt_out_printf(out, "%s{\"pid\":%d,\"parent_pid\":%d,\"program\":", first ? "" : ",",
			      h->pid, s->parent_pid);
		rt_out_json_string(out, h->program, strnlen(h->program, sizeof(h->program)));
		char end[64];
		process_end(s, end, sizeof(end));
		rt_out_str(out, ",\"end\":");
		rt_out_json_string(out, end, strlen(end));
		rt_out_str(out, ",\"input\":");
		rt_out_json_string(out, s->name, strlen(s->name));
		rt_out_char(out, '}');
		first = 0;
	}
	rt_out_str(out, "],\"threads\":[");
	first = 1;
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_reader *rd = set->sources[i].reader;
		for (uint32_t k = 0; k < rd->thread_count; k++) {
			const struct rt_reader_thread *th = &rd->threads[k];
			rt_out_printf(out, "%s{\"pid\":%d,\"tid\":%d,\"name\":", first ? "" : ",",
				      rd->header.pid, th->tid);
			rt_out_json_string(out, th->name, strnlen(th->name, sizeof(th->name)));
			rt_out_char(out, ',');
			json_counts(out, &th->counts);
			rt_out_char(out, '}');
			first = 0;
		}
	}
	rt_out_str(out, "],\"sites\":[");
	for (size_t i = 0; i < t->site_count; i++) {
		const struct rt_site *s = t->sites[i].site;
		rt_out_printf(out, "%s{\"pid\":%d,\"tag\":", i ? "," : "", t->sites[i].pid);
		rt_out_json_string(out, s->tag, s->tag_length);
		rt_out_str(out, ",\"file\":");
		rt_out_json_string(out, s->file, s->file_length);
		rt_out_printf(out, ",\"line\":%u,\"func\":", s->line);
		rt_out_json_string(out, s->func, s->func_length);
		if (s->kind == RT_SITE_BEGIN || s->kind == RT_SITE_END)
			rt_out_str(out, s->kind == RT_SITE_BEGIN ? ",\"span\":\"begin\""
								 : ",\"span\":\"end\"");
		else if (s->kind == RT_SITE_ENTER || s->kind == RT_SITE_EXIT)
			rt_out_str(out, s->kind == RT_SITE_ENTER ? ",\"function\":\"enter\""
								 : ",\"function\":\"exit\"");
		rt_out_printf(out, ",\"events\":%llu}", (unsigned long long)t->sites[i].events);
	}
	rt_out_str(out, "],\"tags\":[");
	for (size_t i = 0; i < t->tag_count; i++) {
		const struct rt_site *s = t->tags[i].site;
		rt_out_str(out, i ? ",{\"tag\":" : "{\"tag\":");
		rt_out_json_string(out, s->tag, s->tag_length);
		rt_out_printf(out, ",\"events\":%llu}", (unsigned long long)t->tags[i].events);
	}
	rt_out_str(out, "]}\n");
}

int rt_cmd_summary_print(struct rt_trace_set *set, int json, struct rt_out *out)
{
	struct tallies t;
	memset(&t, 0, sizeof(t));
	int rc = rt_trace_set_count(set);
	if (rc == 0)
		rc = tally(set, &t);
	if (rc == 0) {
		if (json)
			print_json(set, &t, out);
		else
			print_text(set, &t, out);
	}
	free(t.sites);
	free(t.tags);
	return rc;
}

static int print_set(struct rt_trace_set *set, const void *json, struct rt_out *out)
{
	return rt_cmd_summary_print(set, *(const int *)json, out);
}

int rt_cmd_summary(int argc, char **argv)
{
	int json = 0, positional_only = 0;
	size_t count = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			argv[count++] = argv[i]; /* the inputs, packed at the front */
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_summary_help(stdout);
			return RT_EXIT_OK;
		} else if (strcmp(arg, "--json") == 0) {
			json = 1;
		} else {
			return rt_cmd_usage_error("summary", SUMMARY_USAGE, "unknown option '%s'",
						  arg);
		}
	}
	if (count == 0)
		return rt_cmd_usage_error("summary", SUMMARY_USAGE, "which arenas or trace files?");
	return rt_cmd_print_counted_set(argv, count, print_set, &json);
}
