/*
 * header_recovery.c - check an arena header field by field and repair what
 * its own redundancy allows (header_recovery.h says what is refused).
 *
 * The geometry.  Every writer lays the tables out in one order - thread
 * table, site table, string area, module table, descriptor table, ring
 * descriptors, ring area (the module and descriptor tables may be absent:
 * capacity and offset 0) - each starting at most a page after the end of
 * the one before (the library pads to 64 bytes and the ring area to 4096;
 * tests/fuzz/seed_edit packs to 8).  So the fields of the geometry (the
 * table sizes, ring_count, ring_bytes, the offsets) plus arena_size and the
 * file's own size are
 * tied together by a chain of relations, and one damaged field contradicts
 * its neighbours.  The search below tries the values the header holds and
 * the values its neighbours imply for each field, keeps only layouts that
 * fit together, and takes the one that agrees with the most header fields
 * (then: whose size is the file's; then: whose padding is tightest).  A
 * field it changed is a damaged region.
 *
 * The rest of the header is checked field by field: values out of range are
 * replaced by what can be inferred (the mode from the ring descriptors, the
 * clock source from the start pair, the frequency from the sync pair) or by
 * a safe default, and reported; reserved bytes that are not zero are
 * reported (they are damage that hit nothing the reader uses).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "decode/clock.h"
#include "read/header_recovery.h"

#define FIELD(name) ((uint64_t)offsetof(struct rt_arena_header, name))
#define FIELD_SIZE(name) ((uint64_t)sizeof(((struct rt_arena_header *)0)->name))

/* The library's defaults (src/record): candidates when a field and its neighbours are gone. */
#define DEFAULT_SITE_CAPACITY 8192u
#define DEFAULT_STRING_CAPACITY (1u << 20)
#define DEFAULT_MIN_THREADS 1024u

