/*
 * table.h - the analyzers' rows, rendered one way for every format they
 * offer: an aligned text table, one JSON object per row, a table of the
 * page (analyze/html.h).
 *
 * A table is a list of columns, each shown in some of the formats: its
 * header in the text and the page, its key in JSON.  A row is one cell per
 * column: a typed value for JSON and, for the text and the page, the text
 * the analyzer made of it (or the value in decimal).  A column that a
 * format shows differently (a padded duration in the text, a short one on
 * the page, nanoseconds in JSON) is one column per format, in the order of
 * each; a cell of type RT_CELL_NONE is left out of JSON (a key some rows
 * have and others not).
 *
 * The text: indent, then each cell padded to its column's width (left or
 * right aligned) after its column's gap of spaces.  A row's line ends with
 * its last cell that has text: the empty ones after it are not written, and
 * a left-aligned last cell is not padded.  A RT_COLUMN_WRAP cell longer
 * than its width goes on a line of its own, the row going on under it; a
 * RT_COLUMN_CUT one is cut to its width.
 */
#ifndef RT_ANALYZE_TABLE_H
#define RT_ANALYZE_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "common/output.h"

struct rt_html;

/* Where a column is shown. */
#define RT_COLUMN_TEXT 1u
#define RT_COLUMN_JSON 2u
#define RT_COLUMN_HTML 4u
/* The text: right-aligned (else left), and a longer cell wraps (see above). */
#define RT_COLUMN_RIGHT 8u
#define RT_COLUMN_WRAP 16u
/* The text: an escaped cell longer than width is cut there (common/escape.h's boundary). */
#define RT_COLUMN_CUT 32u

struct rt_column {
	unsigned flags;		 /* RT_COLUMN_* */
	const char *header;	 /* the text's and the page's header */
	const char *html_header; /* the page's, when not header */
	const char *key;	 /* JSON's key */
	unsigned width;		 /* the text: the cell's width */
	unsigned gap;		 /* the text: spaces before the cell */
	const char *format;	 /* RT_CELL_DOUBLE in JSON: "%.6f" unless given */
};

enum rt_cell_type {
	RT_CELL_NONE = 0, /* JSON: no such key in this row */
	RT_CELL_STRING,	  /* JSON: a string (any bytes, escaped) */
	RT_CELL_U64,
	RT_CELL_I64,
	RT_CELL_DOUBLE, /* JSON: by the column's format */
	RT_CELL_BOOL,
	RT_CELL_RAW,	/* JSON: s as it is */
	RT_CELL_NULL,	/* JSON: null */
	RT_CELL_OBJECT, /* JSON: an object, the JSON columns of object.table with object.cells */
};

struct rt_table;

struct rt_cell {
	enum rt_cell_type type;
	const char *s; /* STRING, RAW */
	size_t length;
	union {
		uint64_t u;
		int64_t i;
		double d;
		int b;
		struct {
			const struct rt_table *table;
			const struct rt_cell *cells;
		} object;
	};
	const char *text; /* the text and the page; NULL: a number in decimal, else empty */
};

/* The most columns a table has. */
#define RT_TABLE_COLUMNS_MAX 64

struct rt_table {
	const struct rt_column *columns;
	size_t count;	    /* at most RT_TABLE_COLUMNS_MAX */
	const char *indent; /* the text: before each line ("" when NULL) */
};

/* The cells that make a row: one each, in the table's column order. */
static inline struct rt_cell rt_cell_u64(uint64_t v, const char *text)
{
	struct rt_cell c = {.type = RT_CELL_U64, .u = v, .text = text};
	return c;
}
static inline struct rt_cell rt_cell_i64(int64_t v, const char *text)
{
	struct rt_cell c = {.type = RT_CELL_I64, .i = v, .text = text};
	return c;
}
static inline struct rt_cell rt_cell_double(double v, const char *text)
{
	struct rt_cell c = {.type = RT_CELL_DOUBLE, .d = v, .text = text};
	return c;
}
static inline struct rt_cell rt_cell_bool(int v)
{
	struct rt_cell c = {.type = RT_CELL_BOOL, .b = v, .text = v ? "true" : "false"};
	return c;
}
static inline struct rt_cell rt_cell_string(const char *s, size_t length, const char *text)
{
	struct rt_cell c = {.type = RT_CELL_STRING, .s = s, .length = length, .text = text};
	return c;
}
static inline struct rt_cell rt_cell_null(void)
{
	struct rt_cell c = {.type = RT_CELL_NULL};
	return c;
}
static inline struct rt_cell rt_cell_object(const struct rt_table *table,
					    const struct rt_cell *cells)
{
	struct rt_cell c = {.type = RT_CELL_OBJECT, .object = {table, cells}};
	return c;
}
/* A cell only the text and the page show. */
static inline struct rt_cell rt_cell_text(const char *text)
{
	struct rt_cell c = {.type = RT_CELL_NONE, .text = text};
	return c;
}

/* The text's header line: the headers of the text's columns, padded as the cells. */
void rt_table_header_text(struct rt_out *out, const struct rt_table *t);

/* A row of the text, then tail (NULL: none) and the line's end. */
void rt_table_row_text(struct rt_out *out, const struct rt_table *t, const struct rt_cell *cells,
		       const char *tail);

/* A row as one JSON object, a line: the JSON columns' keys and values. */
void rt_table_row_json(struct rt_out *out, const struct rt_table *t, const struct rt_cell *cells);

/* rows rows of cells (row-major) as a table of the page: the page's columns.  0 or -ENOMEM. */
int rt_table_html(struct rt_html *h, const struct rt_table *t, const struct rt_cell *cells,
		  size_t rows);

#endif /* RT_ANALYZE_TABLE_H */
