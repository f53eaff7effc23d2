/*
 * interpose_start.c - turning the interposer on, and what its wrappers
 * share.  libringtrace_io.so is meant to be preloaded (`ringtrace record
 * --io`); its constructor starts tracing so that the descriptor rundown
 * happens before the program runs.  Calls made before it ran (other
 * libraries' constructors) go by unrecorded.
 */
#include "record/io/interpose.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* a page of its own, so that the known bits of the common descriptors share it */
struct rt_io_hot rt_io_hot __attribute__((aligned(4096)));

/*
 * A function dlsym(RTLD_NEXT) finds no definition of after the interposer's
 * (a C library without it, or a dlsym another preloaded library replaced)
 * is called through a stand-in: the call fails as the function fails, with
 * errno ENOSYS, and the first such call says so on stderr.  The stand-ins
 * read no argument and return their failure in the one return register
 * (as every ABI the interposer is built for passes them): -1 (also EOF and
 * MAP_FAILED), or 0 for the functions that fail with NULL and for fread
 * and fwrite (no item).
 */
/* clang-format off */
static const char *const fails_with_zero[] = {
	"fopen", "fopen64", "fdopen", "freopen", "freopen64",
	"fgets", "fgets_unlocked", "__fgets_chk", "__fgets_unlocked_chk",
	"fread", "fread_unlocked", "__fread_chk", "__fread_unlocked_chk",
	"fwrite", "fwrite_unlocked",
};
/* clang-format on */

static int missing_said;

static __attribute__((cold, noinline)) long missing(const char *name)
{
	if (!__atomic_exchange_n(&missing_said, 1, __ATOMIC_RELAXED)) {
		/* one system call: the C library's write may be the one missing */
		const char *parts[] = {"ringtrace: libringtrace_io: no ", name,
				       " found after the interposer (dlsym RTLD_NEXT): "
				       "its calls fail with ENOSYS\n"};
		char line[256];
		size_t n = 0;
		for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
			size_t len = strlen(parts[i]);
			if (len > sizeof(line) - n)
				len = sizeof(line) - n;
			memcpy(line + n, parts[i], len);
			n += len;
		}
		syscall(SYS_write, 2, line, n);
	}
	errno = ENOSYS;
	for (size_t i = 0; i < sizeof(fails_with_zero) / sizeof(fails_with_zero[0]); i++)
		if (strcmp(name, fails_with_zero[i]) == 0)
			return 0;
	return -1;
}

#define RT_IO_MISSING_DEFINE(f)                                                                    \
	static __attribute__((cold)) long missing_##f(void)                                        \
	{                                                                                          \
		return missing(#f);                                                                \
	}
RT_IO_REAL_FUNCTIONS(RT_IO_MISSING_DEFINE)
#undef RT_IO_MISSING_DEFINE

static const struct {
	const char *name;
	long (*call)(void);
} missing_stand_ins[] = {
#define RT_IO_MISSING_ENTRY(f) {#f, missing_##f},
    RT_IO_REAL_FUNCTIONS(RT_IO_MISSING_ENTRY)
#undef RT_IO_MISSING_ENTRY
};

void *rt_io_resolve(void **slot, const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);
	for (size_t i = 0; !p && i < sizeof(missing_stand_ins) / sizeof(missing_stand_ins[0]); i++)
		if (strcmp(name, missing_stand_ins[i].name) == 0)
			p = (void *)missing_stand_ins[i].call;
	__atomic_store_n(slot, p, __ATOMIC_RELAXED);
	return p;
}

