/*
 * arena_list.c - finding arena files and describing them from their header.
 *
 * Files are opened with O_NOFOLLOW | O_NONBLOCK, and a directory entry is
 * only opened when it is a regular file, so that listing a directory never
 * follows a link, never hangs on a FIFO and never opens a device.  A file is
 * an arena when it starts with the arena magic; only then is it mapped (its
 * first page is all that is read) and its header checked.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/arena_names.h"
#include "common/file_data.h"
#include "decode/clock.h"
#include "format/arena_layout.h"
#include "format/records.h"
#include "read/arena_list.h"
#include "read/header_recovery.h"
#include "read/map_guard.h"

static int fail(struct rt_read_error *error, int err, const char *message)
{
	error->has_offset = 0;
	snprintf(error->message, sizeof(error->message), "%s", message ? message : strerror(err));
	return -err;
}

/* ---- how it ended ---------------------------------------------------- */

enum rt_arena_fate rt_arena_fate(const struct rt_arena_header *h, enum rt_writer_status writer)
{
	if (writer == RT_WRITER_RUNNING)
		return RT_FATE_RUNNING;
	/* a program whose own handler took a signal over and then exited closed it */
	if (h->state == RT_ARENA_CLOSED || h->end_reason == RT_END_EXIT)
		return RT_FATE_EXIT;
	if (h->end_reason == RT_END_SIGNAL)
		return RT_FATE_SIGNAL;
	if (h->end_reason == RT_END_EXEC)
		return RT_FATE_EXEC;
	return RT_FATE_KILLED;
}

const char *rt_signal_name(int sig)
{
#define NAME(s) [s] = #s
	static const char *const names[] = {
	    NAME(SIGHUP),  NAME(SIGINT),   NAME(SIGQUIT), NAME(SIGILL),	 NAME(SIGTRAP),
	    NAME(SIGABRT), NAME(SIGBUS),   NAME(SIGFPE),  NAME(SIGKILL), NAME(SIGUSR1),
	    NAME(SIGSEGV), NAME(SIGUSR2),  NAME(SIGPIPE), NAME(SIGALRM), NAME(SIGTERM),
	    NAME(SIGCHLD), NAME(SIGCONT),  NAME(SIGSTOP), NAME(SIGTSTP), NAME(SIGTTIN),
	    NAME(SIGTTOU), NAME(SIGURG),   NAME(SIGXCPU), NAME(SIGXFSZ), NAME(SIGVTALRM),
	    NAME(SIGPROF), NAME(SIGWINCH), NAME(SIGIO),	  NAME(SIGPWR),	 NAME(SIGSYS),
	};
#undef NAME
	if (sig <= 0 || (size_t)sig >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[sig];
}

int rt_signal_is_fault(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE;
}

void rt_arena_fate_text(enum rt_arena_fate fate, const struct rt_arena_header *h, char *out,
			size_t size)
{
	const char *name = rt_signal_name(h->end_signal);
	char number[24];
	if (!name) {
		snprintf(number, sizeof(number), "signal %d", (int)h->end_signal);
		name = number;
	}
	switch (fate) {
	case RT_FATE_RUNNING:
		snprintf(out, size, "running");
		break;
	case RT_FATE_EXIT:
		if (h->end_signal > 0)
			snprintf(out, size, "exited after %s", name);
		else
			snprintf(out, size, "exited");
		break;
	case RT_FATE_SIGNAL:
		if (rt_signal_is_fault(h->end_signal))
			snprintf(out, size, "%s at 0x%llx", name,
				 (unsigned long long)h->end_address);
		else
			snprintf(out, size, "%s", name);
		break;
	case RT_FATE_EXEC:
		snprintf(out, size, "replaced by exec");
		break;
	case RT_FATE_KILLED:
		snprintf(out, size, "killed or crashed");
		break;
	default:
		snprintf(out, size, "unreadable");
		break;
	}
}

/* ---- one file -------------------------------------------------------- */

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The clock of the newest record of any ring: a look at the slot below
 * each ring's head (and, when it continues a record, at that record's
 * head slot), believed only when the slot's own seq,
 * kind and slot count say it begins the record that ends at head.  One
 * page per ring used, however large the arena.
 */
