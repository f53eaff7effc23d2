/*
 * seed_program.c - a traced program whose arenas become the fuzz corpus's
 * seeds (tests/fuzz/make_corpus.sh runs it with small rings and shrinks the
 * arena it leaves).
 *
 *   seed_program flight   events of every argument shape; a ring that wraps;
 *                         a thread that finds no ring, one that takes over an
 *                         exited thread's ring; closed cleanly
 *   seed_program stream   a full ring drops events, a collector drains it, the
 *                         writer notes the drops; then it drops again; closed
 *   seed_program reuse    threads one after another share a ring; the process
 *                         dies without closing the arena
 *
 * Run it with RINGTRACE_ARENA set (the arena is kept) and RINGTRACE_RINGS=2,
 * RINGTRACE_BUFFER=4K; the stream case also with RINGTRACE_MODE=stream.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ringtrace.h>
#include <ringtrace/format.h>

static pthread_barrier_t wrapper_holds_ring, third_done;

static void *spin_with_ring(void *arg)
{
	(void)arg;
	ringtrace_set_thread_name("wrapper");
	/* 2-slot events: 128 slots hold 64 of them, the rest are overwritten */
	for (int i = 0; i < 200; i++)
		RT_TRACE("wrap", i, -i, i * 3, (short)-i, (uint64_t)i << 40);
	pthread_barrier_wait(&wrapper_holds_ring);
	pthread_barrier_wait(&third_done);
	return NULL;
}

static void *without_ring(void *arg)
{
	(void)arg;
	ringtrace_set_thread_name("no ring \x01");
	for (int i = 0; i < 5; i++)
		RT_TRACE("no ring for me", i);
	return NULL;
}

static void *after_wrapper(void *arg)
{
	(void)arg;
	for (int i = 0; i < 5; i++)
		RT_TRACE("took the wrapper's ring", i);
	return NULL;
}

static int flight(void)
{
	int minus = -7;
	static int object;
	ringtrace_set_thread_name("main");
	RT_TRACE("no arguments");
	RT_TRACE("two", 1500, 0x8001u);
	RT_TRACE("signed \"quoted\"", minus, (short)-2, (long long)-3, (int8_t)-128);
	RT_TRACE("six", 2, 6, 1, 0, 0xffffffff0024c720ull, (int64_t)-0x6ae6f881a0ll);
	RT_TRACE("pointer", 0, 0, 0, 0, &object);
	RT_TRACE("utf-8 \xc3\xa9 and \xff");

	/* main holds one ring and the wrapper the other: a third thread finds none */
	pthread_t wrapper, third, fourth;
	pthread_barrier_init(&wrapper_holds_ring, NULL, 2);
	pthread_barrier_init(&third_done, NULL, 2);
	pthread_create(&wrapper, NULL, spin_with_ring, NULL);
	pthread_barrier_wait(&wrapper_holds_ring);
	pthread_create(&third, NULL, without_ring, NULL);
	pthread_join(third, NULL);
	pthread_barrier_wait(&third_done);
	pthread_join(wrapper, NULL);
	/* the wrapper exited: a new thread takes its ring over */
	pthread_create(&fourth, NULL, after_wrapper, NULL);
	pthread_join(fourth, NULL);
	RT_TRACE("end", 42);
	ringtrace_shutdown();
	return 0;
}

/* The ring descriptor of the calling thread's ring, in a mapping of the arena. */
static struct rt_ring_desc *own_ring(unsigned char **base, size_t *size)
{
	const char *path = ringtrace_arena_path();
	int fd = path ? open(path, O_RDWR) : -1;
	if (fd < 0)
		return NULL;
	*size = (size_t)lseek(fd, 0, SEEK_END);
	*base = mmap(NULL, *size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (*base == MAP_FAILED)
		return NULL;
	const struct rt_arena_header *h = (const struct rt_arena_header *)*base;
	int32_t tid = (int32_t)syscall(SYS_gettid);
	for (uint32_t i = 0; i < h->threads_used && i < h->thread_capacity; i++) {
		const struct rt_thread_entry *e =
		    (const struct rt_thread_entry *)(*base + h->thread_table_offset) + i;
		if (e->tid == tid && e->ring < h->ring_count)
			return (struct rt_ring_desc *)(*base + h->ring_desc_offset) + e->ring;
	}
	return NULL;
}

static int stream(void)
{
	ringtrace_set_thread_name("streamer");
	/* 1-slot events: 128 fit, the other 72 are dropped */
	for (int i = 0; i < 200; i++)
		RT_TRACE("stream", i);
	unsigned char *base;
	size_t size;
	struct rt_ring_desc *ring = own_ring(&base, &size);
	if (!ring) {
		fprintf(stderr, "seed_program: cannot find my ring\n");
		return 1;
	}
	/* act as the collector: everything up to head is consumed */
	__atomic_store_n(&ring->tail, __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE),
			 __ATOMIC_RELEASE);
	/* room again: the next event writes the LOST record first */
	for (int i = 0; i < 140; i++)
		RT_TRACE("after drain", i, i * 2);
	munmap(base, size);
	return 0;
}

static void *short_lived(void *arg)
{
	long n = (long)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%ld", n);
	ringtrace_set_thread_name(name);
	for (long i = 0; i < 10 + 3 * n; i++)
		RT_TRACE("work", n, i);
	return NULL;
}

static int reuse(void)
{
	RT_TRACE("main starts");
	for (long n = 0; n < 4; n++) {
		pthread_t t;
		pthread_create(&t, NULL, short_lived, (void *)n);
		pthread_join(t, NULL);
	}
	RT_TRACE("main dies", 4);
	_exit(0); /* no destructors: the arena stays RUNNING, its writer gone */
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "flight") == 0)
		return flight();
	if (argc == 2 && strcmp(argv[1], "stream") == 0)
		return stream();
	if (argc == 2 && strcmp(argv[1], "reuse") == 0)
		return reuse();
	fprintf(stderr, "usage: seed_program flight|stream|reuse\n");
	return 2;
}
