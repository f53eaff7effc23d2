/*
 * io_cases.c - programs for the file I/O tests (tests/io/cases.sh), run
 * under `ringtrace record --io`, not linked with ringtrace.
 *
 *   io_cases CASE DIR EXPECT [ARGS...]
 *
 * Each case does its I/O on files in DIR (an absolute path without
 * symbolic links) and writes what the trace must show, one JSON object per
 * call, to the file EXPECT: the thread, the operation, the descriptor, the
 * file and what the call returned, as the program knows them.  Those lines
 * are written with raw system calls, which the interposer does not see, so
 * that the trace holds the case's calls and nothing else.  check_io.py
 * then compares `ringtrace dump --json` with them.
 *
 * Any call that does not do what the case needs (an open that does not get
 * the descriptor number the case is about, a short write) fails the
 * program with exit status 1 and a message: the test then checks nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* where the expectations go: a descriptor high enough to leave the case's numbers alone */
#define EXPECT_FD 100

static const char *dir;

__attribute__((noreturn)) static void die(const char *what)
{
	char line[512];
	int n = snprintf(line, sizeof(line), "io_cases: %s: %s\n", what, strerror(errno));
	syscall(SYS_write, 2, line, (size_t)n);
	_exit(1);
}

static void expect_open(const char *path)
{
	long fd =
	    syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		die(path);
	if (syscall(SYS_dup3, (int)fd, EXPECT_FD, O_CLOEXEC) < 0)
		die("dup3 of the expectations");
	syscall(SYS_close, (int)fd);
}

static long tid(void)
{
	return syscall(SYS_gettid);
}

/*
 * One expected event of this thread: op, then key/value pairs ending with
 * NULL, each value a string ("s:...") or a number ("n:..." already
 * formatted).  One write per line: threads append whole lines.
 */
static void expect(const char *op, ...)
{
	char line[2048];
	int n = snprintf(line, sizeof(line), "{\"pid\":%ld,\"tid\":%ld,\"op\":\"%s\"",
			 (long)getpid(), tid(), op);
	va_list ap;
	va_start(ap, op);
	const char *key;
	while ((key = va_arg(ap, const char *)) != NULL) {
		const char *value = va_arg(ap, const char *);
		if (value[0] == 's')
			n += snprintf(line + n, sizeof(line) - (size_t)n, ",\"%s\":\"%s\"", key,
				      value + 2);
		else
			n += snprintf(line + n, sizeof(line) - (size_t)n, ",\"%s\":%s", key,
				      value + 2);
	}
	va_end(ap);
	n += snprintf(line + n, sizeof(line) - (size_t)n, "}\n");
	if (syscall(SYS_write, EXPECT_FD, line, (size_t)n) != n)
		die("write of an expectation");
}

/* "n:VALUE" for expect(), in one of a few rotating buffers */
static const char *num(long long v)
{
	static __thread char buf[8][32];
	static __thread int next;
	char *b = buf[next++ % 8];
	snprintf(b, sizeof(buf[0]), "n:%lld", v);
	return b;
}

static const char *str(const char *s)
{
	static __thread char buf[8][1024];
	static __thread int next;
	char *b = buf[next++ % 8];
	snprintf(b, sizeof(buf[0]), "s:%s", s);
	return b;
}

static char *path_in_dir(const char *name)
{
	char *p;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		die("asprintf");
	return p;
}

/* The common events, with the values the call gave. */
static void expect_open_ok(const char *path, int fd)
{
	/* an open uses no descriptor: it has none, the result is the new one */
	expect("open", "path", str(path), "result", num(fd), "errno", num(0), NULL);
}

static void expect_transfer(const char *op, int fd, const char *path, long size, long result)
{
	expect(op, "fd", num(fd), "path", str(path), "size", num(size), "result", num(result),
	       NULL);
}

static void expect_close(int fd, const char *path)
{
	expect("close", "fd", num(fd), "path", str(path), "result", num(0), NULL);
}

static int open_checked(const char *path, int flags, int want_fd)
{
	int fd = open(path, flags, 0644);
	if (fd < 0)
		die(path);
	if (want_fd >= 0 && fd != want_fd) {
		errno = 0;
		fprintf(stderr, "io_cases: %s got descriptor %d, not %d\n", path, fd, want_fd);
		_exit(1);
	}
	expect_open_ok(path, fd);
	return fd;
}

static void write_checked(int fd, const char *path, const void *buf, size_t n)
{
	ssize_t r = write(fd, buf, n);
	if (r != (ssize_t)n)
		die("write");
	expect_transfer("write", fd, path, (long)n, (long)r);
}

static ssize_t read_checked(int fd, const char *path, void *buf, size_t n)
{
	ssize_t r = read(fd, buf, n);
	if (r < 0)
		die("read");
	expect_transfer("read", fd, path, (long)n, (long)r);
	return r;
}

static void close_checked(int fd, const char *path)
{
	if (close(fd) != 0)
		die("close");
	expect_close(fd, path);
}

