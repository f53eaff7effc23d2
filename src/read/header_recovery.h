/*
 * header_recovery.h - an arena header checked field by field, and repaired
 * from its own redundancy where a field is damaged.
 *
 * format/arena_layout.h refuses a header at its first bad field.  A reader
 * of crashed programs' arenas wants more: a header partly overwritten still
 * says where almost everything is, because the layout is redundant.  The
 * five offsets and the file size follow from the four table sizes and the
 * ring size (each table follows the one before it, padded to an alignment),
 * so any one of them can be recomputed from the others.  rt_header_recover()
 * keeps every field that agrees with the rest, recomputes those that do
 * not, reports each one it changed as a damaged region, and refuses only a
 * file that is no arena at all or one it must not read:
 *
 *   - shorter than a header, or a bad magic with nothing else of an arena
 *     (fewer than 4 of the identity and geometry fields as an arena has them);
 *   - the other byte order, or a format version above this reader's whose
 *     compat_version says it cannot read it;
 *   - state CREATING: the writer never finished the header (nothing recorded);
 *   - a geometry that no choice of field values fits inside the file.
 *
 * docs/FORMAT.md, "Damaged arenas", says per field what is trusted,
 * recomputed or reported.
 */
#ifndef RT_READ_HEADER_RECOVERY_H
#define RT_READ_HEADER_RECOVERY_H

#include <stdint.h>

#include "common/file_data.h"
#include "format/arena_layout.h"
#include "read/damage.h"
#include "ringtrace/format.h"

/*
 * Check and repair the header of the arena in file[0, size) (8-byte
 * aligned).  Returns 0 with *header the header to read the arena by, its
 * damaged fields added to *damage (regions of part RT_DAMAGE_HEADER and
 * RT_DAMAGE_MISSING); or -EINVAL / -EPROTONOSUPPORT with *error filled
 * (file offset and message) for a file that is refused; or -ENOMEM.
 *
 * In the header returned every table lies inside the file, is 8-byte
 * aligned and overlaps no other: the table sizes of a truncated file are cut
 * to what the file holds (ring_count to the rings whose descriptor and
 * first slot it holds; the last of them may be cut short: see
 * rt_header_ring_slots_readable()).  *rings_recorded is the ring count
 * before that cut: a thread entry naming a ring between the two is whole,
 * its ring is what is missing.  Beyond the header only bytes the file
 * holds data for are read (data: common/file_data.h; NULL: all of it).
 */
int rt_header_recover(const unsigned char *file, uint64_t size, struct rt_file_data *data,
		      struct rt_arena_header *header, uint32_t *rings_recorded,
		      struct rt_damage_list *damage, struct rt_layout_error *error);

/*
 * 0 when the header's bytes (the first min(size, header size) bytes of the
 * file) all hold data; else -EINVAL with *error at the first hole: a header
 * written nowhere is not an arena, and reading it through a mapping would
 * allocate its page on tmpfs.  Asked before anything reads the header.
 */
int rt_header_check_data(struct rt_file_data *data, uint64_t size, struct rt_layout_error *error);

/* Slots of ring `ring` that the file holds (ring_bytes / 32 unless it was cut short). */
uint64_t rt_header_ring_slots_readable(const struct rt_arena_header *header, uint64_t size,
				       uint32_t ring);

/*
 * The clock, checked against the threads once they are read.  The sync
 * pair must read after the start pair and give a frequency within a factor
 * of two of counter_hz (*use_sync says whether to measure with it).  No
 * thread attaches before the arena is created, so start.counter is not
 * after the earliest thread's start_counter (give or take 10 ms of counter
 * skew between CPUs); when it is, it is recomputed from the sync pair (or
 * taken from that thread).  What does not fit is reported.  sync is the
 * consistently read sync pair, or NULL; earliest is 0 when no thread says.
 * Returns 0 or -ENOMEM.
 */
int rt_header_check_clock(struct rt_arena_header *header, const struct rt_clock_pair *sync,
			  uint64_t earliest, struct rt_damage_list *damage, int *use_sync);

#endif /* RT_READ_HEADER_RECOVERY_H */
