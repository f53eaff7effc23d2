/*
 * info_modules.c - `ringtrace info`'s list of a process's modules: every
 * object it had loaded, where, with which build-id, and from when to when
 * (read/modules.h), in text and in JSON.
 */
#include <stdio.h>
#include <string.h>

#include "cmd/info_modules.h"
#include "common/escape.h"
#include "decode/clock.h"

static void build_id_hex(char *out, const struct rt_reader_module *m)
{
	size_t n = m->build_id_size <= RT_BUILD_ID_MAX ? m->build_id_size : 0;
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", m->build_id[i]);
	out[2 * n] = 0;
}

/* "0.001234567" seconds since the trace's start */
static void seconds(char *out, size_t size, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(out, size, "%s%llu.%09llu", ns < 0 ? "-" : "",
		 (unsigned long long)(a / 1000000000), (unsigned long long)(a % 1000000000));
}

void rt_info_modules_text(struct rt_out *out, const struct rt_reader *rd)
{
	const struct rt_reader_modules *ms = &rd->modules;
	if (ms->count == 0)
		return;
	rt_out_printf(out, "\n%18s  %-37s  %-13s  %-13s  %s\n", "base", "range", "loaded",
		      "unloaded", "path (build-id)");
	for (uint32_t i = 0; i < ms->count; i++) {
		const struct rt_reader_module *m = &ms->items[i];
		char id[2 * RT_BUILD_ID_MAX + 1], loaded[32], unloaded[32];
		build_id_hex(id, m);
		if (m->flags & RT_MODULE_F_AT_START)
			snprintf(loaded, sizeof(loaded), "at start");
		else
			seconds(loaded, sizeof(loaded),
				rt_timebase_ns(&rd->timebase, m->load_counter));
		if (m->unload_counter)
			seconds(unloaded, sizeof(unloaded),
				rt_timebase_ns(&rd->timebase, m->unload_counter));
		else
			snprintf(unloaded, sizeof(unloaded), "-");
		rt_out_printf(out, "0x%016llx  0x%016llx-0x%016llx  %-13s  %-13s  %s (%s)%s\n",
			      (unsigned long long)m->base, (unsigned long long)m->low,
			      (unsigned long long)m->high, loaded, unloaded, rt_escaped(m->path),
			      id[0] ? id : "no build-id",
			      m->flags & RT_MODULE_F_PATH_CUT ? " (path cut)" : "");
	}
}

void rt_info_modules_json(struct rt_out *out, const struct rt_reader *rd)
{
	const struct rt_reader_modules *ms = &rd->modules;
	rt_out_str(out, ",\"modules\":[");
	for (uint32_t i = 0; i < ms->count; i++) {
		const struct rt_reader_module *m = &ms->items[i];
		char id[2 * RT_BUILD_ID_MAX + 1];
		build_id_hex(id, m);
		rt_out_str(out, i ? ",{\"path\":" : "{\"path\":");
		rt_out_json_string(out, m->path, strlen(m->path));
		rt_out_printf(out, ",\"base\":%llu,\"low\":%llu,\"high\":%llu,\"build_id\":",
			      (unsigned long long)m->base, (unsigned long long)m->low,
			      (unsigned long long)m->high);
		rt_out_json_string(out, id, strlen(id));
		rt_out_printf(out, ",\"main\":%s,\"at_start\":%s",
			      m->flags & RT_MODULE_F_MAIN ? "true" : "false",
			      m->flags & RT_MODULE_F_AT_START ? "true" : "false");
		if (m->flags & RT_MODULE_F_AT_START)
			rt_out_str(out, ",\"loaded_ns\":null");
		else
			rt_out_printf(out, ",\"loaded_ns\":%lld",
				      (long long)rt_timebase_ns(&rd->timebase, m->load_counter));
		if (m->unload_counter)
			rt_out_printf(out, ",\"unloaded_ns\":%lld}",
				      (long long)rt_timebase_ns(&rd->timebase, m->unload_counter));
		else
			rt_out_str(out, ",\"unloaded_ns\":null}");
	}
	rt_out_char(out, ']');
}
