/*
 * metadata_copies.c - the copies of the metadata a trace file keeps, and
 * what the reader shows when none survives (docs/FORMAT.md, "Copies of the
 * metadata").
 *
 *   metadata_copies TOOL PROGRAM DIR
 *
 * Records PROGRAM (tests/record/record_program.c: 4 threads of 50000
 * events, a file of several MiB) with `TOOL record` into a directory of
 * its own in DIR, finds its
 * blocks with rt_block_check and checks that SOURCE, THREADS and SITES come
 * again every few MiB.  Then, on copies of the file (and all of it again
 * for the file `TOOL recover` writes of the recording, which keeps copies
 * the same way):
 *
 *  head:    the head's metadata (every metadata block before the first
 *           SLOTS block) damaged: every event of the clean dump is shown
 *           with its real thread, site and time (from a later copy), none
 *           marked, and check says the file is damaged (exit 1);
 *  sites:   every SITES block damaged: every event is still shown, marked
 *           "metadata":"lost" with its raw site id and no tag, its raw words
 *           the clean event's arguments; summary counts them all as events
 *           (and as events of unknown sites), none lost; check exit 1;
 *  threads: every THREADS and SOURCE block damaged: every event is shown
 *           with tid 0 and its ring, its raw counter, and its real site.
 *
 * Exit 0 when all holds, 1 with a line per failure otherwise.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "format/trace_block.h"
#include "ringtrace/format.h"

static int failures;

#define FAIL(...)                                                                                  \
	do {                                                                                       \
		if (failures++ < 20) {                                                             \
			fprintf(stderr, "FAIL: ");                                                 \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)

/* ---- the file's blocks ---- */

struct file {
	unsigned char *bytes;
	size_t size;
};

static int load(struct file *f, const char *path)
{
	FILE *in = fopen(path, "rb");
	if (!in)
		return -1;
	fseek(in, 0, SEEK_END);
	f->size = (size_t)ftell(in);
	fseek(in, 0, SEEK_SET);
	f->bytes = malloc(f->size + 1);
	size_t got = fread(f->bytes, 1, f->size, in);
	fclose(in);
	return got == f->size ? 0 : -1;
}

static int save(const struct file *f, const char *path)
{
	FILE *out = fopen(path, "wb");
	if (!out)
		return -1;
	size_t put = fwrite(f->bytes, 1, f->size, out);
	return fclose(out) == 0 && put == f->size ? 0 : -1;
}

/*
 * Visit every good block: fn(offset, header) returns 1 to have the block
 * damaged (a payload byte flipped: its checksum fails) in copy.
 */
typedef int (*visit_fn)(uint64_t offset, const struct rt_block_header *h, void *context);

static unsigned walk(const struct file *f, struct file *copy, visit_fn fn, void *context)
{
	unsigned damaged = 0;
	uint64_t at = 0;
	while (at + RT_BLOCK_HEADER_SIZE <= f->size) {
		struct rt_block_header h;
		if (rt_block_check(f->bytes + at, f->size - at, &h) != RT_BLOCK_OK) {
			at += RT_BLOCK_ALIGN;
			continue;
		}
		if (fn(at, &h, context) && copy) {
			copy->bytes[at + RT_BLOCK_HEADER_SIZE] ^= 0xff;
			damaged++;
		}
		at += h.size;
	}
	return damaged;
}

static int is_metadata(uint8_t type)
{
	return type == RT_BLOCK_SOURCE || type == RT_BLOCK_THREADS || type == RT_BLOCK_SITES;
}

struct copies {
	uint64_t sites_at[256];
	unsigned sites, sources, threads;
	int seen_slots;
	unsigned head; /* metadata blocks before the first SLOTS block */
};

static int count_copies(uint64_t offset, const struct rt_block_header *h, void *context)
{
	struct copies *c = context;
	if (h->type == RT_BLOCK_SLOTS || h->type == RT_BLOCK_PACKED)
		c->seen_slots = 1;
	if (is_metadata(h->type) && !c->seen_slots)
		c->head++;
	if (h->type == RT_BLOCK_SITES && c->sites < 256)
		c->sites_at[c->sites++] = offset;
	c->sources += h->type == RT_BLOCK_SOURCE;
	c->threads += h->type == RT_BLOCK_THREADS;
	return 0;
}

static int head_metadata(uint64_t offset, const struct rt_block_header *h, void *context)
{
	(void)offset;
	int *seen_slots = context;
	if (h->type == RT_BLOCK_SLOTS || h->type == RT_BLOCK_PACKED)
		*seen_slots = 1;
	return !*seen_slots && is_metadata(h->type);
}

