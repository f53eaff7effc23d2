/*
 * check_survivors.c - see check_survivors.h.
 *
 * The dump is read line by line with the strict parser of the stress test
 * (tests/stress/dump_json.c).  Each tracer thread of the arena's thread
 * table is followed through the dump: its events must continue one another
 * exactly (argument i and seq each one more than before, or more by what a
 * `dropped` note between them says), and the run must end where the ring's
 * own slots say its newest committed record is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/check.h"
#include "../stress/dump_json.h"
#include "arena_file.h"
#include "check_survivors.h"
#include "death_pattern.h"

/* One tracer thread: what the arena says, then what the dump showed. */
struct tracer {
	uint32_t entry; /* thread-table index */
	uint32_t t;	/* pattern thread index, from its name "victim-t" */
	int32_t tid;
	uint32_t ring;
	uint64_t first_record;
	struct ring_words words;
	struct ring_record newest;
	int have_newest;
	int torn_mid; /* the torn record's first slot already carries its seq */

	uint64_t present;
	int any;
	uint32_t first_i, last_i;
	uint64_t first_seq, last_seq;
	int64_t last_ts;
	uint64_t pending_drops, pending_notes; /* dropped lines since its last event */
	uint64_t overwritten, dropped, damaged;
	uint32_t torn_lines;
	uint64_t torn;
	uint32_t last_event_lines;
	struct dump_line last_event;
};

/* The two trace sites of the victim: each must keep one file and line. */
struct site_seen {
	int64_t line;
	char file[512];
};

struct survivors {
	const struct survivors_expect *expect;
	const char *label;
	struct arena_file arena;
	struct tracer *tracers;
	uint32_t count;
	struct site_seen small, large;
	uint64_t lines;
	uint64_t foreign_lost; /* lost lines of no tracer */
	int tail_started;
};

