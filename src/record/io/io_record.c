/*
 * io_record.c - one RT_REC_IO record per call the I/O interposer saw
 * (ringtrace/format.h), and the naming that makes every descriptor in
 * those records resolvable: the descriptor table follows opens, dups and
 * closes, and a descriptor the table does not know when a call uses it (a
 * pipe, a socket, anything made by a call the interposer does not see) is
 * named from /proc first, in an RT_IO_NAMED record written just before the
 * call's own.
 *
 * Called by the interposer after the call returned (so errno is the
 * call's: saved and put back by the caller) for every call its inline path
 * (io_fast.h) did not record itself.  Like RT_LOG: a record that fits below
 * the limit is written at once, anything else goes through the slow path,
 * which starts the arena, attaches the thread and counts what it cannot
 * record.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>

#include "format/records.h"
#include "record/io/fd_table.h"
#include "record/io/io_call.h"
#include "record/io/io_fast.h"
#include "record/record.h"

int rt_io_on;

RT_EXPORT struct ringtrace__site_body ringtrace__io_site = {0, RT_SITE_IO, 0, {0}, 0, "io", "", ""};

/* The payload's bytes: the fixed part, the optional parts its flags name, the paths. */
static uint32_t build_payload(const struct rt_io_call *c, uint8_t *out)
{
	uint32_t at = rt_io_payload_parts(c, out);
	if (c->path) {
		uint32_t room = RT_LOG_PAYLOAD_MAX - at - 8;
		uint32_t n1 = c->path_length < room ? c->path_length : room;
		uint32_t n2 = c->path2 ? c->path2_length : 0;
		if (n2 > room - n1)
			n2 = room - n1;
		uint16_t flags;
		memcpy(&flags, out + offsetof(struct rt_io_payload, flags), 2);
		if (n1 < c->path_length || (c->path2 && n2 < c->path2_length))
			flags |= RT_IO_F_PATH_CUT;
		flags |= RT_IO_F_PATH;
		memcpy(out + offsetof(struct rt_io_payload, flags), &flags, 2);
		memcpy(out + at, &n1, 4);
		memcpy(out + at + 4, &n2, 4);
		at += 8;
		memcpy(out + at, c->path, n1);
		at += n1;
		if (n2)
			memcpy(out + at, c->path2, n2);
		at += n2;
	}
	return at;
}

/* A record with a path: its payload needs the large buffer (kept off the common path's stack). */
__attribute__((noinline)) static void write_long_call(struct ringtrace__writer *w,
						      const struct rt_io_call *c)
{
	uint8_t payload[RT_LOG_PAYLOAD_MAX] __attribute__((aligned(8)));
	rt_emit_payload(w, &ringtrace__io_site, RT_REC_IO, payload, build_payload(c, payload),
			c->end);
}

/*
 * Write one record.  Most calls (a read, a write) carry no path: their
 * payload fits a few words of stack, and right after a system call every
 * cache line the record touches is likely cold, so the common path
 * touches as few as it can.
 */
static void write_call(struct ringtrace__writer *w, const struct rt_io_call *c)
{
	if (c->path) {
		write_long_call(w, c);
		return;
	}
	uint8_t payload[sizeof(struct rt_io_payload) + 24] __attribute__((aligned(8)));
	uint32_t bytes = build_payload(c, payload);
	/* the plain transfer (no optional part): two slots, a size the compiler knows */
	if (RT__LIKELY(bytes == sizeof(struct rt_io_payload)))
		rt_emit_payload(w, &ringtrace__io_site, RT_REC_IO, payload,
				sizeof(struct rt_io_payload), c->end);
	else
		rt_emit_payload(w, &ringtrace__io_site, RT_REC_IO, payload, bytes, c->end);
}

/*
 * fd is in use by a call that started at start and returned at end (0:
 * not yet): name it if the table does not, in a record of the same time
 * as the call's, written before it, so that readers meet the name first.
 */
__attribute__((noinline)) static void name_if_unknown(struct ringtrace__writer *w, int fd,
						      uint64_t start, uint64_t end)
{
	if (rt_fd_table_known(fd))
		return;
	char name[RT_IO_PATH_BYTES_MAX];
	uint32_t n = rt_fd_proc_name(fd, name, sizeof(name));
	if (!n)
		return; /* not open: the call failed with EBADF, or another thread closed it */
	rt_fd_table_set(fd, RT_IO_NAMED, start, 0, name, n);
	struct rt_io_call named;
	memset(&named, 0, sizeof(named));
	named.op = RT_IO_NAMED;
	named.fd = fd;
	named.start = start;
	named.end = end;
	named.path = name;
	named.path_length = n;
	write_call(w, &named);
}

