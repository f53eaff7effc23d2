/*
 * io_view.c - the text of one file I/O call as a printer shows it: the call
 * parsed and its descriptors named by event/io_calls.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "present/io_view.h"

struct text {
	char *buf;
	size_t size, len;
};

__attribute__((format(printf, 2, 3))) static void add(struct text *t, const char *format, ...)
{
	if (t->len + 1 >= t->size)
		return;
	va_list ap;
	va_start(ap, format);
	int n = vsnprintf(t->buf + t->len, t->size - t->len, format, ap);
	va_end(ap);
	if (n > 0)
		t->len = t->len + (size_t)n < t->size ? t->len + (size_t)n : t->size - 1;
}

/* The n bytes at s escaped (common/escape.h), as far as they fit. */
static void add_escaped(struct text *t, const char *s, size_t n)
{
	if (t->len + 1 >= t->size)
		return;
	size_t room = t->size - 1 - t->len;
	if (RT_ESCAPED_MAX(n) > room)
		n = room / 4;
	t->len = (size_t)(rt_fmt_escaped(t->buf + t->len, s, n) - t->buf);
	t->buf[t->len] = 0;
}

/* 'path', escaped as every string from an input is, and a quote in it as \' */
static void add_quoted(struct text *t, const char *s, uint32_t n)
{
	add(t, "'");
	for (;;) {
		const char *quote = memchr(s, '\'', n);
		uint32_t piece = quote ? (uint32_t)(quote - s) : n;
		add_escaped(t, s, piece);
		if (!quote)
			break;
		add(t, "\\'");
		s += piece + 1;
		n -= piece + 1;
	}
	add(t, "'");
}

/* "fd 3 '/etc/hosts'", or "fd 7 '?' (closed)" */
static void add_fd(struct text *t, int32_t fd, const struct rt_fd_name *name)
{
	add(t, " fd %" PRId32 " ", fd);
	if (name->known)
		add_quoted(t, name->name, name->name_length);
	else
		add(t, "'?' (%s)", name->why ? name->why : "unseen");
}

static void add_flags(struct text *t, uint32_t flags)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} bits[] = {
	    {O_CREAT, "CREAT"},
	    {O_EXCL, "EXCL"},
	    {O_TRUNC, "TRUNC"},
	    {O_APPEND, "APPEND"},
	    {O_NONBLOCK, "NONBLOCK"},
	    {O_DIRECTORY, "DIRECTORY"},
	    {O_NOFOLLOW, "NOFOLLOW"},
	    {O_CLOEXEC, "CLOEXEC"},
	    {O_SYNC, "SYNC"},
	    {O_DIRECT, "DIRECT"},
	    {O_TMPFILE & ~O_DIRECTORY, "TMPFILE"},
	};
	unsigned mode = flags & O_ACCMODE;
	add(t, " %s", mode == O_RDONLY ? "O_RDONLY" : mode == O_WRONLY ? "O_WRONLY" : "O_RDWR");
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (flags & bits[i].bit)
			add(t, "|O_%s", bits[i].name);
}

static void add_error(struct text *t, int64_t result)
{
	const char *name = rt_io_errno_name((int)-result);
	if (name)
		add(t, " %s", name);
	else
		add(t, " errno %" PRId64, -result);
}

static void add_duration(struct text *t, const struct rt_io_shown *s)
{
	if (!s->has_duration)
		return;
	int64_t ns = s->dur_ns;
	if (ns < 1000)
		add(t, " %" PRId64 "ns", ns);
	else if (ns < 1000000)
		add(t, " %.1fus", (double)ns / 1e3);
	else if (ns < 1000000000)
		add(t, " %.1fms", (double)ns / 1e6);
	else
		add(t, " %.3fs", (double)ns / 1e9);
}

static const char *whence_name(uint32_t whence)
{
	switch (whence) {
	case SEEK_SET:
		return "SEEK_SET";
	case SEEK_CUR:
		return "SEEK_CUR";
	case SEEK_END:
		return "SEEK_END";
	default:
		return NULL;
	}
}

/* The offset a call named (off=) or the position derived (pos=). */
static void add_offset(struct text *t, const struct rt_io_shown *s)
{
	if (s->ev.flags & RT_IO_F_OFFSET)
		add(t, " off=0x%" PRIx64, (uint64_t)s->ev.offset);
	else if (s->names.offset_derived)
		add(t, " pos=0x%" PRIx64, (uint64_t)s->names.offset);
}

static int is_transfer(unsigned op)
{
	switch (op) {
	case RT_IO_READ:
	case RT_IO_WRITE:
	case RT_IO_PREAD:
	case RT_IO_PWRITE:
	case RT_IO_READV:
	case RT_IO_WRITEV:
	case RT_IO_PREADV:
	case RT_IO_PWRITEV:
	case RT_IO_FREAD:
	case RT_IO_FWRITE:
	case RT_IO_COPY_FILE_RANGE:
	case RT_IO_SENDFILE:
		return 1;
	default:
		return 0;
	}
}

