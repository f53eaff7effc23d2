/*
 * fragments.c - pre-rendered thread and site pieces of output lines.
 * Sites are kept up to a budget in all; past it, a site is rendered again
 * for each line, so a hostile site table cannot make the tool hold more.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "present/fragments.h"

#define SITE_CACHE_BUDGET (64u << 20)

static int copy_into(struct rt_fragment *f, const char *bytes, size_t length)
{
	f->bytes = malloc(length ? length : 1);
	if (!f->bytes)
		return -ENOMEM;
	memcpy(f->bytes, bytes, length);
	f->length = (uint32_t)length;
	return 0;
}

int rt_fragments_init(struct rt_fragments *f, const struct rt_reader *reader, size_t scratch_size,
		      rt_render_thread_fn render_thread)
{
	memset(f, 0, sizeof(*f));
	f->thread_count = reader->thread_count;
	f->site_count = reader->sites.count;
	f->threads = calloc((size_t)f->thread_count + 1, sizeof(*f->threads));
	f->sites = calloc((size_t)f->site_count + 1, sizeof(*f->sites));
	f->scratch = malloc(scratch_size);
	if (!f->threads || !f->sites || !f->scratch)
		goto fail;
	for (uint32_t i = 0; i < f->thread_count; i++) {
		char buf[RT_FRAGMENT_THREAD_MAX];
		char *end = render_thread(buf, &reader->threads[i]);
		if (copy_into(&f->threads[i], buf, (size_t)(end - buf)))
			goto fail;
	}
	return 0;
fail:
	rt_fragments_free(f);
	return -ENOMEM;
}

void rt_fragments_free(struct rt_fragments *f)
{
	if (f->threads)
		for (uint32_t i = 0; i < f->thread_count; i++)
			free(f->threads[i].bytes);
	if (f->sites)
		for (uint32_t i = 0; i < f->site_count; i++)
			free(f->sites[i].bytes);
	free(f->threads);
	free(f->sites);
	free(f->scratch);
	memset(f, 0, sizeof(*f));
}

struct rt_fragment rt_fragments_keep_site(struct rt_fragments *f, uint32_t index, char *end)
{
	struct rt_fragment rendered = {f->scratch, (uint32_t)(end - f->scratch)};
	if (index < f->site_count && f->cached_bytes + rendered.length <= SITE_CACHE_BUDGET &&
	    copy_into(&f->sites[index], rendered.bytes, rendered.length) == 0) {
		f->cached_bytes += rendered.length;
		return f->sites[index];
	}
	return rendered;
}

int rt_fragments_init_all(struct rt_fragments **out, const struct rt_reader *const *readers,
			  size_t count, size_t scratch_size, rt_render_thread_fn render_thread)
{
	struct rt_fragments *all = calloc(count ? count : 1, sizeof(*all));
	*out = NULL;
	if (!all)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		int rc = rt_fragments_init(&all[i], readers[i], scratch_size, render_thread);
		if (rc) {
			rt_fragments_free_all(all, i);
			return rc;
		}
	}
	*out = all;
	return 0;
}

void rt_fragments_free_all(struct rt_fragments *all, size_t count)
{
	if (all)
		for (size_t i = 0; i < count; i++)
			rt_fragments_free(&all[i]);
	free(all);
}
