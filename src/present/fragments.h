/*
 * fragments.h - the pieces of an output line that depend only on the
 * thread or only on the site, rendered once and copied per event.  Both
 * printers (text and JSON) keep theirs here; each renders its own form.
 */
#ifndef RT_PRESENT_FRAGMENTS_H
#define RT_PRESENT_FRAGMENTS_H

#include <stddef.h>
#include <stdint.h>

#include "read/arena_reader.h"

struct rt_fragment {
	char *bytes; /* NULL until rendered */
	uint32_t length;
};

/* Room render_thread may use: a tid, a 16-byte name escaped, some punctuation. */
#define RT_FRAGMENT_THREAD_MAX 256

/* Writes thread t's piece at buf and returns its end. */
typedef char *(*rt_render_thread_fn)(char *buf, const struct rt_reader_thread *t);

struct rt_fragments {
	struct rt_fragment *threads; /* one per reader thread, all rendered at init */
	struct rt_fragment *sites;   /* one per site, kept while the budget lasts */
	uint32_t thread_count;
	uint32_t site_count;
	size_t cached_bytes;
	char *scratch; /* where a site is rendered: scratch_size bytes */
};

int rt_fragments_init(struct rt_fragments *f, const struct rt_reader *reader, size_t scratch_size,
		      rt_render_thread_fn render_thread);
void rt_fragments_free(struct rt_fragments *f);

/*
 * The site piece just rendered into f->scratch (up to end): kept as site
 * index's fragment if the budget allows, else returned as it stands (valid
 * until the next site is rendered).
 */
/*
 * One rt_fragments per source (reader) of a multi-source printer: *out is
 * an array of count, all initialised, or NULL and -ENOMEM with nothing
 * left allocated.
 */
int rt_fragments_init_all(struct rt_fragments **out, const struct rt_reader *const *readers,
			  size_t count, size_t scratch_size, rt_render_thread_fn render_thread);
void rt_fragments_free_all(struct rt_fragments *all, size_t count);

struct rt_fragment rt_fragments_keep_site(struct rt_fragments *f, uint32_t index, char *end);

#endif /* RT_PRESENT_FRAGMENTS_H */
