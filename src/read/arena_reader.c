/*
 * arena_reader.c - recover events and losses from an arena file: opening
 * and closing a reader, and the losses it counts.
 *
 * How a ring is read (see the ring protocol in ringtrace/format.h):
 *
 *  1. Take head (acquire), then records and reserve.  Slots
 *     [max(reserve - ring_slots, 0), head) hold the newest committed records;
 *     anything older was overwritten (flight) or drained (stream).
 *  2. Walk the window forward.  A slot starts a record only if it carries
 *     the low 32 bits of its own seq, a record kind, a slot count that fits
 *     below head, continuation slots that fit their positions, and (for an
 *     event) a valid site whose argument count matches the slot count.
 *     Anything else is skipped one slot at a time, so damage costs only the
 *     slots it touched.
 *  3. The record's full 64-bit seq comes from the ring's records counter
 *     and the record's low 32 bits.  It must also fit the record's position:
 *     every slot after it up to head belongs to a later record of 1 or 2
 *     slots, which bounds how many records came after it.  Seqs must rise
 *     strictly along the window.
 *  4. If the writer is alive, the window is copied first and reserve read
 *     again: only slots it cannot have overwritten meanwhile are walked
 *     (the others count as overwritten), and the walk reads the copy.
 *  5. Each record goes to the thread-table entry whose [first_record,
 *     end_record) holds its seq: a ring that passed between threads is
 *     split between them.  Records between two recovered ones that are
 *     missing are damaged; missing older ones were overwritten (flight) or
 *     consumed by a collector (stream).
 *  6. A dead writer with reserve != head left the record at [head, reserve)
 *     torn.  A live writer's is simply in progress: not shown, not counted.
 *
 * Damage (docs/FORMAT.md, "Damaged arenas").  The header is repaired before
 * anything is read (read/header_recovery.h); thread entries and site
 * entries are checked one by one, and one that fails is not a thread or
 * site: its records are counted as damaged, never shown.  A dead writer's
 * ring counters are checked against its slots and rebuilt from them when
 * they do not fit (step 1).  The slots of a window that do not decode form
 * runs (step 2); the records missing where a run lies are damaged, and the
 * run is a damaged region with its byte offsets (step 5).  Every region
 * found is in rd->damage, and named by at least one loss.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "read/arena_reader_private.h"

_Static_assert(RT_LOG_MAX_SLOTS <= 255, "a log record's slot count fits nslots");

/* ---- small helpers ------------------------------------------------------ */

static void counts_add(struct rt_counts *to, const struct rt_counts *c)
{
	to->committed = add_saturating(to->committed, c->committed);
	to->present = add_saturating(to->present, c->present);
	to->overwritten = add_saturating(to->overwritten, c->overwritten);
	to->consumed = add_saturating(to->consumed, c->consumed);
	to->dropped = add_saturating(to->dropped, c->dropped);
	to->torn = add_saturating(to->torn, c->torn);
	to->damaged = add_saturating(to->damaged, c->damaged);
	to->damaged_noted = add_saturating(to->damaged_noted, c->damaged_noted);
}

static int fail_errno(struct rt_read_error *error, int err, const char *what)
{
	error->has_offset = 0;
	if (what)
		snprintf(error->message, sizeof(error->message), "%s: %s", what, strerror(err));
	else
		snprintf(error->message, sizeof(error->message), "%s", strerror(err));
	return -err;
}

/*
 * The writer runs if a process with its pid and start time exists and is
 * not a zombie.  A killed process that nobody has reaped yet is still in
 * /proc; so is a process whose main thread exited while others run (its
 * main thread then shows Z), hence every task is looked at.
 */
int rt_process_alive(int32_t pid, uint64_t start)
{
	char path[64];
	struct rt_proc_stat st;
	if (pid <= 0)
		return 0;
	rt_proc_stat_path(path, sizeof(path), pid, 0);
	if (rt_proc_stat_read(path, &st) != 0)
		return 0;
	/* a writer that could not read its own start time recorded 0 */
	if (start != 0 && st.start_time != start)
		return 0;
	if (st.state != 'Z' && st.state != 'X')
		return 1;
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int alive = 0;
	struct dirent *e;
	while (!alive && (e = readdir(d)) != NULL) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);
		if (tid <= 0 || tid > INT32_MAX || *end)
			continue;
		rt_proc_stat_path(path, sizeof(path), pid, (int)tid);
		alive = rt_proc_stat_read(path, &st) == 0 && st.state != 'Z' && st.state != 'X';
	}
	closedir(d);
	return alive;
}

