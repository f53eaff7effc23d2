/*
 * record_arenas.h - the arenas one `ringtrace record` drains: the program's,
 * at the path it was given, and those of the children it forks, at the same
 * path with their pid (P.PID.arena, or P.PID when P does not end in .arena:
 * the library's rule, src/record/arena.c).  Found by looking at the path and
 * scanning its directory, attached to the collector as soon as their header
 * is complete, finished when their process is gone (or detached, when it
 * closed its arena but runs on, or still runs when the recording ends).
 * An arena set aside as NAME.last by a later image of its process (an exec)
 * before it was attached is attached there, or at NAME.last.N where a yet
 * later image kept it meanwhile, if its process started with or after the
 * program.
 */
#ifndef RT_CMD_RECORD_ARENAS_H
#define RT_CMD_RECORD_ARENAS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "collect/collector.h"

struct rt_record_arena {
	char *path;
	dev_t dev;
	ino_t ino;
	uint64_t created; /* its header's start.mono_ns: with dev and ino, which arena */
	int source;	  /* collector source number, -1 while not attached */
	int32_t pid;	  /* from its header */
	uint64_t process_start;
	int32_t ppid;	/* its parent as /proc said when it was found, 0 if unknown */
	int32_t parent; /* the parent pid given to the collector */
	int finished;
	int shrunk; /* its file shrank while it was read: said, and the source detached */
};

struct rt_record_arenas {
	struct rt_collector *collector;
	const char *path; /* the program's arena, P */
	char *dir;	  /* P's directory */
	char *stem;	  /* P's name without its .arena suffix */
	int has_suffix;
	int32_t main_pid;
	uint64_t main_start; /* the program's start (clock ticks after boot), 0 if unknown */
	struct rt_record_arena *list;
	size_t count, capacity;
	int failed;	   /* the output failed: nothing more is written */
	int main_attached; /* P was attached once */
};

/* 0, or -ENOMEM. */
int rt_record_arenas_init(struct rt_record_arenas *a, struct rt_collector *c, const char *path,
			  int32_t main_pid);
void rt_record_arenas_free(struct rt_record_arenas *a);

/*
 * Attach the program's arena if it is ready, and with scan, the children's
 * found in the directory; finish those whose process ended.  Messages go to
 * stderr.  Returns how many were attached by this call.
 */
int rt_record_arenas_discover(struct rt_record_arenas *a, int scan);

/*
 * One collector pass.  Returns the records written, or -errno when the
 * output failed (said once on stderr; later calls return the same).
 */
int64_t rt_record_arenas_poll(struct rt_record_arenas *a);

/* The program ended: finish its source (its children's stay until close). */
void rt_record_arenas_finish_main(struct rt_record_arenas *a);

/*
 * End every source still attached: finished when its process is gone,
 * detached when it runs on (a child that outlives the program: a record it
 * is writing now is not torn).
 */
void rt_record_arenas_finish_all(struct rt_record_arenas *a);

/*
 * After the program ended: how many of the arenas found (its children's,
 * its daemons') belong to processes that still run and record into them:
 * not closed, their process not gone and their image not replaced by exec
 * (as the last rt_record_arenas_discover with scan saw them).
 */
int rt_record_arenas_attached_running(struct rt_record_arenas *a);

/*
 * Whether a descendant of root (record) that has no arena found yet maps
 * one of this recording's: forked from a process that recorded, it has
 * not recorded itself yet, and its first event will make its arena.  Reads
 * the process table and the descendants' maps: call it now and then.
 */
int rt_record_arenas_forked_waiting(struct rt_record_arenas *a, int32_t root);

/* Remove every arena of this recording, its .last and .last.N (private arenas only). */
void rt_record_arenas_remove(const struct rt_record_arenas *a);

/*
 * Remove the NAME.last.N this recording attached (a user's arena path):
 * kept only for record, they would not be there had it scanned sooner.
 */
void rt_record_arenas_remove_kept(const struct rt_record_arenas *a);

#endif /* RT_CMD_RECORD_ARENAS_H */
