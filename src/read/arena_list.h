/*
 * arena_list.h - finding arena files and describing them from their header
 * alone, for `ringtrace ls` and `ringtrace rm`.
 *
 * Describing an arena this way costs one open, one fstat and a look at its
 * first page, however large the arena: no ring is decoded.  What the header
 * says is checked (format/arena_layout.h) before it is believed; a file with
 * the arena magic whose header does not check is still listed (and may be
 * removed), as "unreadable", with what is wrong.
 *
 * How its process ended is told by rt_arena_fate() from the header and the
 * writer status, the same words for ls and info.
 */
#ifndef RT_READ_ARENA_LIST_H
#define RT_READ_ARENA_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "read/arena_reader.h"
#include "ringtrace/format.h"

/* How the process that wrote an arena is doing, or how it ended. */
enum rt_arena_fate {
	RT_FATE_RUNNING = 1,	/* the process still runs */
	RT_FATE_EXIT = 2,	/* it closed the arena: exit() or ringtrace_shutdown() */
	RT_FATE_SIGNAL = 3,	/* a fatal signal reached the crash handler */
	RT_FATE_KILLED = 4,	/* gone without a word: SIGKILL, the OOM killer, ... */
	RT_FATE_UNREADABLE = 5, /* the header does not check: nobody knows */
	RT_FATE_EXEC = 6,	/* its image was replaced by exec (the pid may run on) */
};

/* How far duration_ns reaches. */
enum rt_duration_basis {
	RT_DURATION_UNKNOWN = 0,  /* not known */
	RT_DURATION_TO_END = 1,	  /* to the end the process recorded (end_counter) */
	RT_DURATION_AT_LEAST = 2, /* to the latest clock reading in the header: a lower bound */
	RT_DURATION_SO_FAR = 3,	  /* the process runs: to now */
};

/* One file that holds an arena (it starts with the arena magic). */
struct rt_arena_file {
	char *path; /* malloc'd */
	dev_t dev;
	ino_t ino;
	uid_t uid;
	uint64_t disk_bytes; /* st_blocks * 512: arenas are sparse, st_size says little */
	uint64_t file_bytes; /* st_size */
	/* the header: believed only when checked */
	int checked;
	struct rt_arena_header header;
	struct rt_read_error problem; /* when not checked: what is wrong, and where */
	int running; /* its process still runs (pid and start time), its image not replaced */
	enum rt_arena_fate fate;
	enum rt_duration_basis span;
	int64_t duration_ns; /* from start.wall_ns, as span says */
};

struct rt_arena_list {
	struct rt_arena_file *files;
	size_t count;
	size_t capacity;
	size_t unreadable; /* files that looked like arenas but could not be opened */
};

/*
 * Describe the file name (relative to dirfd; AT_FDCWD for the current
 * directory) that path names for messages.  The file is opened without
 * following a symbolic link.  Returns 0 and fills *f (free it with
 * rt_arena_file_free), or with *error filled:
 *   -EINVAL  not an arena: not a regular file, or no arena magic
 *   -errno   the file cannot be opened or read
 */
int rt_arena_file_read(int dirfd, const char *name, const char *path, struct rt_arena_file *f,
		       struct rt_read_error *error);
/*
 * The file name (relative to dirfd) opened read-only as rt_arena_file_read()
 * opens it: a descriptor, or -errno with *error filled.
 */
int rt_arena_file_open(int dirfd, const char *name, struct rt_read_error *error);
/* rt_arena_file_read() of the file open at fd (left open: the caller's). */
int rt_arena_file_read_fd(int fd, const char *path, struct rt_arena_file *f,
			  struct rt_read_error *error);
void rt_arena_file_free(struct rt_arena_file *f);

/*
 * Add every arena in directory dir to list (not its subdirectories).  With
 * default_names, only the names the library gives (ringtrace-*.arena, their
 * .last and .last.N); else every regular file with the arena magic.  Returns 0,
 * or -errno (with *error) when the directory cannot be read or memory runs
 * out.
 */
int rt_arena_list_dir(struct rt_arena_list *list, const char *dir, int default_names,
		      struct rt_read_error *error);
/* Add a described file (taking it over).  Returns 0 or -ENOMEM. */
int rt_arena_list_add(struct rt_arena_list *list, struct rt_arena_file *f);
/* Sort by path and drop a file listed twice (same device and inode). */
void rt_arena_list_sort(struct rt_arena_list *list);
void rt_arena_list_free(struct rt_arena_list *list);

/* path + RT_ARENA_LAST_SUFFIX, malloc'd (NULL when out of memory). */
char *rt_arena_last_path(const char *path);

/* How the writer of a checked header is doing or ended. */
enum rt_arena_fate rt_arena_fate(const struct rt_arena_header *h, enum rt_writer_status writer);
/* "SIGSEGV" for 11, ..., or NULL for a number without a name here. */
const char *rt_signal_name(int sig);
/* Whether the signal is a fault, whose address (end_address) says where. */
int rt_signal_is_fault(int sig);
/*
 * A few words for the fate, into out: "running", "exited",
 * "SIGSEGV at 0x10", "SIGABRT", "replaced by exec", "killed or crashed",
 * "unreadable".
 */
void rt_arena_fate_text(enum rt_arena_fate fate, const struct rt_arena_header *h, char *out,
			size_t size);

#endif /* RT_READ_ARENA_LIST_H */