const char *rt_loss_reason_name(uint32_t reason)
{
	switch (reason) {
	case RT_LOSS_OVERWRITTEN:
		return "overwritten";
	case RT_LOSS_DROPPED:
		return "dropped";
	case RT_LOSS_TORN:
		return "torn";
	default:
		return "damaged";
	}
}

const char *rt_loss_note_text(uint32_t note)
{
	switch (note) {
	case RT_NOTE_RING_FULL:
		return "ring full";
	case RT_NOTE_NESTED_SIGNAL:
		return "signal handler traced mid-record";
	case RT_NOTE_NO_RING:
		return "no ring";
	case RT_NOTE_UNTRACKED_THREADS:
		return "no thread-table entry, or tracing still starting";
	case RT_NOTE_SITES_REFUSED:
		return "trace sites refused: site table or string area full, or a site ABI this "
		       "library does not serve";
	case RT_NOTE_WRITER_DIED:
		return "the process died while writing it";
	case RT_NOTE_NO_OWNER:
		return "records no thread claims";
	case RT_NOTE_GAP:
		return "records missing between recovered ones";
	case RT_NOTE_UNKNOWN_LOST:
		return "lost record with an unknown reason";
	case RT_NOTE_UNNOTED:
		return "not yet noted in the ring";
	case RT_NOTE_REGION:
		return "damaged bytes";
	case RT_NOTE_UNPLACED:
		return "records the file's end block counts and no good block of it holds";
	case RT_NOTE_NOTED_DAMAGE:
		return "noted in the file: lost to damage of what it was cut from";
	case RT_NOTE_MISSED:
		return "missed by tail: written over before it read them";
	case RT_NOTE_HOLE:
		return "a hole in the file where records should be: never written, not read; at "
		       "most that many, counted in slots";
	case RT_NOTE_IMAGE_REPLACED:
		return "an earlier image's arena (before an exec) replaced before record read it";
	case RT_NOTE_THREAD_REUSED:
		return "of a thread that ended and whose thread-table entry a later thread took";
	default:
		return NULL;
	}
}

const char *rt_writer_status_name(enum rt_writer_status status)
{
	switch (status) {
	case RT_WRITER_RUNNING:
		return "running";
	case RT_WRITER_CLOSED:
		return "closed";
	case RT_WRITER_REPLACED:
		return "replaced";
	default:
		return "crashed";
	}
}

enum rt_writer_status rt_writer_status_of(const struct rt_arena_header *h, int look_at_process)
{
	if (h->state == RT_ARENA_CLOSED)
		return RT_WRITER_CLOSED;
	/* the pid runs on after an exec, as another image with an arena of its own */
	if (h->end_reason == RT_END_EXEC)
		return RT_WRITER_REPLACED;
	if (look_at_process && rt_process_alive(h->pid, h->process_start))
		return RT_WRITER_RUNNING;
	return RT_WRITER_CRASHED;
}

/* ---- losses ------------------------------------------------------------- */

/* A loss, even of no events (a damaged region that held none, or an unknown number). */
static int push_loss(struct rt_reader *rd, const struct rt_reader_thread *t, uint32_t reason,
		     uint32_t note, uint64_t count, uint64_t counter, uint64_t seq, unsigned flags)
{
	if (rd->loss_count == rd->loss_capacity) {
		size_t capacity = rd->loss_capacity ? rd->loss_capacity * 2 : 64;
		struct rt_item *bigger = realloc(rd->losses, capacity * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		rd->losses = bigger;
		rd->loss_capacity = capacity;
	}
	struct rt_item *it = &rd->losses[rd->loss_count++];
	memset(it, 0, sizeof(*it));
	it->kind = RT_ITEM_LOSS;
	it->flags = (uint8_t)flags;
	it->counter = counter;
	it->seq = seq;
	it->tid = t ? t->tid : 0;
	it->thread = t ? (uint32_t)(t - rd->threads) : RT_ITEM_NO_THREAD;
	it->cpu = RT_CPU_UNKNOWN;
	it->loss.count = count;
	it->loss.reason = reason;
	it->loss.note = note;
	return 0;
}

int rt_arena_add_loss(struct rt_reader *rd, const struct rt_reader_thread *t, uint32_t reason,
		      uint32_t note, uint64_t count, uint64_t counter, uint64_t seq, unsigned flags)
{
	if (count == 0)
		return 0;
	return push_loss(rd, t, reason, note, count, counter, seq, flags);
}

static int compare_items(const void *a, const void *b)
{
	return rt_item_compare(a, b);
}

/* ---- open and close ----------------------------------------------------- */

uint64_t rt_header_counted_lost(const struct rt_arena_header *h)
{
	uint64_t n = add_saturating(h->lost_untracked, h->lost_no_site);
	return add_saturating(add_saturating(n, h->lost_replaced), h->lost_reused);
}

int rt_reader_add_counted_losses(struct rt_reader *rd)
{
	int rc;
	const struct rt_arena_header *h = &rd->header;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		rc = rt_arena_add_loss(rd, t, RT_LOSS_DROPPED, RT_NOTE_NO_RING, t->lost_no_ring,
				       t->start_counter, 0, 0);
		if (rc)
			return rc;
	}
	if ((rc = rt_arena_add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_UNTRACKED_THREADS,
				    h->lost_untracked, 0, 0, 0)) ||
	    (rc = rt_arena_add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_SITES_REFUSED,
				    h->lost_no_site, 0, 0, 0)) ||
	    (rc = rt_arena_add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_IMAGE_REPLACED,
				    h->lost_replaced, 0, 0, 0)) ||
	    (rc = rt_arena_add_loss(rd, NULL, RT_LOSS_DROPPED, RT_NOTE_NO_RING, h->lost_reused, 0,
				    0, 0)))
		return rc;
	return 0;
}

