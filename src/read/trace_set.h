/*
 * trace_set.h - every input of a reading command (arenas, trace files,
 * directories of them) as one time line.
 *
 * Each traced process is a source.  An arena is one source, checked and
 * counted by the arena reader (read/arena_reader.h) when opened, its
 * threads read a window at a time (read/arena_cursor.h).  Trace files of one recording
 * (same file_id: a rotated set OUT.000000, OUT.000001... or several
 * snapshots) are read as one stream per source they hold; files of other
 * recordings are simply more sources.  Every source has a struct rt_reader
 * the printers use for names and times: for an arena its reader, for a
 * trace-file source one holding metadata only (header, timebase, threads,
 * sites; no items), and each recording has one more such reader, its
 * "context", holding the damaged regions of its files.
 *
 * Trace files are never loaded whole: opening scans them once (checking
 * every block, keeping their metadata and an index of 40 bytes per SLOTS
 * block), and the items are decoded one block at a time per ring, with the
 * same rules as the arena reader (slot seq tags, record kinds and sizes,
 * sites and their argument counts, thread by ring ownership), repeated
 * records of overlapping snapshots kept once and gaps reported as damaged
 * losses.  So memory grows with the number of blocks and rings, never with
 * the number of events.
 *
 * Times: sources on one host count the same clock, so items compare by raw
 * counter (rt_item_compare), and the timebases of all sources with the same
 * clock are given the earliest source's start as their zero.
 */
#ifndef RT_READ_TRACE_SET_H
#define RT_READ_TRACE_SET_H

#include <stddef.h>
#include <stdint.h>

#include "read/arena_reader.h"
#include "read/trace_file.h"

/* One source, or a recording's context (context: no events of its own). */
struct rt_set_source {
	struct rt_reader *reader; /* never NULL */
	const char *name;	  /* the input it came from (its first file) */
	int arena;		  /* read by the arena reader */
	int context;		  /* a recording's context: file damage only */
	uint64_t file_id;	  /* trace files */
	uint32_t number;	  /* trace files: the source number in its recording */
	uint32_t recording;	  /* trace files: index of its recording's context source */
	int has_header;		  /* trace files: a SOURCE block was read */
	int32_t parent_pid;
	/* filled by rt_trace_set_count() */
	uint64_t *site_counts;	  /* events per site index, reader->sites.count entries */
	uint64_t unknown_records; /* events of sites the metadata does not hold (shown marked) */
	uint64_t lost_records;	  /* LOST records read (drop notes) */
	uint64_t earlier_records; /* records in earlier files of the recording, not given */
	/* private */
	void *priv;
};

struct rt_set_file {
	struct rt_trace_file file;
	uint32_t recording;	/* context source index */
	uint64_t slots_records; /* records in its good SLOTS blocks (END says how many it had) */
};

struct rt_trace_set {
	struct rt_set_source *sources;
	size_t source_count;
	struct rt_set_file *files; /* trace files, in the order read */
	size_t file_count;
	/* rt_trace_set_count(): every source's counts (threads' in their readers) */
	struct rt_counts totals;
	uint64_t events;	/* trace items */
	uint64_t first_counter; /* of the earliest and latest event */
	uint64_t last_counter;
	uint32_t first_source, last_source; /* whose timebase converts them */
	int have_span;
	uint32_t processes; /* sources with events or threads: known once opened */
	/* private */
	void *priv;
};

/*
 * Open every input: files (an arena or a trace file, told by its magic)
 * and directories (the arenas and trace files in them, by name).  Returns
 * 0 and *out, or -errno with message (which input, byte offset, what):
 * -ENOENT and the like for a file that cannot be opened, -EINVAL for one
 * that is neither, -EPROTONOSUPPORT for an arena the reader refuses.
 */
int rt_trace_set_open(char *const *paths, size_t count, struct rt_trace_set **out, char *message,
		      size_t message_size);
/*
 * The same, for a caller that reads the items and does not count them:
 * the scan does not count as it goes (an rt_trace_set_count() would take a
 * second pass, with the same results).
 */
int rt_trace_set_open_reading(char *const *paths, size_t count, struct rt_trace_set **out,
			      char *message, size_t message_size);
/*
 * The same, for a caller that only counts (rt_trace_set_count): while the
 * scan counts every SLOTS block itself (rt_trace_set_counted_in_scan), it
 * keeps a ring's blocks whose records follow each other as one index
 * entry, so that the memory the set holds does not grow with the files'
 * length.  When that count cannot be used (damage, a scan that could not
 * count), the inputs are opened again with the whole index, as
 * rt_trace_set_open() does; so does rt_trace_set_start() on such a set,
 * after which what rt_trace_set_count() said must be counted again.
 */
int rt_trace_set_open_counting(char *const *paths, size_t count, struct rt_trace_set **out,
			       char *message, size_t message_size);
void rt_trace_set_close(struct rt_trace_set *set);

/*
 * Read every item once, without merging, to count: per-thread counts in
 * each trace-file source's reader (threads[].counts, totals, last event),
 * per-site counts, the set's totals and time span.  Arena readers come
 * counted already.  Returns 0, or -errno when reading failed.
 */
