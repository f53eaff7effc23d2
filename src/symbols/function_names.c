/*
 * function_names.c - addresses of enter and exit events to function names
 * (symbols/function_names.h).
 *
 * Each module entry of each process gets its own symbolizer handle, made on
 * the first address it holds: a plugin unloaded and another loaded at the
 * same addresses are two entries, and so two handles.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/escape.h"
#include "symbols/function_names.h"
#include "symbols/symbolizer.h"

struct handle {
	const struct rt_reader_module *module; /* the entry, in its reader's list */
	int handle;			       /* symbolizer handle, or -1 when refused */
};

struct rt_function_names {
	const char *const *dirs;
	size_t dir_count;
	struct rt_symbolizer *sym;
	int tried; /* rt_symbolizer_create was called: sym may still be NULL */
	struct handle *handles;
	size_t count, capacity;
	size_t last; /* the handle found last: consecutive events mostly share it */
};

struct rt_function_names *rt_function_names_new(const char *const *debug_dirs, size_t count)
{
	struct rt_function_names *n = calloc(1, sizeof(*n));
	if (n) {
		n->dirs = debug_dirs;
		n->dir_count = count;
	}
	return n;
}

void rt_function_names_free(struct rt_function_names *names)
{
	if (!names)
		return;
	rt_symbolizer_destroy(names->sym);
	free(names->handles);
	free(names);
}

/* The symbolizer, made on first use; NULL when it cannot be (said once). */
static struct rt_symbolizer *symbolizer(struct rt_function_names *n)
{
	if (!n->tried) {
		char err[256];
		n->tried = 1;
		n->sym = rt_symbolizer_create(n->dirs, n->dir_count, err, sizeof(err));
		if (!n->sym)
			fprintf(stderr, "ringtrace: function names unavailable: %s\n",
				rt_escaped(err));
	}
	return n->sym;
}

/* The handle of module entry m: found, or made now; -1 when it cannot be. */
static int handle_of(struct rt_function_names *n, const struct rt_reader_module *m)
{
	if (n->last < n->count && n->handles[n->last].module == m)
		return n->handles[n->last].handle;
	for (size_t i = 0; i < n->count; i++)
		if (n->handles[i].module == m) {
			n->last = i;
			return n->handles[i].handle;
		}
	struct rt_symbolizer *sym = symbolizer(n);
	if (!sym)
		return -1;
	/*
	 * The path comes from the trace, which may be hostile or damaged: only a
	 * regular file is ever opened (a FIFO or a device could block or never end).
	 */
	struct stat st;
	int usable = stat(m->path, &st) == 0 && S_ISREG(st.st_mode);
	if (n->count == n->capacity) {
		size_t capacity = n->capacity ? 2 * n->capacity : 16;
		struct handle *more = realloc(n->handles, capacity * sizeof(*more));
		if (!more)
			return -1;
		n->handles = more;
		n->capacity = capacity;
	}
	struct rt_module_desc desc = {m->path, m->build_id_size ? m->build_id : NULL,
				      m->build_id_size, m->base};
	int h = usable ? rt_symbolizer_add_module(sym, &desc) : -1;
	n->last = n->count;
	n->handles[n->count++] = (struct handle){m, h >= 0 ? h : -1};
	return h >= 0 ? h : -1;
}

void rt_function_names_find(struct rt_function_names *names, const struct rt_reader *rd,
			    uint64_t addr, uint64_t counter, struct rt_function_place *out)
{
	memset(out, 0, sizeof(*out));
	const struct rt_reader_module *m = rt_reader_module_at(rd, addr, counter);
	if (!m)
		return;
	const char *slash = strrchr(m->path, '/');
	out->module = slash ? slash + 1 : m->path;
	out->offset = addr - m->base;
	int h = handle_of(names, m);
	struct rt_symbol s;
	if (h < 0 || rt_symbolizer_resolve(names->sym, h, addr, &s) != 0)
		return;
	if (s.warning)
		fprintf(stderr, "ringtrace: %s\n", rt_escaped(s.warning));
	out->func = s.func;
	out->file = s.file;
	out->line = s.file ? s.line : 0;
}

size_t rt_function_place_text(const struct rt_function_place *place, uint64_t addr, char *buf,
			      size_t size)
{
	int n;
	if (place->func && place->file)
		n = snprintf(buf, size, "%s (%s:%u)", place->func, place->file, place->line);
	else if (place->func)
		n = snprintf(buf, size, "%s", place->func);
	else if (place->module)
		n = snprintf(buf, size, "%s+0x%llx", place->module,
			     (unsigned long long)place->offset);
	else
		n = snprintf(buf, size, "0x%llx", (unsigned long long)addr);
	if (n < 0)
		n = 0;
	return (size_t)n < size ? (size_t)n : size ? size - 1 : 0;
}