static uint64_t newest_record_counter(const struct rt_arena_header *h, const unsigned char *file,
				      struct rt_file_data *data)
{
	uint64_t newest = 0;
	uint64_t slots = rt_layout_ring_slots(h);
	uint32_t rings = rt_layout_ring_count_used(h);
	const uint64_t each = sizeof(struct rt_ring_desc);
	/* descriptors and slots in holes are zeros (common/file_data.h): only data is read */
	for (uint32_t i =
		 (uint32_t)rt_file_data_next_entry(data, h->ring_desc_offset, each, 0, rings);
	     i < rings; i = (uint32_t)rt_file_data_next_entry(data, h->ring_desc_offset, each,
							      i + 1ull, rings)) {
		struct rt_ring_desc copy;
		const struct rt_ring_desc *d = rt_file_data_at(
		    data, file, rt_layout_ring_desc_offset(h, i), sizeof(copy), &copy);
		uint64_t head = __atomic_load_n(&d->head, __ATOMIC_ACQUIRE);
		if (head == 0)
			continue;
		const uint64_t ring = rt_layout_ring_offset(h, i);
		uint64_t seq = head - 1;
		union rt_slot buf;
		const union rt_slot *slot = rt_file_data_at(
		    data, file, ring + (seq & (slots - 1)) * RT_SLOT_SIZE, sizeof(buf), &buf);
		if (slot->head.seq != (uint32_t)seq)
			continue;
		if (slot->head.kind == RT_REC_CONT) {
			/* the last slot of a longer record says how far back its head is */
			unsigned index = slot->cont.index;
			if (index < 1 || index >= RT_LOG_MAX_SLOTS || index > seq)
				continue;
			seq -= index;
			slot =
			    rt_file_data_at(data, file, ring + (seq & (slots - 1)) * RT_SLOT_SIZE,
					    sizeof(buf), &buf);
			if (slot->head.seq != (uint32_t)seq)
				continue;
		}
		if ((slot->head.kind == RT_REC_TRACE || rt_record_has_payload(slot->head.kind)) &&
		    rt_record_head_ok(&slot->head, 1) && slot->head.nslots == head - seq &&
		    slot->head.counter > newest)
			newest = slot->head.counter;
	}
	return newest;
}

/* The time span of a checked header, from the header (and the rings' heads). */
static void describe_span(struct rt_arena_file *f, const struct rt_arena_header *live,
			  struct rt_file_data *data)
{
	const struct rt_arena_header *h = &f->header;
	struct rt_clock_pair sync;
	int have_sync = rt_timebase_read_sync(&live->sync, &sync);
	struct rt_timebase tb;
	if (rt_timebase_init(&tb, h->clock_source, h->counter_hz, &h->start,
			     have_sync ? &sync : NULL) != 0)
		return;
	uint64_t end = 0;
	enum rt_duration_basis basis = RT_DURATION_UNKNOWN;
	switch (f->fate) {
	case RT_FATE_RUNNING: {
		uint64_t now = monotonic_ns();
		if (now >= h->start.mono_ns) {
			f->duration_ns = (int64_t)(now - h->start.mono_ns);
			f->span = RT_DURATION_SO_FAR;
		}
		return;
	}
	case RT_FATE_EXIT:
	case RT_FATE_SIGNAL:
	case RT_FATE_EXEC:
		/* closing refreshes the sync pair: it stands in for an older writer's end */
		end = h->end_counter ? h->end_counter : have_sync ? sync.counter : 0;
		basis = RT_DURATION_TO_END;
		break;
	default: {
		/* no end recorded: the latest moment the arena shows the process alive */
		end = have_sync ? sync.counter : 0;
		if (h->synced_counter > end)
			end = h->synced_counter;
		uint64_t newest = newest_record_counter(h, (const unsigned char *)live, data);
		if (newest > end)
			end = newest;
		basis = RT_DURATION_AT_LEAST;
		break;
	}
	}
	if (end <= h->start.counter)
		return;
	f->duration_ns = rt_timebase_ns(&tb, end);
	f->span = basis;
}

