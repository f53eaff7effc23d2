/*
 * damaged.c - a real arena, damaged one way at a time, read back by the
 * real tool (docs/FORMAT.md, "Damaged arenas").
 *
 *   damaged --tool RINGTRACE --victim VICTIM [--keep DIR]
 *
 * The victim (victim.c) traces from five threads into four rings and
 * writes down every event it traced.  Its arena, undamaged, must dump with
 * exit status 0 and show only recorded events.  Then each case below
 * overwrites one part of a copy of it - header fields one by one, thread
 * entries, site entries, strings, ring descriptors, slots in the middle of
 * a ring, whole zeroed pages, the end of the file - and for each:
 *
 *  - the tool never crashes: `dump`, `dump --json`, `dump --hexdump`,
 *    `info` all exit 3 ("read, but damaged"; 2 for the cases that must be
 *    refused), with one line on stderr;
 *  - every event `dump --json` shows (and every last event) is one the
 *    victim recorded, and none is shown twice;
 *  - every event of the undamaged dump whose bytes survived - its slots,
 *    its thread entry, its site entry and strings, its ring descriptor,
 *    and for the header cases all of them - is shown;
 *  - a damaged region reported in the JSON, and one in the hex dump, covers
 *    bytes that were overwritten.
 *
 * Damage goes where the format can tell (see "What cannot be told" in
 * docs/FORMAT.md): ranges that start at a slot or entry boundary, strings
 * zeroed rather than rewritten.  Exit status 0 when every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../stress/dump_json.h"
#include "ringtrace/format.h"

static int passed, failed;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (cond) {                                                                        \
			passed++;                                                                  \
		} else {                                                                           \
			failed++;                                                                  \
			fprintf(stderr, "FAIL: " __VA_ARGS__);                                     \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

static const char *tool, *victim;
static char dir[256];

/* ---- files and processes ------------------------------------------------ */

static unsigned char *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	unsigned char *data = malloc(n > 0 ? (size_t)n + 1 : 1);
	if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
		free(data);
		data = NULL;
	}
	fclose(f);
	if (data) {
		data[n > 0 ? n : 0] = 0;
		*size = (size_t)n;
	}
	return data;
}

static int write_file(const char *path, const void *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return -1;
	int ok = fwrite(data, 1, size, f) == size;
	return fclose(f) == 0 && ok ? 0 : -1;
}

/* Run argv with stdout and stderr to files; the exit status, or -1 if it did not exit. */
static int run(char *const argv[], const char *out, const char *err, char *const env[])
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || e < 0)
			_exit(127);
		dup2(o, 1);
		dup2(e, 2);
		if (env)
			execve(argv[0], argv, env);
		else
			execv(argv[0], argv);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int line_count(const char *path)
{
	size_t n;
	char *text = (char *)read_file(path, &n);
	int lines = 0;
	for (size_t i = 0; text && i < n; i++)
		lines += text[i] == '\n';
	free(text);
	return lines;
}

/* ---- what was recorded -------------------------------------------------- */

/* An event as a string: "tid tag arg arg ...". */
struct key_count {
	char *key;
	int recorded;
	int shown;
};

static struct key_count *recorded;
static size_t recorded_count;

static int compare_keys(const void *a, const void *b)
{
	return strcmp(((const struct key_count *)a)->key, ((const struct key_count *)b)->key);
}

static struct key_count *find_key(const char *key)
{
	struct key_count probe = {(char *)key, 0, 0};
	return bsearch(&probe, recorded, recorded_count, sizeof(*recorded), compare_keys);
}

static int load_recorded(const char *path)
{
	size_t n;
	char *text = (char *)read_file(path, &n);
	if (!text)
		return -1;
	size_t lines = 0;
	for (size_t i = 0; i < n; i++)
		lines += text[i] == '\n';
	recorded = calloc(lines + 1, sizeof(*recorded));
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		recorded[recorded_count++].key = strdup(line);
	free(text);
	qsort(recorded, recorded_count, sizeof(*recorded), compare_keys);
	/* duplicates count up in the first of them */
	size_t out = 0;
	for (size_t i = 0; i < recorded_count; i++) {
		if (out && strcmp(recorded[out - 1].key, recorded[i].key) == 0) {
			recorded[out - 1].recorded++;
			free(recorded[i].key);
			continue;
		}
		recorded[out] = recorded[i];
		recorded[out++].recorded = 1;
	}
	recorded_count = out;
	return 0;
}

