/*
 * arena_reader_sites.c - the site table of an arena, and the room log
 * payloads are copied into.
 *
 * (Part of read/arena_reader.h; the reader's private parts are
 * read/arena_reader_private.h.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "read/arena_reader_private.h"

/*
 * Whether an entry of the site table says it is a published log site,
 * before the table is checked: the rings' counters are checked before the
 * sites are loaded, and a log record may leave a dead writer's reserve up
 * to RT_LOG_MAX_SLOTS past head.  Without such an entry the stricter bounds
 * of trace records hold.
 */
/*
 * Entries of the site table before its first hole.  The writer fills the
 * table from its start, so every entry it claimed lies in data: the table
 * is read up to there, and no entry past it costs memory or time.
 */
static uint32_t site_entries_held(const struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	const uint64_t each = sizeof(struct rt_site_entry);
	return (uint32_t)(rt_file_data_run(rd->data, h->site_table_offset,
					   h->site_table_offset + h->site_capacity * each) /
			  each);
}

int rt_arena_raw_long_records(const struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	const uint32_t held = site_entries_held(rd);
	for (uint32_t i = 0; i < held; i++) {
		const struct rt_site_entry *e =
		    (const struct rt_site_entry *)(rd->file + rt_layout_site_offset(h, i));
		if (__atomic_load_n(&e->valid, __ATOMIC_ACQUIRE) == 1 && rt_site_kind_long(e->kind))
			return 1;
	}
	return 0;
}

unsigned char *rt_reader_payload_room(struct rt_reader *rd, size_t n)
{
	struct rt_reader_payloads *c = rd->payloads;
	if (!c || c->size - c->used < n) {
		size_t size = c && c->size < (4u << 20) ? c->size * 2 : 64u << 10;
		if (size < n)
			size = n;
		struct rt_reader_payloads *more = malloc(sizeof(*more) + size);
		if (!more)
			return NULL;
		more->next = c;
		more->used = 0;
		more->size = size;
		rd->payloads = c = more;
	}
	unsigned char *p = c->bytes + c->used;
	c->used += n;
	return p;
}

static int site_damage(struct rt_reader *rd, uint32_t index, const char *why)
{
	long rc =
	    rt_damage_add(&rd->damage, RT_DAMAGE_SITE, RT_DAMAGE_UNPARSED, index,
			  rt_layout_site_offset(&rd->header, index), sizeof(struct rt_site_entry),
			  "site entry %u: %s: its records are not shown", index, why);
	if (rc < 0)
		return (int)rc;
	rd->site_region[index] = rc;
	return 0;
}

/* The damaged region of site entry `index`, reported (as why) if it is not yet. */
long rt_arena_site_region(struct rt_reader *rd, uint32_t index, const char *why)
{
	if (rd->site_region[index] < 0 && site_damage(rd, index, why))
		return -ENOMEM;
	return rd->site_region[index];
}

/* Where a valid site's strings end in the string area. */
static uint64_t site_strings_end(const struct rt_reader *rd, const struct rt_site *s)
{
	const char *area = (const char *)rd->file + rd->header.string_area_offset;
	uint64_t end = (uint64_t)(s->tag - area) + s->tag_length + 1;
	uint64_t file = (uint64_t)(s->file - area) + s->file_length + 1;
	uint64_t func = (uint64_t)(s->func - area) + s->func_length + 1;
	end = file > end ? file : end;
	return func > end ? func : end;
}

/*
 * Site entries past the table's first hole (held entries before it) that
 * hold bytes: nothing was claimed there (common/file_data.h), each is damage.
 */
