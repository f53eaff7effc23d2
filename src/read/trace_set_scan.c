/*
 * trace_set_scan.c - the scan: every block of every trace file read once,
 * what it says kept.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include <stdio.h>

#include "read/trace_set_private.h"

/*
 * Whether block h is in the first file read of a recording that began in
 * an earlier file: the counters its metadata copies give count losses of
 * those earlier files too (the rundown at the head of a file says what the
 * writer had counted until then).
 */
static int earlier_losses(const struct recording *rec, const struct rt_block_header *h)
{
	return rec->first_file_seq > 0 && h->file_seq == rec->first_file_seq;
}

static int keep_threads(struct file_source *fs, const struct rt_block_header *h,
			const unsigned char *payload, int earlier)
{
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_thread t;
		memcpy(&t, payload + (size_t)i * sizeof(t), sizeof(t));
		if (t.index >= MAX_THREADS)
			continue;
		if (grow((void **)&fs->threads, &fs->thread_capacity, (size_t)t.index + 1,
			 sizeof(*fs->threads)))
			return -ENOMEM;
		if (!fs->threads[t.index].present && earlier)
			fs->threads[t.index].earlier_no_ring = t.entry.lost_no_ring;
		fs->threads[t.index].present = 1;
		fs->threads[t.index].entry = t.entry;
	}
	return 0;
}

static int keep_sites(struct file_source *fs, const struct rt_block_header *h,
		      const unsigned char *payload)
{
	size_t at = 0;
	/* rt_block_check made sure every record's size fits the payload */
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_site s;
		memcpy(&s, payload + at, sizeof(s));
		const unsigned char *strings = payload + at + sizeof(s);
		uint32_t strings_size = s.size - (uint32_t)sizeof(s);
		at += s.size;
		if (s.index >= MAX_SITES)
			continue;
		if (grow((void **)&fs->sites, &fs->site_capacity, (size_t)s.index + 1,
			 sizeof(*fs->sites)))
			return -ENOMEM;
		struct site_copy *c = &fs->sites[s.index];
		char *copy = malloc(strings_size + 1);
		if (!copy)
			return -ENOMEM;
		memcpy(copy, strings, strings_size);
		copy[strings_size] = 0;
		free(c->strings);
		c->present = 1;
		c->entry = s.entry;
		c->strings = copy;
		c->strings_size = strings_size;
	}
	return 0;
}

/*
 * FDS: the descriptors open when a file began.  A file's rundown may take
 * several blocks; a later file's rundown replaces an earlier one's.  A
 * record that does not check is left out (its name is then unknown).
 */
static int keep_fds(struct file_source *fs, const struct rt_block_header *h,
		    const unsigned char *payload)
{
	if (fs->has_fds && h->file_seq < fs->fds_file_seq)
		return 0;
	if (!fs->has_fds || h->file_seq > fs->fds_file_seq)
		rt_fd_seeds_clear(&fs->fds);
	fs->has_fds = 1;
	fs->fds_file_seq = h->file_seq;
	size_t at = 0;
	/* rt_block_check made sure every record and its name fit the payload */
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_fd f;
		memcpy(&f, payload + at, sizeof(f));
		const char *name = (const char *)payload + at + sizeof(f);
		at += f.size;
		if (f.fd > INT32_MAX || !rt_fd_seed_fields_ok(RT_FD_OPEN, f.op, f.name_length) ||
		    !rt_fd_seed_name_ok(name, f.name_length)) {
			fs->fds.skipped++;
			continue;
		}
		const struct rt_fd_seed seed = {
		    .fd = (int32_t)f.fd,
		    .state = RT_FD_OPEN,
		    .counter = f.counter,
		    .open_flags = f.open_flags,
		    .op = f.op,
		    .flags = f.flags,
		    .name_length = f.name_length,
		};
		if (rt_fd_seeds_add(&fs->fds, &seed, name))
			return -ENOMEM;
	}
	return 0;
}

