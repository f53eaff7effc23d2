/*
 * trace_set_metadata.c - after the scan: a reader per trace-file source, its
 * threads, sites, modules and losses rebuilt from the newest copies the scan
 * kept.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include "read/trace_set_private.h"

/* A site entry as the writer leaves it (decode/sites.h checks the argument types). */
static int site_entry_ok(const struct rt_site_entry *e)
{
	return e->valid == 1 && rt_site_entry_ok(e);
}

/* A string of a site record: inside its strings, NUL-terminated at its length only. */
static const char *site_string(const struct site_copy *c, uint32_t offset, uint32_t length)
{
	uint64_t end = (uint64_t)offset + length;
	if (length > RT_SITE_STRING_MAX || end >= c->strings_size)
		return NULL;
	const char *s = c->strings + offset;
	if (s[length] != 0 || memchr(s, 0, length))
		return NULL;
	return s;
}

int rt_set_build_sites(struct rt_reader *rd, struct file_source *fs)
{
	if (fs->site_capacity == 0)
		return 0;
	rd->sites.sites = calloc(fs->site_capacity, sizeof(*rd->sites.sites));
	if (!rd->sites.sites)
		return -ENOMEM;
	rd->sites.count = (uint32_t)fs->site_capacity;
	for (size_t i = 0; i < fs->site_capacity; i++) {
		const struct site_copy *c = &fs->sites[i];
		struct rt_site *s = &rd->sites.sites[i];
		if (!c->present || !site_entry_ok(&c->entry))
			continue;
		const struct rt_site_entry *e = &c->entry;
		const char *tag = site_string(c, e->tag_offset, e->tag_length);
		const char *file = site_string(c, e->file_offset, e->file_length);
		const char *func = site_string(c, e->func_offset, e->func_length);
		const char *types = e->kind == RT_SITE_LOG
					? site_string(c, e->types_offset, e->types_length)
					: NULL;
		if (!tag || !file || !func || (e->kind == RT_SITE_LOG && !types) ||
		    (types && !rt_log_types_ok((const uint8_t *)types, e->types_length, e->nargs)))
			continue;
		s->types = (const uint8_t *)types;
		s->level = e->kind == RT_SITE_LOG ? e->level : 0;
		s->nargs = e->nargs;
		s->kind = e->kind;
		rt_site_log_shape(s);
		s->tag = tag;
		s->file = file;
		s->func = func;
		s->tag_length = e->tag_length;
		s->file_length = e->file_length;
		s->func_length = e->func_length;
		s->file_base = file;
		for (uint32_t k = 0; k + 1 < e->file_length; k++)
			if (file[k] == '/')
				s->file_base = file + k + 1;
		s->file_base_length = e->file_length - (uint32_t)(s->file_base - file);
		s->line = e->line;
		s->kind = e->kind;
		s->nargs = e->nargs;
		memcpy(s->arg_types, e->arg_types, sizeof(s->arg_types));
		for (unsigned k = 0; k < e->nargs && k < RT_MAX_ARGS; k++)
			if (RT_ARG_CLASS(e->arg_types[k]) == RT_ARG_SIGNED)
				s->signed_args |= (uint8_t)(1u << k);
		s->valid = 1;
		rd->sites.valid_count++;
	}
	rd->long_records = rt_site_table_has_long(&rd->sites);
	return 0;
}

/*
 * The module list from the newest copy of each entry.  A copy that does not
 * check is left out; its block passed its checksum, so it was written so
 * (from an arena damaged while it was being recorded).
 */
static int build_modules(struct rt_reader *rd, struct file_source *fs)
{
	char why[128];
	for (size_t i = 0; i < fs->module_capacity; i++) {
		const struct module_copy *c = &fs->modules[i];
		if (!c->present || !c->path || !rt_module_entry_ok(&c->entry, why, sizeof(why)))
			continue;
		if (rt_reader_modules_add(&rd->modules, (uint32_t)i, &c->entry, c->path))
			return -ENOMEM;
	}
	return 0;
}

