/*
 * report_io.c - `ringtrace report --io`: per file and process, the opens,
 * reads and writes, the bytes read and written, the time spent in calls on
 * the file and the calls that failed, from the RT_REC_IO records of
 * `ringtrace record --io`.
 *
 * One pass over the merged time line: each process's records go through a
 * time-aware descriptor table of its own, as dump shows them
 * (present/io_view.h), so every call on a descriptor counts for the file
 * the descriptor named at the time.  A call on a descriptor the
 * table cannot name counts on a row of its own ("fd N, name unknown")
 * rather than on a guess.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/report_io.h"
#include "common/key_table.h"
#include "common/output.h"
#include "present/units.h"
#include "present/io_view.h"
#include "read/trace_set.h"

#define KEY_MAX (8 + RT_IO_PATH_BYTES_MAX + 64)

struct io_row {
	const char *path; /* into the key table */
	int32_t pid;
	int unknown;	 /* path says which descriptor could not be named */
	uint32_t source; /* whose program */
	uint64_t opens, reads, writes, others, errors;
	uint64_t read_bytes, written_bytes;
	int64_t time_ns;
};

struct io_report {
	const struct rt_report_io_options *o;
	struct rt_trace_set *set;
	struct rt_io_view view; /* each source's calls parsed, its descriptors named by time */
	struct rt_key_table keys;
	struct io_row *rows;
	size_t count, capacity;
};

/* The row of (source's process, name); NULL when out of memory. */
static struct io_row *row_of(struct io_report *r, uint32_t source, const char *name, size_t n,
			     int unknown)
{
	char key[KEY_MAX];
	int32_t pid = r->set->sources[source].reader->header.pid;
	if (n > sizeof(key) - 5)
		n = sizeof(key) - 5;
	memcpy(key, &pid, 4);
	key[4] = (char)unknown;
	memcpy(key + 5, name, n);
	long i = rt_key_table_find(&r->keys, key, n + 5);
	if (i < 0)
		return NULL;
	if ((size_t)i == r->count) {
		if (r->count == r->capacity) {
			size_t cap = r->capacity ? r->capacity * 2 : 64;
			struct io_row *rows = realloc(r->rows, cap * sizeof(*rows));
			if (!rows)
				return NULL;
			r->rows = rows;
			r->capacity = cap;
		}
		struct io_row *row = &r->rows[r->count++];
		memset(row, 0, sizeof(*row));
		row->path = r->keys.keys[i] + 5;
		row->pid = pid;
		row->unknown = unknown;
		row->source = source;
	}
	return &r->rows[i];
}

/* The row of a descriptor as resolved: its file, or its own "unknown" row. */
static struct io_row *row_of_fd(struct io_report *r, uint32_t source, int32_t fd,
				const struct rt_fd_name *name)
{
	if (name->known)
		return row_of(r, source, name->name, name->name_length, 0);
	char what[64];
	int n =
	    snprintf(what, sizeof(what), "fd %d, name %s", fd, name->why ? name->why : "unknown");
	return row_of(r, source, what, (size_t)n, 1);
}

static int is_read(unsigned op)
{
	return op == RT_IO_READ || op == RT_IO_PREAD || op == RT_IO_READV || op == RT_IO_PREADV ||
	       op == RT_IO_FREAD;
}

static int is_write(unsigned op)
{
	return op == RT_IO_WRITE || op == RT_IO_PWRITE || op == RT_IO_WRITEV ||
	       op == RT_IO_PWRITEV || op == RT_IO_FWRITE;
}

static int count_call(struct io_report *r, uint32_t source, const struct rt_item *it)
{
	struct rt_io_shown shown;
	rt_io_view_take(&r->view, source, it, 1, &shown);
	if (!shown.ok)
		return 0; /* counted by the view as malformed */
	const struct rt_io_event ev = shown.ev;
	const struct rt_fd_resolved res = shown.names;
	if (ev.op == RT_IO_RUNDOWN || ev.op == RT_IO_NAMED)
		return 0; /* names, not calls of the program */
	int64_t ns = shown.has_duration ? shown.dur_ns : 0;
	int failed = rt_io_event_failed(&ev);
	struct io_row *row;
	if (ev.op == RT_IO_OPEN || ev.op == RT_IO_UNLINK || ev.op == RT_IO_RENAME ||
	    (ev.op == RT_IO_FOPEN && ev.path))
		row = row_of(r, source, ev.path ? ev.path : "", ev.path_length, 0);
	else
		row = row_of_fd(r, source, ev.fd, &res.fd);
	if (!row)
		return -ENOMEM;
	row->time_ns += ns;
	row->errors += failed;
	uint64_t done = !failed && ev.result > 0 ? (uint64_t)ev.result : 0;
	/* fdopen (a stream without a path) makes no open: its descriptor was opened before */
	if (ev.op == RT_IO_OPEN || (ev.op == RT_IO_FOPEN && ev.path)) {
		row->opens++;
	} else if (is_read(ev.op)) {
		row->reads++;
		row->read_bytes += done;
	} else if (is_write(ev.op)) {
		row->writes++;
		row->written_bytes += done;
	} else if (ev.op == RT_IO_COPY_FILE_RANGE || ev.op == RT_IO_SENDFILE) {
		/* read from the input's file, written to the output's */
		row->reads++;
		row->read_bytes += done;
		struct io_row *out = row_of_fd(r, source, (int32_t)ev.aux[0], &res.fd2);
		if (!out)
			return -ENOMEM;
		out->writes++;
		out->written_bytes += done;
	} else {
		row->others++;
	}
	return 0;
}

