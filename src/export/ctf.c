/*
 * ctf.c - `ringtrace export --ctf`: a CTF 1.8 trace directory.
 *
 * The directory holds `metadata` (TSDL text, written when the exporter
 * opens: every event class is known then) and one binary stream file per
 * thread, `stream_PID_TID` (tid 0: the process's losses that no thread
 * owns).  Every field is little-endian and byte-aligned, so nothing is ever
 * padded.  Each thread's events fill a packet in memory; a full packet is
 * written (its context sizes and times set first) and the next one begins,
 * so memory is bounded by threads x packet size.  A stream file is opened
 * for each packet written and closed at once: descriptors stay bounded
 * whatever the number of threads.
 *
 * Trace events have a class per site, so that each argument has its own
 * type (an unsigned value past INT64_MAX stays unsigned) and viewers show
 * the tag as the event's name.  The classes of every trace site in each
 * source's site table are declared up front (the tables are whole once the
 * set is open), with ids in one consecutive range per source: an event's
 * class is its source's first id plus its site's index, so nothing is
 * kept per site and memory stays one id per source, whatever the sites.
 * An event whose site is lost has the class "trace": its raw words.
 *
 * A thread's LOST items are `lost` events in its stream (count, reason,
 * note: why events are missing) and also add to the stream's free-running
 * events_discarded counter: the packet before the loss ends there and the
 * one that begins with the lost event carries the new value, so a reader
 * reports the events discarded between the two as well.
 *
 * The clock counts nanoseconds since the set's start (dump --json's ts_ns),
 * with that start's wall-clock time as its offset (from the first source
 * whose clock metadata holds one; none: offset 0), never going backwards
 * within a stream: a time earlier than the stream's
 * last one is raised to it (the counter is unsigned; raw times and clocks
 * that went backwards would otherwise break the stream).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <dirent.h>
#include <endian.h>
#include <time.h>
#include <unistd.h>

#include "common/utf8.h"
#include "decode/io_event.h"
#include "export/exporter.h"
#include "present/io_view.h"

#define CTF_MAGIC 0xC1FC1FC1u
#define CTF_PACKET_SIZE ((size_t)64 * 1024)
/* packet header (4 + 16 + 4) then context (5 x 8) */
#define CTF_HEADER_SIZE 24
#define CTF_CONTEXT_SIZE 40
#define CTF_PREAMBLE (CTF_HEADER_SIZE + CTF_CONTEXT_SIZE)

enum ctf_event_id {
	CTF_ID_TRACE = 0,
	CTF_ID_LOG = 1,
	CTF_ID_ENTER = 2,
	CTF_ID_EXIT = 3,
	CTF_ID_IO = 4,
	CTF_ID_LOST = 5,
	/* per-site classes: CTF_ID_SITES + the source's base + the site's index */
	CTF_ID_SITES = 16,
};

/* A source with no per-site classes (a recording's context, ids run out). */
#define CTF_NO_BASE UINT32_MAX

struct ctf_stream {
	int32_t pid, tid;
	int used;
	int written;	     /* a packet of it is on disk */
	unsigned char *buf;  /* the packet being filled, NULL until its first event */
	size_t length, size; /* bytes in buf, its capacity */
	uint64_t events;     /* in the packet being filled */
	uint64_t ts_begin, ts_last;
	uint64_t discarded;	    /* free-running */
	uint64_t discarded_written; /* the value the last packet written carried */
};

struct ctf_state {
	char *dir;
	int dir_fd;
	unsigned char uuid[16];
	struct ctf_stream *streams; /* open addressing by (pid, tid) */
	size_t capacity, count;
	struct ctf_stream *cur; /* the stream whose packet an event is encoded into */
	int error;		/* the first write error, -errno */
	uint64_t wall0;		/* the wall-clock time of ts_ns 0, ns since the epoch; 0: unknown */
	/* per source: the first id of its site classes (CTF_NO_BASE: none), and its sites */
	uint32_t *site_base;
	const struct rt_site_table **site_tables;
	size_t source_count;
};

