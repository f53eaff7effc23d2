/*
 * record_arenas.c - finding, attaching and finishing the arenas of one
 * `ringtrace record` (record_arenas.h).
 *
 * The program makes its arena on its first event, maybe never; a child
 * makes its own on its first event after fork(), named after the program's
 * with its pid.  Nothing tells the collector when either appears, so the
 * program's path is tried on every pass until it is attached, and the
 * directory is scanned every few milliseconds for children.  A file is
 * known by device and inode, so a name reused by a new arena (a child that
 * traced, then exec'd a traced program) is attached again; and by the time
 * its header says it was made, for an inode number is reused too, once an
 * arena replaced at its name is no longer mapped (known()).
 *
 * A source is finished (a record in the making is torn) only when its
 * process is known to be gone: the program once waitpid() returned, a child
 * once /proc no longer shows its pid with its start time, or its image
 * once it was replaced by exec (the arena says so, and the process no
 * longer maps it: an exec that fails takes the word back, and its image
 * records on).  A child that closed its arena but runs on, or still runs
 * when the program ends, is detached instead.
 *
 * An image that exec's keeps its pid, and so its arena's name: the new
 * image's library sets the old arena aside as NAME.last (arena_last.c) and
 * makes its own.  An old arena not attached by then (a child that traced
 * and exec'd between two scans) would be lost, and silently, for no loss is
 * counted in an arena nobody reads; so the scan attaches NAME.last too, for
 * the program's name and its children's, when its process started with or
 * after the program: a previous run's, kept beside a user's arena path, is
 * older.  An image that execs again before the scan would set a second
 * arena aside over the first: told record's pid (RINGTRACE_COLLECTOR), the
 * library then keeps the first as NAME.last.N (N from 1 to 16), which the
 * scan attaches the same way.  Those are there only for record: at the end
 * it removes them, with every other arena of a private path, and for a
 * user's path those it attached (rt_record_arenas_remove_kept), so that a
 * user's directory is left as a scan in time would have left it.
 *
 * Parents: the arena does not name its parent, so /proc does while the
 * child runs; a child whose parent's arena is attached after its own (the
 * directory lists names in any order) gets its parent once that happens.
 *
 * After the program: record goes on while a process of the recording still
 * records (rt_record_arenas_recording).  One whose arena is attached does
 * until it ends or closes the arena (finish_ended()).  One forked from a
 * process that recorded has no arena before its first event, and nothing
 * in the directory says it exists: it is found among record's descendants
 * (record is their subreaper: a daemon's parent that exits leaves it to
 * record, not to init) by the arena of its parent it still maps; the
 * library keeps that mapping until the child's first event, to copy its
 * sites from (src/record/arena.c).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cmd/record_arenas.h"
#include "common/escape.h"
#include "common/arena_names.h"
#include "common/proc_stat.h"
#include "read/arena_reader.h"

#define NOT_ATTACHED (-1)
#define REFUSED (-2) /* the collector said no for good: not tried again */

int rt_record_arenas_init(struct rt_record_arenas *a, struct rt_collector *c, const char *path,
			  int32_t main_pid)
{
	memset(a, 0, sizeof(*a));
	a->collector = c;
	a->path = path;
	a->main_pid = main_pid;
	char stat_path[64];
	struct rt_proc_stat st;
	rt_proc_stat_path(stat_path, sizeof(stat_path), (int)main_pid, 0);
	if (rt_proc_stat_read(stat_path, &st) == 0)
		a->main_start = st.start_time;
	const char *slash = strrchr(path, '/');
	a->dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	const char *name = slash ? slash + 1 : path;
	size_t n = strlen(name);
	size_t suffix = sizeof(RT_ARENA_SUFFIX) - 1;
	a->has_suffix = n > suffix && strcmp(name + n - suffix, RT_ARENA_SUFFIX) == 0;
	a->stem = strndup(name, a->has_suffix ? n - suffix : n);
	if (!a->dir || !a->stem) {
		rt_record_arenas_free(a);
		return -ENOMEM;
	}
	return 0;
}

void rt_record_arenas_free(struct rt_record_arenas *a)
{
	for (size_t i = 0; i < a->count; i++)
		free(a->list[i].path);
	free(a->list);
	free(a->dir);
	free(a->stem);
	memset(a, 0, sizeof(*a));
}