/* A file of bytes bytes (made before the trace needs it: its calls are expected too). */
static void make_file(const char *path, size_t bytes)
{
	int fd = open_checked(path, O_WRONLY | O_CREAT | O_TRUNC, -1);
	char buf[4096];
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	while (bytes) {
		size_t n = bytes < sizeof(buf) ? bytes : sizeof(buf);
		write_checked(fd, path, buf, n);
		bytes -= n;
	}
	close_checked(fd, path);
}

/* ---- reuse: A and B get the same descriptor in turn --------------------- */

static int case_reuse(void)
{
	char *a = path_in_dir("A"), *b = path_in_dir("B");
	make_file(a, 5000);
	make_file(b, 300);
	char buf[4096];
	int lowest = -1; /* 3 when run alone; the arena may hold a number under record */
	for (int round = 0; round < 3; round++) {
		int fd = open_checked(a, O_RDONLY, lowest);
		lowest = fd;
		while (read_checked(fd, a, buf, sizeof(buf)) > 0)
			;
		close_checked(fd, a);
		fd = open_checked(b, O_RDONLY, lowest);
		while (read_checked(fd, b, buf, sizeof(buf)) > 0)
			;
		close_checked(fd, b);
	}
	return 0;
}

/* ---- reuse by two threads: one closes N, the other's open gets N -------- */

struct pair {
	pthread_barrier_t barrier;
	int rounds;
	int handoff;	 /* this round: the second thread waits for the close */
	int closed;	 /* round number whose close returned */
	int first_fd[2]; /* per round parity: the number the first thread closed */
	long reused;	 /* rounds in which the second thread got that number back */
};

static void *first_thread(void *arg)
{
	struct pair *p = arg;
	for (int i = 0; i < p->rounds; i++) {
		char name[64];
		snprintf(name, sizeof(name), "first-%d", i);
		char *path = path_in_dir(name);
		int fd = open_checked(path, O_WRONLY | O_CREAT | O_TRUNC, -1);
		write_checked(fd, path, name, strlen(name));
		__atomic_store_n(&p->first_fd[i & 1], fd, __ATOMIC_RELEASE);
		pthread_barrier_wait(&p->barrier);
		close_checked(fd, path);
		__atomic_store_n(&p->closed, i + 1, __ATOMIC_RELEASE);
		pthread_barrier_wait(&p->barrier);
		free(path);
	}
	return NULL;
}

static void *second_thread(void *arg)
{
	struct pair *p = arg;
	for (int i = 0; i < p->rounds; i++) {
		char name[64];
		snprintf(name, sizeof(name), "second-%d", i);
		char *path = path_in_dir(name);
		pthread_barrier_wait(&p->barrier);
		/* even rounds: right after the close returned; odd ones: racing it */
		if (!(i & 1))
			while (__atomic_load_n(&p->closed, __ATOMIC_ACQUIRE) != i + 1)
				;
		int fd = open_checked(path, O_WRONLY | O_CREAT | O_TRUNC, -1);
		int theirs = __atomic_load_n(&p->first_fd[i & 1], __ATOMIC_ACQUIRE);
		if (fd == theirs)
			p->reused++;
		else if (!(i & 1)) {
			fprintf(stderr, "io_cases: round %d: %d closed, the open got %d\n", i,
				theirs, fd);
			_exit(1);
		}
		write_checked(fd, path, name, strlen(name));
		write_checked(fd, path, "\n", 1);
		close_checked(fd, path);
		pthread_barrier_wait(&p->barrier);
		free(path);
	}
	return NULL;
}

static int case_reuse_threads(int rounds)
{
	struct pair p;
	memset(&p, 0, sizeof(p));
	p.rounds = rounds;
	pthread_barrier_init(&p.barrier, NULL, 2);
	pthread_t t1, t2;
	if (pthread_create(&t1, NULL, first_thread, &p) ||
	    pthread_create(&t2, NULL, second_thread, &p))
		die("pthread_create");
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	char line[128];
	int n = snprintf(line, sizeof(line), "reused %ld of %d rounds\n", p.reused, rounds);
	syscall(SYS_write, 2, line, (size_t)n);
	return 0;
}

/* ---- dup, dup2, dup3, fcntl(F_DUPFD) ------------------------------------ */

/* what /proc calls descriptor fd: the name a rundown gives it */
static char *proc_name(int fd)
{
	char link[64], *name = calloc(1, 4096);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (!name || syscall(SYS_readlinkat, AT_FDCWD, link, name, 4095) <= 0)
		die(link);
	return name;
}

/* The lowest descriptor from from up that is not open (asked of the kernel itself). */
static int free_from(int from)
{
	while (syscall(SYS_fcntl, from, F_GETFD) >= 0)
		from++;
	return from;
}

