/*
 * io_read.c - what the I/O interposer adds to one read() of a cached file.
 *
 *     LD_PRELOAD=libringtrace_io.so RINGTRACE_ARENA=A RINGTRACE_MODE=flight \
 *         bench_io_read FILE
 *
 * Run with the interposer preloaded, it times in the same process, in
 * alternating batches, read() of 256 bytes through the interposer (timed,
 * recorded: one RT_REC_IO record) and through the C library's own read
 * (looked up in libc.so.6 itself, past the interposer), each through a
 * pointer.  FILE (1 MiB or
 * more, in the page cache) is read from its start; both loops go back to
 * the start every 4096 reads with the C library's own lseek, so they do
 * the same work but for the interposer.  Prints ns per read:
 *   traced  through the interposer
 *   plain   the C library's read alone
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <ringtrace.h>

#include "measure.h"
#include "record/io/io_call.h"
#include "record/io/io_fast.h"

#define BATCH (1u << 12)
#define RUNS 401
#define READ_BYTES 256
#define READS_PER_PASS 4096

static int fd = -1;
static char buf[READ_BYTES];
/*
 * Both loops call read through a pointer in this program's data, as a
 * program calls it through its GOT, so that what the call itself costs is
 * not counted as the interposer's.  And both are one loop, so that they
 * differ only in the function called, not in the loop's code or where it
 * lies.
 */
static ssize_t (*libc_read)(int, void *, size_t);
static ssize_t (*traced_read)(int, void *, size_t);
static off_t (*libc_lseek)(int, off_t, int);

static __attribute__((noinline)) void loop_reads(ssize_t (**read_fn)(int, void *, size_t),
						 uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		if ((*read_fn)(fd, buf, READ_BYTES) != READ_BYTES)
			abort();
		if ((i + 1) % READS_PER_PASS == 0)
			libc_lseek(fd, 0, SEEK_SET);
	}
	libc_lseek(fd, 0, SEEK_SET);
}

static void loop_traced(uint64_t n)
{
	loop_reads(&traced_read, n);
}

static void loop_plain(uint64_t n)
{
	loop_reads(&libc_read, n);
}

/*
 * What the wrapper adds around the call: two clock readings and the
 * record, written inline as the wrapper writes it (io_fast.h).
 */
static uint32_t site_id;
static void loop_bookkeeping(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		struct rt_io_call c = {.op = RT_IO_READ, .fd = fd, .size = READ_BYTES};
		c.start = ringtrace__counter();
		__asm__ volatile("" ::: "memory");
		uint64_t end = ringtrace__counter();
		if (!rt_io_record_fast(&ringtrace__tls_writer,
				       rt_io_fd_known(ringtrace__fd_known, fd), site_id, &c, end,
				       READ_BYTES)) {
			c.end = end;
			c.result = READ_BYTES;
			ringtrace__io_record(&c);
			site_id = __atomic_load_n(&ringtrace__io_site.id, __ATOMIC_RELAXED);
		}
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s FILE (with libringtrace_io.so preloaded)\n", argv[0]);
		return 2;
	}
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!libc || !(libc_read = (ssize_t(*)(int, void *, size_t))dlsym(libc, "read")) ||
	    !(libc_lseek = (off_t(*)(int, off_t, int))dlsym(libc, "lseek"))) {
		fprintf(stderr, "%s: the C library's read not found\n", argv[0]);
		return 1;
	}
	traced_read = (ssize_t(*)(int, void *, size_t))dlsym(RTLD_DEFAULT, "read");
	if (!traced_read || traced_read == libc_read) {
		fprintf(stderr, "%s: read is not interposed: preload libringtrace_io.so\n",
			argv[0]);
		return 77;
	}
	int cpus[64];
	int ncpus = bench_allowed_cpus(cpus, 64);
	if (ncpus > 0)
		bench_pin(cpus[ncpus - 1]);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || lseek(fd, 0, SEEK_END) < (off_t)READ_BYTES * READS_PER_PASS) {
		fprintf(stderr, "%s: %s must hold at least %d bytes\n", argv[0], argv[1],
			READ_BYTES * READS_PER_PASS);
		return 2;
	}
	libc_lseek(fd, 0, SEEK_SET);
	if (!ringtrace_enabled()) {
		fprintf(stderr, "%s: tracing is off: the figures mean nothing\n", argv[0]);
		return 1;
	}
	/*
	 * The overhead is a small difference of two large, noisy figures: it is
	 * taken per pair of adjacent batches (the order alternating), and the
	 * median of those differences is the figure.
	 */
	static double traced[RUNS], plain[RUNS], diff[RUNS];
	loop_traced(BATCH);
	loop_plain(BATCH);
	for (int r = 0; r < RUNS; r++) {
		if (r & 1) {
			plain[r] = bench_time_batch(loop_plain, BATCH);
			traced[r] = bench_time_batch(loop_traced, BATCH);
		} else {
			traced[r] = bench_time_batch(loop_traced, BATCH);
			plain[r] = bench_time_batch(loop_plain, BATCH);
		}
		diff[r] = traced[r] - plain[r];
	}
	double d50 = bench_quantile(diff, RUNS, 0.5), d10 = bench_quantile(diff, RUNS, 0.1),
	       d90 = bench_quantile(diff, RUNS, 0.9);
	double t50 = bench_quantile(traced, RUNS, 0.5), p50 = bench_quantile(plain, RUNS, 0.5);
	bench_note("%d-byte reads of %s, %u per batch, %d pairs of batches", READ_BYTES, argv[1],
		   BATCH, RUNS);
	bench_note("read, interposed: median %.1f ns; the C library's: median %.1f ns", t50, p50);
	bench_note("overhead per pair: median %.1f ns (p10 %.1f, p90 %.1f)", d50, d10, d90);
	struct bench_case alone[] = {
	    {.name = "the interposer's work alone", .loop = loop_bookkeeping}};
	bench_compare(alone, 1, BATCH, RUNS);
	bench_result("bookkeeping", alone[0].median);
	bench_result("traced", t50);
	bench_result("plain", p50);
	bench_result("overhead", d50);
	return 0;
}
