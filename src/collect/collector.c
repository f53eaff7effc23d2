/*
 * collector.c - the collector's public face: attaching arenas as sources,
 * the polling pass, snapshots, and the end of a source and of the output.
 *
 * One pass over a source, in this order (see drain.c for why):
 *   stream: heads (acquire), metadata that changed, records up to the heads,
 *           tails (release);
 *   flight: metadata that changed, then a snapshot if `ringtrace snapshot`
 *           asked for one through the header (snapshot_requests), which is
 *           acknowledged in snapshots_taken once the records are written out.
 * Every new file of the output starts with the rundown of every attached
 * source (metadata.c), through the writer's rundown callback, and holds a
 * copy of their metadata every so many bytes (the writer's copy callback).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collect/source.h"
#include "format/arena_layout.h"
#include "read/arena_reader.h"
#include "read/header_recovery.h"
#include "read/map_guard.h"

/* rt_collector_wait_ns(): how fast the estimate of a ring's fill time may grow */
#define RT_FILL_GROWTH 2
#define RT_FILL_MAX_NS 10000000000ull

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int rundown(void *context, struct rt_trace_writer *w)
{
	struct rt_collector *c = context;
	for (int i = 0; i < c->source_count; i++) {
		if (!c->sources[i]->active)
			continue;
		int rc = rt_metadata_rundown(c, c->sources[i], w);
		if (rc)
			return rc;
	}
	return 0;
}

/* Every so many bytes: the metadata of every source still attached again. */
static int copy(void *context, struct rt_trace_writer *w)
{
	struct rt_collector *c = context;
	for (int i = 0; i < c->source_count; i++) {
		if (!c->sources[i]->active)
			continue;
		int rc = rt_metadata_copy(c->sources[i], w);
		if (rc)
			return rc;
	}
	return 0;
}

/* Before END: the loss counters and where the rings of every source still attached stand. */
static int ending(void *context, struct rt_trace_writer *w)
{
	struct rt_collector *c = context;
	for (int i = 0; i < c->source_count; i++) {
		if (!c->sources[i]->active)
			continue;
		int rc = rt_metadata_file_end(c->sources[i], w);
		if (rc)
			return rc;
	}
	return 0;
}

/* The writer's failure as the caller's message. */
static int output_failed(struct rt_collector *c, int rc, char *message, size_t size)
{
	const char *why = rt_trace_writer_error(c->writer);
	if (message && size)
		snprintf(message, size, "%s", *why ? why : strerror(-rc));
	return rc;
}

void rt_collector_set_full_wait(struct rt_collector *c, uint32_t us)
{
	c->full_wait_us = us;
}