static int case_dup(void)
{
	char *f = path_in_dir("original"), *g = path_in_dir("onto-stdout");
	char *out = proc_name(1);
	int fd = open_checked(f, O_WRONLY | O_CREAT | O_TRUNC, -1);
	write_checked(fd, f, "original\n", 9);

	int d = dup(fd);
	if (d < 0)
		die("dup");
	expect("dup", "fd", num(fd), "path", str(f), "fd2", num(d), "result", num(d), NULL);
	write_checked(d, f, "through dup\n", 12);

	int t2 = free_from(d + 3);
	if (dup2(fd, t2) != t2)
		die("dup2");
	expect("dup", "fd", num(fd), "path", str(f), "fd2", num(t2), "result", num(t2), NULL);
	write_checked(t2, f, "through dup2\n", 13);

	int t3 = free_from(t2 + 1);
	if (dup3(fd, t3, O_CLOEXEC) != t3)
		die("dup3");
	expect("dup", "fd", num(fd), "path", str(f), "fd2", num(t3), "result", num(t3), NULL);
	write_checked(t3, f, "through dup3\n", 13);

	int want = free_from(t3 + 5);
	int fc = fcntl(fd, F_DUPFD, t3 + 5);
	if (fc != want)
		die("fcntl F_DUPFD");
	expect("dup", "fd", num(fd), "path", str(f), "fd2", num(fc), "result", num(fc), NULL);
	write_checked(fc, f, "through F_DUPFD\n", 16);

	want = free_from(fc + 10);
	int fcc = fcntl(fd, F_DUPFD_CLOEXEC, fc + 10);
	if (fcc != want)
		die("fcntl F_DUPFD_CLOEXEC");
	expect("dup", "fd", num(fd), "path", str(f), "fd2", num(fcc), "result", num(fcc), NULL);
	write_checked(fcc, f, "through F_DUPFD_CLOEXEC\n", 24);

	/* the original closed: its duplicates still name the file */
	close_checked(fd, f);
	write_checked(d, f, "after close\n", 12);
	write_checked(fc, f, "after close\n", 12);

	/* stdout before and after dup2 onto it: its own name, then the new file's */
	write_checked(1, out, "to stdout\n", 10);
	int gfd = open_checked(g, O_WRONLY | O_CREAT | O_TRUNC, fd);
	if (dup2(gfd, 1) != 1)
		die("dup2 onto stdout");
	expect("dup", "fd", num(gfd), "path", str(g), "fd2", num(1), "result", num(1), NULL);
	write_checked(1, g, "to the new stdout\n", 18);
	int n = printf("printf %d\n", 42);
	expect("fwrite", "fd", num(1), "path", str(g), "result", num(n), NULL);
	if (fflush(stdout) != 0)
		die("fflush");
	expect("fflush", "fd", num(1), "path", str(g), "result", num(0), NULL);
	close_checked(gfd, g);
	write_checked(1, g, "still the new stdout\n", 21);

	/* dup2 onto itself changes nothing */
	if (dup2(d, d) != d)
		die("dup2 onto itself");
	expect("dup", "fd", num(d), "path", str(f), "fd2", num(d), "result", num(d), NULL);
	write_checked(d, f, "dup2 onto itself\n", 17);
	close_checked(d, f);
	close_checked(t2, f);
	close_checked(t3, f);
	close_checked(fc, f);
	close_checked(fcc, f);
	return 0;
}

/* ---- fork, and exec of this program in the child ------------------------ */

static int case_fork(const char *self, const char *expect_path)
{
	char *f = path_in_dir("shared");
	int fd = open_checked(f, O_RDWR | O_CREAT | O_TRUNC, -1);
	write_checked(fd, f, "parent\n", 7);
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		/* the child's first event: its rundown names descriptor 3 */
		expect("rundown", "fd", num(fd), "path", str(f), NULL);
		write_checked(fd, f, "child\n", 6);
		if (fsync(fd) != 0)
			die("fsync");
		expect("fsync", "fd", num(fd), "path", str(f), "result", num(0), NULL);
		char fdtext[16];
		snprintf(fdtext, sizeof(fdtext), "%d", fd);
		execl(self, self, "exec-child", dir, expect_path, fdtext, f, (char *)NULL);
		die("execl");
	}
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "io_cases: the child failed (status %d)\n", status);
		return 1;
	}
	/* all of it, read back where the position is not */
	char buf[256];
	ssize_t r = pread(fd, buf, sizeof(buf), 0);
	char want[64];
	snprintf(want, sizeof(want), "parent\nchild\nexec\nexec stdio %d\n", fd);
	if (r != (ssize_t)strlen(want) || memcmp(buf, want, strlen(want)) != 0) {
		fprintf(stderr, "io_cases: the shared file holds %zd bytes, not what was written\n",
			r);
		return 1;
	}
	expect("pread", "fd", num(fd), "path", str(f), "size", num(sizeof(buf)), "result", num(r),
	       "offset", num(0), NULL);
	close_checked(fd, f);
	return 0;
}

/* after exec: descriptor fd (inherited, named path) written to, plainly and through stdio */
static int case_exec_child(int fd, const char *path)
{
	expect("rundown", "fd", num(fd), "path", str(path), NULL);
	write_checked(fd, path, "exec\n", 5);
	int copy = dup(fd);
	if (copy < 0)
		die("dup");
	expect("dup", "fd", num(fd), "path", str(path), "fd2", num(copy), "result", num(copy),
	       NULL);
	FILE *s = fdopen(copy, "a");
	if (!s)
		die("fdopen");
	/* fdopen is an fopen of a descriptor: named after it */
	expect("fopen", "fd", num(copy), "path", str(path), "result", num(copy), NULL);
	int n = fprintf(s, "exec stdio %d\n", fd);
	expect("fwrite", "fd", num(copy), "path", str(path), "size", num(n), "result", num(n),
	       NULL);
	if (fclose(s) != 0)
		die("fclose");
	expect("fclose", "fd", num(copy), "path", str(path), "result", num(0), NULL);
	return 0;
}

