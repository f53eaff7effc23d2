/*
 * check.c - `ringtrace check`: is a trace whole, and if not, where and how
 * badly is it damaged.
 *
 * A clean input costs what `summary` costs: the scan that opens the set
 * checks every block's checksum and rt_trace_set_count() reads the records
 * once (read/trace_set.h).  Only when that finds damage does check look
 * closer, with two more passes:
 *
 *   - each trace file is scanned again (read/trace_file.h) for its damaged
 *     regions with the cause the scan gives, and the SLOTS blocks around
 *     them (their clocks say the time before and after a region, their
 *     record seqs where a ring's sequence picks up again);
 *   - the time line is walked for the records missing from a ring (gaps)
 *     that no damaged region explains: each is a "sequence break" of its
 *     own, placed at the block where its ring picks up again.  The events a
 *     region lost are what the set counted for it before reading
 *     (rt_trace_set_file_region), the figure `dump` prints too.
 *
 * Arenas report their regions as the arena reader found them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/output.h"
#include "read/trace_set.h"

#define CHECK_USAGE "ringtrace check [--json] INPUT..."
/* check's own status for damage (the other reading commands use RT_EXIT_DAMAGED) */
#define CHECK_EXIT_DAMAGED 1

void rt_cmd_check_help(FILE *to)
{
	fprintf(to,
		"usage: " CHECK_USAGE "\n"
		"\n"
		"Read arenas and trace files (or directories of them) whole and print one\n"
		"line per damaged region: the file, its byte range, the cause (bad checksum,\n"
		"bad magic, truncated, unknown version, bad size, bad type, bad contents,\n"
		"absurd count, replay, blocks missing or moved, sequence break; for arenas\n"
		"the part that\n"
		"is damaged), the events lost when known and the time before and after it;\n"
		"then, when any, the events lost while recording (dropped, overwritten, torn:\n"
		"not damage), and a total line.  A trace file\n"
		"without an end block, or whose writing stopped, gets a line too (not damage).\n"
		"\n"
		"Options:\n"
		"  --json   one JSON object per line: each region, then the total (docs/JSON.md)\n"
		"  --help   this text\n"
		"\n"
		"Exit status: 0 when every input is clean; 1 when one is damaged (unlike the\n"
		"other reading commands, which use 3); 2 for bad usage or an input that cannot\n"
		"be read.\n");
}

/* ---- what is found ------------------------------------------------------- */

enum finding_kind { FIND_REGION, FIND_BREAK, FIND_UNFINISHED };

struct finding {
	enum finding_kind kind;
	size_t file; /* order of output: trace files first, then arenas */
	const char *path;
	int has_offset;
	uint64_t offset, length;
	const char *cause;
	const char *what; /* arenas: the reader's words */
	int events_known, estimated;
	uint64_t events;
	int has_before, has_after;
	int64_t before_ns, after_ns;
	/* FIND_BREAK */
	int32_t pid, tid;
	uint32_t ring;
	uint64_t first_record;
	/* FIND_UNFINISHED */
	int stopped;
};

/* A SLOTS block of a trace file, as the second scan saw it. */
struct slots_ref {
	uint64_t file_id;
	uint32_t source, ring;
	uint64_t first_record, count;
	uint64_t offset;
	size_t file;
	int timed;
	int64_t last_ns; /* of its last record */
};

struct check {
	struct rt_trace_set *set;
	struct finding *found;
	size_t count, capacity;
	struct slots_ref *refs;
	size_t ref_count, ref_capacity;
	/* the file being scanned again */
	size_t file;
	size_t first;	/* this file's first finding */
	size_t pending; /* first region of this file still waiting for its time after */
	int has_last;
	int64_t last_ns;
};

static int grow_array(void **items, size_t *capacity, size_t need, size_t size)
{
	if (need <= *capacity)
		return 0;
	size_t n = *capacity ? *capacity * 2 : 16;
	while (n < need)
		n *= 2;
	void *bigger = realloc(*items, n * size);
	if (!bigger)
		return -ENOMEM;
	*items = bigger;
	*capacity = n;
	return 0;
}