static void event_key(const struct dump_line *l, char *key, size_t size)
{
	int n = snprintf(key, size, "%lld %s", (long long)l->tid, l->tag);
	for (int i = 0; i < l->nargs && n > 0 && (size_t)n < size; i++)
		n += snprintf(key + n, size - (size_t)n, " %s%llu", l->args[i].negative ? "-" : "",
			      (unsigned long long)(l->args[i].negative ? 0 - l->args[i].bits
								       : l->args[i].bits));
}

/* ---- the undamaged arena: where each event's bytes are ----------------- */

struct range {
	uint64_t offset, length;
};

#define MAX_DEPS 8

/* One event of the undamaged dump and the bytes it needs. */
struct baseline_event {
	char key[160];
	const struct key_count *recorded;
	struct range deps[MAX_DEPS];
	int dep_count;
	int shown;
};

static struct baseline_event *baseline;
static size_t baseline_count;
static unsigned char *good;
static size_t good_size;
static const struct rt_arena_header *gh;

static const struct rt_thread_entry *thread_of(int64_t tid)
{
	for (uint32_t i = 0; i < gh->threads_used && i < gh->thread_capacity; i++) {
		const struct rt_thread_entry *e =
		    (const struct rt_thread_entry *)(good + gh->thread_table_offset) + i;
		if (e->tid == tid)
			return e;
	}
	return NULL;
}

static const struct rt_site_entry *site_of(const char *tag, uint32_t *index)
{
	for (uint32_t i = 1; i < gh->sites_used && i < gh->site_capacity; i++) {
		const struct rt_site_entry *e =
		    (const struct rt_site_entry *)(good + gh->site_table_offset) + i;
		const char *t = (const char *)good + gh->string_area_offset + e->tag_offset;
		if (e->valid == 1 && strlen(tag) == e->tag_length &&
		    memcmp(t, tag, e->tag_length) == 0) {
			*index = i;
			return e;
		}
	}
	return NULL;
}

/* The slots of record seq in ring, found by their stamps. */
static int record_slots(uint32_t ring, uint64_t seq, struct range *out)
{
	uint64_t slots = gh->ring_bytes / RT_SLOT_SIZE;
	const union rt_slot *s =
	    (const union rt_slot *)(good + gh->ring_area_offset + (uint64_t)ring * gh->ring_bytes);
	for (uint64_t i = 0; i < slots; i++) {
		if ((s[i].head.kind == RT_REC_TRACE || s[i].head.kind == RT_REC_LOST) &&
		    (s[i].head.seq & (slots - 1)) == i && s[i].head.record == (uint32_t)seq) {
			out->offset =
			    gh->ring_area_offset + ring * gh->ring_bytes + i * RT_SLOT_SIZE;
			out->length = (uint64_t)s[i].head.nslots * RT_SLOT_SIZE;
			return 0;
		}
	}
	return -1;
}

static void add_dep(struct baseline_event *b, uint64_t offset, uint64_t length)
{
	if (b->dep_count < MAX_DEPS)
		b->deps[b->dep_count++] = (struct range){offset, length};
}

/* ---- reading a dump ----------------------------------------------------- */

struct dump_result {
	int status;
	size_t events, last_events;
	struct range regions[4096];
	size_t region_count;
	char error[256];
};

static int overlaps(uint64_t a, uint64_t an, uint64_t b, uint64_t bn)
{
	return a < b + bn && b < a + an;
}

