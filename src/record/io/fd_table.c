/*
 * fd_table.c - the arena's descriptor table: the name each descriptor has
 * now, kept outside the rings so that a reader who starts late still names
 * descriptors opened before it (ringtrace/format.h, struct rt_fd_entry).
 *
 * Any thread may write any entry, so an entry is written under its
 * sequence count, taken with a compare-and-swap from even to odd.  The
 * kernel hands a descriptor number to one open at a time, so two writers
 * of one entry meet only when the program races with itself (dup2 onto a
 * descriptor another thread closes) or a signal handler interrupts a write
 * of the same entry: the loser leaves the entry alone rather than wait,
 * and readers still have the records.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/io/fd_table.h"
#include "record/record.h"

static struct rt_fd_entry *entry_of(int fd)
{
	if (!rt_arena.fds || fd < 0 || (uint32_t)fd >= rt_arena.header->fd_capacity)
		return NULL;
	return &rt_arena.fds[fd];
}

/* A name the table could not keep: fd lies at or above its capacity. */
static void count_beyond(int fd)
{
	if (rt_arena.fds && fd >= 0)
		__atomic_fetch_add(&rt_arena.header->fds_beyond, 1, __ATOMIC_RELAXED);
}

/* Take the entry for writing: its old (even) count, or 0 when someone else is inside. */
static uint32_t begin_write(struct rt_fd_entry *e)
{
	uint32_t seq = __atomic_load_n(&e->sequence, __ATOMIC_RELAXED);
	if (seq & 1)
		return 0;
	if (!__atomic_compare_exchange_n(&e->sequence, &seq, seq + 1, 0, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return 0;
	/* publishes: the odd count, before any field changes */
	RT_FENCE_RELEASE();
	return seq + 2; /* the count to end with: even, never 0 */
}

static void end_write(struct rt_fd_entry *e, uint32_t next)
{
	/* publishes: the fields, to readers that check the count after copying */
	__atomic_store_n(&e->sequence, next, __ATOMIC_RELEASE);
}

static uint64_t own_known[RT_FD_KNOWN_WORDS];
RT_EXPORT uint64_t *ringtrace__fd_known = own_known;

RT_EXPORT void ringtrace__io_known_bits_at(uint64_t *bits)
{
	uint64_t *old = __atomic_load_n(&ringtrace__fd_known, __ATOMIC_RELAXED);
	if (bits == old)
		return;
	for (size_t i = 0; i < RT_FD_KNOWN_WORDS; i++)
		__atomic_store_n(&bits[i], __atomic_load_n(&old[i], __ATOMIC_RELAXED),
				 __ATOMIC_RELAXED);
	__atomic_store_n(&ringtrace__fd_known, bits, __ATOMIC_RELEASE);
}

static void set_known(int fd, int known)
{
	if (fd < 0 || fd >= (int)RT_FD_CAPACITY_MAX)
		return;
	uint64_t bit = 1ull << (fd % 64);
	uint64_t *bits = __atomic_load_n(&ringtrace__fd_known, __ATOMIC_ACQUIRE);
	if (known)
		__atomic_fetch_or(&bits[fd / 64], bit, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&bits[fd / 64], ~bit, __ATOMIC_RELAXED);
}

void rt_fd_table_forget(void)
{
	uint64_t *bits = __atomic_load_n(&ringtrace__fd_known, __ATOMIC_ACQUIRE);
	for (size_t i = 0; i < RT_FD_KNOWN_WORDS; i++)
		__atomic_store_n(&bits[i], 0, __ATOMIC_RELAXED);
}

int rt_fd_table_known_slow(int fd)
{
	if (!rt_arena.fds || fd < 0 || (uint32_t)fd >= rt_arena.header->fd_capacity)
		return 1; /* nothing to name it in: the records alone */
	return __atomic_load_n(&rt_arena.fds[fd].state, __ATOMIC_RELAXED) == RT_FD_OPEN;
}

void rt_fd_table_set(int fd, uint8_t op, uint64_t counter, uint32_t open_flags, const char *name,
		     uint32_t length)
{
	struct rt_fd_entry *e = entry_of(fd);
	if (!e) {
		count_beyond(fd);
		return;
	}
	uint32_t next = begin_write(e);
	if (!next)
		return;
	uint32_t keep = length < RT_FD_NAME_MAX - 1 ? length : RT_FD_NAME_MAX - 1;
	__atomic_store_n(&e->state, (uint32_t)RT_FD_OPEN, __ATOMIC_RELAXED);
	e->counter = counter;
	e->closed_counter = 0;
	e->open_flags = open_flags;
	e->name_length = (uint16_t)keep;
	e->op = op;
	e->flags = keep < length ? RT_FD_F_NAME_CUT : 0;
	memcpy(e->name, name, keep);
	e->name[keep] = 0;
	end_write(e, next);
	set_known(fd, 1);
}

void rt_fd_table_copy(int from, int to, uint64_t counter)
{
	struct rt_fd_entry *src = entry_of(from), *dst = entry_of(to);
	if (!dst)
		count_beyond(to);
	if (!src || !dst || src == dst)
		return;
	/* a consistent copy of the source, or none */
	char name[RT_FD_NAME_MAX];
	uint32_t seq = __atomic_load_n(&src->sequence, __ATOMIC_ACQUIRE);
	if ((seq & 1) || __atomic_load_n(&src->state, __ATOMIC_RELAXED) != RT_FD_OPEN)
		return;
	uint32_t length = src->name_length < RT_FD_NAME_MAX ? src->name_length : 0;
	uint32_t flags = src->open_flags;
	uint8_t cut = src->flags;
	memcpy(name, src->name, length);
	RT_FENCE_ACQUIRE();
	if (__atomic_load_n(&src->sequence, __ATOMIC_RELAXED) != seq)
		return;
	rt_fd_table_set(to, RT_IO_DUP, counter, flags, name, length);
	if (cut & RT_FD_F_NAME_CUT)
		dst->flags |= RT_FD_F_NAME_CUT;
}

void rt_fd_table_close(int fd, uint64_t counter)
{
	set_known(fd, 0);
	struct rt_fd_entry *e = entry_of(fd);
	if (!e || __atomic_load_n(&e->state, __ATOMIC_RELAXED) != RT_FD_OPEN)
		return;
	uint32_t next = begin_write(e);
	if (!next)
		return;
	e->closed_counter = counter;
	__atomic_store_n(&e->state, (uint32_t)RT_FD_CLOSED, __ATOMIC_RELAXED);
	end_write(e, next);
}

void rt_fd_proc_path(char *out, size_t size, const char *dir, int fd)
{
	char digits[12];
	int n = 0;
	unsigned v = (unsigned)fd;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < (int)sizeof(digits));
	size_t at = strlen(dir);
	if (at + (size_t)n >= size)
		at = n = 0;
	memcpy(out, dir, at);
	while (n)
		out[at++] = digits[--n];
	out[at] = 0;
}

uint32_t rt_fd_proc_name(int fd, char *out, uint32_t size)
{
	char link[32];
	rt_fd_proc_path(link, sizeof(link), "/proc/self/fd/", fd);
	/* the system call itself: async-signal-safe, and never the program's I/O */
	long r = syscall(SYS_readlinkat, AT_FDCWD, link, out, (size_t)size);
	return r > 0 ? (uint32_t)r : 0;
}