void rt_io_resolve_all(void)
{
#define RT_IO_REAL_RESOLVE(f)                                                                      \
	if (!__atomic_load_n(&rt_io_hot.real_##f, __ATOMIC_RELAXED))                               \
		rt_io_resolve(&rt_io_hot.real_##f, #f);
	RT_IO_REAL_FUNCTIONS(RT_IO_REAL_RESOLVE)
#undef RT_IO_REAL_RESOLVE
}

void rt_io_done_slow(struct rt_io_call *c, int64_t r)
{
	int err = errno;
	c->result = r < 0 ? -(int64_t)err : r;
	ringtrace__io_record(c);
	/* the site is registered by the first record written */
	if (!__atomic_load_n(&rt_io_hot.site_id, __ATOMIC_RELAXED))
		__atomic_store_n(&rt_io_hot.site_id,
				 __atomic_load_n(&ringtrace__io_site.id, __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
	errno = err;
}

int rt_io_skip_slow(int active)
{
	if (active != 2 || ringtrace__tls_writer.internal)
		return 1;
	/* the first call in a forked child: its arena and rundown come first */
	int expected = 2;
	if (__atomic_compare_exchange_n(&rt_io_hot.active, &expected, 1, 0, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED))
		ringtrace__io_start();
	return 0;
}

static void rt_io_after_fork_in_child(void)
{
	if (__atomic_load_n(&rt_io_hot.active, __ATOMIC_RELAXED))
		__atomic_store_n(&rt_io_hot.active, 2, __ATOMIC_RELAXED);
}

__attribute__((constructor)) static void rt_io_constructor(void)
{
	pthread_atfork(NULL, NULL, rt_io_after_fork_in_child);
	rt_io_resolve_all();
	rt_io_hot.one_thread = rt_io_libc_one_thread();
	rt_io_hot.writer_offset =
	    (char *)&ringtrace__tls_writer - (char *)__builtin_thread_pointer();
	ringtrace__io_known_bits_at(rt_io_hot.known);
	ringtrace__io_start();
	__atomic_store_n(&rt_io_hot.active, 1, __ATOMIC_RELEASE);
}

uint32_t rt_io_mode_flags(const char *mode)
{
	if (!mode)
		return 0;
	uint32_t flags = mode[0] == 'r'	  ? O_RDONLY
			 : mode[0] == 'w' ? O_WRONLY | O_CREAT | O_TRUNC
			 : mode[0] == 'a' ? O_WRONLY | O_CREAT | O_APPEND
					  : 0;
	if (strchr(mode, '+'))
		flags = (flags & ~(uint32_t)O_ACCMODE) | O_RDWR;
	return flags;
}

int rt_io_stream_fd(FILE *f)
{
	if (!f)
		return -1;
	int err = errno;
	int fd = fileno_unlocked(f);
	errno = err;
	return fd;
}

/* Append n bytes of s to out at *at, keeping room for nothing more than size. */
static void append(char *out, uint32_t size, uint32_t *at, const char *s, size_t n)
{
	if (n > size - *at)
		n = size - *at;
	memcpy(out + *at, s, n);
	*at += (uint32_t)n;
}

uint32_t rt_io_absolute(int dirfd, const char *path, char *out, uint32_t size)
{
	if (!path)
		return 0;
	char base[RT_IO_PATH_BUF];
	long n = 0;
	if (path[0] != '/') {
		if (dirfd == AT_FDCWD) {
			n = syscall(SYS_getcwd, base, sizeof(base));
			n = n > 0 ? n - 1 : 0; /* the system call counts the NUL */
		} else {
			char link[32];
			snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
			n = syscall(SYS_readlinkat, AT_FDCWD, link, base, sizeof(base));
		}
		if (n <= 0 || base[0] != '/')
			n = 0;
	}
	/* base then path, one component at a time: "." dropped, ".." takes one back */
	uint32_t at = 0;
	const char *parts[2] = {n ? base : "", path};
	size_t lengths[2] = {(size_t)n, strlen(path)};
	if (!n && path[0] != '/') {
		append(out, size, &at, path, lengths[1]); /* nothing to place it against */
		return at;
	}
	for (int k = 0; k < 2; k++) {
		const char *p = parts[k], *end = p + lengths[k];
		while (p < end) {
			while (p < end && *p == '/')
				p++;
			const char *c = p;
			while (p < end && *p != '/')
				p++;
			size_t len = (size_t)(p - c);
			if (len == 0 || (len == 1 && c[0] == '.'))
				continue;
			if (len == 2 && c[0] == '.' && c[1] == '.') {
				while (at > 0 && out[at - 1] != '/')
					at--;
				if (at > 0)
					at--;
				continue;
			}
			append(out, size, &at, "/", 1);
			append(out, size, &at, c, len);
		}
	}
	if (at == 0)
		append(out, size, &at, "/", 1);
	return at;
}