/* dump --json of path: every event recorded and shown once; the damaged regions. */
static void read_json(const char *path, struct dump_result *r, const char *what, int baseline_run)
{
	char out[512], err[512];
	snprintf(out, sizeof(out), "%s/out.json", dir);
	snprintf(err, sizeof(err), "%s/err.txt", dir);
	char *argv[] = {(char *)tool, "dump", "--json", (char *)path, NULL};
	memset(r, 0, sizeof(*r));
	r->status = run(argv, out, err, NULL);
	for (size_t i = 0; i < recorded_count; i++)
		recorded[i].shown = 0;
	for (size_t i = 0; i < baseline_count; i++)
		baseline[i].shown = 0;
	size_t n;
	char *text = (char *)read_file(out, &n);
	if (!text)
		return;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct dump_line l;
		char why[128], key[160];
		if (dump_json_parse(line, &l, why, sizeof(why)) != 0) {
			CHECK(0, "%s: dump --json: bad line (%s): %s", what, why, line);
			continue;
		}
		if (strcmp(l.kind, "lost") == 0) {
			if (l.has_offset && r->region_count < 4096)
				r->regions[r->region_count++] = (struct range){l.offset, l.length};
			continue;
		}
		event_key(&l, key, sizeof(key));
		struct key_count *k = find_key(key);
		CHECK(k != NULL, "%s: dump shows an event the victim never recorded: %s", what,
		      key);
		if (strcmp(l.kind, "trace") != 0)
			continue;
		r->events++;
		if (k) {
			k->shown++;
			CHECK(k->shown <= k->recorded, "%s: event shown %d times, recorded %d: %s",
			      what, k->shown, k->recorded, key);
		}
		if (baseline_run) {
			if (baseline_count % 1024 == 0)
				baseline =
				    realloc(baseline, (baseline_count + 1024) * sizeof(*baseline));
			struct baseline_event *b = &baseline[baseline_count++];
			memset(b, 0, sizeof(*b));
			snprintf(b->key, sizeof(b->key), "%s", key);
			b->recorded = k;
			const struct rt_thread_entry *t = thread_of(l.tid);
			uint32_t site;
			const struct rt_site_entry *s = site_of(l.tag, &site);
			struct range slots;
			if (!t || !s || t->ring >= gh->ring_count || !l.has_seq ||
			    record_slots(t->ring, l.seq, &slots)) {
				CHECK(0, "baseline: cannot place event %s in the arena", key);
				continue;
			}
			add_dep(b, slots.offset, slots.length);
			add_dep(b, (uint64_t)((const unsigned char *)t - good), sizeof(*t));
			add_dep(b, gh->site_table_offset + (uint64_t)site * sizeof(*s), sizeof(*s));
			add_dep(b, gh->string_area_offset + s->tag_offset, s->tag_length + 1);
			add_dep(b, gh->string_area_offset + s->file_offset, s->file_length + 1);
			add_dep(b, gh->string_area_offset + s->func_offset, s->func_length + 1);
			add_dep(b,
				gh->ring_desc_offset +
				    (uint64_t)t->ring * sizeof(struct rt_ring_desc),
				sizeof(struct rt_ring_desc));
		}
	}
	free(text);
	for (size_t i = 0; i < baseline_count; i++)
		baseline[i].shown = baseline[i].recorded && baseline[i].recorded->shown > 0;
}

/* ---- the cases ---------------------------------------------------------- */

enum fill { RANDOM, ZERO, ONES, VALUE, CUT };

struct damage_case {
	char name[64];
	uint64_t offset, length;
	enum fill fill;
	uint64_t value; /* VALUE: little-endian, length <= 8 */
	int header;	/* a header field: every event must survive */
	int refused;	/* the tool must refuse the file (exit status 2) */
};

static struct damage_case cases[128];
static size_t case_count;

