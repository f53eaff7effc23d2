/*
 * cut.c - `ringtrace cut`: the part of a trace between two points of its
 * time line, written as a new trace file that decodes alone.
 *
 * The inputs are read as one time line (read/trace_set.h), exactly as
 * `dump` prints it, twice.  The first pass finds the range and plans the
 * output: which sources and rings have items in it, and per ring the first
 * record seq the cut holds (its RINGS position: what comes before counts
 * as in earlier files, not lost) and the last.  Then every source's
 * metadata is written, and the second pass re-encodes the items in range
 * (cmd/cut_out.h):
 *
 *   event                      a TRACE record, same record seq, site, cpu,
 *                              counter and arguments
 *   drop a LOST record told    a LOST record (reason, count, last counter)
 *   other drops                LOSS, dropped (no record seq: first_record 0)
 *   overwritten, torn          LOSS with its record seqs, so the reader
 *                              counts them covered, not as a gap
 *   damaged gap in a ring      nothing when a later record of the ring is
 *                              in the cut (the reader finds the same gap
 *                              and reports it as damaged), else LOSS
 *   other damage               LOSS, damaged
 *
 * Every source that has a header keeps its SOURCE, THREADS, SITES and
 * MODULES even with nothing in range: time zero is the earliest source's
 * start, so a source left out could move every time in the cut.
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd/cmd.h"
#include "cmd/cut_out.h"
#include "common/parse.h"
#include "format/records.h"
#include "read/trace_set.h"

#define CUT_USAGE "ringtrace cut [--from T] [--to T] [-q] INPUT... OUT"
/* Rings a source may have in the plan; an item of a higher one counts as ringless. */
#define CUT_MAX_RINGS (1u << 20)
#define NO_NUMBER UINT32_MAX

void rt_cmd_cut_help(FILE *to)
{
	fprintf(to,
		"usage: " CUT_USAGE "\n"
		"\n"
		"Write the part of a trace between --from and --to into OUT, a new trace\n"
		"file that decodes alone: the metadata of every process, then the events\n"
		"and the losses in the range, as `ringtrace dump INPUT...` shows them.\n"
		"INPUT: arenas, trace files, directories of them (merged by time).\n"
		"\n"
		"T is a time since the trace's start (the zero `dump` prints) with a unit,\n"
		"ns, us, ms, s, min or h (\"2.5s\", \"150ms\"), or seq:N, the N-th event of the\n"
		"merged time line (0 is the first).  Both bounds are included.  --from\n"
		"defaults to the start and --to to the end; at least one is needed.\n"
		"Records before the range are not taken for lost.\n"
		"\n"
		"Options:\n"
		"  --from T      the first event (or time) to keep\n"
		"  --to T        the last event (or time) to keep\n"
		"  -q, --quiet   no closing line on stderr\n"
		"  --help        this text\n"
		"\n"
		"An existing OUT that is not a trace file is never overwritten, nor an input.\n"
		"Exit status: 0; 3 when an input was damaged (the cut is written all the\n"
		"same, its losses included); 1 when OUT cannot be written; 2 for bad usage\n"
		"or an input that cannot be read.\n");
}

/* ---- the command line ---------------------------------------------------- */

enum bound_kind { BOUND_NONE = 0, BOUND_TIME, BOUND_SEQ };

struct bound {
	enum bound_kind kind;
	uint64_t value; /* nanoseconds, or an event index */
};

struct cut_options {
	struct bound from, to;
	char **inputs;
	size_t input_count;
	const char *out;
	int quiet;
};

static int parse_bound(const char *option, const char *value, struct bound *b)
{
	if (!value)
		return rt_cmd_usage_error("cut", CUT_USAGE, "%s needs a time or seq:N", option);
	if (strncmp(value, "seq:", 4) == 0) {
		if (rt_parse_u64(value + 4, &b->value) != 0)
			return rt_cmd_usage_error("cut", CUT_USAGE,
						  "%s %s: seq: needs an event number (0, 1, ...)",
						  option, value);
		b->kind = BOUND_SEQ;
		return 0;
	}
	if (rt_parse_duration(value, &b->value) != 0)
		return rt_cmd_usage_error("cut", CUT_USAGE,
					  "%s %s: not a time with a unit (2.5s, 150ms, 40us) "
					  "nor seq:N",
					  option, value);
	b->kind = BOUND_TIME;
	return 0;
}

