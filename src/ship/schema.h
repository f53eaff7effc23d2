/*
 * schema.h - the ClickHouse table `ringtrace ship` writes into: its
 * columns, in the order every row is encoded (ship/rows.c), and the CREATE
 * TABLE that makes it (`ringtrace ship --schema`).
 *
 * One row per item of a trace file (every event and every loss).  The
 * table is a ReplacingMergeTree ordered by (host, file_id, file_seq,
 * ordinal): an item shipped twice (a batch sent again after a crash or a
 * server restart) is one row once the parts merge, and SELECT ... FINAL
 * counts it once before they do.  The SQL is that of Debian 12's
 * clickhouse-server (18.16) and of every later version.
 */
#ifndef RT_SHIP_SCHEMA_H
#define RT_SHIP_SCHEMA_H

#include <stddef.h>

struct rt_ship_column {
	const char *name;
	const char *type;
	const char *meaning;
};

extern const struct rt_ship_column rt_ship_columns[];
extern const size_t rt_ship_column_count;

#define RT_SHIP_DEFAULT_TABLE "ringtrace_events"
#define RT_SHIP_TABLE_MAX 200

/*
 * Whether name can be the table: [db.]name, each part letters, digits and
 * '_', not starting with a digit (so it goes into SQL unquoted and safe).
 */
int rt_ship_table_name_ok(const char *name);

/* The CREATE TABLE IF NOT EXISTS statement, with comments, into a malloc'd string. */
char *rt_ship_create_table(const char *table);

/* "(host, file_id, ...)": the column list of the INSERT, malloc'd. */
char *rt_ship_column_list(void);

#endif /* RT_SHIP_SCHEMA_H */
