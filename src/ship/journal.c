/*
 * journal.c - the journal file, and its facts in memory (a list: a
 * machine ships thousands of files, not millions, and each is looked up a
 * few times).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ship/journal.h"

#define LINE_MAX_BYTES 8192
/* lines beyond two per file before the journal is compacted */
#define COMPACT_SLACK 4096u

struct entry {
	char *key; /* "DEST HOST FILE_ID FILE_SEQ", escaped as written */
	struct rt_ship_progress progress;
};

struct rt_ship_journal {
	int fd;
	char *path;
	struct entry *entries;
	size_t count, capacity;
};

/* Escape one field into out (size at least 3 * strlen + 1). */
static void escape(const char *in, char *out)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *s = (const unsigned char *)in; *s; s++) {
		if (*s <= ' ' || *s >= 0x7f || *s == '%') {
			*out++ = '%';
			*out++ = hex[*s >> 4];
			*out++ = hex[*s & 15];
		} else {
			*out++ = (char)*s;
		}
	}
	*out = 0;
}

static char *make_key(const char *dest, const char *host, uint64_t file_id, uint32_t file_seq)
{
	size_t n = 3 * (strlen(dest) + strlen(host)) + 64;
	char *key = malloc(n);
	char *d = malloc(3 * strlen(dest) + 1), *h = malloc(3 * strlen(host) + 1);
	if (!key || !d || !h) {
		free(key);
		free(d);
		free(h);
		return NULL;
	}
	escape(dest, d);
	escape(host, h);
	snprintf(key, n, "%s %s %016llx %u", d, h, (unsigned long long)file_id, file_seq);
	free(d);
	free(h);
	return key;
}

static struct entry *find(const struct rt_ship_journal *j, const char *key)
{
	for (size_t i = j->count; i-- > 0;)
		if (strcmp(j->entries[i].key, key) == 0)
			return &j->entries[i];
	return NULL;
}

/* Keep key's progress: the key is taken (freed when not kept). */
static int remember(struct rt_ship_journal *j, char *key, const struct rt_ship_progress *p)
{
	struct entry *e = find(j, key);
	if (e) {
		free(key);
		e->progress = *p;
		return 0;
	}
	if (j->count == j->capacity) {
		size_t c = j->capacity ? 2 * j->capacity : 64;
		struct entry *grown = realloc(j->entries, c * sizeof(*grown));
		if (!grown) {
			free(key);
			return -ENOMEM;
		}
		j->entries = grown;
		j->capacity = c;
	}
	j->entries[j->count++] = (struct entry){key, *p};
	return 0;
}

/* The next space-separated field of *s (NUL-terminated in place), or NULL. */
static char *field(char **s)
{
	char *start = *s;
	if (!start || *start == 0 || *start == ' ')
		return NULL;
	char *space = strchr(start, ' ');
	if (space) {
		*space = 0;
		*s = space + 1;
	} else {
		*s = NULL;
	}
	return start;
}

static int number(const char *text, int base, unsigned long long max, unsigned long long *out)
{
	char *end;
	if (!text || !*text || *text == '-' || *text == '+')
		return -1;
	errno = 0;
	*out = strtoull(text, &end, base);
	return errno || *end || *out > max ? -1 : 0;
}

/* One line: "B KEY SIZE NEXT" or "D KEY SIZE ROWS"; a malformed one is skipped. */
static int take_line(struct rt_ship_journal *j, char *line)
{
	char *rest = line;
	char *what = field(&rest), *dest = field(&rest), *host = field(&rest);
	char *id = field(&rest), *seq = field(&rest), *size_text = field(&rest);
	char *count = field(&rest);
	unsigned long long file_id, file_seq, size, n;
	if (!what || (strcmp(what, "B") != 0 && strcmp(what, "D") != 0) || !dest || !host || rest ||
	    number(id, 16, UINT64_MAX, &file_id) || number(seq, 10, UINT32_MAX, &file_seq) ||
	    number(size_text, 10, UINT64_MAX, &size) || number(count, 10, UINT64_MAX, &n))
		return 0;
	size_t length = strlen(dest) + strlen(host) + 64;
	char *key = malloc(length);
	if (!key)
		return -ENOMEM;
	snprintf(key, length, "%s %s %016llx %u", dest, host, file_id, (unsigned)file_seq);
	struct rt_ship_progress p = {.size = size, .next = n, .done = what[0] == 'D'};
	if (p.done)
		p.rows = n;
	return remember(j, key, &p);
}

static int make_parents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		int rc = mkdir(path, 0700);
		*s = '/';
		if (rc != 0 && errno != EEXIST)
			return -errno;
	}
	return 0;
}

/* Read every line; *lines: how many there were. */
static int read_all(struct rt_ship_journal *j, size_t *lines)
{
	*lines = 0;
	FILE *f = fdopen(dup(j->fd), "r");
	if (!f)
		return -errno;
	char *line = malloc(LINE_MAX_BYTES);
	int rc = line ? 0 : -ENOMEM;
	int ends_whole = 1;
	while (!rc && fgets(line, LINE_MAX_BYTES, f)) {
		size_t n = strlen(line);
		ends_whole = n > 0 && line[n - 1] == '\n';
		if (!ends_whole)
			continue; /* cut short by a crash, or too long to be one of ours */
		line[n - 1] = 0;
		rc = take_line(j, line);
		++*lines;
	}
	free(line);
	fclose(f);
	/* end a line a crash cut short, or the next fact would be read as its end */
	if (!rc && !ends_whole && write(j->fd, "\n", 1) != 1)
		rc = -errno;
	return rc;
}