static int parse_options(int argc, char **argv, struct cut_options *o)
{
	int rc;
	const char *value;
	int positional_only = 0;
	size_t positional = 0;
	memset(o, 0, sizeof(*o));
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			argv[positional++] = argv[i]; /* packed at the front */
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_cut_help(stdout);
			return -1;
		} else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
			o->quiet = 1;
		} else if ((rc = rt_cmd_option(argc, argv, &i, "--from", &value)) != 0) {
			if ((rc = parse_bound("--from", rc < 0 ? NULL : value, &o->from)) != 0)
				return rc;
		} else if ((rc = rt_cmd_option(argc, argv, &i, "--to", &value)) != 0) {
			if ((rc = parse_bound("--to", rc < 0 ? NULL : value, &o->to)) != 0)
				return rc;
		} else {
			return rt_cmd_usage_error("cut", CUT_USAGE, "unknown option '%s'", arg);
		}
	}
	if (positional == 0)
		return rt_cmd_usage_error("cut", CUT_USAGE, "which trace, and which output file?");
	if (positional == 1)
		return rt_cmd_usage_error("cut", CUT_USAGE,
					  "which output file? (the last argument is OUT)");
	if (o->from.kind == BOUND_NONE && o->to.kind == BOUND_NONE)
		return rt_cmd_usage_error("cut", CUT_USAGE,
					  "which part? --from, --to or both (T or seq:N)");
	if (o->from.kind == o->to.kind && o->to.value < o->from.value)
		return rt_cmd_usage_error("cut", CUT_USAGE, "--to is before --from");
	o->inputs = argv;
	o->input_count = positional - 1;
	o->out = argv[positional - 1];
	return 0;
}

/* ---- the range ----------------------------------------------------------- */

/* Where a walk of the time line stands: events seen before the current item. */
struct range {
	const struct cut_options *o;
	uint64_t events;
};

static int64_t ns_of(uint64_t value)
{
	return value > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)value;
}

/*
 * Whether the next item of the walk is in the range.  By time: its time
 * lies within the bounds.  By seq: an event by its index; a loss when it
 * comes after event N (--from) and before event M+1 (--to).
 */
static int in_range(struct range *r, const struct rt_trace_set *set, uint32_t source,
		    const struct rt_item *it)
{
	const struct cut_options *o = r->o;
	const int event = rt_item_kind_is_event(it->kind);
	const uint64_t before = r->events;
	r->events += event;
	int64_t ns = 0;
	if (o->from.kind == BOUND_TIME || o->to.kind == BOUND_TIME)
		ns = rt_timebase_ns(&set->sources[source].reader->timebase, it->counter);
	/* nothing is before the start: a loss of unknown time sorts there, and counts there */
	if (ns < 0)
		ns = 0;
	if (o->from.kind == BOUND_TIME && ns < ns_of(o->from.value))
		return 0;
	if (o->from.kind == BOUND_SEQ && (event ? before < o->from.value : before <= o->from.value))
		return 0;
	if (o->to.kind == BOUND_TIME && ns > ns_of(o->to.value))
		return 0;
	if (o->to.kind == BOUND_SEQ && before > o->to.value)
		return 0;
	return 1;
}

/* ---- what an item becomes ------------------------------------------------ */

enum item_form {
	FORM_EVENT,	  /* TRACE record */
	FORM_LOG,	  /* LOG or IO record: a payload */
	FORM_LOST_RECORD, /* LOST record */
	FORM_DROPPED,	  /* LOSS, dropped */
	FORM_COVERED,	  /* LOSS with record seqs: overwritten, torn */
	FORM_GAP,	  /* damaged records of a ring */
	FORM_DAMAGED,	  /* LOSS, damaged, of no ring */
};