static int every_sites(uint64_t offset, const struct rt_block_header *h, void *context)
{
	(void)offset;
	(void)context;
	return h->type == RT_BLOCK_SITES;
}

static int every_threads_and_source(uint64_t offset, const struct rt_block_header *h, void *context)
{
	(void)offset;
	(void)context;
	return h->type == RT_BLOCK_THREADS || h->type == RT_BLOCK_SOURCE;
}

/* ---- dumps ---- */

struct event {
	int64_t tid, ts, ring, site_id;
	uint64_t seq;
	int has_ts, raw_ts, marked, has_ring, has_site_id;
	char *tag;  /* NULL: none shown */
	char *args; /* the array's text */
	int seen;
};

struct dump {
	struct event *events;
	size_t count, cap;
	int status;
};

static int field_i64(const char *line, const char *name, int64_t *v)
{
	const char *p = strstr(line, name);
	if (!p)
		return 0;
	*v = strtoll(p + strlen(name), NULL, 10);
	return 1;
}

static char *between(const char *line, const char *open, const char *close)
{
	const char *p = strstr(line, open);
	if (!p)
		return NULL;
	p += strlen(open);
	const char *e = strstr(p, close);
	return e ? strndup(p, (size_t)(e - p)) : NULL;
}

/* Run a command, its stdout into a string; *status its exit status. */
static char *run(const char *command, int *status)
{
	FILE *p = popen(command, "r");
	if (!p) {
		*status = -1;
		return strdup("");
	}
	size_t cap = 1 << 20, n = 0;
	char *out = malloc(cap);
	size_t got;
	while ((got = fread(out + n, 1, cap - n - 1, p)) > 0) {
		n += got;
		if (cap - n < 4096)
			out = realloc(out, cap *= 2);
	}
	out[n] = 0;
	int w = pclose(p);
	*status = WIFEXITED(w) ? WEXITSTATUS(w) : 128 + WTERMSIG(w);
	return out;
}

static void read_dump(struct dump *d, const char *tool, const char *path)
{
	char *command;
	if (asprintf(&command, "%s dump --json %s 2>/dev/null", tool, path) < 0)
		abort();
	char *out = run(command, &d->status);
	free(command);
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		if (strncmp(line, "{\"kind\":\"trace\"", 15) != 0)
			continue;
		struct event e = {0};
		int64_t v = 0;
		field_i64(line, "\"tid\":", &e.tid);
		field_i64(line, "\"seq\":", &v);
		e.seq = (uint64_t)v;
		e.has_ts = field_i64(line, "\"ts_ns\":", &e.ts);
		e.raw_ts = field_i64(line, "\"ts_raw\":", &v);
		e.has_ring = field_i64(line, "\"ring\":", &e.ring);
		e.has_site_id = field_i64(line, "\"site_id\":", &e.site_id);
		e.marked = strstr(line, "\"metadata\":\"lost\"") != NULL;
		e.tag = between(line, "\"tag\":\"", "\"");
		e.args = between(line, "\"args\":[", "]");
		if (d->count == d->cap)
			d->events = realloc(d->events, (d->cap = d->cap ? 2 * d->cap : 4096) *
							   sizeof(*d->events));
		d->events[d->count++] = e;
	}
	free(out);
}

static void free_dump(struct dump *d)
{
	for (size_t i = 0; i < d->count; i++) {
		free(d->events[i].tag);
		free(d->events[i].args);
	}
	free(d->events);
	memset(d, 0, sizeof(*d));
}

