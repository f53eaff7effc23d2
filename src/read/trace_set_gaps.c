/*
 * trace_set_gaps.c - gap attribution: which damaged region lost which
 * records.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include "read/trace_set_private.h"

/* The first region placed after (file, offset), or region_count. */
static size_t region_after(const struct recording *rec, uint32_t file, uint64_t offset)
{
	size_t lo = 0, hi = rec->region_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct region_place *pl = &rec->places[mid];
		if (pl->file < file || (pl->file == file && pl->offset <= offset))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * The region that explains records missing between block prev (NULL: the
 * ring's start) and block next (NULL: the ring's end): the first region
 * after prev and not after next in the files, or, with no prev, the last
 * one before next in its file.  region_count when none lies there: a
 * sequence break.
 */
static size_t region_between(const struct recording *rec, const struct block_ref *prev,
			     const struct block_ref *next)
{
	if (!prev && !next)
		return rec->region_count;
	if (!prev) {
		size_t at = region_after(rec, next->file, next->offset);
		return at > 0 && rec->places[at - 1].file == next->file ? at - 1
									: rec->region_count;
	}
	size_t at = region_after(rec, prev->file, prev->last_offset);
	if (at == rec->region_count)
		return at;
	const struct region_place *pl = &rec->places[at];
	if (!next) /* records after the ring's last block went with the first damage after it */
		return at;
	/* a region of 0 bytes (blocks left out) sits at the offset of the block after it */
	if (pl->file < next->file || (pl->file == next->file && pl->offset <= next->offset))
		return at;
	return rec->region_count;
}

/* Note a gap of ring rs from record first, explained by region r, lost `missing` events. */
static int region_gap(struct rt_trace_set *set, struct recording *rec, struct ring_state *rs,
		      size_t r, uint64_t first, uint64_t missing)
{
	struct rt_reader *ctx = set->sources[rec->context].reader;
	struct rt_damage *dm = &ctx->damage.items[rec->regions[r].loss.damage];
	dm->events = add_sat(dm->events, missing);
	if (grow((void **)&rs->region_gaps, &rs->region_gap_capacity, rs->region_gap_count + 1,
		 sizeof(*rs->region_gaps)))
		return -ENOMEM;
	rs->region_gaps[rs->region_gap_count++].first = first;
	return 0;
}

/*
 * Records lost with no ring to tell: files that end properly say in their
 * END blocks how many records their SLOTS blocks held, and what their good
 * blocks do not hold was lost to their damage.  When that is more than the
 * rings' gaps (gaps: every record a ring cursor will find missing), the rest
 * went where no ring's sequence shows it: blocks of rings whose every trace
 * went with the damage, final RINGS blocks included.  The largest region of
 * the file that lost most takes it, and a loss of no thread carries it into
 * the counts.
 */
static int unplaced_records(struct rt_trace_set *set, struct recording *rec, uint64_t gaps)
{
	struct rt_reader *ctx = set->sources[rec->context].reader;
	uint64_t lost = 0, most = 0;
	size_t worst = set->file_count;
	for (size_t i = 0; i < set->file_count; i++) {
		const struct rt_set_file *sf = &set->files[i];
		if (sf->recording != rec->context || !sf->file.has_end ||
		    sf->file.end.records <= sf->slots_records)
			continue;
		uint64_t shortfall = sf->file.end.records - sf->slots_records;
		lost = add_sat(lost, shortfall);
		if (shortfall > most) {
			most = shortfall;
			worst = i;
		}
	}
	size_t largest = rec->region_count;
	for (size_t r = 0; r < rec->region_count; r++)
		if (rec->places[r].file == worst &&
		    (largest == rec->region_count ||
		     ctx->damage.items[rec->regions[r].loss.damage].length >
			 ctx->damage.items[rec->regions[largest].loss.damage].length))
			largest = r;
	if (lost <= gaps || largest == rec->region_count)
		return 0;
	const struct rt_item *region = &rec->regions[largest];
	ctx->damage.items[region->loss.damage].events += lost - gaps;
	rec->unplaced = calloc(1, sizeof(*rec->unplaced));
	if (!rec->unplaced)
		return -ENOMEM;
	struct rt_item *it = &rec->unplaced[0];
	rec->unplaced_count = 1;
	it->kind = RT_ITEM_LOSS;
	it->flags = (region->flags & RT_ITEM_TIMED) | RT_ITEM_IN_REGION;
	it->counter = region->counter;
	it->thread = RT_ITEM_NO_THREAD;
	it->cpu = RT_CPU_UNKNOWN;
	it->loss.count = lost - gaps;
	it->loss.reason = RT_LOSS_DAMAGED;
	it->loss.note = RT_NOTE_UNPLACED;
	return 0;
}

/*
 * Before reading: walk each ring's blocks in record order, as its cursor
 * will, and give each gap no LOSS entry covers to the damaged region between
 * the blocks around it.  So a region's line can say how many events it lost
 * before the per-thread losses it explains come by, and those are marked as
 * the region's (RT_ITEM_IN_REGION).  Gaps with no region there stay breaks.
 */
int rt_set_attribute_gaps(struct rt_trace_set *set, struct recording *rec)
{
	uint64_t gaps = 0; /* every record the rings' cursors will find missing */
	for (size_t k = 0; k < rec->source_capacity; k++) {
		struct file_source *fs = rec->sources[k];
		if (!fs || fs->index == UINT32_MAX)
			continue;
		for (size_t r = 0; r < fs->ring_capacity; r++) {
			struct ring_state *rs = &fs->rings[r];
			if (rs->block_count == 0) {
				/* every block lost: its cursor reports the whole ring
				 * (rt_set_make_cursors) */
				uint64_t first = rt_set_ring_first_record(rs, rec);
				size_t cover_at = 0;
				if (rs->has_end && rs->end_record > first)
					gaps =
					    add_sat(gaps, rt_set_uncovered_in(rs, &cover_at, first,
									      rs->end_record));
				continue;
			}
			rt_set_sort_ring(rs);
			rs->region_gap_count = 0;
			uint64_t expected = rt_set_ring_first_record(rs, rec);
			size_t cover_at = 0;
			const struct block_ref *prev = NULL;
			for (size_t b = 0; b <= rs->block_count; b++) {
				const struct block_ref *next =
				    b < rs->block_count ? &rs->blocks[b] : NULL;
				uint64_t to = next	    ? next->first_record
					      : rs->has_end ? rs->end_record
							    : expected;
				if (to > expected) {
					uint64_t missing =
					    rt_set_uncovered_in(rs, &cover_at, expected, to);
					gaps = add_sat(gaps, missing);
					size_t at = missing ? region_between(rec, prev, next)
							    : rec->region_count;
					if (at < rec->region_count &&
					    region_gap(set, rec, rs, at, expected, missing))
						return -ENOMEM;
				}
				if (!next)
					break;
				uint64_t end = add_sat(next->first_record, next->count);
				expected = end > expected ? end : expected;
				prev = next;
			}
		}
	}
	return unplaced_records(set, rec, gaps);
}
