/*
 * test_modules.c - the module map end to end.  Runs modules_target (which
 * loads plugin A, unloads it, loads plugin B) into an arena and under
 * `ringtrace record`, then checks in both what the readers give: the
 * program, libc, libringtrace, A with its load and unload times, and B;
 * build-ids as `readelf -n` prints them; rt_reader_module_at() naming A
 * while it was loaded and B after.  `ringtrace cut` and `ringtrace
 * recover` of each must keep the same map, entry for entry.  Then damages
 * module entries of the arena: each is reported, and never shown.
 *
 * usage: test_modules TARGET PLUGIN_A PLUGIN_B RINGTRACE_TOOL
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/check.h"
#include "format/arena_layout.h"
#include "read/arena_reader.h"
#include "read/trace_set.h"

struct seen {
	uint64_t address, counter;
};
static struct seen seen_a, seen_b;
static char target[PATH_MAX], plugin_a[PATH_MAX], plugin_b[PATH_MAX];
static int same_address;

static void run(const char *command, const char *out)
{
	char line[256];
	FILE *p = popen(command, "r");
	CHECK(p != NULL);
	FILE *o = fopen(out, "w");
	CHECK(o != NULL);
	while (fgets(line, sizeof(line), p))
		fputs(line, o);
	fclose(o);
	CHECK_EQ(pclose(p), 0);
}

static void read_seen(const char *out)
{
	FILE *f = fopen(out, "r");
	CHECK(f != NULL);
	char name[8];
	void *address;
	uint64_t counter;
	int value;
	while (fscanf(f, "%7s %p %" SCNu64 " %d", name, &address, &counter, &value) == 4) {
		struct seen *s = name[0] == 'A' ? &seen_a : &seen_b;
		s->address = (uint64_t)(uintptr_t)address;
		s->counter = counter;
		CHECK_EQ(value, name[0] == 'A' ? 1 : 2);
	}
	fclose(f);
	CHECK(seen_a.address && seen_b.address);
}

/* The build-id `readelf -n` prints for path, as hex. */
static void readelf_build_id(const char *path, char *hex, size_t size)
{
	char command[PATH_MAX + 64], line[512];
	snprintf(command, sizeof(command), "readelf -n '%s'", path);
	FILE *p = popen(command, "r");
	CHECK(p != NULL);
	hex[0] = 0;
	while (fgets(line, sizeof(line), p)) {
		const char *at = strstr(line, "Build ID: ");
		if (at && sscanf(at + 10, "%127s", hex) == 1)
			break;
	}
	pclose(p);
	CHECK(hex[0] != 0 && strlen(hex) < size);
}

static void check_build_id(const struct rt_reader_module *m)
{
	char want[129], got[129] = "";
	readelf_build_id(m->path, want, sizeof(want));
	for (uint32_t i = 0; i < m->build_id_size; i++)
		snprintf(got + 2 * i, 3, "%02x", m->build_id[i]);
	if (strcmp(want, got) != 0)
		fprintf(stderr, "%s: build-id %s, readelf says %s\n", m->path, got, want);
	CHECK(strcmp(want, got) == 0);
}

static const struct rt_reader_module *find(const struct rt_reader *rd, const char *path,
					   const char *part)
{
	const struct rt_reader_module *found = NULL;
	for (uint32_t i = 0; i < rd->modules.count; i++) {
		const struct rt_reader_module *m = &rd->modules.items[i];
		if ((path && strcmp(m->path, path) == 0) || (part && strstr(m->path, part))) {
			CHECK(found == NULL); /* each object once */
			found = m;
		}
	}
	return found;
}