/* MODULES: the newest copy of an index counts (its unload time may be new). */
static int keep_modules(struct file_source *fs, const struct rt_block_header *h,
			const unsigned char *payload)
{
	size_t at = 0;
	/* rt_block_check made sure every record's size fits the payload */
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_module m;
		memcpy(&m, payload + at, sizeof(m));
		const char *path = (const char *)payload + at + sizeof(m);
		uint32_t path_room = m.size - (uint32_t)sizeof(m);
		at += m.size;
		if (m.index >= RT_MODULE_CAPACITY_MAX)
			continue;
		if (grow((void **)&fs->modules, &fs->module_capacity, (size_t)m.index + 1,
			 sizeof(*fs->modules)))
			return -ENOMEM;
		struct module_copy *c = &fs->modules[m.index];
		char *copy = NULL;
		if (m.entry.path_offset == 0 && m.entry.path_length < path_room &&
		    rt_module_path_ok(path, m.entry.path_length)) {
			copy = strndup(path, m.entry.path_length);
			if (!copy)
				return -ENOMEM;
		}
		free(c->path);
		c->present = 1;
		c->entry = m.entry;
		c->path = copy;
	}
	return 0;
}

/*
 * RINGS: where each ring's records begin (the first file read says it) or,
 * flagged RT_BLOCK_F_FINAL, where they end (record seqs only rise, so the
 * highest end is the newest).
 */
static int keep_rings(struct file_source *fs, const struct rt_block_header *h,
		      const unsigned char *payload, int final)
{
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_ring r;
		memcpy(&r, payload + (size_t)i * sizeof(r), sizeof(r));
		struct ring_state *rs = rt_set_ring_of(fs, r.index);
		if (!rs) {
			if (r.index >= MAX_RINGS)
				continue;
			return -ENOMEM;
		}
		if (final && (!rs->has_end || r.record > rs->end_record)) {
			rs->has_end = 1;
			rs->end_record = r.record;
			rs->end_counter = h->counter_last;
		} else if (!final && !rs->has_start) {
			rs->has_start = 1;
			rs->start_record = r.record;
		}
	}
	return 0;
}

static int keep_losses(struct file_source *fs, const struct rt_block_header *h,
		       const unsigned char *payload)
{
	for (uint32_t i = 0; i < h->count; i++) {
		struct rt_block_loss l;
		memcpy(&l, payload + (size_t)i * sizeof(l), sizeof(l));
		if (l.count == 0)
			continue;
		if (grow((void **)&fs->losses, &fs->loss_capacity, fs->loss_count + 1,
			 sizeof(*fs->losses)))
			return -ENOMEM;
		fs->losses[fs->loss_count++] = l;
		struct ring_state *rs = rt_set_ring_of(fs, l.ring);
		if (!rs && l.ring < MAX_RINGS)
			return -ENOMEM;
		/*
		 * Overwritten and torn records keep their seqs: those are accounted
		 * for; so are records a cut or recover noted as lost to damage of its
		 * input (a gap the file says it has is no damage of the file).
		 */
		if (rs && (l.reason == RT_LOSS_REASON_OVERWRITTEN ||
			   l.reason == RT_LOSS_REASON_TORN || l.reason == RT_LOSS_REASON_DAMAGED)) {
			if (grow((void **)&rs->covers, &rs->cover_capacity, rs->cover_count + 1,
				 sizeof(*rs->covers)))
				return -ENOMEM;
			rs->covers[rs->cover_count].first = l.first_record;
			rs->covers[rs->cover_count].end = add_sat(l.first_record, l.count);
			rs->cover_count++;
		}
	}
	return 0;
}