static int int_is(const struct json_int *v, int negative, uint64_t bits)
{
	return v->negative == negative && v->bits == bits;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int same_site(struct site_seen *seen, const struct dump_line *l)
{
	if (seen->line < 0) {
		seen->line = l->line;
		snprintf(seen->file, sizeof(seen->file), "%s", l->file);
		return 1;
	}
	return seen->line == l->line && strcmp(seen->file, l->file) == 0;
}

int survivors_is_event(const struct dump_line *l, uint32_t t, uint32_t *i)
{
	if (l->nargs < 2 || !int_is(&l->args[0], 0, t) || l->args[1].negative ||
	    l->args[1].bits > UINT32_MAX || !ends_with(l->file, "victim.c"))
		return 0;
	*i = (uint32_t)l->args[1].bits;
	if (!death_is_large(*i))
		return l->nargs == 2 && strcmp(l->tag, "kill") == 0 &&
		       strcmp(l->func, "trace_small") == 0;
	return l->nargs == 6 && strcmp(l->tag, "kill6") == 0 &&
	       strcmp(l->func, "trace_large") == 0 && int_is(&l->args[2], 0, death_arg2(*i)) &&
	       int_is(&l->args[3], 1, (uint64_t)(int64_t)death_arg3(t)) &&
	       int_is(&l->args[4], 0, death_arg4(t, *i)) &&
	       int_is(&l->args[5], 1, (uint64_t)death_arg5(*i));
}

/* An event of the pattern, from the same source line as every other of its site. */
static int is_pattern_event(struct survivors *s, const struct dump_line *l, uint32_t t, uint32_t *i)
{
	return survivors_is_event(l, t, i) &&
	       same_site(death_is_large(*i) ? &s->large : &s->small, l);
}

static void show_line(const struct survivors *s, const struct dump_line *l, const char *why)
{
	fprintf(stderr, "  %s: dump line %llu (%s): %s tid %lld seq %llu tag \"%s\" func %s",
		s->label, (unsigned long long)s->lines, why, l->kind, (long long)l->tid,
		(unsigned long long)l->seq, l->tag, l->func);
	for (int k = 0; k < l->nargs; k++)
		fprintf(stderr, "%s%s%llu", k ? "," : " args ", l->args[k].negative ? "-" : "",
			(unsigned long long)(l->args[k].negative ? 0 - l->args[k].bits
								 : l->args[k].bits));
	fprintf(stderr, "\n");
}

static struct tracer *tracer_of(struct survivors *s, int64_t tid)
{
	for (uint32_t k = 0; k < s->count; k++)
		if (s->tracers[k].tid == tid)
			return &s->tracers[k];
	return NULL;
}

/* ---- the arena's side -------------------------------------------------- */

static int load_tracers(struct survivors *s)
{
	struct arena_file *a = &s->arena;
	uint32_t used = arena_threads_used(a);
	s->tracers = calloc(used + 1, sizeof(*s->tracers));
	if (!s->tracers)
		return -1;
	for (uint32_t k = 0; k < used; k++) {
		const struct rt_thread_entry *e = arena_thread(a, k);
		uint32_t state = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
		if (state != RT_THREAD_LIVE && state != RT_THREAD_EXITED)
			continue;
		char name[RT_NAME_MAX + 1];
		memcpy(name, e->name, RT_NAME_MAX);
		name[RT_NAME_MAX] = 0;
		unsigned t;
		char rest;
		if (!CHECK(sscanf(name, "victim-%u%c", &t, &rest) == 1)) {
			fprintf(stderr, "  %s: thread entry %u (tid %d) is \"%s\", not a tracer\n",
				s->label, k, (int)e->tid, name);
			continue;
		}
		struct tracer *x = &s->tracers[s->count++];
		x->entry = k;
		x->t = t;
		x->tid = e->tid;
		x->ring = e->ring;
		x->first_record = e->first_record;
		if (!CHECK(x->ring < a->header->ring_count))
			continue;
		arena_ring_words(a, x->ring, &x->words);
		x->have_newest = arena_newest_record(a, x->ring, &x->newest) == 0;
		if (x->words.reserve != x->words.head) {
			const union rt_slot *slot =
			    &arena_slots(a, x->ring)[x->words.head & (arena_ring_slots(a) - 1)];
			x->torn_mid = slot->head.seq == (uint32_t)x->words.head;
		}
	}
	/* every tracer, exactly once, each with a ring of its own */
	for (uint32_t t = 0; t < s->expect->tracers; t++) {
		uint32_t found = 0;
		for (uint32_t k = 0; k < s->count; k++)
			if (s->tracers[k].t == t) {
				found++;
				CHECK(s->tracers[k].words.records > 0);
				CHECK_EQ(s->tracers[k].first_record, 0);
			}
		if (!CHECK(found == 1))
			fprintf(stderr, "  %s: tracer victim-%u has %u thread entries\n", s->label,
				t, found);
	}
	CHECK_EQ(s->count, s->expect->tracers);
	for (uint32_t k = 0; k < s->count; k++)
		for (uint32_t j = k + 1; j < s->count; j++)
			CHECK(s->tracers[k].ring != s->tracers[j].ring);
	return 0;
}

/* ---- the dump's side --------------------------------------------------- */

static void on_trace(struct survivors *s, struct tracer *x, const struct dump_line *l)
{
	uint32_t i;
	if (!CHECK(is_pattern_event(s, l, x->t, &i))) {
		show_line(s, l, "not an event of the pattern");
		return;
	}
	char name[24];
	snprintf(name, sizeof(name), "victim-%u", x->t);
	CHECK_STR(l->thread, name);
	CHECK(l->cpu >= -1 && l->cpu < 4096);
	if (!CHECK(l->has_seq && l->has_ts))
		return;
	if (x->any) {
		uint64_t want_i = (uint64_t)x->last_i + 1 + x->pending_drops;
		uint64_t want_seq = x->last_seq + 1 + x->pending_notes;
		if (!CHECK(i == want_i && l->seq == want_seq)) {
			fprintf(stderr,
				"  %s: victim-%u: event i %u seq %llu follows i %u seq %llu "
				"(%llu dropped in %llu notes between): a gap, a duplicate or "
				"disorder\n",
				s->label, x->t, i, (unsigned long long)l->seq, x->last_i,
				(unsigned long long)x->last_seq,
				(unsigned long long)x->pending_drops,
				(unsigned long long)x->pending_notes);
			show_line(s, l, "out of sequence");
		}
		CHECK(l->ts_ns >= x->last_ts);
	} else {
		x->any = 1;
		x->first_i = i;
		x->first_seq = l->seq;
	}
	x->last_i = i;
	x->last_seq = l->seq;
	x->last_ts = l->ts_ns;
	x->pending_drops = 0;
	x->pending_notes = 0;
	x->present++;
}

static void on_lost(struct survivors *s, struct tracer *x, const struct dump_line *l)
{
	if (!x) {
		s->foreign_lost += l->count;
		fprintf(stderr, "  %s: lost line of tid %lld: %llu %s\n", s->label,
			(long long)l->tid, (unsigned long long)l->count, l->reason);
		return;
	}
	CHECK(l->count > 0);
	if (strcmp(l->reason, "overwritten") == 0) {
		x->overwritten += l->count;
	} else if (strcmp(l->reason, "dropped") == 0) {
		x->dropped += l->count;
		x->pending_drops += l->count;
		x->pending_notes++;
	} else if (strcmp(l->reason, "torn") == 0) {
		x->torn += l->count;
		x->torn_lines++;
	} else if (strcmp(l->reason, "damaged") == 0) {
		x->damaged += l->count;
	} else {
		check_fail(__FILE__, __LINE__, "%s: lost line with reason \"%s\"", s->label,
			   l->reason);
	}
}

static void on_line(struct survivors *s, const struct dump_line *l)
{
	s->lines++;
	int tail = strcmp(l->kind, "last_event") == 0;
	if (!tail && !CHECK(!s->tail_started)) /* last_event lines come at the end */
		return;
	s->tail_started |= tail;
	struct tracer *x = tracer_of(s, l->tid);
	if (strcmp(l->kind, "lost") == 0) {
		on_lost(s, x, l);
		return;
	}
	if (!CHECK(x != NULL)) {
		show_line(s, l, "of no tracer thread");
		return;
	}
	if (strcmp(l->kind, "trace") == 0) {
		on_trace(s, x, l);
	} else if (tail) {
		if (x->last_event_lines++ == 0)
			x->last_event = *l;
	} else {
		check_fail(__FILE__, __LINE__, "%s: line %llu: unknown kind \"%s\"", s->label,
			   (unsigned long long)s->lines, l->kind);
	}
}

/* ---- per thread, after the last line ------------------------------------ */

/* The thread's last event: its newest event in the dump, or a newer dropped one. */
static void check_last_event(struct survivors *s, struct tracer *x)
{
	if (!CHECK(x->last_event_lines == 1))
		return;
	const struct dump_line *l = &x->last_event;
	uint32_t i;
	if (!CHECK(is_pattern_event(s, l, x->t, &i))) {
		show_line(s, l, "last event not of the pattern");
		return;
	}
	if (!x->any || i == x->last_i) {
		CHECK(x->any);
		if (l->has_seq)
			CHECK_EQ(l->seq, x->last_seq);
		return;
	}
	/* newer than anything in its ring: only an event the full ring dropped */
	if (!CHECK(i > x->last_i && s->expect->mode == RT_MODE_STREAM && !l->has_seq)) {
		fprintf(stderr, "  %s: victim-%u: last event i %u, newest in the dump i %u\n",
			s->label, x->t, i, x->last_i);
		return;
	}
	CHECK(i - x->last_i <= x->words.dropped);
	if (!s->expect->drained) {
		/* it dropped everything after its ring filled, and was killed inside
		 * the drop of event last_i + dropped + 1 at the latest */
		CHECK(i + 1 >= x->last_i + x->words.dropped);
	}
}

static void check_tracer(struct survivors *s, struct tracer *x)
{
	const struct survivors_expect *e = s->expect;
	const struct ring_words *w = &x->words;
	const int torn = w->reserve != w->head;
	char where[256];
	snprintf(where, sizeof(where), "%s: victim-%u", s->label, x->t);

	/* the record being written at the instant of death: one torn loss, no event */
	if (torn) {
		if (!CHECK(w->reserve - w->head <= RT_RECORD_MAX_SLOTS))
			fprintf(stderr, "  %s: head %llu reserve %llu\n", where,
				(unsigned long long)w->head, (unsigned long long)w->reserve);
		if (!CHECK(x->torn_lines == 1 && x->torn == 1))
			fprintf(stderr, "  %s: reserve != head, but %u torn lines (%llu)\n", where,
				x->torn_lines, (unsigned long long)x->torn);
	} else if (!CHECK(x->torn_lines == 0)) {
		fprintf(stderr, "  %s: torn reported, but reserve == head == %llu\n", where,
			(unsigned long long)w->head);
	}
	CHECK_EQ(x->damaged, 0);

	/* the newest committed record, from the ring's own slots */
	if (!CHECK(x->have_newest && x->any)) {
		fprintf(stderr, "  %s: no newest record in the ring, or no event in the dump\n",
			where);
		return;
	}
	const struct ring_record *n = &x->newest;
	uint64_t newest_seq;
	if (n->head.record == (uint32_t)(w->records - 1)) {
		newest_seq = w->records - 1;
	} else if (torn && n->head.record == (uint32_t)(w->records - 2)) {
		newest_seq = w->records - 2; /* the writer died counting the torn record */
	} else {
		check_fail(__FILE__, __LINE__, "%s: newest record %u, ring records %llu", where,
			   n->head.record, (unsigned long long)w->records);
		return;
	}
	if (n->head.kind == RT_REC_TRACE) {
		if (!CHECK(x->last_seq == newest_seq && x->last_i == n->head.a1 &&
			   x->t == n->head.a0))
			fprintf(stderr,
				"  %s: the dump ends at seq %llu (i %u), the ring's newest "
				"committed record is seq %llu (i %u)\n",
				where, (unsigned long long)x->last_seq, x->last_i,
				(unsigned long long)newest_seq, n->head.a1);
		/* drops after it that no note in the ring holds */
		CHECK(x->pending_notes <= 1);
	} else {
		/* a dropped note was committed after the last event */
		CHECK_EQ(x->last_seq + 1, newest_seq);
		CHECK(x->pending_notes >= 1 && x->pending_drops >= n->cont.a4);
	}

	if (e->mode == RT_MODE_FLIGHT) {
		/* own ring from its first event, no notes: seq is i */
		CHECK_EQ(x->dropped, 0);
		CHECK_EQ(x->first_seq, x->first_i);
		if (!CHECK(x->overwritten == x->first_seq - x->first_record &&
			   x->present + x->overwritten == newest_seq + 1 - x->first_record))
			fprintf(stderr,
				"  %s: %llu committed, but %llu present + %llu overwritten "
				"(first seq %llu)\n",
				where, (unsigned long long)(newest_seq + 1),
				(unsigned long long)x->present, (unsigned long long)x->overwritten,
				(unsigned long long)x->first_seq);
	} else {
		CHECK_EQ(x->overwritten, 0);
		CHECK(x->dropped <= w->dropped);
		if (!e->drained) {
			/* the ring filled once: it holds the first events, then all drops */
			CHECK_EQ(x->first_seq, 0);
			CHECK_EQ(x->first_i, 0);
			CHECK_EQ(x->present, newest_seq + 1);
			CHECK_EQ(x->dropped, w->dropped);
		}
	}

	check_last_event(s, x);
	if (e->all_known || (e->known_thread >= 0 && x->t == (uint32_t)e->known_thread)) {
		if (!CHECK(x->last_i == e->known_last && !torn))
			fprintf(stderr, "  %s: last event i %u, the victim's was i %u\n", where,
				x->last_i, e->known_last);
	}
}

/* ---- driving ------------------------------------------------------------ */

static int check_lines(struct survivors *s, const char *text, size_t length)
{
	const char *p = text, *end = text + length;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!CHECK(nl != NULL)) /* every line ends with a newline */
			break;
		size_t n = (size_t)(nl - p);
		char *copy = malloc(n + 1);
		memcpy(copy, p, n);
		copy[n] = 0;
		struct dump_line line;
		char why[256];
		if (dump_json_parse(copy, &line, why, sizeof(why)) != 0)
			check_fail(__FILE__, __LINE__, "%s: dump line %llu: %s: %.200s", s->label,
				   (unsigned long long)s->lines + 1, why, copy);
		else
			on_line(s, &line);
		free(copy);
		p = nl + 1;
	}
	return 0;
}