/*
 * ---- children that trace one call, then exec at once ----------------------
 * Each child writes once and execs this program, which writes once more:
 * the child's arena lives for a moment before the new image sets it aside
 * under another name, likely before `ringtrace record` has looked at the
 * directory.  Its rundown and write must be in the trace all the same.
 */
#define FORK_EXEC_CHILDREN 32

static int case_fork_exec(const char *self, const char *expect_path)
{
	char *f = path_in_dir("fork-exec");
	int fd = open_checked(f, O_RDWR | O_CREAT | O_TRUNC, -1);
	for (int i = 0; i < FORK_EXEC_CHILDREN; i++) {
		pid_t child = fork();
		if (child < 0)
			die("fork");
		if (child == 0) {
			expect("rundown", "fd", num(fd), "path", str(f), NULL);
			write_checked(fd, f, "fork\n", 5);
			char fdtext[16];
			snprintf(fdtext, sizeof(fdtext), "%d", fd);
			execl(self, self, "exec-write", dir, expect_path, fdtext, f, (char *)NULL);
			die("execl");
		}
		int status;
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			die("the child");
	}
	char buf[512];
	ssize_t r = pread(fd, buf, sizeof(buf), 0);
	expect("pread", "fd", num(fd), "path", str(f), "size", num(sizeof(buf)), "result", num(r),
	       "offset", num(0), NULL);
	close_checked(fd, f);
	if (r != FORK_EXEC_CHILDREN * 10) {
		fprintf(stderr, "io_cases: %s holds %zd bytes, not %d\n", f, r,
			FORK_EXEC_CHILDREN * 10);
		return 1;
	}
	return 0;
}

/* after exec: one write to the inherited descriptor fd, named path */
static int case_exec_write(int fd, const char *path)
{
	write_checked(fd, path, "exec\n", 5);
	return 0;
}

/*
 * ---- children whose pid goes through several traced images at once -------
 * Each child writes once and execs this program, which writes and execs
 * again, EXEC_CHAIN_IMAGES images in all, each as soon as it can: the
 * second exec sets aside the arena the first one set aside, most likely
 * before `ringtrace record` has attached it.  Children run a batch at a
 * time, so that several chains race the same scan.  Every image's write
 * must be in the trace.
 */
#define EXEC_CHAIN_CHILDREN 48
#define EXEC_CHAIN_BATCH 8
#define EXEC_CHAIN_IMAGES 4
#define EXEC_CHAIN_MARK 7 /* "image N\n" without its space */

/* image's write to fd (named path), then the next image if there is one */
static int exec_chain_step(const char *self, const char *expect_path, int fd, const char *path,
			   int image)
{
	char mark[16];
	snprintf(mark, sizeof(mark), "image%d\n", image);
	write_checked(fd, path, mark, EXEC_CHAIN_MARK);
	if (image + 1 == EXEC_CHAIN_IMAGES)
		return 0;
	char fdtext[16], next[16];
	snprintf(fdtext, sizeof(fdtext), "%d", fd);
	snprintf(next, sizeof(next), "%d", image + 1);
	execl(self, self, "exec-chain-next", dir, expect_path, fdtext, path, next, (char *)NULL);
	die("execl");
}

static int case_exec_chain(const char *self, const char *expect_path)
{
	char *f = path_in_dir("exec-chain");
	int fd = open_checked(f, O_RDWR | O_CREAT | O_TRUNC, -1);
	for (int i = 0; i < EXEC_CHAIN_CHILDREN; i += EXEC_CHAIN_BATCH) {
		pid_t child[EXEC_CHAIN_BATCH];
		for (int k = 0; k < EXEC_CHAIN_BATCH; k++) {
			child[k] = fork();
			if (child[k] < 0)
				die("fork");
			if (child[k] == 0) {
				expect("rundown", "fd", num(fd), "path", str(f), NULL);
				_exit(exec_chain_step(self, expect_path, fd, f, 0));
			}
		}
		for (int k = 0; k < EXEC_CHAIN_BATCH; k++) {
			int status;
			if (waitpid(child[k], &status, 0) != child[k] || !WIFEXITED(status) ||
			    WEXITSTATUS(status) != 0)
				die("a child");
		}
	}
	char buf[EXEC_CHAIN_CHILDREN * EXEC_CHAIN_IMAGES * EXEC_CHAIN_MARK + 64];
	ssize_t r = pread(fd, buf, sizeof(buf), 0);
	expect("pread", "fd", num(fd), "path", str(f), "size", num(sizeof(buf)), "result", num(r),
	       "offset", num(0), NULL);
	close_checked(fd, f);
	if (r != EXEC_CHAIN_CHILDREN * EXEC_CHAIN_IMAGES * EXEC_CHAIN_MARK) {
		fprintf(stderr, "io_cases: %s holds %zd bytes, not %d\n", f, r,
			EXEC_CHAIN_CHILDREN * EXEC_CHAIN_IMAGES * EXEC_CHAIN_MARK);
		return 1;
	}
	return 0;
}

