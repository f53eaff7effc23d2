/*
 * ship_file.c - shipping one trace file.
 *
 * Exactly once: a row's key is (host, file_id, file_seq, ordinal), and the
 * ordinal is the item's place in the file's time order, the same at every
 * reading of the same bytes.  A batch sent twice (its acknowledgement lost
 * in a crash, a server that went down mid-way) holds the same rows under
 * the same keys, which the table keeps once; the count at the end, with
 * FINAL, is the proof.  Items before the journal's point are read again
 * (spans that began there give their ends' durations) but not sent.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/ship_file.h"
#include "event/event.h"
#include "event/set_events.h"
#include "read/trace_set.h"
#include "ship/durations.h"
#include "ship/rows.h"

#define MESSAGE_MAX 1024

struct shipping {
	const struct rt_ship_target *t;
	const char *path;
	const char *host;
	uint64_t file_id;
	uint32_t file_seq;
	uint64_t size;
	struct rt_ship_buffer rows;
	struct rt_ship_buffer answer;
	char *insert; /* the INSERT statement */
	uint64_t batch_first, batch_count;
};

static double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void nap(double seconds)
{
	struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
	nanosleep(&ts, NULL);
}

/*
 * Run statement (with body) until the server takes it, trying again while
 * it is unreachable or busy, for up to retry_seconds.  0, or 1 after one
 * line on stderr.
 */
static int run(struct shipping *s, const char *statement, const void *body, size_t length)
{
	const struct rt_ship_target *t = s->t;
	char message[MESSAGE_MAX];
	double deadline = now_seconds() + t->retry_seconds;
	double wait = 0.1;
	int said = 0;
	for (;;) {
		enum rt_ship_http_result r = rt_ship_http_run(t->http, statement, body, length,
							      &s->answer, message, sizeof(message));
		if (r == RT_SHIP_HTTP_OK) {
			if (said)
				fprintf(stderr, "ringtrace ship: %s: the server answers again\n",
					rt_escaped(t->url));
			return 0;
		}
		if (r == RT_SHIP_HTTP_REFUSED) {
			/* ClickHouse's UNKNOWN_TABLE: the one refusal a user meets first */
			fprintf(stderr, "ringtrace ship: %s: %s%s\n", rt_escaped(t->url),
				rt_escaped(message),
				strstr(message, "Code: 60,")
				    ? " ('ringtrace ship --create' makes it)"
				    : "");
			return 1;
		}
		if (now_seconds() + wait > deadline || (t->stop && *t->stop)) {
			fprintf(stderr, "ringtrace ship: %s: %s; gave up after %u s\n",
				rt_escaped(t->url), rt_escaped(message), t->retry_seconds);
			return 1;
		}
		if (!said)
			fprintf(stderr, "ringtrace ship: %s: %s; trying again for up to %u s\n",
				rt_escaped(t->url), rt_escaped(message), t->retry_seconds);
		said = 1;
		nap(wait);
		wait = wait * 2 > 2.0 ? 2.0 : wait * 2;
	}
}

static int journal(struct shipping *s, const struct rt_ship_progress *p)
{
	char message[MESSAGE_MAX];
	if (rt_ship_journal_record(s->t->journal, s->t->dest, s->host, s->file_id, s->file_seq, p,
				   message, sizeof(message)) != 0) {
		fprintf(stderr, "ringtrace ship: %s\n", rt_escaped(message));
		return 1;
	}
	return 0;
}

/* Send the batch and record that the server holds the file's rows up to next. */
static int send_batch(struct shipping *s, uint64_t next)
{
	if (s->batch_count == 0)
		return 0;
	if (run(s, s->insert, s->rows.data, s->rows.length))
		return 1;
	struct rt_ship_progress p = {.size = s->size, .next = next};
	if (journal(s, &p))
		return 1;
	s->rows.length = 0;
	s->batch_count = 0;
	return 0;
}

