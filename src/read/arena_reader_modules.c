/*
 * arena_reader_modules.c - the module table of an arena: the process's module
 * map.
 *
 * (Part of read/arena_reader.h; the reader's private parts are
 * read/arena_reader_private.h.)
 */
#include <errno.h>

#include "read/arena_reader_private.h"

static int module_damage(struct rt_reader *rd, uint64_t offset, uint64_t length, uint32_t index,
			 const char *why)
{
	long rc = rt_damage_add(&rd->damage, RT_DAMAGE_MODULE, RT_DAMAGE_UNPARSED, index, offset,
				length, "module entry %u: %s: not a module, not shown", index, why);
	return rc < 0 ? (int)rc : 0;
}

/*
 * The module table: every published entry that checks, with its path.
 * Entries past modules_used are zero unless that counter is damaged (or a
 * live writer claimed one since): such an entry is read if it checks, and
 * the counter reported.  An entry whose path is not where it says is
 * reported over the path's bytes.
 */
int rt_arena_load_modules(struct rt_reader *rd)
{
	const struct rt_arena_header *h = &rd->header;
	const size_t used_field = offsetof(struct rt_arena_header, modules_used);
	const uint32_t used = rt_layout_module_count(h);
	uint32_t beyond = 0;
	char why[128];
	const uint64_t base = h->module_table_offset, each = sizeof(struct rt_module_entry);
	/* an entry in a hole is zeros, never claimed: only entries with data are read */
	for (uint32_t i =
		 (uint32_t)rt_file_data_next_entry(rd->data, base, each, 0, h->module_capacity);
	     i < h->module_capacity; i = (uint32_t)rt_file_data_next_entry(
					 rd->data, base, each, i + 1ull, h->module_capacity)) {
		const uint64_t at = rt_layout_module_offset(h, i);
		struct rt_module_entry copy;
		const struct rt_module_entry *live =
		    rt_file_data_at(rd->data, rd->file, at, sizeof(copy), &copy);
		uint32_t valid = __atomic_load_n(&live->valid, __ATOMIC_ACQUIRE);
		if (valid == 0) {
			/* below modules_used: claimed, not published (yet, or ever) */
			if (i >= used && !rt_bytes_zero(live, sizeof(*live)) &&
			    i >= rt_arena_used_now(rd, used_field, 0) &&
			    module_damage(rd, at, sizeof(*live), i,
					  "bytes in an entry never claimed"))
				return -ENOMEM;
			continue;
		}
		struct rt_module_entry e;
		memcpy(&e, live, sizeof(e));
		/* written after valid, once: a live writer may be setting it now */
		e.unload_counter = __atomic_load_n(&live->unload_counter, __ATOMIC_RELAXED);
		if (!rt_module_entry_ok(&e, why, sizeof(why))) {
			if (module_damage(rd, at, sizeof(*live), i, why))
				return -ENOMEM;
			continue;
		}
		const char *path = (const char *)rd->file + h->string_area_offset + e.path_offset;
		if ((uint64_t)e.path_offset + e.path_length >= h->string_capacity) {
			if (module_damage(rd, at, sizeof(*live), i,
					  "its path lies outside the string area"))
				return -ENOMEM;
			continue;
		}
		const uint64_t path_at = h->string_area_offset + e.path_offset;
		const uint64_t nul_at = path_at + e.path_length;
		/* a byte in a hole, its NUL's included, is damage: never read */
		if (!rt_file_data_whole(rd->data, path_at, nul_at + 1) ||
		    !rt_module_path_ok(path, e.path_length)) {
			if (module_damage(rd, h->string_area_offset + e.path_offset,
					  (uint64_t)e.path_length + 1, i,
					  "its path is not a string where the entry says (a NUL "
					  "inside or missing)"))
				return -ENOMEM;
			continue;
		}
		if (i >= used)
			beyond = i + 1;
		if (rt_reader_modules_add(&rd->modules, i, &e, path))
			return -ENOMEM;
	}
	uint64_t now = rt_arena_used_now(rd, used_field, 0);
	if (beyond > now &&
	    rt_damage_add(&rd->damage, RT_DAMAGE_HEADER, RT_DAMAGE_UNPARSED, 0, used_field,
			  sizeof(h->modules_used),
			  "modules_used %llu, but entry %u is a module's: every entry read",
			  (unsigned long long)now, beyond - 1) < 0)
		return -ENOMEM;
	return 0;
}