int rt_collector_open(struct rt_collector **out, const struct rt_trace_writer_options *options,
		      char *message, size_t message_size)
{
	*out = NULL;
	struct rt_collector *c = calloc(1, sizeof(*c));
	if (!c) {
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	int rc = rt_trace_writer_open(&c->writer, options, rundown, c, message, message_size);
	if (rc) {
		free(c);
		return rc;
	}
	rt_trace_writer_set_ending(c->writer, ending, c);
	/* RINGTRACE_METADATA_COPY_BYTES: copies this many bytes apart, for tests */
	const char *every = getenv("RINGTRACE_METADATA_COPY_BYTES");
	rt_trace_writer_set_copies(c->writer, copy, c, every ? strtoull(every, NULL, 0) : 0);
	*out = c;
	return 0;
}

/*
 * Zeroed room for n entries of size bytes, indexed by the header's
 * capacities: reserved, not touched (a page becomes memory only once an
 * entry in it is used), so an arena that claims huge tables costs the
 * entries it uses.  NULL when it cannot be had.
 */
#define RESERVED_HEAD 16u
static void *reserve_entries(uint64_t n, size_t size)
{
	uint64_t bytes;
	if (__builtin_mul_overflow(n, (uint64_t)size, &bytes) || bytes > SIZE_MAX - RESERVED_HEAD)
		return NULL;
	bytes += RESERVED_HEAD;
	unsigned char *p = mmap(NULL, (size_t)bytes, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, &bytes, sizeof(bytes));
	return p + RESERVED_HEAD;
}

static void release_entries(void *entries)
{
	if (!entries)
		return;
	unsigned char *p = (unsigned char *)entries - RESERVED_HEAD;
	uint64_t bytes;
	memcpy(&bytes, p, sizeof(bytes));
	munmap(p, (size_t)bytes);
}

static void source_free(struct rt_source *s)
{
	if (!s)
		return;
	if (s->map) {
		rt_map_guard_forget(s->map);
		munmap(s->map, (size_t)s->size);
	}
	if (s->data.fd >= 0)
		close(s->data.fd);
	free(s->path);
	release_entries(s->rings);
	free(s->copy);
	release_entries(s->threads);
	release_entries(s->thread_written);
	release_entries(s->thread_number);
	release_entries(s->site_written);
	free(s->module_unload);
	free(s);
}

/* Stop watching s: unmap it, and give its collector_pid back if it is still ours. */
static void detach(struct rt_source *s)
{
	if (!s->active)
		return;
	int32_t ours = getpid();
	struct rt_arena_header *live = rt_source_live(s);
	/* writers stop waiting for a collector that no longer drains */
	if (__atomic_load_n(&live->collector_pid, __ATOMIC_ACQUIRE) == ours)
		__atomic_store_n(&live->full_wait_us, 0, __ATOMIC_RELEASE);
	__atomic_compare_exchange_n(&live->collector_pid, &ours, 0, 0, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
	rt_map_guard_forget(s->map);
	munmap(s->map, (size_t)s->size);
	s->map = NULL;
	if (s->data.fd >= 0)
		close(s->data.fd);
	rt_file_data_init(&s->data, -1);
	s->active = 0;
}

/*
 * Map the arena at path read-write and check its header: 0, or -errno with
 * message.  With want, only the file it identifies: another there is -EAGAIN.
 */
static int map_arena(struct rt_source *s, const char *path, const struct stat *want, char *message,
		     size_t size)
{
	int fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		int err = errno;
		snprintf(message, size, "%s: cannot open the arena: %s", path, strerror(err));
		/* the file wanted was there a moment ago: moved meanwhile, not refused */
		return want && err == ENOENT ? -EAGAIN : -err;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		snprintf(message, size, "%s: %s", path, strerror(err));
		return -err;
	}
	if (want && (st.st_dev != want->st_dev || st.st_ino != want->st_ino)) {
		close(fd);
		snprintf(message, size, "%s: replaced by another file", path);
		return -EAGAIN;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < RT_ARENA_HEADER_SIZE) {
		close(fd);
		snprintf(message, size, "%s: not an arena: %s", path,
			 S_ISREG(st.st_mode) ? "shorter than an arena header"
					     : "not a regular file");
		return -EINVAL;
	}
	s->size = (uint64_t)st.st_size;
	void *map = mmap(NULL, (size_t)s->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int err = errno;
	if (map == MAP_FAILED)
		close(fd);
	else
		rt_file_data_init(&s->data, fd); /* closed with the mapping */
	if (map == MAP_FAILED) {
		snprintf(message, size, "%s: cannot map the arena: %s", path, strerror(err));
		return -err;
	}
	s->map = map;
	/*
	 * Someone may truncate the file under us: the pages past its end become
	 * private zeros (stores to them reach no file), and the source is
	 * detached at the end of that pass (source_shrunk).
	 */
	rt_map_guard_watch(map, (size_t)s->size, 1);
	struct rt_layout_error error;
	memset(&error, 0, sizeof(error));
	if (rt_header_check_data(&s->data, s->size, &error) != 0) {
		snprintf(message, size, "%s: byte %llu: %s", path, (unsigned long long)error.offset,
			 error.message);
		return -EINVAL;
	}
	const struct rt_arena_header *live = map;
	if (memcmp(live->magic, RT_ARENA_MAGIC, sizeof(live->magic)) == 0 &&
	    __atomic_load_n(&live->state, __ATOMIC_ACQUIRE) == RT_ARENA_CREATING) {
		snprintf(message, size, "%s: the arena is still being created", path);
		return -EAGAIN;
	}
	int rc = rt_layout_check(map, s->size, &s->header, &error);
	if (rc) {
		snprintf(message, size, "%s: byte %llu: %s", path, (unsigned long long)error.offset,
			 error.message);
		return rc;
	}
	return 0;
}

static int attach(struct rt_collector *c, const char *path, const struct stat *want,
		  int32_t parent_pid, char *message, size_t message_size)
{
	struct rt_source *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	rt_file_data_init(&s->data, -1);
	int rc = map_arena(s, path, want, message, message_size);
	if (rc) {
		source_free(s);
		return rc;
	}
	const struct rt_arena_header *h = &s->header;
	s->path = strdup(path);
	s->parent_pid = parent_pid;
	s->ring_slots = rt_layout_ring_slots(h);
	s->ring_count = h->ring_count;
	s->rings = reserve_entries(h->ring_count + 1ull, sizeof(*s->rings));
	s->threads = reserve_entries(h->thread_capacity + 1ull, sizeof(*s->threads));
	s->thread_written = reserve_entries(h->thread_capacity + 1ull, 1);
	s->thread_number = reserve_entries(h->thread_capacity + 1ull, sizeof(*s->thread_number));
	s->next_thread_number = h->thread_capacity;
	s->site_written = reserve_entries(h->site_capacity + 1ull, 1);
	s->module_unload = malloc(((size_t)h->module_capacity + 1) * sizeof(*s->module_unload));
	if (s->module_unload)
		memset(s->module_unload, 0xff,
		       ((size_t)h->module_capacity + 1) * sizeof(*s->module_unload));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	struct rt_source **more = realloc(c->sources, (c->source_count + 1) * sizeof(*more));
	if (more)
		c->sources = more;
	if (!s->path || !s->rings || !s->threads || !s->thread_written || !s->thread_number ||
	    !s->site_written || !s->module_unload || !more) {
		source_free(s);
		snprintf(message, message_size, "%s: out of memory", path);
		return -ENOMEM;
	}
	s->site_written[0] = 2; /* site 0 is never a site */
	struct rt_arena_header *live = rt_source_live(s);
	s->snapshots_served = __atomic_load_n(&live->snapshots_taken, __ATOMIC_ACQUIRE);
	__atomic_store_n(&live->collector_pid, (int32_t)getpid(), __ATOMIC_RELEASE);
	rt_drain_init_rings(s);
	if (s->header.mode == RT_MODE_STREAM)
		__atomic_store_n(&live->full_wait_us, c->full_wait_us, __ATOMIC_RELEASE);
	s->index = c->source_count;
	s->active = 1;
	c->sources[c->source_count++] = s;
	rc = rt_metadata_rundown(c, s, c->writer);
	if (!rc)
		rc = rt_trace_writer_flush(c->writer);
	if (rc)
		return output_failed(c, rc, message, message_size);
	return s->index;
}

int rt_collector_attach(struct rt_collector *c, const char *path, int32_t parent_pid, char *message,
			size_t message_size)
{
	return attach(c, path, NULL, parent_pid, message, message_size);
}

int rt_collector_attach_file(struct rt_collector *c, const char *path, dev_t dev, ino_t ino,
			     int32_t parent_pid, char *message, size_t message_size)
{
	struct stat want;
	memset(&want, 0, sizeof(want));
	want.st_dev = dev;
	want.st_ino = ino;
	return attach(c, path, &want, parent_pid, message, message_size);
}

int rt_collector_source_replaced(const struct rt_collector *c, int source)
{
	if (source < 0 || source >= c->source_count || !c->sources[source]->active)
		return 0;
	const struct rt_arena_header *live = rt_source_live(c->sources[source]);
	return __atomic_load_n(&live->end_reason, __ATOMIC_ACQUIRE) == RT_END_EXEC;
}

int rt_collector_has_path(const struct rt_collector *c, const char *path)
{
	struct stat want;
	int have = stat(path, &want) == 0;
	for (int i = 0; i < c->source_count; i++) {
		const struct rt_source *s = c->sources[i];
		struct stat st;
		if (strcmp(s->path, path) == 0)
			return 1;
		if (have && stat(s->path, &st) == 0 && st.st_dev == want.st_dev &&
		    st.st_ino == want.st_ino)
			return 1;
	}
	return 0;
}

/* Whether s's file shrank under its mapping: noted in s (read/map_guard.h). */
static int source_shrunk(struct rt_source *s)
{
	uint64_t offset;
	if (!s->map || !rt_map_guard_shrunk(s->map, &offset))
		return s->shrunk_from != 0;
	s->shrunk_from = offset + 1;
	return 1;
}

int rt_collector_source_shrunk(const struct rt_collector *c, int source, uint64_t *offset)
{
	if (source < 0 || source >= c->source_count)
		return 0;
	struct rt_source *s = c->sources[source];
	if (!source_shrunk(s))
		return 0;
	*offset = s->shrunk_from - 1;
	return 1;
}

/* One source's pass; records written or -errno. */
static int64_t poll_source(struct rt_collector *c, struct rt_source *s)
{
	int64_t n = 0;
	if (s->header.mode == RT_MODE_STREAM) {
		rt_drain_load_heads(s);
		int rc = rt_metadata_update(c, s, 0);
		return rc ? rc : rt_drain_stream(c, s);
	}
	int rc = rt_metadata_update(c, s, 0);
	if (rc)
		return rc;
	struct rt_arena_header *live = rt_source_live(s);
	uint32_t requests = __atomic_load_n(&live->snapshot_requests, __ATOMIC_ACQUIRE);
	if (requests != s->snapshots_served) {
		n = rt_drain_snapshot(c, s);
		if (n >= 0 && (rc = rt_trace_writer_flush(c->writer)) != 0)
			n = rc;
		if (n < 0)
			return n;
		/* the snapshot is in the file: tell `ringtrace snapshot` */
		__atomic_store_n(&live->snapshots_taken, requests, __ATOMIC_RELEASE);
		s->snapshots_served = requests;
	}
	return n;
}

/*
 * After a pass: the time the fullest ring took to fill as far as it did,
 * scaled to a whole ring, is the new estimate if it is shorter; else the
 * estimate grows, but only as fast as time passes (RT_FILL_GROWTH), so
 * that one quiet pass does not let the caller sleep through a burst.
 */
static void pace(struct rt_collector *c, uint64_t now)
{
	uint64_t elapsed = c->pass_ns ? now - c->pass_ns : 0;
	uint64_t fill = c->fill_ns + RT_FILL_GROWTH * elapsed;
	if (c->pass_fill) {
		uint64_t seen = elapsed * 65536 / c->pass_fill;
		if (seen < fill)
			fill = seen;
	}
	c->fill_ns = fill < RT_FILL_MAX_NS ? fill : RT_FILL_MAX_NS;
	c->pass_ns = now;
	c->pass_fill = 0;
}

uint64_t rt_collector_wait_ns(const struct rt_collector *c)
{
	return c->fill_ns / 4;
}

int64_t rt_collector_poll(struct rt_collector *c, char *message, size_t message_size)
{
	int64_t total = 0;
	uint64_t start = monotonic_ns();
	for (int i = 0; i < c->source_count; i++) {
		if (!c->sources[i]->active)
			continue;
		int64_t n = poll_source(c, c->sources[i]);
		if (n < 0)
			return output_failed(c, (int)n, message, message_size);
		total += n;
		/* what followed the cut was zeros: nothing more of it can be believed */
		if (source_shrunk(c->sources[i]))
			detach(c->sources[i]);
	}
	pace(c, start);
	/* a background writer writes it while the next pass drains */
	int rc = rt_trace_writer_submit(c->writer);
	if (rc)
		return output_failed(c, rc, message, message_size);
	return total;
}

int rt_collector_snapshot(struct rt_collector *c, char *message, size_t message_size)
{
	for (int i = 0; i < c->source_count; i++) {
		struct rt_source *s = c->sources[i];
		if (!s->active)
			continue;
		int64_t n;
		if (s->header.mode == RT_MODE_STREAM) {
			n = poll_source(c, s);
		} else {
			int rc = rt_metadata_update(c, s, 0);
			n = rc ? rc : rt_drain_snapshot(c, s);
		}
		if (n < 0)
			return output_failed(c, (int)n, message, message_size);
		if (source_shrunk(s))
			detach(s);
	}
	int rc = rt_trace_writer_flush(c->writer);
	return rc ? output_failed(c, rc, message, message_size) : 0;
}

/* The last pass over source, its final losses and header; then stop watching it. */
static int end_source(struct rt_collector *c, int source, int gone, char *message,
		      size_t message_size)
{
	if (source < 0 || source >= c->source_count || !c->sources[source]->active) {
		if (message && message_size)
			snprintf(message, message_size, "no source %d is attached", source);
		return -ENOENT;
	}
	struct rt_source *s = c->sources[source];
	int64_t n;
	int rc;
	if (s->header.mode == RT_MODE_STREAM) {
		rt_drain_load_heads(s);
		rc = rt_metadata_update(c, s, 0);
		n = rc ? rc : rt_drain_stream(c, s);
	} else {
		rc = rt_metadata_update(c, s, 0);
		n = rc ? rc : rt_drain_snapshot(c, s);
	}
	if (n >= 0) {
		rc = rt_drain_final_losses(c, s, gone);
		if (!rc)
			rc = rt_metadata_update(c, s, 1);
		/* events no ring holds, as the file's final metadata counts them */
		if (!rc)
			c->stats.dropped += rt_metadata_lost(s);
		/* its rings are done: where they end, before the file does */
		if (!rc)
			rc = rt_metadata_final(s, c->writer);
		if (!rc)
			rc = rt_trace_writer_flush(c->writer);
	} else {
		rc = (int)n;
	}
	if (rc)
		rt_drain_count_unwritten(c, s);
	source_shrunk(s); /* told by rt_collector_source_shrunk() */
	detach(s);
	return rc ? output_failed(c, rc, message, message_size) : 0;
}

int rt_collector_finish_source(struct rt_collector *c, int source, char *message,
			       size_t message_size)
{
	return end_source(c, source, 1, message, message_size);
}

int rt_collector_detach_source(struct rt_collector *c, int source, char *message,
			       size_t message_size)
{
	return end_source(c, source, 0, message, message_size);
}

int rt_collector_set_parent(struct rt_collector *c, int source, int32_t parent_pid, char *message,
			    size_t message_size)
{
	if (source < 0 || source >= c->source_count) {
		if (message && message_size)
			snprintf(message, message_size, "no source %d", source);
		return -ENOENT;
	}
	struct rt_source *s = c->sources[source];
	if (s->parent_pid == parent_pid)
		return 0;
	s->parent_pid = parent_pid;
	if (!s->active)
		return 0;
	int rc = rt_metadata_write_source(s, c->writer);
	if (!rc)
		rc = rt_trace_writer_flush(c->writer);
	return rc ? output_failed(c, rc, message, message_size) : 0;
}

int rt_collector_close(struct rt_collector *c, struct rt_collector_stats *stats, char *message,
		       size_t message_size)
{
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!c)
		return 0;
	int rc = 0;
	char why[512] = "";
	for (int i = 0; i < c->source_count; i++) {
		struct rt_source *s = c->sources[i];
		if (!s->active)
			continue;
		/* only a process known to be gone (or its image replaced) can have torn a record */
		int gone = !rt_process_alive(s->header.pid, s->header.process_start) ||
			   rt_collector_source_replaced(c, i);
		int r = end_source(c, i, gone, rc ? NULL : why, rc ? 0 : sizeof(why));
		if (r && !rc)
			rc = r;
	}
	int r = rt_trace_writer_end(c->writer, RT_FILE_END_FINISHED);
	if (r && !rc) {
		rc = r;
		snprintf(why, sizeof(why), "%s", rt_trace_writer_error(c->writer));
	}
	if (message && message_size)
		snprintf(message, message_size, "%s", rc ? why : "");
	if (stats)
		rt_collector_stats(c, stats);
	rt_trace_writer_close(c->writer, RT_FILE_END_FINISHED);
	for (int i = 0; i < c->source_count; i++)
		source_free(c->sources[i]);
	free(c->sources);
	free(c);
	return rc;
}

void rt_collector_stats(const struct rt_collector *c, struct rt_collector_stats *stats)
{
	*stats = c->stats;
	/* c->stats.records counts what left the rings; the writer knows what reached the file */
	stats->records = rt_trace_writer_records(c->writer);
	stats->unwritten =
	    c->stats.records > stats->records ? c->stats.records - stats->records : 0;
	stats->bytes = rt_trace_writer_bytes(c->writer);
	stats->files = rt_trace_writer_files(c->writer);
}