static int keep_block(void *context, struct rt_trace_file *f, uint64_t offset,
		      const struct rt_block_header *h, const unsigned char *b)
{
	struct rt_trace_set *set = context;
	struct set_private *p = priv_of(set);
	const unsigned char *payload = b + RT_BLOCK_HEADER_SIZE;
	struct recording *rec = rt_set_find_recording(set, h->file_id, f->path);
	if (!rec)
		return -ENOMEM;
	if (!rec->have_first) {
		rec->have_first = 1;
		rec->first_file_seq = h->file_seq;
	}
	if (h->type == RT_BLOCK_FILE || h->type == RT_BLOCK_END)
		return 0;
	struct file_source *fs = rt_set_find_file_source(rec, h->source);
	if (!fs)
		return h->source >= MAX_SOURCES ? 0 : -ENOMEM;
	if (fs->index == UINT32_MAX) {
		struct rt_reader *rd = rt_set_empty_reader(f->path);
		if (!rd || rt_set_add_source(set, rd, f->path, &fs->index)) {
			free(rd);
			return -ENOMEM;
		}
		struct rt_set_source *s = &set->sources[fs->index];
		s->file_id = h->file_id;
		s->number = h->source;
		s->recording = rec->context;
		s->priv = fs;
		fs->first_file_seq = h->file_seq;
	}
	if (h->type != RT_BLOCK_SOURCE && h->type != RT_BLOCK_RINGS)
		p->last_counter = h->counter_last ? h->counter_last : p->last_counter;
	switch (h->type) {
	case RT_BLOCK_SOURCE: {
		struct rt_block_source s;
		size_t bytes = h->size - RT_BLOCK_HEADER_SIZE;
		memset(&s, 0, sizeof(s));
		memcpy(&s, payload, bytes < sizeof(s) ? bytes : sizeof(s));
		memset(&fs->header, 0, sizeof(fs->header));
		memcpy(&fs->header, s.header, RT_SOURCE_HEADER_BYTES);
		fs->parent_pid = s.parent_pid;
		if (!fs->has_header && earlier_losses(rec, h)) {
			fs->has_earlier = 1;
			fs->earlier_untracked = fs->header.lost_untracked;
			fs->earlier_no_site = fs->header.lost_no_site;
			fs->earlier_replaced = fs->header.lost_replaced;
		}
		fs->has_header = 1;
		return 0;
	}
	case RT_BLOCK_THREADS:
		return keep_threads(fs, h, payload, earlier_losses(rec, h));
	case RT_BLOCK_SITES:
		return keep_sites(fs, h, payload);
	case RT_BLOCK_MODULES:
		return keep_modules(fs, h, payload);
	case RT_BLOCK_FDS:
		return keep_fds(fs, h, payload);
	case RT_BLOCK_RINGS:
		if (h->flags & RT_BLOCK_F_FINAL)
			return keep_rings(fs, h, payload, 1);
		/* where the records begin: only the first file read says it */
		return h->file_seq == rec->first_file_seq ? keep_rings(fs, h, payload, 0) : 0;
	case RT_BLOCK_LOSS:
		return keep_losses(fs, h, payload);
	case RT_BLOCK_SLOTS: {
		if (h->count == 0)
			return 0;
		set->files[p->current_file].slots_records += h->count;
		struct ring_state *rs = rt_set_ring_of(fs, h->ring);
		if (!rs)
			return h->ring >= MAX_RINGS ? 0 : -ENOMEM;
		struct block_ref *last = &rs->last;
		last->offset = last->last_offset = offset;
		last->first_record = h->first_record;
		last->counter_first = h->counter_first;
		last->counter_last = h->counter_last;
		last->file = p->current_file;
		last->count = h->count;
		last->order = ((uint64_t)p->current_file << 40) | (offset >> 3);
		struct block_ref *run = rs->block_count ? &rs->blocks[rs->block_count - 1] : NULL;
		const int follows = run && run->file == last->file &&
				    add_sat(run->first_record, run->count) == last->first_record &&
				    (uint64_t)run->count + last->count <= UINT32_MAX;
		const int merged = follows && p->counting_only && !p->early_off;
		/* a cursor finds the next block of a run by walking forward to it */
		const int walked = follows && p->runs_wanted && rs->run_damage == p->damage_seen &&
				   offset - run->last_offset <= RUN_GAP_MAX;
		if (merged || walked) {
			run->count += last->count;
			run->counter_last = last->counter_last;
			run->last_offset = offset;
			p->index_merged |= merged;
			p->index_runs |= walked;
			return 0;
		}
		rs->run_damage = p->damage_seen;
		if (grow((void **)&rs->blocks, &rs->block_capacity, rs->block_count + 1,
			 sizeof(*rs->blocks)))
			return -ENOMEM;
		rs->blocks[rs->block_count++] = *last;
		return 0;
	}
	default:
		return 0;
	}
}

static int on_block(void *context, struct rt_trace_file *f, uint64_t offset,
		    const struct rt_block_header *h, const unsigned char *b)
{
	struct rt_trace_set *set = context;
	struct set_private *p = priv_of(set);
	if (!p->early_off)
		rt_set_early_before(set, h, b + RT_BLOCK_HEADER_SIZE);
	int rc = keep_block(context, f, offset, h, b);
	if (rc == 0 && !p->early_off)
		rt_set_early_after(set, offset, h, b);
	return rc;
}