/* One pass over the file's items: rows from ordinal first on.  0, 1 failed, -errno. */
static int pass(struct shipping *s, struct rt_trace_set *set, uint64_t first,
		struct rt_ship_file_result *r)
{
	const struct rt_ship_target *t = s->t;
	/* a builder of its own: the descriptor table and positions start from the file's head */
	struct rt_set_events events;
	if (rt_set_events_open(&events, set, t->debug_dirs, t->debug_dir_count))
		return -ENOMEM;
	struct rt_ship_durations durations;
	rt_ship_durations_init(&durations);
	struct rt_ship_row_context c = {
	    .host = s->host,
	    .host_length = strlen(s->host),
	    .file_id = s->file_id,
	    .file_seq = s->file_seq,
	    .wall0 = rt_trace_set_wall_start(set),
	};
	int rc = rt_trace_set_start(set, 0);
	const struct rt_item *item;
	uint32_t source;
	uint64_t ordinal = 0;
	s->rows.length = 0;
	s->batch_count = 0;
	while (!rc && (item = rt_trace_set_next(set, &source)) != NULL) {
		const struct rt_event *ev = rt_event_build_kept(events.builder, source, item);
		if ((rc = rt_ship_durations_take(&durations, ev, &c.dur_ns)) != 0)
			break;
		if (ordinal >= first) {
			if (s->batch_count == 0)
				s->batch_first = ordinal;
			c.ordinal = ordinal;
			c.batch_first = s->batch_first;
			if ((rc = rt_ship_row_encode(&s->rows, &c, ev)) != 0)
				break;
			s->batch_count++;
			r->sent++;
			if (s->batch_count == t->batch_rows) {
				if ((rc = send_batch(s, ordinal + 1)) != 0)
					break;
				if (t->stop && *t->stop) {
					fprintf(stderr,
						"ringtrace ship: %s: interrupted after event %llu; "
						"the next run goes on from there\n",
						s->path, (unsigned long long)ordinal + 1);
					rc = 1;
					break;
				}
			}
		}
		ordinal++;
	}
	if (!rc)
		rc = rt_trace_set_error(set);
	if (!rc)
		rc = send_batch(s, ordinal);
	r->rows = ordinal;
	rt_ship_durations_free(&durations);
	r->damaged_payloads = rt_set_events_close(&events, "shipped marked");
	return rc;
}

/* The file's distinct rows in the table: 0 and *count, or 1 after a line on stderr. */
static int count_in_table(struct shipping *s, uint64_t *count)
{
	size_t n = strlen(s->host);
	char *host = malloc(2 * n + 1);
	if (!host)
		return -ENOMEM;
	char *h = host;
	for (size_t i = 0; i < n; i++) {
		if (s->host[i] == '\\' || s->host[i] == '\'')
			*h++ = '\\';
		*h++ = s->host[i];
	}
	*h = 0;
	size_t size = strlen(s->t->table) + strlen(host) + 256;
	char *q = malloc(size);
	if (!q) {
		free(host);
		return -ENOMEM;
	}
	snprintf(q, size,
		 "SELECT count() FROM %s FINAL WHERE host = '%s' AND file_id = %llu AND "
		 "file_seq = %u",
		 s->t->table, host, (unsigned long long)s->file_id, s->file_seq);
	free(host);
	int rc = run(s, q, NULL, 0);
	free(q);
	if (rc)
		return rc;
	char *end;
	errno = 0;
	unsigned long long v = strtoull((const char *)s->answer.data, &end, 10);
	if (errno || end == (const char *)s->answer.data || (*end != '\n' && *end != 0)) {
		fprintf(stderr,
			"ringtrace ship: %s: the count of %s's rows is not a number: %.80s\n",
			s->t->url, s->path, (const char *)s->answer.data);
		return 1;
	}
	*count = v;
	return 0;
}

/* Whether the file can be shipped now: 0 yes, else the status (said on stderr). */
static int shippable(const struct rt_trace_set *set, const char *path, int unfinished)
{
	if (set->file_count != 1) {
		fprintf(stderr,
			"ringtrace ship: %s: not a trace file (an arena? 'ringtrace cut --from 0ns "
			"ARENA -o FILE' makes one)\n",
			rt_escaped(path));
		return RT_EXIT_USAGE;
	}
	const struct rt_trace_file *f = &set->files[0].file;
	if (!f->has_end && !unfinished) {
		fprintf(stderr,
			"ringtrace ship: %s: not finished (no end block): still being written, or "
			"its recording was stopped without closing it; --unfinished ships it as it "
			"is\n",
			rt_escaped(path));
		return RT_EXIT_FAILURE;
	}
	return 0;
}