static void check_modules(const struct rt_reader *rd, const char *what)
{
	printf("%s: %u modules\n", what, rd->modules.count);
	const struct rt_reader_module *program = find(rd, target, NULL);
	const struct rt_reader_module *libc = find(rd, NULL, "/libc.so");
	const struct rt_reader_module *lib = find(rd, NULL, "/libringtrace.so");
	const struct rt_reader_module *a = find(rd, plugin_a, NULL);
	const struct rt_reader_module *b = find(rd, plugin_b, NULL);
	if (!CHECK(program && libc && lib && a && b))
		return;
	CHECK(program->flags & RT_MODULE_F_MAIN);
	CHECK(program->flags & RT_MODULE_F_AT_START);
	CHECK(libc->flags & RT_MODULE_F_AT_START);
	CHECK(lib->flags & RT_MODULE_F_AT_START);
	CHECK(!(a->flags & RT_MODULE_F_AT_START) && !(b->flags & RT_MODULE_F_AT_START));
	CHECK_EQ(program->load_counter, rd->header.start.counter);
	CHECK_EQ(program->unload_counter, 0);
	CHECK_EQ(b->unload_counter, 0);
	/* times in order: start, A loaded, A seen, A unloaded, B loaded, B seen */
	CHECK(rd->header.start.counter <= a->load_counter);
	CHECK(a->load_counter <= seen_a.counter);
	CHECK(seen_a.counter < a->unload_counter);
	CHECK(a->unload_counter <= b->load_counter);
	CHECK(b->load_counter <= seen_b.counter);
	for (const struct rt_reader_module *m = program; m; m = m == program ? libc
								: m == libc  ? lib
								: m == lib   ? a
								: m == a     ? b
									     : NULL)
		check_build_id(m);
	/* which module held an address when */
	CHECK(rt_reader_module_at(rd, seen_a.address, seen_a.counter) == a);
	CHECK(rt_reader_module_at(rd, seen_b.address, seen_b.counter) == b);
	CHECK(rt_reader_module_at(rd, seen_a.address, a->load_counter - 1) == NULL ||
	      rt_reader_module_at(rd, seen_a.address, a->load_counter - 1) != a);
	if (same_address) {
		CHECK(a->low == b->low && a->high == b->high);
		CHECK(rt_reader_module_at(rd, seen_a.address, seen_b.counter) == b);
	} else {
		CHECK(rt_reader_module_at(rd, seen_a.address, seen_b.counter) != a);
	}
}

/* The arena with one module entry's bytes changed: reported, and that entry never shown. */
static void check_damage(const unsigned char *file, size_t size, const struct rt_reader *good,
			 uint32_t index, size_t at, size_t bytes, int in_path)
{
	unsigned char *copy = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
	CHECK(copy != NULL);
	memcpy(copy, file, size);
	const struct rt_arena_header *h = &good->header;
	const struct rt_module_entry *e =
	    (const struct rt_module_entry *)(file + rt_layout_module_offset(h, index));
	uint64_t offset = in_path ? h->string_area_offset + e->path_offset + at
				  : rt_layout_module_offset(h, index) + at;
	for (size_t i = 0; i < bytes; i++)
		copy[offset + i] = in_path ? 0 : (unsigned char)(copy[offset + i] ^ 0xa5);
	struct rt_reader *rd;
	struct rt_read_error error;
	CHECK_EQ(rt_reader_open_memory(copy, size, "damaged", &rd, &error), 0);
	int reported = 0;
	for (size_t i = 0; i < rd->damage.count; i++) {
		const struct rt_damage *d = &rd->damage.items[i];
		if (d->part == RT_DAMAGE_MODULE && d->index == index && d->offset <= offset &&
		    offset < d->offset + d->length)
			reported = 1;
	}
	CHECK(reported);
	CHECK(rt_reader_damaged(rd));
	CHECK_EQ(rd->modules.count, good->modules.count - 1);
	for (uint32_t i = 0; i < rd->modules.count; i++)
		CHECK(rd->modules.items[i].index != index);
	rt_reader_close(rd);
	free(copy);
}

/*
 * `ringtrace info` on input lists plugin A with its build-id and both its
 * times, and B after it: in text, and in JSON (one module object per entry).
 */