static struct finding *add_finding(struct check *c, enum finding_kind kind, size_t file,
				   const char *path)
{
	if (grow_array((void **)&c->found, &c->capacity, c->count + 1, sizeof(*c->found)))
		return NULL;
	struct finding *f = &c->found[c->count++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->file = file;
	f->path = path;
	return f;
}

/* The trace-file source number `number` of recording file_id, or NULL. */
static const struct rt_set_source *source_of(const struct rt_trace_set *set, uint64_t file_id,
					     uint32_t number)
{
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *s = &set->sources[i];
		if (!s->arena && !s->context && s->file_id == file_id && s->number == number)
			return s;
	}
	return NULL;
}

/* A scan's words for what it found (rt_block_verdict_text) as a short cause. */
static const char *cause_of(const char *why)
{
	static const struct {
		enum rt_block_verdict verdict;
		const char *cause;
	} causes[] = {
	    {RT_BLOCK_BAD_CRC, "bad checksum"},	    {RT_BLOCK_NO_MAGIC, "bad magic"},
	    {RT_BLOCK_TRUNCATED, "truncated"},	    {RT_BLOCK_BAD_VERSION, "unknown version"},
	    {RT_BLOCK_BAD_SIZE, "bad size"},	    {RT_BLOCK_BAD_TYPE, "bad type"},
	    {RT_BLOCK_BAD_PAYLOAD, "bad contents"}, {RT_BLOCK_BAD_COUNT, "absurd count"},
	};
	for (size_t i = 0; i < sizeof(causes) / sizeof(causes[0]); i++)
		if (strcmp(why, rt_block_verdict_text(causes[i].verdict)) == 0)
			return causes[i].cause;
	/* good blocks out of their file's order: some left out, or moved */
	if (strcmp(why, RT_SCAN_BREAK) == 0)
		return "blocks missing or moved";
	/* a good block read already, found again */
	if (strcmp(why, RT_SCAN_REPLAY) == 0)
		return "replay";
	return "damaged";
}

/* ---- trace files: the second scan ---------------------------------------- */

static int on_block(void *context, struct rt_trace_file *f, uint64_t offset,
		    const struct rt_block_header *h, const unsigned char *block)
{
	(void)f;
	(void)block;
	struct check *c = context;
	if (h->type != RT_BLOCK_SLOTS || h->count == 0)
		return 0;
	if (grow_array((void **)&c->refs, &c->ref_capacity, c->ref_count + 1, sizeof(*c->refs)))
		return -ENOMEM;
	struct slots_ref *r = &c->refs[c->ref_count++];
	r->file_id = h->file_id;
	r->source = h->source;
	r->ring = h->ring;
	r->first_record = h->first_record;
	r->count = h->count;
	r->offset = offset;
	r->file = c->file;
	r->timed = 0;
	const struct rt_set_source *s = source_of(c->set, h->file_id, h->source);
	if (!s)
		return 0;
	const struct rt_timebase *tb = &s->reader->timebase;
	r->timed = 1;
	r->last_ns = rt_timebase_ns(tb, h->counter_last);
	for (; c->pending < c->count; c->pending++) {
		struct finding *d = &c->found[c->pending];
		d->has_after = 1;
		d->after_ns = rt_timebase_ns(tb, h->counter_first);
	}
	c->has_last = 1;
	c->last_ns = rt_timebase_ns(tb, h->counter_last);
	return 0;
}