int rt_ship_file(const struct rt_ship_target *t, const char *path, int unfinished,
		 struct rt_ship_file_result *r)
{
	memset(r, 0, sizeof(*r));
	struct rt_trace_set *set;
	char message[MESSAGE_MAX];
	char *paths[1] = {(char *)path};
	if (rt_trace_set_open_reading(paths, 1, &set, message, sizeof(message)) != 0) {
		fprintf(stderr, "ringtrace ship: %s\n", rt_escaped(message));
		return RT_EXIT_USAGE;
	}
	int status = shippable(set, path, unfinished);
	if (status) {
		rt_trace_set_close(set);
		return status;
	}
	const struct rt_trace_file *f = &set->files[0].file;
	struct shipping s = {.t = t, .path = path, .file_id = f->file_id, .file_seq = f->file_seq};
	r->finished = f->has_end && f->end.reason == RT_FILE_END_FINISHED;
	r->file_id = f->file_id;
	r->file_seq = f->file_seq;
	char file_host[sizeof(f->info.host) + 1] = "";
	if (f->has_file_block)
		snprintf(file_host, sizeof(file_host), "%.*s", (int)sizeof(f->info.host),
			 f->info.host);
	s.host = t->host ? t->host : file_host;
	struct stat st;
	s.size = fstat(f->fd, &st) == 0 ? (uint64_t)st.st_size : f->size;

	struct rt_ship_progress before;
	rt_ship_journal_find(t->journal, t->dest, s.host, s.file_id, s.file_seq, &before);
	if ((before.done || before.next) && before.size != s.size) {
		fprintf(stderr,
			"ringtrace ship: %s: it was %llu bytes when shipped to %s, it is %llu "
			"now: its rows there are not this file's, so it is not shipped again\n",
			rt_escaped(path), (unsigned long long)before.size, t->dest,
			(unsigned long long)s.size);
		rt_trace_set_close(set);
		return RT_EXIT_FAILURE;
	}
	if (before.done) {
		r->already = 1;
		r->rows = before.rows;
		rt_trace_set_close(set);
		return 0;
	}
	size_t size = strlen(t->table) + strlen(t->columns) + 64;
	s.insert = malloc(size);
	if (!s.insert) {
		rt_trace_set_close(set);
		fprintf(stderr, "ringtrace ship: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	snprintf(s.insert, size, "INSERT INTO %s %s FORMAT RowBinary", t->table, t->columns);
	if (f->file_id == 0 || !f->has_file_block)
		fprintf(
		    stderr,
		    "ringtrace ship: %s: its first block is damaged: file id %016llx, host '%s' "
		    "taken from what remains\n",
		    path, (unsigned long long)f->file_id, s.host);

	r->first = before.next;
	if (before.next)
		fprintf(stderr, "ringtrace ship: %s: resuming at event %llu\n", rt_escaped(path),
			(unsigned long long)before.next);
	int rc = pass(&s, set, before.next, r);
	uint64_t counted = 0;
	for (int attempt = 0; !rc; attempt++) {
		rc = count_in_table(&s, &counted);
		if (rc || counted == r->rows)
			break;
		if (counted > r->rows || attempt == 1) {
			fprintf(
			    stderr,
			    "ringtrace ship: %s: the table %s holds %llu distinct events of this "
			    "file (host '%s', file id %016llx, file %u), the file %llu\n",
			    path, t->table, (unsigned long long)counted, s.host,
			    (unsigned long long)s.file_id, s.file_seq, (unsigned long long)r->rows);
			rc = 1;
			break;
		}
		fprintf(stderr,
			"ringtrace ship: %s: the table holds %llu of its %llu events: sending all "
			"of them again\n",
			rt_escaped(path), (unsigned long long)counted, (unsigned long long)r->rows);
		r->first = 0;
		r->sent = 0;
		rc = pass(&s, set, 0, r);
	}
	if (!rc) {
		struct rt_ship_progress done = {
		    .size = s.size, .next = r->rows, .rows = r->rows, .done = 1};
		rc = journal(&s, &done);
	}
	if (rc < 0) {
		fprintf(stderr, "ringtrace ship: %s: %s\n", rt_escaped(path), strerror(-rc));
		rc = 1;
	}
	status = rc ? RT_EXIT_FAILURE : RT_EXIT_OK;
	if (!status) {
		status = rt_cmd_set_damage_status(set, path, status);
		if (!status && r->damaged_payloads)
			status = RT_EXIT_DAMAGED;
	}
	rt_ship_buffer_free(&s.rows);
	rt_ship_buffer_free(&s.answer);
	free(s.insert);
	rt_trace_set_close(set);
	return status;
}
