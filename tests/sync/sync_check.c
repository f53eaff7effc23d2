/*
 * sync_check.c - compares what `ringtrace dump --json` finds in the arena
 * as the page cache holds it (LIVE) with what it finds in the copy of the
 * arena recovered from the disk (DISK), for the RINGTRACE_SYNC tests.
 *
 *   sync_check header ARENA
 *       prints the header's state, sync_ms, synced_counter and counter_hz
 *   sync_check compare LIVE.json DISK.json DISK_ARENA EXPECT [MAX_LOSS_MS]
 *       reads the "sync test" events of sync_victim (args t, i, 0, 0, c)
 *       from both dumps.  Always: every event on disk is one of the live
 *       ones, arguments and all, and none is there twice.  Then EXPECT:
 *         all         every live event is on disk, and the disk's
 *                     synced_counter is newer than all of them
 *         synced      every live event recorded before the disk's
 *                     synced_counter is on disk (DISK_ARENA's header)
 *         none        no event is on disk (the control without
 *                     RINGTRACE_SYNC; DISK.json may be empty, DISK_ARENA
 *                     is not read)
 *       and with MAX_LOSS_MS, the newest event on disk is at most that much
 *       older than the newest live one.
 * Prints one summary line; exit status 0 when everything held.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ringtrace/format.h"

#include "../lib/check.h"
#include "../stress/dump_json.h"

#define MAX_THREADS 8

/* counter of event i of thread t, 0 when absent (a raw counter is never 0) */
struct events {
	uint64_t *counter[MAX_THREADS];
	uint32_t size[MAX_THREADS];
	uint64_t total, duplicates;
	uint64_t newest;
};

static void add(struct events *ev, uint32_t t, uint32_t i, uint64_t c)
{
	if (i >= ev->size[t]) {
		uint32_t size = ev->size[t] ? ev->size[t] : 1024;
		while (size <= i)
			size *= 2;
		ev->counter[t] = realloc(ev->counter[t], size * sizeof(uint64_t));
		memset(ev->counter[t] + ev->size[t], 0, (size - ev->size[t]) * sizeof(uint64_t));
		ev->size[t] = size;
	}
	if (ev->counter[t][i])
		ev->duplicates++;
	ev->counter[t][i] = c;
	ev->total++;
	if (c > ev->newest)
		ev->newest = c;
}

static uint64_t get(const struct events *ev, uint32_t t, uint32_t i)
{
	return i < ev->size[t] ? ev->counter[t][i] : 0;
}

static int load(const char *path, struct events *ev)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "sync_check: cannot open %s\n", path);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0;
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[len - 1] = 0;
		struct dump_line d;
		char error[256];
		if (dump_json_parse(line, &d, error, sizeof(error)) != 0) {
			check_fail(path, lineno, "not a dump line: %s", error);
			continue;
		}
		if (strcmp(d.kind, "trace") != 0 || strcmp(d.tag, "sync test") != 0)
			continue;
		if (!CHECK(d.nargs == 5) || !CHECK(d.args[0].bits < MAX_THREADS) ||
		    !CHECK(d.args[1].bits < (1u << 24)) || !CHECK(d.args[4].bits != 0))
			continue;
		add(ev, (uint32_t)d.args[0].bits, (uint32_t)d.args[1].bits, d.args[4].bits);
	}
	free(line);
	fclose(f);
	return 0;
}

static int read_header(const char *path, struct rt_arena_header *h)
{
	int fd = open(path, O_RDONLY);
	ssize_t n = fd >= 0 ? pread(fd, h, sizeof(*h), 0) : -1;
	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(*h) || memcmp(h->magic, RT_ARENA_MAGIC, 8) != 0) {
		fprintf(stderr, "sync_check: %s has no arena header\n", path);
		return -1;
	}
	return 0;
}

static int header(const char *path)
{
	struct rt_arena_header h;
	if (read_header(path, &h) != 0)
		return 1;
	printf("state %u sync_ms %u synced_counter %" PRIu64 " counter_hz %" PRIu64 "\n", h.state,
	       h.sync_ms, h.synced_counter, h.counter_hz);
	return 0;
}

static int compare(const char *live_path, const char *disk_path, const char *arena,
		   const char *expect, const char *max_loss)
{
	struct events live, disk;
	memset(&live, 0, sizeof(live));
	memset(&disk, 0, sizeof(disk));
	if (load(live_path, &live) != 0 || load(disk_path, &disk) != 0)
		return 1;
	struct rt_arena_header h;
	memset(&h, 0, sizeof(h));
	if (strcmp(expect, "none") != 0 && read_header(arena, &h) != 0)
		return 1;
	CHECK(live.total > 0);
	CHECK_EQ(live.duplicates, 0);
	CHECK_EQ(disk.duplicates, 0);

	uint64_t missing = 0, foreign = 0, before_synced = 0, missing_before_synced = 0;
	for (uint32_t t = 0; t < MAX_THREADS; t++) {
		for (uint32_t i = 0; i < disk.size[t]; i++)
			if (disk.counter[t][i] && get(&live, t, i) != disk.counter[t][i])
				foreign++;
		for (uint32_t i = 0; i < live.size[t]; i++) {
			uint64_t c = live.counter[t][i];
			if (!c)
				continue;
			int on_disk = get(&disk, t, i) == c;
			missing += !on_disk;
			if (c < h.synced_counter) {
				before_synced++;
				missing_before_synced += !on_disk;
			}
		}
	}
	CHECK_EQ(foreign, 0);

	double hz = h.counter_hz ? (double)h.counter_hz : 0;
	double loss_ms = -1;
	if (disk.total && hz)
		loss_ms = (double)(live.newest - disk.newest) * 1000.0 / hz;
	double synced_age_ms = -1; /* newest live event vs the disk's synced_counter */
	if (h.synced_counter && hz)
		synced_age_ms = ((double)live.newest - (double)h.synced_counter) * 1000.0 / hz;

	if (strcmp(expect, "all") == 0) {
		CHECK_EQ(missing, 0);
		CHECK(h.synced_counter > live.newest);
	} else if (strcmp(expect, "synced") == 0) {
		CHECK(h.synced_counter != 0);
		CHECK(before_synced > 0);
		CHECK_EQ(missing_before_synced, 0);
	} else if (strcmp(expect, "none") == 0) {
		CHECK_EQ(disk.total, 0);
	} else {
		fprintf(stderr, "sync_check: EXPECT is all, synced or none\n");
		return 2;
	}
	if (max_loss) {
		double limit = atof(max_loss);
		if (!CHECK(loss_ms >= 0 && loss_ms <= limit))
			fprintf(stderr, "sync_check: lost the last %.1f ms, more than %.0f ms\n",
				loss_ms, limit);
	}
	printf("live %" PRIu64 " events, on disk %" PRIu64 " (%" PRIu64 " missing; %" PRIu64
	       " recorded before synced_counter, %" PRIu64 " of them missing); newest on disk "
	       "%.1f ms older than the newest live; synced_counter %.1f ms before it\n",
	       live.total, disk.total, missing, before_synced, missing_before_synced, loss_ms,
	       synced_age_ms);
	for (uint32_t t = 0; t < MAX_THREADS; t++) {
		free(live.counter[t]);
		free(disk.counter[t]);
	}
	return check_failure_count() ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "header") == 0)
		return header(argv[2]);
	if ((argc == 6 || argc == 7) && strcmp(argv[1], "compare") == 0)
		return compare(argv[2], argv[3], argv[4], argv[5], argc == 7 ? argv[6] : NULL);
	fprintf(stderr, "usage: see the top of sync_check.c\n");
	return 2;
}