/* rd's thread table (empty before) from fs's thread entries; of_entry: NULL or one per entry. */
void rt_set_fill_threads(struct rt_reader *rd, const struct file_source *fs, uint32_t *of_entry)
{
	uint32_t ring_count =
	    fs->has_header && fs->header.ring_count ? fs->header.ring_count : MAX_RINGS;
	char why[96];
	for (size_t i = 0; i < fs->thread_capacity; i++) {
		if (of_entry)
			of_entry[i] = UINT32_MAX;
		const struct rt_thread_entry *e = &fs->threads[i].entry;
		if (!fs->threads[i].present ||
		    (e->state != RT_THREAD_LIVE && e->state != RT_THREAD_EXITED) ||
		    !rt_thread_entry_ok(e, ring_count, why, sizeof(why)))
			continue;
		struct rt_reader_thread *t = &rd->threads[rd->thread_count];
		if (of_entry)
			of_entry[i] = rd->thread_count;
		rd->thread_count++;
		t->entry = (uint32_t)i;
		t->tid = e->tid;
		t->state = e->state;
		t->ring = e->ring < ring_count ? e->ring : RT_NO_RING;
		t->flags = e->flags;
		rt_reader_thread_name(t, e->name);
		t->first_record = e->first_record;
		t->end_record = e->end_record;
		t->start_counter = e->start_counter;
		t->exit_counter = e->exit_counter;
		t->lost_no_ring = e->lost_no_ring > fs->threads[i].earlier_no_ring
				      ? e->lost_no_ring - fs->threads[i].earlier_no_ring
				      : 0;
	}
}

uint64_t rt_set_since(uint64_t now, uint64_t earlier)
{
	return now > earlier ? now - earlier : 0;
}

static int build_threads(struct rt_reader *rd, struct file_source *fs)
{
	fs->thread_of_entry = malloc((fs->thread_capacity + 1) * sizeof(uint32_t));
	rd->threads = calloc(fs->thread_capacity + 1, sizeof(*rd->threads));
	if (!fs->thread_of_entry || !rd->threads)
		return -ENOMEM;
	rt_set_fill_threads(rd, fs, fs->thread_of_entry);
	return 0;
}

int rt_set_compare_items(const void *a, const void *b)
{
	return rt_item_compare(a, b);
}

/*
 * LOSS entries as loss items of the source (drops and losses no slot
 * reports), and the losses the newest header and thread entries count
 * outside the rings (rt_reader_add_counted_losses).
 */
static int build_losses(struct rt_reader *rd, struct file_source *fs)
{
	int rc = rt_reader_add_counted_losses(rd);
	if (rc)
		return rc;
	fs->loss_items = calloc(fs->loss_count + rd->loss_count + 1, sizeof(*fs->loss_items));
	if (!fs->loss_items)
		return -ENOMEM;
	/* the source's items are all in loss_items: its reader keeps none */
	if (rd->loss_count)
		memcpy(fs->loss_items, rd->losses, rd->loss_count * sizeof(*rd->losses));
	fs->loss_item_count = rd->loss_count;
	free(rd->losses);
	rd->losses = NULL;
	rd->loss_count = rd->loss_capacity = 0;
	for (size_t i = 0; i < fs->loss_count; i++) {
		const struct rt_block_loss *l = &fs->losses[i];
		struct rt_item *it = &fs->loss_items[fs->loss_item_count++];
		it->kind = RT_ITEM_LOSS;
		it->counter = l->counter_from;
		it->flags = l->counter_from ? RT_ITEM_TIMED : 0;
		it->seq = l->first_record;
		it->cpu = RT_CPU_UNKNOWN;
		it->thread = RT_ITEM_NO_THREAD;
		if (l->thread < fs->thread_capacity &&
		    fs->thread_of_entry[l->thread] != UINT32_MAX) {
			it->thread = fs->thread_of_entry[l->thread];
			it->tid = rd->threads[it->thread].tid;
		}
		it->loss.count = l->count;
		it->loss.last_counter = l->counter_to;
		switch (l->reason) {
		case RT_LOSS_REASON_OVERWRITTEN:
			it->loss.reason = RT_LOSS_OVERWRITTEN;
			break;
		case RT_LOSS_REASON_DROPPED:
			it->loss.reason = RT_LOSS_DROPPED;
			it->loss.note = RT_NOTE_RING_FULL;
			break;
		case RT_LOSS_REASON_TORN:
			it->loss.reason = RT_LOSS_TORN;
			it->loss.note = RT_NOTE_WRITER_DIED;
			break;
		case RT_LOSS_REASON_DAMAGED:
			it->loss.reason = RT_LOSS_DAMAGED;
			it->loss.note = RT_NOTE_NOTED_DAMAGE;
			break;
		default:
			it->loss.reason = RT_LOSS_DAMAGED;
			it->loss.note = RT_NOTE_UNKNOWN_LOST;
			break;
		}
	}
	if (fs->loss_item_count > 1)
		qsort(fs->loss_items, fs->loss_item_count, sizeof(*fs->loss_items),
		      rt_set_compare_items);
	return 0;
}