int rt_io_shows_named_path(const struct rt_io_event *ev)
{
	switch (ev->op) {
	case RT_IO_OPEN:
	case RT_IO_UNLINK:
	case RT_IO_RENAME:
	case RT_IO_RUNDOWN:
	case RT_IO_NAMED:
		return 1;
	case RT_IO_FOPEN:
		return ev->path != NULL; /* fdopen names no path: its descriptor's */
	default:
		return 0;
	}
}

size_t rt_io_text(char *buf, size_t size, const struct rt_io_shown *s)
{
	struct text t = {buf, size, 0};
	if (size)
		buf[0] = 0;
	if (!s->ok) {
		add(&t, "FileIO/? malformed io record (%s)\n", s->problem ? s->problem : "?");
		return t.len;
	}
	const struct rt_io_event *ev = &s->ev;
	const int failed = rt_io_event_failed(ev);
	const int has_aux = (ev->flags & RT_IO_F_AUX) != 0;
	add(&t, "FileIO/%s", rt_io_op_name(ev->op));
	switch (ev->op) {
	case RT_IO_OPEN:
	case RT_IO_FOPEN:
		if (ev->path) {
			add(&t, " ");
			add_quoted(&t, ev->path, ev->path_length);
		} else {
			add_fd(&t, ev->fd, &s->names.fd);
		}
		if (has_aux)
			add_flags(&t, ev->aux[0]);
		if (ev->flags & RT_IO_F_STREAM)
			add(&t, " stream 0x%" PRIx64, ev->stream);
		if (!failed)
			add(&t, " -> fd %" PRId64, ev->result);
		break;
	case RT_IO_RENAME:
		add(&t, " ");
		add_quoted(&t, ev->path ? ev->path : "", ev->path_length);
		add(&t, " -> ");
		add_quoted(&t, ev->path2 ? ev->path2 : "", ev->path2_length);
		break;
	case RT_IO_UNLINK:
		add(&t, " ");
		add_quoted(&t, ev->path ? ev->path : "", ev->path_length);
		break;
	case RT_IO_RUNDOWN:
	case RT_IO_NAMED:
		add(&t, " fd %" PRId32 " ", ev->fd);
		add_quoted(&t, ev->path ? ev->path : "", ev->path_length);
		if (ev->flags & RT_IO_F_OFFSET)
			add(&t, " pos=0x%" PRIx64, (uint64_t)ev->offset);
		break;
	default:
		add_fd(&t, ev->fd, &s->names.fd);
		if (ev->flags & RT_IO_F_STREAM)
			add(&t, " stream 0x%" PRIx64, ev->stream);
		break;
	}
	switch (ev->op) {
	case RT_IO_DUP:
		if (!failed)
			add(&t, " -> fd %" PRId64, ev->result);
		break;
	case RT_IO_COPY_FILE_RANGE:
	case RT_IO_SENDFILE:
		add(&t, " ->");
		add_fd(&t, has_aux ? (int32_t)ev->aux[0] : -1, &s->names.fd2);
		break;
	case RT_IO_LSEEK:
	case RT_IO_FSEEK:
		if (ev->offset < 0)
			add(&t, " off=-0x%" PRIx64, 0 - (uint64_t)ev->offset);
		else
			add(&t, " off=0x%" PRIx64, (uint64_t)ev->offset);
		if (has_aux && whence_name(ev->aux[0]))
			add(&t, " %s", whence_name(ev->aux[0]));
		if (ev->op == RT_IO_LSEEK && !failed)
			add(&t, " -> 0x%" PRIx64, (uint64_t)ev->result);
		break;
	case RT_IO_FTRUNCATE:
		add(&t, " size=0x%" PRIx64, (uint64_t)ev->size);
		break;
	case RT_IO_MMAP:
		add_offset(&t, s);
		add(&t, " %" PRId64 "b", ev->size);
		if (!failed)
			add(&t, " -> 0x%" PRIx64, (uint64_t)ev->result);
		break;
	default:
		break;
	}
	if (is_transfer(ev->op)) {
		if (ev->op != RT_IO_COPY_FILE_RANGE && ev->op != RT_IO_SENDFILE)
			add_offset(&t, s);
		if (!failed && ev->size > 0 && ev->result != ev->size)
			add(&t, " %" PRId64 "/%" PRId64 "b", ev->result, ev->size);
		else if (!failed)
			add(&t, " %" PRId64 "b", ev->result);
	}
	if (failed)
		add_error(&t, ev->result);
	if (ev->flags & RT_IO_F_PATH_CUT)
		add(&t, " [path cut]");
	add_duration(&t, s);
	add(&t, "\n");
	return t.len;
}
