/*
 * collect.c - how fast the collector drains rings into a trace file, beside
 * the floor of writing the same bytes from memory with write().
 *
 *   bench_collect DIR [RING_BYTES] [ROUNDS]
 *
 * A stream-mode arena with one ring of RING_BYTES (default 16 MiB) is
 * filled by this thread with one-slot events; then one rt_collector_poll()
 * is timed while it drains the whole ring into DIR/collect.rt (a file in the
 * page cache: DIR should be on tmpfs or have room).  That is repeated
 * ROUNDS times (refilling is not timed) and the best round counts.  The
 * floor writes the same number of bytes, 1 MiB per write(), from a buffer
 * into DIR/floor.out, best of as many rounds.  Both on one pinned CPU.
 *
 * Before either, a scratch file as large as everything the rounds will
 * write is written and deleted: on a virtual machine, memory the guest has
 * never touched (or gave back to the host) costs the host a fault per page,
 * and a page cache filling such pages takes write() to a tenth of its speed
 * (measured: 2 GB/s against 0.2 GB/s on the same tmpfs).  Without it the
 * result depended on how much recently freed memory the machine had, not
 * on the collector: 64 MiB rounds (320 MiB of files) measured 0.25 GB/s
 * where 16 MiB rounds measured 1.2 GB/s.
 *
 * Results: "result collect_bytes_per_s", "result write_bytes_per_s" (bytes
 * of records, i.e. slots, per second).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ringtrace.h>

#include "collect/collector.h"
#include "measure.h"

static double best_collect(struct rt_collector *c, uint64_t events, int rounds, uint64_t *bytes)
{
	double best = 0;
	char message[512];
	for (int r = 0; r < rounds; r++) {
		for (uint64_t i = 0; i < events; i++)
			RT_TRACE("bench collect", i);
		uint64_t start = bench_now_ns();
		int64_t n = rt_collector_poll(c, message, sizeof(message));
		uint64_t ns = bench_now_ns() - start;
		if (n < 0) {
			bench_note("collect: %s", message);
			return -1;
		}
		if ((uint64_t)n != events)
			bench_note("collect: round %d drained %lld records of %llu", r,
				   (long long)n, (unsigned long long)events);
		double rate = (double)n * 32 / ((double)ns / 1e9);
		bench_note("collect: round %d: %.0f MB/s", r, rate / 1e6);
		if (rate > best)
			best = rate;
		*bytes = (uint64_t)n * 32;
	}
	return best;
}

/* Write and delete bytes at path: the pages the rounds will use, recently handed out. */
static void warm_page_cache(const char *path, uint64_t bytes)
{
	const size_t chunk = 1u << 20;
	char *buffer = calloc(1, chunk);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	for (uint64_t done = 0; buffer && fd >= 0 && done < bytes; done += chunk)
		if (write(fd, buffer, chunk) != (ssize_t)chunk)
			break;
	if (fd >= 0)
		close(fd);
	unlink(path);
	free(buffer);
}

static double best_write(const char *path, uint64_t bytes, int rounds)
{
	const size_t chunk = 1u << 20;
	char *buffer = malloc(chunk);
	if (!buffer)
		return -1;
	memset(buffer, 0x5a, chunk);
	double best = 0;
	for (int r = 0; r < rounds; r++) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			return -1;
		uint64_t start = bench_now_ns();
		for (uint64_t done = 0; done < bytes;) {
			size_t n = bytes - done < chunk ? (size_t)(bytes - done) : chunk;
			if (write(fd, buffer, n) != (ssize_t)n) {
				close(fd);
				free(buffer);
				return -1;
			}
			done += n;
		}
		uint64_t ns = bench_now_ns() - start;
		close(fd);
		double rate = (double)bytes / ((double)ns / 1e9);
		if (rate > best)
			best = rate;
	}
	unlink(path);
	free(buffer);
	return best;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_collect DIR [RING_BYTES] [ROUNDS]\n");
		return 2;
	}
	const char *dir = argv[1];
	uint64_t ring = argc > 2 ? strtoull(argv[2], NULL, 0) : 16u << 20;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	int cpus[1];
	if (bench_allowed_cpus(cpus, 1) > 0)
		bench_pin(cpus[0]);

	char arena[4096], out[4096], floor_out[4096], scratch[4096];
	snprintf(scratch, sizeof(scratch), "%s/collect.scratch", dir);
	/* the rounds' files, the floor's, the arena: see above */
	warm_page_cache(scratch, ring * (uint64_t)(rounds + 3));
	snprintf(arena, sizeof(arena), "%s/collect.arena", dir);
	snprintf(out, sizeof(out), "%s/collect.rt", dir);
	snprintf(floor_out, sizeof(floor_out), "%s/floor.out", dir);
	struct ringtrace_options o = {.size = sizeof(o),
				      .arena_path = arena,
				      .buffer_bytes = ring,
				      .mode = RINGTRACE_STREAM,
				      .rings = 1};
	if (ringtrace_init(&o) != 0)
		return 1;
	/* files of 256 MiB, two kept: the page cache holds what one round writes */
	struct rt_trace_writer_options wo = {.path = out, .max_size = 256u << 20, .max_files = 2};
	struct rt_collector *c;
	char message[512];
	if (rt_collector_open(&c, &wo, message, sizeof(message)) != 0 ||
	    rt_collector_attach(c, arena, 0, message, sizeof(message)) < 0) {
		bench_note("collect: %s", message);
		return 1;
	}
	/* one event registers the site and takes the ring; drain it before timing */
	RT_TRACE("bench collect", 0);
	rt_collector_poll(c, message, sizeof(message));
	uint64_t bytes = 0;
	double collect = best_collect(c, ring / 32, rounds, &bytes);
	ringtrace_shutdown();
	int rc = rt_collector_close(c, NULL, message, sizeof(message));
	if (collect <= 0 || rc != 0) {
		bench_note("collect: %s", message);
		return 1;
	}
	double floor = best_write(floor_out, bytes, rounds);
	if (floor <= 0)
		return 1;
	bench_note("collect: %.0f MB/s of records; write() floor %.0f MB/s (%llu bytes a round)",
		   collect / 1e6, floor / 1e6, (unsigned long long)bytes);
	bench_result("collect_bytes_per_s", collect);
	bench_result("write_bytes_per_s", floor);
	unlink(arena);
	for (int i = 0; i < 64; i++) {
		char name[4200];
		snprintf(name, sizeof(name), "%s.%06d", out, i);
		unlink(name);
	}
	return 0;
}