/* Only counting during the scan reads a SLOTS block's slots (trace_set_scan_count.c). */
int rt_set_scan_reads_slots(void *context)
{
	const struct scan_state *st = context;
	return !priv_of(st->set)->early_off;
}

/* A set opened to check and count (not only to read) names a block that does not expand damage. */
int rt_set_scan_checks_packed(void *context)
{
	const struct scan_state *st = context;
	return !priv_of(st->set)->read_only;
}

int rt_set_on_damage(void *context, struct rt_trace_file *f, uint64_t offset, uint64_t length,
		     const char *why, int cut)
{
	struct scan_state *st = context;
	priv_of(st->set)->early_off = 1; /* damage: the full count pass decides */
	priv_of(st->set)->damage_seen++;
	if (st->count >= RT_DAMAGE_MAX) {
		/* garbage everywhere: the last region grows */
		struct pending_damage *d = &st->damage[st->count - 1];
		d->length = offset + length - d->offset;
		return 0;
	}
	if (grow((void **)&st->damage, &st->capacity, st->count + 1, sizeof(*st->damage)))
		return -ENOMEM;
	struct pending_damage *d = &st->damage[st->count++];
	d->counter_after = 0;
	d->offset = offset;
	d->length = length;
	d->counter = priv_of(st->set)->last_counter;
	d->cut = cut;
	snprintf(d->what, sizeof(d->what), "%s: %s%s", f->path, why,
		 cut				    ? ": the file ends in it"
		 : strcmp(why, RT_SCAN_REPLAY) == 0 ? ": a copy of blocks read already, skipped"
		 : length == 0 ? ": good blocks left out before this one, or moved elsewhere"
			       : ": skipped to the next good block");
	return 0;
}

int rt_set_on_block_scan(void *context, struct rt_trace_file *f, uint64_t offset,
			 const struct rt_block_header *h, const unsigned char *b)
{
	struct scan_state *st = context;
	if (h->type == RT_BLOCK_SLOTS && h->count) {
		for (; st->awaiting < st->count; st->awaiting++)
			st->damage[st->awaiting].counter_after = h->counter_first;
	}
	return on_block(st->set, f, offset, h, b);
}

/* Give a file's damaged regions to its recording's context, one loss each. */
int rt_set_file_damage(struct rt_trace_set *set, struct scan_state *st, struct rt_set_file *sf)
{
	struct recording *rec = rt_set_find_recording(set, sf->file.file_id, sf->file.path);
	if (!rec)
		return -ENOMEM;
	sf->recording = rec->context;
	struct rt_reader *rd = set->sources[rec->context].reader;
	for (size_t i = 0; i < st->count; i++) {
		const struct pending_damage *d = &st->damage[i];
		long at =
		    rt_damage_add(&rd->damage, d->cut ? RT_DAMAGE_MISSING : RT_DAMAGE_SLOTS,
				  d->cut ? 0 : RT_DAMAGE_UNPARSED, (uint32_t)(sf - set->files),
				  d->offset, d->length, "%s", d->what);
		if (at < 0)
			return -ENOMEM;
		struct rt_damage *dm = &rd->damage.items[at];
		dm->counter = d->counter;
		dm->timed = d->counter != 0;
		dm->counter_after = d->counter_after;
		dm->timed_after = d->counter_after != 0;
		dm->events_counted = !d->cut; /* what a cut-off end held is not known */
		if (grow((void **)&rec->regions, &rec->region_capacity, rec->region_count + 1,
			 sizeof(*rec->regions)) ||
		    grow((void **)&rec->places, &rec->place_capacity, rec->region_count + 1,
			 sizeof(*rec->places)))
			return -ENOMEM;
		rec->places[rec->region_count].file = (uint32_t)(sf - set->files);
		rec->places[rec->region_count].offset = d->offset;
		struct rt_item *it = &rec->regions[rec->region_count++];
		memset(it, 0, sizeof(*it));
		it->kind = RT_ITEM_LOSS;
		it->flags = RT_ITEM_DAMAGE | (dm->timed ? RT_ITEM_TIMED : 0);
		it->counter = d->counter;
		it->thread = RT_ITEM_NO_THREAD;
		it->cpu = RT_CPU_UNKNOWN;
		it->loss.reason = RT_LOSS_DAMAGED;
		it->loss.note = RT_NOTE_REGION;
		it->loss.damage = (uint32_t)at;
	}
	st->count = st->awaiting = 0;
	return 0;
}
