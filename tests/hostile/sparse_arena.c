/*
 * sparse_arena.c - crafted sparse arenas, and a runner that bounds a reader's memory.
 *
 *   sparse_arena make BASE OUT SIZE RING_BYTES [live]
 *
 * Writes OUT: the real arena BASE rewritten to claim rings of RING_BYTES
 * bytes in a file of SIZE bytes (both may end in K, M or G), of which only
 * BASE's data is on disk: its header and tables where they were, and each
 * ring's bytes at the start of the ring that now stands in its place; the
 * rest is one hole.  Every ring that fits is released by a thread that
 * died with head = reserve = 2^40 + 5: a window of a whole ring that lies
 * almost all in the hole.  Ring 1's records counter does not fit its
 * slots (a reader rebuilds it from them); the others' do.  With `live` the
 * header names a writer that runs (pid 1, start time unknown), so a reader
 * takes the path that copies a live ring's window.  The same BASE always
 * gives the same OUT.
 *
 *   sparse_arena tables BASE OUT THREADS SITES STRINGS RINGS [live]
 *
 * Writes OUT: the real arena BASE laid out again, as the library lays an
 * arena out, with tables of THREADS thread entries, SITES site entries,
 * STRINGS bytes of strings, the most module and descriptor entries, and
 * RINGS rings of BASE's size (counts may end in K, M or G), every used
 * counter at its capacity.  Only BASE's data is on disk, at the start of
 * each table, and one entry of each table at its very end past a hole:
 * a thread of the last ring (whose descriptor is ring 0's), and bytes
 * that are no entry (a site, a module, a descriptor) or no string.
 *
 *   sparse_arena run DATA_MB RSS_MB COMMAND [ARGS...]
 *
 * Runs COMMAND with its data limit (RLIMIT_DATA: the heap and every
 * private mapping, not the arena's shared read-only one) at DATA_MB (0:
 * none, for a sanitizer's shadow memory, which alone passes any), and
 * fails if a signal ended it or its peak resident size passed RSS_MB (file
 * pages a reader faults in count there).  Otherwise exits with COMMAND's
 * status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ringtrace/format.h>

#define CRAFTED_HEAD ((1ull << 40) + 5)

static int fail(const char *what)
{
	fprintf(stderr, "sparse_arena: %s: %s\n", what, strerror(errno));
	return 1;
}

static int parse_size(const char *text, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || end == text)
		return -1;
	switch (*end) {
	case 'K':
		v <<= 10;
		end++;
		break;
	case 'M':
		v <<= 20;
		end++;
		break;
	case 'G':
		v <<= 30;
		end++;
		break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

/* Copy the data of in's bytes [from, from + length) to out at to; holes stay holes. */
static int copy_data(int in, int out, uint64_t from, uint64_t length, uint64_t to)
{
	static unsigned char buffer[1 << 16];
	uint64_t at = from, end = from + length;
	while (at < end) {
		off_t data = lseek(in, (off_t)at, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			return 0;
		if (data < 0)
			return -1;
		if ((uint64_t)data >= end)
			return 0;
		off_t hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			return -1;
		uint64_t stop = (uint64_t)hole < end ? (uint64_t)hole : end;
		for (at = (uint64_t)data; at < stop;) {
			size_t n =
			    stop - at < sizeof(buffer) ? (size_t)(stop - at) : sizeof(buffer);
			ssize_t got = pread(in, buffer, n, (off_t)at);
			if (got <= 0)
				return -1;
			if (pwrite(out, buffer, (size_t)got, (off_t)(to + (at - from))) != got)
				return -1;
			at += (uint64_t)got;
		}
	}
	return 0;
}

static int make(const char *base, const char *path, uint64_t size, uint64_t ring_bytes, int live)
{
	int in = open(base, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return fail(base);
	struct rt_arena_header h;
	if (pread(in, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return fail("the base's header");
	if (memcmp(h.magic, RT_ARENA_MAGIC, sizeof(h.magic)) != 0 || h.ring_count < 2) {
		fprintf(stderr, "sparse_arena: %s: not an arena of two rings or more\n", base);
		return 1;
	}
	/* every table lies before the rings, which the new geometry moves */
	const uint64_t tables[] = {h.thread_table_offset, h.site_table_offset,
				   h.string_area_offset,  h.ring_desc_offset,
				   h.module_table_offset, h.fd_table_offset};
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (tables[i] > h.ring_area_offset) {
			fprintf(stderr, "sparse_arena: %s: a table lies past the rings\n", base);
			return 1;
		}
	}
	uint64_t fit = size > h.ring_area_offset ? (size - h.ring_area_offset) / ring_bytes : 0;
	if (fit < 2 || ring_bytes <= h.ring_bytes) {
		fprintf(stderr, "sparse_arena: two rings of %llu bytes do not fit\n",
			(unsigned long long)ring_bytes);
		return 1;
	}
	uint32_t rings = fit < h.ring_count ? (uint32_t)fit : h.ring_count;

	int out = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		return fail(path);
	if (ftruncate(out, (off_t)size) != 0)
		return fail("extending the copy");
	if (copy_data(in, out, 0, h.ring_area_offset, 0) != 0)
		return fail("copying the tables");
	for (uint32_t r = 0; r < rings; r++)
		if (copy_data(in, out, h.ring_area_offset + r * h.ring_bytes, h.ring_bytes,
			      h.ring_area_offset + r * ring_bytes) != 0)
			return fail("copying a ring");

	const uint64_t ring_slots = ring_bytes / RT_SLOT_SIZE;
	for (uint32_t r = 0; r < rings; r++) {
		const uint64_t at = h.ring_desc_offset + (uint64_t)r * sizeof(struct rt_ring_desc);
		struct rt_ring_desc d;
		if (pread(out, &d, sizeof(d), (off_t)at) != (ssize_t)sizeof(d))
			return fail("a ring descriptor");
		/* records fits the record of the slot before head, as the writer's would */
		union rt_slot last;
		uint64_t index = (CRAFTED_HEAD - 1) & (ring_slots - 1);
		if (pread(out, &last, sizeof(last),
			  (off_t)(h.ring_area_offset + r * ring_bytes + index * RT_SLOT_SIZE)) !=
		    (ssize_t)sizeof(last))
			return fail("a slot");
		if (last.head.kind == RT_REC_CONT && last.cont.index <= index &&
		    pread(out, &last, sizeof(last),
			  (off_t)(h.ring_area_offset + r * ring_bytes +
				  (index - last.cont.index) * RT_SLOT_SIZE)) !=
			(ssize_t)sizeof(last))
			return fail("a slot");
		uint64_t records = (CRAFTED_HEAD / 2) & ~(uint64_t)UINT32_MAX;
		if (r != 1)
			records += (uint64_t)last.head.record + 1;
		d.head = d.reserve = CRAFTED_HEAD;
		d.records = records;
		d.dropped = d.noted = d.notes = d.tail = 0;
		d.state = RT_RING_RELEASED;
		if (pwrite(out, &d, sizeof(d), (off_t)at) != (ssize_t)sizeof(d))
			return fail("writing a ring descriptor");
	}
	h.arena_size = size;
	h.ring_bytes = h.ring_bytes_requested = ring_bytes;
	h.ring_count = rings;
	if (h.rings_used > rings)
		h.rings_used = rings;
	if (live) {
		h.pid = 1;
		h.process_start = 0;
		h.state = RT_ARENA_RUNNING;
		h.end_reason = RT_END_UNKNOWN;
		h.end_counter = 0;
	}
	if (pwrite(out, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return fail("writing the header");
	if (close(out) != 0)
		return fail(path);
	close(in);
	return 0;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* pwrite all of it, or -1. */
static int put(int fd, const void *p, size_t n, uint64_t at)
{
	return pwrite(fd, p, n, (off_t)at) == (ssize_t)n ? 0 : -1;
}

static int tables(const char *base, const char *path, const uint64_t counts[4], int live)
{
	int in = open(base, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return fail(base);
	struct rt_arena_header h, n;
	if (pread(in, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		return fail("the base's header");
	if (memcmp(h.magic, RT_ARENA_MAGIC, sizeof(h.magic)) != 0 || h.ring_count < 2 ||
	    counts[0] < h.thread_capacity || counts[1] < h.site_capacity ||
	    counts[2] < h.string_capacity || counts[3] <= h.ring_count || counts[0] > UINT32_MAX ||
	    counts[1] > UINT32_MAX || counts[3] > UINT32_MAX) {
		fprintf(stderr,
			"sparse_arena: %s: not an arena of two rings or more, or "
			"tables smaller than its own\n",
			base);
		return 1;
	}
	n = h;
	n.thread_capacity = n.threads_used = (uint32_t)counts[0];
	n.site_capacity = n.sites_used = (uint32_t)counts[1];
	n.string_capacity = n.strings_used = counts[2];
	n.module_capacity = n.modules_used = RT_MODULE_CAPACITY_MAX;
	n.fd_capacity = RT_FD_CAPACITY_MAX;
	n.ring_count = n.rings_used = (uint32_t)counts[3];
	/* as the library lays an arena out (src/record/arena.c) */
	uint64_t off = RT_ARENA_HEADER_SIZE;
	n.thread_table_offset = off;
	off = align_up(off + (uint64_t)n.thread_capacity * sizeof(struct rt_thread_entry), 64);
	n.site_table_offset = off;
	off = align_up(off + (uint64_t)n.site_capacity * sizeof(struct rt_site_entry), 64);
	n.string_area_offset = off;
	off = align_up(off + n.string_capacity, 64);
	n.module_table_offset = off;
	off = align_up(off + (uint64_t)n.module_capacity * sizeof(struct rt_module_entry), 64);
	n.fd_table_offset = off;
	off = align_up(off + (uint64_t)n.fd_capacity * sizeof(struct rt_fd_entry), 64);
	n.ring_desc_offset = off;
	off = align_up(off + (uint64_t)n.ring_count * sizeof(struct rt_ring_desc), 4096);
	n.ring_area_offset = off;
	n.arena_size = off + (uint64_t)n.ring_count * n.ring_bytes;
	if (live) {
		n.pid = 1;
		n.process_start = 0;
		n.state = RT_ARENA_RUNNING;
		n.end_reason = RT_END_UNKNOWN;
		n.end_counter = 0;
	}

	int out = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		return fail(path);
	if (ftruncate(out, (off_t)n.arena_size) != 0)
		return fail("extending the copy");
	const struct {
		uint64_t from, length, to;
	} parts[] = {
	    {h.thread_table_offset, (uint64_t)h.thread_capacity * sizeof(struct rt_thread_entry),
	     n.thread_table_offset},
	    {h.site_table_offset, (uint64_t)h.site_capacity * sizeof(struct rt_site_entry),
	     n.site_table_offset},
	    {h.string_area_offset, h.string_capacity, n.string_area_offset},
	    {h.module_table_offset, (uint64_t)h.module_capacity * sizeof(struct rt_module_entry),
	     n.module_table_offset},
	    {h.fd_table_offset, (uint64_t)h.fd_capacity * sizeof(struct rt_fd_entry),
	     n.fd_table_offset},
	    {h.ring_desc_offset, (uint64_t)h.ring_count * sizeof(struct rt_ring_desc),
	     n.ring_desc_offset},
	    {h.ring_area_offset, (uint64_t)h.ring_count * h.ring_bytes, n.ring_area_offset},
	};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (parts[i].length &&
		    copy_data(in, out, parts[i].from, parts[i].length, parts[i].to) != 0)
			return fail("copying a table");

	/* one entry at the end of each table, past a hole */
	const uint32_t last_ring = n.ring_count - 1;
	struct rt_thread_entry thread;
	struct rt_ring_desc desc;
	unsigned char junk[sizeof(struct rt_fd_entry)];
	memset(junk, 0xab, sizeof(junk));
	if (pread(in, &thread, sizeof(thread), (off_t)h.thread_table_offset) !=
		(ssize_t)sizeof(thread) ||
	    pread(in, &desc, sizeof(desc), (off_t)h.ring_desc_offset) != (ssize_t)sizeof(desc))
		return fail("the base's first thread and ring");
	thread.ring = last_ring;
	if (put(out, &thread, sizeof(thread),
		n.thread_table_offset +
		    (uint64_t)(n.thread_capacity - 1) * sizeof(struct rt_thread_entry)) ||
	    put(out, junk, sizeof(struct rt_site_entry),
		n.site_table_offset +
		    (uint64_t)(n.site_capacity - 1) * sizeof(struct rt_site_entry)) ||
	    put(out, "x", 1, n.string_area_offset + n.string_capacity - 1) ||
	    put(out, junk, sizeof(struct rt_module_entry),
		n.module_table_offset +
		    (uint64_t)(n.module_capacity - 1) * sizeof(struct rt_module_entry)) ||
	    put(out, junk, sizeof(struct rt_fd_entry),
		n.fd_table_offset + (uint64_t)(n.fd_capacity - 1) * sizeof(struct rt_fd_entry)) ||
	    put(out, &desc, sizeof(desc),
		n.ring_desc_offset + (uint64_t)last_ring * sizeof(struct rt_ring_desc)) ||
	    put(out, &n, sizeof(n), 0))
		return fail("writing the copy");
	if (close(out) != 0)
		return fail(path);
	close(in);
	return 0;
}

static int run(uint64_t data_mb, uint64_t rss_mb, char **argv)
{
	pid_t pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		struct rlimit limit = {data_mb << 20, data_mb << 20};
		if (data_mb && setrlimit(RLIMIT_DATA, &limit) != 0)
			_exit(fail("setrlimit"));
		execvp(argv[0], argv);
		_exit(fail(argv[0]));
	}
	int status;
	struct rusage usage;
	if (wait4(pid, &status, 0, &usage) != pid)
		return fail("wait4");
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "sparse_arena: %s killed by signal %d\n", argv[0],
			WTERMSIG(status));
		return 1;
	}
	if ((uint64_t)usage.ru_maxrss > rss_mb << 10) {
		fprintf(stderr, "sparse_arena: %s peaked at %ld MB resident, above %llu\n", argv[0],
			usage.ru_maxrss >> 10, (unsigned long long)rss_mb);
		return 1;
	}
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	uint64_t a, b;
	if (argc >= 6 && argc <= 7 && strcmp(argv[1], "make") == 0 &&
	    parse_size(argv[4], &a) == 0 && parse_size(argv[5], &b) == 0 &&
	    (argc == 6 || strcmp(argv[6], "live") == 0))
		return make(argv[2], argv[3], a, b, argc == 7);
	uint64_t counts[4];
	if (argc >= 8 && argc <= 9 && strcmp(argv[1], "tables") == 0 &&
	    parse_size(argv[4], &counts[0]) == 0 && parse_size(argv[5], &counts[1]) == 0 &&
	    parse_size(argv[6], &counts[2]) == 0 && parse_size(argv[7], &counts[3]) == 0 &&
	    (argc == 8 || strcmp(argv[8], "live") == 0))
		return tables(argv[2], argv[3], counts, argc == 9);
	if (argc >= 5 && strcmp(argv[1], "run") == 0 && parse_size(argv[2], &a) == 0 &&
	    parse_size(argv[3], &b) == 0)
		return run(a, b, argv + 4);
	fprintf(stderr, "usage: sparse_arena make BASE OUT SIZE RING_BYTES [live]\n"
			"       sparse_arena tables BASE OUT THREADS SITES STRINGS RINGS [live]\n"
			"       sparse_arena run DATA_MB RSS_MB COMMAND [ARGS...]\n");
	return 2;
}
