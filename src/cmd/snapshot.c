/*
 * snapshot.c - `ringtrace snapshot [-o OUT] [--timeout SECONDS] PID|ARENA`:
 * write what a running program's rings hold now, without stopping it.
 *
 * A PID is looked up among the arenas in the default directory (as `ringtrace ls`
 * finds them): the running arena whose header names that pid.  Then:
 *  - a collector drains the arena (`ringtrace record`: collector_pid in the
 *    header, alive): the request goes to it through the header (bump
 *    snapshot_requests, wait until snapshots_taken reaches it), and the
 *    snapshot lands in that recording's trace;
 *  - else: the arena is attached here and its rings written into OUT
 *    (default ringtrace-snapshot.PID.rt), then detached.  Flight mode: the
 *    rings as they are; stream mode: what nobody consumed yet (consuming
 *    it, which makes room in the rings again).  The program runs on: a
 *    record it is writing meanwhile is not torn, it merely comes after the
 *    snapshot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "collect/collector.h"
#include "common/arena_names.h"
#include "common/parse.h"
#include "read/arena_list.h"
#include "read/map_guard.h"

#define USAGE "ringtrace snapshot [-o OUT] [--timeout SECONDS] PID|ARENA"
#define DEFAULT_TIMEOUT_S 10

void rt_cmd_snapshot_help(FILE *to)
{
	fprintf(
	    to,
	    "usage: " USAGE "\n"
	    "\n"
	    "Write what the rings of a running program hold now, without stopping it\n"
	    "(flight mode: its last events).  PID: the arena of that process in\n" RT_ARENA_DIR_TEXT
	    " (see 'ringtrace ls'); ARENA: an arena file.\n"
	    "\n"
	    "If 'ringtrace record' drains the arena in flight mode, the snapshot goes\n"
	    "into its trace file and this command waits for it; in stream mode every\n"
	    "event already goes there as it comes, and this command says so at once;\n"
	    "with no collector the snapshot is written to OUT.\n"
	    "\n"
	    "Options:\n"
	    "  -o, --output OUT     where (default ringtrace-snapshot.PID.rt)\n"
	    "  --timeout SECONDS    how long to wait for a collector (default 10)\n"
	    "\n"
	    "Exit status: 0 written; 1 no snapshot (the collector did not answer in\n"
	    "time or streams the arena, OUT cannot be written); 2 bad usage, no such arena, or its "
	    "program\n"
	    "no longer runs; 3 the arena file shrank while it was read (truncated by\n"
	    "another process): OUT holds what was read before.\n");
}

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Ask the collector through the header; 0 when it served the request. */
static int ask_collector(const char *path, int32_t collector, uint64_t timeout_ms)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "ringtrace snapshot: %s: %s\n", rt_escaped(path), strerror(errno));
		return RT_EXIT_FAILURE;
	}
	struct rt_arena_header *h =
	    mmap(NULL, RT_ARENA_HEADER_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED) {
		fprintf(stderr, "ringtrace snapshot: %s: cannot map: %s\n", rt_escaped(path),
			strerror(errno));
		return RT_EXIT_FAILURE;
	}
	/* a header cut off the file under us: zeros, and no one to answer */
	rt_map_guard_watch(h, RT_ARENA_HEADER_SIZE, 1);
	uint32_t want = __atomic_add_fetch(&h->snapshot_requests, 1, __ATOMIC_ACQ_REL);
	uint64_t deadline = now_ms() + timeout_ms;
	int r = RT_EXIT_FAILURE;
	uint64_t shrunk;
	for (;;) {
		if (rt_map_guard_shrunk(h, &shrunk)) {
			fprintf(
			    stderr,
			    "ringtrace snapshot: %s: the file shrank while it was read (another "
			    "process truncated it): bytes from %llu on are damage\n",
			    rt_escaped(path), (unsigned long long)shrunk);
			r = RT_EXIT_DAMAGED;
			break;
		}
		uint32_t taken = __atomic_load_n(&h->snapshots_taken, __ATOMIC_ACQUIRE);
		if ((int32_t)(taken - want) >= 0) {
			r = RT_EXIT_OK;
			break;
		}
		if (now_ms() >= deadline) {
			fprintf(stderr,
				"ringtrace snapshot: %s: the collector (pid %d) did not take the "
				"snapshot within %llu ms\n",
				rt_escaped(path), (int)collector, (unsigned long long)timeout_ms);
			break;
		}
		struct timespec pause = {0, 2000000};
		nanosleep(&pause, NULL);
	}
	rt_map_guard_forget(h);
	munmap(h, RT_ARENA_HEADER_SIZE);
	if (r == RT_EXIT_OK)
		fprintf(stderr, "ringtrace: snapshot of %s written by the collector (pid %d)\n",
			rt_escaped(path), (int)collector);
	return r;
}