int survivors_check_text(const char *text, size_t length, const char *arena,
			 const struct survivors_expect *expect, const char *label,
			 struct survivors_stats *stats)
{
	int before = check_failure_count();
	struct survivors s;
	memset(&s, 0, sizeof(s));
	s.expect = expect;
	s.label = label;
	s.small.line = s.large.line = -1;
	char why[512];
	if (!CHECK(arena_file_open(&s.arena, arena, 0, why, sizeof(why)) == 0)) {
		fprintf(stderr, "  %s: %s\n", label, why);
		return check_failure_count() - before;
	}
	if (expect->state)
		CHECK_EQ(s.arena.header->state, expect->state);
	if (load_tracers(&s) == 0) {
		check_lines(&s, text, length);
		for (uint32_t k = 0; k < s.count; k++) {
			struct tracer *x = &s.tracers[k];
			check_tracer(&s, x);
			stats->present += x->present;
			stats->overwritten += x->overwritten;
			stats->dropped += x->dropped;
			stats->torn += (uint32_t)x->torn;
			stats->torn_mid += x->torn && x->torn_mid;
		}
		CHECK_EQ(s.foreign_lost, 0);
		stats->dump_lines += s.lines;
	}
	free(s.tracers);
	arena_file_close(&s.arena);
	return check_failure_count() - before;
}

