/*
 * io_threads.c - the I/O recording of the library under concurrent use, in
 * one process, made to be run under ThreadSanitizer as well.
 *
 *   io_threads ARENA
 *
 * Threads open, read and close real files and pipes at the same time, so
 * that the kernel hands the same descriptor numbers from one thread to
 * another, and report each call to the library as the interposer does
 * (ringtrace__io_before_close, ringtrace__io_record).  Afterwards every
 * thread's ring holds exactly its calls in order, with the paths it gave
 * and a "pipe:[N]" name for each pipe end before its first use, and the
 * descriptor table says every descriptor the threads used is closed.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/records.h"
#include "record/io/io_call.h"
#include "record/record.h"

#include "../lib/check.h"
#include "../lib/ring_view.h"

#define THREADS 6
#define ROUNDS 400
#define PIPE_EVERY 5

struct expected {
	uint16_t op;
	int32_t fd;
	char path[64]; /* "" : none; "pipe:" : a pipe's name */
};

struct worker {
	pthread_t thread;
	int index;
	const char *dir;
	uint32_t ring;
	struct expected *calls;
	size_t count;
};

static pthread_barrier_t start;

static void expect(struct worker *w, uint16_t op, int fd, const char *path)
{
	struct expected *e = &w->calls[w->count++];
	e->op = op;
	e->fd = fd;
	snprintf(e->path, sizeof(e->path), "%s", path ? path : "");
}

static void report(uint16_t op, int fd, int64_t size, int64_t result, const char *path)
{
	struct rt_io_call c = {.op = op, .fd = fd, .size = size, .start = ringtrace__counter()};
	c.result = result;
	if (path) {
		c.path = path;
		c.path_length = (uint32_t)strlen(path);
	}
	ringtrace__io_record(&c);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	char path[64], buf[16];
	pthread_barrier_wait(&start);
	for (int round = 0; round < ROUNDS; round++) {
		snprintf(path, sizeof(path), "%s/t%d-%d", w->dir, w->index, round);
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (!CHECK(fd >= 0))
			return NULL;
		report(RT_IO_OPEN, fd, 0, fd, path);
		expect(w, RT_IO_OPEN, fd, path);
		report(RT_IO_WRITE, fd, 3, write(fd, "abc", 3), NULL);
		expect(w, RT_IO_WRITE, fd, NULL);
		uint64_t t = ringtrace__counter();
		ringtrace__io_before_close(fd, t);
		report(RT_IO_CLOSE, fd, 0, close(fd), NULL);
		expect(w, RT_IO_CLOSE, fd, NULL);
		unlink(path);
		if (round % PIPE_EVERY == 0) {
			int p[2];
			if (!CHECK(pipe(p) == 0))
				return NULL;
			/* never opened where the library saw it: named at first use */
			report(RT_IO_WRITE, p[1], 2, write(p[1], "xy", 2), NULL);
			expect(w, RT_IO_NAMED, p[1], "pipe:");
			expect(w, RT_IO_WRITE, p[1], NULL);
			report(RT_IO_READ, p[0], 2, read(p[0], buf, 2), NULL);
			expect(w, RT_IO_NAMED, p[0], "pipe:");
			expect(w, RT_IO_READ, p[0], NULL);
			for (int k = 0; k < 2; k++) {
				ringtrace__io_before_close(p[k], ringtrace__counter());
				report(RT_IO_CLOSE, p[k], 0, close(p[k]), NULL);
				expect(w, RT_IO_CLOSE, p[k], NULL);
			}
		}
	}
	w->ring = ringtrace__tls_writer.thread < rt_arena.header->thread_capacity
		      ? rt_arena.threads[ringtrace__tls_writer.thread].ring
		      : RT_NO_RING;
	return NULL;
}