/* No collector: attach here, write the rings into out, detach. */
static int write_snapshot(const char *path, const char *out)
{
	char message[1024];
	struct rt_trace_writer_options wo = {.path = out};
	struct rt_collector *c = NULL;
	int opened = rt_collector_open(&c, &wo, message, sizeof(message));
	if (opened != 0) {
		fprintf(stderr, "ringtrace snapshot: %s\n", rt_escaped(message));
		return rt_cmd_output_status(opened);
	}
	int r = RT_EXIT_OK;
	/* detach, not finish: the program may well run on */
	int source = rt_collector_attach(c, path, 0, message, sizeof(message));
	if (source < 0 || rt_collector_detach_source(c, source, message, sizeof(message)) < 0) {
		fprintf(stderr, "ringtrace snapshot: %s\n", rt_escaped(message));
		r = RT_EXIT_FAILURE;
	}
	uint64_t shrunk;
	if (source >= 0 && rt_collector_source_shrunk(c, source, &shrunk)) {
		fprintf(
		    stderr,
		    "ringtrace snapshot: %s: the file shrank while it was read (another process "
		    "truncated it): bytes from %llu on are damage\n",
		    rt_escaped(path), (unsigned long long)shrunk);
		if (r == RT_EXIT_OK)
			r = RT_EXIT_DAMAGED;
	}
	struct rt_collector_stats st;
	if (rt_collector_close(c, &st, message, sizeof(message)) != 0 && r == RT_EXIT_OK) {
		fprintf(stderr, "ringtrace snapshot: %s\n", rt_escaped(message));
		r = RT_EXIT_FAILURE;
	}
	if (r == RT_EXIT_OK || r == RT_EXIT_DAMAGED)
		fprintf(stderr, "ringtrace: snapshot of %s: %llu records written to %s\n",
			rt_escaped(path), (unsigned long long)st.records, rt_escaped(out));
	return r;
}

int rt_cmd_snapshot(int argc, char **argv)
{
	const char *out = NULL;
	uint64_t timeout_ms = (uint64_t)DEFAULT_TIMEOUT_S * 1000u;
	const char *target = NULL;
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;
		const char *arg = argv[i];
		int m;
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_snapshot_help(stdout);
			return RT_EXIT_OK;
		}
		if ((m = rt_cmd_option(argc, argv, &i, "-o", &v)) != 0 ||
		    (m = rt_cmd_option(argc, argv, &i, "--output", &v)) != 0) {
			if (m < 0 || !v[0])
				return rt_cmd_usage_error("snapshot", USAGE, "%s needs a file name",
							  arg);
			out = v;
		} else if ((m = rt_cmd_option(argc, argv, &i, "--timeout", &v)) != 0) {
			uint64_t s;
			if (m < 0 || rt_parse_u64(v, &s) != 0 || s == 0 || s > 86400)
				return rt_cmd_usage_error("snapshot", USAGE,
							  "--timeout is 1 to 86400 seconds");
			timeout_ms = s * 1000u;
		} else if (arg[0] == '-' && arg[1] != 0) {
			return rt_cmd_usage_error("snapshot", USAGE, "unknown option '%s'", arg);
		} else if (target) {
			return rt_cmd_usage_error("snapshot", USAGE, "one PID or ARENA only");
		} else {
			target = arg;
		}
	}
	if (!target)
		return rt_cmd_usage_error("snapshot", USAGE, "no PID or ARENA");

	struct rt_arena_file f;
	char *path = rt_cmd_arena_target("snapshot", target, &f);
	if (!path)
		return RT_EXIT_USAGE;
	int32_t collector = f.header.collector_pid;
	int32_t owner = f.header.pid;
	uint32_t mode = f.header.mode;
	int running = f.running;
	rt_arena_file_free(&f);
	/*
	 * nothing runs to take a snapshot of: the arena is read as it is
	 * (dump, recover), never attached here, which writes its header
	 */
	if (!running) {
		fprintf(stderr,
			"ringtrace snapshot: %s: its program no longer runs: nothing to take a "
			"snapshot of (read the arena with 'ringtrace dump' or 'ringtrace "
			"recover')\n",
			rt_escaped(path));
		free(path);
		return RT_EXIT_USAGE;
	}

	int r;
	if (collector > 0 && collector != getpid() && (kill(collector, 0) == 0 || errno == EPERM)) {
		if (mode == RT_MODE_STREAM) {
			/* it writes every event as it comes: there is nothing to ask it for */
			fprintf(stderr,
				"ringtrace snapshot: %s: no snapshot: its collector (pid %d) "
				"streams every event into its trace file as it comes, and takes "
				"snapshots of flight-mode arenas only; read that file\n",
				rt_escaped(path), (int)collector);
			free(path);
			return RT_EXIT_FAILURE;
		}
		r = ask_collector(path, collector, timeout_ms);
	} else {
		char default_out[64];
		if (!out) {
			snprintf(default_out, sizeof(default_out), "ringtrace-snapshot.%d.rt",
				 (int)owner);
			out = default_out;
		}
		r = write_snapshot(path, out);
	}
	free(path);
	return r;
}