/* The ring the item's records lie in, RT_NO_RING when no thread says. */
static uint32_t item_ring(const struct rt_reader *rd, const struct rt_item *it)
{
	/* an event whose thread entry was lost still says its ring */
	if ((it->flags & RT_ITEM_NO_OWNER) && (it->thread & RT_ITEM_RING_ONLY)) {
		uint32_t ring = it->thread & ~RT_ITEM_RING_ONLY;
		return ring < CUT_MAX_RINGS ? ring : RT_NO_RING;
	}
	if (it->thread >= rd->thread_count)
		return RT_NO_RING;
	uint32_t ring = rd->threads[it->thread].ring;
	return ring < CUT_MAX_RINGS ? ring : RT_NO_RING;
}

static enum item_form form_of(const struct rt_item *it, uint32_t ring)
{
	if (it->kind == RT_ITEM_TRACE)
		return FORM_EVENT;
	if (rt_item_has_payload(it->kind))
		return FORM_LOG;
	switch (it->loss.reason) {
	case RT_LOSS_DROPPED:
		/*
		 * A LOST record of a ring has a record seq of its own (never 0:
		 * drops follow records); drops known otherwise consume none.
		 */
		if (ring != RT_NO_RING && it->seq != 0 && (it->flags & RT_ITEM_TIMED) &&
		    !(it->flags & RT_ITEM_NO_SEQ) &&
		    (it->loss.note == RT_NOTE_RING_FULL || it->loss.note == RT_NOTE_NESTED_SIGNAL ||
		     it->loss.note == RT_NOTE_UNKNOWN_LOST))
			return FORM_LOST_RECORD;
		return FORM_DROPPED;
	case RT_LOSS_OVERWRITTEN:
	case RT_LOSS_TORN:
		return FORM_COVERED;
	default:
		return ring != RT_NO_RING && it->loss.note == RT_NOTE_GAP ? FORM_GAP : FORM_DAMAGED;
	}
}

/* ---- the plan (first pass) ----------------------------------------------- */

struct plan_ring {
	int used;
	int has_record;
	uint64_t start;	      /* first record seq in the cut: its RINGS position */
	uint64_t last_record; /* last record seq written */
	uint32_t owner;	      /* reader thread of the last record */
};

struct plan_source {
	uint32_t number; /* in the output, NO_NUMBER when left out */
	int metadata;	 /* its SOURCE, THREADS, SITES are written */
	uint64_t items;
	uint64_t first_counter;
	struct plan_ring *rings;
	size_t ring_count;
};

struct plan {
	struct plan_source *sources;
	size_t count;
	uint64_t events, losses;   /* in range */
	uint64_t all_events;	   /* in the inputs */
	int damaged;		   /* a damaged loss anywhere in the inputs */
	int64_t first_ns, last_ns; /* of the events in range */
};

static void free_plan(struct plan *p)
{
	for (size_t i = 0; i < p->count; i++)
		free(p->sources[i].rings);
	free(p->sources);
}

static struct plan_ring *plan_ring(struct plan_source *ps, uint32_t ring)
{
	if (ring >= ps->ring_count) {
		size_t n = (size_t)ring + 1;
		struct plan_ring *bigger = realloc(ps->rings, n * sizeof(*bigger));
		if (!bigger)
			return NULL;
		memset(bigger + ps->ring_count, 0, (n - ps->ring_count) * sizeof(*bigger));
		ps->rings = bigger;
		ps->ring_count = n;
	}
	return &ps->rings[ring];
}

