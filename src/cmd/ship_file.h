/*
 * ship_file.h - `ringtrace ship` of one trace file into the table: every
 * item of the file, in time order, as rows in batches; each batch the
 * server acknowledged is recorded in the journal before the next goes; at
 * the end the server's count of the file's distinct rows must be the
 * file's count.  A command's part, not ship/'s: it ends in the exit status
 * every command that reads inputs shares (cmd/cmd.h).
 */
#ifndef RT_CMD_SHIP_FILE_H
#define RT_CMD_SHIP_FILE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "ship/http.h"
#include "ship/journal.h"

/* Where rows go, and how: the same for every file of a run. */
struct rt_ship_target {
	struct rt_ship_http *http;
	const char *table;
	const char *dest;    /* the URL without its password, '#', the table: the journal's key */
	const char *url;     /* for messages: without the password */
	const char *columns; /* "(host, file_id, ...)" */
	struct rt_ship_journal *journal;
	const char *host; /* --host, or NULL: the file's */
	size_t batch_rows;
	unsigned retry_seconds;
	const char *const *debug_dirs;
	size_t debug_dir_count;
	volatile sig_atomic_t *stop; /* set by a signal: stop between batches */
};

struct rt_ship_file_result {
	uint64_t rows;	/* the file's */
	uint64_t sent;	/* rows this run sent */
	uint64_t first; /* the first row this run sent (a resumed file: where it resumed) */
	int already;	/* the journal said done: nothing was read */
	int finished;	/* the file's END says the recording ended there */
	uint64_t file_id;
	uint32_t file_seq;
	uint64_t damaged_payloads; /* log messages and I/O records shipped marked */
};

/*
 * Ship the trace file at path.  Returns the command's status: 0, 1 when
 * shipping failed or was interrupted (said on stderr), 2 when the file
 * cannot be read as a trace file, 3 when it was damaged (what it held was
 * shipped, its losses as rows).  unfinished: ship a file without END too.
 */
int rt_ship_file(const struct rt_ship_target *t, const char *path, int unfinished,
		 struct rt_ship_file_result *r);

#endif /* RT_CMD_SHIP_FILE_H */