static void check_info(const char *tool, const char *input, const char *out)
{
	char command[4 * PATH_MAX], id_a[129], id_b[129]; /* readelf_build_id writes up to 128 */
	readelf_build_id(plugin_a, id_a, sizeof(id_a));
	readelf_build_id(plugin_b, id_b, sizeof(id_b));
	snprintf(command, sizeof(command), "'%s' info '%s'", tool, input);
	run(command, out);
	FILE *f = fopen(out, "r");
	CHECK(f != NULL);
	char line[8192];
	int a_line = 0, b_line = 0, n = 0;
	while (f && fgets(line, sizeof(line), f)) {
		n++;
		if (strstr(line, plugin_a) && strstr(line, id_a)) {
			a_line = n;
			/* loaded and unloaded: two times, neither "at start" nor "-" */
			CHECK(strstr(line, "at start") == NULL);
			CHECK(strstr(line, "  -  ") == NULL);
		}
		if (strstr(line, plugin_b) && strstr(line, id_b))
			b_line = n;
	}
	if (f)
		fclose(f);
	CHECK(a_line > 0 && b_line > a_line);
	snprintf(command, sizeof(command),
		 "'%s' info --json '%s' | /usr/bin/python3 -c 'import json, sys\n"
		 "d = json.load(sys.stdin)\n"
		 "ms = d[\"modules\"] if \"modules\" in d else "
		 "[m for p in d[\"processes\"] for m in p.get(\"modules\", [])]\n"
		 "a = [m for m in ms if m[\"path\"] == sys.argv[1]]\n"
		 "assert len(a) == 1 and a[0][\"build_id\"] == sys.argv[2], a\n"
		 "assert a[0][\"loaded_ns\"] is not None and a[0][\"unloaded_ns\"] > "
		 "a[0][\"loaded_ns\"]\n"
		 "assert any(m[\"main\"] for m in ms)' '%s' '%s'",
		 tool, input, plugin_a, id_a);
	CHECK_EQ(system(command), 0);
}

/* Every module of want in got: same index, path, flags, range, bias, times and build-id. */
static void check_same_modules(const struct rt_reader *want, const struct rt_reader *got)
{
	CHECK_EQ(got->modules.count, want->modules.count);
	for (uint32_t i = 0; i < want->modules.count && i < got->modules.count; i++) {
		const struct rt_reader_module *w = &want->modules.items[i],
					      *g = &got->modules.items[i];
		CHECK_EQ(g->index, w->index);
		CHECK(strcmp(g->path, w->path) == 0);
		CHECK_EQ(g->flags, w->flags);
		CHECK(g->base == w->base && g->low == w->low && g->high == w->high);
		CHECK_EQ(g->load_counter, w->load_counter);
		CHECK_EQ(g->unload_counter, w->unload_counter);
		CHECK_EQ(g->build_id_size, w->build_id_size);
		CHECK(memcmp(g->build_id, w->build_id, sizeof(g->build_id)) == 0);
	}
}

/*
 * `ringtrace CUT_ARGS input output` (cut or recover) writes a file whose
 * process has input's module map, entry for entry (rd: input read), which
 * then passes every check input passed.
 */
static void check_kept(const char *tool, const char *cut_args, const char *input,
		       const char *output, const struct rt_reader *rd, const char *out)
{
	char command[4 * PATH_MAX];
	snprintf(command, sizeof(command), "'%s' %s '%s' '%s'", tool, cut_args, input, output);
	run(command, out);
	struct rt_trace_set *set;
	char message[512];
	char *paths[] = {(char *)output};
	if (!CHECK(rt_trace_set_open(paths, 1, &set, message, sizeof(message)) == 0)) {
		fprintf(stderr, "%s: %s\n", output, message);
		return;
	}
	const struct rt_reader *kept = NULL;
	for (size_t i = 0; i < set->source_count; i++)
		if (set->sources[i].has_header)
			kept = set->sources[i].reader;
	if (CHECK(kept != NULL)) {
		char what[64];
		snprintf(what, sizeof(what), "%s output", cut_args);
		check_same_modules(rd, kept);
		check_modules(kept, what);
	}
	check_info(tool, output, out);
	rt_trace_set_close(set);
}

