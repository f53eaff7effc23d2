/*
 * trace_set_sources.c - the sources of a set and the recordings they belong
 * to: found, or made.
 *
 * (Part of read/trace_set.h; the set's private state is
 * read/trace_set_private.h.)
 */
#include "read/trace_set_private.h"

int rt_set_add_source(struct rt_trace_set *set, struct rt_reader *rd, const char *name,
		      uint32_t *index)
{
	struct set_private *p = priv_of(set);
	if (grow((void **)&set->sources, &p->source_capacity, set->source_count + 1,
		 sizeof(*set->sources)))
		return -ENOMEM;
	struct rt_set_source *s = &set->sources[set->source_count];
	memset(s, 0, sizeof(*s));
	s->reader = rd;
	s->name = name;
	*index = (uint32_t)set->source_count++;
	return 0;
}

/* An empty metadata-only reader: no threads, sites or items yet. */
struct rt_reader *rt_set_empty_reader(const char *name)
{
	struct rt_reader *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return NULL;
	rd->path = name;
	rd->writer = RT_WRITER_CLOSED;
	rd->header.clock_source = RT_CLOCK_MONOTONIC;
	struct rt_clock_pair zero = {0, 0, 0};
	rt_timebase_init(&rd->timebase, RT_CLOCK_MONOTONIC, 1000000000ull, &zero, NULL);
	return rd;
}

void rt_set_free_meta_reader(struct rt_reader *rd)
{
	if (!rd)
		return;
	free(rd->threads);
	rt_site_table_free(&rd->sites);
	rt_reader_modules_free(&rd->modules);
	rt_fd_seeds_free(&rd->fds);
	rt_damage_free(&rd->damage);
	free(rd);
}

struct recording *rt_set_find_recording(struct rt_trace_set *set, uint64_t file_id,
					const char *name)
{
	struct set_private *p = priv_of(set);
	for (size_t i = 0; i < p->recording_count; i++)
		if (p->recordings[i].file_id == file_id)
			return &p->recordings[i];
	if (grow((void **)&p->recordings, &p->recording_capacity, p->recording_count + 1,
		 sizeof(*p->recordings)))
		return NULL;
	struct rt_reader *rd = rt_set_empty_reader(name);
	uint32_t index;
	if (!rd || rt_set_add_source(set, rd, name, &index)) {
		free(rd);
		return NULL;
	}
	set->sources[index].context = 1;
	set->sources[index].file_id = file_id;
	struct recording *r = &p->recordings[p->recording_count++];
	memset(r, 0, sizeof(*r));
	r->file_id = file_id;
	r->context = index;
	set->sources[index].recording = index;
	return r;
}

struct file_source *rt_set_find_file_source(struct recording *r, uint32_t number)
{
	if (number >= MAX_SOURCES)
		return NULL;
	if (grow((void **)&r->sources, &r->source_capacity, (size_t)number + 1,
		 /* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		 sizeof(*r->sources)))
		return NULL;
	if (!r->sources[number]) {
		r->sources[number] = calloc(1, sizeof(struct file_source));
		if (r->sources[number])
			r->sources[number]->index = UINT32_MAX;
	}
	return r->sources[number];
}

struct ring_state *rt_set_ring_of(struct file_source *fs, uint32_t ring)
{
	if (ring >= MAX_RINGS ||
	    grow((void **)&fs->rings, &fs->ring_capacity, (size_t)ring + 1, sizeof(*fs->rings)))
		return NULL;
	return &fs->rings[ring];
}