static int account_threads(struct rt_reader *rd)
{
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		struct rt_reader_thread *t = &rd->threads[i];
		t->counts.dropped = add_saturating(t->counts.dropped, t->lost_no_ring);
		rt_arena_find_last_event(rd, t);
		counts_add(&rd->totals, &t->counts);
	}
	rd->totals.dropped =
	    add_saturating(rd->totals.dropped, rt_header_counted_lost(&rd->header));
	int rc = rt_reader_add_counted_losses(rd);
	if (rc)
		return rc;
	if (rd->loss_count)
		qsort(rd->losses, rd->loss_count, sizeof(*rd->losses), compare_items);
	return 0;
}

/*
 * Records no thread entry claims were found: the entries that should have
 * claimed them are damaged.  Those that failed their checks are reported
 * already; an entry never published (state 0) below threads_used is one
 * too then - zeroed, most likely (a thread killed while claiming its entry
 * leaves one as well, but no records).
 */
static int report_unpublished_threads(struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	uint32_t used = rt_layout_thread_count(h);
	if (!rd->orphans)
		return 0;
	for (uint32_t i = 0; i < used; i++) {
		const struct rt_thread_entry *live =
		    (const struct rt_thread_entry *)(rd->file + rt_layout_thread_offset(h, i));
		if (__atomic_load_n(&live->state, __ATOMIC_ACQUIRE) == RT_THREAD_FREE &&
		    rt_arena_thread_entry_damage(
			rd, i,
			"never published (zeroed?), and records no entry claims "
			"exist"))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Every damaged region no loss names yet (header fields, table entries,
 * descriptors, the missing end of a file, slots nobody's records were in)
 * becomes a loss of its own, so that the dump shows each one in its place:
 * at its time when it has one, else first.
 */
static int add_region_losses(struct rt_reader *rd)
{
	size_t regions = rd->damage.count;
	if (regions == 0)
		return 0;
	unsigned char *named = calloc(regions, 1);
	if (!named)
		return -ENOMEM;
	for (size_t i = 0; i < rd->loss_count; i++)
		if (rd->losses[i].flags & RT_ITEM_DAMAGE)
			named[rd->losses[i].loss.damage] = 1;
	int rc = 0;
	for (size_t i = 0; i < regions && rc == 0; i++) {
		if (named[i])
			continue;
		const struct rt_damage *d = &rd->damage.items[i];
		rc = push_loss(rd, NULL, RT_LOSS_DAMAGED, RT_NOTE_REGION, d->events, d->counter, 0,
			       RT_ITEM_DAMAGE | (d->timed ? RT_ITEM_TIMED : 0));
		if (rc == 0)
			rd->losses[rd->loss_count - 1].loss.damage = (uint32_t)i;
	}
	free(named);
	return rc;
}

static const unsigned char empty_file[1];

/*
 * Map the file open at fd read-only: *file and *size; fd is kept open (it
 * says where the file holds data, common/file_data.h) and is the caller's
 * to close, also on failure: -errno with error filled.  An empty file maps
 * to empty_file.
 */
static int map_fd(int fd, const unsigned char **file, uint64_t *size, struct rt_read_error *error)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return fail_errno(error, errno, NULL);
	if (!S_ISREG(st.st_mode)) {
		error->has_offset = 0;
		snprintf(error->message, sizeof(error->message), "not a regular file");
		return -EINVAL;
	}
	*size = (uint64_t)st.st_size;
	if (*size == 0) {
		*file = empty_file;
		return 0;
	}
	void *map = mmap(NULL, (size_t)*size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return fail_errno(error, errno, "cannot map the file");
	/* another process may cut the file short at any time: then zeros, not SIGBUS */
	rt_map_guard_watch(map, (size_t)*size, 0);
	*file = map;
	return 0;
}

static void unmap_file(const unsigned char *file, uint64_t size)
{
	rt_map_guard_forget(file);
	munmap((void *)file, (size_t)size);
}

/* The words of the damaged region, the message of a failed open, and the tool's line. */
#define SHRUNK_TEXT                                                                                \
	"the file shrank while it was read (another process truncated it): bytes from %llu on "    \
	"are damage"

int rt_reader_shrunk(struct rt_reader *rd, uint64_t *offset)
{
	if (!rd->size || !rt_map_guard_shrunk(rd->file, offset))
		return 0;
	if (rd->shrunk_from && rd->shrunk_from - 1 <= *offset)
		return 1;
	if (rd->shrunk_from) {
		struct rt_damage *d = &rd->damage.items[rd->shrunk_region];
		d->offset = *offset;
		d->length = rd->size - *offset;
		snprintf(d->what, sizeof(d->what), SHRUNK_TEXT, (unsigned long long)*offset);
	} else {
		long region =
		    rt_damage_add(&rd->damage, RT_DAMAGE_MISSING, 0, 0, *offset, rd->size - *offset,
				  SHRUNK_TEXT, (unsigned long long)*offset);
		if (region < 0)
			return (int)region;
		rd->shrunk_region = (size_t)region;
	}
	rd->shrunk_from = *offset + 1;
	return 1;
}

/*
 * Read the file open at fd, mapped, as an arena named path (rings: its
 * records too, else only its tables).  The reader owns fd from then on,
 * also when it fails (fd is closed then).
 */
int rt_arena_open_fd(int fd, const char *path, int rings, struct rt_reader **out,
		     struct rt_read_error *error)
{
	const unsigned char *file = NULL;
	uint64_t size = 0;
	memset(error, 0, sizeof(*error));
	*out = NULL;
	int rc = map_fd(fd, &file, &size, error);
	if (rc) {
		close(fd);
		return rc;
	}
	if (!size) {
		close(fd);
		fd = -1;
	}
	rc = rt_arena_open_arena(file, (size_t)size, fd, path, rings, out, error);
	uint64_t shrunk;
	if (rc && size && rt_map_guard_shrunk(file, &shrunk)) {
		/* what did not parse was the zeros of a file cut short under the reader */
		error->has_offset = 1;
		error->offset = shrunk;
		snprintf(error->message, sizeof(error->message), SHRUNK_TEXT,
			 (unsigned long long)shrunk);
		rc = -ENODATA;
	}
	if (rc) {
		if (size)
			unmap_file(file, size);
		if (fd >= 0)
			close(fd);
		return rc;
	}
	(*out)->owns_mapping = 1;
	(*out)->fd = fd;
	return 0;
}

/* Map path and read it as an arena (rings: its records too, else only its tables). */
int rt_arena_open_mapped(const char *path, int rings, struct rt_reader **out,
			 struct rt_read_error *error)
{
	memset(error, 0, sizeof(*error));
	*out = NULL;
	/* O_NONBLOCK: a FIFO without a writer would block the open; refused by map_fd */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return fail_errno(error, errno, NULL);
	return rt_arena_open_fd(fd, path, rings, out, error);
}

int rt_reader_open(const char *path, struct rt_reader **out, struct rt_read_error *error)
{
	return rt_arena_open_mapped(path, 1, out, error);
}

int rt_reader_open_memory(const void *data, size_t size, const char *name, struct rt_reader **out,
			  struct rt_read_error *error)
{
	return rt_arena_open_arena(data, size, -1, name, 1, out, error);
}

/* The reader of rt_reader_open_memory(), or with rings 0 only its tables (a live arena's). */
int rt_arena_open_arena(const void *data, size_t size, int fd, const char *name, int rings,
			struct rt_reader **out, struct rt_read_error *error)
{
	struct rt_layout_error layout;
	struct rt_clock_pair sync;
	int rc;

	memset(error, 0, sizeof(*error));
	*out = NULL;
	/* the tables are read with atomic loads at 8-byte aligned offsets */
	if (size && (uintptr_t)data % 8) {
		snprintf(error->message, sizeof(error->message), "arena buffer not 8-byte aligned");
		return -EINVAL;
	}
	struct rt_reader *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return fail_errno(error, ENOMEM, NULL);
	rd->path = name;
	rd->file = size ? data : empty_file;
	rd->size = size;
	rd->fd = -1;
	rd->data = malloc(sizeof(*rd->data));
	if (!rd->data) {
		free(rd);
		return fail_errno(error, ENOMEM, NULL);
	}
	rt_file_data_init(rd->data, fd);

	memset(&layout, 0, sizeof(layout));
	rc = rt_header_recover(rd->file, rd->size, rd->data, &rd->header, &rd->rings_recorded,
			       &rd->damage, &layout);
	if (rc == -ENOMEM)
		goto fail_memory;
	if (rc) {
		error->has_offset = 1;
		error->offset = layout.offset;
		snprintf(error->message, sizeof(error->message), "%s", layout.message);
		goto fail;
	}
	struct rt_arena_header *h = &rd->header;
	rd->writer = rt_writer_status_of(h, 1);

	struct ring_plan plan = {0};
	if ((rc = rt_arena_load_threads(rd)) != 0)
		goto fail_memory;

	/* the clock's time zero is checked against the threads (read/header_recovery.h) */
	const struct rt_arena_header *live = (const struct rt_arena_header *)rd->file;
	int have_sync = rt_timebase_read_sync(&live->sync, &sync);
	uint64_t earliest = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++)
		if (rd->threads[i].start_counter &&
		    (!earliest || rd->threads[i].start_counter < earliest))
			earliest = rd->threads[i].start_counter;
	if ((rc = rt_header_check_clock(h, have_sync ? &sync : NULL, earliest, &rd->damage,
					&have_sync)) != 0)
		goto fail_memory;
	rc = rt_timebase_init(&rd->timebase, h->clock_source, h->counter_hz, &h->start,
			      have_sync ? &sync : NULL);
	if (rc) {
		/* header recovery makes counter_hz usable; kept for safety */
		error->has_offset = 1;
		error->offset = offsetof(struct rt_arena_header, counter_hz);
		snprintf(error->message, sizeof(error->message), "no usable counter frequency");
		goto fail;
	}

	rd->long_records = rt_arena_raw_long_records(rd);
	rc = rings ? rt_arena_plan_rings(rd, &plan) : 0;
	if (!rc)
		rc = rt_arena_load_sites(rd);
	/* events per site, as the check pass finds them (a trace set counts with them) */
	if (!rc && rings &&
	    !(rd->site_events = calloc((size_t)rd->sites.count + 1, sizeof(*rd->site_events))))
		rc = -ENOMEM;
	if (!rc) {
		rd->long_records |= rt_site_table_has_long(&rd->sites);
		rd->max_slots = rt_site_table_max_slots(&rd->sites);
	}
	if (!rc)
		rc = rt_arena_load_modules(rd);
	if (!rc)
		rc = rt_fd_seeds_read_table(&rd->fds, rd->file, &rd->header, rd->data);
	if (!rc && rings)
		rc = rt_arena_decode_rings(rd, &plan);
	rt_arena_free_plan(&plan);
	if (rc)
		goto fail_memory;
	/* the file cut short while it was read: one region more, and a loss as the others */
	uint64_t shrunk;
	if (rings &&
	    ((rc = report_unpublished_threads(rd)) || (rc = rt_reader_shrunk(rd, &shrunk)) < 0 ||
	     (rc = add_region_losses(rd)) || (rc = account_threads(rd))))
		goto fail_memory;
	*out = rd;
	return 0;

fail_memory:
	fail_errno(error, -rc, NULL);
fail:
	rt_reader_close(rd);
	return rc;
}

void rt_reader_close(struct rt_reader *rd)
{
	if (!rd)
		return;
	for (size_t i = 0; i < rd->walks.source_count; i++)
		free(rd->walks.sources[i].copy);
	free(rd->walks.sources);
	free(rd->walks.threads);
	free(rd->site_events);
	while (rd->payloads) {
		struct rt_reader_payloads *next = rd->payloads->next;
		free(rd->payloads);
		rd->payloads = next;
	}
	free(rd->threads);
	free(rd->losses);
	free(rd->site_region);
	rt_site_table_free(&rd->sites);
	rt_reader_modules_free(&rd->modules);
	rt_fd_seeds_free(&rd->fds);
	rt_damage_free(&rd->damage);
	if (rd->owns_mapping && rd->size)
		unmap_file(rd->file, rd->size);
	if (rd->owns_mapping && rd->fd >= 0)
		close(rd->fd);
	free(rd->data);
	free(rd);
}