/* One item in range: which ring positions it needs. */
static int plan_item(struct plan *p, const struct rt_trace_set *set, uint32_t source,
		     const struct rt_item *it)
{
	struct plan_source *ps = &p->sources[source];
	const struct rt_reader *rd = set->sources[source].reader;
	if (!ps->items++)
		ps->first_counter = it->counter;
	if (rt_item_kind_is_event(it->kind)) {
		int64_t ns = rt_timebase_ns(&rd->timebase, it->counter);
		if (!p->events++)
			p->first_ns = ns;
		p->last_ns = ns;
	} else {
		p->losses++;
	}
	uint32_t ring = item_ring(rd, it);
	enum item_form form = form_of(it, ring);
	if (ring == RT_NO_RING || form == FORM_DROPPED || form == FORM_DAMAGED)
		return 0;
	struct plan_ring *r = plan_ring(ps, ring);
	if (!r)
		return -ENOMEM;
	if (!r->used || it->seq < r->start)
		r->start = it->seq;
	r->used = 1;
	if (form == FORM_EVENT || form == FORM_LOG || form == FORM_LOST_RECORD) {
		if (!r->has_record || it->seq > r->last_record)
			r->last_record = it->seq;
		r->has_record = 1;
		r->owner = it->thread;
	}
	return 0;
}

static int make_plan(struct plan *p, struct rt_trace_set *set, const struct cut_options *o)
{
	memset(p, 0, sizeof(*p));
	p->sources = calloc(set->source_count + 1, sizeof(*p->sources));
	if (!p->sources)
		return -ENOMEM;
	p->count = set->source_count;
	struct range r = {o, 0};
	int rc = rt_trace_set_start(set, 0);
	const struct rt_item *it;
	uint32_t source;
	while (!rc && (it = rt_trace_set_next(set, &source)) != NULL) {
		if (it->kind == RT_ITEM_LOSS && it->loss.reason == RT_LOSS_DAMAGED)
			p->damaged = 1;
		if (in_range(&r, set, source, it))
			rc = plan_item(p, set, source, it);
	}
	p->all_events = r.events;
	if (!rc)
		rc = rt_trace_set_error(set);
	if (rc)
		return rc;
	if (rt_trace_set_damage_regions(set))
		p->damaged = 1;

	/* numbers: every source with a header or with items; contexts join a source */
	uint32_t next = 0;
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *s = &set->sources[i];
		struct plan_source *ps = &p->sources[i];
		ps->number = NO_NUMBER;
		if (!s->context && (s->arena || s->has_header || ps->items)) {
			ps->number = next++;
			ps->metadata = 1;
		}
	}
	for (size_t i = 0; i < set->source_count; i++) {
		struct plan_source *ps = &p->sources[i];
		if (!set->sources[i].context || !ps->items)
			continue;
		for (size_t k = 0; k < set->source_count && ps->number == NO_NUMBER; k++)
			if (p->sources[k].metadata &&
			    set->sources[k].file_id == set->sources[i].file_id)
				ps->number = p->sources[k].number;
		if (ps->number == NO_NUMBER)
			ps->number = next++;
	}
	return 0;
}

/* ---- writing (second pass) ----------------------------------------------- */

static int write_metadata(struct rt_cut_out *out, const struct plan *p,
			  const struct rt_trace_set *set)
{
	int rc = 0;
	for (size_t i = 0; i < set->source_count && !rc; i++) {
		const struct plan_source *ps = &p->sources[i];
		const struct rt_set_source *s = &set->sources[i];
		const struct rt_reader *rd = s->reader;
		if (!ps->metadata)
			continue;
		size_t used = 0;
		for (size_t r = 0; r < ps->ring_count; r++)
			used += ps->rings[r].used;
		struct rt_block_ring *rings = calloc(used + 1, sizeof(*rings));
		if (!rings)
			return -ENOMEM;
		size_t n = 0;
		for (size_t r = 0; r < ps->ring_count; r++) {
			const struct plan_ring *pr = &ps->rings[r];
			if (!pr->used)
				continue;
			struct rt_block_ring *e = &rings[n++];
			e->index = (uint32_t)r;
			e->state = RT_RING_OWNED;
			e->owner = RT_NO_RING;
			if (pr->has_record && pr->owner < rd->thread_count) {
				const struct rt_reader_thread *t = &rd->threads[pr->owner];
				e->owner = t->entry;
				e->state =
				    t->state == RT_THREAD_EXITED ? RT_RING_RELEASED : RT_RING_OWNED;
			}
			/* slot tags are the cut's own: they count on from the first record seq */
			e->slot = pr->start;
			e->record = pr->start;
		}
		uint64_t counter = ps->items ? ps->first_counter : rd->header.start.counter;
		rc = rt_cut_out_source(out, ps->number, rd, s->has_header, s->parent_pid, rings, n,
				       counter);
		free(rings);
	}
	return rc;
}