int rt_trace_set_count(struct rt_trace_set *set);
/*
 * Count while reading instead: a walk begun after this that reads every
 * item (rt_trace_set_start with no tid, no skip filter set) counts what
 * it hands out as rt_trace_set_count would, and once rt_trace_set_next
 * returned NULL the counts are complete: rt_trace_set_counted_while_reading
 * says so.  A walk stopped early or filtered counts nothing usable: call
 * rt_trace_set_count then.  For a command that reads everything once and
 * needs the counts only after (dump --json), this saves a pass.
 */
void rt_trace_set_count_while_reading(struct rt_trace_set *set);
int rt_trace_set_counted_while_reading(const struct rt_trace_set *set);

/*
 * Items in time order: start, then next until it returns NULL.  tid > 0:
 * only that thread's items.  *source says whose reader describes the item.
 * Starting again restarts from the beginning.  0 or -errno (reading failed:
 * next then ends early, and rt_trace_set_error() says why).
 */
int rt_trace_set_start(struct rt_trace_set *set, int32_t tid);
/*
 * The same, beginning each ring of a trace file at the first block (by the
 * index the scan made) that may hold an item at or after from_ns (since the
 * set's zero): the blocks before it are not read.  Items before from_ns may
 * still come (from the same block, from arenas, losses): the caller drops
 * them.  INT64_MIN: from the beginning.  RINGTRACE_SEEK=0 in the environment
 * before opening reads from the beginning always: for tests, and to compare.
 */
int rt_trace_set_start_from(struct rt_trace_set *set, int32_t tid, int64_t from_ns);
const struct rt_item *rt_trace_set_next(struct rt_trace_set *set, uint32_t *source);
/*
 * The next items one source gives in a row (read/merge.h's rt_merge_run),
 * at *items: how many, 0 at the end as rt_trace_set_next returns NULL.
 * They are the items rt_trace_set_next would give one by one; a caller
 * that uses fewer says so with rt_trace_set_took() before the next call.
 */
size_t rt_trace_set_run(struct rt_trace_set *set, uint32_t *source, const struct rt_item **items);
void rt_trace_set_took(struct rt_trace_set *set, size_t n);
/*
 * For a reader that drops some trace events unread (NULL: none): trace
 * records of trace files whose site skips(state, site) refuses (site NULL:
 * lost) are not handed out by rt_trace_set_next, only counted, in
 * rt_trace_set_skipped() (those --tid would keep).  Arena items come as
 * they are.  Set before rt_trace_set_start.  The answer must depend on the
 * site alone: blocks are decoded ahead of what the reader has seen.
 */
void rt_trace_set_skip_trace(struct rt_trace_set *set,
			     int (*skips)(void *state, const struct rt_site *site), void *state);
uint64_t rt_trace_set_skipped(const struct rt_trace_set *set);
int rt_trace_set_error(const struct rt_trace_set *set);

/*
 * The damaged region the set found in trace file `file` (index in
 * set->files) at offset, or NULL: its events lost (attributed before
 * reading) and the clocks around it.
 */
const struct rt_damage *rt_trace_set_file_region(const struct rt_trace_set *set, size_t file,
						 uint64_t offset);

/*
 * The wall-clock time of ts 0 (the set's earliest start), in ns since the
 * epoch, from the first source whose clock says; 0 when none does.
 */
uint64_t rt_trace_set_wall_start(const struct rt_trace_set *set);

/* Whether any input was damaged (a damaged region, or events lost to damage). */
int rt_trace_set_damaged(const struct rt_trace_set *set);
/* Damaged regions in all inputs. */
size_t rt_trace_set_damage_regions(const struct rt_trace_set *set);

/*
 * Whether the scan that opened the set counted its SLOTS blocks already, so
 * that rt_trace_set_count reads no file again (a single clean recording
 * whose metadata came before the records it describes; otherwise counting
 * takes a second pass, with the same results).  RINGTRACE_COUNT_IN_SCAN=0 in
 * the environment before opening always takes the second pass: for tests,
 * and to compare the two.
 */
int rt_trace_set_counted_in_scan(const struct rt_trace_set *set);

/*
 * Whether more than one process is shown (JSON events then carry "pid",
 * replay's lines PID/TID).  Known once the set is open; counting may add a
 * trace-file source that has events but no thread.
 */
static inline int rt_trace_set_multi_process(const struct rt_trace_set *set)
{
	return set->processes > 1;
}

/*
 * Whether source's process shares open file descriptions with another
 * traced process: it was forked from one, or one of the set was forked from
 * it.  File positions of such a process are never certain.
 */
static inline int rt_trace_set_shares_files(const struct rt_trace_set *set, size_t source)
{
	const struct rt_set_source *s = &set->sources[source];
	if (s->parent_pid)
		return 1;
	for (size_t k = 0; k < set->source_count; k++)
		if (k != source && s->reader->header.pid &&
		    set->sources[k].parent_pid == s->reader->header.pid)
			return 1;
	return 0;
}

#endif /* RT_READ_TRACE_SET_H */