static int on_damage(void *context, struct rt_trace_file *f, uint64_t offset, uint64_t length,
		     const char *why, int cut)
{
	struct check *c = context;
	if (c->count - c->first >= RT_DAMAGE_MAX) {
		/* garbage everywhere: the last region grows, as the reader's does */
		struct finding *last = &c->found[c->count - 1];
		last->length = offset + length - last->offset;
		return 0;
	}
	struct finding *d = add_finding(c, FIND_REGION, c->file, f->path);
	if (!d)
		return -ENOMEM;
	d->has_offset = 1;
	d->offset = offset;
	d->length = length;
	d->cause = cause_of(why);
	/* the events it lost: the set counted them before reading (what dump says too) */
	const struct rt_damage *region = rt_trace_set_file_region(c->set, c->file, offset);
	d->events_known = region && region->events_counted;
	d->events = region ? region->events : 0;
	d->has_before = c->has_last;
	d->before_ns = c->last_ns;
	return 0;
}

static int scan_files(struct check *c, char *message, size_t size)
{
	const struct rt_trace_scan_ops ops = {c, on_block, on_damage, NULL, NULL};
	for (size_t i = 0; i < c->set->file_count; i++) {
		c->file = i;
		c->first = c->pending = c->count;
		c->has_last = 0;
		int rc = rt_trace_file_scan(&c->set->files[i].file, &ops, message, size);
		if (rc)
			return rc < 0 ? rc : -EIO;
	}
	return 0;
}

/* ---- gaps ---------------------------------------------------------------- */

/* The first SLOTS block of (file_id, source, ring) holding record seq. */
static long ref_holding(const struct check *c, uint64_t file_id, uint32_t source, uint32_t ring,
			uint64_t seq)
{
	for (size_t i = 0; i < c->ref_count; i++) {
		const struct slots_ref *r = &c->refs[i];
		if (r->file_id == file_id && r->source == source && r->ring == ring &&
		    r->first_record <= seq && seq - r->first_record < r->count)
			return (long)i;
	}
	return -1;
}

static int add_gap(struct check *c, const struct rt_set_source *s, size_t arena_file,
		   const struct rt_item *it)
{
	const struct rt_reader *rd = s->reader;
	uint32_t ring = it->thread < rd->thread_count ? rd->threads[it->thread].ring : RT_NO_RING;
	long at = -1, prev = -1;
	if (!s->arena && ring != RT_NO_RING)
		at = ref_holding(c, s->file_id, s->number, ring, it->seq + it->loss.count);
	if (at >= 0) {
		/* the ring's block before: the time before the break */
		const struct slots_ref *r = &c->refs[at];
		for (long k = at - 1; k >= 0 && c->refs[k].file == r->file; k--)
			if (c->refs[k].source == r->source && c->refs[k].ring == r->ring) {
				prev = k;
				break;
			}
	}
	struct finding *b =
	    add_finding(c, FIND_BREAK, at >= 0 ? c->refs[at].file : arena_file, s->name);
	if (!b)
		return -ENOMEM;
	if (at >= 0) {
		b->path = c->set->files[c->refs[at].file].file.path;
		b->has_offset = 1;
		b->offset = c->refs[at].offset;
	}
	b->cause = "sequence break";
	b->events_known = 1;
	b->events = it->loss.count;
	b->estimated = (it->flags & RT_ITEM_ESTIMATED) != 0;
	b->pid = rd->header.pid;
	b->tid = it->tid;
	b->ring = ring;
	b->first_record = it->seq;
	if (prev >= 0 && c->refs[prev].timed) {
		b->has_before = 1;
		b->before_ns = c->refs[prev].last_ns;
	}
	if (it->flags & RT_ITEM_TIMED) {
		b->has_after = 1;
		b->after_ns = rt_timebase_ns(&rd->timebase, it->counter);
	}
	return 0;
}

