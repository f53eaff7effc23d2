/*
 * config.c - what the arena should look like, from ringtrace_init() options
 * and the environment.  Options win over the environment, which wins over
 * the defaults.  A bad value turns tracing off with a reason; it never
 * guesses.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/arena_names.h"
#include "common/parse.h"
#include "record/record.h"

static uint64_t floor_power_of_two(uint64_t v)
{
	uint64_t p = 1;
	while (p <= v / 2)
		p *= 2;
	return p;
}

void rt_config_default_path(char *out, size_t size)
{
	char program[RT_PROGRAM_MAX];
	char name[64];
	rt_process_program(program, sizeof(program));
	const char *base = strrchr(program, '/');
	base = base ? base + 1 : program;
	/* keep the name safe for a file name: letters, digits, '-', '_', '.' */
	size_t n = 0;
	for (; n < sizeof(name) - 1 && base[n]; n++) {
		char c = base[n];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
		name[n] = (char)(ok ? c : '_');
	}
	name[n] = 0;
	char dir[PATH_MAX];
	if (rt_arena_dir(dir, sizeof(dir)) != 0)
		dir[0] = 0; /* too long: the path is refused when the arena is made */
	snprintf(out, size, "%s/" RT_ARENA_PREFIX "%s.%ld" RT_ARENA_SUFFIX, dir,
		 n ? name : "program", (long)getpid());
}

int rt_config_path_with_pid(char *out, size_t size, const char *path, pid_t pid)
{
	size_t n = strlen(path);
	size_t suffix = sizeof(RT_ARENA_SUFFIX) - 1;
	/* "P.arena" -> "P.PID.arena"; any other name gets ".PID" at its end */
	if (n > suffix && strcmp(path + n - suffix, RT_ARENA_SUFFIX) == 0)
		n -= suffix;
	else
		suffix = 0;
	int w = snprintf(out, size, "%.*s.%ld%s", (int)n, path, (long)pid,
			 suffix ? RT_ARENA_SUFFIX : "");
	return w < 0 || (size_t)w >= size ? -ENAMETOOLONG : 0;
}

static int bad(char *why, size_t why_size, const char *what, const char *value, const char *hint)
{
	snprintf(why, why_size, "%s=%s %s", what, value, hint);
	return -EINVAL;
}

