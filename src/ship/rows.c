/*
 * rows.c - RowBinary rows, in the order of ship/schema.c's columns.
 *
 * Every row is reserved at once from a bound of its size (the strings'
 * lengths plus a fixed part), then written without further checks: the
 * encoding must keep up with a million rows a second on one core.
 */
#include <errno.h>
#include <string.h>

#include "present/io_view.h"
#include "ship/rows.h"

/* Every fixed-size column, a varint per string and array, and the arguments. */
#define ROW_FIXED_MAX (512u + RT_MAX_ARGS * 8u)

static inline unsigned char *put_u8(unsigned char *s, uint8_t v)
{
	*s = v;
	return s + 1;
}

static inline unsigned char *put_u16(unsigned char *s, uint16_t v)
{
	memcpy(s, &v, 2); /* x86-64 and every target ClickHouse runs on: little-endian */
	return s + 2;
}

static inline unsigned char *put_u32(unsigned char *s, uint32_t v)
{
	memcpy(s, &v, 4);
	return s + 4;
}

static inline unsigned char *put_u64(unsigned char *s, uint64_t v)
{
	memcpy(s, &v, 8);
	return s + 8;
}

static inline unsigned char *put_varint(unsigned char *s, uint64_t v)
{
	while (v >= 0x80) {
		*s++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*s++ = (unsigned char)v;
	return s;
}

static inline unsigned char *put_bytes(unsigned char *s, const char *p, size_t n)
{
	s = put_varint(s, n);
	if (n)
		memcpy(s, p, n);
	return s + n;
}

static inline unsigned char *put_cstr(unsigned char *s, const char *p)
{
	return put_bytes(s, p ? p : "", p ? strlen(p) : 0);
}

static inline unsigned char *put_str(unsigned char *s, struct rt_event_str v)
{
	return put_bytes(s, v.s, v.s ? v.length : 0);
}

/* The I/O call's columns: io_op..errno (and its message when it did not parse). */
struct io_columns {
	const char *op;
	int32_t fd;
	const char *path, *path2;
	size_t path_length, path2_length;
	int64_t offset, size, result;
	int32_t error;
};

static void io_columns_of(const struct rt_event *ev, struct io_columns *io)
{
	memset(io, 0, sizeof(*io));
	io->fd = -1;
	io->offset = -1;
	if (ev->kind != RT_EVENT_IO || !ev->io.ok)
		return;
	const struct rt_io_shown *shown = &ev->io;
	const struct rt_io_event *e = &shown->ev;
	io->op = rt_io_op_json_name(e->op);
	io->fd = e->fd >= 0 ? e->fd : -1;
	if (rt_io_shows_named_path(e)) {
		io->path = e->path;
		io->path_length = e->path ? e->path_length : 0;
	} else if (shown->names.fd.known) {
		io->path = shown->names.fd.name;
		io->path_length = shown->names.fd.name_length;
	}
	if (e->op == RT_IO_RENAME) {
		io->path2 = e->path2;
		io->path2_length = e->path2 ? e->path2_length : 0;
	} else if ((e->op == RT_IO_COPY_FILE_RANGE || e->op == RT_IO_SENDFILE) &&
		   shown->names.fd2.known) {
		io->path2 = shown->names.fd2.name;
		io->path2_length = shown->names.fd2.name_length;
	}
	if (e->flags & RT_IO_F_OFFSET)
		io->offset = e->offset;
	else if (shown->names.offset_derived)
		io->offset = shown->names.offset;
	io->size = e->size;
	io->result = e->result;
	io->error = rt_io_event_failed(e) ? (int32_t)-e->result : 0;
}

int rt_ship_row_encode(struct rt_ship_buffer *b, const struct rt_ship_row_context *c,
		       const struct rt_event *ev)
{
	const struct rt_site *site =
	    ev->kind == RT_EVENT_TRACE || ev->kind == RT_EVENT_LOG ? ev->site : NULL;
	struct io_columns io;
	io_columns_of(ev, &io);
	const char *function = NULL;
	if (ev->kind == RT_EVENT_ENTER || ev->kind == RT_EVENT_EXIT)
		function = ev->place.func;
	const char *message = ev->msg.s;
	size_t message_length = ev->msg.s ? ev->msg.length : 0;
	if (ev->kind == RT_EVENT_IO && !ev->io.ok) {
		/* a call whose record did not parse: its problem, in place of a message */
		message = ev->io.problem ? ev->io.problem : "malformed";
		message_length = strlen(message);
	} else if (ev->kind != RT_EVENT_LOG) {
		message = NULL;
		message_length = 0;
	}
	size_t strings =
	    c->host_length + ev->program.length + ev->thread.length + message_length +
	    io.path_length + io.path2_length + (function ? strlen(function) : 0) +
	    (ev->level ? strlen(ev->level) : 0) + (ev->note ? strlen(ev->note) : 0) +
	    (site ? (size_t)site->tag_length + site->file_length + site->func_length : 0);
	if (rt_ship_buffer_reserve(b, ROW_FIXED_MAX + strings))
		return -ENOMEM;

	uint64_t wall = 0;
	if (!ev->raw_time && c->wall0 && (ev->ts_ns >= 0 || (uint64_t)-ev->ts_ns <= c->wall0))
		wall = c->wall0 + (uint64_t)ev->ts_ns;
	unsigned char *s = b->data + b->length;
	s = put_bytes(s, c->host, c->host_length);
	s = put_u64(s, c->file_id);
	s = put_u32(s, c->file_seq);
	s = put_u64(s, c->ordinal);
	s = put_u64(s, c->batch_first);
	uint64_t seconds = wall / 1000000000u;
	s = put_u32(s, seconds > UINT32_MAX ? UINT32_MAX : (uint32_t)seconds);
	s = put_u64(s, wall);
	s = put_u32(s, (uint32_t)ev->pid);
	s = put_str(s, ev->program);
	s = put_u32(s, (uint32_t)ev->tid);
	s = put_str(s, ev->thread);
	s = put_u16(s, (uint16_t)(int16_t)(ev->cpu >= 0 && ev->cpu <= INT16_MAX ? ev->cpu : -1));
	s = put_u64(s, ev->has_seq ? ev->seq : 0);
	s = put_cstr(s, rt_event_kind_name(ev->kind));
	s = put_cstr(s, ev->span == RT_EVENT_SPAN_BEGIN ? "begin"
			: ev->span == RT_EVENT_SPAN_END ? "end"
							: "");
	if (site) {
		s = put_bytes(s, site->tag, site->tag_length);
		s = put_bytes(s, site->file, site->file_length);
		s = put_u32(s, site->line);
		s = put_bytes(s, site->func, site->func_length);
	} else {
		s = put_bytes(s, "", 0);
		s = put_bytes(s, "", 0);
		s = put_u32(s, 0);
		s = put_bytes(s, "", 0);
	}
	unsigned nargs = ev->kind == RT_EVENT_TRACE && ev->nargs <= RT_MAX_ARGS ? ev->nargs : 0;
	s = put_varint(s, nargs);
	for (unsigned i = 0; i < nargs; i++)
		s = put_u64(s, ev->args[i]);
	s = put_cstr(s, ev->kind == RT_EVENT_LOG ? ev->level : NULL);
	s = put_bytes(s, message, message_length);
	s = put_cstr(s, function);
	int call = ev->kind == RT_EVENT_ENTER || ev->kind == RT_EVENT_EXIT;
	s = put_u64(s, call ? ev->addr : 0);
	s = put_u32(s, call ? ev->depth : 0);
	int64_t dur = c->dur_ns;
	if (ev->kind == RT_EVENT_IO)
		dur = ev->io.ok && ev->io.has_duration ? ev->io.dur_ns : -1;
	s = put_u64(s, (uint64_t)dur);
	s = put_cstr(s, io.op);
	s = put_u32(s, (uint32_t)io.fd);
	s = put_bytes(s, io.path, io.path_length);
	s = put_bytes(s, io.path2, io.path2_length);
	s = put_u64(s, (uint64_t)io.offset);
	s = put_u64(s, (uint64_t)io.size);
	s = put_u64(s, (uint64_t)io.result);
	s = put_u32(s, (uint32_t)io.error);
	int lost = ev->kind == RT_EVENT_LOST;
	s = put_u64(s, lost ? ev->count : 0);
	s = put_cstr(s, lost ? ev->reason : NULL);
	s = put_cstr(s, lost ? ev->note : NULL);
	s = put_u8(s, lost && ev->estimated);
	s = put_u8(s, ev->metadata_lost != 0);
	s = put_u8(s, ev->damaged || (ev->kind == RT_EVENT_IO && !ev->io.ok));
	b->length = (size_t)(s - b->data);
	return 0;
}