/*
 * ---- close_range at start, as daemons do, then fork -----------------------
 * The program closes every descriptor from 3 up (the recording library's
 * own among them, if it keeps one there), opens 16 files, which take the
 * lowest numbers (whatever number the library's was, under 19, one of them
 * has it now: descriptors the test's runner left open do not hide it), and
 * forks: the child's writes must reach the files, and the child's rundown
 * must name them.
 */
#define CLOSE_RANGE_FILES 16

static int case_close_range(void)
{
	if (close_range(3, EXPECT_FD - 1, 0) != 0)
		die("close_range");
	char *f[CLOSE_RANGE_FILES];
	int fd[CLOSE_RANGE_FILES];
	for (int i = 0; i < CLOSE_RANGE_FILES; i++) {
		char name[32];
		snprintf(name, sizeof(name), "after-close-range-%d", i);
		f[i] = path_in_dir(name);
		fd[i] = open_checked(f[i], O_RDWR | O_CREAT | O_TRUNC, 3 + i);
		write_checked(fd[i], f[i], "parent\n", 7);
	}
	pid_t child = fork();
	if (child < 0)
		die("fork");
	if (child == 0) {
		for (int i = 0; i < CLOSE_RANGE_FILES; i++)
			expect("rundown", "fd", num(fd[i]), "path", str(f[i]), NULL);
		for (int i = 0; i < CLOSE_RANGE_FILES; i++)
			write_checked(fd[i], f[i], "child\n", 6);
		_exit(0);
	}
	int status;
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		die("the child");
	int bad = 0;
	for (int i = 0; i < CLOSE_RANGE_FILES; i++) {
		char buf[64];
		ssize_t r = pread(fd[i], buf, sizeof(buf), 0);
		expect("pread", "fd", num(fd[i]), "path", str(f[i]), "size", num(sizeof(buf)),
		       "result", num(r), "offset", num(0), NULL);
		close_checked(fd[i], f[i]);
		if (r != 13 || memcmp(buf, "parent\nchild\n", 13) != 0) {
			char line[256];
			int n = snprintf(line, sizeof(line),
					 "io_cases: %s holds %zd bytes, not the parent's and the "
					 "child's 13\n",
					 f[i], r);
			syscall(SYS_write, 2, line, (size_t)n);
			bad = 1;
		}
	}
	return bad;
}

/* ---- pipes and sockets: named as /proc names them ----------------------- */

static void kernel_name(int fd, const char *kind, char *out, size_t size)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		die("fstat");
	snprintf(out, size, "%s:[%lu]", kind, (unsigned long)st.st_ino);
}

static void pair_traffic(int w, int r, const char *kind)
{
	char wname[64], rname[64], buf[64];
	kernel_name(w, kind, wname, sizeof(wname));
	kernel_name(r, kind, rname, sizeof(rname));
	/* first sight of each: a named event just before the call */
	ssize_t n = write(w, "hello through it", 16);
	if (n != 16)
		die("write");
	expect("named", "fd", num(w), "path", str(wname), NULL);
	expect_transfer("write", w, wname, 16, 16);
	n = read(r, buf, sizeof(buf));
	if (n != 16)
		die("read");
	expect("named", "fd", num(r), "path", str(rname), NULL);
	expect_transfer("read", r, rname, sizeof(buf), 16);
	write_checked(w, wname, "again", 5);
	read_checked(r, rname, buf, 5);
	close_checked(w, wname);
	close_checked(r, rname);
}

static int case_pipes(void)
{
	int p[2], s[2];
	if (pipe(p) != 0)
		die("pipe");
	pair_traffic(p[1], p[0], "pipe");
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, s) != 0)
		die("socketpair");
	pair_traffic(s[0], s[1], "socket");
	/* a descriptor closed before any other call: named by the close */
	if (pipe(p) != 0)
		die("pipe");
	char name[64];
	kernel_name(p[0], "pipe", name, sizeof(name));
	if (close(p[0]) != 0)
		die("close");
	expect("named", "fd", num(p[0]), "path", str(name), NULL);
	expect_close(p[0], name);
	kernel_name(p[1], "pipe", name, sizeof(name));
	if (close(p[1]) != 0)
		die("close");
	expect("named", "fd", num(p[1]), "path", str(name), NULL);
	expect_close(p[1], name);
	return 0;
}

/*
 * ---- a signal handler's write while its thread is inside a read -------
 *
 * The handler's record takes the place in the ring that the read's would
 * have had when the read started: a wrapper that took that place before
 * the call, and wrote there after it, would lose the handler's record.
 * Both must be in the trace, the handler's first.
 */