static void describe(struct rt_arena_file *f, const unsigned char *file, uint64_t size,
		     struct rt_file_data *data)
{
	struct rt_layout_error layout;
	if (rt_header_check_data(data, size, &layout) != 0) {
		/* nothing to believe, not even a pid */
		memset(&f->header, 0, sizeof(f->header));
		f->problem.has_offset = 1;
		f->problem.offset = layout.offset;
		snprintf(f->problem.message, sizeof(f->problem.message), "%s", layout.message);
		f->fate = RT_FATE_UNREADABLE;
		f->running = 0;
		return;
	}
	if (rt_layout_check(file, size, &f->header, &layout) != 0) {
		/* an arena all the same: say what is wrong; its pid may still be believed */
		const struct rt_arena_header *h = &f->header;
		f->problem.has_offset = 1;
		f->problem.offset = layout.offset;
		snprintf(f->problem.message, sizeof(f->problem.message), "%s", layout.message);
		f->fate = RT_FATE_UNREADABLE;
		f->running = h->state != RT_ARENA_CLOSED && h->end_reason != RT_END_EXEC &&
			     rt_process_alive(h->pid, h->process_start);
		return;
	}
	const struct rt_arena_header *h = &f->header;
	f->checked = 1;
	enum rt_writer_status writer = rt_writer_status_of(h, 1);
	f->running = writer == RT_WRITER_RUNNING;
	f->fate = rt_arena_fate(h, writer);
	describe_span(f, (const struct rt_arena_header *)file, data);
}

int rt_arena_file_open(int dirfd, const char *name, struct rt_read_error *error)
{
	memset(error, 0, sizeof(*error));
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ELOOP)
			return fail(error, EINVAL, "a symbolic link, not an arena");
		return fail(error, errno, NULL);
	}
	return fd;
}

int rt_arena_file_read(int dirfd, const char *name, const char *path, struct rt_arena_file *f,
		       struct rt_read_error *error)
{
	memset(f, 0, sizeof(*f));
	int fd = rt_arena_file_open(dirfd, name, error);
	if (fd < 0)
		return fd;
	int rc = rt_arena_file_read_fd(fd, path, f, error);
	close(fd);
	return rc;
}

int rt_arena_file_read_fd(int fd, const char *path, struct rt_arena_file *f,
			  struct rt_read_error *error)
{
	memset(f, 0, sizeof(*f));
	memset(error, 0, sizeof(*error));
	struct stat st;
	char magic[8];
	int rc = 0;
	if (fstat(fd, &st) != 0) {
		rc = fail(error, errno, NULL);
	} else if (S_ISDIR(st.st_mode)) {
		rc = fail(error, EINVAL, "a directory, not an arena");
	} else if (!S_ISREG(st.st_mode)) {
		rc = fail(error, EINVAL, "not a regular file");
	} else if (pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
		   memcmp(magic, RT_ARENA_MAGIC, sizeof(magic)) != 0) {
		rc = fail(error, EINVAL, "not a ringtrace arena (bad magic)");
		error->has_offset = 1;
		error->offset = 0;
	}
	if (rc)
		return rc;
	void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	int err = errno;
	if (map == MAP_FAILED)
		return fail(error, err, NULL);
	f->path = strdup(path);
	if (!f->path) {
		munmap(map, (size_t)st.st_size);
		return fail(error, ENOMEM, NULL);
	}
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->uid = st.st_uid;
	f->disk_bytes = (uint64_t)st.st_blocks * 512u;
	f->file_bytes = (uint64_t)st.st_size;
	/* cut short by another process meanwhile: zeros past the cut, and an error */
	rt_map_guard_watch(map, (size_t)st.st_size, 0);
	struct rt_file_data data;
	rt_file_data_init(&data, fd);
	describe(f, map, (uint64_t)st.st_size, &data);
	uint64_t shrunk;
	if (rt_map_guard_shrunk(map, &shrunk)) {
		rc = fail(error, ENODATA,
			  "the file shrank while it was read (another process truncated it)");
		error->has_offset = 1;
		error->offset = shrunk;
	}
	rt_map_guard_forget(map);
	munmap(map, (size_t)st.st_size);
	if (rc) {
		rt_arena_file_free(f);
		return rc;
	}
	return 0;
}

void rt_arena_file_free(struct rt_arena_file *f)
{
	free(f->path);
	f->path = NULL;
}

/* ---- lists ----------------------------------------------------------- */

