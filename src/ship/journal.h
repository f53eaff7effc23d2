/*
 * journal.h - what a server has acknowledged, kept on the shipping
 * machine so that a `ringtrace ship` stopped at any point (killed, the
 * machine down, the server gone) goes on where it stopped.
 *
 * A text file of one line per fact, appended and flushed to disk
 * (fdatasync) before the next batch goes:
 *
 *   B DEST HOST FILE_ID FILE_SEQ SIZE NEXT   the server holds the file's rows [0, NEXT)
 *   D DEST HOST FILE_ID FILE_SEQ SIZE ROWS   and it counted all ROWS of them: done
 *
 * SIZE is the file's size in bytes then: a file that has an END block
 * never changes, and one shipped without it must not have grown since, or
 * its rows would no longer be the ones the server holds.
 *
 * DEST is the server's URL (without user and password) and the table,
 * "URL#TABLE"; fields are separated by one space, and any byte of a field
 * that is not printable ASCII, a space or '%' is written %XX.  A line cut
 * short by a crash is ignored: its batch is sent again, and the table
 * keeps one copy of each row (ship/schema.h).  The newest line of a file
 * counts.  Several ships may share a journal (lines are appended whole);
 * one that opens a journal of many more lines than files, and finds no
 * other ship using it, rewrites it with a line per file.
 */
#ifndef RT_SHIP_JOURNAL_H
#define RT_SHIP_JOURNAL_H

#include <stddef.h>
#include <stdint.h>

struct rt_ship_journal;

/* Where a file stands in the journal. */
struct rt_ship_progress {
	uint64_t size; /* the file's size in bytes, when it was shipped */
	uint64_t next; /* the first row the server may not hold */
	uint64_t rows; /* done: the file's rows */
	int done;      /* the server counted them all */
};

/*
 * Open (creating it and its directory if needed) and read the journal at
 * path.  NULL with errno set and message filled when it cannot be opened
 * or read; a journal that belongs to another user is never used (EPERM).
 */
struct rt_ship_journal *rt_ship_journal_open(const char *path, char *message, size_t message_size);
void rt_ship_journal_close(struct rt_ship_journal *j);

/* The file's progress toward dest; 0 when the journal has none (all zero then). */
int rt_ship_journal_find(const struct rt_ship_journal *j, const char *dest, const char *host,
			 uint64_t file_id, uint32_t file_seq, struct rt_ship_progress *out);

/* Record progress (and keep it in memory): 0, or -errno with message filled. */
int rt_ship_journal_record(struct rt_ship_journal *j, const char *dest, const char *host,
			   uint64_t file_id, uint32_t file_seq, const struct rt_ship_progress *p,
			   char *message, size_t message_size);

/*
 * The default path: $XDG_STATE_HOME/ringtrace/ship.journal, else
 * $HOME/.local/state/ringtrace/ship.journal.  0, or -1 when neither is set.
 */
int rt_ship_journal_default_path(char *out, size_t size);

#endif /* RT_SHIP_JOURNAL_H */