static struct {
	int in;		      /* the pipe's read end */
	int out;	      /* the file the handler writes */
	volatile long tid;    /* the reader's, once it is about to block */
	volatile int handled; /* 1: the handler's write did all it asked; -1: it did not */
} blocked = {-1, -1, 0, 0};

static void write_in_handler(int sig)
{
	(void)sig;
	int err = errno;
	blocked.handled = write(blocked.out, "signal\n", 7) == 7 ? 1 : -1;
	errno = err;
}

/*
 * Read the one byte of the pipe's read end fd, called name: its first
 * sight, named then, so that the reads after it are the common case.
 */
static void first_read(int fd, const char *name)
{
	char byte;
	if (read(fd, &byte, 1) != 1)
		die("read");
	expect("named", "fd", num(fd), "path", str(name), NULL);
	expect_transfer("read", fd, name, 1, 1);
}

static void *blocked_reader(void *arg)
{
	const char **names = arg; /* the pipe's read end, the file */
	char buf[8];
	first_read(blocked.in, names[0]);
	blocked.tid = tid();
	ssize_t n = read(blocked.in, buf, 4); /* blocks until the handler has run */
	if (n != 4)
		die("the blocked read");
	if (blocked.handled != 1) {
		fprintf(stderr, "io_cases: the handler did not write during the read\n");
		_exit(1);
	}
	expect_transfer("write", blocked.out, names[1], 7, 7);
	expect_transfer("read", blocked.in, names[0], 4, 4);
	return NULL;
}

/* Whether thread tid is inside read(fd), as /proc says, read with raw calls (untraced). */
static int in_read(long thread, int fd)
{
	char path[96], line[128], want[48];
	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", thread);
	long f = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		die(path);
	long n = syscall(SYS_read, (int)f, line, sizeof(line) - 1);
	syscall(SYS_close, (int)f);
	if (n <= 0)
		return 0;
	line[n] = '\0';
	int w = snprintf(want, sizeof(want), "%d 0x%x ", SYS_read, fd);
	return strncmp(line, want, (size_t)w) == 0;
}

static void nap(long ns)
{
	struct timespec t = {0, ns};
	syscall(SYS_nanosleep, &t, NULL);
}

/* Until thread tid (once not 0) is inside read(fd), for up to 20 s. */
static void wait_in_read(volatile long *thread, int fd)
{
	for (int waited = 0; !*thread || !in_read(*thread, fd); waited++) {
		if (waited > 20000) {
			fprintf(stderr, "io_cases: the reader never blocked in its read\n");
			_exit(1);
		}
		nap(1000000);
	}
}

/*
 * A pipe p with one byte in it, written by a traced call; the names of
 * its ends as /proc gives them, into in_name and out_name (64 bytes each).
 */
static void pipe_with_a_byte(int p[2], char *in_name, char *out_name)
{
	if (pipe(p) != 0)
		die("pipe");
	kernel_name(p[0], "pipe", in_name, 64);
	kernel_name(p[1], "pipe", out_name, 64);
	if (write(p[1], "x", 1) != 1)
		die("write");
	expect("named", "fd", num(p[1]), "path", str(out_name), NULL);
	expect_transfer("write", p[1], out_name, 1, 1);
}

static int case_signal(void)
{
	char *out = path_in_dir("signal");
	blocked.out = open_checked(out, O_WRONLY | O_CREAT | O_TRUNC, -1);
	int p[2];
	char in_name[64], out_name[64];
	pipe_with_a_byte(p, in_name, out_name);
	blocked.in = p[0];
	/* SA_RESTART: the read goes on after the handler, and then succeeds */
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = write_in_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		die("sigaction");
	const char *names[2] = {in_name, out};
	pthread_t reader;
	if (pthread_create(&reader, NULL, blocked_reader, names))
		die("pthread_create");
	/* the signal only once the reader is inside the read */
	wait_in_read(&blocked.tid, p[0]);
	if (pthread_kill(reader, SIGUSR1) != 0)
		die("pthread_kill");
	for (int waited = 0; !blocked.handled; waited++) {
		if (waited > 20000) {
			fprintf(stderr, "io_cases: the handler never ran\n");
			_exit(1);
		}
		nap(1000000);
	}
	write_checked(p[1], out_name, "abcd", 4);
	pthread_join(reader, NULL);
	close_checked(p[1], out_name);
	close_checked(p[0], in_name);
	close_checked(blocked.out, out);
	free(out);
	return 0;
}

/*
 * ---- pthread_cancel of itself: read is still a cancellation point -----
 *
 * The process has one thread, but the C library then acts on the
 * cancellation at its next cancellation point: the read below never
 * returns, and the thread ends in its cleanup handler.  The interposer
 * makes some system calls itself while the C library would (one thread);
 * it must not do so here.  The program reads __libc_single_threaded, as
 * libstdc++'s inline code does, so that it has its own copy of it, which
 * pthread_cancel does not clear: the interposer must not go by that one.
 */

/* pthread_cleanup_push wants one: the thread only has to end in it */
static void cancelled(void *arg)
{
	(void)arg;
}

