/*
 * schema.c - the table's columns and the statements that name them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ship/schema.h"

/* The order here is the order of the bytes of every row (ship/rows.c). */
const struct rt_ship_column rt_ship_columns[] = {
    {"host", "String", "the machine that recorded (the trace file's), or --host"},
    {"file_id", "UInt64", "the recording's random id, the same in each of its files"},
    {"file_seq", "UInt32", "which file of the recording (0, 1, 2... per rotation)"},
    {"ordinal", "UInt64", "the item's place in its file, in time order, from 0"},
    {"batch_first", "UInt64", "the ordinal of the first row of the batch that carried it"},
    {"time", "DateTime", "wall clock, seconds (1970-01-01 when the clock was lost)"},
    {"wall_ns", "UInt64", "wall clock, ns since the epoch; 0 when the clock was lost"},
    {"pid", "Int32", "the traced process"},
    {"program", "String", "its program name"},
    {"tid", "Int32", "the thread; 0 for a loss of no thread"},
    {"thread", "String", "the thread's name, or empty"},
    {"cpu", "Int16", "the CPU it ran on, -1 when not known"},
    {"seq", "UInt64", "the record's sequence number in its ring (0 when none)"},
    {"kind", "String", "trace, log, enter, exit, io or lost (as dump --json)"},
    {"span", "String", "begin or end for RT_BEGIN, RT_END and RT_SCOPE, else empty"},
    {"tag", "String", "trace and log: the site's tag"},
    {"src_file", "String", "trace and log: the site's source file"},
    {"line", "UInt32", "trace and log: the site's line"},
    {"func", "String", "trace and log: the function the site is in"},
    {"args", "Array(Int64)", "trace: the arguments (unsigned ones as their 64 bits)"},
    {"level", "String", "log: the level"},
    {"message", "String", "log: the message, rendered"},
    {"function", "String", "enter and exit: the function called, when named"},
    {"addr", "UInt64", "enter and exit: its address"},
    {"depth", "UInt32", "enter and exit: the call depth"},
    {"dur_ns", "Int64",
     "a span's end or a function's exit: time since its begin or enter in the same file; "
     "io: the call's duration; else -1"},
    {"io_op", "String", "io: the call (read, write, open... as dump --json)"},
    {"fd", "Int32", "io: the descriptor, -1 when none"},
    {"path", "String", "io: the file (named by the call or by its descriptor), or empty"},
    {"path2", "String", "io: rename's new path, copy_file_range's and sendfile's output"},
    {"offset", "Int64", "io: the file offset, -1 when not known"},
    {"size", "Int64", "io: bytes asked"},
    {"result", "Int64", "io: what the call returned (-errno when it failed)"},
    {"errno", "Int32", "io: the error, 0 when none"},
    {"lost_count", "UInt64", "lost: events lost"},
    {"lost_reason", "String", "lost: overwritten, dropped, torn or damaged"},
    {"lost_note", "String", "lost: why, when told"},
    {"estimated", "UInt8", "lost: 1 when the count was estimated from damage"},
    {"metadata_lost", "UInt8", "1 when the site or thread of the record was lost"},
    {"damaged", "UInt8", "1 when the payload did not check (shown marked)"},
};

const size_t rt_ship_column_count = sizeof(rt_ship_columns) / sizeof(rt_ship_columns[0]);

static int word_ok(const char *s, size_t n)
{
	if (n == 0 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_'))
			return 0;
	}
	return 1;
}

int rt_ship_table_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > RT_SHIP_TABLE_MAX)
		return 0;
	const char *dot = strchr(name, '.');
	if (!dot)
		return word_ok(name, n);
	return word_ok(name, (size_t)(dot - name)) &&
	       word_ok(dot + 1, n - (size_t)(dot - name) - 1);
}

/* Append printf output to a malloc'd string of *length bytes. */
static int append(char **s, size_t *length, size_t *capacity, const char *text)
{
	size_t n = strlen(text);
	if (*length + n + 1 > *capacity) {
		size_t c = (*capacity ? *capacity : 1024);
		while (c < *length + n + 1)
			c *= 2;
		char *grown = realloc(*s, c);
		if (!grown)
			return -1;
		*s = grown;
		*capacity = c;
	}
	memcpy(*s + *length, text, n + 1);
	*length += n;
	return 0;
}

char *rt_ship_create_table(const char *table)
{
	char *s = NULL;
	size_t length = 0, capacity = 0;
	char line[512];
	int bad = 0;
	snprintf(line, sizeof(line), "CREATE TABLE IF NOT EXISTS %s (\n", table);
	bad |= append(&s, &length, &capacity, line);
	for (size_t i = 0; i < rt_ship_column_count; i++) {
		const struct rt_ship_column *c = &rt_ship_columns[i];
		const char *comma = i + 1 < rt_ship_column_count ? "," : "";
		/* comments line up in one column after the widest name and type */
		int pad = 30 - (int)(strlen(c->name) + strlen(c->type) + strlen(comma));
		snprintf(line, sizeof(line), "    %s %s%s%*s-- %s\n", c->name, c->type, comma,
			 pad > 1 ? pad : 1, "", c->meaning);
		bad |= append(&s, &length, &capacity, line);
	}
	bad |= append(&s, &length, &capacity,
		      ") ENGINE = ReplacingMergeTree\n"
		      "PARTITION BY toYYYYMM(time)\n"
		      "ORDER BY (host, file_id, file_seq, ordinal)\n");
	if (bad) {
		free(s);
		return NULL;
	}
	return s;
}

char *rt_ship_column_list(void)
{
	char *s = NULL;
	size_t length = 0, capacity = 0;
	int bad = append(&s, &length, &capacity, "(");
	for (size_t i = 0; i < rt_ship_column_count; i++) {
		if (i)
			bad |= append(&s, &length, &capacity, ", ");
		bad |= append(&s, &length, &capacity, rt_ship_columns[i].name);
	}
	bad |= append(&s, &length, &capacity, ")");
	if (bad) {
		free(s);
		return NULL;
	}
	return s;
}
