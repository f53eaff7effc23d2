/*
 * hexdump.c - damaged regions as an annotated hex dump.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/escape.h"
#include "common/file_data.h"
#include "present/hexdump.h"

static const char hex[16] = "0123456789abcdef";

/* One line: the bytes of [from, to) that lie on the 16-byte line starting at line. */
static void print_line(struct rt_out *out, const unsigned char *file, uint64_t line, uint64_t from,
		       uint64_t to)
{
	char *start = rt_out_reserve(out, 128), *s = start;
	s = rt_fmt_hex(s, line, line >> 32 ? 16 : 8);
	*s++ = ' ';
	char ascii[16];
	for (unsigned i = 0; i < 16; i++) {
		uint64_t at = line + i;
		*s++ = ' ';
		if (i == 8)
			*s++ = ' ';
		if (at >= from && at < to) {
			unsigned char c = file[at];
			*s++ = hex[c >> 4];
			*s++ = hex[c & 0xf];
			ascii[i] = (char)(c >= 0x20 && c < 0x7f ? c : '.');
		} else {
			*s++ = ' ';
			*s++ = ' ';
			ascii[i] = ' ';
		}
	}
	memcpy(s, "  |", 3);
	s += 3;
	memcpy(s, ascii, 16);
	s += 16;
	*s++ = '|';
	*s++ = '\n';
	rt_out_commit(out, s);
}

/* The lines of [from, to), its holes said in a line each: a hole is not read (common/file_data.h).
 */
static void print_data(struct rt_out *out, const struct rt_reader *rd, uint64_t from, uint64_t to)
{
	for (uint64_t at = from; at < to;) {
		uint64_t data_end;
		uint64_t next = rt_file_data_next(rd->data, at, to, &data_end);
		if (next > at)
			rt_out_printf(out,
				      "(bytes %llu..%llu: a hole in the file, no data written)\n",
				      (unsigned long long)at, (unsigned long long)next);
		if (next >= to)
			break;
		if (data_end <= next || data_end > to)
			data_end = to;
		for (uint64_t line = next & ~15ull; line < data_end; line += 16)
			print_line(out, rd->file, line, next, data_end);
		at = data_end;
	}
}

static int compare_offsets(const void *a, const void *b)
{
	const struct rt_damage *x = *(const struct rt_damage *const *)a;
	const struct rt_damage *y = *(const struct rt_damage *const *)b;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return x < y ? -1 : x > y;
}

int rt_hexdump_print(struct rt_out *out, const struct rt_reader *rd, uint64_t region_max,
		     uint64_t total_max)
{
	const struct rt_damage_list *list = &rd->damage;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	const struct rt_damage **shown = calloc(list->count + 1, sizeof(*shown));
	if (!shown)
		return -ENOMEM;
	size_t n = 0;
	uint64_t bytes = 0;
	for (size_t i = 0; i < list->count; i++) {
		const struct rt_damage *d = &list->items[i];
		shown[n++] = d;
		if (d->flags & RT_DAMAGE_UNPARSED)
			bytes += d->length;
	}
	if (n)
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		qsort(shown, n, sizeof(*shown), compare_offsets);
	rt_out_printf(out, "ringtrace: %s: %zu damaged region%s, %llu bytes that did not parse%s\n",
		      rt_escaped(rd->path), n, n == 1 ? "" : "s", (unsigned long long)bytes,
		      n ? "; each below, at its offset in the file" : "");
	uint64_t total = 0;
	size_t i = 0;
	for (; i < n; i++) {
		const struct rt_damage *d = shown[i];
		if (total >= total_max)
			break;
		uint64_t end = d->offset + d->length;
		if (end > rd->size)
			end = rd->size;
		rt_out_printf(out, "\n--- bytes %llu..%llu (%llu B): %s: %s ---\n",
			      (unsigned long long)d->offset,
			      (unsigned long long)d->offset + d->length,
			      (unsigned long long)d->length, rt_damage_part_name(d->part),
			      rt_escaped(d->what));
		if (!(d->flags & RT_DAMAGE_UNPARSED) || d->offset >= rd->size) {
			rt_out_str(out, d->offset >= rd->size
					    ? "(past the end of the file)\n"
					    : "(the bytes parse: nothing to show)\n");
			continue;
		}
		uint64_t room = total_max - total < region_max ? total_max - total : region_max;
		uint64_t stop = end - d->offset > room ? d->offset + room : end;
		print_data(out, rd, d->offset, stop);
		total += stop - d->offset;
		if (stop < end)
			rt_out_printf(out,
				      "... %llu more bytes of this region not shown (at most %llu "
				      "per region, %llu in all)\n",
				      (unsigned long long)(end - stop),
				      (unsigned long long)region_max,
				      (unsigned long long)total_max);
	}
	if (i < n)
		rt_out_printf(out,
			      "\n... %zu more region%s not shown: the hex dump stops after %llu "
			      "bytes\n",
			      n - i, n - i == 1 ? "" : "s", (unsigned long long)total_max);
	free(shown);
	return 0;
}