int survivors_check(const char *tool, const char *arena, const struct survivors_expect *expect,
		    const char *label, struct survivors_stats *stats)
{
	int before = check_failure_count();
	char *argv[] = {(char *)tool, "dump", "--json", (char *)arena, NULL};
	char *out = NULL, *err = NULL;
	size_t length = 0;
	int status = run_capture(argv, &out, &length, &err);
	if (!CHECK(status == 0))
		fprintf(stderr, "  %s: %s dump --json %s: status 0x%x, stderr:\n%s", label, tool,
			arena, status, err ? err : "");
	else
		survivors_check_text(out, length, arena, expect, label, stats);
	free(out);
	free(err);
	return check_failure_count() - before;
}

/* ---- running a program -------------------------------------------------- */

struct growing {
	char *bytes;
	size_t length, capacity;
};

static int append(struct growing *g, int fd)
{
	if (g->capacity - g->length < 65536) {
		size_t capacity = g->capacity ? g->capacity * 2 : 1 << 20;
		char *bytes = realloc(g->bytes, capacity + 1);
		if (!bytes)
			return -1;
		g->bytes = bytes;
		g->capacity = capacity;
	}
	ssize_t n = read(fd, g->bytes + g->length, g->capacity - g->length);
	if (n > 0)
		g->length += (size_t)n;
	return n > 0 ? 1 : n == 0 || errno != EINTR ? 0 : 1;
}

int run_capture(char *const argv[], char **out, size_t *out_length, char **err)
{
	int o[2], e[2];
	if (pipe2(o, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(e, O_CLOEXEC) != 0) {
		close(o[0]);
		close(o[1]);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		dup2(o[1], STDOUT_FILENO);
		dup2(e[1], STDERR_FILENO);
		execv(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(o[1]);
	close(e[1]);
	struct growing streams[2] = {{0}, {0}};
	struct pollfd fds[2] = {{o[0], POLLIN, 0}, {e[0], POLLIN, 0}};
	int open_count = 2;
	while (open_count > 0) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int k = 0; k < 2; k++) {
			if (fds[k].fd < 0 || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			int r = append(&streams[k], fds[k].fd);
			if (r <= 0) {
				close(fds[k].fd);
				fds[k].fd = -1;
				open_count--;
			}
		}
	}
	for (int k = 0; k < 2; k++) {
		if (fds[k].fd >= 0)
			close(fds[k].fd);
		if (!streams[k].bytes)
			streams[k].bytes = calloc(1, 1);
		else
			streams[k].bytes[streams[k].length] = 0;
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	*out = streams[0].bytes;
	*out_length = streams[0].length;
	*err = streams[1].bytes;
	return status;
}
