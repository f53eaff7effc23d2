/*
 * table.c - see table.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/html.h"
#include "analyze/table.h"
#include "common/escape.h"

#define NUMBER_MAX 32

/* The text of a cell: its own, or its value in decimal (into buf). */
static const char *cell_text(const struct rt_cell *c, char *buf, size_t size)
{
	if (c->text)
		return c->text;
	switch (c->type) {
	case RT_CELL_U64:
		snprintf(buf, size, "%" PRIu64, c->u);
		return buf;
	case RT_CELL_I64:
		snprintf(buf, size, "%" PRId64, c->i);
		return buf;
	case RT_CELL_DOUBLE:
		snprintf(buf, size, "%g", c->d);
		return buf;
	case RT_CELL_BOOL:
		return c->b ? "true" : "false";
	case RT_CELL_STRING:
	case RT_CELL_RAW:
	case RT_CELL_NULL:
	case RT_CELL_OBJECT:
	case RT_CELL_NONE:
		break;
	}
	return "";
}

static void spaces(struct rt_out *out, size_t n)
{
	while (n--)
		rt_out_char(out, ' ');
}

/* Write texts[i] of the text's columns up to the last with text; the last is not padded. */
static void put_line(struct rt_out *out, const struct rt_table *t, const char *const *texts)
{
	size_t last = t->count;
	for (size_t i = 0; i < t->count; i++)
		if (t->columns[i].flags & RT_COLUMN_TEXT && texts[i][0])
			last = i;
	int first = 1;
	rt_out_str(out, t->indent ? t->indent : "");
	for (size_t i = 0; i < t->count && last < t->count && i <= last; i++) {
		const struct rt_column *col = &t->columns[i];
		if (!(col->flags & RT_COLUMN_TEXT))
			continue;
		if (!first)
			spaces(out, col->gap);
		first = 0;
		const char *s = texts[i];
		size_t n = strlen(s);
		if (col->flags & RT_COLUMN_CUT && n > col->width)
			n = rt_escaped_boundary(s, col->width);
		if (col->flags & RT_COLUMN_RIGHT) {
			if (n < col->width)
				spaces(out, col->width - n);
			rt_out_bytes(out, s, n);
			continue;
		}
		rt_out_bytes(out, s, n);
		if (col->flags & RT_COLUMN_WRAP && n > col->width) {
			rt_out_char(out, '\n');
			n = 0;
		}
		if (i != last && n < col->width)
			spaces(out, col->width - n);
	}
}

void rt_table_header_text(struct rt_out *out, const struct rt_table *t)
{
	const char *texts[RT_TABLE_COLUMNS_MAX];
	for (size_t i = 0; i < t->count; i++)
		texts[i] = t->columns[i].header ? t->columns[i].header : "";
	put_line(out, t, texts);
	rt_out_char(out, '\n');
}

void rt_table_row_text(struct rt_out *out, const struct rt_table *t, const struct rt_cell *cells,
		       const char *tail)
{
	char numbers[RT_TABLE_COLUMNS_MAX][NUMBER_MAX];
	const char *texts[RT_TABLE_COLUMNS_MAX];
	for (size_t i = 0; i < t->count; i++)
		texts[i] = t->columns[i].flags & RT_COLUMN_TEXT
			       ? cell_text(&cells[i], numbers[i], NUMBER_MAX)
			       : "";
	put_line(out, t, texts);
	if (tail)
		rt_out_str(out, tail);
	rt_out_char(out, '\n');
}

static void put_object(struct rt_out *out, const struct rt_table *t, const struct rt_cell *cells)
{
	int first = 1;
	rt_out_char(out, '{');
	for (size_t i = 0; i < t->count; i++) {
		const struct rt_column *col = &t->columns[i];
		const struct rt_cell *c = &cells[i];
		if (!(col->flags & RT_COLUMN_JSON) || c->type == RT_CELL_NONE)
			continue;
		rt_out_str(out, first ? "\"" : ",\"");
		first = 0;
		rt_out_str(out, col->key);
		rt_out_str(out, "\":");
		switch (c->type) {
		case RT_CELL_STRING:
			rt_out_json_string(out, c->s, c->length);
			break;
		case RT_CELL_U64:
			rt_out_u64(out, c->u);
			break;
		case RT_CELL_I64:
			rt_out_i64(out, c->i);
			break;
		case RT_CELL_DOUBLE:
			rt_out_printf(out, col->format ? col->format : "%.6f", c->d);
			break;
		case RT_CELL_BOOL:
			rt_out_str(out, c->b ? "true" : "false");
			break;
		case RT_CELL_RAW:
			rt_out_bytes(out, c->s, c->length);
			break;
		case RT_CELL_NULL:
			rt_out_str(out, "null");
			break;
		case RT_CELL_OBJECT:
			put_object(out, c->object.table, c->object.cells);
			break;
		case RT_CELL_NONE:
			break;
		}
	}
	rt_out_char(out, '}');
}

void rt_table_row_json(struct rt_out *out, const struct rt_table *t, const struct rt_cell *cells)
{
	put_object(out, t, cells);
	rt_out_char(out, '\n');
}

int rt_table_html(struct rt_html *h, const struct rt_table *t, const struct rt_cell *cells,
		  size_t rows)
{
	size_t columns = 0;
	for (size_t i = 0; i < t->count; i++)
		columns += (t->columns[i].flags & RT_COLUMN_HTML) != 0;
	const char **headers = calloc(columns + 1, sizeof(*headers));
	const char **texts = calloc(rows * columns + 1, sizeof(*texts));
	char *numbers = calloc(rows * columns + 1, NUMBER_MAX);
	if (!headers || !texts || !numbers) {
		free(headers);
		free(texts);
		free(numbers);
		return -ENOMEM;
	}
	for (size_t i = 0, k = 0; i < t->count; i++) {
		const struct rt_column *col = &t->columns[i];
		if (!(col->flags & RT_COLUMN_HTML))
			continue;
		headers[k] = col->html_header ? col->html_header : col->header;
		for (size_t r = 0; r < rows; r++) {
			char *buf = numbers + (r * columns + k) * NUMBER_MAX;
			texts[r * columns + k] =
			    cell_text(&cells[r * t->count + i], buf, NUMBER_MAX);
		}
		k++;
	}
	rt_html_table(h, headers, columns, texts, rows);
	free(headers);
	free(texts);
	free(numbers);
	return 0;
}
