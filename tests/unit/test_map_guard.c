/*
 * test_map_guard.c - a watched mapping whose file shrinks reads zeros past
 * the new end and says where the file stopped (src/read/map_guard.c);
 * nothing reaches the file; a SIGBUS outside every watched mapping still
 * ends the process.
 *
 * Deterministic: the file is truncated by the test itself between reads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/check.h"
#include "read/map_guard.h"

#define PAGES 8

static size_t page;
static char dir[] = "/tmp/test_map_guard.XXXXXX";

/* A file of PAGES pages, page i filled with the byte 'a' + i, mapped; its descriptor. */
static unsigned char *make(const char *name, int writable, int *fd_out)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (!CHECK(fd >= 0))
		exit(1);
	unsigned char *buf = malloc(page);
	for (int i = 0; i < PAGES; i++) {
		memset(buf, 'a' + i, page);
		if (!CHECK(write(fd, buf, page) == (ssize_t)page))
			exit(1);
	}
	free(buf);
	void *map =
	    mmap(NULL, PAGES * page, PROT_READ | (writable ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
	if (!CHECK(map != MAP_FAILED))
		exit(1);
	*fd_out = fd;
	return map;
}

static off_t file_size(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? st.st_size : -1;
}

/* Read-only: truncated to 2.5 pages, every byte of page 3 on reads 0, the rest is kept. */
static void shrink_read_only(void)
{
	int fd;
	const volatile unsigned char *m = make("ro", 0, &fd);
	CHECK_EQ(rt_map_guard_watch((const void *)m, PAGES * page, 0), 0);
	uint64_t offset = 99;
	CHECK_EQ(rt_map_guard_shrunk((const void *)m, &offset), 0);
	CHECK_EQ(m[5 * page], 'f');
	CHECK(ftruncate(fd, (off_t)(2 * page + page / 2)) == 0);
	/* the last page the file still touches reads its bytes, zeros past its end */
	CHECK_EQ(m[2 * page], 'c');
	CHECK_EQ(m[2 * page + page / 2], 0);
	CHECK_EQ(rt_map_guard_shrunk((const void *)m, &offset), 0);
	/* past it: a fault, zero pages from there to the end */
	CHECK_EQ(m[5 * page + 7], 0);
	CHECK_EQ(rt_map_guard_shrunk((const void *)m, &offset), 1);
	CHECK_EQ(offset, 5 * page);
	CHECK_EQ(m[PAGES * page - 1], 0);
	CHECK_EQ(m[3 * page], 0); /* below the first fault, past the end: a fault again */
	CHECK_EQ(rt_map_guard_shrunk((const void *)m, &offset), 1);
	CHECK_EQ(offset, 3 * page);
	CHECK_EQ(m[0], 'a');
	CHECK_EQ(m[page], 'b');
	/* emptied: the first page faults too */
	CHECK(ftruncate(fd, 0) == 0);
	CHECK_EQ(m[10], 0);
	CHECK_EQ(rt_map_guard_shrunk((const void *)m, &offset), 1);
	CHECK_EQ(offset, 0);
	CHECK_EQ(file_size(fd), 0); /* nothing written back */
	rt_map_guard_forget((const void *)m);
	CHECK_EQ(rt_map_guard_shrunk((const void *)m, &offset), 0);
	munmap((void *)m, PAGES * page);
	close(fd);
}

/* Read-write (the collector's): stores past the end land in private zero pages, not the file. */
static void shrink_read_write(void)
{
	int fd;
	volatile unsigned char *m = make("rw", 1, &fd);
	CHECK_EQ(rt_map_guard_watch((const void *)m, PAGES * page, 1), 0);
	CHECK(ftruncate(fd, (off_t)page) == 0);
	m[4 * page] = 'x';
	CHECK_EQ(m[4 * page], 'x');
	CHECK_EQ(m[4 * page + 1], 0);
	uint64_t offset = 0;
	CHECK_EQ(rt_map_guard_shrunk((const void *)m, &offset), 1);
	CHECK_EQ(offset, 4 * page);
	CHECK_EQ(file_size(fd), (off_t)page);
	m[0] = 'z'; /* still the file's: a store there is the file's */
	unsigned char first = 0;
	CHECK(pread(fd, &first, 1, 0) == 1);
	CHECK_EQ(first, 'z');
	rt_map_guard_forget((const void *)m);
	munmap((void *)m, PAGES * page);
	close(fd);
}

/* A child reads past the end of a mapping: watched or not, how it ends. */
static int child_status(int watched)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int fd;
		const volatile unsigned char *m = make(watched ? "cw" : "cu", 0, &fd);
		if (watched)
			rt_map_guard_watch((const void *)m, PAGES * page, 0);
		if (ftruncate(fd, 0) != 0)
			_exit(3);
		_exit(m[page] == 0 ? 0 : 4);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	return status;
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	shrink_read_only();
	shrink_read_write();
	/* the guard is installed by now: a fault in a mapping nobody watches is still a crash */
	int status = child_status(0);
	CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
	if (WIFSIGNALED(status))
		CHECK_EQ(WTERMSIG(status), SIGBUS);
	status = child_status(1);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* a SIGBUS sent by someone is not a fault in a mapping: the default action */
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int fd;
		const void *m = make("sent", 0, &fd);
		rt_map_guard_watch(m, PAGES * page, 0);
		raise(SIGBUS);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));

	char command[160];
	snprintf(command, sizeof(command), "rm -rf %s", dir);
	if (system(command) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	if (check_failure_count()) {
		fprintf(stderr, "test_map_guard: %d checks failed\n", check_failure_count());
		return 1;
	}
	printf("test_map_guard: ok\n");
	return 0;
}