int rt_config_load(struct rt_config *config, const struct ringtrace_options *options, char *why,
		   size_t why_size)
{
	memset(config, 0, sizeof(*config));
	config->ring_bytes_requested = RT_DEFAULT_RING_BYTES;
	config->mode = RT_MODE_FLIGHT;
	config->rings = RT_DEFAULT_RINGS;
	config->crash_events = RT_DEFAULT_CRASH_EVENTS;
	config->modules = RT_MODULE_CAPACITY;

	/* an options struct from an older header is shorter: read what it has */
	struct ringtrace_options opt;
	memset(&opt, 0, sizeof(opt));
	if (options) {
		size_t n = options->size < sizeof(opt) ? options->size : sizeof(opt);
		if (n < sizeof(size_t)) {
			snprintf(why, why_size, "ringtrace_options.size is %zu", options->size);
			return -EINVAL;
		}
		memcpy(&opt, options, n);
	}

	const char *env;
	if (opt.arena_path && opt.arena_path[0]) {
		env = opt.arena_path;
	} else {
		env = getenv("RINGTRACE_ARENA");
	}
	if (env && env[0]) {
		size_t n = strlen(env);
		if (n >= sizeof(config->path))
			return bad(why, why_size, "RINGTRACE_ARENA", "...", "is too long");
		memcpy(config->path, env, n + 1);
		memcpy(config->chosen_path, env, n + 1);
		config->user_path = 1;
	} else {
		rt_config_default_path(config->path, sizeof(config->path));
	}

	if (opt.mode) {
		if (opt.mode != RT_MODE_FLIGHT && opt.mode != RT_MODE_STREAM) {
			snprintf(why, why_size, "ringtrace_options.mode %d is not a mode",
				 opt.mode);
			return -EINVAL;
		}
		config->mode = opt.mode;
	} else if ((env = getenv("RINGTRACE_MODE")) && env[0]) {
		if (strcmp(env, "flight") == 0)
			config->mode = RT_MODE_FLIGHT;
		else if (strcmp(env, "stream") == 0)
			config->mode = RT_MODE_STREAM;
		else
			return bad(why, why_size, "RINGTRACE_MODE", env,
				   "is not a mode (flight or stream)");
	}

	/* after the mode: the default size depends on it */
	if (opt.buffer_bytes) {
		config->ring_bytes_requested = opt.buffer_bytes;
	} else if ((env = getenv("RINGTRACE_BUFFER")) && env[0]) {
		if (rt_parse_size(env, &config->ring_bytes_requested) != 0)
			return bad(why, why_size, "RINGTRACE_BUFFER", env,
				   "is not a size (bytes, or a number with K, M or G)");
	} else if (config->mode == RT_MODE_STREAM) {
		config->ring_bytes_requested = RT_DEFAULT_STREAM_RING_BYTES;
	}
	if (config->ring_bytes_requested < RT_RING_MIN_BYTES ||
	    config->ring_bytes_requested > RT_RING_MAX_BYTES) {
		char value[32];
		snprintf(value, sizeof(value), "%llu",
			 (unsigned long long)config->ring_bytes_requested);
		return bad(why, why_size, "RINGTRACE_BUFFER", value,
			   "is out of range (4K to 64G per thread)");
	}
	config->ring_bytes = floor_power_of_two(config->ring_bytes_requested);

	uint64_t rings = opt.rings;
	if (!rings && (env = getenv("RINGTRACE_RINGS")) && env[0]) {
		if (rt_parse_size(env, &rings) != 0 || rings == 0)
			return bad(why, why_size, "RINGTRACE_RINGS", env, "is not a count");
	}
	if (rings) {
		if (rings > RT_MAX_RINGS) {
			char value[32];
			snprintf(value, sizeof(value), "%llu", (unsigned long long)rings);
			return bad(why, why_size, "RINGTRACE_RINGS", value,
				   "is too many (at most 4096)");
		}
		config->rings = (uint32_t)rings;
	}

	if (opt.crash_events < 0) {
		config->crash_events = 0;
	} else if (opt.crash_events > 0) {
		if ((unsigned)opt.crash_events > RT_CRASH_EVENTS_MAX) {
			snprintf(why, why_size,
				 "ringtrace_options.crash_events %d is too many (at most %u)",
				 opt.crash_events, RT_CRASH_EVENTS_MAX);
			return -EINVAL;
		}
		config->crash_events = (uint32_t)opt.crash_events;
	} else if ((env = getenv("RINGTRACE_CRASH_EVENTS")) && env[0]) {
		uint64_t events;
		if (rt_parse_u64(env, &events) != 0 || events > RT_CRASH_EVENTS_MAX)
			return bad(why, why_size, "RINGTRACE_CRASH_EVENTS", env,
				   "is not a count from 0 to 1000");
		config->crash_events = (uint32_t)events;
	}

	if (opt.sync_ms < 0) {
		config->sync_ms = 0;
	} else if (opt.sync_ms > 0) {
		if ((unsigned)opt.sync_ms > RT_SYNC_MS_MAX) {
			snprintf(why, why_size,
				 "ringtrace_options.sync_ms %d is out of range (1 to %u)",
				 opt.sync_ms, RT_SYNC_MS_MAX);
			return -EINVAL;
		}
		config->sync_ms = (uint32_t)opt.sync_ms;
	} else if ((env = getenv("RINGTRACE_SYNC")) && env[0]) {
		uint64_t ms;
		if (rt_parse_u64(env, &ms) != 0 || ms == 0 || ms > RT_SYNC_MS_MAX)
			return bad(why, why_size, "RINGTRACE_SYNC", env,
				   "is not a period from 1 to 3600000 milliseconds");
		config->sync_ms = (uint32_t)ms;
	}
	if ((env = getenv("RINGTRACE_MODULES")) && env[0]) {
		uint64_t n;
		if (rt_parse_u64(env, &n) != 0 || n > RT_MODULE_CAPACITY_MAX)
			return bad(why, why_size, "RINGTRACE_MODULES", env,
				   "is not a count from 0 (no module map) to 65536");
		config->modules = (uint32_t)n;
	}
	if ((env = getenv(RT_ARENA_COLLECTOR_ENV)) && env[0]) {
		uint64_t pid;
		if (rt_parse_u64(env, &pid) != 0 || pid == 0 || pid > INT32_MAX)
			return bad(why, why_size, RT_ARENA_COLLECTOR_ENV, env, "is not a pid");
		config->collector = (int32_t)pid;
	}
	/* the descriptor table exists only where the I/O interposer runs */
	config->fds = rt_io_on ? RT_FD_CAPACITY : 0;
	if (rt_io_on && (env = getenv("RINGTRACE_FDS")) && env[0]) {
		uint64_t n;
		if (rt_parse_u64(env, &n) != 0 || n > RT_FD_CAPACITY_MAX)
			return bad(why, why_size, "RINGTRACE_FDS", env,
				   "is not a count from 0 (no descriptor table) to 65536");
		config->fds = (uint32_t)n;
	}
	return 0;
}