static uint64_t floor_power_of_two(uint64_t v)
{
	if (!v)
		return 0;
	return 1ull << (63 - __builtin_clzll(v));
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static long header_damage(struct rt_damage_list *damage, uint64_t field, uint64_t length,
			  const char *format, ...) __attribute__((format(printf, 4, 5)));

static long header_damage(struct rt_damage_list *damage, uint64_t field, uint64_t length,
			  const char *format, ...)
{
	char what[sizeof(((struct rt_damage *)0)->what)];
	va_list ap;
	va_start(ap, format);
	vsnprintf(what, sizeof(what), format, ap);
	va_end(ap);
	return rt_damage_add(damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0, field, length, "%s",
			     what);
}

/* ---- identity ---------------------------------------------------------- */

/* How many fields look as an arena's do: a damaged magic needs most of them. */
static int arena_likeness(const struct rt_arena_header *h, uint64_t size)
{
	return (h->header_size == RT_ARENA_HEADER_SIZE) +
	       (h->version >= 1 && h->version <= RT_FORMAT_VERSION &&
		h->compat_version <= h->version) +
	       (h->byte_order == RT_BYTE_ORDER_MARK) + (h->slot_size == RT_SLOT_SIZE) +
	       (h->mode == RT_MODE_FLIGHT || h->mode == RT_MODE_STREAM) +
	       (h->clock_source >= RT_CLOCK_TSC && h->clock_source <= RT_CLOCK_MONOTONIC) +
	       (h->state == RT_ARENA_RUNNING || h->state == RT_ARENA_CLOSED) +
	       (h->arena_size == size) + (h->thread_table_offset == RT_ARENA_HEADER_SIZE);
}

static int check_identity(const unsigned char *file, uint64_t size, struct rt_arena_header *h,
			  struct rt_damage_list *damage, struct rt_layout_error *error)
{
	int magic_ok = memcmp(file, RT_ARENA_MAGIC, sizeof(h->magic)) == 0;
	if (!magic_ok && arena_likeness(h, size) < 4)
		return rt_layout_fail(error, 0, "not a ringtrace arena (bad magic)");
	if (h->byte_order == __builtin_bswap32(RT_BYTE_ORDER_MARK))
		return rt_layout_fail(
		    error, FIELD(byte_order),
		    "arena written with the other byte order; this reader reads only "
		    "its own");
	if (h->compat_version > RT_FORMAT_VERSION && h->compat_version <= h->version) {
		rt_layout_fail(error, FIELD(version),
			       "unknown format version %u (this reader knows %u)", h->version,
			       RT_FORMAT_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (h->state == RT_ARENA_CREATING)
		return rt_layout_fail(
		    error, FIELD(state),
		    "arena header not complete (state CREATING): the writer never "
		    "finished creating it");

	if (!magic_ok) {
		char shown[3 * sizeof(h->magic) + 1], *p = shown;
		for (size_t i = 0; i < sizeof(h->magic); i++) {
			unsigned char c = (unsigned char)h->magic[i];
			p += c >= 0x20 && c < 0x7f ? snprintf(p, 4, "%c", c)
						   : snprintf(p, 5, "\\%o", c);
			if (p - shown > (long)sizeof(shown) - 5)
				break;
		}
		if (header_damage(damage, FIELD(magic), FIELD_SIZE(magic),
				  "magic \"%s\" is not \"RTARENA\"; the rest is an arena's header",
				  shown) < 0)
			return -ENOMEM;
		memcpy(h->magic, RT_ARENA_MAGIC, sizeof(h->magic));
	}
	if (h->version == 0 || h->compat_version > h->version) {
		if (header_damage(damage, FIELD(version), 4,
				  "version %u, compat_version %u contradict each other: read as "
				  "version %u",
				  h->version, h->compat_version, RT_FORMAT_VERSION) < 0)
			return -ENOMEM;
		h->version = h->compat_version = RT_FORMAT_VERSION;
	}
	if (h->header_size != RT_ARENA_HEADER_SIZE &&
	    (h->version <= RT_FORMAT_VERSION || h->header_size < RT_ARENA_HEADER_SIZE)) {
		if (header_damage(damage, FIELD(header_size), FIELD_SIZE(header_size),
				  "header_size %u: %u in this version", h->header_size,
				  RT_ARENA_HEADER_SIZE) < 0)
			return -ENOMEM;
		h->header_size = RT_ARENA_HEADER_SIZE;
	}
	if (h->byte_order != RT_BYTE_ORDER_MARK) {
		if (header_damage(damage, FIELD(byte_order), FIELD_SIZE(byte_order),
				  "byte_order 0x%08x is no byte-order mark: read as this "
				  "machine's",
				  h->byte_order) < 0)
			return -ENOMEM;
		h->byte_order = RT_BYTE_ORDER_MARK;
	}
	if (h->state != RT_ARENA_RUNNING && h->state != RT_ARENA_CLOSED) {
		if (header_damage(damage, FIELD(state), FIELD_SIZE(state),
				  "state %u is unknown: read as running (whether the writer "
				  "still runs comes from its pid)",
				  h->state) < 0)
			return -ENOMEM;
		h->state = RT_ARENA_RUNNING;
	}
	return 0;
}

/* ---- geometry ---------------------------------------------------------- */

/* The tables in file order; the ring area's entries are ring_bytes each. */
enum { T_THREADS, T_SITES, T_STRINGS, T_MODULES, T_FDS, T_DESCS, T_RINGS, TABLES };

static const uint64_t entry_bytes[T_RINGS] = {
    sizeof(struct rt_thread_entry), sizeof(struct rt_site_entry), 1,
    sizeof(struct rt_module_entry), sizeof(struct rt_fd_entry),	  sizeof(struct rt_ring_desc)};
/* the library's alignment after each table: the next one starts there */
static const uint64_t library_align[TABLES] = {64, 64, 64, 64, 64, 4096, 1};
/*
 * The padding a writer leaves after each table is less than that alignment
 * (tables back to back, the ring area on a page), and the thread table
 * starts right after the header: a layout with more room than that is a
 * damaged one.
 */
static const uint64_t padding_max[TABLES] = {64, 64, 64, 64, 64, 4096, 1};

struct geometry {
	/* thread_capacity, site_capacity, string_capacity, module_capacity, fd_capacity, ring_count
	 */
	uint64_t count[T_RINGS];
	uint64_t ring_bytes;
	uint64_t off[TABLES];
	uint64_t arena_size;
};

struct header_geometry {
	struct geometry g;
	uint64_t requested; /* ring_bytes_requested */
	/*
	 * written before the module map: no module table, capacity and offset
	 * 0.  The chain then sees an empty one where the ring descriptors begin.
	 */
	int no_modules;
	/* no descriptor table (a program not traced with --io): the same, after the modules */
	int no_fds;
};

static void geometry_of(const struct rt_arena_header *h, struct header_geometry *hg)
{
	struct geometry *g = &hg->g;
	g->count[T_THREADS] = h->thread_capacity;
	g->count[T_SITES] = h->site_capacity;
	g->count[T_STRINGS] = h->string_capacity;
	g->count[T_MODULES] = h->module_capacity;
	g->count[T_FDS] = h->fd_capacity;
	g->count[T_DESCS] = h->ring_count;
	g->ring_bytes = h->ring_bytes;
	g->off[T_THREADS] = h->thread_table_offset;
	g->off[T_SITES] = h->site_table_offset;
	g->off[T_STRINGS] = h->string_area_offset;
	g->off[T_MODULES] = h->module_table_offset;
	g->off[T_FDS] = h->fd_table_offset;
	g->off[T_DESCS] = h->ring_desc_offset;
	g->off[T_RINGS] = h->ring_area_offset;
	g->arena_size = h->arena_size;
	hg->requested = h->ring_bytes_requested;
	hg->no_fds = h->fd_capacity == 0 && h->fd_table_offset == 0;
	if (hg->no_fds)
		g->off[T_FDS] = h->ring_desc_offset;
	hg->no_modules = h->module_capacity == 0 && h->module_table_offset == 0;
	if (hg->no_modules)
		g->off[T_MODULES] = g->off[T_FDS];
}

#define MAX_CANDIDATES 8

struct candidates {
	uint64_t v[MAX_CANDIDATES];
	unsigned n;
};

static void add_candidate(struct candidates *c, uint64_t v)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->v[i] == v)
			return;
	if (c->n < MAX_CANDIDATES)
		c->v[c->n++] = v;
}

/* Scores: agreeing with the header weighs most, then the file's size, then tight padding. */
#define W_AGREE 8
#define W_FILE 8
#define W_TIGHT 1

/* The best way found so far to lay out tables [0, stage) ending at one offset. */
struct path {
	int live;
	long score;
	uint64_t count[T_RINGS];
	uint64_t off[TABLES];
};

#define MAX_STATES (3 * MAX_CANDIDATES)

static void keep_path(struct path *states, unsigned *n, const struct path *p, unsigned stage)
{
	for (unsigned i = 0; i < *n; i++) {
		if (states[i].off[stage] == p->off[stage]) {
			if (p->score > states[i].score)
				states[i] = *p;
			return;
		}
	}
	if (*n < MAX_STATES)
		states[(*n)++] = *p;
}

/*
 * The best layout with ring_count rc and ring_bytes rb: a walk along the
 * chain of tables, keeping for each offset the best-scoring way to reach it.
 */
static int best_layout(const struct header_geometry *hg, uint64_t size, uint64_t rc, uint64_t rb,
		       struct geometry *out, long *out_score)
{
	const struct geometry *h = &hg->g;
	struct path states[MAX_STATES], next[MAX_STATES];
	unsigned n = 0, m;
	struct path p;
	memset(&p, 0, sizeof(p));
	p.live = 1;
	struct candidates first = {{0}, 0};
	add_candidate(&first, h->off[T_THREADS]);
	add_candidate(&first, RT_ARENA_HEADER_SIZE);
	for (unsigned i = 0; i < first.n; i++) {
		if (first.v[i] < RT_ARENA_HEADER_SIZE ||
		    first.v[i] - RT_ARENA_HEADER_SIZE >= padding_max[0] || first.v[i] % 8)
			continue;
		p.off[T_THREADS] = first.v[i];
		p.score = first.v[i] == h->off[T_THREADS] ? W_AGREE : 0;
		keep_path(states, &n, &p, T_THREADS);
	}
	for (unsigned t = T_THREADS; t <= T_DESCS; t++) {
		m = 0;
		for (unsigned s = 0; s < n; s++) {
			const struct path *from = &states[s];
			uint64_t at = from->off[t];
			struct candidates counts = {{0}, 0};
			if (t == T_DESCS) {
				add_candidate(&counts, rc);
			} else {
				add_candidate(&counts, h->count[t]);
				if (h->off[t + 1] > at)
					add_candidate(&counts,
						      (h->off[t + 1] - at) / entry_bytes[t]);
				add_candidate(&counts, t == T_THREADS
							   ? (rc * 4 > DEFAULT_MIN_THREADS
								  ? rc * 4
								  : DEFAULT_MIN_THREADS)
						       : t == T_SITES	? DEFAULT_SITE_CAPACITY
						       : t == T_MODULES ? RT_MODULE_CAPACITY
						       : t == T_FDS	? RT_FD_CAPACITY
									: DEFAULT_STRING_CAPACITY);
			}
			for (unsigned c = 0; c < counts.n; c++) {
				uint64_t count = counts.v[c], bytes, end;
				if ((count > UINT32_MAX && t != T_STRINGS) ||
				    (t == T_MODULES && count > RT_MODULE_CAPACITY_MAX) ||
				    (t == T_FDS && count > RT_FD_CAPACITY_MAX))
					continue;
				if (__builtin_mul_overflow(count, entry_bytes[t], &bytes) ||
				    __builtin_add_overflow(at, bytes, &end) || end > (1ull << 56))
					continue;
				struct candidates offs = {{0}, 0};
				add_candidate(&offs, h->off[t + 1]);
				add_candidate(&offs, align_up(end, library_align[t]));
				add_candidate(&offs, align_up(end, 8));
				for (unsigned o = 0; o < offs.n; o++) {
					uint64_t off = offs.v[o];
					if (off < end || off - end >= padding_max[t] || off % 8)
						continue;
					struct path q = *from;
					q.count[t] = count;
					q.off[t + 1] = off;
					q.score += (count == h->count[t]) * W_AGREE +
						   (off == h->off[t + 1]) * W_AGREE +
						   (off == align_up(end, library_align[t]) ||
						    off == align_up(end, 8)) *
						       W_TIGHT;
					keep_path(next, &m, &q, t + 1);
				}
			}
		}
		memcpy(states, next, m * sizeof(*next));
		n = m;
	}
	int found = 0;
	for (unsigned s = 0; s < n; s++) {
		uint64_t rings, arena;
		if (__builtin_mul_overflow(rc, rb, &rings) ||
		    __builtin_add_overflow(states[s].off[T_RINGS], rings, &arena))
			continue;
		long score = states[s].score + (long)(arena == h->arena_size) * W_AGREE +
			     (long)(arena == size) * W_FILE +
			     (long)(rb == h->ring_bytes) * W_AGREE +
			     (long)(rb == floor_power_of_two(hg->requested)) * W_TIGHT;
		if (!found || score > *out_score) {
			found = 1;
			*out_score = score;
			memcpy(out->count, states[s].count, sizeof(out->count));
			memcpy(out->off, states[s].off, sizeof(out->off));
			out->count[T_DESCS] = rc;
			out->ring_bytes = rb;
			out->arena_size = arena;
		}
	}
	return found;
}

static int ring_bytes_ok(uint64_t rb)
{
	return rt_is_power_of_two(rb) && rb >= RT_RING_MIN_BYTES && rb <= RT_RING_MAX_BYTES;
}

/* (ring_count, ring_bytes) pairs worth trying: the header's, and what each implies. */
static unsigned ring_pairs(const struct header_geometry *hg, uint64_t size, uint64_t pairs[][2],
			   unsigned max)
{
	const struct geometry *h = &hg->g;
	struct candidates rbs = {{0}, 0}, rcs = {{0}, 0};
	add_candidate(&rbs, h->ring_bytes);
	add_candidate(&rbs, floor_power_of_two(hg->requested));
	add_candidate(&rcs, h->count[T_DESCS]);
	const uint64_t ends[2] = {h->arena_size, size};
	for (unsigned e = 0; e < 2; e++) {
		if (ends[e] <= h->off[T_RINGS])
			continue;
		uint64_t room = ends[e] - h->off[T_RINGS];
		/* the ring size the room implies for the header's ring count, and the reverse */
		if (h->count[T_DESCS] && room % h->count[T_DESCS] == 0)
			add_candidate(&rbs, room / h->count[T_DESCS]);
		for (unsigned b = 0; b < rbs.n; b++)
			if (ring_bytes_ok(rbs.v[b]) && room % rbs.v[b] == 0)
				add_candidate(&rcs, room / rbs.v[b]);
	}
	/* the ring descriptors fill the gap before the ring area, up to its alignment */
	if (h->off[T_RINGS] > h->off[T_DESCS]) {
		uint64_t gap = h->off[T_RINGS] - h->off[T_DESCS];
		add_candidate(&rcs, gap / sizeof(struct rt_ring_desc));
	}
	unsigned n = 0;
	for (unsigned c = 0; c < rcs.n; c++) {
		for (unsigned b = 0; b < rbs.n && n < max; b++) {
			if (!ring_bytes_ok(rbs.v[b]) || rcs.v[c] > UINT32_MAX)
				continue;
			pairs[n][0] = rcs.v[c];
			pairs[n][1] = rbs.v[b];
			n++;
		}
	}
	return n;
}

static const struct {
	const char *name;
	uint64_t field;
	uint64_t bytes;
} geometry_fields[] = {
    {"thread_capacity", FIELD(thread_capacity), FIELD_SIZE(thread_capacity)},
    {"site_capacity", FIELD(site_capacity), FIELD_SIZE(site_capacity)},
    {"string_capacity", FIELD(string_capacity), FIELD_SIZE(string_capacity)},
    {"module_capacity", FIELD(module_capacity), FIELD_SIZE(module_capacity)},
    {"fd_capacity", FIELD(fd_capacity), FIELD_SIZE(fd_capacity)},
    {"ring_count", FIELD(ring_count), FIELD_SIZE(ring_count)},
    {"thread_table_offset", FIELD(thread_table_offset), 8},
    {"site_table_offset", FIELD(site_table_offset), 8},
    {"string_area_offset", FIELD(string_area_offset), 8},
    {"module_table_offset", FIELD(module_table_offset), 8},
    {"fd_table_offset", FIELD(fd_table_offset), 8},
    {"ring_desc_offset", FIELD(ring_desc_offset), 8},
    {"ring_area_offset", FIELD(ring_area_offset), 8},
    {"ring_bytes", FIELD(ring_bytes), FIELD_SIZE(ring_bytes)},
    {"arena_size", FIELD(arena_size), FIELD_SIZE(arena_size)},
};

#define GEOMETRY_VALUES (T_RINGS + TABLES + 2)

static void geometry_values(const struct geometry *g, uint64_t v[GEOMETRY_VALUES])
{
	for (unsigned t = 0; t < T_RINGS; t++)
		v[t] = g->count[t];
	for (unsigned t = 0; t < TABLES; t++)
		v[T_RINGS + t] = g->off[t];
	v[T_RINGS + TABLES] = g->ring_bytes;
	v[T_RINGS + TABLES + 1] = g->arena_size;
}

/*
 * Search the layouts the header's fields allow; report and replace every
 * field that does not fit.  Returns 0, 1 when nothing fits, or -ENOMEM.
 */
static int repair_geometry(struct rt_arena_header *h, uint64_t size, struct rt_damage_list *damage)
{
	struct header_geometry hg;
	geometry_of(h, &hg);
	uint64_t pairs[64][2];
	unsigned n = ring_pairs(&hg, size, pairs, 64);
	struct geometry best, g;
	long best_score = 0, score = 0;
	int found = 0;
	for (unsigned i = 0; i < n; i++) {
		if (best_layout(&hg, size, pairs[i][0], pairs[i][1], &g, &score) &&
		    (!found || score > best_score)) {
			best = g;
			best_score = score;
			found = 1;
		}
	}
	if (!found)
		return 1;
	/* an arena without a module table keeps none */
	const int keep_no_modules = hg.no_modules && best.count[T_MODULES] == 0;
	if (keep_no_modules)
		best.off[T_MODULES] = hg.g.off[T_MODULES];
	const int keep_no_fds = hg.no_fds && best.count[T_FDS] == 0;
	if (keep_no_fds)
		best.off[T_FDS] = hg.g.off[T_FDS];
	uint64_t was[GEOMETRY_VALUES], now[GEOMETRY_VALUES];
	geometry_values(&hg.g, was);
	geometry_values(&best, now);
	for (unsigned i = 0; i < GEOMETRY_VALUES; i++) {
		if (was[i] == now[i])
			continue;
		if (header_damage(damage, geometry_fields[i].field, geometry_fields[i].bytes,
				  "%s %llu does not fit the other fields and the file size: %llu "
				  "recomputed",
				  geometry_fields[i].name, (unsigned long long)was[i],
				  (unsigned long long)now[i]) < 0)
			return -ENOMEM;
	}
	h->thread_capacity = (uint32_t)best.count[T_THREADS];
	h->site_capacity = (uint32_t)best.count[T_SITES];
	h->string_capacity = best.count[T_STRINGS];
	h->module_capacity = (uint32_t)best.count[T_MODULES];
	h->fd_capacity = (uint32_t)best.count[T_FDS];
	h->ring_count = (uint32_t)best.count[T_DESCS];
	h->thread_table_offset = best.off[T_THREADS];
	h->site_table_offset = best.off[T_SITES];
	h->string_area_offset = best.off[T_STRINGS];
	h->module_table_offset = keep_no_modules ? 0 : best.off[T_MODULES];
	h->fd_table_offset = keep_no_fds ? 0 : best.off[T_FDS];
	h->ring_desc_offset = best.off[T_DESCS];
	h->ring_area_offset = best.off[T_RINGS];
	h->ring_bytes = best.ring_bytes;
	h->arena_size = best.arena_size;
	return 0;
}

/*
 * Whether a header that passed the strict check is laid out as writers lay
 * arenas out (padding_max): if not, its sizes or offsets were damaged into
 * values that still fit (a table that lost entries, say), and are repaired.
 * Returns 1, or 0 with the field at fault in *error.
 */
static int layout_tight(const struct rt_arena_header *h, struct rt_layout_error *error)
{
	struct header_geometry hg;
	geometry_of(h, &hg);
	const struct geometry *g = &hg.g;
	if (g->off[T_THREADS] - RT_ARENA_HEADER_SIZE >= padding_max[0]) {
		rt_layout_fail(error, FIELD(thread_table_offset),
			       "the thread table does not follow the header");
		return 0;
	}
	for (unsigned t = T_THREADS; t < T_RINGS; t++) {
		/* the strict check ruled out overflows and overlaps */
		uint64_t end = g->off[t] + g->count[t] * entry_bytes[t];
		if (g->off[t + 1] >= end && g->off[t + 1] - end >= padding_max[t]) {
			rt_layout_fail(error, geometry_fields[t].field,
				       "%s leaves %llu bytes before the next table",
				       geometry_fields[t].name,
				       (unsigned long long)(g->off[t + 1] - end));
			return 0;
		}
	}
	/* the rings end the arena */
	if (g->off[T_RINGS] + g->count[T_DESCS] * g->ring_bytes != g->arena_size) {
		rt_layout_fail(error, FIELD(ring_count), "the rings do not end the arena");
		return 0;
	}
	return 1;
}

/* Fewer entries of a table whose end the file lacks. */
static uint64_t entries_in_file(uint64_t offset, uint64_t count, uint64_t each, uint64_t size)
{
	if (offset >= size)
		return 0;
	uint64_t fit = (size - offset) / each;
	return count < fit ? count : fit;
}

/* A truncated file: say what is missing, and cut the tables to what is there. */
static int cut_to_file(struct rt_arena_header *h, uint64_t size, struct rt_damage_list *damage)
{
	if (h->arena_size <= size)
		return 0;
	if (rt_damage_add(damage, RT_DAMAGE_MISSING, 0, 0, size, h->arena_size - size,
			  "the file ends at byte %llu; the arena is %llu bytes: the rest is "
			  "missing",
			  (unsigned long long)size, (unsigned long long)h->arena_size) < 0)
		return -ENOMEM;
	h->thread_capacity = (uint32_t)entries_in_file(h->thread_table_offset, h->thread_capacity,
						       sizeof(struct rt_thread_entry), size);
	h->site_capacity = (uint32_t)entries_in_file(h->site_table_offset, h->site_capacity,
						     sizeof(struct rt_site_entry), size);
	h->string_capacity = entries_in_file(h->string_area_offset, h->string_capacity, 1, size);
	if (h->module_capacity) {
		h->module_capacity =
		    (uint32_t)entries_in_file(h->module_table_offset, h->module_capacity,
					      sizeof(struct rt_module_entry), size);
		if (!h->module_capacity)
			h->module_table_offset = 0;
	}
	if (h->fd_capacity) {
		h->fd_capacity = (uint32_t)entries_in_file(h->fd_table_offset, h->fd_capacity,
							   sizeof(struct rt_fd_entry), size);
		if (!h->fd_capacity)
			h->fd_table_offset = 0;
	}
	uint32_t rings = (uint32_t)entries_in_file(h->ring_desc_offset, h->ring_count,
						   sizeof(struct rt_ring_desc), size);
	/* a ring is read if its first slot is in the file */
	uint32_t readable = 0;
	while (readable < rings &&
	       h->ring_area_offset + (uint64_t)readable * h->ring_bytes + RT_SLOT_SIZE <= size)
		readable++;
	h->ring_count = readable;
	h->arena_size = size;
	return 0;
}

uint64_t rt_header_ring_slots_readable(const struct rt_arena_header *h, uint64_t size,
				       uint32_t ring)
{
	uint64_t slots = h->ring_bytes / RT_SLOT_SIZE;
	uint64_t start = h->ring_area_offset + (uint64_t)ring * h->ring_bytes;
	if (start >= size)
		return 0;
	uint64_t fit = (size - start) / RT_SLOT_SIZE;
	return fit < slots ? fit : slots;
}

/* ---- the other fields -------------------------------------------------- */

static int native_clock(void)
{
#if defined(__x86_64__)
	return RT_CLOCK_TSC;
#elif defined(__aarch64__)
	return RT_CLOCK_CNTVCT;
#else
	return RT_CLOCK_MONOTONIC;
#endif
}

/* The sync pair, if it was read consistently and lies a millisecond or more after start. */
static int usable_sync(const struct rt_arena_header *h, struct rt_clock_pair *pair)
{
	if (h->sync.sequence % 2)
		return 0;
	*pair = h->sync.pair;
	return pair->counter > h->start.counter && pair->mono_ns >= h->start.mono_ns + 1000000;
}

static int check_clock(struct rt_arena_header *h, struct rt_damage_list *damage)
{
	if (h->clock_source < RT_CLOCK_TSC || h->clock_source > RT_CLOCK_MONOTONIC) {
		/* a nanosecond counter reads what CLOCK_MONOTONIC read with it */
		uint64_t a = h->start.counter, b = h->start.mono_ns;
		uint32_t source = (a > b ? a - b : b - a) < 1000000000ull
				      ? RT_CLOCK_MONOTONIC
				      : (uint32_t)native_clock();
		if (header_damage(damage, FIELD(clock_source), FIELD_SIZE(clock_source),
				  "clock_source %u is unknown: %u inferred from the start pair",
				  h->clock_source, source) < 0)
			return -ENOMEM;
		h->clock_source = source;
	}
	if (h->clock_source == RT_CLOCK_MONOTONIC)
		return 0;
	if (h->counter_hz >= 1000000ull && h->counter_hz <= 100000000000ull)
		return 0;
	struct rt_clock_pair sync;
	uint64_t hz = 1000000000ull;
	const char *how = "taken: none can be measured (times are counter ticks read as ns)";
	if (usable_sync(h, &sync)) {
		unsigned __int128 ticks = (unsigned __int128)(sync.counter - h->start.counter);
		hz = (uint64_t)(ticks * 1000000000u / (sync.mono_ns - h->start.mono_ns));
		how = "measured between the start and sync pairs";
		if (hz == 0)
			hz = 1;
	}
	if (header_damage(damage, FIELD(counter_hz), FIELD_SIZE(counter_hz),
			  "counter_hz %llu is no counter frequency: %llu Hz %s",
			  (unsigned long long)h->counter_hz, (unsigned long long)hz, how) < 0)
		return -ENOMEM;
	h->counter_hz = hz;
	return 0;
}

/* Mode from the ring descriptors: only a collector (stream mode) moves tail. */
static uint32_t infer_mode(const unsigned char *file, struct rt_file_data *data,
			   const struct rt_arena_header *h)
{
	const uint64_t each = sizeof(struct rt_ring_desc);
	/* a descriptor in a hole is zeros: only those with data are read */
	for (uint64_t r =
		 rt_file_data_next_entry(data, h->ring_desc_offset, each, 0, h->ring_count);
	     r < h->ring_count;
	     r = rt_file_data_next_entry(data, h->ring_desc_offset, each, r + 1, h->ring_count)) {
		struct rt_ring_desc copy;
		const struct rt_ring_desc *d = rt_file_data_at(
		    data, file, rt_layout_ring_desc_offset(h, (uint32_t)r), sizeof(copy), &copy);
		if (__atomic_load_n(&d->tail, __ATOMIC_RELAXED))
			return RT_MODE_STREAM;
	}
	return RT_MODE_FLIGHT;
}

/* Reserved bytes of the header are zero: report the span of any that are not. */
static int check_reserved(const unsigned char *file, struct rt_damage_list *damage)
{
	static const struct {
		uint64_t field, bytes;
	} reserved[] = {
	    {FIELD(reserved0), FIELD_SIZE(reserved0)},
	    {FIELD(reserved1), FIELD_SIZE(reserved1)},
	    {FIELD(reserved2), FIELD_SIZE(reserved2)},
	    {FIELD(reserved3), FIELD_SIZE(reserved3)},
	    {FIELD(reserved_tail), FIELD_SIZE(reserved_tail)},
	};
	for (size_t r = 0; r < sizeof(reserved) / sizeof(reserved[0]); r++) {
		uint64_t first = UINT64_MAX, last = 0;
		for (uint64_t i = reserved[r].field; i < reserved[r].field + reserved[r].bytes;
		     i++) {
			if (file[i]) {
				if (first == UINT64_MAX)
					first = i;
				last = i;
			}
		}
		if (first != UINT64_MAX &&
		    header_damage(damage, first, last + 1 - first,
				  "reserved header bytes are not zero: ignored") < 0)
			return -ENOMEM;
	}
	return 0;
}

static int check_counter(uint64_t *value, uint64_t field, const char *name,
			 struct rt_damage_list *damage)
{
	if (*value < RT_COUNT_MAX)
		return 0;
	if (header_damage(damage, field, 8, "%s %llu is no count: taken as 0", name,
			  (unsigned long long)*value) < 0)
		return -ENOMEM;
	*value = 0;
	return 0;
}

static int check_fields(const unsigned char *file, struct rt_file_data *data,
			struct rt_arena_header *h, struct rt_damage_list *damage)
{
	int rc;
	if (h->slot_size != RT_SLOT_SIZE) {
		if (header_damage(damage, FIELD(slot_size), FIELD_SIZE(slot_size),
				  "slot_size %u: %u in this version", h->slot_size,
				  RT_SLOT_SIZE) < 0)
			return -ENOMEM;
		h->slot_size = RT_SLOT_SIZE;
	}
	if (h->mode != RT_MODE_FLIGHT && h->mode != RT_MODE_STREAM) {
		uint32_t mode = infer_mode(file, data, h);
		if (header_damage(damage, FIELD(mode), FIELD_SIZE(mode),
				  "mode %u is unknown: %s inferred from the ring descriptors",
				  h->mode, mode == RT_MODE_STREAM ? "stream" : "flight") < 0)
			return -ENOMEM;
		h->mode = mode;
	}
	if (floor_power_of_two(h->ring_bytes_requested) != h->ring_bytes) {
		if (header_damage(damage, FIELD(ring_bytes_requested),
				  FIELD_SIZE(ring_bytes_requested),
				  "ring_bytes_requested %llu does not give ring_bytes %llu: "
				  "ignored",
				  (unsigned long long)h->ring_bytes_requested,
				  (unsigned long long)h->ring_bytes) < 0)
			return -ENOMEM;
		h->ring_bytes_requested = h->ring_bytes;
	}
	if (h->build_id_size > RT_BUILD_ID_MAX) {
		if (header_damage(damage, FIELD(build_id_size), FIELD_SIZE(build_id_size),
				  "build_id_size %u is above %u: no build-id", h->build_id_size,
				  RT_BUILD_ID_MAX) < 0)
			return -ENOMEM;
		h->build_id_size = 0;
	}
	if (!memchr(h->program, 0, sizeof(h->program))) {
		if (header_damage(damage, FIELD(program), FIELD_SIZE(program),
				  "program name is not NUL-terminated: cut at %zu bytes",
				  sizeof(h->program) - 1) < 0)
			return -ENOMEM;
		h->program[sizeof(h->program) - 1] = 0;
	}
	if (h->end_reason > RT_END_EXEC) {
		if (header_damage(damage, FIELD(end_reason), FIELD_SIZE(end_reason),
				  "end_reason %u is unknown: read as unknown", h->end_reason) < 0)
			return -ENOMEM;
		h->end_reason = RT_END_UNKNOWN;
	}
	if ((rc = check_clock(h, damage)) ||
	    (rc = check_counter(&h->ring_reuses, FIELD(ring_reuses), "ring_reuses", damage)) ||
	    (rc = check_counter(&h->threads_untracked, FIELD(threads_untracked),
				"threads_untracked", damage)) ||
	    (rc = check_counter(&h->lost_untracked, FIELD(lost_untracked), "lost_untracked",
				damage)) ||
	    (rc =
		 check_counter(&h->sites_refused, FIELD(sites_refused), "sites_refused", damage)) ||
	    (rc = check_counter(&h->lost_no_site, FIELD(lost_no_site), "lost_no_site", damage)) ||
	    (rc = check_counter(&h->modules_refused, FIELD(modules_refused), "modules_refused",
				damage)) ||
	    (rc = check_counter(&h->images_replaced, FIELD(images_replaced), "images_replaced",
				damage)) ||
	    (rc =
		 check_counter(&h->lost_replaced, FIELD(lost_replaced), "lost_replaced", damage)) ||
	    (rc = check_counter(&h->threads_reused, FIELD(threads_reused), "threads_reused",
				damage)) ||
	    (rc = check_counter(&h->lost_reused, FIELD(lost_reused), "lost_reused", damage)))
		return rc;
	/* a newer version may use what this one reserves; an older one kept them zero */
	if (h->version <= RT_FORMAT_VERSION)
		return check_reserved(file, damage);
	return 0;
}

int rt_header_check_data(struct rt_file_data *data, uint64_t size, struct rt_layout_error *error)
{
	const uint64_t end =
	    size < sizeof(struct rt_arena_header) ? size : sizeof(struct rt_arena_header);
	const uint64_t run = rt_file_data_run(data, 0, end);
	if (run == end)
		return 0;
	return rt_layout_fail(error, run,
			      "not a ringtrace arena: its header is a hole of the file from byte "
			      "%llu on (nothing was written there)",
			      (unsigned long long)run);
}

int rt_header_recover(const unsigned char *file, uint64_t size, struct rt_file_data *data,
		      struct rt_arena_header *h, uint32_t *rings_recorded,
		      struct rt_damage_list *damage, struct rt_layout_error *error)
{
	struct rt_file_data everywhere;
	rt_file_data_init(&everywhere, -1);
	if (!data)
		data = &everywhere;
	int rc = rt_header_check_data(data, size, error);
	if (rc) {
		memset(h, 0, sizeof(*h));
		*rings_recorded = 0;
		return rc;
	}
	rc = rt_layout_check(file, size, h, error);
	*rings_recorded = h->ring_count;
	const int loose = rc == 0 && h->version <= RT_FORMAT_VERSION && !layout_tight(h, error);
	if ((rc == 0 && !loose) || rc == -EPROTONOSUPPORT || size < RT_ARENA_HEADER_SIZE) {
		if (rc)
			return rc;
		return check_fields(file, data, h, damage);
	}
	/* the strict check failed: what it said is the answer if nothing can be repaired */
	struct rt_layout_error strict = *error;
	struct rt_arena_header as_checked = *h;
	memcpy(h, file, sizeof(*h));
	if ((rc = check_identity(file, size, h, damage, error)))
		return rc;
	if ((rc = repair_geometry(h, size, damage)) != 0) {
		if (rc < 0)
			return rc;
		if (loose) {
			/* it checks, and no tighter layout fits: read it as it is */
			*h = as_checked;
			return check_fields(file, data, h, damage);
		}
		*error = strict;
		return -EINVAL;
	}
	const uint32_t rings = h->ring_count;
	const uint64_t arena_size = h->arena_size;
	if ((rc = cut_to_file(h, size, damage)) || (rc = check_fields(file, data, h, damage)))
		return rc;
	/*
	 * What the reader relies on, as after a successful strict check: the
	 * repaired header passes it, as it was before its tables were cut to a
	 * truncated file (a safety net: the repairs above aim at it).
	 */
	struct rt_arena_header uncut = *h, checked;
	struct rt_layout_error why;
	uncut.ring_count = rings;
	uncut.arena_size = arena_size;
	if (rt_layout_check(&uncut, size > arena_size ? size : arena_size, &checked, &why) != 0) {
		*error = strict;
		return -EINVAL;
	}
	*rings_recorded = rings;
	return 0;
}

/* The sync pair fits the start pair and the counter's frequency. */
static int sync_fits(const struct rt_arena_header *h, const struct rt_clock_pair *sync, char *why,
		     size_t why_size)
{
	if (sync->counter < h->start.counter || sync->mono_ns < h->start.mono_ns) {
		snprintf(why, why_size, "reads before the start pair");
		return 0;
	}
	uint64_t ticks = sync->counter - h->start.counter, ns = sync->mono_ns - h->start.mono_ns;
	if (ns < 1000000)
		return 1; /* too close to say: the reader does not use it */
	uint64_t hz = h->clock_source == RT_CLOCK_MONOTONIC ? 1000000000ull : h->counter_hz;
	unsigned __int128 measured = (unsigned __int128)ticks * 1000000000u / ns;
	/* an estimate over 200 us may be off by a few per cent, not by a factor of two */
	if (measured > (unsigned __int128)hz * 2 || measured * 2 < hz) {
		snprintf(why, why_size, "gives %llu Hz, counter_hz says %llu",
			 (unsigned long long)(measured > UINT64_MAX ? UINT64_MAX : measured),
			 (unsigned long long)hz);
		return 0;
	}
	return 1;
}

int rt_header_check_clock(struct rt_arena_header *h, const struct rt_clock_pair *sync,
			  uint64_t earliest, struct rt_damage_list *damage, int *use_sync)
{
	char why[96];
	*use_sync = sync != NULL;
	if (sync && !sync_fits(h, sync, why, sizeof(why))) {
		*use_sync = 0;
		if (header_damage(damage, FIELD(sync), FIELD_SIZE(sync), "sync pair %s: ignored",
				  why) < 0)
			return -ENOMEM;
		sync = NULL;
	}
	if (!earliest)
		return 0;
	uint64_t hz = h->clock_source == RT_CLOCK_MONOTONIC ? 1000000000ull : h->counter_hz;
	/* (10 ms of slack: counters of different CPUs may differ a little) */
	uint64_t slack = hz / 100;
	if (h->start.counter <= earliest || h->start.counter - earliest <= slack)
		return 0;
	uint64_t start = earliest;
	const char *how = "the earliest thread's start taken";
	if (sync && sync->counter >= earliest && sync->mono_ns > h->start.mono_ns) {
		unsigned __int128 ticks =
		    (unsigned __int128)(sync->mono_ns - h->start.mono_ns) * hz / 1000000000u;
		if (ticks <= sync->counter && sync->counter - (uint64_t)ticks <= earliest) {
			start = sync->counter - (uint64_t)ticks;
			how = "recomputed from the sync pair";
		}
	}
	if (header_damage(damage, FIELD(start.counter), FIELD_SIZE(start.counter),
			  "start.counter %llu does not fit the threads' start (%llu): %llu %s",
			  (unsigned long long)h->start.counter, (unsigned long long)earliest,
			  (unsigned long long)start, how) < 0)
		return -ENOMEM;
	h->start.counter = start;
	/* the sync pair was measured from the old start: no longer a frequency */
	*use_sync = 0;
	return 0;
}