static uint32_t thread_entry(const struct rt_reader *rd, const struct rt_item *it)
{
	return it->thread < rd->thread_count ? rd->threads[it->thread].entry : RT_NO_RING;
}

static int write_item(struct rt_cut_out *out, const struct plan *p, const struct rt_trace_set *set,
		      uint32_t source, const struct rt_item *it)
{
	const struct plan_source *ps = &p->sources[source];
	const struct rt_reader *rd = set->sources[source].reader;
	const uint32_t ring = item_ring(rd, it);
	const enum item_form form = form_of(it, ring);
	union rt_slot slots[RT_LOG_MAX_SLOTS];
	memset(slots, 0, sizeof(slots));
	struct rt_slot_head *head = &slots[0].head;
	struct rt_slot_cont *cont = &slots[1].cont;
	head->cpu = it->cpu;
	head->record = (uint32_t)it->seq;
	head->counter = it->counter;
	cont->kind = RT_REC_CONT;
	cont->index = 1;

	struct rt_block_loss loss;
	memset(&loss, 0, sizeof(loss));
	loss.ring = ring;
	loss.thread = thread_entry(rd, it);
	loss.first_record = it->seq;
	loss.count = it->loss.count;
	loss.counter_from = it->flags & RT_ITEM_TIMED ? it->counter : 0;
	loss.counter_to = it->loss.last_counter;

	switch (form) {
	case FORM_EVENT: {
		const struct rt_site *site = rt_site_lookup(&rd->sites, it->site);
		if ((!site && !(it->flags & RT_ITEM_NO_SITE)) || ring == RT_NO_RING)
			return 0; /* the reader never gives such an event */
		head->kind = RT_REC_TRACE;
		/*
		 * An event whose site metadata was lost keeps its raw site id and
		 * words: the cut has no entry for it either, and shows it marked.
		 */
		head->nslots = site ? (uint8_t)RT_TRACE_SLOTS(site->nargs)
				    : (uint8_t)((it->flags & RT_ITEM_WIDE) ? 2 : 1);
		head->site = it->site;
		head->a0 = it->args.a32[0];
		head->a1 = it->args.a32[1];
		cont->a2 = it->args.a32[2];
		cont->a3 = it->args.a32[3];
		cont->a4 = it->args.a64[0];
		cont->a5 = it->args.a64[1];
		return rt_cut_out_record(out, ps->number, ring, it->seq, slots, head->nslots);
	}
	case FORM_LOG: {
		/* the record as the ring held it (log or I/O): its payload over its slots again */
		const struct rt_site *site = rt_site_lookup(&rd->sites, it->site);
		unsigned nslots = it->log.nslots;
		if ((!site && !(it->flags & RT_ITEM_NO_SITE)) || ring == RT_NO_RING || nslots < 1 ||
		    nslots > RT_LOG_MAX_SLOTS || !it->log.payload ||
		    it->log.length != RT_LOG_PAYLOAD_BYTES(nslots))
			return 0; /* the reader never gives such an event */
		head->kind = it->kind == RT_ITEM_IO ? RT_REC_IO : RT_REC_LOG;
		head->nslots = (uint8_t)nslots;
		head->site = it->site;
		memcpy(slots[0].bytes + 24, it->log.payload, 8);
		for (unsigned k = 1; k < nslots; k++) {
			slots[k].cont.kind = RT_REC_CONT;
			slots[k].cont.index = (uint8_t)k;
			memcpy(slots[k].bytes + 8, it->log.payload + 8 + (size_t)24 * (k - 1), 24);
		}
		return rt_cut_out_record(out, ps->number, ring, it->seq, slots, nslots);
	}
	case FORM_LOST_RECORD:
		head->kind = RT_REC_LOST;
		head->nslots = 2;
		head->a0 = it->loss.note == RT_NOTE_RING_FULL	    ? RT_LOST_DROPPED
			   : it->loss.note == RT_NOTE_NESTED_SIGNAL ? RT_LOST_NESTED
								    : 0;
		cont->a4 = it->loss.count;
		cont->a5 = it->loss.last_counter;
		return rt_cut_out_record(out, ps->number, ring, it->seq, slots, 2);
	case FORM_DROPPED:
		loss.reason = RT_LOSS_DROPPED;
		loss.first_record = 0;
		break;
	case FORM_COVERED:
		loss.reason = it->loss.reason;
		break;
	case FORM_GAP:
		/*
		 * Noted with its record seqs, so that the reader of the cut takes
		 * the gap for a loss told, not for damage of the cut itself.
		 */
		loss.reason = RT_LOSS_DAMAGED;
		break;
	case FORM_DAMAGED:
		loss.reason = RT_LOSS_DAMAGED;
		loss.ring = RT_NO_RING;
		break;
	}
	if (loss.count == 0)
		return 0; /* a LOSS entry of nothing says nothing */
	return rt_cut_out_loss(out, ps->number, &loss);
}