/* Walk the time line for the records missing from rings (and arena losses to damage). */
static int find_gaps(struct check *c, const size_t *arena_file)
{
	struct rt_trace_set *set = c->set;
	int rc = rt_trace_set_start(set, 0);
	const struct rt_item *it;
	uint32_t source;
	while (!rc && (it = rt_trace_set_next(set, &source)) != NULL) {
		/* a region's own item, or a thread's share of a region: counted with it */
		if (it->kind != RT_ITEM_LOSS || it->loss.reason != RT_LOSS_DAMAGED ||
		    (it->flags & (RT_ITEM_DAMAGE | RT_ITEM_IN_REGION)) || it->loss.count == 0)
			continue;
		/* a LOSS entry of a trace file notes an earlier loss (recover, cut): not damage
		 * here */
		if (it->loss.note == RT_NOTE_NOTED_DAMAGE)
			continue;
		rc = add_gap(c, &set->sources[source], arena_file[source], it);
	}
	return rc ? rc : rt_trace_set_error(set);
}

/* ---- arenas -------------------------------------------------------------- */

static int arena_regions(struct check *c, size_t file, const struct rt_set_source *s)
{
	const struct rt_reader *rd = s->reader;
	for (size_t i = 0; i < rd->damage.count; i++) {
		const struct rt_damage *dm = &rd->damage.items[i];
		struct finding *d = add_finding(c, FIND_REGION, file, s->name);
		if (!d)
			return -ENOMEM;
		d->has_offset = 1;
		d->offset = dm->offset;
		d->length = dm->length;
		d->cause = rt_damage_part_name(dm->part);
		d->what = dm->what;
		d->events_known = dm->events > 0;
		d->events = dm->events;
		d->estimated = dm->events_estimated;
		if (dm->timed) {
			d->has_before = 1;
			d->before_ns = rt_timebase_ns(&rd->timebase, dm->counter);
		}
	}
	return 0;
}

/* ---- printing ------------------------------------------------------------ */

static int by_place(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	if (x->kind == FIND_UNFINISHED || y->kind == FIND_UNFINISHED)
		return (x->kind == FIND_UNFINISHED) - (y->kind == FIND_UNFINISHED);
	if (x->has_offset != y->has_offset)
		return x->has_offset ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x->kind == y->kind ? 0 : x->kind == FIND_REGION ? -1 : 1;
}

/* Seconds since the trace's start, as dump prints them: "0.005228221". */
static void put_time(struct rt_out *out, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	rt_out_printf(out, "%s%llu.%09llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000000),
		      (unsigned long long)(a % 1000000000));
}

static void print_text(struct rt_out *out, const struct finding *f)
{
	if (f->kind == FIND_UNFINISHED) {
		rt_out_printf(out, "%s: %s\n", rt_escaped(f->path),
			      f->stopped ? "writing stopped (the output failed): later events "
					   "are not in it (not damage)"
					 : "no end block: cut short or still being written "
					   "(not damage)");
		return;
	}
	rt_out_str(out, f->path);
	if (f->has_offset && f->kind == FIND_BREAK)
		rt_out_printf(out, ": byte %llu", (unsigned long long)f->offset);
	else if (f->has_offset) {
		const uint64_t end = f->offset + f->length;
		rt_out_printf(out, ": bytes %llu..%llu (%llu B)", (unsigned long long)f->offset,
			      (unsigned long long)end, (unsigned long long)f->length);
	}
	rt_out_printf(out, ": %s", f->cause);
	if (f->kind == FIND_BREAK)
		rt_out_printf(out, " in ring %u (pid %d tid %d), records from %llu", f->ring,
			      (int)f->pid, (int)f->tid, (unsigned long long)f->first_record);
	if (f->events_known)
		rt_out_printf(out, "; %s%llu event%s lost", f->estimated ? "~" : "",
			      (unsigned long long)f->events, f->events == 1 ? "" : "s");
	else
		rt_out_str(out, "; events lost unknown");
	if (f->has_before || f->has_after) {
		rt_out_str(out, "; time ");
		if (f->has_before)
			put_time(out, f->before_ns);
		else
			rt_out_char(out, '?');
		rt_out_str(out, " .. ");
		if (f->has_after)
			put_time(out, f->after_ns);
		else
			rt_out_char(out, '?');
		if (f->has_before && f->has_after && f->after_ns >= f->before_ns) {
			rt_out_str(out, " (");
			put_time(out, f->after_ns - f->before_ns);
			rt_out_str(out, " s gap)");
		}
	}
	if (f->what) {
		rt_out_str(out, ": ");
		rt_out_str(out, f->what);
	}
	rt_out_char(out, '\n');
}

