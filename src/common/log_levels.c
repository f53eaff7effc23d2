/*
 * log_levels.c - see log_levels.h.  libc only: the library uses it too.
 */
#include "common/log_levels.h"

#include <strings.h>

#include "ringtrace/format.h"

static const char *const level_names[] = {"?", "fatal", "error", "warn", "notice", "info", "debug"};

const char *rt_log_level_name(unsigned level)
{
	return level < sizeof(level_names) / sizeof(level_names[0]) ? level_names[level] : "?";
}

unsigned rt_log_level_parse(const char *name)
{
	for (unsigned i = RT_LOG_FATAL; i <= RT_LOG_DEBUG; i++)
		if (!strcasecmp(name, level_names[i]))
			return i;
	if (!strcasecmp(name, "warning"))
		return RT_LOG_WARN;
	return 0;
}