/* The events in (seq, thread) order: a record's place, whatever metadata is lost. */
static int by_place(const void *a, const void *b)
{
	const struct event *x = a, *y = b;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The clean event of thread tid (0: any) and seq whose arguments are args (raw: words). */
static struct event *find(struct dump *clean, const struct event *d, int raw_args)
{
	size_t lo = 0, hi = clean->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (clean->events[mid].seq < d->seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < clean->count && clean->events[i].seq == d->seq; i++) {
		struct event *c = &clean->events[i];
		if ((d->tid && c->tid != d->tid) || c->seen)
			continue;
		if (!raw_args) {
			if (d->args && c->args && !strcmp(d->args, c->args))
				return c;
			continue;
		}
		/* raw words: 32 bits for the first four arguments, 64 for the last two */
		const char *x = c->args, *y = d->args;
		int same = x && y;
		for (unsigned k = 0; same && *x; k++) {
			char *xe, *ye;
			uint64_t want =
			    *x == '-' ? (uint64_t)strtoll(x, &xe, 10) : strtoull(x, &xe, 10);
			if (k < 4)
				want &= 0xffffffffu;
			same = *y && strtoull(y, &ye, 10) == want;
			x = *xe == ',' ? xe + 1 : xe;
			y = same && *ye == ',' ? ye + 1 : ye;
		}
		if (same)
			return c;
	}
	return NULL;
}

static int64_t tolerance(int64_t ts)
{
	return 1000 + (ts < 0 ? -ts : ts) / 1000;
}

static int tool_status(const char *tool, const char *command, const char *path)
{
	char *line;
	if (asprintf(&line, "%s %s %s >/dev/null 2>&1", tool, command, path) < 0)
		abort();
	int status;
	free(run(line, &status));
	free(line);
	return status;
}

/* The copies in the clean file at clean_path, and the file with each kind of them damaged. */
static void check_file(const char *tool, const char *clean_path, const char *damaged_path)
{
	char *command;
	int status;
	struct file f = {0};
	if (load(&f, clean_path) != 0) {
		FAIL("%s: cannot be read", clean_path);
		return;
	}
	printf("%s:\n", clean_path);

	/* the copies: the head's, and again every few MiB */
	struct copies c = {0};
	walk(&f, NULL, count_copies, &c);
	printf("%zu bytes: %u SITES, %u THREADS, %u SOURCE blocks, %u in the head\n", f.size,
	       c.sites, c.threads, c.sources, c.head);
	if (f.size < (4u << 20))
		FAIL("the recording is only %zu bytes: too short to hold copies", f.size);
	if (c.sites < 3 || c.sources < 3 || c.threads < 3)
		FAIL("too few copies: %u SITES, %u SOURCE, %u THREADS", c.sites, c.sources,
		     c.threads);
	for (unsigned i = 1; i < c.sites; i++)
		if (c.sites_at[i] - c.sites_at[i - 1] > (4u << 20))
			FAIL("SITES at %" PRIu64 " and %" PRIu64 ": more than 4 MiB apart",
			     c.sites_at[i - 1], c.sites_at[i]);
	if (f.size - c.sites_at[c.sites - 1] > (4u << 20))
		FAIL("no SITES in the last %" PRIu64 " bytes", f.size - c.sites_at[c.sites - 1]);

	struct dump clean = {0};
	read_dump(&clean, tool, clean_path);
	if (clean.status != 0 || clean.count != 200001)
		FAIL("clean dump: status %d, %zu events (want 200001)", clean.status, clean.count);
	qsort(clean.events, clean.count, sizeof(*clean.events), by_place);

	static const struct {
		const char *name;
		visit_fn fn;
	} cases[] = {
	    {"head", head_metadata},
	    {"sites", every_sites},
	    {"threads", every_threads_and_source},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const char *name = cases[k].name;
		struct file copy = {malloc(f.size + 1), f.size};
		memcpy(copy.bytes, f.bytes, f.size);
		int seen_slots = 0;
		unsigned n = walk(&f, &copy, cases[k].fn, &seen_slots);
		if (n == 0 || save(&copy, damaged_path) != 0)
			FAIL("%s: nothing damaged (%u blocks)", name, n);
		free(copy.bytes);
		if (k == 0 && n != c.head)
			FAIL("head: %u of %u head blocks damaged", n, c.head);

		for (size_t i = 0; i < clean.count; i++)
			clean.events[i].seen = 0;
		struct dump d = {0};
		read_dump(&d, tool, damaged_path);
		if (d.status != 3)
			FAIL("%s: dump exit status %d, want 3 (damaged)", name, d.status);
		if (d.count != clean.count)
			FAIL("%s: %zu events shown, clean %zu", name, d.count, clean.count);
		size_t matched = 0;
		for (size_t i = 0; i < d.count; i++) {
			struct event *e = &d.events[i];
			int sites_lost = k == 1, threads_lost = k == 2;
			struct event *m = find(&clean, e, sites_lost);
			if (!m) {
				FAIL("%s: event tid %" PRId64 " seq %" PRIu64
				     " args [%s] is not in the "
				     "clean dump",
				     name, e->tid, e->seq, e->args ? e->args : "");
				continue;
			}
			m->seen = 1;
			matched++;
			if (e->marked != (sites_lost || threads_lost))
				FAIL("%s: event seq %" PRIu64 " %s marked", name, e->seq,
				     e->marked ? "is" : "is not");
			if (sites_lost ? (e->tag || !e->has_site_id)
				       : (!e->tag || !m->tag || strcmp(e->tag, m->tag)))
				FAIL("%s: event seq %" PRIu64 " tag %s, clean %s, site id %s", name,
				     e->seq, e->tag ? e->tag : "none", m->tag,
				     e->has_site_id ? "shown" : "not shown");
			if (threads_lost ? (e->tid != 0 || !e->has_ring || !e->raw_ts || e->has_ts)
					 : (e->tid != m->tid || e->has_ring || !e->has_ts))
				FAIL("%s: event seq %" PRIu64 " tid %" PRId64 " (clean %" PRId64
				     ")%s%s",
				     name, e->seq, e->tid, m->tid,
				     e->has_ring ? " with a ring" : "",
				     e->raw_ts ? " raw time" : "");
			if (!threads_lost && llabs(e->ts - m->ts) > tolerance(m->ts))
				FAIL("%s: event seq %" PRIu64 " at %" PRId64 " ns, clean %" PRId64,
				     name, e->seq, e->ts, m->ts);
		}
		printf("%s: %u blocks damaged, %zu of %zu events shown and matched\n", name, n,
		       matched, clean.count);
		free_dump(&d);

		/*
		 * The text dump marks them too: every event line, or none (and the
		 * last event of each of the 5 threads, when the threads are known).
		 */
		static const char *const marks[] = {"metadata lost", "Sec) : site #",
						    "thread metadata lost)] : "};
		static const char *const raw_marks[] = {"[raw ", "[raw ", "[raw "};
		long want[][2] = {
		    {0, 0}, {(long)clean.count + 5, 0}, {(long)clean.count, (long)clean.count}};
		for (int m = 0; m < 2; m++) {
			if (asprintf(&command, "%s dump %s 2>/dev/null | grep -c -F '%s'", tool,
				     damaged_path, m ? raw_marks[k] : marks[k]) < 0)
				abort();
			char *count = run(command, &status);
			free(command);
			if (strtol(count, NULL, 10) != want[k][m])
				FAIL("%s: %ld text lines with '%s', want %ld", name,
				     strtol(count, NULL, 10), m ? raw_marks[k] : marks[k],
				     want[k][m]);
			free(count);
		}
		if (tool_status(tool, "check", damaged_path) != 1)
			FAIL("%s: check does not say the file is damaged", name);
		if (asprintf(&command, "%s summary --json %s 2>/dev/null", tool, damaged_path) < 0)
			abort();
		char *summary = run(command, &status);
		free(command);
		int64_t events = -1, damaged = -1, unknown = -1;
		field_i64(summary, "\"events\":", &events);
		field_i64(summary, "\"damaged\":", &damaged);
		field_i64(summary, "\"unknown\":", &unknown);
		if (events != (int64_t)clean.count || damaged != 0 ||
		    unknown != (k == 1 ? (int64_t)clean.count : 0))
			FAIL("%s: summary says %" PRId64 " events, %" PRId64 " damaged, %" PRId64
			     " of unknown sites",
			     name, events, damaged, unknown);
		/* no clock, no nanoseconds: the span is told in raw counter values */
		if ((strstr(summary, "\"clock\":\"lost\"") != NULL) != (k == 2) ||
		    (strstr(summary, "\"first_ns\":") != NULL) == (k == 2))
			FAIL("%s: summary's span: %s", name, summary);
		free(summary);
	}
	free_dump(&clean);
	free(f.bytes);
	remove(damaged_path);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: metadata_copies TOOL PROGRAM DIR\n");
		return 2;
	}
	const char *tool = argv[1], *program = argv[2];
	/*
	 * Copies come by the bytes written: the slots as the rings hold them make
	 * a file of several MiB from this recording, PACKED blocks a tenth of it.
	 */
	setenv("RINGTRACE_PACK", "0", 1);
	char dir[4096], clean_path[4200], recovered_path[4200], damaged_path[4200];
	snprintf(dir, sizeof(dir), "%s/metadata_copies.XXXXXX", argv[3]);
	if (!mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	snprintf(clean_path, sizeof(clean_path), "%s/copies.rt", dir);
	snprintf(recovered_path, sizeof(recovered_path), "%s/recovered.rt", dir);
	snprintf(damaged_path, sizeof(damaged_path), "%s/damaged.rt", dir);

	char *command;
	int status;
	if (asprintf(
		&command,
		"env -u RINGTRACE_METADATA_COPY_BYTES %s record -q -o %s -- %s threads 4 50000",
		tool, clean_path, program) < 0)
		abort();
	free(run(command, &status));
	free(command);
	if (status != 0) {
		fprintf(stderr, "FAIL: recording failed (status %d)\n", status);
		return 1;
	}
	check_file(tool, clean_path, damaged_path);
	/* recover writes its file through the same writer, with the same copies */
	if (asprintf(&command, "%s recover -q %s %s", tool, clean_path, recovered_path) < 0)
		abort();
	free(run(command, &status));
	free(command);
	if (status != 0)
		FAIL("recover exit status %d", status);
	else
		check_file(tool, recovered_path, damaged_path);
	remove(recovered_path);
	remove(clean_path);
	rmdir(dir);
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
