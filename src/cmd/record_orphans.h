/*
 * record_orphans.h - arenas a `ringtrace record` killed before its end (kill
 * -9) left behind, reclaimed by the next one.
 *
 * A recorder that ends normally removes its private arenas; one that is
 * killed cannot, and its program runs on (as a program does when strace or
 * perf is killed: a tracer's death is not the program's).  The arena stays
 * in use while that program runs, its rings counting what nobody drains; once
 * every process of it has ended, it is an orphan: an arena in the user's
 * arena directory, with the default name, whose header names a collector
 * that is gone and whose process is gone.  The next `record` removes those
 * (their records up to the kill are in the killed recording's trace file)
 * and says so on stderr; `ringtrace rm --dead` removes them too.
 */
#ifndef RT_CMD_RECORD_ORPHANS_H
#define RT_CMD_RECORD_ORPHANS_H

/*
 * Remove the orphans in dir (the user's arena directory), saying on stderr
 * how many and the bytes freed.  Only the caller's own files, never one that
 * changed while it was checked.  Returns the number removed.
 */
unsigned rt_record_reclaim_orphans(const char *dir);

#endif
