/*
 * ring_pages.c - a ring's pages come into the arena as its thread fills
 * them, and reading the arena does not make the rest of them exist.
 *
 *   ring_pages TOOL
 *
 * A child records into an arena in a tmpfs directory (/dev/shm, else /tmp)
 * with rings of 64 MiB: one thread writes FEW one-slot events, exactly the
 * pages a new ring starts with, so that its head ends where the claimed
 * pages end; another writes MANY.  Then, with the child gone:
 *  - the file holds the metadata, what the threads wrote and at most a
 *    claim ahead per ring, not two rings of 64 MiB;
 *  - `TOOL dump` reads every event and leaves the file's size on disk as it
 *    was: a reader that looked at a page past the written ones (the slot at
 *    a ring's head included) would have made it exist, and on a full tmpfs
 *    it would have died of a SIGBUS.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ringtrace.h"
#include "ringtrace/format.h"

#include "../lib/check.h"

#define RING_BYTES (64u << 20)
#define FEW 512u /* 16 KiB of one-slot events: a new ring's first claim */
#define MANY 100000u
#define CLAIM_AHEAD (64u << 10) /* the most a ring claims beyond what it holds */

static void *write_events(void *arg)
{
	uint32_t n = (uint32_t)(uintptr_t)arg;
	for (uint32_t i = 0; i < n; i++)
		RT_TRACE("page", i);
	return NULL;
}

static int record(const char *arena)
{
	struct ringtrace_options o = {.size = sizeof(o),
				      .arena_path = arena,
				      .buffer_bytes = RING_BYTES,
				      .mode = RINGTRACE_FLIGHT,
				      .rings = 4};
	if (ringtrace_init(&o) != 0)
		return 3;
	uint32_t counts[2] = {FEW, MANY};
	for (int k = 0; k < 2; k++) {
		pthread_t t;
		if (pthread_create(&t, NULL, write_events, (void *)(uintptr_t)counts[k]) != 0 ||
		    pthread_join(t, NULL) != 0)
			return 4;
	}
	return 0;
}

static uint64_t bytes_on_disk(const char *path)
{
	struct stat st;
	if (!CHECK(stat(path, &st) == 0))
		return 0;
	return (uint64_t)st.st_blocks * 512;
}

/* `TOOL dump ARENA > OUTPUT`; its status. */
static int dump(const char *tool, const char *arena, const char *output)
{
	pid_t pid = fork();
	if (pid == 0) {
		int out = open(output, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(out, STDOUT_FILENO);
		execl(tool, tool, "dump", arena, (char *)NULL);
		_exit(127);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: ring_pages TOOL\n");
		return 2;
	}
	char dir[] = "/dev/shm/ringtrace-pages.XXXXXX";
	char tmp_dir[] = "/tmp/ringtrace-pages.XXXXXX";
	const char *d = mkdtemp(dir) ? dir : mkdtemp(tmp_dir);
	if (!d) {
		perror("mkdtemp");
		return 2;
	}
	char arena[64], output[64];
	snprintf(arena, sizeof(arena), "%s/pages.arena", d);
	snprintf(output, sizeof(output), "%s/dump.out", d);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		exit(record(arena)); /* exit: the library closes the arena */
	int status;
	waitpid(pid, &status, 0);
	if (CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		struct rt_arena_header h;
		int fd = open(arena, O_RDONLY);
		if (CHECK(fd >= 0) && CHECK(pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h))) {
			uint64_t metadata = h.ring_area_offset;
			uint64_t written = (uint64_t)(FEW + MANY) * RT_SLOT_SIZE;
			uint64_t before = bytes_on_disk(arena);
			printf("%llu bytes on disk: %llu of metadata, %llu of events written\n",
			       (unsigned long long)before, (unsigned long long)metadata,
			       (unsigned long long)written);
			CHECK(before >= metadata + written);
			CHECK(before <= metadata + written + 2 * CLAIM_AHEAD);
			CHECK_EQ(dump(argv[1], arena, output), 0);
			uint64_t after = bytes_on_disk(arena);
			if (!CHECK(after == before))
				fprintf(stderr, "  reading the arena made %lld bytes of it exist\n",
					(long long)(after - before));
			char line[256] = "";
			FILE *f = fopen(output, "r");
			if (CHECK(f != NULL)) {
				if (!fgets(line, sizeof(line), f))
					line[0] = 0;
				fclose(f);
			}
			char want[128];
			snprintf(want, sizeof(want),
				 "recovered %u/%u events from 2 threads (0 lost)", FEW + MANY,
				 FEW + MANY);
			if (!CHECK(strstr(line, want) != NULL))
				fprintf(stderr, "  dump said: %s", line);
		}
		if (fd >= 0)
			close(fd);
	}
	unlink(arena);
	unlink(output);
	rmdir(d);
	int failed = check_failure_count() != 0;
	printf("%d passed, %d failed\n", !failed, failed);
	return failed;
}
