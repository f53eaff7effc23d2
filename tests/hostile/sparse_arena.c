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
 *   sparse_arena run DATA_MB RSS_MB COMMAND [ARGS...]
 *
 * Runs COMMAND with its data limit (RLIMIT_DATA: the heap and every
 * private mapping, not the arena's shared read-only one) at DATA_MB, and
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

static int run(uint64_t data_mb, uint64_t rss_mb, char **argv)
{
	pid_t pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		struct rlimit limit = {data_mb << 20, data_mb << 20};
		if (setrlimit(RLIMIT_DATA, &limit) != 0)
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
	if (argc >= 5 && strcmp(argv[1], "run") == 0 && parse_size(argv[2], &a) == 0 &&
	    parse_size(argv[3], &b) == 0)
		return run(a, b, argv + 4);
	fprintf(stderr, "usage: sparse_arena make BASE OUT SIZE RING_BYTES [live]\n"
			"       sparse_arena run DATA_MB RSS_MB COMMAND [ARGS...]\n");
	return 2;
}