/* Whether name is STEM.PID[.arena], a child's arena of this recording. */
static int is_child_name(const struct rt_record_arenas *a, const char *name)
{
	size_t n = strlen(a->stem);
	if (strncmp(name, a->stem, n) != 0 || name[n] != '.')
		return 0;
	const char *p = name + n + 1;
	const char *digits = p;
	while (*p >= '0' && *p <= '9')
		p++;
	if (p == digits || p - digits > 10)
		return 0;
	return a->has_suffix ? strcmp(p, RT_ARENA_SUFFIX) == 0 : *p == 0;
}

/*
 * Whether name is an arena set aside by an exec: P's name or a child's,
 * then .last (1) or .last.N (2, kept by a later image for record).
 */
static int is_set_aside_name(const struct rt_record_arenas *a, const char *name)
{
	size_t whole = strlen(name), suffix = sizeof(RT_ARENA_LAST_SUFFIX) - 1;
	size_t n = rt_arena_name_unkept(name, whole);
	int kept = n == whole ? 1 : 2;
	if (n <= suffix || strncmp(name + n - suffix, RT_ARENA_LAST_SUFFIX, suffix) != 0)
		return 0;
	char arena[256];
	if (n - suffix >= sizeof(arena))
		return 0;
	memcpy(arena, name, n - suffix);
	arena[n - suffix] = 0;
	const char *slash = strrchr(a->path, '/');
	if (strcmp(arena, slash ? slash + 1 : a->path) != 0 && !is_child_name(a, arena))
		return 0;
	return kept;
}

/* The header of the arena at path, if it is one and complete; its identity. */
static int read_header(const char *path, struct rt_arena_header *h, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT; /* gone, or not ours to read: either way not an arena to attach */
	int r = 0;
	if (fstat(fd, st) != 0)
		r = -EIO;
	else if (!S_ISREG(st->st_mode))
		r = -ENODEV;
	else if (pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h))
		r = -EAGAIN; /* being created: the size comes first */
	else if (memcmp(h->magic, RT_ARENA_MAGIC, sizeof(h->magic)) != 0)
		r = -EINVAL;
	else if (__atomic_load_n(&h->state, __ATOMIC_RELAXED) == RT_ARENA_CREATING)
		r = -EBUSY; /* being created: its header is not complete yet */
	close(fd);
	return r;
}

/* The parent of pid from /proc (field 4 of stat), or 0 when it is gone. */
static int32_t parent_of(int32_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the name may hold anything but this is last */
	/* ") S PPID ...": skip the state letter, then the parent's pid */
	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return 0;
	char *end;
	long ppid = strtol(p + 4, &end, 10);
	if (end == p + 4 || ppid <= 0 || ppid > INT32_MAX)
		return 0;
	return (int32_t)ppid;
}

/*
 * The entry of the arena with this identity.  Device and inode alone are
 * not one: an arena set aside and replaced since lives on only in the
 * collector's mapping, and once its source is finished the file system
 * may give its inode number to a new arena (ext4 does, at once).  The time
 * the header says the arena was made tells them apart.
 */
static struct rt_record_arena *known(struct rt_record_arenas *a, const struct stat *st,
				     const struct rt_arena_header *h)
{
	for (size_t i = 0; i < a->count; i++)
		if (a->list[i].dev == st->st_dev && a->list[i].ino == st->st_ino &&
		    a->list[i].created == h->start.mono_ns)
			return &a->list[i];
	return NULL;
}

static struct rt_record_arena *add(struct rt_record_arenas *a, const char *path,
				   const struct stat *st, const struct rt_arena_header *h)
{
	if (a->count == a->capacity) {
		size_t cap = a->capacity ? a->capacity * 2 : 8;
		struct rt_record_arena *l = realloc(a->list, cap * sizeof(*l));
		if (!l)
			return NULL;
		a->list = l;
		a->capacity = cap;
	}
	struct rt_record_arena *e = &a->list[a->count];
	memset(e, 0, sizeof(*e));
	e->path = strdup(path);
	if (!e->path)
		return NULL;
	e->dev = st->st_dev;
	e->ino = st->st_ino;
	e->created = h->start.mono_ns;
	e->source = NOT_ATTACHED;
	a->count++;
	return e;
}

/*
 * Attach the arena at path if it is new and ready; 1 when attached.  One
 * set aside (NAME.last) only if its process started with the program or
 * later: it is then one of this recording's.
 */
