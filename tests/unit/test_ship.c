/*
 * test_ship.c - ringtrace ship's pieces without a server: rows decoded
 * back column by column by the types the schema declares (so the encoder
 * and the CREATE TABLE cannot drift apart), the journal (resume points,
 * escaping, a line cut short by a crash, reopening), table names and URLs.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/check.h"
#include "../lib/test_site.h"
#include "ship/durations.h"
#include "ship/http.h"
#include "ship/journal.h"
#include "ship/rows.h"
#include "ship/schema.h"

/* One decoded value: integers as their bits, strings and arrays as spans of the row. */
struct value {
	uint64_t u;
	const unsigned char *bytes;
	size_t length;
	uint64_t items[16];
	size_t count;
};

static int varint(const unsigned char **p, const unsigned char *end, uint64_t *out)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64 && *p < end; shift += 7) {
		unsigned char b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

static int fixed(const unsigned char **p, const unsigned char *end, size_t n, uint64_t *out)
{
	if ((size_t)(end - *p) < n)
		return -1;
	*out = 0;
	memcpy(out, *p, n);
	*p += n;
	return 0;
}

/* Decode one row by the schema's types; the values in column order.  0, or -1. */
static int decode_row(const unsigned char **p, const unsigned char *end, struct value *values)
{
	for (size_t i = 0; i < rt_ship_column_count; i++) {
		const char *type = rt_ship_columns[i].type;
		struct value *v = &values[i];
		memset(v, 0, sizeof(*v));
		if (strcmp(type, "String") == 0) {
			if (varint(p, end, &v->u) || (uint64_t)(end - *p) < v->u)
				return -1;
			v->bytes = *p;
			v->length = (size_t)v->u;
			*p += v->length;
		} else if (strcmp(type, "Array(Int64)") == 0) {
			uint64_t n;
			if (varint(p, end, &n) || n > 16)
				return -1;
			v->count = (size_t)n;
			for (size_t k = 0; k < v->count; k++)
				if (fixed(p, end, 8, &v->items[k]))
					return -1;
		} else {
			size_t n = strcmp(type, "UInt8") == 0	? 1
				   : strcmp(type, "Int16") == 0 ? 2
				   : strcmp(type, "UInt32") == 0 || strcmp(type, "Int32") == 0 ||
					   strcmp(type, "DateTime") == 0
				       ? 4
				   : strcmp(type, "UInt64") == 0 || strcmp(type, "Int64") == 0 ? 8
											       : 0;
			if (!CHECK(n != 0) || fixed(p, end, n, &v->u))
				return -1;
		}
	}
	return 0;
}

static long column(const char *name)
{
	for (size_t i = 0; i < rt_ship_column_count; i++)
		if (strcmp(rt_ship_columns[i].name, name) == 0)
			return (long)i;
	check_fail(__FILE__, __LINE__, "no column %s", name);
	return 0;
}

static int str_is(const struct value *v, const char *s)
{
	return v->length == strlen(s) && memcmp(v->bytes, s, v->length) == 0;
}

static void test_rows(void)
{
	struct rt_ship_buffer b = {0};
	struct rt_site begin = test_site(RT_SITE_BEGIN, "request", 0);
	struct rt_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = RT_EVENT_TRACE;
	ev.site = &begin;
	ev.span = RT_EVENT_SPAN_BEGIN;
	ev.ts_ns = 1500000000; /* 1.5 s after the set's zero */
	ev.pid = 77;
	ev.tid = 78;
	ev.program = (struct rt_event_str){"server", 6};
	ev.thread = (struct rt_event_str){"worker\t1", 8};
	ev.cpu = 3;
	ev.has_seq = 1;
	ev.seq = 123456789;
	ev.nargs = 2;
	ev.args[0] = (uint64_t)-5;
	ev.args[1] = UINT64_MAX - 1;
	struct rt_ship_row_context c = {
	    .host = "web-1",
	    .host_length = 5,
	    .file_id = 0x1122334455667788ull,
	    .file_seq = 4,
	    .ordinal = 99,
	    .batch_first = 64,
	    .wall0 = 1700000000000000000ull,
	    .dur_ns = -1,
	};
	CHECK_EQ(rt_ship_row_encode(&b, &c, &ev), 0);

	/* a loss of no thread, a log message, an exit with its duration */
	struct rt_event lost;
	memset(&lost, 0, sizeof(lost));
	lost.kind = RT_EVENT_LOST;
	lost.count = 17;
	lost.reason = "overwritten";
	lost.raw_time = 1;
	lost.cpu = -1;
	c.ordinal = 100;
	CHECK_EQ(rt_ship_row_encode(&b, &c, &lost), 0);

	struct rt_site log_site = test_site(RT_SITE_LOG, "log", 0);
	struct rt_event log;
	memset(&log, 0, sizeof(log));
	log.kind = RT_EVENT_LOG;
	log.site = &log_site;
	log.level = "warn";
	log.msg = (struct rt_event_str){"disk \xff"
					" full\n",
					12};
	log.cpu = -1;
	c.ordinal = 101;
	CHECK_EQ(rt_ship_row_encode(&b, &c, &log), 0);

	struct rt_event exit_ev;
	memset(&exit_ev, 0, sizeof(exit_ev));
	exit_ev.kind = RT_EVENT_EXIT;
	exit_ev.addr = 0x401000;
	exit_ev.depth = 3;
	exit_ev.place.func = "parse(char const*)";
	exit_ev.cpu = 70000; /* out of Int16: unknown */
	c.ordinal = 102;
	c.dur_ns = 2500;
	CHECK_EQ(rt_ship_row_encode(&b, &c, &exit_ev), 0);

	struct value v[64];
	CHECK(rt_ship_column_count <= 64);
	const unsigned char *p = b.data, *end = b.data + b.length;
	if (!CHECK(decode_row(&p, end, v) == 0))
		return;
	CHECK(str_is(&v[column("host")], "web-1"));
	CHECK_EQ(v[column("file_id")].u, 0x1122334455667788ull);
	CHECK_EQ(v[column("file_seq")].u, 4);
	CHECK_EQ(v[column("ordinal")].u, 99);
	CHECK_EQ(v[column("batch_first")].u, 64);
	CHECK_EQ(v[column("wall_ns")].u, 1700000001500000000ull);
	CHECK_EQ(v[column("time")].u, 1700000001);
	CHECK_EQ(v[column("pid")].u, 77);
	CHECK_EQ(v[column("tid")].u, 78);
	CHECK(str_is(&v[column("program")], "server"));
	CHECK(str_is(&v[column("thread")], "worker\t1"));
	CHECK_EQ(v[column("cpu")].u, 3);
	CHECK_EQ(v[column("seq")].u, 123456789);
	CHECK(str_is(&v[column("kind")], "trace"));
	CHECK(str_is(&v[column("span")], "begin"));
	CHECK(str_is(&v[column("tag")], "request"));
	CHECK(str_is(&v[column("src_file")], "a.c"));
	CHECK_EQ(v[column("line")].u, 7);
	CHECK(str_is(&v[column("func")], "f"));
	CHECK_EQ(v[column("args")].count, 2);
	CHECK_EQ(v[column("args")].items[0], (uint64_t)-5);
	CHECK_EQ(v[column("args")].items[1], UINT64_MAX - 1);
	CHECK_EQ(v[column("dur_ns")].u, (uint64_t)-1);
	CHECK_EQ(v[column("fd")].u, 0xffffffffu);
	CHECK_EQ(v[column("offset")].u, (uint64_t)-1);

	if (!CHECK(decode_row(&p, end, v) == 0))
		return;
	CHECK(str_is(&v[column("kind")], "lost"));
	CHECK_EQ(v[column("lost_count")].u, 17);
	CHECK(str_is(&v[column("lost_reason")], "overwritten"));
	CHECK_EQ(v[column("wall_ns")].u, 0);
	CHECK_EQ(v[column("time")].u, 0);
	CHECK_EQ(v[column("cpu")].u, 0xffff);
	CHECK_EQ(v[column("args")].count, 0);

	if (!CHECK(decode_row(&p, end, v) == 0))
		return;
	CHECK(str_is(&v[column("kind")], "log"));
	CHECK(str_is(&v[column("level")], "warn"));
	CHECK(str_is(&v[column("message")], "disk \xff"
					    " full\n"));
	CHECK(str_is(&v[column("tag")], "log"));

	if (!CHECK(decode_row(&p, end, v) == 0))
		return;
	CHECK(str_is(&v[column("kind")], "exit"));
	CHECK(str_is(&v[column("function")], "parse(char const*)"));
	CHECK_EQ(v[column("addr")].u, 0x401000);
	CHECK_EQ(v[column("depth")].u, 3);
	CHECK_EQ(v[column("dur_ns")].u, 2500);
	CHECK_EQ(v[column("cpu")].u, 0xffff);
	CHECK(str_is(&v[column("message")], ""));
	/* four rows, nothing after them: every byte the encoder wrote is a column */
	CHECK(p == end);
	rt_ship_buffer_free(&b);
}

static void test_schema(void)
{
	char *sql = rt_ship_create_table("db.events_1");
	CHECK(sql && strstr(sql, "CREATE TABLE IF NOT EXISTS db.events_1 (") == sql);
	CHECK(sql && strstr(sql, "ORDER BY (host, file_id, file_seq, ordinal)"));
	CHECK(sql && strstr(sql, "ReplacingMergeTree"));
	for (size_t i = 0; sql && i < rt_ship_column_count; i++) {
		char line[128];
		snprintf(line, sizeof(line), "    %s %s", rt_ship_columns[i].name,
			 rt_ship_columns[i].type);
		CHECK(strstr(sql, line));
	}
	free(sql);
	char *list = rt_ship_column_list();
	CHECK(list && strncmp(list, "(host, file_id, file_seq, ordinal, ", 35) == 0);
	free(list);
	CHECK(rt_ship_table_name_ok("ringtrace_events"));
	CHECK(rt_ship_table_name_ok("fleet.events"));
	CHECK(!rt_ship_table_name_ok(""));
	CHECK(!rt_ship_table_name_ok("1x"));
	CHECK(!rt_ship_table_name_ok("a.b.c"));
	CHECK(!rt_ship_table_name_ok("x; DROP TABLE y"));
	CHECK(!rt_ship_table_name_ok("x`"));
	char out[256];
	rt_ship_url_without_password("http://u:secret@h:8123/?database=d", out, sizeof(out));
	CHECK_STR(out, "http://h:8123/?database=d");
	rt_ship_url_without_password("http://h:8123", out, sizeof(out));
	CHECK_STR(out, "http://h:8123");
	rt_ship_url_without_password("http://h:8123/?q=a@b", out, sizeof(out));
	CHECK_STR(out, "http://h:8123/?q=a@b");
}

static void test_journal(void)
{
	char dir[] = "/tmp/test_ship.XXXXXX";
	if (!CHECK(mkdtemp(dir)))
		return;
	char path[256], message[512];
	snprintf(path, sizeof(path), "%s/sub/dir/ship.journal", dir);
	struct rt_ship_journal *j = rt_ship_journal_open(path, message, sizeof(message));
	if (!CHECK(j != NULL))
		return;
	const char *dest = "http://h:8123#t", *host = "host with space%";
	struct rt_ship_progress p;
	CHECK_EQ(rt_ship_journal_find(j, dest, host, 7, 0, &p), 0);
	struct rt_ship_progress b1 = {.size = 4096, .next = 100};
	struct rt_ship_progress b2 = {.size = 4096, .next = 200};
	struct rt_ship_progress other = {.size = 8192, .next = 5};
	CHECK_EQ(rt_ship_journal_record(j, dest, host, 7, 0, &b1, message, sizeof(message)), 0);
	CHECK_EQ(rt_ship_journal_record(j, dest, host, 7, 0, &b2, message, sizeof(message)), 0);
	CHECK_EQ(rt_ship_journal_record(j, dest, host, 7, 1, &other, message, sizeof(message)), 0);
	CHECK_EQ(rt_ship_journal_find(j, dest, host, 7, 0, &p), 1);
	CHECK_EQ(p.next, 200);
	rt_ship_journal_close(j);

	/* a crash in the middle of a line: that line says nothing, the ones before hold */
	int fd = open(path, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "B http://h:8123#t x 0000000000000007 0 4096 3", 45) == 45);
	close(fd);
	j = rt_ship_journal_open(path, message, sizeof(message));
	if (!CHECK(j != NULL))
		return;
	CHECK_EQ(rt_ship_journal_find(j, dest, host, 7, 0, &p), 1);
	CHECK_EQ(p.next, 200);
	CHECK_EQ(p.size, 4096);
	CHECK(!p.done);
	CHECK_EQ(rt_ship_journal_find(j, dest, host, 7, 1, &p), 1);
	CHECK_EQ(p.next, 5);
	/* another destination or host is another fact */
	CHECK_EQ(rt_ship_journal_find(j, "http://h:8123#u", host, 7, 0, &p), 0);
	CHECK_EQ(rt_ship_journal_find(j, dest, "host with space", 7, 0, &p), 0);
	struct rt_ship_progress done = {.size = 4096, .next = 250, .rows = 250, .done = 1};
	CHECK_EQ(rt_ship_journal_record(j, dest, host, 7, 0, &done, message, sizeof(message)), 0);
	rt_ship_journal_close(j);
	j = rt_ship_journal_open(path, message, sizeof(message));
	if (CHECK(j != NULL)) {
		CHECK_EQ(rt_ship_journal_find(j, dest, host, 7, 0, &p), 1);
		CHECK(p.done);
		CHECK_EQ(p.rows, 250);
		rt_ship_journal_close(j);
	}
	/* every line is whole and its fields have no space inside */
	FILE *f = fopen(path, "r");
	char line[512];
	int lines = 0;
	while (f && fgets(line, sizeof(line), f)) {
		int spaces = 0;
		for (char *s = line; *s; s++)
			spaces += *s == ' ';
		if (line[0] != 'B' || strstr(line, "4096 3") == NULL)
			CHECK_EQ(spaces, 6);
		lines++;
	}
	if (f)
		fclose(f);
	CHECK_EQ(lines, 5);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
}