int main(int argc, char **argv)
{
	CHECK_EQ(argc, 5);
	CHECK(realpath(argv[1], target) && realpath(argv[2], plugin_a) &&
	      realpath(argv[3], plugin_b));
	char dir[] = "/tmp/rt_modules_XXXXXX", command[6 * PATH_MAX], out[PATH_MAX],
	     arena[PATH_MAX], trace[PATH_MAX], cut[PATH_MAX];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(arena, sizeof(arena), "%s/m.arena", dir);
	snprintf(trace, sizeof(trace), "%s/m.rt", dir);

	/* the arena */
	snprintf(command, sizeof(command), "RINGTRACE_ARENA='%s' '%s' '%s' '%s'", arena, target,
		 plugin_a, plugin_b);
	run(command, out);
	read_seen(out);
	same_address = seen_a.address == seen_b.address;
	printf("plugin A at %#" PRIx64 ", B at %#" PRIx64 ": %s\n", seen_a.address, seen_b.address,
	       same_address ? "the same address" : "the loader did not reuse A's addresses");
	struct rt_reader *rd;
	struct rt_read_error error;
	CHECK_EQ(rt_reader_open(arena, &rd, &error), 0);
	CHECK_EQ(rd->damage.count, 0);
	check_modules(rd, "arena");
	check_info(argv[4], arena, out);
	snprintf(cut, sizeof(cut), "%s/cut.rt", dir);
	check_kept(argv[4], "cut -q --from 0s", arena, cut, rd, out);
	snprintf(cut, sizeof(cut), "%s/recovered.rt", dir);
	check_kept(argv[4], "recover -q", arena, cut, rd, out);

	/* damage: valid, a reserved byte, the range, the path */
	const struct rt_reader_module *a = find(rd, plugin_a, NULL);
	check_damage(rd->file, rd->size, rd, a->index, offsetof(struct rt_module_entry, valid), 1,
		     0);
	check_damage(rd->file, rd->size, rd, a->index, offsetof(struct rt_module_entry, reserved),
		     1, 0);
	check_damage(rd->file, rd->size, rd, a->index, offsetof(struct rt_module_entry, high), 8,
		     0);
	check_damage(rd->file, rd->size, rd, a->index, 2, 1, 1);
	rt_reader_close(rd);

	/* a trace file */
	snprintf(command, sizeof(command), "'%s' record -o '%s' -- '%s' '%s' '%s'", argv[4], trace,
		 target, plugin_a, plugin_b);
	run(command, out);
	read_seen(out);
	same_address = seen_a.address == seen_b.address;
	struct rt_trace_set *set;
	char message[512];
	char *paths[] = {trace};
	CHECK_EQ(rt_trace_set_open(paths, 1, &set, message, sizeof(message)), 0);
	const struct rt_reader *traced = NULL;
	for (size_t i = 0; i < set->source_count; i++)
		if (set->sources[i].has_header)
			traced = set->sources[i].reader;
	CHECK(traced != NULL);
	check_modules(traced, "trace file");
	check_info(argv[4], trace, out);
	snprintf(cut, sizeof(cut), "%s/trace-cut.rt", dir);
	check_kept(argv[4], "cut -q --to 1h", trace, cut, traced, out);
	snprintf(cut, sizeof(cut), "%s/trace-recovered.rt", dir);
	check_kept(argv[4], "recover -q", trace, cut, traced, out);
	rt_trace_set_close(set);

	snprintf(command, sizeof(command), "rm -rf '%s'", dir);
	CHECK_EQ(system(command), 0);
	if (check_failure_count()) {
		fprintf(stderr, "modules: %d checks failed\n", check_failure_count());
		return 1;
	}
	printf("modules: ok\n");
	return 0;
}