static int try_attach(struct rt_record_arenas *a, const char *path, int is_main, int set_aside)
{
	struct rt_arena_header h;
	struct stat st;
	if (read_header(path, &h, &st) != 0)
		return 0;
	if (set_aside) {
		if (!a->main_start || h.process_start < a->main_start)
			return 0;
		is_main = h.pid == a->main_pid;
	}
	struct rt_record_arena *e = known(a, &st, &h);
	if (e && e->source != NOT_ATTACHED)
		return 0;
	if (!e && !(e = add(a, path, &st, &h)))
		return 0;
	if (strcmp(e->path, path) != 0) {
		/* seen under its first name, set aside since: known by this one now */
		char *moved = strdup(path);
		if (!moved)
			return 0;
		free(e->path);
		e->path = moved;
	}
	e->pid = h.pid;
	e->process_start = h.process_start;
	int32_t parent = 0;
	if (!is_main) {
		/*
		 * The parent as /proc says while the child runs, once its arena is
		 * attached too (fix_parents); until then, and for a child found after
		 * it ended or orphaned, the program.
		 */
		e->ppid = parent_of(h.pid);
		parent = a->main_pid;
		for (size_t i = 0; i < a->count; i++)
			if (e->ppid > 0 && a->list[i].pid == e->ppid && a->list[i].source >= 0)
				parent = e->ppid;
	}
	e->parent = parent;
	char message[512];
	/* the file read above: the name may lead to another by now (an exec) */
	int r = rt_collector_attach_file(a->collector, path, st.st_dev, st.st_ino, parent, message,
					 sizeof(message));
	if (r == -EAGAIN)
		return 0;
	if (r < 0) {
		e->source = REFUSED;
		fprintf(stderr, "ringtrace record: %s: not recorded: %s\n", rt_escaped(path),
			rt_escaped(message));
		return 0;
	}
	e->source = r;
	return 1;
}

/*
 * Whether e's arena shrank while it was read (someone truncated it): said
 * once; the collector detached its source then, and what was recorded of
 * it so far stays in the trace.
 */
static int shrunk(struct rt_record_arenas *a, struct rt_record_arena *e)
{
	uint64_t offset;
	if (e->shrunk)
		return 1;
	if (e->source < 0 || !rt_collector_source_shrunk(a->collector, e->source, &offset))
		return 0;
	fprintf(stderr,
		"ringtrace record: %s: the file shrank while it was read (another process "
		"truncated it): bytes from %llu on are damage; nothing more of it is recorded\n",
		rt_escaped(e->path), (unsigned long long)offset);
	e->shrunk = 1;
	e->finished = 1;
	return 1;
}

/* End e's source: finished if its process is gone, else detached. */
static void end_source(struct rt_record_arenas *a, struct rt_record_arena *e, int gone)
{
	char message[512];
	int r = 0;
	if (shrunk(a, e))
		return;
	if (!a->failed)
		r = gone ? rt_collector_finish_source(a->collector, e->source, message,
						      sizeof(message))
			 : rt_collector_detach_source(a->collector, e->source, message,
						      sizeof(message));
	if (r < 0)
		fprintf(stderr, "ringtrace record: %s: %s\n", rt_escaped(e->path),
			rt_escaped(message));
	e->finished = 1;
	shrunk(a, e); /* in its last pass */
}

/* A line of /proc/PID/maps: "START-END PERMS OFFSET MAJOR:MINOR INODE PATH". */
typedef int maps_line_fn(const char *line, const void *what);

/* Whether a line of /proc/PID/maps matches (0 when the process is gone). */
static int maps_any(int32_t pid, maps_line_fn *matches, const void *what)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	char *line = NULL;
	size_t cap = 0;
	int found = 0;
	while (!found && getline(&line, &cap, f) > 0)
		found = matches(line, what);
	free(line);
	fclose(f);
	return found;
}

struct file_id {
	dev_t dev;
	ino_t ino;
};

static int line_maps_file(const char *line, const void *what)
{
	const struct file_id *id = what;
	unsigned int file_major, file_minor;
	unsigned long long file_ino;
	/* the device's numbers in hex; a line the kernel wrote, all three fields checked */
	// NOLINTNEXTLINE(cert-err34-c)
	int n = sscanf(line, "%*s %*s %*s %x:%x %llu", &file_major, &file_minor, &file_ino);
	return n == 3 && file_ino == (unsigned long long)id->ino && file_major == major(id->dev) &&
	       file_minor == minor(id->dev);
}

/* Whether /proc/PID/maps shows a mapping of the file dev:ino. */
static int maps_file(int32_t pid, dev_t dev, ino_t ino)
{
	const struct file_id id = {dev, ino};
	return maps_any(pid, line_maps_file, &id);
}

/* Whether e's arena says its image was replaced by exec, and the exec is done. */
static int replaced(const struct rt_record_arenas *a, const struct rt_record_arena *e)
{
	return rt_collector_source_replaced(a->collector, e->source) &&
	       (!rt_process_alive(e->pid, e->process_start) || !maps_file(e->pid, e->dev, e->ino));
}