/* The descriptor a successful call made, and the name the table gives it. */
static void follow_result(const struct rt_io_call *c)
{
	int fd = (int)c->result;
	if (c->result < 0 || c->result > INT32_MAX)
		return;
	uint64_t now = c->end ? c->end : ringtrace__counter();
	switch (c->op) {
	case RT_IO_OPEN:
	case RT_IO_FOPEN: /* fdopen has no path: its descriptor keeps its name */
		if (c->path)
			rt_fd_table_set(fd, c->op, now, c->aux[0], c->path, c->path_length);
		break;
	case RT_IO_DUP:
		rt_fd_table_copy(c->fd, fd, now);
		break;
	default:
		break;
	}
}

/*
 * Whether a successful call used a descriptor that may need a name: not
 * the calls that name one themselves (open, an fopen of a path, rundown,
 * named), the path calls, nor the closes (named before, as they begin).
 */
static int uses_descriptor(const struct rt_io_call *c)
{
	unsigned op = c->op;
	if (c->result < 0 || c->fd < 0 || (op == RT_IO_FOPEN && c->path))
		return 0;
	return op != RT_IO_OPEN && op != RT_IO_UNLINK && op != RT_IO_RENAME &&
	       op != RT_IO_RUNDOWN && op != RT_IO_NAMED && op != RT_IO_CLOSE && op != RT_IO_FCLOSE;
}

RT_EXPORT void ringtrace__io_record(const struct rt_io_call *c)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	/* a signal handler's call while this thread was mid-record: counted */
	if (w->internal)
		return;
	/* a vfork child lent its parent's writer: its descriptors are not the table's */
	if (RT__UNLIKELY(w->lent)) {
		rt_vfork_count_event();
		return;
	}
	if (!rt_writer_enter(w))
		return;
	if (uses_descriptor(c)) {
		int out = (c->op == RT_IO_COPY_FILE_RANGE || c->op == RT_IO_SENDFILE) &&
				  (c->flags & RT_IO_F_AUX)
			      ? (int)c->aux[0]
			      : -1;
		/* the common case, a descriptor already named, costs one bit of the table */
		if (!rt_fd_table_known(c->fd) || (out >= 0 && !rt_fd_table_known(out))) {
			w->internal++;
			name_if_unknown(w, c->fd, c->start, c->end);
			if (out >= 0)
				name_if_unknown(w, out, c->start, c->end);
			w->internal--;
		}
	}
	write_call(w, c);
	follow_result(c);
	rt_writer_leave(w);
}

RT_EXPORT void ringtrace__io_before_close(int fd, uint64_t start)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (w->internal || w->busy || fd < 0 || w->lent)
		return;
	w->busy = 1;
	RT__COMPILER_BARRIER();
	/*
	 * Before the close itself: once the kernel frees the number, another
	 * thread's open may take it and name it, and this must not undo that.
	 */
	w->internal++;
	name_if_unknown(w, fd, start, 0);
	w->internal--;
	rt_fd_table_close(fd, start);
	RT__COMPILER_BARRIER();
	w->busy = 0;
}

RT_EXPORT int ringtrace__io_let_by(void)
{
	if (ringtrace__tls_writer.internal == RINGTRACE__INTERNAL_VFORK_CHILD)
		rt_vfork_count_event();
	return 1;
}

RT_EXPORT void ringtrace__io_start(void)
{
	int before = __atomic_load_n(&rt_arena.state, __ATOMIC_ACQUIRE);
	__atomic_store_n(&rt_io_on, 1, __ATOMIC_RELEASE);
	/* the arena comes up now, so that its rundown sees the descriptors the program inherited */
	if (rt_arena_ensure_started(NULL, NULL) && before == RT_ON) {
		/* made earlier (a constructor traced): no table, but the records name them */
		ringtrace__tls_writer.internal++;
		rt_io_rundown();
		ringtrace__tls_writer.internal--;
	}
}

void rt_io_write_rundown(int fd, const char *name, uint32_t length, int64_t position,
			 uint32_t flags)
{
	uint64_t now = ringtrace__counter();
	rt_fd_table_set(fd, RT_IO_RUNDOWN, 0, flags, name, length);
	struct rt_io_call c;
	memset(&c, 0, sizeof(c));
	c.op = RT_IO_RUNDOWN;
	c.fd = fd;
	c.start = now;
	c.flags = RT_IO_F_AUX | (position >= 0 ? RT_IO_F_OFFSET : 0);
	c.offset = position;
	c.aux[0] = flags;
	c.path = name;
	c.path_length = length;
	write_call(&ringtrace__tls_writer, &c);
}