static size_t count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	int c;
	while (f && (c = fgetc(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/* A journal of many more lines than files is rewritten, a line per file, unless in use. */
static void test_journal_compaction(void)
{
	char dir[] = "/tmp/test_ship_compact.XXXXXX";
	if (!CHECK(mkdtemp(dir)))
		return;
	char path[256], message[512];
	snprintf(path, sizeof(path), "%s/ship.journal", dir);
	struct rt_ship_journal *j = rt_ship_journal_open(path, message, sizeof(message));
	if (!CHECK(j != NULL))
		return;
	const char *dest = "http://h:8123#t";
	for (uint64_t b = 1; b <= 6000; b++) {
		struct rt_ship_progress p = {.size = 1 << 20, .next = b * 100};
		if (!CHECK(rt_ship_journal_record(j, dest, "h1", 9, (uint32_t)(b % 3), &p, message,
						  sizeof(message)) == 0))
			break;
	}
	struct rt_ship_progress done = {.size = 5, .next = 7, .rows = 7, .done = 1};
	CHECK_EQ(rt_ship_journal_record(j, dest, "h2", 10, 0, &done, message, sizeof(message)), 0);
	CHECK_EQ(count_lines(path), 6001);
	/* j still has it open: a second ship leaves it as it is */
	struct rt_ship_journal *k = rt_ship_journal_open(path, message, sizeof(message));
	CHECK(k != NULL);
	CHECK_EQ(count_lines(path), 6001);
	rt_ship_journal_close(k);
	rt_ship_journal_close(j);
	/* alone, it compacts: four files, four lines, the same facts */
	j = rt_ship_journal_open(path, message, sizeof(message));
	if (!CHECK(j != NULL))
		return;
	CHECK_EQ(count_lines(path), 4);
	struct rt_ship_progress p;
	CHECK_EQ(rt_ship_journal_find(j, dest, "h1", 9, 0, &p), 1);
	CHECK_EQ(p.next, 600000);
	CHECK_EQ(rt_ship_journal_find(j, dest, "h1", 9, 1, &p), 1);
	CHECK_EQ(p.next, 599800); /* b = 5998, the last with b % 3 == 1 */
	CHECK_EQ(p.size, 1 << 20);
	CHECK_EQ(rt_ship_journal_find(j, dest, "h2", 10, 0, &p), 1);
	CHECK(p.done);
	CHECK_EQ(p.rows, 7);
	/* and goes on appending to the new file */
	struct rt_ship_progress more = {.size = 1 << 20, .next = 700000};
	CHECK_EQ(rt_ship_journal_record(j, dest, "h1", 9, 0, &more, message, sizeof(message)), 0);
	rt_ship_journal_close(j);
	CHECK_EQ(count_lines(path), 5);
	j = rt_ship_journal_open(path, message, sizeof(message));
	if (CHECK(j != NULL)) {
		CHECK_EQ(rt_ship_journal_find(j, dest, "h1", 9, 0, &p), 1);
		CHECK_EQ(p.next, 700000);
		rt_ship_journal_close(j);
	}
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
}

static struct rt_event span_event(enum rt_event_kind kind, const struct rt_site *site,
				  uint64_t addr, int64_t ts)
{
	struct rt_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.kind = kind;
	ev.site = site;
	/* as the builder marks the events of span sites */
	if (site)
		ev.span = site->kind == RT_SITE_BEGIN ? RT_EVENT_SPAN_BEGIN
			  : site->kind == RT_SITE_END ? RT_EVENT_SPAN_END
						      : RT_EVENT_SPAN_NONE;
	ev.addr = addr;
	ev.ts_ns = ts;
	ev.pid = 1;
	ev.tid = 2;
	ev.thread = (struct rt_event_str){"t", 1};
	return ev;
}

static void test_durations(void)
{
	struct rt_ship_durations d;
	rt_ship_durations_init(&d);
	struct rt_site a = test_site(RT_SITE_BEGIN, "a", 0), a_end = test_site(RT_SITE_END, "a", 0);
	struct rt_site b = test_site(RT_SITE_BEGIN, "b", 0);
	int64_t dur;
	struct rt_event ev = span_event(RT_EVENT_TRACE, &a, 0, 100);
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	CHECK_EQ(dur, -1);
	ev = span_event(RT_EVENT_TRACE, &b, 0, 150); /* never closed */
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	ev = span_event(RT_EVENT_ENTER, NULL, 0x10, 160);
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	ev = span_event(RT_EVENT_EXIT, NULL, 0x10, 190);
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	CHECK_EQ(dur, 30);
	ev = span_event(RT_EVENT_TRACE, &a_end, 0, 400); /* closes a, above it b dies */
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	CHECK_EQ(dur, 300);
	ev = span_event(RT_EVENT_TRACE, &a_end, 0, 500); /* nothing open */
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	CHECK_EQ(dur, -1);
	ev = span_event(RT_EVENT_ENTER, NULL, 0x20, 600);
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	ev = span_event(RT_EVENT_EXIT, NULL, 0x20, 700);
	ev.function_flags = RT_FUNC_F_CLOSED; /* the library closed it: no duration */
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	CHECK_EQ(dur, -1);
	/* f -> f, the inner exit lost: the outer exit times the outer call, by its depth */
	ev = span_event(RT_EVENT_ENTER, NULL, 0x30, 800);
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	ev = span_event(RT_EVENT_ENTER, NULL, 0x30, 810);
	ev.depth = 1;
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	ev = span_event(RT_EVENT_EXIT, NULL, 0x30, 900);
	CHECK_EQ(rt_ship_durations_take(&d, &ev, &dur), 0);
	CHECK_EQ(dur, 100);
	rt_ship_durations_free(&d);
}

int main(void)
{
	test_rows();
	test_schema();
	test_journal();
	test_journal_compaction();
	test_durations();
	if (check_failure_count()) {
		fprintf(stderr, "test_ship: %d checks failed\n", check_failure_count());
		return 1;
	}
	printf("test_ship: ok\n");
	return 0;
}