/*
 * End the sources of images replaced by exec (the program's too), and of
 * children that ended or closed their arena.
 */
static void finish_ended(struct rt_record_arenas *a)
{
	for (size_t i = 0; i < a->count; i++) {
		struct rt_record_arena *e = &a->list[i];
		if (e->source < 0 || e->finished)
			continue;
		if (replaced(a, e)) {
			end_source(a, e, 1);
			continue;
		}
		if (e->pid == a->main_pid)
			continue;
		if (!rt_process_alive(e->pid, e->process_start)) {
			end_source(a, e, 1);
			continue;
		}
		struct rt_arena_header h;
		struct stat st;
		if (read_header(e->path, &h, &st) == 0 && st.st_ino == e->ino &&
		    st.st_dev == e->dev && h.start.mono_ns == e->created &&
		    h.state == RT_ARENA_CLOSED)
			end_source(a, e, 0);
	}
}

/* Children attached before their parent: the parent /proc named, now that it is a source. */
static void fix_parents(struct rt_record_arenas *a)
{
	for (size_t i = 0; i < a->count; i++) {
		struct rt_record_arena *e = &a->list[i];
		if (e->source < 0 || e->finished || e->ppid <= 0 || e->parent == e->ppid)
			continue;
		for (size_t k = 0; k < a->count; k++) {
			if (a->list[k].pid != e->ppid || a->list[k].source < 0)
				continue;
			char message[512];
			if (!a->failed && rt_collector_set_parent(a->collector, e->source, e->ppid,
								  message, sizeof(message)) < 0)
				fprintf(stderr, "ringtrace record: %s: %s\n", rt_escaped(e->path),
					rt_escaped(message));
			e->parent = e->ppid;
			break;
		}
	}
}

int rt_record_arenas_discover(struct rt_record_arenas *a, int scan)
{
	int attached = 0;
	if (a->failed)
		return 0;
	/* once attached, P is looked at again only when scanning: a new image may replace it */
	if (!a->main_attached || scan)
		a->main_attached |= (attached += try_attach(a, a->path, 1, 0)) > 0;
	if (!scan)
		return attached;
	DIR *d = opendir(a->dir);
	if (d) {
		struct dirent *de;
		char path[4096];
		while ((de = readdir(d)) != NULL) {
			int set_aside = is_set_aside_name(a, de->d_name);
			if (!set_aside && !is_child_name(a, de->d_name))
				continue;
			if ((size_t)snprintf(path, sizeof(path), "%s/%s", a->dir, de->d_name) >=
			    sizeof(path))
				continue;
			attached += try_attach(a, path, 0, set_aside);
		}
		closedir(d);
	}
	if (attached)
		fix_parents(a);
	finish_ended(a);
	return attached;
}

int64_t rt_record_arenas_poll(struct rt_record_arenas *a)
{
	if (a->failed)
		return a->failed;
	char message[512];
	int64_t n = rt_collector_poll(a->collector, message, sizeof(message));
	if (n < 0) {
		a->failed = (int)n;
		fprintf(stderr,
			"ringtrace record: %s; nothing more is recorded, the program runs on\n",
			rt_escaped(message));
	}
	for (size_t i = 0; i < a->count; i++)
		if (!a->list[i].finished)
			shrunk(a, &a->list[i]);
	return n;
}

static void finish(struct rt_record_arenas *a, int main_only)
{
	for (size_t i = 0; i < a->count; i++) {
		struct rt_record_arena *e = &a->list[i];
		if (e->source < 0 || e->finished || (main_only && e->pid != a->main_pid))
			continue;
		/* the program was reaped: it is gone; a child may run on */
		end_source(a, e,
			   e->pid == a->main_pid || !rt_process_alive(e->pid, e->process_start));
	}
}

void rt_record_arenas_finish_main(struct rt_record_arenas *a)
{
	finish(a, 1);
}

void rt_record_arenas_finish_all(struct rt_record_arenas *a)
{
	finish(a, 0);
}

/* Unlink the names of a's directory that are its arenas (all, or the kept ones it attached). */
static void remove_names(const struct rt_record_arenas *a, int kept_only)
{
	DIR *d = opendir(a->dir);
	if (!d)
		return;
	struct dirent *de;
	char path[4096];
	while ((de = readdir(d)) != NULL) {
		int set_aside = is_set_aside_name(a, de->d_name);
		if (kept_only ? set_aside != 2 : !set_aside && !is_child_name(a, de->d_name))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", a->dir, de->d_name) >=
		    sizeof(path))
			continue;
		struct rt_arena_header h;
		struct stat st;
		const struct rt_record_arena *e;
		if (kept_only &&
		    (read_header(path, &h, &st) != 0 ||
		     !(e = known((struct rt_record_arenas *)a, &st, &h)) || e->source < 0))
			continue;
		unlink(path);
	}
	closedir(d);
}

