/*
 * trace_damage.c - recorded trace files damaged by `corrupt`, seed after
 * seed, read back by `ringtrace dump --json` (docs/FORMAT.md, "Trace files").
 *
 *   trace_damage TOOL SEEDS FIRST_SEED TARGET FILE...
 *
 * FILE... are read as one input (one file, or a rotated set); FILE number
 * TARGET (from 0) is the one damaged.  The clean dump must exit 0.  Then for
 * each seed, with the kinds of damage in turn, `corrupt` (corrupt.c, run in a
 * forked child) damages a copy of the target and the dump of the damaged
 * input must
 *
 *  (a) show no garbage: every "trace" event is one of the clean dump, with
 *      the same tid, seq, tag and arguments, and the same time to 0.1 %
 *      (ts_tolerance), and none twice (an event whose thread, site or
 *      clock metadata was lost, marked and shown with tid 0, its raw site
 *      id and words, or its raw counter, must still match a clean event by
 *      seq, arguments and whatever else it shows: same_args);
 *  (b) keep the loss bound: a clean event missing lies, in every copy the
 *      target holds of it, in a block that overlaps the damaged bytes or
 *      lies within 4 KiB of them (the block layout of the clean target,
 *      walked with rt_block_check, and its THREADS entries say where each
 *      (tid, seq) is);
 *  (c) exit 0 or 3, 3 whenever an event is missing, within the time limit
 *      (TRACE_DAMAGE_TIMEOUT seconds, default 20), without a sanitizer
 *      report on stderr;
 *  (d) lose nothing silently: when events are missing a "damaged" loss is
 *      reported, and the counts of the damaged losses cover the missing
 *      events (each took a record seq that is now a gap) - but for a file
 *      cut short, whose lost tail nothing can count, the dump must instead
 *      say that the file ends early.
 *
 * Every failure is one line naming the seed, kind and damaged range, so that
 * `corrupt TARGET OUT KIND SEED` reproduces it.  Exit status 0 when all
 * seeds passed, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "corrupt.h"
#include "format/trace_block.h"
#include "ringtrace/format.h"

#define NEAR 4096u
#define COPIES 4

static const char *kinds[] = {"omit", "insert", "overwrite", "truncate", "zero", "flip", "replay"};
#define KINDS (sizeof(kinds) / sizeof(kinds[0]))

struct event {
	int64_t tid;
	uint64_t seq;
	int64_t ts;
	char *key; /* tid, seq, ts, tag, args */
	int has_seq;
	/* metadata lost: no tag (the site id instead, raw words), tid 0, raw time */
	int marked, raw_args, raw_ts;
	char *tag, *args; /* NULL when absent */
	/* where the target holds it */
	unsigned copies;
	uint64_t at[COPIES], size[COPIES];
	int in_other; /* in no block of the target: a file not damaged holds it */
	unsigned seen;
};

struct dump {
	struct event *events;
	size_t count, cap;
	uint64_t lost;	       /* every loss count */
	uint64_t damaged_lost; /* counts of "damaged" losses */
	size_t damaged_lines;
	int status;	       /* exit status, or 128 + signal, or -1 timed out */
	struct event **by_seq; /* the clean dump's events by seq, once needed */
};

/* ---- running a command with a time limit ---- */

static volatile sig_atomic_t alarmed;
static void on_alarm(int sig)
{
	(void)sig;
	alarmed = 1;
}

/*
 * argv[0] is a program to start, or with in_child given, argv is handed to
 * in_child in the forked child instead (its return is the exit status).
 */