/* ---- output -------------------------------------------------------------- */

static enum rt_report_io_sort sort_by;

static int64_t sort_value(const struct io_row *r)
{
	switch (sort_by) {
	case RT_REPORT_IO_BYTES:
		return (int64_t)(r->read_bytes + r->written_bytes);
	case RT_REPORT_IO_OPENS:
		return (int64_t)r->opens;
	case RT_REPORT_IO_READS:
		return (int64_t)r->reads;
	case RT_REPORT_IO_WRITES:
		return (int64_t)r->writes;
	case RT_REPORT_IO_ERRORS:
		return (int64_t)r->errors;
	default:
		return r->time_ns;
	}
}

static int by_key(const void *a, const void *b)
{
	const struct io_row *x = a, *y = b;
	int64_t vx = sort_value(x), vy = sort_value(y);
	if (vx != vy)
		return vx > vy ? -1 : 1;
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static void put_duration(struct rt_out *out, int64_t ns)
{
	char text[RT_UNITS_MAX];
	rt_out_str(out, rt_units_duration_column(text, sizeof(text), ns));
}

static void print_rows(struct io_report *r, struct rt_out *out)
{
	sort_by = r->o->sort;
	if (r->count)
		qsort(r->rows, r->count, sizeof(*r->rows), by_key);
	if (!r->o->json)
		rt_out_str(out, "   Opens     Reads    Writes    Bytes read  Bytes written  "
				"       Time   Errors      PID  File\n");
	for (size_t i = 0; i < r->count; i++) {
		const struct io_row *row = &r->rows[i];
		const struct rt_reader *rd = r->set->sources[row->source].reader;
		if (r->o->json) {
			rt_out_str(out,
				   row->unknown ? "{\"file\":null,\"unknown\":" : "{\"file\":");
			rt_out_json_string(out, row->path, strlen(row->path));
			rt_out_printf(out, ",\"pid\":%d,\"program\":", row->pid);
			rt_out_json_string(out, rd->header.program,
					   strnlen(rd->header.program, sizeof(rd->header.program)));
			rt_out_printf(
			    out,
			    ",\"opens\":%llu,\"reads\":%llu,\"writes\":%llu,"
			    "\"read_bytes\":%llu,\"written_bytes\":%llu,\"other_calls\":%llu,"
			    "\"time_ns\":%lld,\"errors\":%llu}\n",
			    (unsigned long long)row->opens, (unsigned long long)row->reads,
			    (unsigned long long)row->writes, (unsigned long long)row->read_bytes,
			    (unsigned long long)row->written_bytes, (unsigned long long)row->others,
			    (long long)row->time_ns, (unsigned long long)row->errors);
			continue;
		}
		rt_out_printf(out, "%8llu  %8llu  %8llu  %12llu  %13llu  ",
			      (unsigned long long)row->opens, (unsigned long long)row->reads,
			      (unsigned long long)row->writes, (unsigned long long)row->read_bytes,
			      (unsigned long long)row->written_bytes);
		put_duration(out, row->time_ns);
		rt_out_printf(out, "  %7llu  %7d  %s%s%s\n", (unsigned long long)row->errors,
			      row->pid, row->unknown ? "(" : "", rt_escaped(row->path),
			      row->unknown ? ")" : "");
	}
	uint64_t malformed = r->view.malformed;
	if (!r->o->json && malformed)
		rt_out_printf(out, "# %llu I/O record%s did not decode and count nowhere\n",
			      (unsigned long long)malformed, malformed == 1 ? "" : "s");
}

int rt_report_io_set(struct rt_trace_set *set, const void *options, struct rt_out *out)
{
	struct io_report r;
	memset(&r, 0, sizeof(r));
	r.o = options;
	r.set = set;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	const struct rt_reader **readers = calloc(set->source_count + 1, sizeof(*readers));
	for (size_t i = 0; readers && i < set->source_count; i++)
		readers[i] = set->sources[i].reader;
	int rc = readers ? rt_io_view_init(&r.view, readers, set->source_count) : -ENOMEM;
	/* a process forked from or forking a traced one shares file positions with it */
	for (size_t i = 0; !rc && i < set->source_count; i++)
		if (rt_trace_set_shares_files(set, i))
			rt_io_view_forked(&r.view, i);
	if (!rc)
		rc = rt_trace_set_start(set, r.o->has_tid ? r.o->tid : 0);
	if (!rc) {
		const struct rt_item *item;
		uint32_t source;
		while (!rc && (item = rt_trace_set_next(set, &source)) != NULL)
			if (item->kind == RT_ITEM_IO && item->log.payload)
				rc = count_call(&r, source, item);
		if (!rc)
			rc = rt_trace_set_error(set);
	}
	if (!rc)
		print_rows(&r, out);
	rt_io_view_free(&r.view);
	free(readers);
	rt_key_table_free(&r.keys);
	free(r.rows);
	return rc;
}