/* Write every entry as one line (done or not) into fd: 0, or -errno. */
static int write_entries(const struct rt_ship_journal *j, int fd)
{
	for (size_t i = 0; i < j->count; i++) {
		const struct entry *e = &j->entries[i];
		char line[LINE_MAX_BYTES];
		int n = snprintf(
		    line, sizeof(line), "%c %s %llu %llu\n", e->progress.done ? 'D' : 'B', e->key,
		    (unsigned long long)e->progress.size,
		    (unsigned long long)(e->progress.done ? e->progress.rows : e->progress.next));
		if (n < 0 || (size_t)n >= sizeof(line))
			return -ENAMETOOLONG;
		if (write(fd, line, (size_t)n) != n)
			return errno ? -errno : -EIO;
	}
	return fsync(fd) == 0 ? 0 : -errno;
}

/*
 * A journal of many more lines than files (a batch per line, over months)
 * is rewritten with one line per file, into a new file renamed over it.
 * Only when no other ship has it open (its shared lock): one that did
 * would append to the old file, and its lines would be lost (harmless, a
 * batch sent again, but not wanted).  Failing to compact is no error.
 */
static int compact(struct rt_ship_journal *j)
{
	if (flock(j->fd, LOCK_EX | LOCK_NB) != 0)
		return 0;
	size_t n = strlen(j->path) + 8;
	char *tmp = malloc(n);
	if (!tmp)
		return -ENOMEM;
	snprintf(tmp, n, "%s.new", j->path);
	/* new: never a file of that name someone else made (a stale one of ours goes first) */
	struct stat st;
	if (lstat(tmp, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid())
		unlink(tmp);
	int fd = open(tmp, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	int rc = fd < 0 ? -errno : write_entries(j, fd);
	if (rc == 0 && flock(fd, LOCK_SH) != 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, j->path) != 0)
		rc = -errno;
	if (rc) {
		if (fd >= 0)
			close(fd);
		if (fd >= 0)
			unlink(tmp);
		free(tmp);
		flock(j->fd, LOCK_SH);
		return 0;
	}
	free(tmp);
	close(j->fd);
	j->fd = fd;
	return 0;
}

struct rt_ship_journal *rt_ship_journal_open(const char *path, char *message, size_t message_size)
{
	struct rt_ship_journal *j = calloc(1, sizeof(*j));
	if (!j || !(j->path = strdup(path))) {
		free(j);
		snprintf(message, message_size, "out of memory");
		return NULL;
	}
	size_t lines = 0;
	struct stat st = {0};
	int rc = make_parents(j->path);
	j->fd = -1;
	if (rc == 0) {
		j->fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		/* shared: every ship that has it open; exclusive: only to compact it */
		if (j->fd < 0 || fstat(j->fd, &st) != 0 || flock(j->fd, LOCK_SH) != 0)
			rc = -errno;
		else if (st.st_uid != geteuid())
			rc = -EPERM; /* another user's: they would read and write what is sent */
		else
			rc = read_all(j, &lines);
	}
	if (rc == 0 && lines > 2 * j->count + COMPACT_SLACK)
		rc = compact(j);
	if (rc) {
		if (rc == -EPERM && j->fd >= 0)
			snprintf(message, message_size,
				 "journal %s exists and belongs to uid %lu, not to this user (uid "
				 "%lu): not used",
				 path, (unsigned long)st.st_uid, (unsigned long)geteuid());
		else
			snprintf(message, message_size, "journal %s: %s", path, strerror(-rc));
		rt_ship_journal_close(j);
		errno = -rc;
		return NULL;
	}
	return j;
}

void rt_ship_journal_close(struct rt_ship_journal *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	for (size_t i = 0; i < j->count; i++)
		free(j->entries[i].key);
	free(j->entries);
	free(j->path);
	free(j);
}

int rt_ship_journal_find(const struct rt_ship_journal *j, const char *dest, const char *host,
			 uint64_t file_id, uint32_t file_seq, struct rt_ship_progress *out)
{
	memset(out, 0, sizeof(*out));
	char *key = make_key(dest, host, file_id, file_seq);
	if (!key)
		return 0;
	const struct entry *e = find(j, key);
	free(key);
	if (!e)
		return 0;
	*out = e->progress;
	return 1;
}

int rt_ship_journal_record(struct rt_ship_journal *j, const char *dest, const char *host,
			   uint64_t file_id, uint32_t file_seq, const struct rt_ship_progress *p,
			   char *message, size_t message_size)
{
	char *key = make_key(dest, host, file_id, file_seq);
	if (!key) {
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	size_t n = strlen(key) + 64;
	char *line = malloc(n);
	if (!line) {
		free(key);
		snprintf(message, message_size, "out of memory");
		return -ENOMEM;
	}
	int length;
	length = snprintf(line, n, "%c %s %llu %llu\n", p->done ? 'D' : 'B', key,
			  (unsigned long long)p->size,
			  (unsigned long long)(p->done ? p->rows : p->next));
	/* one write of the whole line: O_APPEND keeps lines whole between writers */
	ssize_t w = write(j->fd, line, (size_t)length);
	int rc = 0;
	if (w != length)
		rc = w < 0 ? -errno : -EIO;
	else if (fdatasync(j->fd) != 0)
		rc = -errno;
	free(line);
	if (rc) {
		free(key);
		snprintf(message, message_size, "journal %s: %s", j->path, strerror(-rc));
		return rc;
	}
	return remember(j, key, p);
}

int rt_ship_journal_default_path(char *out, size_t size)
{
	const char *state = getenv("XDG_STATE_HOME");
	if (state && state[0] == '/') {
		snprintf(out, size, "%s/ringtrace/ship.journal", state);
		return 0;
	}
	const char *home = getenv("HOME");
	if (home && home[0] == '/') {
		snprintf(out, size, "%s/.local/state/ringtrace/ship.journal", home);
		return 0;
	}
	return -1;
}