static int past_hole_sites(struct rt_reader *rd, uint32_t held)
{
	const struct rt_arena_header *h = &rd->header;
	const uint64_t base = h->site_table_offset, each = sizeof(struct rt_site_entry);
	for (uint64_t i = rt_file_data_next_entry(rd->data, base, each, held, h->site_capacity);
	     i < h->site_capacity;
	     i = rt_file_data_next_entry(rd->data, base, each, i + 1, h->site_capacity)) {
		struct rt_site_entry copy;
		if (rt_bytes_zero(rt_file_data_at(rd->data, rd->file, base + i * each, each, &copy),
				  each))
			continue;
		if (rt_damage_add(&rd->damage, RT_DAMAGE_SITE, RT_DAMAGE_UNPARSED, (uint32_t)i,
				  base + i * each, each,
				  "site entry %u: past a hole in the site table, where no site "
				  "was claimed: not a site, its records are not shown",
				  (uint32_t)i) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* 1 + the offset of the last nonzero byte of [from, end) with data; 0 if none. */
static uint64_t last_byte_set(const struct rt_reader *rd, uint64_t from, uint64_t end)
{
	uint64_t last = 0, data_end;
	for (uint64_t at = rt_file_data_next(rd->data, from, end, &data_end); at < end;
	     at = rt_file_data_next(rd->data, data_end, end, &data_end)) {
		for (uint64_t i = data_end; i > at; i--) {
			if (rd->file[i - 1]) {
				last = i;
				break;
			}
		}
	}
	return last;
}

/*
 * The site table, with every entry that does not check reported.  Entries
 * past sites_used, and strings past strings_used, are zero: the writer
 * claims before it writes.  When they are not (and a live writer did not
 * claim them since), either the counter is damaged - a valid site lies
 * there, or uses those strings: the counter is reported and the tables are
 * read to their end - or those bytes are, and are reported.
 */
int rt_arena_load_sites(struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	const size_t sites_field = offsetof(struct rt_arena_header, sites_used);
	const size_t strings_field = offsetof(struct rt_arena_header, strings_used);
	uint64_t sites_seen = rt_arena_used_now(rd, sites_field, 0);
	uint32_t count = sites_seen < h->site_capacity ? (uint32_t)sites_seen : h->site_capacity;
	uint64_t strings_seen = rt_arena_used_now(rd, strings_field, 1);
	uint64_t strings = strings_seen < h->string_capacity ? strings_seen : h->string_capacity;
	/* read up to the table's first hole; bytes past it are damage, not sites */
	const uint64_t each = sizeof(struct rt_site_entry);
	const uint32_t held = site_entries_held(rd);
	if (count > held)
		count = held;
	uint32_t site_end = count;
	for (uint32_t i = held; i > count; i--) {
		if (!rt_bytes_zero(rd->file + rt_layout_site_offset(h, i - 1), each)) {
			site_end = i;
			break;
		}
	}
	if (past_hole_sites(rd, held))
		return -ENOMEM;
	uint64_t string_end = strings;
	const uint64_t last = last_byte_set(rd, h->string_area_offset + strings,
					    h->string_area_offset + h->string_capacity);
	if (last) {
		/* with the NUL that ends the string */
		uint64_t i = last - h->string_area_offset;
		string_end = i < h->string_capacity ? i + 1 : i;
	}
	/* a live writer may have claimed them since the counters were read */
	uint64_t sites_now = rt_arena_used_now(rd, sites_field, 0);
	uint64_t strings_now = rt_arena_used_now(rd, strings_field, 1);
	if (site_end <= sites_now)
		count = site_end;
	if (string_end <= strings_now)
		strings = string_end;
	int rc = rt_site_table_load(&rd->sites, h, rd->file, rd->data, site_end, string_end);
	if (rc)
		return rc;
	rd->site_region = malloc((rd->sites.count + 1) * sizeof(*rd->site_region));
	if (!rd->site_region)
		return -ENOMEM;
	for (uint32_t i = 0; i <= rd->sites.count; i++)
		rd->site_region[i] = -1;
	static const char *const string_names[4] = {"tag", "file name", "function name",
						    "argument types"};
	char why[96];
	uint32_t valid_past = 0;   /* 1 + the last valid site past sites_used */
	uint64_t strings_past = 0; /* the furthest end of a valid site's strings */
	for (uint32_t i = 1; i < rd->sites.count; i++) {
		const struct rt_site *s = &rd->sites.sites[i];
		const unsigned char *entry = rd->file + rt_layout_site_offset(h, i);
		switch (s->fault) {
		case RT_SITE_OK: {
			uint64_t end = site_strings_end(rd, s);
			strings_past = end > strings_past ? end : strings_past;
			if (i >= count)
				valid_past = i + 1;
			continue;
		}
		case RT_SITE_UNPUBLISHED:
			/* below sites_used: claimed, not (yet, or ever) published */
			if (i < count || rt_bytes_zero(entry, sizeof(struct rt_site_entry)))
				continue;
			snprintf(why, sizeof(why), "bytes in an entry never registered");
			break;
		case RT_SITE_BAD_FLAG:
			snprintf(why, sizeof(why), "valid is %u",
				 ((const struct rt_site_entry *)entry)->valid);
			break;
		case RT_SITE_BAD_ENTRY:
			snprintf(why, sizeof(why),
				 "kind, arguments or reserved bytes out of range");
			break;
		default:
			if (s->fault_length) {
				long at = rt_damage_add(
				    &rd->damage, RT_DAMAGE_STRING, RT_DAMAGE_UNPARSED, i,
				    h->string_area_offset + s->fault_offset, s->fault_length,
				    "%s of site %u: not a string where its entry says (a NUL "
				    "inside or missing): its records are not shown",
				    string_names[s->string], i);
				if (at < 0)
					return -ENOMEM;
				rd->site_region[i] = at;
				continue;
			}
			snprintf(why, sizeof(why), "its %s lies outside the string area",
				 string_names[s->string]);
			break;
		}
		if (site_damage(rd, i, why))
			return -ENOMEM;
	}
	if (valid_past &&
	    rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0, sites_field,
			  sizeof(h->sites_used),
			  "sites_used %llu, but site entry %u is a valid site: every entry read",
			  (unsigned long long)sites_seen, valid_past - 1) < 0)
		return -ENOMEM;
	if (string_end > strings) {
		long at =
		    strings_past > strings
			? rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0,
					strings_field, sizeof(h->strings_used),
					"strings_used %llu, but sites' strings reach %llu: the "
					"string area read to there",
					(unsigned long long)strings_seen,
					(unsigned long long)strings_past)
			: rt_damage_add(
			      &rd->damage, RT_DAMAGE_STRING, RT_DAMAGE_UNPARSED, 0,
			      h->string_area_offset + strings, string_end - strings,
			      "string area past strings_used %llu: written, but no site's",
			      (unsigned long long)strings_seen);
		if (at < 0)
			return -ENOMEM;
	}
	return 0;
}