/* Compare the ring's RT_REC_IO records with what the worker did, in order. */
static void check_ring(const struct worker *w)
{
	if (!CHECK(w->ring < rt_arena.header->ring_count))
		return;
	const union rt_slot *slots = rt_arena_ring_slots(w->ring);
	uint64_t head = __atomic_load_n(&rt_arena.rings[w->ring].head, __ATOMIC_ACQUIRE);
	if (!CHECK(head < rt_arena.ring_slots)) /* the ring never wrapped */
		return;
	size_t next = 0;
	for (uint64_t s = 0; s < head;) {
		struct rt_slot_head h;
		ring_view_copy_head(&slots[s].head, &h);
		if (!CHECK(h.nslots >= 1 && s + h.nslots <= head))
			return;
		if (h.kind != RT_REC_IO) {
			s += h.nslots;
			continue;
		}
		unsigned char payload[RT_LOG_PAYLOAD_MAX];
		uint32_t at = 0;
		for (unsigned k = 0; k < h.nslots; k++) {
			union rt_slot copy;
			if (k == 0) {
				memcpy(&copy.head, &h, sizeof(h));
			} else {
				ring_view_copy_cont(&slots[s + k].cont, &copy.cont);
				CHECK(rt_record_cont_ok(&copy.cont, s, k));
			}
			at = rt_log_payload_add(payload, at, &copy, k);
		}
		struct rt_io_payload io;
		memcpy(&io, payload, sizeof(io));
		if (!CHECK(next < w->count))
			return;
		const struct expected *e = &w->calls[next++];
		if (!CHECK(io.op == e->op && io.fd == e->fd)) {
			fprintf(stderr, "thread %d call %zu: op %u fd %d, expected op %u fd %d\n",
				w->index, next - 1, io.op, io.fd, e->op, e->fd);
			return;
		}
		CHECK(io.start <= h.counter);
		uint32_t off = sizeof(io);
		off += (io.flags & RT_IO_F_OFFSET ? 8 : 0) + (io.flags & RT_IO_F_AUX ? 8 : 0) +
		       (io.flags & RT_IO_F_STREAM ? 8 : 0);
		if (e->path[0]) {
			uint32_t n1;
			if (!CHECK(io.flags & RT_IO_F_PATH))
				return;
			memcpy(&n1, payload + off, 4);
			const char *name = (const char *)payload + off + 8;
			if (strcmp(e->path, "pipe:") == 0)
				CHECK(n1 > 6 && memcmp(name, "pipe:[", 6) == 0);
			else
				CHECK(n1 == strlen(e->path) && memcmp(name, e->path, n1) == 0);
		} else {
			CHECK(!(io.flags & RT_IO_F_PATH));
		}
		s += h.nslots;
	}
	CHECK(next == w->count);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s ARENA\n", argv[0]);
		return 2;
	}
	char dir[] = "/tmp/ringtrace-io-threads.XXXXXX";
	if (!mkdtemp(dir))
		return 2;
	setenv("RINGTRACE_ARENA", argv[1], 1);
	setenv("RINGTRACE_MODE", "flight", 1);
	setenv("RINGTRACE_BUFFER", "8M", 1);
	setenv("RINGTRACE_RINGS", "16", 1);
	unlink(argv[1]);
	ringtrace__io_start();
	if (!CHECK(ringtrace_enabled()) || !CHECK(rt_arena.fds != NULL))
		return 1;
	static struct worker workers[THREADS];
	pthread_barrier_init(&start, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		workers[i].index = i;
		workers[i].dir = dir;
		workers[i].calls = calloc(ROUNDS * 10, sizeof(struct expected));
		pthread_create(&workers[i].thread, NULL, work, &workers[i]);
	}
	for (int i = 0; i < THREADS; i++)
		pthread_join(workers[i].thread, NULL);
	for (int i = 0; i < THREADS; i++)
		check_ring(&workers[i]);
	/* every descriptor a worker used is closed in the table */
	for (uint32_t fd = 3; fd < 64; fd++) {
		const struct rt_fd_entry *e = &rt_arena.fds[fd];
		uint32_t state = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
		if (e->op != RT_IO_RUNDOWN && (int)fd != rt_arena.fd && !CHECK(state != RT_FD_OPEN))
			fprintf(stderr, "descriptor %u is still open in the table\n", fd);
		if (state != RT_FD_UNUSED &&
		    !CHECK((__atomic_load_n(&e->sequence, __ATOMIC_ACQUIRE) & 1) == 0))
			fprintf(stderr, "descriptor %u: its entry was left mid-write\n", fd);
	}
	ringtrace_shutdown();
	unlink(argv[1]);
	rmdir(dir);
	int failures = check_failure_count();
	printf("%s: %d threads x %d rounds, %d failed checks\n", argv[0], THREADS, ROUNDS,
	       failures);
	return failures ? 1 : 0;
}