int rt_set_finish_file_source(struct rt_trace_set *set, struct file_source *fs)
{
	struct rt_set_source *src = &set->sources[fs->index];
	struct rt_reader *rd = src->reader;
	src->has_header = fs->has_header;
	src->parent_pid = fs->parent_pid;
	if (fs->has_header) {
		rd->header = fs->header;
		/* the files read count only what was lost since the first of them began */
		if (fs->has_earlier) {
			rd->header.lost_untracked =
			    rt_set_since(fs->header.lost_untracked, fs->earlier_untracked);
			rd->header.lost_no_site =
			    rt_set_since(fs->header.lost_no_site, fs->earlier_no_site);
			rd->header.lost_replaced =
			    rt_set_since(fs->header.lost_replaced, fs->earlier_replaced);
		}
		rd->writer = rt_writer_status_of(&fs->header, 0);
		struct rt_clock_pair sync;
		int have_sync = rt_timebase_read_sync(&fs->header.sync, &sync);
		if (rt_timebase_init(&rd->timebase, fs->header.clock_source, fs->header.counter_hz,
				     &fs->header.start, have_sync ? &sync : NULL) != 0) {
			struct rt_clock_pair zero = {fs->header.start.counter, 0, 0};
			rt_timebase_init(&rd->timebase, RT_CLOCK_MONOTONIC, 1000000000ull, &zero,
					 NULL);
		}
	}
	int rc = build_threads(rd, fs);
	if (!rc)
		rc = rt_set_build_sites(rd, fs);
	if (!rc)
		rc = build_modules(rd, fs);
	if (!rc) {
		/* the reader takes the list over */
		rt_fd_seeds_free(&rd->fds);
		rd->fds = fs->fds;
		memset(&fs->fds, 0, sizeof(fs->fds));
	}
	if (!rc)
		rc = build_losses(rd, fs);
	return rc;
}

/*
 * The processes shown, as rt_trace_set_count() counts them: before it, a
 * trace-file source's events are not counted yet, and its threads say.
 */
uint32_t rt_set_count_processes(const struct rt_trace_set *set)
{
	uint32_t n = 0;
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_set_source *s = &set->sources[i];
		if (!s->context && (s->reader->thread_count || s->reader->totals.present))
			n++;
	}
	return n;
}

/*
 * Sources of one host count one clock: every timebase of the same clock
 * source takes the earliest start as its zero, so that times line up.
 */
void rt_set_align_timebases(struct rt_trace_set *set)
{
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		if (s->context || (!s->arena && !s->has_header))
			continue;
		uint32_t clock = s->reader->header.clock_source;
		uint64_t earliest = s->reader->timebase.start_counter;
		for (size_t k = 0; k < set->source_count; k++) {
			const struct rt_set_source *o = &set->sources[k];
			if (!o->context && (o->arena || o->has_header) &&
			    o->reader->header.clock_source == clock &&
			    o->reader->timebase.start_counter < earliest)
				earliest = o->reader->timebase.start_counter;
		}
		s->reader->timebase.start_counter = earliest;
	}
	/*
	 * A context, and a source without a header, speak their recording's first
	 * source's time; with none, no clock metadata survived: counters are raw.
	 */
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		if (s->arena || s->has_header)
			continue;
		s->reader->raw_time = 1;
		for (size_t k = 0; k < set->source_count; k++) {
			const struct rt_set_source *o = &set->sources[k];
			if (!o->arena && !o->context && o->has_header && o->file_id == s->file_id) {
				s->reader->timebase = o->reader->timebase;
				s->reader->raw_time = 0;
				break;
			}
		}
	}
}