int rt_arena_list_add(struct rt_arena_list *list, struct rt_arena_file *f)
{
	if (list->count == list->capacity) {
		size_t capacity = list->capacity ? 2 * list->capacity : 16;
		struct rt_arena_file *files = realloc(list->files, capacity * sizeof(*files));
		if (!files)
			return -ENOMEM;
		list->files = files;
		list->capacity = capacity;
	}
	list->files[list->count++] = *f;
	memset(f, 0, sizeof(*f));
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

/*
 * A name the library gives: ringtrace-*.arena, its .last, or a .last.N
 * kept for `ringtrace record` (left behind if record was killed).
 */
static int default_name(const char *name)
{
	if (strncmp(name, RT_ARENA_PREFIX, strlen(RT_ARENA_PREFIX)) != 0)
		return 0;
	/* NAME.arena.last, and NAME.arena.last.N with its number taken off */
	size_t n = rt_arena_name_unkept(name, strlen(name));
	static const char last[] = RT_ARENA_SUFFIX RT_ARENA_LAST_SUFFIX;
	size_t k = sizeof(last) - 1;
	return (n >= k && memcmp(name + n - k, last, k) == 0) || ends_with(name, RT_ARENA_SUFFIX);
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir);
	int slash = n && dir[n - 1] == '/';
	size_t size = n + !slash + strlen(name) + 1;
	char *path = malloc(size);
	if (path)
		snprintf(path, size, "%s%s%s", dir, slash ? "" : "/", name);
	return path;
}

/* Whether the entry is a regular file, not following a link. */
static int regular_entry(int dirfd, const struct dirent *e)
{
	if (e->d_type != DT_UNKNOWN)
		return e->d_type == DT_REG;
	struct stat st;
	return fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

int rt_arena_list_dir(struct rt_arena_list *list, const char *dir, int default_names,
		      struct rt_read_error *error)
{
	memset(error, 0, sizeof(*error));
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return fail(error, errno, NULL);
	DIR *d = fdopendir(dirfd);
	if (!d) {
		int err = errno;
		close(dirfd);
		return fail(error, err, NULL);
	}
	int rc = 0;
	struct dirent *e;
	while (!rc && (errno = 0, e = readdir(d)) != NULL) {
		const char *name = e->d_name;
		if (default_names && !default_name(name))
			continue;
		if (!regular_entry(dirfd, e))
			continue;
		char *path = join(dir, name);
		if (!path) {
			rc = fail(error, ENOMEM, NULL);
			break;
		}
		struct rt_arena_file f;
		struct rt_read_error why;
		int r = rt_arena_file_read(dirfd, name, path, &f, &why);
		free(path);
		if (r == 0) {
			if (rt_arena_list_add(list, &f) != 0) {
				rt_arena_file_free(&f);
				rc = fail(error, ENOMEM, NULL);
			}
		} else if ((r == -EACCES || r == -EPERM) && default_name(name)) {
			list->unreadable++; /* most likely another user's */
		}
		/* anything else is not an arena, or went away meanwhile */
	}
	if (!rc && errno)
		rc = fail(error, errno, NULL);
	closedir(d);
	return rc;
}

static int by_file(const void *a, const void *b)
{
	const struct rt_arena_file *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return strcmp(x->path, y->path);
}

static int by_path(const void *a, const void *b)
{
	const struct rt_arena_file *x = a, *y = b;
	return strcmp(x->path, y->path);
}

void rt_arena_list_sort(struct rt_arena_list *list)
{
	if (!list->count)
		return;
	qsort(list->files, list->count, sizeof(*list->files), by_file);
	size_t kept = 1;
	for (size_t i = 1; i < list->count; i++) {
		struct rt_arena_file *f = &list->files[i];
		const struct rt_arena_file *prev = &list->files[kept - 1];
		if (f->dev == prev->dev && f->ino == prev->ino)
			rt_arena_file_free(f);
		else
			list->files[kept++] = *f;
	}
	list->count = kept;
	qsort(list->files, list->count, sizeof(*list->files), by_path);
}

void rt_arena_list_free(struct rt_arena_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		rt_arena_file_free(&list->files[i]);
	free(list->files);
	memset(list, 0, sizeof(*list));
}

char *rt_arena_last_path(const char *path)
{
	size_t size = strlen(path) + sizeof(RT_ARENA_LAST_SUFFIX);
	char *last = malloc(size);
	if (last)
		snprintf(last, size, "%s" RT_ARENA_LAST_SUFFIX, path);
	return last;
}
