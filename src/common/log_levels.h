/*
 * log_levels.h - the names of the RT_LOG levels (enum rt_log_level), shared
 * by the library (RINGTRACE_LEVEL) and the tool (`level`, `log --level`,
 * every printer).
 */
#ifndef RT_COMMON_LOG_LEVELS_H
#define RT_COMMON_LOG_LEVELS_H

/* "fatal", "error", "warn", "notice", "info", "debug"; "?" for another value. */
const char *rt_log_level_name(unsigned level);

/* The level a name means (any case; "warning" is warn), or 0. */
unsigned rt_log_level_parse(const char *name);

#endif /* RT_COMMON_LOG_LEVELS_H */
