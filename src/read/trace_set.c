/*
 * trace_set.c - arenas and trace files as one time line (read/trace_set.h):
 * opening a set (its inputs grouped by recording, then scanned) and closing it.
 *
 * Opening: inputs are expanded (a directory is its arenas and trace files,
 * by name), arenas go to the arena reader, trace files are sorted by
 * recording and file sequence and scanned once each.  The scan keeps, per
 * recording and source: the newest copy of the source's header, of every
 * thread entry and of every site; the first RINGS entry of every ring (where
 * its records begin in the first file read); the LOSS entries; and, per
 * ring, one index entry per SLOTS block.  Damaged regions go to the
 * recording's context reader.  When it can be sure of the same result, the
 * scan also counts every SLOTS block it passes, so that counting reads no
 * file again (read/trace_set_scan_count.c).
 *
 * Reading: one cursor per ring holds the items of one block at a time.  Its
 * blocks are taken in record order (a stable sort of the index: snapshots
 * may overlap, and the first copy of a record wins); each record is checked
 * as the arena reader checks one, and its full seq must lie in the block's
 * range and rise.  A record seq that is neither read nor covered by a LOSS
 * entry is a gap: a damaged loss.  The k-way merge (read/merge.h) over all
 * cursors (trace-file ring cursors, arena thread cursors that read a window
 * at a time, loss lists) gives the time line.
 */
#include <stdio.h>
#include <sys/stat.h>

#include "read/trace_set_private.h"

/* ---- inputs ------------------------------------------------------------- */

static int keep_path(struct set_private *p, char *path)
{
	if (grow((void **)&p->owned_paths, &p->owned_capacity, p->owned_count + 1,
		 sizeof(*p->owned_paths))) {
		free(path);
		return -ENOMEM;
	}
	p->owned_paths[p->owned_count++] = path;
	return 0;
}

/* The regular files of dir whose magic is an arena's or a trace file's, by name. */
static int expand_directory(struct set_private *p, const char *dir, const char ***list,
			    size_t *count, size_t *capacity, char *message, size_t message_size)
{
	char **found;
	size_t n;
	int rc = rt_input_dir_list(dir, RT_INPUT_DIR_ARENAS | RT_INPUT_DIR_TRACES, &found, &n);
	if (rc) {
		snprintf(message, message_size, "%s: %s", dir, strerror(-rc));
		return rc;
	}
	if (n == 0) {
		free(found);
		snprintf(message, message_size, "%s: no arena or trace file in the directory", dir);
		return -ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		if (rc) {
			free(found[i]);
			continue;
		}
		/* the set owns (and frees) every path keep_path took, and one it could not */
		rc = keep_path(p, found[i]);
		if (!rc)
			rc = grow((void **)list, capacity, *count + 1, sizeof(**list));
		if (!rc)
			(*list)[(*count)++] = found[i];
	}
	free(found);
	if (rc)
		snprintf(message, message_size, "out of memory");
	return rc;
}

/* Which recording and where in it a trace file is, from its first block. */
struct file_order {
	uint64_t file_id;
	uint32_t file_seq;
	size_t input;
	const char *path;
};

static int compare_file_order(const void *a, const void *b)
{
	const struct file_order *x = a, *y = b;
	if (x->file_id != y->file_id)
		return x->file_id < y->file_id ? -1 : 1;
	if (x->file_seq != y->file_seq)
		return x->file_seq < y->file_seq ? -1 : 1;
	return x->input < y->input ? -1 : x->input > y->input;
}

static void peek_order(const char *path, struct file_order *o)
{
	struct rt_trace_file f;
	char message[64];
	unsigned char *buf = malloc(RT_BLOCK_MAX_BYTES);
	o->file_id = 0;
	o->file_seq = 0;
	if (buf && rt_trace_file_open(&f, path, message, sizeof(message)) == 0) {
		struct rt_block_header h;
		/* a file whose head was damaged sorts by the first block it still has */
		if (rt_trace_file_read_block(&f, 0, buf, &h) == RT_BLOCK_OK ||
		    rt_trace_file_find_block(&f, &h) > 0) {
			o->file_id = h.file_id;
			o->file_seq = h.file_seq;
		}
		rt_trace_file_close(&f);
	}
	free(buf);
}