void rt_record_arenas_remove(const struct rt_record_arenas *a)
{
	char last[4096 + sizeof(RT_ARENA_LAST_SUFFIX)];
	unlink(a->path);
	if ((size_t)snprintf(last, sizeof(last), "%s" RT_ARENA_LAST_SUFFIX, a->path) < sizeof(last))
		unlink(last);
	remove_names(a, 0);
}

void rt_record_arenas_remove_kept(const struct rt_record_arenas *a)
{
	remove_names(a, 1);
}

int rt_record_arenas_attached_running(struct rt_record_arenas *a)
{
	int n = 0;
	for (size_t i = 0; i < a->count; i++) {
		const struct rt_record_arena *e = &a->list[i];
		if (e->pid == a->main_pid || e->source == REFUSED || e->finished)
			continue;
		/* one not attached yet (its header was not complete) counts while it runs */
		if (e->source >= 0 || rt_process_alive(e->pid, e->process_start))
			n++;
	}
	return n;
}

struct process {
	int32_t pid, parent;
};

/* The process table, from /proc: how many, or -1 (out of memory). */
static ssize_t process_table(struct process **table)
{
	*table = NULL;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	size_t n = 0, cap = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (pid <= 0 || pid > INT32_MAX || *end)
			continue;
		int32_t parent = parent_of((int32_t)pid);
		if (parent <= 0)
			continue;
		if (n == cap) {
			size_t grown = cap ? cap * 2 : 256;
			struct process *t = realloc(*table, grown * sizeof(*t));
			if (!t) {
				closedir(d);
				free(*table);
				*table = NULL;
				return -1;
			}
			*table = t;
			cap = grown;
		}
		(*table)[n].pid = (int32_t)pid;
		(*table)[n].parent = parent;
		n++;
	}
	closedir(d);
	return (ssize_t)n;
}

/* An arena's path prefix (DIR/STEM) and its length. */
struct arena_prefix {
	const char *prefix;
	size_t length;
};

static int line_maps_arena(const char *line, const void *what)
{
	const struct arena_prefix *p = what;
	const char *file = strchr(line, '/');
	if (!file || strncmp(file, p->prefix, p->length) != 0)
		return 0;
	char next = file[p->length];
	return next == '.' || next == '\n' || next == ' ' || next == 0;
}

/*
 * Whether pid maps an arena of this recording: a file whose path is
 * prefix (DIR/STEM, prefix_length bytes) followed by '.' or nothing.
 */
static int maps_arena(int32_t pid, const char *prefix, size_t prefix_length)
{
	const struct arena_prefix p = {prefix, prefix_length};
	return maps_any(pid, line_maps_arena, &p);
}

/* Whether a has an arena of pid. */
static int has_arena_of(const struct rt_record_arenas *a, int32_t pid)
{
	for (size_t i = 0; i < a->count; i++)
		if (a->list[i].pid == pid)
			return 1;
	return 0;
}

int rt_record_arenas_forked_waiting(struct rt_record_arenas *a, int32_t root)
{
	char *dir = realpath(a->dir, NULL);
	if (!dir)
		return 0;
	char prefix[8192];
	int w =
	    snprintf(prefix, sizeof(prefix), "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, a->stem);
	free(dir);
	if (w < 0 || (size_t)w >= sizeof(prefix))
		return 0;
	struct process *table;
	ssize_t n = process_table(&table);
	if (n <= 0)
		return 0;
	/* root's descendants, breadth first: found[0, done) have had their children looked for */
	int32_t *found = malloc((size_t)n * sizeof(*found));
	size_t count = 0, done = 0;
	int waiting = 0;
	if (found) {
		int32_t parent = root;
		for (;;) {
			for (ssize_t i = 0; i < n && count < (size_t)n; i++)
				if (table[i].parent == parent)
					found[count++] = table[i].pid;
			if (done == count)
				break;
			parent = found[done++];
		}
		for (size_t i = 0; i < count && !waiting; i++)
			if (!has_arena_of(a, found[i]))
				waiting = maps_arena(found[i], prefix, (size_t)w);
	}
	free(found);
	free(table);
	return waiting;
}