static int write_items(struct rt_cut_out *out, const struct plan *p, struct rt_trace_set *set,
		       const struct cut_options *o)
{
	struct range r = {o, 0};
	int rc = rt_trace_set_start(set, 0);
	const struct rt_item *it;
	uint32_t source;
	while (!rc && (it = rt_trace_set_next(set, &source)) != NULL)
		if (in_range(&r, set, source, it))
			rc = write_item(out, p, set, source, it);
	if (!rc)
		rc = rt_trace_set_error(set);
	return rc;
}

/* ---- the output must not be an input ------------------------------------- */

/* The directory part of path (".": none), in a new string. */
static char *directory_of(const char *path)
{
	char *copy = strdup(path);
	if (!copy)
		return NULL;
	char *d = strdup(dirname(copy));
	free(copy);
	return d;
}

/* Whether name is base.DIGITS (six digits at least): a file of a rotated OUT. */
static int rotation_of(const char *name, const char *base)
{
	size_t n = strlen(base);
	if (strncmp(name, base, n) != 0 || name[n] != '.')
		return 0;
	size_t digits = strspn(name + n + 1, "0123456789");
	return digits >= 6 && name[n + 1 + digits] == 0;
}

/*
 * The input that writing OUT would destroy: OUT itself, or a trace file
 * OUT.NNNNNN beside it (the writer removes those of an earlier recording).
 * NULL when none.
 */
static const char *clobbered_input(const struct rt_trace_set *set, const char *out)
{
	struct stat out_st, out_dir, st, dir_st;
	if (!out)
		return NULL;
	int out_exists = stat(out, &out_st) == 0;
	char *od = directory_of(out);
	int have_dir = od && stat(od, &out_dir) == 0;
	const char *base = rt_path_basename(out);
	const char *found = NULL;
	for (size_t i = 0; i < set->file_count && !found; i++) {
		const struct rt_trace_file *f = &set->files[i].file;
		if (fstat(f->fd, &st) != 0)
			continue;
		if (out_exists && st.st_dev == out_st.st_dev && st.st_ino == out_st.st_ino) {
			found = f->path;
			break;
		}
		if (!have_dir || !rotation_of(rt_path_basename(f->path), base))
			continue;
		char *fd_dir = directory_of(f->path);
		if (fd_dir && stat(fd_dir, &dir_st) == 0 && dir_st.st_dev == out_dir.st_dev &&
		    dir_st.st_ino == out_dir.st_ino)
			found = f->path;
		free(fd_dir);
	}
	free(od);
	return found;
}

