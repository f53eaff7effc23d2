/*
 * map_guard.h - a mapped input that shrinks while it is read is damage,
 * not a crash.
 *
 * The tool maps arenas (shared files that other processes may truncate or
 * empty at any moment).  A load or store past the end of the file under a
 * mapping raises SIGBUS.  A mapping the tool watches here is covered: a
 * SIGBUS inside it (si_code BUS_ADRERR) replaces the page that faulted and
 * the rest of the mapping with private zero pages, so the access goes on
 * and reads zeros, and the mapping remembers where the file stopped.  Zeros
 * are no valid header, entry or record, so every reader takes them for
 * damage already; the caller asks rt_map_guard_shrunk() after reading and
 * reports the bytes from there on as damage.  Nothing is ever written to
 * the file by the guard: the zero pages are private.
 *
 * A SIGBUS anywhere else goes to the handler that was there before (a
 * sanitizer's), or takes the default action: a crash stays a crash.
 *
 * Why not sigsetjmp/siglongjmp around each read: every reader would need a
 * recovery point, and jumping out of a half-done read leaves its allocations
 * and state behind; zero pages let every read finish as a read of damage.
 */
#ifndef RT_READ_MAP_GUARD_H
#define RT_READ_MAP_GUARD_H

#include <stddef.h>
#include <stdint.h>

/*
 * Watch the mapping [base, base + length) of an input (writable: it was
 * mapped with PROT_WRITE, and so are its zero pages).  Installs the
 * handler the first time.  0, or -ENOSPC when RT_MAP_GUARD_MAX mappings are
 * watched already, -ENOTSUP when the handler could not be installed (the
 * mapping is then read unguarded).
 */
int rt_map_guard_watch(const void *base, size_t length, int writable);

/* Stop watching the mapping at base: before it is unmapped. */
void rt_map_guard_forget(const void *base);

/*
 * Whether the file under the watched mapping at base turned out shorter
 * than the mapping: 1 with *offset, the mapping's first byte that was
 * missing (page-aligned), else 0.
 */
int rt_map_guard_shrunk(const void *base, uint64_t *offset);

/* How many mappings can be watched at once. */
#define RT_MAP_GUARD_MAX 256

#endif /* RT_READ_MAP_GUARD_H */