static void add_case(const char *name, uint64_t offset, uint64_t length, enum fill fill,
		     uint64_t value, int header)
{
	struct damage_case *c = &cases[case_count++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->offset = offset;
	c->length = length;
	c->fill = fill;
	c->value = value;
	c->header = header;
}

#define FIELD(f) offsetof(struct rt_arena_header, f), sizeof(((struct rt_arena_header *)0)->f)

static void plan_cases(void)
{
	const struct rt_arena_header *h = gh;
	const uint64_t te = sizeof(struct rt_thread_entry), se = sizeof(struct rt_site_entry);
	const uint64_t de = sizeof(struct rt_ring_desc);
	/* header fields, one at a time: each is repaired or ignored, no event is lost */
	add_case("magic", FIELD(magic), RANDOM, 0, 1);
	add_case("header_size", FIELD(header_size), ONES, 0, 1);
	add_case("version", offsetof(struct rt_arena_header, version), 4, ZERO, 0, 1);
	add_case("byte_order", FIELD(byte_order), VALUE, 0x0a0b0c0d, 1);
	add_case("state", FIELD(state), VALUE, 7, 1);
	add_case("arena_size", FIELD(arena_size), RANDOM, 0, 1);
	add_case("ring_bytes_requested", FIELD(ring_bytes_requested), RANDOM, 0, 1);
	add_case("ring_bytes", FIELD(ring_bytes), VALUE, 4097, 1);
	add_case("ring_bytes_pow2", FIELD(ring_bytes), VALUE, 1u << 20, 1);
	add_case("slot_size", FIELD(slot_size), VALUE, 64, 1);
	add_case("mode", FIELD(mode), VALUE, 9, 1);
	add_case("ring_count", FIELD(ring_count), ONES, 0, 1);
	add_case("ring_count_small", FIELD(ring_count), VALUE, 2, 1);
	add_case("thread_capacity", FIELD(thread_capacity), ONES, 0, 1);
	add_case("thread_capacity_small", FIELD(thread_capacity), VALUE, 2, 1);
	add_case("site_capacity", FIELD(site_capacity), RANDOM, 0, 1);
	add_case("string_capacity", FIELD(string_capacity), RANDOM, 0, 1);
	add_case("thread_table_offset", FIELD(thread_table_offset), RANDOM, 0, 1);
	add_case("site_table_offset", FIELD(site_table_offset), RANDOM, 0, 1);
	add_case("string_area_offset", FIELD(string_area_offset), RANDOM, 0, 1);
	add_case("ring_desc_offset", FIELD(ring_desc_offset), RANDOM, 0, 1);
	add_case("ring_area_offset", FIELD(ring_area_offset), RANDOM, 0, 1);
	add_case("all_offsets", offsetof(struct rt_arena_header, site_table_offset), 24, ZERO, 0,
		 1);
	add_case("program", FIELD(program), ONES, 0, 1);
	add_case("build_id_size", FIELD(build_id_size), ONES, 0, 1);
	add_case("clock_source", FIELD(clock_source), VALUE, 77, 1);
	add_case("counter_hz", FIELD(counter_hz), ZERO, 0, 1);
	add_case("start_counter", FIELD(start.counter), RANDOM, 0, 1);
	add_case("sync_mono", FIELD(sync.pair.mono_ns), RANDOM, 0, 1);
	add_case("threads_used", FIELD(threads_used), ZERO, 0, 1);
	add_case("sites_used", FIELD(sites_used), ZERO, 0, 1);
	add_case("rings_used", FIELD(rings_used), ZERO, 0, 1);
	add_case("strings_used", FIELD(strings_used), ZERO, 0, 1);
	add_case("lost_untracked", FIELD(lost_untracked), ONES, 0, 1);
	add_case("lost_no_site", FIELD(lost_no_site), ONES, 0, 1);
	add_case("end_reason", FIELD(end_reason), VALUE, 9, 1);
	add_case("reserved_tail", offsetof(struct rt_arena_header, reserved_tail) + 64, 64, RANDOM,
		 0, 1);

	/* the tables: what an entry's damage costs is its own records */
	add_case("thread_entries_1_2", h->thread_table_offset + te, 2 * te, RANDOM, 0, 0);
	add_case("thread_entry_3_head", h->thread_table_offset + 3 * te, 32, RANDOM, 0, 0);
	add_case("thread_table_page", h->thread_table_offset, 4096, ZERO, 0, 0);
	add_case("thread_entry_unused", h->thread_table_offset + 40 * te, te, RANDOM, 0, 0);
	add_case("site_entries_2_3", h->site_table_offset + 2 * se, 2 * se, RANDOM, 0, 0);
	add_case("site_entry_4_zero", h->site_table_offset + 4 * se, se, ZERO, 0, 0);
	add_case("site_entry_unused", h->site_table_offset + 100 * se, se, RANDOM, 0, 0);
	add_case("strings_zeroed", h->string_area_offset + 20, 16, ZERO, 0, 0);
	add_case("string_page", h->string_area_offset, 4096, ZERO, 0, 0);
	add_case("strings_unused", h->string_area_offset + 8192, 16, RANDOM, 0, 0);

	/* rings: descriptors, and slots in the middle of the window */
	uint64_t ring_slots = h->ring_bytes / RT_SLOT_SIZE;
	for (uint32_t r = 0; r < h->ring_count && r < 4; r++) {
		const struct rt_ring_desc *d =
		    (const struct rt_ring_desc *)(good + h->ring_desc_offset) + r;
		uint64_t ring = h->ring_area_offset + (uint64_t)r * h->ring_bytes;
		char name[64];
		snprintf(name, sizeof(name), "ring_%u_descriptor", r);
		add_case(name, h->ring_desc_offset + r * de, de, r % 2 ? ZERO : RANDOM, 0, 0);
		if (d->head < 40)
			continue;
		/* ten slots well inside the window */
		uint64_t at = (d->head - 30) & (ring_slots - 1);
		snprintf(name, sizeof(name), "ring_%u_middle", r);
		add_case(name, ring + at * RT_SLOT_SIZE, 10 * RT_SLOT_SIZE, RANDOM, 0, 0);
	}
	add_case("ring_2_page_zeroed", h->ring_area_offset + 2 * h->ring_bytes + 4096, 4096, ZERO,
		 0, 0);
	/* across the start of the ring that wrapped (and the end of the one before) */
	for (uint32_t r = 1; r < h->ring_count; r++) {
		const struct rt_ring_desc *d =
		    (const struct rt_ring_desc *)(good + h->ring_desc_offset) + r;
		if (d->head >= ring_slots) {
			add_case("across_rings", h->ring_area_offset + r * h->ring_bytes - 2048,
				 4096, RANDOM, 0, 0);
			break;
		}
	}
	add_case("cut_in_ring_3", h->ring_area_offset + 3 * h->ring_bytes + 8192, 0, CUT, 0, 0);
	/* refused: no header left at all */
	add_case("header_page_zeroed", 0, 4096, ZERO, 0, 0);
	cases[case_count - 1].refused = 1;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned char random_byte(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned char)(rng >> 24);
}

/* ---- one case ------------------------------------------------------------ */

static int region_overlaps(const struct range *regions, size_t n, const struct damage_case *c,
			   uint64_t size)
{
	uint64_t length = c->fill == CUT ? size + 1 - c->offset : c->length;
	for (size_t i = 0; i < n; i++)
		if (overlaps(regions[i].offset, regions[i].length ? regions[i].length : 1,
			     c->offset, length))
			return 1;
	return 0;
}

/* The "--- bytes A..B" headings of a hex dump. */
static size_t hexdump_regions(const char *path, struct range *regions, size_t max)
{
	size_t n, count = 0;
	char *text = (char *)read_file(path, &n);
	for (char *p = text; p && (p = strstr(p, "\n--- bytes ")) != NULL && count < max; p++) {
		unsigned long long a, b;
		if (sscanf(p, "\n--- bytes %llu..%llu", &a, &b) == 2)
			regions[count++] = (struct range){a, b - a};
	}
	free(text);
	return count;
}

static void run_case(const struct damage_case *c)
{
	char path[512], out[512], err[512];
	snprintf(path, sizeof(path), "%s/%s.arena", dir, c->name);
	snprintf(out, sizeof(out), "%s/out.txt", dir);
	snprintf(err, sizeof(err), "%s/err.txt", dir);
	unsigned char *copy = malloc(good_size);
	memcpy(copy, good, good_size);
	size_t size = good_size;
	if (c->fill == CUT) {
		size = c->offset;
	} else {
		for (uint64_t i = 0; i < c->length && c->offset + i < size; i++) {
			unsigned char byte = 0;
			switch (c->fill) {
			case RANDOM:
				byte = random_byte();
				break;
			case ONES:
				byte = 0xff;
				break;
			case VALUE:
				byte = i < 8 ? (unsigned char)(c->value >> (8 * i)) : 0;
				break;
			default:
				break;
			}
			copy[c->offset + i] = byte;
		}
	}
	if (size == good_size && memcmp(copy, good, size) == 0) {
		CHECK(0, "%s: the damage changes nothing: pick another place", c->name);
		free(copy);
		return;
	}
	write_file(path, copy, size);
	free(copy);

	/* every command: no crash, the status, one line on stderr */
	static const char *const commands[][3] = {
	    {"dump", NULL}, {"dump", "--hexdump"}, {"info", NULL}, {"info", "--json"}};
	for (size_t k = 0; k < sizeof(commands) / sizeof(commands[0]); k++) {
		char *argv[5] = {(char *)tool, (char *)commands[k][0], (char *)commands[k][1], path,
				 NULL};
		if (!commands[k][1]) {
			argv[2] = path;
			argv[3] = NULL;
		}
		int status = run(argv, out, err, NULL);
		CHECK(status == (c->refused ? 2 : 3), "%s: %s %s: exit status %d", c->name,
		      commands[k][0], commands[k][1] ? commands[k][1] : "", status);
		CHECK(line_count(err) == 1, "%s: %s %s: %d lines on stderr", c->name,
		      commands[k][0], commands[k][1] ? commands[k][1] : "", line_count(err));
		if (!c->refused && k == 1) {
			struct range regions[4096];
			size_t n = hexdump_regions(out, regions, 4096);
			CHECK(region_overlaps(regions, n, c, size),
			      "%s: the hex dump shows no region over bytes %llu..%llu", c->name,
			      (unsigned long long)c->offset,
			      (unsigned long long)(c->offset + c->length));
		}
	}
	if (c->refused)
		return;

	struct dump_result *r = calloc(1, sizeof(*r));
	read_json(path, r, c->name, 0);
	CHECK(r->status == 3, "%s: dump --json: exit status %d", c->name, r->status);
	CHECK(region_overlaps(r->regions, r->region_count, c, size),
	      "%s: no damaged region over bytes %llu..%llu among %zu", c->name,
	      (unsigned long long)c->offset, (unsigned long long)(c->offset + c->length),
	      r->region_count);
	/* every event whose bytes survived is there */
	size_t missing = 0, expected = 0;
	uint64_t length = c->fill == CUT ? UINT64_MAX - c->offset : c->length;
	for (size_t i = 0; i < baseline_count; i++) {
		const struct baseline_event *b = &baseline[i];
		int hit = 0;
		for (int d = 0; d < b->dep_count && !c->header; d++)
			hit |= overlaps(b->deps[d].offset, b->deps[d].length, c->offset, length);
		if (hit)
			continue;
		expected++;
		if (!b->shown) {
			if (missing++ < 5)
				fprintf(stderr, "  %s: not shown, though its bytes survived: %s\n",
					c->name, b->key);
		}
	}
	CHECK(missing == 0, "%s: %zu of %zu events whose bytes survived are not shown", c->name,
	      missing, expected);
	printf("%-24s %5zu events shown, %5zu expected at least, %3zu damaged regions\n", c->name,
	       r->events, expected, r->region_count);
	free(r);
}

int main(int argc, char **argv)
{
	const char *keep = NULL;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--tool") == 0 && i + 1 < argc)
			tool = argv[++i];
		else if (strcmp(argv[i], "--victim") == 0 && i + 1 < argc)
			victim = argv[++i];
		else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
			keep = argv[++i];
		else {
			fprintf(stderr,
				"usage: damaged --tool RINGTRACE --victim VICTIM [--keep DIR]\n");
			return 2;
		}
	}
	if (!tool || !victim) {
		fprintf(stderr, "usage: damaged --tool RINGTRACE --victim VICTIM [--keep DIR]\n");
		return 2;
	}
	if (keep) {
		snprintf(dir, sizeof(dir), "%s", keep);
		mkdir(dir, 0700);
	} else {
		snprintf(dir, sizeof(dir), "/tmp/ringtrace-damaged.XXXXXX");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			return 2;
		}
	}

	/* the victim's arena, and what it says it traced */
	char arena[512], log[512], out[512], err[512], env_arena[600];
	snprintf(arena, sizeof(arena), "%s/good.arena", dir);
	snprintf(log, sizeof(log), "%s/recorded.txt", dir);
	snprintf(out, sizeof(out), "%s/victim.out", dir);
	snprintf(err, sizeof(err), "%s/victim.err", dir);
	snprintf(env_arena, sizeof(env_arena), "RINGTRACE_ARENA=%s", arena);
	unlink(arena);
	char *venv[] = {env_arena, "RINGTRACE_RINGS=4", "RINGTRACE_BUFFER=64K",
			"RINGTRACE_CRASH_EVENTS=0", NULL};
	char *vargv[] = {(char *)victim, log, NULL};
	int status = run(vargv, out, err, venv);
	if (status != 0 || load_recorded(log) != 0 || !(good = read_file(arena, &good_size))) {
		fprintf(stderr, "damaged: the victim failed (status %d); see %s\n", status, err);
		return 1;
	}
	gh = (const struct rt_arena_header *)good;

	/* the undamaged arena: status 0, recorded events only, each placed in the file */
	struct dump_result *r = calloc(1, sizeof(*r));
	read_json(arena, r, "undamaged", 1);
	CHECK(r->status == 0, "undamaged: dump --json exit status %d", r->status);
	CHECK(r->region_count == 0, "undamaged: %zu damaged regions", r->region_count);
	CHECK(baseline_count > 2000, "undamaged: only %zu events", baseline_count);
	printf("undamaged: %zu events recorded, %zu shown (the rest overwritten)\n", recorded_count,
	       baseline_count);
	free(r);

	plan_cases();
	for (size_t i = 0; i < case_count; i++)
		run_case(&cases[i]);

	printf("%d passed, %d failed (%zu cases)\n", passed, failed, case_count);
	if (!keep && failed == 0) {
		char command[600];
		snprintf(command, sizeof(command), "rm -rf '%s'", dir);
		if (system(command) != 0)
			fprintf(stderr, "damaged: could not remove %s\n", dir);
	} else {
		printf("files kept in %s\n", dir);
	}
	return failed ? 1 : 0;
}