/* ---- the command --------------------------------------------------------- */

static void report(const struct cut_options *o, const struct plan *p, struct rt_cut_out *out)
{
	if (o->quiet)
		return;
	fprintf(stderr, "ringtrace: cut: %llu of %llu events", (unsigned long long)p->events,
		(unsigned long long)p->all_events);
	if (p->events)
		fprintf(stderr, " (%lld.%09lld .. %lld.%09lld)",
			(long long)(p->first_ns / 1000000000),
			(long long)(llabs(p->first_ns) % 1000000000),
			(long long)(p->last_ns / 1000000000),
			(long long)(llabs(p->last_ns) % 1000000000));
	fprintf(stderr, " and %llu loss%s written to %s (%llu bytes)\n",
		(unsigned long long)p->losses, p->losses == 1 ? "" : "es", rt_escaped(o->out),
		(unsigned long long)rt_cut_out_bytes(out));
}

static int cut(const struct cut_options *o)
{
	struct rt_trace_set *set;
	char message[512];
	if (rt_trace_set_open_reading(o->inputs, o->input_count, &set, message, sizeof(message)) !=
	    0) {
		fprintf(stderr, "ringtrace: %s\n", rt_escaped(message));
		return RT_EXIT_USAGE;
	}
	const char *input = clobbered_input(set, o->out);
	if (input) {
		fprintf(stderr, "ringtrace cut: %s: writing it would destroy the input %s\n",
			rt_escaped(o->out), rt_escaped(input));
		rt_trace_set_close(set);
		return RT_EXIT_USAGE;
	}
	struct rt_cut_out *out;
	int opened = rt_cut_out_open(&out, o->out, message, sizeof(message));
	if (opened != 0) {
		fprintf(stderr, "ringtrace: %s\n", rt_escaped(message));
		rt_trace_set_close(set);
		return rt_cmd_output_status(opened);
	}
	struct plan plan;
	int rc = make_plan(&plan, set, o);
	int read_failed = rc != 0;
	if (!rc)
		rc = write_metadata(out, &plan, set);
	if (!rc)
		rc = write_items(out, &plan, set, o);
	read_failed = read_failed || (rc && !*rt_cut_out_error(out));
	int status = RT_EXIT_OK;
	if (rc) {
		const char *what = o->input_count == 1 ? o->inputs[0] : "the inputs";
		if (read_failed)
			fprintf(stderr, "ringtrace: %s: %s\n", rt_escaped(what), strerror(-rc));
		else
			fprintf(stderr, "ringtrace: %s\n", rt_escaped(rt_cut_out_error(out)));
		status = RT_EXIT_FAILURE;
	}
	if (!rc)
		report(o, &plan, out);
	if (rt_cut_out_close(out, rc ? RT_FILE_END_STOPPED : RT_FILE_END_FINISHED, message,
			     sizeof(message)) != 0 &&
	    !rc) {
		fprintf(stderr, "ringtrace: %s\n", rt_escaped(message));
		status = RT_EXIT_FAILURE;
	}
	if (status == RT_EXIT_OK && plan.damaged) {
		size_t regions = rt_trace_set_damage_regions(set);
		fprintf(stderr,
			"ringtrace: %s: damaged: %zu damaged region%s; the cut holds what could "
			"be read, its losses included\n",
			rt_escaped(o->input_count == 1 ? o->inputs[0] : "the inputs"), regions,
			regions == 1 ? "" : "s");
		status = RT_EXIT_DAMAGED;
	}
	free_plan(&plan);
	rt_trace_set_close(set);
	return status;
}

int rt_cmd_cut(int argc, char **argv)
{
	struct cut_options o;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? RT_EXIT_OK : rc;
	return cut(&o);
}