static int case_cancel_self(void)
{
	int p[2];
	char in_name[64], out_name[64];
	pipe_with_a_byte(p, in_name, out_name);
	if (!__libc_single_threaded) {
		fprintf(stderr, "io_cases: one thread, but __libc_single_threaded is 0\n");
		_exit(1);
	}
	pthread_cleanup_push(cancelled, NULL);
	if (pthread_cancel(pthread_self()) != 0)
		die("pthread_cancel");
	char buf[4];
	ssize_t n = read(p[0], buf, sizeof(buf));
	fprintf(stderr, "io_cases: read returned %zd: it was no cancellation point\n", n);
	_exit(1);
	pthread_cleanup_pop(0);
	return 1;
}

/*
 * ---- pthread_cancel of a thread blocked in read ------------------------
 *
 * With two threads the C library's read is a cancellation point that acts
 * while the call blocks: the interposer must call it, not make the system
 * call itself, or the cancelled thread would wait in the read for ever.
 */

struct blocked_cancel {
	int in;
	const char *name;
	volatile long tid;
};

static void *read_until_cancelled(void *arg)
{
	struct blocked_cancel *b = arg;
	char buf[8];
	first_read(b->in, b->name);
	b->tid = tid();
	ssize_t n = read(b->in, buf, sizeof(buf));
	fprintf(stderr, "io_cases: the read returned %zd: it was not cancelled\n", n);
	_exit(1);
}

static int case_cancel_blocked(void)
{
	int p[2];
	char in_name[64], out_name[64];
	pipe_with_a_byte(p, in_name, out_name);
	struct blocked_cancel b = {p[0], in_name, 0};
	pthread_t reader;
	if (pthread_create(&reader, NULL, read_until_cancelled, &b))
		die("pthread_create");
	wait_in_read(&b.tid, p[0]);
	if (pthread_cancel(reader) != 0)
		die("pthread_cancel");
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;
	void *result = NULL;
	int err = pthread_timedjoin_np(reader, &result, &until);
	if (err != 0 || result != PTHREAD_CANCELED) {
		fprintf(stderr, "io_cases: the blocked read was not cancelled (%s)\n",
			err ? strerror(err) : "it returned");
		_exit(1);
	}
	close_checked(p[1], out_name);
	close_checked(p[0], in_name);
	return 0;
}

/* ---- failures: -errno, the errno and its name, the path ----------------- */

static void expect_failure(const char *op, int fd, const char *path, int err, const char *name)
{
	if (path)
		expect(op, "fd", num(fd), "path", str(path), "result", num(-err), "errno", num(err),
		       "error", str(name), NULL);
	else
		expect(op, "fd", num(fd), "path_unknown", "n:true", "path_why", "s:unseen",
		       "result", num(-err), "errno", num(err), "error", str(name), NULL);
}

static int case_errors(void)
{
	char *missing = path_in_dir("no-such-dir/missing");
	if (open(missing, O_RDONLY) != -1 || errno != ENOENT)
		die("open of a missing file");
	expect("open", "path", str(missing), "result", num(-ENOENT), "errno", num(ENOENT), "error",
	       str("ENOENT"), NULL);

	char *ro = path_in_dir("read-only");
	make_file(ro, 10);
	if (open(ro, O_WRONLY | O_CREAT | O_EXCL, 0644) != -1 || errno != EEXIST)
		die("open O_EXCL of an existing file");
	expect("open", "path", str(ro), "result", num(-EEXIST), "errno", num(EEXIST), "error",
	       str("EEXIST"), NULL);

	int fd = open_checked(ro, O_RDONLY, -1);
	if (write(fd, "x", 1) != -1 || errno != EBADF)
		die("write to a read-only descriptor");
	expect_failure("write", fd, ro, EBADF, "EBADF");
	if (lseek(fd, -5, SEEK_SET) != -1 || errno != EINVAL)
		die("lseek before the start");
	expect_failure("lseek", fd, ro, EINVAL, "EINVAL");
	close_checked(fd, ro);

	/* a descriptor never open: no name to give */
	char buf[8];
	if (read(99, buf, sizeof(buf)) != -1 || errno != EBADF)
		die("read of descriptor 99");
	expect_failure("read", 99, NULL, EBADF, "EBADF");
	if (close(99) != -1 || errno != EBADF)
		die("close of descriptor 99");
	expect_failure("close", 99, NULL, EBADF, "EBADF");

	char *gone = path_in_dir("never-there");
	if (unlink(gone) != -1 || errno != ENOENT)
		die("unlink of a missing file");
	expect("unlink", "path", str(gone), "result", num(-ENOENT), "errno", num(ENOENT), "error",
	       str("ENOENT"), NULL);
	if (fopen(missing, "r") != NULL || errno != ENOENT)
		die("fopen of a missing file");
	expect("fopen", "path", str(missing), "result", num(-ENOENT), "errno", num(ENOENT), "error",
	       str("ENOENT"), NULL);
	return 0;
}

/* ---- stdio: bytes as the program handed them over or got them back ------ */

