/*
 * file_data.c - data and holes of an input file (common/file_data.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common/file_data.h"

void rt_file_data_init(struct rt_file_data *d, int fd)
{
	memset(d, 0, sizeof(*d));
	d->fd = fd;
}

uint64_t rt_file_data_next(struct rt_file_data *d, uint64_t offset, uint64_t end,
			   uint64_t *data_end)
{
	*data_end = end;
	if (offset >= end)
		return end;
	if (d->fd < 0)
		return offset;
	/*
	 * Each SEEK_HOLE walks the run it answers page by page: a merge that
	 * goes round several rings asks again and again, unless each ring's
	 * run is still known.
	 */
	for (unsigned k = 0, i = d->last; k < RT_FILE_DATA_RUNS;
	     k++, i = (i + 1) % RT_FILE_DATA_RUNS) {
		if (offset >= d->from[i] && offset < d->to[i]) {
			d->last = i;
			*data_end = d->to[i] < end ? d->to[i] : end;
			return offset;
		}
	}
	if (offset > INT64_MAX)
		return end;
	off_t data = lseek(d->fd, (off_t)offset, SEEK_DATA);
	if (data < 0) {
		/* ENXIO: no data at or past offset; anything else: the file system cannot tell */
		return errno == ENXIO ? end : offset;
	}
	off_t hole = lseek(d->fd, data, SEEK_HOLE);
	if (hole < 0 || hole <= data)
		hole = INT64_MAX;
	const unsigned i = d->next;
	d->next = (i + 1) % RT_FILE_DATA_RUNS;
	d->last = i;
	d->from[i] = (uint64_t)data;
	d->to[i] = (uint64_t)hole;
	if (d->from[i] >= end)
		return end;
	*data_end = d->to[i] < end ? d->to[i] : end;
	return d->from[i];
}

int rt_file_data_whole(struct rt_file_data *d, uint64_t offset, uint64_t end)
{
	uint64_t data_end;
	if (offset >= end)
		return 1;
	return rt_file_data_next(d, offset, end, &data_end) == offset && data_end == end;
}

uint64_t rt_file_data_run(struct rt_file_data *d, uint64_t offset, uint64_t end)
{
	uint64_t data_end;
	if (offset >= end || rt_file_data_next(d, offset, end, &data_end) != offset)
		return 0;
	/* a run found may end where the next begins: ask again past it */
	uint64_t at = data_end;
	while (at < end && rt_file_data_next(d, at, end, &data_end) == at)
		at = data_end;
	return at - offset;
}

uint64_t rt_file_data_after_holes(struct rt_file_data *d, uint64_t offset, uint64_t end)
{
	uint64_t after = offset, data_end;
	for (uint64_t at = offset; at < end; at = data_end) {
		uint64_t data = rt_file_data_next(d, at, end, &data_end);
		if (data > at)
			after = data;
		if (data >= end)
			break;
	}
	return after;
}

uint64_t rt_file_data_bytes(struct rt_file_data *d, uint64_t offset, uint64_t end)
{
	uint64_t bytes = 0, data_end;
	while (offset < end) {
		uint64_t at = rt_file_data_next(d, offset, end, &data_end);
		if (at >= end)
			break;
		bytes += data_end - at;
		offset = data_end;
	}
	return bytes;
}

int rt_file_data_copy(struct rt_file_data *d, const unsigned char *file, uint64_t offset,
		      uint64_t n, void *out)
{
	unsigned char *to = out;
	const uint64_t end = offset + n;
	uint64_t at = offset, data_end;
	int whole = 1;
	while (at < end) {
		uint64_t data = rt_file_data_next(d, at, end, &data_end);
		if (data > at) {
			memset(to + (at - offset), 0, (size_t)(data - at));
			whole = 0;
		}
		if (data >= end)
			break;
		memcpy(to + (data - offset), file + data, (size_t)(data_end - data));
		at = data_end;
	}
	return whole;
}

const void *rt_file_data_at(struct rt_file_data *d, const unsigned char *file, uint64_t offset,
			    uint64_t n, void *buf)
{
	if (rt_file_data_whole(d, offset, offset + n))
		return file + offset;
	rt_file_data_copy(d, file, offset, n, buf);
	return buf;
}

uint64_t rt_file_data_next_entry(struct rt_file_data *d, uint64_t base, uint64_t size,
				 uint64_t index, uint64_t count)
{
	if (index >= count)
		return count;
	uint64_t data_end;
	uint64_t at = rt_file_data_next(d, base + index * size, base + count * size, &data_end);
	uint64_t next = (at - base) / size;
	return next > index ? next : index;
}