static void print_json(struct rt_out *out, const struct finding *f)
{
	rt_out_str(out, f->kind == FIND_UNFINISHED ? "{\"kind\":\"unfinished\",\"file\":"
						   : "{\"kind\":\"damaged\",\"file\":");
	rt_out_json_string(out, f->path, strlen(f->path));
	if (f->kind == FIND_UNFINISHED) {
		rt_out_printf(out, ",\"end\":\"%s\"}\n", f->stopped ? "stopped" : "none");
		return;
	}
	if (f->has_offset)
		rt_out_printf(out, ",\"offset\":%llu,\"length\":%llu",
			      (unsigned long long)f->offset, (unsigned long long)f->length);
	else
		rt_out_str(out, ",\"offset\":null,\"length\":null");
	rt_out_printf(out, ",\"cause\":\"%s\"", f->cause);
	if (f->events_known)
		rt_out_printf(out, ",\"count\":%llu%s", (unsigned long long)f->events,
			      f->estimated ? ",\"estimated\":true" : "");
	else
		rt_out_str(out, ",\"count\":null");
	if (f->kind == FIND_BREAK)
		rt_out_printf(out, ",\"pid\":%d,\"tid\":%d,\"ring\":%u,\"first_record\":%llu",
			      (int)f->pid, (int)f->tid, f->ring,
			      (unsigned long long)f->first_record);
	if (f->has_before)
		rt_out_printf(out, ",\"time_before_ns\":%lld", (long long)f->before_ns);
	if (f->has_after)
		rt_out_printf(out, ",\"time_after_ns\":%lld", (long long)f->after_ns);
	if (f->what) {
		rt_out_str(out, ",\"what\":");
		rt_out_json_string(out, f->what,
				   strnlen(f->what, sizeof(((struct rt_damage *)0)->what)));
	}
	rt_out_str(out, "}\n");
}

/* ---- the command --------------------------------------------------------- */