static int run(char *const argv[], const char *out, const char *err, unsigned seconds,
	       int (*in_child)(int, char **))
{
	/* the child flushes its streams: they must not hold what this process wrote */
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0)
		return -2;
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0)
			_exit(125);
		dup2(o, 1);
		dup2(e, 2);
		if (in_child) {
			int argc = 0;
			while (argv[argc])
				argc++;
			/*
			 * _exit: this process's exit handlers are not the child's to run
			 * (and a sanitizer build's leak check of the whole heap at each
			 * exit cost as much as starting corrupt did); what in_child
			 * wrote is flushed first
			 */
			int rc = in_child(argc, (char **)argv);
			fflush(NULL);
			_exit(rc);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	alarmed = 0;
	alarm(seconds);
	int status;
	while (waitpid(pid, &status, 0) < 0) {
		if (errno == EINTR && alarmed) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
	}
	alarm(0);
	if (alarmed)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- the dump ---- */

static int field_i64(const char *line, const char *name, int64_t *v)
{
	const char *p = strstr(line, name);
	if (!p)
		return 0;
	*v = strtoll(p + strlen(name), NULL, 10);
	return 1;
}

static void add_event(struct dump *d, const char *line)
{
	struct event e = {0};
	int64_t v;
	field_i64(line, "\"tid\":", &e.tid);
	e.has_seq = field_i64(line, "\"seq\":", &v);
	e.seq = e.has_seq ? (uint64_t)v : 0;
	field_i64(line, "\"ts_ns\":", &e.ts);
	const char *tag = strstr(line, "\"tag\":\"");
	const char *tag_end = tag ? strstr(tag + 7, "\",\"file\"") : NULL;
	const char *args = strstr(line, "\"args\":[");
	const char *args_end = args ? strchr(args, ']') : NULL;
	int tl = tag && tag_end ? (int)(tag_end - tag - 7) : -1;
	int al = args && args_end ? (int)(args_end - args - 8) : 0;
	if (asprintf(&e.key, "%" PRId64 "|%" PRIu64 "|%.*s|%.*s", e.tid, e.seq, tl < 0 ? 1 : tl,
		     tl < 0 ? "?" : tag + 7, al, args ? args + 8 : "") < 0)
		abort();
	e.raw_args = strstr(line, "\"site_id\":") != NULL;
	e.raw_ts = field_i64(line, "\"ts_raw\":", &v);
	e.marked = strstr(line, "\"metadata\":\"lost\"") != NULL;
	e.tag = tl < 0 ? NULL : strndup(tag + 7, (size_t)tl);
	e.args = strndup(args ? args + 8 : "", (size_t)al);
	if (d->count == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 4096;
		d->events = realloc(d->events, d->cap * sizeof(*d->events));
	}
	d->events[d->count++] = e;
}

static void read_dump(struct dump *d, const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "{\"kind\":\"trace\"", 15)) {
			add_event(d, line);
		} else if (!strncmp(line, "{\"kind\":\"lost\"", 14)) {
			int64_t n = 0;
			field_i64(line, "\"count\":", &n);
			/* a region's count repeats its threads' in_region losses */
			if (strstr(line, "\"offset\":"))
				n = 0;
			d->lost += (uint64_t)n;
			if (strstr(line, "\"reason\":\"damaged\"")) {
				d->damaged_lost += (uint64_t)n;
				d->damaged_lines++;
			}
		}
	}
	free(line);
	fclose(f);
}

static void free_dump(struct dump *d)
{
	for (size_t i = 0; i < d->count; i++) {
		free(d->events[i].key);
		free(d->events[i].tag);
		free(d->events[i].args);
	}
	free(d->by_seq);
	free(d->events);
	memset(d, 0, sizeof(*d));
}