static int case_stdio(void)
{
	char *f = path_in_dir("lines.txt");
	FILE *s = fopen(f, "w");
	if (!s)
		die("fopen w");
	int fd = fileno(s);
	expect("fopen", "fd", num(fd), "path", str(f), "result", num(fd), NULL);
	long written = 0;
	for (int i = 0; i < 40; i++) {
		int n = fprintf(s, "line %d of the file%s\n", i,
				i % 3 ? "" : ", longer than the buffer fgets is given: two parts");
		if (n < 0)
			die("fprintf");
		expect("fwrite", "fd", num(fd), "path", str(f), "size", num(n), "result", num(n),
		       NULL);
		written += n;
	}
	char block[3000];
	memset(block, 'z', sizeof(block));
	block[sizeof(block) - 1] = '\n';
	size_t items = fwrite(block, 100, 30, s);
	if (items != 30)
		die("fwrite");
	expect("fwrite", "fd", num(fd), "path", str(f), "size", num(3000), "result", num(3000),
	       NULL);
	written += 3000;
	if (fputs("the last line\n", s) < 0)
		die("fputs");
	expect("fwrite", "fd", num(fd), "path", str(f), "size", num(14), "result", num(14), NULL);
	written += 14;
	if (fclose(s) != 0)
		die("fclose");
	expect("fclose", "fd", num(fd), "path", str(f), "result", num(0), NULL);

	s = fopen(f, "r");
	if (!s)
		die("fopen r");
	fd = fileno(s);
	expect("fopen", "fd", num(fd), "path", str(f), "result", num(fd), NULL);
	long got = 0;
	char line[64];
	/* fgets of a buffer shorter than some lines: parts of lines */
	for (int i = 0; i < 10; i++) {
		if (!fgets(line, sizeof(line), s))
			die("fgets");
		long n = (long)strlen(line);
		expect("fread", "fd", num(fd), "path", str(f), "size", num(sizeof(line)), "result",
		       num(n), NULL);
		got += n;
	}
	/*
	 * getline: built with optimisation (as this program always is), glibc's
	 * <stdio.h> makes it an inline call of __getdelim; getdelim is called as is
	 */
	char *buf = NULL;
	size_t cap = 0;
	for (int i = 0; i < 10; i++) {
		ssize_t n = i < 7 ? getline(&buf, &cap, s) : getdelim(&buf, &cap, '\n', s);
		if (n <= 0)
			die("getline");
		expect("fread", "fd", num(fd), "path", str(f), "result", num(n), NULL);
		got += n;
	}
	for (;;) {
		size_t n = fread(block, 1, 1000, s);
		expect("fread", "fd", num(fd), "path", str(f), "size", num(1000), "result",
		       num((long)n), NULL);
		got += (long)n;
		if (n < 1000)
			break;
	}
	ssize_t end = getline(&buf, &cap, s);
	if (end != -1)
		die("getline at the end");
	expect("fread", "fd", num(fd), "path", str(f), "result", num(0), NULL);
	if (fclose(s) != 0)
		die("fclose");
	expect("fclose", "fd", num(fd), "path", str(f), "result", num(0), NULL);
	free(buf);
	if (got != written) {
		fprintf(stderr, "io_cases: read back %ld bytes of %ld\n", got, written);
		return 1;
	}
	char totals[128];
	int n =
	    snprintf(totals, sizeof(totals), "stdio totals: written %ld read %ld\n", written, got);
	syscall(SYS_write, 2, totals, (size_t)n);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: io_cases CASE DIR EXPECT [ARGS...]\n");
		return 2;
	}
	const char *which = argv[1];
	dir = argv[2];
	expect_open(argv[3]);
	if (!strcmp(which, "reuse"))
		return case_reuse();
	if (!strcmp(which, "reuse-threads"))
		return case_reuse_threads(argc > 4 ? atoi(argv[4]) : 2000);
	if (!strcmp(which, "dup"))
		return case_dup();
	if (!strcmp(which, "fork"))
		return case_fork(argv[0], argv[3]);
	if (!strcmp(which, "exec-child") && argc == 6)
		return case_exec_child(atoi(argv[4]), argv[5]);
	if (!strcmp(which, "fork-exec"))
		return case_fork_exec(argv[0], argv[3]);
	if (!strcmp(which, "exec-write") && argc == 6)
		return case_exec_write(atoi(argv[4]), argv[5]);
	if (!strcmp(which, "exec-chain"))
		return case_exec_chain(argv[0], argv[3]);
	if (!strcmp(which, "exec-chain-next") && argc == 7)
		return exec_chain_step(argv[0], argv[3], atoi(argv[4]), argv[5], atoi(argv[6]));
	if (!strcmp(which, "close-range"))
		return case_close_range();
	if (!strcmp(which, "pipes"))
		return case_pipes();
	if (!strcmp(which, "errors"))
		return case_errors();
	if (!strcmp(which, "signal"))
		return case_signal();
	if (!strcmp(which, "cancel-self"))
		return case_cancel_self();
	if (!strcmp(which, "cancel-blocked"))
		return case_cancel_blocked();
	if (!strcmp(which, "stdio"))
		return case_stdio();
	fprintf(stderr, "io_cases: unknown case %s\n", which);
	return 2;
}
