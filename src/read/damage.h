/*
 * damage.h - what a reader found damaged in an arena, and where.
 *
 * A damaged region is a byte range of the file whose contents contradict
 * the format: a header field out of range or inconsistent with the others,
 * a thread or site entry that does not check, a string that is not where
 * its site entry says, a ring descriptor that contradicts its slots, slots
 * of a ring window that do not decode, bytes the header promises and the
 * file lacks.  Each region says what it was supposed to be and what the
 * reader did instead (recomputed the field, ignored the entry, lost the
 * records), in words, so that `ringtrace dump` and `--hexdump` can print
 * it as it is.
 */
#ifndef RT_READ_DAMAGE_H
#define RT_READ_DAMAGE_H

#include <stddef.h>
#include <stdint.h>

/* What a damaged region was supposed to be. */
enum rt_damage_part {
	RT_DAMAGE_HEADER = 1,	 /* header fields */
	RT_DAMAGE_THREAD = 2,	 /* a thread-table entry */
	RT_DAMAGE_SITE = 3,	 /* a site-table entry */
	RT_DAMAGE_STRING = 4,	 /* a site's string in the string area */
	RT_DAMAGE_RING_DESC = 5, /* a ring descriptor */
	RT_DAMAGE_SLOTS = 6,	 /* slots of a ring window that did not decode */
	RT_DAMAGE_ORPHANS = 7,	 /* slots that decode but no readable thread entry claims */
	RT_DAMAGE_MISSING = 8,	 /* past the end of a truncated file */
	RT_DAMAGE_MODULE = 9,	 /* a module-table entry, or its path */
};

/* The bytes did not parse: `ringtrace dump --hexdump` shows them. */
#define RT_DAMAGE_UNPARSED 0x1u

/* One damaged region.  Nothing in it points anywhere: it outlives the file. */
struct rt_damage {
	uint64_t offset; /* in the file */
	uint64_t length; /* bytes (0: a place, not a range) */
	uint32_t part;	 /* enum rt_damage_part */
	uint32_t flags;	 /* RT_DAMAGE_* */
	uint32_t index;	 /* entry or ring index (0 for the header); trace files: the file's */
	uint32_t timed;	 /* counter says when: the time of the records around it */
	uint64_t counter;
	/* trace files: the clock of the first record after it, when one follows */
	uint32_t timed_after;
	uint64_t counter_after;
	/* RT_DAMAGE_SLOTS, RT_DAMAGE_ORPHANS: the slots' sequence numbers [first_seq, end_seq) */
	uint64_t first_seq, end_seq;
	/* events lost to it as far as known; events_estimated: a count from the slots */
	uint64_t events;
	int events_estimated;
	/* trace files: events is the count of the records it lost, 0 included */
	int events_counted;
	char what[180]; /* what it was, what is wrong, what the reader did */
};

/*
 * The regions of one arena in the order they were found.  Bounded: past
 * RT_DAMAGE_MAX regions a new one is merged into the last one of the same
 * part (its range grows to cover both, and says so), so that garbage
 * everywhere costs bounded memory and output.
 */
#define RT_DAMAGE_MAX 65536u

struct rt_damage_list {
	struct rt_damage *items;
	size_t count;
	size_t capacity;
	uint64_t merged; /* regions merged into others past RT_DAMAGE_MAX */
};

/*
 * Add a region; what is a printf format.  Returns its index in the list
 * (of the region it was merged into, past the bound), or -ENOMEM.
 */
long rt_damage_add(struct rt_damage_list *list, uint32_t part, uint32_t flags, uint32_t index,
		   uint64_t offset, uint64_t length, const char *what, ...)
    __attribute__((format(printf, 7, 8)));
void rt_damage_free(struct rt_damage_list *list);

/*
 * The events a region's loss item stands for: its own count (arenas: one
 * thread's), else what the reader counted for the region (trace files).
 * Returns 0 when not known.
 */
int rt_damage_events(const struct rt_damage *d, uint64_t item_count, uint64_t *events);

/* Nanoseconds between the records before and after a region, when both are known. */
int rt_damage_gap(const struct rt_damage *d, uint64_t *counter_from, uint64_t *counter_to);

/* "header", "thread entry", "site entry", "string", "ring descriptor", "slots", ... */
const char *rt_damage_part_name(uint32_t part);

#endif /* RT_READ_DAMAGE_H */