static int check(struct check *c, int json, size_t inputs)
{
	struct rt_trace_set *set = c->set;
	char message[512];
	int rc = rt_trace_set_count(set);
	int damaged = !rc && rt_trace_set_damaged(set);
	size_t *arena_file = calloc(set->source_count + 1, sizeof(*arena_file));
	if (!arena_file)
		rc = -ENOMEM;
	message[0] = 0;
	size_t files = set->file_count;
	for (size_t i = 0; !rc && i < set->source_count; i++)
		if (set->sources[i].arena) {
			arena_file[i] = files++;
			if (damaged)
				rc = arena_regions(c, arena_file[i], &set->sources[i]);
		}
	if (!rc && damaged)
		rc = scan_files(c, message, sizeof(message));
	if (!rc && damaged)
		rc = find_gaps(c, arena_file);
	for (size_t i = 0; !rc && i < set->file_count; i++) {
		const struct rt_trace_file *tf = &set->files[i].file;
		if (tf->has_end && tf->end.reason != RT_FILE_END_STOPPED)
			continue;
		struct finding *u = add_finding(c, FIND_UNFINISHED, i, tf->path);
		if (!u)
			rc = -ENOMEM;
		else
			u->stopped = tf->has_end;
	}
	free(arena_file);
	if (rc) {
		if (message[0])
			fprintf(stderr, "ringtrace: %s\n", rt_escaped(message));
		else
			fprintf(stderr, "ringtrace: %s: %s\n",
				rt_escaped(inputs == 1 ? set->sources[0].name : "the inputs"),
				strerror(-rc));
		return RT_EXIT_USAGE;
	}
	if (c->count > 1)
		qsort(c->found, c->count, sizeof(*c->found), by_place);

	struct rt_out out;
	if (rt_out_open(&out, STDOUT_FILENO) != 0) {
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_USAGE;
	}
	uint64_t regions = 0, bytes = 0;
	for (size_t i = 0; i < c->count; i++) {
		const struct finding *f = &c->found[i];
		if (f->kind != FIND_UNFINISHED) {
			regions++;
			bytes += f->length;
		}
		if (json)
			print_json(&out, f);
		else
			print_text(&out, f);
	}
	/* arena damage with no place of its own still counts */
	if (damaged && regions == 0)
		regions = rt_trace_set_damage_regions(set);
	/* losses a file only notes (a cut of a damaged input) are not its damage */
	const uint64_t noted = set->totals.damaged_noted;
	const uint64_t lost = set->totals.damaged - noted;
	/* events the writer could not keep: not damage, but never left out */
	const struct rt_counts *t = &set->totals;
	const uint64_t unrecorded = t->dropped + t->overwritten + t->torn;
	if (json) {
		rt_out_printf(&out,
			      "{\"kind\":\"total\",\"regions\":%llu,\"bytes\":%llu,\"count\":%llu,"
			      "\"noted\":%llu,\"files\":%zu,\"damaged\":%s,\"dropped\":%llu,"
			      "\"overwritten\":%llu,\"torn\":%llu}\n",
			      (unsigned long long)regions, (unsigned long long)bytes,
			      (unsigned long long)lost, (unsigned long long)noted, files,
			      damaged ? "true" : "false", (unsigned long long)t->dropped,
			      (unsigned long long)t->overwritten, (unsigned long long)t->torn);
	} else {
		if (unrecorded)
			rt_out_printf(
			    &out,
			    "lost while recording, not damage: %llu event%s (%llu dropped, "
			    "%llu overwritten, %llu torn)\n",
			    (unsigned long long)unrecorded, unrecorded == 1 ? "" : "s",
			    (unsigned long long)t->dropped, (unsigned long long)t->overwritten,
			    (unsigned long long)t->torn);
		rt_out_printf(&out,
			      "total: %llu damaged region%s, %llu byte%s, %llu event%s lost, %llu "
			      "noted lost earlier, %zu file%s checked: %s\n",
			      (unsigned long long)regions, regions == 1 ? "" : "s",
			      (unsigned long long)bytes, bytes == 1 ? "" : "s",
			      (unsigned long long)lost, lost == 1 ? "" : "s",
			      (unsigned long long)noted, files, files == 1 ? "" : "s",
			      damaged ? "damaged" : "clean");
	}
	int status = rt_cmd_finish_output(rt_out_close(&out));
	if (status == RT_EXIT_OK && damaged)
		status = CHECK_EXIT_DAMAGED;
	return status;
}

int rt_cmd_check(int argc, char **argv)
{
	int json = 0, positional_only = 0;
	size_t positional = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0)
			argv[positional++] = argv[i];
		else if (strcmp(arg, "--") == 0)
			positional_only = 1;
		else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_check_help(stdout);
			return RT_EXIT_OK;
		} else if (strcmp(arg, "--json") == 0)
			json = 1;
		else
			return rt_cmd_usage_error("check", CHECK_USAGE, "unknown option '%s'", arg);
	}
	if (positional == 0)
		return rt_cmd_usage_error("check", CHECK_USAGE, "which trace?");
	struct check c;
	memset(&c, 0, sizeof(c));
	char message[512];
	if (rt_trace_set_open(argv, positional, &c.set, message, sizeof(message)) != 0) {
		fprintf(stderr, "ringtrace: %s\n", rt_escaped(message));
		return RT_EXIT_USAGE;
	}
	int status = check(&c, json, positional);
	free(c.found);
	free(c.refs);
	rt_trace_set_close(c.set);
	return status;
}