static int by_time(const void *a, const void *b)
{
	const struct event *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* the clean event d shows, or NULL */
/*
 * How far an event's time may move: a file that lost its newest SOURCE block
 * converts counters with the calibration of an older one (the clock's
 * frequency measured over a shorter span), so times agree to about 1e-4 of
 * the time since the start, not to the nanosecond.  Everything else must
 * match exactly.
 */
static int64_t ts_tolerance(int64_t ts)
{
	return 1000 + (ts < 0 ? -ts : ts) / 1000;
}

/*
 * Whether the words a marked event shows are the clean event's arguments:
 * raw words (its site lost) are the arguments as stored, 32 bits for the
 * first four, 64 for the last two, and may go on past them (words the site
 * does not use); else the same text.
 */
static int same_args(const struct event *c, const struct event *d)
{
	if (!d->raw_args)
		return !strcmp(c->args, d->args);
	const char *x = c->args, *y = d->args;
	for (unsigned i = 0; *x; i++) {
		char *xe, *ye;
		uint64_t want = strtoull(x, &xe, 10);
		if (*x == '-')
			want = (uint64_t)strtoll(x, &xe, 10);
		if (i < 4)
			want &= 0xffffffffu;
		if (!*y || strtoull(y, &ye, 10) != want)
			return 0;
		x = *xe == ',' ? xe + 1 : xe;
		y = *ye == ',' ? ye + 1 : ye;
	}
	return 1;
}

/* A marked event matches by seq, the tid and tag it still shows, and its arguments. */
static int matches_marked(const struct event *c, const struct event *d)
{
	return c->seq == d->seq && (d->tid == 0 || d->tid == c->tid) &&
	       (!d->tag || (c->tag && !strcmp(c->tag, d->tag))) && same_args(c, d);
}

static int by_seq(const void *a, const void *b)
{
	const struct event *x = *(struct event *const *)a, *y = *(struct event *const *)b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A marked event with a raw time: any clean event of its seq that matches. */
static struct event *find_raw(struct dump *clean, const struct event *d)
{
	if (!clean->by_seq) {
		clean->by_seq = malloc((clean->count + 1) * sizeof(*clean->by_seq));
		for (size_t i = 0; i < clean->count; i++)
			clean->by_seq[i] = &clean->events[i];
		qsort(clean->by_seq, clean->count, sizeof(*clean->by_seq), by_seq);
	}
	size_t lo = 0, hi = clean->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (clean->by_seq[mid]->seq < d->seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	struct event *found = NULL;
	for (size_t i = lo; i < clean->count && clean->by_seq[i]->seq == d->seq; i++)
		if (matches_marked(clean->by_seq[i], d) && (!found || found->seen))
			found = clean->by_seq[i];
	return found;
}

static struct event *find(struct dump *clean, const struct event *d, int marked)
{
	if (d->raw_ts)
		return find_raw(clean, d);
	size_t lo = 0, hi = clean->count;
	int64_t from = d->ts - ts_tolerance(d->ts), to = d->ts + ts_tolerance(d->ts);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (clean->events[mid].ts < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < clean->count && clean->events[i].ts <= to; i++) {
		struct event *c = &clean->events[i];
		if (!marked && !strcmp(c->key, d->key))
			return c;
		if (marked && matches_marked(c, d))
			return c;
	}
	return NULL;
}

/* ---- where the clean target holds each event ---- */

struct owner {
	int32_t tid;
	uint32_t source, ring;
	uint64_t first, end;
};

static void locate(struct dump *clean, const char *target)
{
	FILE *f = fopen(target, "rb");
	if (!f)
		return;
	struct stat st;
	fstat(fileno(f), &st);
	unsigned char *b = malloc((size_t)st.st_size + 1);
	size_t size = fread(b, 1, (size_t)st.st_size, f);
	fclose(f);
	struct owner *owners = NULL;
	size_t n_owners = 0;
	/* first the thread entries, then the slots */
	for (int pass = 0; pass < 2; pass++) {
		uint64_t at = 0;
		while (at + RT_BLOCK_HEADER_SIZE <= size) {
			struct rt_block_header h;
			if (rt_block_check(b + at, size - at, &h) != RT_BLOCK_OK) {
				at += RT_BLOCK_ALIGN;
				continue;
			}
			const unsigned char *payload = b + at + RT_BLOCK_HEADER_SIZE;
			if (pass == 0 && h.type == RT_BLOCK_THREADS) {
				owners = realloc(owners, (n_owners + h.count) * sizeof(*owners));
				for (uint32_t i = 0; i < h.count; i++) {
					struct rt_block_thread t;
					memcpy(&t, payload + i * sizeof(t), sizeof(t));
					owners[n_owners++] = (struct owner){
					    t.entry.tid, h.source, t.entry.ring,
					    t.entry.first_record, t.entry.end_record};
				}
			}
			if (pass == 1 && (h.type == RT_BLOCK_SLOTS || h.type == RT_BLOCK_PACKED)) {
				for (size_t i = 0; i < clean->count; i++) {
					struct event *e = &clean->events[i];
					if (!e->has_seq || e->seq < h.first_record ||
					    e->seq >= h.first_record + h.count)
						continue;
					for (size_t o = 0; o < n_owners; o++) {
						struct owner *w = &owners[o];
						if (w->tid != e->tid || w->ring != h.ring ||
						    w->source != h.source || e->seq < w->first ||
						    e->seq >= w->end)
							continue;
						if (e->copies < COPIES) {
							e->at[e->copies] = at;
							e->size[e->copies] = h.size;
						}
						e->copies++;
						break;
					}
				}
			}
			at += h.size;
		}
	}
	for (size_t i = 0; i < clean->count; i++)
		clean->events[i].in_other = clean->events[i].copies == 0;
	free(owners);
	free(b);
}

/* whether every copy of e lies in a block within NEAR bytes of [a, b) */
static int may_lose(const struct event *e, uint64_t a, uint64_t b)
{
	if (e->copies == 0 || e->copies > COPIES)
		return 0;
	for (unsigned i = 0; i < e->copies; i++) {
		uint64_t lo = a > NEAR ? a - NEAR : 0, hi = b + NEAR;
		if (!(e->at[i] < hi && e->at[i] + e->size[i] > lo))
			return 0;
	}
	return 1;
}

/* Whether a line of the file at path holds one of the two texts (b may be NULL). */
static int file_says(const char *path, const char *a, const char *b)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[4096];
	int found = 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, a) || (b && strstr(line, b));
	fclose(f);
	return found;
}

/* Whether the dump's stderr says the file ends before its end block. */
static int says_cut_short(const char *path)
{
	return file_says(path, "no end block", "the file ends in it");
}

static int sanitizer_report(const char *path)
{
	return file_says(path, "Sanitizer", "runtime error:");
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr, "usage: trace_damage TOOL SEEDS FIRST_SEED TARGET FILE...\n");
		return 2;
	}
	const char *tool = argv[1];
	unsigned seeds = (unsigned)strtoul(argv[2], NULL, 10);
	unsigned first_seed = (unsigned)strtoul(argv[3], NULL, 10);
	int target = atoi(argv[4]);
	int nfiles = argc - 5;
	char **files = argv + 5;
	if (target < 0 || target >= nfiles)
		return 2;
	unsigned limit = getenv("TRACE_DAMAGE_TIMEOUT") ? atoi(getenv("TRACE_DAMAGE_TIMEOUT")) : 20;
	struct sigaction sa = {.sa_handler = on_alarm};
	sigaction(SIGALRM, &sa, NULL);

	char dir[] = "/tmp/trace_damage.XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char out[4200], err[4200], damaged[4200], corrupt_out[4200];
	const char *base = strrchr(files[target], '/');
	base = base ? base + 1 : files[target];
	snprintf(out, sizeof(out), "%s/dump.json", dir);
	snprintf(err, sizeof(err), "%s/dump.err", dir);
	snprintf(damaged, sizeof(damaged), "%s/%s", dir, base);
	snprintf(corrupt_out, sizeof(corrupt_out), "%s/corrupt.out", dir);

	char **dump_argv = calloc((size_t)nfiles + 4, sizeof(char *));
	dump_argv[0] = (char *)tool;
	dump_argv[1] = "dump";
	dump_argv[2] = "--json";
	for (int i = 0; i < nfiles; i++)
		dump_argv[3 + i] = files[i];

	struct dump clean = {0};
	int status = run(dump_argv, out, err, limit, NULL);
	read_dump(&clean, out);
	if (status != 0 || clean.count == 0) {
		fprintf(stderr, "FAIL clean dump of %s: status %d, %zu events\n", files[target],
			status, clean.count);
		return 1;
	}
	qsort(clean.events, clean.count, sizeof(*clean.events), by_time);
	locate(&clean, files[target]);
	size_t located = 0;
	for (size_t i = 0; i < clean.count; i++)
		located += !clean.events[i].in_other;
	printf("%s: %zu events (%zu in the damaged file), %" PRIu64 " lost\n", files[target],
	       clean.count, located, clean.lost);
	if (located == 0) {
		fprintf(stderr, "FAIL no event located in %s\n", files[target]);
		return 1;
	}

	dump_argv[3 + target] = damaged;
	unsigned failed = 0, runs[KINDS] = {0}, fails[KINDS] = {0};
	uint64_t missing_total = 0;
	for (unsigned s = first_seed; s < first_seed + seeds; s++) {
		unsigned k = s % KINDS;
		char seed[32];
		snprintf(seed, sizeof(seed), "%u", s);
		char *cargv[] = {"corrupt", files[target], damaged, (char *)kinds[k], seed, NULL};
		if (run(cargv, corrupt_out, err, limit, corrupt_main) != 0) {
			fprintf(stderr, "FAIL seed %u %s: corrupt failed\n", s, kinds[k]);
			return 1;
		}
		uint64_t a = 0, b = 0, oa = 0, ob = 0;
		FILE *cf = fopen(corrupt_out, "r");
		char line[512], what[512] = "";
		while (cf && fgets(line, sizeof(line), cf))
			if (sscanf(line, "%*s in %" SCNu64 " %" SCNu64 " out %" SCNu64 " %" SCNu64,
				   &a, &b, &oa, &ob) == 4)
				snprintf(what, sizeof(what), "%s", line);
		if (cf)
			fclose(cf);
		what[strcspn(what, "\n")] = 0;
		runs[k]++;

		/*
		 * Cut to fewer bytes than a block's magic, the file is nothing the
		 * tool can recognize: refused (status 2), as any such file is.
		 */
		struct stat dst;
		if (stat(damaged, &dst) == 0 && (uint64_t)dst.st_size < sizeof(RT_BLOCK_MAGIC)) {
			int refused = run(dump_argv, out, err, limit, NULL);
			if (refused != 2) {
				fprintf(stderr,
					"FAIL seed %u (%s): a file of %lld bytes: status %d\n", s,
					what, (long long)dst.st_size, refused);
				failed++;
				fails[k]++;
			}
			continue;
		}
		struct dump d = {0};
		d.status = run(dump_argv, out, err, limit, NULL);
		read_dump(&d, out);
		for (size_t i = 0; i < clean.count; i++)
			clean.events[i].seen = 0;
		unsigned problems = 0;
#define PROBLEM(...)                                                                               \
	do {                                                                                       \
		if (problems++ < 3) {                                                              \
			fprintf(stderr, "FAIL seed %u (%s): ", s, what);                           \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
		}                                                                                  \
	} while (0)
		if (d.status == -1)
			PROBLEM("dump timed out after %u s", limit);
		else if (d.status != 0 && d.status != 3)
			PROBLEM("dump exit status %d", d.status);
		if (sanitizer_report(err))
			PROBLEM("sanitizer report on stderr");
		size_t recovered = 0;
		for (size_t i = 0; i < d.count; i++) {
			struct event *e = &d.events[i];
			int marked = e->marked || e->tid == 0 || !e->tag;
			struct event *c = find(&clean, e, marked);
			if (!c) {
				PROBLEM("garbage: event %s is not in the clean dump", e->key);
				continue;
			}
			if (c->seen++)
				PROBLEM("duplicate: event %s shown twice", e->key);
			else
				recovered++;
		}
		size_t missing = 0;
		for (size_t i = 0; i < clean.count; i++) {
			struct event *c = &clean.events[i];
			if (c->seen)
				continue;
			missing++;
			if (!may_lose(c, a, b))
				PROBLEM("loss bound: event %s lost (%u copies, first in block at "
					"%" PRIu64 "+%" PRIu64 ")",
					c->key, c->copies, c->copies ? c->at[0] : 0,
					c->copies ? c->size[0] : 0);
		}
		missing_total += missing;
		/*
		 * A file cut at a block boundary has no bad bytes: it reads like one
		 * still being written (exit 0), and stderr says it has no end block.
		 */
		int cut_short = says_cut_short(err);
		if (missing && d.status != 3 && d.status >= 0 && !cut_short)
			PROBLEM("%zu events missing but exit status %d", missing, d.status);
		if (missing && d.damaged_lines == 0 && !cut_short)
			PROBLEM("%zu events missing and no damaged loss reported", missing);
		/*
		 * A file cut short cannot say how many records its lost tail held
		 * (the block that would, the FINAL RINGS block, went with it): there
		 * the tail's events need not be counted, but the dump must say that
		 * the file ends early.  Events lost before the cut still must be.
		 */
		size_t uncountable = 0;
		if (strcmp(kinds[k], "truncate") == 0 && missing && !cut_short)
			PROBLEM("truncated: the dump does not say the file ends early");
		if (cut_short) /* truncated, or the end block damaged with the rest */
			for (size_t i = 0; i < clean.count; i++) {
				struct event *c = &clean.events[i];
				if (!c->seen && c->copies && c->at[0] + c->size[0] > a)
					uncountable++;
			}
		if (d.status >= 0 && missing - uncountable > d.damaged_lost)
			PROBLEM("uncounted loss: %zu events missing, damaged losses count %" PRIu64
				" (%zu shown, %" PRIu64 " lost in all; clean %zu, %" PRIu64 ")",
				missing, d.damaged_lost, recovered, d.lost, clean.count,
				clean.lost);
		if (problems) {
			failed++;
			fails[k]++;
		}
		free_dump(&d);
	}
	for (unsigned k = 0; k < KINDS; k++)
		printf("%-9s %3u seeds, %3u failed\n", kinds[k], runs[k], fails[k]);
	printf("%u of %u seeds failed; %" PRIu64 " events missing in all\n", failed, seeds,
	       missing_total);
	unlink(out);
	unlink(err);
	unlink(damaged);
	unlink(corrupt_out);
	rmdir(dir);
	free(dump_argv);
	free_dump(&clean);
	return failed ? 1 : 0;
}