/* ---- the metadata ---- */

static int write_all(int fd, const void *p, size_t n)
{
	const unsigned char *b = p;
	while (n) {
		ssize_t w = write(fd, b, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static const char metadata_types[] =
    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
    "typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
    "typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; base = 16; } := uint64_hex_t;\n"
    "typealias integer { size = 64; align = 8; signed = false; "
    "map = clock.ringtrace.value; } := uint64_clock_t;\n\n";

static const char metadata_stream[] = "stream {\n"
				      "\tid = 0;\n"
				      "\tpacket.context := struct {\n"
				      "\t\tuint64_clock_t timestamp_begin;\n"
				      "\t\tuint64_clock_t timestamp_end;\n"
				      "\t\tuint64_t content_size;\n"
				      "\t\tuint64_t packet_size;\n"
				      "\t\tuint64_t events_discarded;\n"
				      "\t};\n"
				      "\tevent.header := struct {\n"
				      "\t\tuint32_t id;\n"
				      "\t\tuint64_clock_t timestamp;\n"
				      "\t};\n"
				      "\tevent.context := struct {\n"
				      "\t\tint32_t pid;\n"
				      "\t\tint32_t tid;\n"
				      "\t\tint32_t cpu;\n"
				      "\t\tuint64_t seq;\n"
				      "\t\tstring thread;\n"
				      "\t};\n"
				      "};\n\n"
				      "event {\n"
				      "\tname = \"trace\";\n"
				      "\tid = 0;\n"
				      "\tstream_id = 0;\n"
				      "\tfields := struct {\n"
				      "\t\tstring tag;\n"
				      "\t\tstring file;\n"
				      "\t\tuint32_t line;\n"
				      "\t\tstring func;\n"
				      "\t\tuint32_t nargs;\n"
				      "\t\tuint64_t args[nargs];\n"
				      "\t};\n"
				      "};\n\n"
				      "event {\n"
				      "\tname = \"log\";\n"
				      "\tid = 1;\n"
				      "\tstream_id = 0;\n"
				      "\tfields := struct {\n"
				      "\t\tstring level;\n"
				      "\t\tstring msg;\n"
				      "\t\tstring file;\n"
				      "\t\tuint32_t line;\n"
				      "\t\tstring func;\n"
				      "\t};\n"
				      "};\n\n";

static const char metadata_call_fields[] = "\tstream_id = 0;\n"
					   "\tfields := struct {\n"
					   "\t\tuint32_t depth;\n"
					   "\t\tuint32_t flags;\n"
					   "\t\tuint64_t addr;\n"
					   "\t\tuint64_t call_site;\n"
					   "\t\tstring func;\n"
					   "\t\tstring file;\n"
					   "\t\tuint32_t line;\n"
					   "\t\tstring module;\n"
					   "\t\tuint64_t offset;\n"
					   "\t};\n"
					   "};\n\n";

static const char metadata_io[] = "event {\n"
				  "\tname = \"io\";\n"
				  "\tid = 4;\n"
				  "\tstream_id = 0;\n"
				  "\tfields := struct {\n"
				  "\t\tstring op;\n"
				  "\t\tint32_t fd;\n"
				  "\t\tstring path;\n"
				  "\t\tint64_t offset;\n"
				  "\t\tint64_t size;\n"
				  "\t\tint64_t result;\n"
				  "\t\tint32_t errno;\n"
				  "\t\tint64_t dur_ns;\n"
				  "\t};\n"
				  "};\n\n"
				  "event {\n"
				  "\tname = \"lost\";\n"
				  "\tid = 5;\n"
				  "\tstream_id = 0;\n"
				  "\tfields := struct {\n"
				  "\t\tuint64_t count;\n"
				  "\t\tstring reason;\n"
				  "\t\tstring note;\n"
				  "\t\tuint8_t estimated;\n"
				  "\t\tuint8_t has_time;\n"
				  "\t};\n"
				  "};\n";

/* Sites whose records are trace events: a class each. */
static int site_has_class(const struct rt_site *site)
{
	return site->valid && (site->kind == RT_SITE_TRACE || site->kind == RT_SITE_BEGIN ||
			       site->kind == RT_SITE_END);
}

/*
 * Text as a TSDL string literal's contents: valid UTF-8 kept, a quote or a
 * backslash escaped, a control character (C0, DEL, C1) or an invalid byte
 * shown as '?'.
 */
static void put_tsdl_text(FILE *f, const char *text, size_t length)
{
	const unsigned char *p = (const unsigned char *)text;
	for (size_t i = 0; i < length;) {
		size_t n = rt_utf8_sequence_length(p + i, length - i);
		if (n == 2 && p[i] == 0xc2 && p[i + 1] < 0xa0) {
			fputc('?', f); /* a C1 control character */
			i += 2;
			continue;
		}
		if (n > 1) {
			fwrite(p + i, 1, n, f);
			i += n;
			continue;
		}
		if (p[i] == '"' || p[i] == '\\')
			fputc('\\', f);
		fputc(n == 1 && p[i] >= 0x20 && p[i] != 0x7F ? p[i] : '?', f);
		i++;
	}
}

/*
 * The class of a trace site: named "trace:TAG" (viewers show the name),
 * its arguments typed as dump --json prints them (signed, unsigned; a
 * pointer unsigned, shown in hex).  A span's start or end says which in
 * its `span` field.
 */
static void put_site_class(FILE *f, const struct rt_site *site, uint32_t id)
{
	fputs("event {\n\tname = \"trace:", f);
	put_tsdl_text(f, site->tag, site->tag_length);
	fprintf(f,
		"\";\n\tid = %" PRIu32 ";\n\tstream_id = 0;\n\tfields := struct {\n"
		"\t\tstring tag;\n\t\tstring file;\n\t\tuint32_t line;\n\t\tstring func;\n",
		id);
	if (site->kind != RT_SITE_TRACE)
		fputs("\t\tstring span;\n", f);
	for (unsigned i = 0; i < site->nargs && i < RT_MAX_ARGS; i++) {
		const char *type = "uint64_t";
		if (RT_ARG_CLASS(site->arg_types[i]) == RT_ARG_POINTER)
			type = "uint64_hex_t";
		else if (site->signed_args & (1u << i))
			type = "int64_t";
		fprintf(f, "\t\t%s arg%u;\n", type, i);
	}
	fputs("\t};\n};\n\n", f);
}

/*
 * The ids of each source's site classes: consecutive ranges, one id per
 * entry of its site table (valid or not), so that an event's class is
 * found by adding, with no table of classes kept.
 */
static int assign_site_ids(struct ctf_state *st, const struct rt_trace_set *set)
{
	size_t n = set ? set->source_count : 0;
	if (!n)
		return 0;
	st->site_base = malloc(n * sizeof *st->site_base);
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	st->site_tables = malloc(n * sizeof *st->site_tables);
	if (!st->site_base || !st->site_tables)
		return -ENOMEM;
	st->source_count = n;
	uint64_t next = CTF_ID_SITES;
	for (size_t i = 0; i < n; i++) {
		const struct rt_site_table *t = &set->sources[i].reader->sites;
		st->site_tables[i] = t;
		st->site_base[i] = CTF_NO_BASE;
		if (set->sources[i].context || !t->count || next + t->count >= CTF_NO_BASE)
			continue;
		st->site_base[i] = (uint32_t)next;
		next += t->count;
	}
	return 0;
}

static int write_metadata(struct ctf_state *st)
{
	char uuid[37];
	const unsigned char *u = st->uuid;
	snprintf(uuid, sizeof uuid,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
		 u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
	int fd = openat(st->dir_fd, "metadata", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		return -e;
	}
	fprintf(f,
		"/* CTF 1.8 */\n\n"
		"trace {\n"
		"\tmajor = 1;\n"
		"\tminor = 8;\n"
		"\tuuid = \"%s\";\n"
		"\tbyte_order = le;\n"
		"\tpacket.header := struct {\n"
		"\t\tinteger { size = 32; align = 8; signed = false; } magic;\n"
		"\t\tinteger { size = 8; align = 8; signed = false; } uuid[16];\n"
		"\t\tinteger { size = 32; align = 8; signed = false; } stream_id;\n"
		"\t};\n"
		"};\n\n"
		"env {\n"
		"\ttracer_name = \"ringtrace\";\n"
		"};\n\n"
		"clock {\n"
		"\tname = \"ringtrace\";\n"
		"\tuuid = \"%s\";\n"
		"\tdescription = \"nanoseconds since the trace set's start\";\n"
		"\tfreq = 1000000000;\n"
		"\tprecision = 1;\n"
		"\toffset_s = %" PRIu64 ";\n"
		"\toffset = %" PRIu64 ";\n"
		"\tabsolute = false;\n"
		"};\n\n",
		uuid, uuid, st->wall0 / 1000000000u, st->wall0 % 1000000000u);
	fputs(metadata_types, f);
	fputs(metadata_stream, f);
	for (int exit = 0; exit < 2; exit++) {
		fprintf(f, "event {\n\tname = \"%s\";\n\tid = %d;\n", exit ? "exit" : "enter",
			exit ? CTF_ID_EXIT : CTF_ID_ENTER);
		fputs(metadata_call_fields, f);
	}
	fputs(metadata_io, f);
	for (size_t i = 0; i < st->source_count; i++) {
		if (st->site_base[i] == CTF_NO_BASE)
			continue;
		const struct rt_site_table *t = st->site_tables[i];
		for (uint32_t j = 0; j < t->count; j++)
			if (site_has_class(&t->sites[j]))
				put_site_class(f, &t->sites[j], st->site_base[i] + j);
	}
	int rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && !rc)
		rc = errno ? -errno : -EIO;
	return rc;
}

/* ---- encoding ---- */

/*
 * Events are encoded straight into their stream's packet buffer, after
 * its last event (the buffer grows when an event does not fit: see
 * ctf_event for what happens to the packet then).
 */
static int grow(struct ctf_stream *s, size_t more)
{
	size_t size = s->size ? s->size : CTF_PACKET_SIZE;
	while (size < s->length + more)
		size *= 2;
	unsigned char *p = realloc(s->buf, size);
	if (!p)
		return -ENOMEM;
	s->buf = p;
	s->size = size;
	return 0;
}

static inline int reserve(struct ctf_state *st, size_t more)
{
	struct ctf_stream *s = st->cur;
	if (__builtin_expect(s->length + more <= s->size, 1))
		return 0;
	return grow(s, more);
}

static inline unsigned char *at(struct ctf_state *st)
{
	return st->cur->buf + st->cur->length;
}

static inline int put_u32(struct ctf_state *st, uint32_t v)
{
	if (reserve(st, 4))
		return -ENOMEM;
	uint32_t le = htole32(v);
	memcpy(at(st), &le, 4);
	st->cur->length += 4;
	return 0;
}

static inline int put_u64(struct ctf_state *st, uint64_t v)
{
	if (reserve(st, 8))
		return -ENOMEM;
	uint64_t le = htole64(v);
	memcpy(at(st), &le, 8);
	st->cur->length += 8;
	return 0;
}

static inline int put_u8(struct ctf_state *st, uint8_t v)
{
	if (reserve(st, 1))
		return -ENOMEM;
	*at(st) = v;
	st->cur->length++;
	return 0;
}

/*
 * A CTF string: UTF-8 and NUL-terminated.  A recorded string may hold any
 * byte but NUL; a byte that is no part of valid UTF-8 becomes U+FFFD.
 */
static int put_bytes(struct ctf_state *st, const char *s, size_t length)
{
	if (reserve(st, 3 * length + 1))
		return -ENOMEM;
	unsigned char *out = rt_utf8_repair(at(st), (const unsigned char *)s, length, 1);
	*out++ = 0;
	st->cur->length = (size_t)(out - st->cur->buf);
	return 0;
}

static int put_str(struct ctf_state *st, const char *s)
{
	return put_bytes(st, s ? s : "", s ? strlen(s) : 0);
}

/* A string of the site (its length known), or empty when the site is lost. */
#define SITE_STR(site, field) ((site) ? (site)->field : ""), ((site) ? (site)->field##_length : 0)

static int put_xstr(struct ctf_state *st, const struct rt_event_str *s)
{
	return s->s ? put_bytes(st, s->s, s->length) : put_bytes(st, "", 0);
}

/*
 * The event's fields after its header and context, by kind.  site_class:
 * a trace event of its site's own class (else of the class "trace").
 */
static int put_fields(struct ctf_state *st, const struct rt_event *ev, int site_class)
{
	const struct rt_site *site = ev->site;
	int rc = 0;
	switch (ev->kind) {
	case RT_EVENT_TRACE:
		rc |= put_bytes(st, SITE_STR(site, tag));
		rc |= put_bytes(st, SITE_STR(site, file));
		rc |= put_u32(st, site ? site->line : 0);
		rc |= put_bytes(st, SITE_STR(site, func));
		if (!site_class) {
			rc |= put_u32(st, ev->nargs);
		} else if (site->kind != RT_SITE_TRACE) {
			rc |= put_str(st, site->kind == RT_SITE_BEGIN ? "begin" : "end");
		}
		for (unsigned i = 0; i < ev->nargs && i < RT_MAX_ARGS; i++)
			rc |= put_u64(st, ev->args[i]);
		break;
	case RT_EVENT_LOG:
		rc |= put_str(st, ev->level);
		rc |= put_xstr(st, &ev->msg);
		rc |= put_bytes(st, SITE_STR(site, file));
		rc |= put_u32(st, site ? site->line : 0);
		rc |= put_bytes(st, SITE_STR(site, func));
		break;
	case RT_EVENT_ENTER:
	case RT_EVENT_EXIT:
		rc |= put_u32(st, ev->depth);
		rc |= put_u32(st, ev->function_flags);
		rc |= put_u64(st, ev->addr);
		rc |= put_u64(st, ev->call_site);
		rc |= put_str(st, ev->place.func);
		rc |= put_str(st, ev->place.file);
		rc |= put_u32(st, ev->place.file ? ev->place.line : 0);
		rc |= put_str(st, ev->place.module);
		rc |= put_u64(st, ev->place.module ? ev->place.offset : 0);
		break;
	case RT_EVENT_LOST:
		rc |= put_u64(st, ev->count);
		rc |= put_str(st, ev->reason);
		rc |= put_str(st, ev->note);
		rc |= put_u8(st, ev->estimated != 0);
		rc |= put_u8(st, ev->timed != 0);
		break;
	case RT_EVENT_IO: {
		const struct rt_io_shown *s = &ev->io;
		const struct rt_io_event *io = &s->ev;
		if (!s->ok) {
			/* a payload that did not parse: the op says so, the path why */
			rc |= put_str(st, "malformed");
			rc |= put_u32(st, (uint32_t)-1);
			rc |= put_str(st, s->problem ? s->problem : "");
			rc |= put_u64(st, (uint64_t)-1);
			rc |= put_u64(st, 0);
			rc |= put_u64(st, 0);
			rc |= put_u32(st, 0);
			rc |= put_u64(st, (uint64_t)-1);
			break;
		}
		const char *op = rt_io_op_json_name(io->op);
		rc |= put_str(st, op ? op : "");
		rc |= put_u32(st, (uint32_t)io->fd);
		/* as dump shows it: the path the call named, else its descriptor's name then */
		if (rt_io_shows_named_path(io))
			rc |=
			    put_bytes(st, io->path ? io->path : "", io->path ? io->path_length : 0);
		else if (s->names.fd.known)
			rc |= put_bytes(st, s->names.fd.name, s->names.fd.name_length);
		else
			rc |= put_bytes(st, "", 0);
		int64_t offset = -1;
		if (io->flags & RT_IO_F_OFFSET)
			offset = io->offset;
		else if (s->names.offset_derived)
			offset = s->names.offset;
		rc |= put_u64(st, (uint64_t)offset);
		rc |= put_u64(st, (uint64_t)io->size);
		rc |= put_u64(st, (uint64_t)io->result);
		rc |= put_u32(st, rt_io_event_failed(io) ? (uint32_t)-io->result : 0);
		rc |= put_u64(st, (uint64_t)(s->has_duration ? s->dur_ns : -1));
		break;
	}
	default:
		break;
	}
	return rc ? -ENOMEM : 0;
}

/* ---- streams and packets ---- */

static size_t stream_hash(int32_t pid, int32_t tid)
{
	uint64_t h = ((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 17);
}

static struct ctf_stream *stream_find(struct ctf_state *st, int32_t pid, int32_t tid)
{
	if (2 * (st->count + 1) > st->capacity) {
		size_t capacity = st->capacity ? 2 * st->capacity : 64;
		struct ctf_stream *t = calloc(capacity, sizeof *t);
		if (!t)
			return NULL;
		for (size_t i = 0; i < st->capacity; i++) {
			if (!st->streams[i].used)
				continue;
			size_t j =
			    stream_hash(st->streams[i].pid, st->streams[i].tid) & (capacity - 1);
			while (t[j].used)
				j = (j + 1) & (capacity - 1);
			t[j] = st->streams[i];
		}
		free(st->streams);
		st->streams = t;
		st->capacity = capacity;
	}
	size_t j = stream_hash(pid, tid) & (st->capacity - 1);
	while (st->streams[j].used) {
		if (st->streams[j].pid == pid && st->streams[j].tid == tid)
			return &st->streams[j];
		j = (j + 1) & (st->capacity - 1);
	}
	struct ctf_stream *s = &st->streams[j];
	memset(s, 0, sizeof *s);
	s->used = 1;
	s->pid = pid;
	s->tid = tid;
	st->count++;
	return s;
}

static void le_at(unsigned char *p, uint64_t v, unsigned bytes)
{
	for (unsigned i = 0; i < bytes; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

/*
 * Write the stream's packet (events or not): its header and context set,
 * appended to the stream's file.  The next packet begins empty.
 */
static int packet_write(struct ctf_state *st, struct ctf_stream *s, uint64_t ts)
{
	unsigned char pre[CTF_PREAMBLE];
	unsigned char *p = s->buf ? s->buf : pre;
	size_t length = s->buf ? s->length : CTF_PREAMBLE;
	uint64_t begin = s->events ? s->ts_begin : ts;
	uint64_t end = s->events ? s->ts_last : ts;
	le_at(p, CTF_MAGIC, 4);
	memcpy(p + 4, st->uuid, 16);
	le_at(p + 20, 0, 4);
	le_at(p + 24, begin, 8);
	le_at(p + 32, end, 8);
	le_at(p + 40, (uint64_t)length * 8, 8);
	le_at(p + 48, (uint64_t)length * 8, 8);
	le_at(p + 56, s->discarded, 8);
	char name[48];
	snprintf(name, sizeof name, "stream_%d_%d", (int)s->pid, (int)s->tid);
	int fd = openat(st->dir_fd, name,
			O_WRONLY | O_CREAT | O_CLOEXEC | (s->written ? O_APPEND : O_TRUNC), 0666);
	if (fd < 0)
		return -errno;
	int rc = write_all(fd, p, length);
	if (close(fd) != 0 && !rc)
		rc = -errno;
	if (rc)
		return rc;
	s->written = 1;
	s->discarded_written = s->discarded;
	s->length = CTF_PREAMBLE;
	s->events = 0;
	return 0;
}

/* ---- the exporter ---- */

static void ctf_free(void *state)
{
	struct ctf_state *st = state;
	if (!st)
		return;
	for (size_t i = 0; i < st->capacity; i++)
		free(st->streams[i].buf);
	free(st->streams);
	free(st->site_base);
	free(st->site_tables);
	if (st->dir_fd >= 0)
		close(st->dir_fd);
	free(st->dir);
	free(st);
}

/*
 * The directory: made when missing (mode 0777 less the umask), refused
 * when it holds anything, when it is a symbolic link, or when it belongs
 * to another user, who could read and replace what is written in it.  The
 * message does not name it: the command puts its name first.
 */
static int open_dir(const char *dir, char *message, size_t message_size)
{
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		int e = errno;
		snprintf(message, message_size, "cannot make the directory: %s", strerror(e));
		return -e;
	}
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(message, message_size, "%s%s", strerror(e),
			 e == ELOOP || e == ENOTDIR ? " (a symbolic link is not followed)" : "");
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
		close(fd);
		snprintf(message, message_size,
			 "the directory belongs to uid %lu, not to this user (uid %lu): not "
			 "written",
			 (unsigned long)st.st_uid, (unsigned long)geteuid());
		return -EPERM;
	}
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		int e = errno;
		if (dup_fd >= 0)
			close(dup_fd);
		close(fd);
		snprintf(message, message_size, "%s", strerror(e));
		return -e;
	}
	struct dirent *de;
	int empty = 1;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			empty = 0;
			break;
		}
	}
	closedir(d);
	if (!empty) {
		close(fd);
		snprintf(message, message_size,
			 "the directory is not empty (a CTF trace goes in a new one)");
		return -EEXIST;
	}
	return fd;
}

static int ctf_open(void **state, const struct rt_export_target *target, char *message,
		    size_t message_size)
{
	if (!target->dir) {
		snprintf(message, message_size, "--ctf writes a directory: name it");
		return -EINVAL;
	}
	struct ctf_state *st = calloc(1, sizeof *st);
	if (!st)
		return -ENOMEM;
	st->dir_fd = -1;
	st->dir = strdup(target->dir);
	if (!st->dir) {
		ctf_free(st);
		return -ENOMEM;
	}
	int fd = open_dir(target->dir, message, message_size);
	if (fd < 0) {
		ctf_free(st);
		return fd;
	}
	st->dir_fd = fd;
	if (getrandom(st->uuid, sizeof st->uuid, 0) != (ssize_t)sizeof st->uuid) {
		/* no randomness: a uuid from the time and the process is still unique enough */
		uint64_t a = (uint64_t)time(NULL), b = (uint64_t)getpid();
		memcpy(st->uuid, &a, 8);
		memcpy(st->uuid + 8, &b, 8);
	}
	st->uuid[6] = (unsigned char)((st->uuid[6] & 0x0F) | 0x40); /* version 4 */
	st->uuid[8] = (unsigned char)((st->uuid[8] & 0x3F) | 0x80);
	st->wall0 = rt_trace_set_wall_start(target->set);
	int rc = assign_site_ids(st, target->set);
	if (rc) {
		ctf_free(st);
		return rc;
	}
	rc = write_metadata(st);
	if (rc) {
		snprintf(message, message_size, "metadata: %s", strerror(-rc));
		ctf_free(st);
		return rc;
	}
	*state = st;
	return 0;
}

static uint64_t stream_time(const struct ctf_stream *s, int64_t ts_ns)
{
	uint64_t ts = ts_ns < 0 ? 0 : (uint64_t)ts_ns;
	return ts < s->ts_last ? s->ts_last : ts;
}

/*
 * The class of a trace event: its site's own when the site is one the
 * metadata declared (the same entry of the same source's table), else
 * "trace" (a lost site: the record's raw words as unsigned arguments).
 */
static uint32_t trace_class(const struct ctf_state *st, const struct rt_event *ev)
{
	if (!ev->site || ev->source >= st->source_count || st->site_base[ev->source] == CTF_NO_BASE)
		return CTF_ID_TRACE;
	const struct rt_site_table *t = st->site_tables[ev->source];
	if (ev->site_id >= t->count || &t->sites[ev->site_id] != ev->site ||
	    !site_has_class(ev->site))
		return CTF_ID_TRACE;
	return st->site_base[ev->source] + ev->site_id;
}

/* Encode the event (its header, context and fields) after the stream's last one. */
static int encode(struct ctf_state *st, const struct rt_event *ev, uint32_t id, uint64_t ts)
{
	int rc = put_u32(st, id);
	rc |= put_u64(st, ts);
	rc |= put_u32(st, (uint32_t)ev->pid);
	rc |= put_u32(st, (uint32_t)ev->tid);
	rc |= put_u32(st, (uint32_t)ev->cpu);
	rc |= put_u64(st, ev->has_seq ? ev->seq : 0);
	rc |= put_xstr(st, &ev->thread);
	if (rc || put_fields(st, ev, id >= CTF_ID_SITES))
		return -ENOMEM;
	return 0;
}

/*
 * Encode the event into the stream's packet.  When it takes the packet
 * past CTF_PACKET_SIZE, the packet is written without it and it moves to
 * the start of the next one (an event larger than a packet gets a packet
 * of its own size).
 */
static int stream_append(struct ctf_state *st, struct ctf_stream *s, const struct rt_event *ev,
			 uint32_t id, uint64_t ts)
{
	if (!s->buf) {
		if (grow(s, CTF_PACKET_SIZE))
			return -ENOMEM;
		s->length = CTF_PREAMBLE;
	}
	size_t start = s->length;
	st->cur = s;
	int rc = encode(st, ev, id, ts);
	if (rc) {
		s->length = start;
		return rc;
	}
	size_t need = s->length - start;
	if (s->events && s->length > CTF_PACKET_SIZE) {
		s->length = start;
		rc = packet_write(st, s, ts);
		if (rc)
			return rc;
		memmove(s->buf + CTF_PREAMBLE, s->buf + start, need);
		s->length = CTF_PREAMBLE + need;
	}
	if (!s->events++)
		s->ts_begin = ts;
	s->ts_last = ts;
	return 0;
}

static int ctf_event(void *state, const struct rt_event *ev)
{
	struct ctf_state *st = state;
	if (st->error)
		return st->error;
	struct ctf_stream *s = stream_find(st, ev->pid, ev->tid);
	if (!s)
		return st->error = -ENOMEM;
	uint64_t ts = stream_time(s, ev->ts_ns);
	int rc = 0;
	uint32_t id;
	switch (ev->kind) {
	case RT_EVENT_TRACE:
		id = trace_class(st, ev);
		break;
	case RT_EVENT_LOG:
		id = CTF_ID_LOG;
		break;
	case RT_EVENT_ENTER:
		id = CTF_ID_ENTER;
		break;
	case RT_EVENT_EXIT:
		id = CTF_ID_EXIT;
		break;
	case RT_EVENT_IO:
		id = CTF_ID_IO;
		break;
	case RT_EVENT_LOST:
		id = CTF_ID_LOST;
		if (!ev->count)
			break;
		/*
		 * The packet holding the events before the loss ends here (or an
		 * empty one, when the stream has none yet), so that the next one,
		 * which begins with the lost event, carries the new count.
		 */
		if (s->events || !s->written)
			rc = packet_write(st, s, ts);
		if (rc)
			return st->error = rc;
		s->discarded += ev->count;
		break;
	default:
		return 0;
	}
	rc = stream_append(st, s, ev, id, ts);
	return rc ? (st->error = rc) : 0;
}

static int ctf_finish(void *state)
{
	struct ctf_state *st = state;
	if (st->error)
		return st->error;
	for (size_t i = 0; i < st->capacity; i++) {
		struct ctf_stream *s = &st->streams[i];
		if (!s->used)
			continue;
		/* the last packet; or an empty one carrying losses after it */
		if (s->events || s->discarded != s->discarded_written || !s->written) {
			int rc = packet_write(st, s, s->ts_last);
			if (rc)
				return st->error = rc;
		}
	}
	if (fsync(st->dir_fd) != 0 && errno != EINVAL)
		return -errno;
	return 0;
}

const struct rt_exporter rt_exporter_ctf = {
    .name = "ctf",
    .writes_dir = 1,
    .open = ctf_open,
    .event = ctf_event,
    .finish = ctf_finish,
    .free = ctf_free,
};