static int open_arena(struct rt_trace_set *set, const char *path, char *message,
		      size_t message_size)
{
	struct rt_reader *rd;
	struct rt_read_error error;
	int rc = rt_reader_open(path, &rd, &error);
	if (rc) {
		if (error.has_offset)
			snprintf(message, message_size, "%s: byte %llu: %s", path,
				 (unsigned long long)error.offset, error.message);
		else
			snprintf(message, message_size, "%s: %s", path, error.message);
		return rc;
	}
	uint32_t index;
	if (rt_set_add_source(set, rd, path, &index)) {
		rt_reader_close(rd);
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	set->sources[index].arena = 1;
	set->sources[index].has_header = 1;
	return 0;
}

static int scan_files(struct rt_trace_set *set, struct file_order *order, size_t count,
		      char *message, size_t message_size)
{
	struct set_private *p = priv_of(set);
	struct scan_state st = {set, NULL, 0, 0, 0};
	struct rt_trace_scan_ops ops = {&st, rt_set_on_block_scan, rt_set_on_damage,
					rt_set_scan_reads_slots, rt_set_scan_checks_packed};
	int rc = 0;
	set->files = calloc(count + 1, sizeof(*set->files));
	if (!set->files)
		return -ENOMEM;
	if (count > 1)
		p->early_off = 1;
	for (size_t i = 0; i < count && rc == 0; i++) {
		struct rt_set_file *sf = &set->files[set->file_count];
		char why[200];
		rc = rt_trace_file_open(&sf->file, order[i].path, why, sizeof(why));
		if (rc) {
			snprintf(message, message_size, "%s: %s", order[i].path, why);
			break;
		}
		set->file_count++;
		p->current_file = (uint32_t)(set->file_count - 1);
		p->last_counter = 0;
		rc = rt_trace_file_scan(&sf->file, &ops, why, sizeof(why));
		if (rc == 0)
			rc = rt_set_file_damage(set, &st, sf);
		if (rc)
			snprintf(message, message_size, "%s: %s", order[i].path,
				 rc == -ENOMEM ? "out of memory" : why);
	}
	free(st.damage);
	return rc;
}

/*
 * Whether a set whose index is in runs can be counted from them: the scan
 * counted every block, and no damage needs the blocks' places in the files.
 */
static int index_runs_enough(const struct rt_trace_set *set)
{
	const struct set_private *p = priv_of(set);
	for (size_t i = 0; i < p->recording_count; i++)
		if (p->recordings[i].region_count)
			return 0;
	return p->early_done;
}

/* How a set is opened: what its caller does with it. */
enum open_mode {
	OPEN_READ,		/* reads the items, and may count them */
	OPEN_READ_INDEXED,	/* the same, every block in the index (no runs) */
	OPEN_COUNT,		/* only counts (rt_trace_set_open_counting) */
	OPEN_READ_ONLY,		/* reads the items, never counts (rt_trace_set_open_reading) */
	OPEN_READ_ONLY_INDEXED, /* the same, every block in the index (no runs) */
};

static int open_set(char *const *paths, size_t count, enum open_mode mode,
		    struct rt_trace_set **out, char *message, size_t message_size)
{
	const int counting_only = mode == OPEN_COUNT;
	*out = NULL;
	message[0] = 0;
	struct rt_trace_set *set = calloc(1, sizeof(*set));
	struct set_private *p = calloc(1, sizeof(*p));
	const char **inputs = NULL;
	size_t input_count = 0, input_capacity = 0;
	struct file_order *order = NULL;
	size_t order_count = 0;
	int rc = 0;
	if (!set || !p) {
		free(set);
		free(p);
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	set->priv = p;
	p->counting_only = counting_only;
	p->input_paths = paths;
	p->input_path_count = count;
	const char *early = getenv("RINGTRACE_COUNT_IN_SCAN");
	/* counting while scanning is for a count that follows: none will */
	const int read_only = mode == OPEN_READ_ONLY || mode == OPEN_READ_ONLY_INDEXED;
	/* opened again with the whole index to count in file order: the scan need not try */
	p->early_off = (early && strcmp(early, "0") == 0) || read_only || mode == OPEN_READ_INDEXED;
	p->read_only = read_only;
	/* RINGTRACE_RUNS=0: every block in the index, for comparing */
	const char *runs = getenv("RINGTRACE_RUNS");
	p->runs_wanted =
	    (mode == OPEN_READ || mode == OPEN_READ_ONLY) && !(runs && strcmp(runs, "0") == 0);
	const char *seek = getenv("RINGTRACE_SEEK");
	p->seek_off = seek && strcmp(seek, "0") == 0;
	for (size_t i = 0; i < count && rc == 0; i++) {
		struct stat st;
		if (stat(paths[i], &st) != 0) {
			rc = -errno;
			snprintf(message, message_size, "%s: %s", paths[i], strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			rc = expand_directory(p, paths[i], &inputs, &input_count, &input_capacity,
					      message, message_size);
		} else if (!S_ISREG(st.st_mode)) {
			/* a FIFO would wait for a writer, a device may never end */
			rc = -EINVAL;
			snprintf(message, message_size, "%s: not a regular file", paths[i]);
		} else if (grow((void **)&inputs, &input_capacity, input_count + 1,
				sizeof(*inputs))) {
			rc = -ENOMEM;
		} else {
			inputs[input_count++] = paths[i];
		}
	}
	if (rc == 0 && !(order = calloc(input_count + 1, sizeof(*order))))
		rc = -ENOMEM;
	for (size_t i = 0; i < input_count && rc == 0; i++) {
		int kind = rt_input_kind_of(inputs[i]);
		if (kind < 0) {
			rc = kind;
			snprintf(message, message_size, "%s: %s", inputs[i],
				 kind == -EINVAL ? "not a regular file" : strerror(-kind));
		} else if (kind == RT_INPUT_ARENA) {
			rc = open_arena(set, inputs[i], message, message_size);
		} else if (kind == RT_INPUT_TRACE &&
			   (rc = rt_trace_file_refused(inputs[i], message, message_size)) != 0) {
			break;
		} else if (kind == RT_INPUT_TRACE) {
			order[order_count].input = i;
			order[order_count].path = inputs[i];
			peek_order(inputs[i], &order[order_count]);
			order_count++;
		} else {
			rc = -EINVAL;
			snprintf(message, message_size,
				 "%s: byte 0: neither an arena nor a trace file (no magic)",
				 inputs[i]);
		}
	}
	if (rc == 0 && order_count) {
		qsort(order, order_count, sizeof(*order), compare_file_order);
		rc = scan_files(set, order, order_count, message, message_size);
	}
	for (size_t i = 0; i < p->recording_count && rc == 0; i++) {
		struct recording *rec = &p->recordings[i];
		for (size_t k = 0; k < rec->source_capacity && rc == 0; k++)
			if (rec->sources[k] && rec->sources[k]->index != UINT32_MAX)
				rc = rt_set_finish_file_source(set, rec->sources[k]);
		if (rc == 0 && rec->region_count)
			rc = rt_set_attribute_gaps(set, rec);
		if (rec->region_count > 1)
			qsort(rec->regions, rec->region_count, sizeof(*rec->regions),
			      rt_set_compare_items);
	}
	if (rc == 0) {
		rt_set_align_timebases(set);
		rt_set_early_finish(set);
		set->processes = rt_set_count_processes(set);
	}
	free(inputs);
	free(order);
	if (rc == -ENOMEM && !message[0])
		snprintf(message, message_size, "out of memory");
	if (rc) {
		rt_trace_set_close(set);
		return rc;
	}
	if (p->index_merged && !index_runs_enough(set)) {
		rt_trace_set_close(set);
		/* it will be counted by reading: every block's place, at once */
		return open_set(paths, count, OPEN_READ_INDEXED, out, message, message_size);
	}
	*out = set;
	return 0;
}

int rt_trace_set_open(char *const *paths, size_t count, struct rt_trace_set **out, char *message,
		      size_t message_size)
{
	return open_set(paths, count, OPEN_READ, out, message, message_size);
}

int rt_trace_set_open_reading(char *const *paths, size_t count, struct rt_trace_set **out,
			      char *message, size_t message_size)
{
	return open_set(paths, count, OPEN_READ_ONLY, out, message, message_size);
}

int rt_trace_set_open_counting(char *const *paths, size_t count, struct rt_trace_set **out,
			       char *message, size_t message_size)
{
	return open_set(paths, count, OPEN_COUNT, out, message, message_size);
}

/*
 * A set whose index is in runs, opened again with its whole index in its
 * place (the same inputs: the same set, read again): a set opened to count
 * whose count must be read after all, or one opened to read that counts in
 * file order, which needs every block's place.
 */
int rt_set_reopen_indexed(struct rt_trace_set *set)
{
	struct set_private *p = priv_of(set);
	struct rt_trace_set *indexed;
	char message[512];
	int rc = open_set(p->input_paths, p->input_path_count,
			  p->read_only ? OPEN_READ_ONLY_INDEXED : OPEN_READ_INDEXED, &indexed,
			  message, sizeof(message));
	if (rc)
		return rc;
	struct rt_trace_set old = *set;
	*set = *indexed;
	*indexed = old;
	/* the same reader reads it: what it drops goes over, and how it counts */
	priv_of(set)->skips = p->skips;
	priv_of(set)->skips_state = p->skips_state;
	priv_of(set)->count_while_reading = p->count_while_reading;
	rt_trace_set_close(indexed);
	return 0;
}

static void free_file_source(struct file_source *fs)
{
	if (!fs)
		return;
	free(fs->threads);
	for (size_t i = 0; i < fs->site_capacity; i++)
		free(fs->sites[i].strings);
	free(fs->sites);
	for (size_t i = 0; i < fs->module_capacity; i++)
		free(fs->modules[i].path);
	free(fs->modules);
	rt_fd_seeds_free(&fs->fds);
	for (size_t i = 0; i < fs->ring_capacity; i++) {
		free(fs->rings[i].blocks);
		free(fs->rings[i].covers);
		free(fs->rings[i].region_gaps);
	}
	free(fs->rings);
	free(fs->losses);
	free(fs->thread_of_entry);
	free(fs->loss_items);
	rt_set_free_early(fs->early);
	free(fs);
}

static void free_cursors(struct set_private *p)
{
	for (size_t i = 0; i < p->cursor_count; i++) {
		struct ring_cursor *rc = p->cursors[i].ring;
		if (rc) {
			free(rc->owners);
			free(rc->readahead);
			free(rc);
		}
		if (p->cursors[i].arena) {
			rt_arena_cursor_free(p->cursors[i].arena);
			free(p->cursors[i].arena);
		}
	}
	free(p->cursors);
	free(p->merge_sources);
	rt_merge_free(&p->merge);
	memset(p->recent_windows, 0, sizeof(p->recent_windows)); /* they were the cursors' */
	p->cursors = NULL;
	p->merge_sources = NULL;
	p->cursor_count = 0;
}

void rt_trace_set_close(struct rt_trace_set *set)
{
	if (!set)
		return;
	struct set_private *p = priv_of(set);
	free_cursors(p);
	free(p->early_cursor);
	for (size_t i = 0; i < set->source_count; i++) {
		struct rt_set_source *s = &set->sources[i];
		if (s->arena)
			rt_reader_close(s->reader);
		else
			rt_set_free_meta_reader(s->reader);
		free(s->site_counts);
	}
	for (size_t i = 0; i < p->recording_count; i++) {
		struct recording *rec = &p->recordings[i];
		for (size_t k = 0; k < rec->source_capacity; k++)
			free_file_source(rec->sources[k]);
		free(rec->sources);
		free(rec->regions);
		free(rec->places);
		free(rec->unplaced);
	}
	for (size_t i = 0; i < set->file_count; i++)
		rt_trace_file_close(&set->files[i].file);
	for (size_t i = 0; i < p->owned_count; i++)
		free(p->owned_paths[i]);
	free(p->owned_paths);
	free(p->recordings);
	free(set->files);
	free(set->sources);
	free(p);
	free(set);
}

int rt_trace_set_error(const struct rt_trace_set *set)
{
	return priv_of(set)->error;
}

size_t rt_trace_set_damage_regions(const struct rt_trace_set *set)
{
	size_t n = 0;
	for (size_t i = 0; i < set->source_count; i++)
		n += set->sources[i].reader->damage.count;
	return n;
}

const struct rt_damage *rt_trace_set_file_region(const struct rt_trace_set *set, size_t file,
						 uint64_t offset)
{
	if (file >= set->file_count)
		return NULL;
	const struct rt_damage_list *list =
	    &set->sources[set->files[file].recording].reader->damage;
	/* in the order the files were scanned, then by offset */
	size_t lo = 0, hi = list->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct rt_damage *d = &list->items[mid];
		if (d->index < file || (d->index == file && d->offset < offset))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < list->count && list->items[lo].index == file && list->items[lo].offset == offset)
		return &list->items[lo];
	return NULL;
}

int rt_trace_set_damaged(const struct rt_trace_set *set)
{
	if (rt_trace_set_damage_regions(set))
		return 1;
	/* losses a file notes (a cut of a damaged input) are not damage of the file */
	for (size_t i = 0; i < set->source_count; i++) {
		const struct rt_counts *c = &set->sources[i].reader->totals;
		if (c->damaged > c->damaged_noted)
			return 1;
	}
	return 0;
}

/* The wall-clock time of the set's zero, from the first source whose clock says. */
uint64_t rt_trace_set_wall_start(const struct rt_trace_set *set)
{
	for (size_t i = 0; set && i < set->source_count; i++) {
		const struct rt_reader *rd = set->sources[i].reader;
		if (set->sources[i].context || rd->raw_time || !rd->header.start.wall_ns)
			continue;
		int64_t since = rt_timebase_ns(&rd->timebase, rd->header.start.counter);
		if (since < 0 || (uint64_t)since > rd->header.start.wall_ns)
			continue;
		return rd->header.start.wall_ns - (uint64_t)since;
	}
	return 0;
}
