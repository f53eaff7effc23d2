/*
 * config.c - what the arena should look like, from ringtrace_init() options
 * and the environment.  Options win over the environment, which wins over
 * the defaults.  A bad value turns tracing off with a reason; it never
 * guesses.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "common/arena_names.h"
#include "common/parse.h"
#include "record/record.h"

extern char **environ;

/*
 * The environment before the C library has set it up.  The C library
 * points environ at the process's environment in its own initialisation,
 * which runs after the program's .preinit_array entries: an event from one
 * of those finds environ NULL, and getenv() finds nothing.  That
 * environment is the one the process was started with, which the kernel
 * shows in /proc/self/environ: its RINGTRACE_ variables are copied from
 * there, once, into a static area (open and read only: the first event may
 * come from a signal handler).  Once this library's constructor has run,
 * the C library's initialisation is done, and a NULL environ is the
 * program's own doing (clearenv): then the variables are not set.
 */
#define RT_EARLY_ENV_BYTES (3 * PATH_MAX)
static struct {
	int state; /* 0: not read, 1: being read, 2: read (atomic) */
	size_t used;
	char vars[RT_EARLY_ENV_BYTES]; /* "NAME=VALUE\0" after each other */
} early_env;
static int constructed; /* this library's constructors have run */

/*
 * A privileged process: one the kernel started with AT_SECURE, because
 * exec gave it an effective user or group other than its caller's (a
 * set-user-ID or set-group-ID program) or capabilities its caller lacks
 * (file capabilities).  Its environment is its caller's, so the caller
 * must not steer what it does with its privileges: where a file is made
 * (RINGTRACE_ARENA, RINGTRACE_DIR), how large (RINGTRACE_BUFFER,
 * RINGTRACE_RINGS), to which collector it answers (RINGTRACE_COLLECTOR),
 * what a child is given (RINGTRACE_INHERIT, exec.c).  Such a process reads
 * no RINGTRACE_ variable at all: rt_getenv() finds none, before and after
 * the C library has started, and the library's constructor says so in one
 * line when there were some to ignore.  Only the program's own code
 * configures it (ringtrace_init() options); where its arena goes without
 * a path of the program's is rt_config_load()'s business.
 */
int rt_privileged(void)
{
	return getauxval(AT_SECURE) != 0;
}

static void say_environment_ignored(void)
{
	static const char prefix[] = "RINGTRACE_";
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, prefix, sizeof(prefix) - 1) == 0) {
			rt_warn("this process runs with privileges its caller lacks "
				"(set-user-ID, set-group-ID or file capabilities): tracing "
				"settings from the environment (RINGTRACE_*) were ignored",
				NULL, NULL, NULL);
			return;
		}
}

__attribute__((constructor)) static void rt_config_constructed(void)
{
	__atomic_store_n(&constructed, 1, __ATOMIC_RELEASE);
	if (rt_privileged())
		say_environment_ignored();
}

/* Keep the entries of fd (NUL-ended, as in /proc/self/environ) that begin with RINGTRACE_. */
static void early_env_read(int fd)
{
	static const char prefix[] = "RINGTRACE_";
	const size_t prefix_len = sizeof(prefix) - 1;
	const size_t room = sizeof(early_env.vars);
	char chunk[4096];
	size_t matched = 0; /* bytes of this entry so far, all matching prefix */
	size_t entry = 0;   /* where the entry being kept starts in vars */
	int keeping = 0, skipping = 0, too_long = 0;
	ssize_t n;
	while ((n = read(fd, chunk, sizeof(chunk))) > 0 || (n < 0 && errno == EINTR)) {
		for (ssize_t i = 0; i < n; i++) {
			char c = chunk[i];
			if (keeping) {
				if (early_env.used == room) {
					early_env.used = entry; /* never half an entry */
					too_long = 1;
					keeping = 0;
					skipping = c != 0;
				} else {
					early_env.vars[early_env.used++] = c;
					keeping = c != 0;
				}
			} else if (skipping || c != prefix[matched]) {
				/* NUL: the entry skipped, or one shorter than prefix, ended */
				skipping = c != 0;
			} else if (++matched == prefix_len) {
				if (room - early_env.used > prefix_len) {
					entry = early_env.used;
					memcpy(early_env.vars + entry, prefix, prefix_len);
					early_env.used += prefix_len;
					keeping = 1;
				} else {
					too_long = 1;
					skipping = 1;
				}
			}
			if (c == 0)
				matched = 0; /* the next entry begins */
		}
	}
	if (keeping)
		early_env.used = entry; /* cut short */
	if (too_long)
		rt_warn("RINGTRACE_ variables too long to read before the C library has started "
			"are ignored",
			NULL, NULL, NULL);
}

static const char *early_env_lookup(const char *name)
{
	size_t len = strlen(name);
	for (size_t at = 0; at < early_env.used;) {
		const char *e = early_env.vars + at;
		size_t n = strlen(e);
		if (n > len && memcmp(e, name, len) == 0 && e[len] == '=')
			return e + len + 1;
		at += n + 1;
	}
	return NULL;
}

const char *rt_getenv(const char *name)
{
	if (rt_privileged())
		return NULL;
	if (environ || __atomic_load_n(&constructed, __ATOMIC_ACQUIRE))
		return getenv(name);
	int state = 0;
	if (__atomic_compare_exchange_n(&early_env.state, &state, 1, 0, __ATOMIC_ACQUIRE,
					__ATOMIC_ACQUIRE)) {
		int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			early_env_read(fd);
			close(fd);
		} else {
			rt_warn("RINGTRACE_ variables are not read before the C library has "
				"started: /proc/self/environ: ",
				strerror(errno), NULL, NULL);
		}
		/* publishes: the variables kept */
		__atomic_store_n(&early_env.state, 2, __ATOMIC_RELEASE);
	} else if (state == 1) {
		return NULL; /* another thread is reading them, before the C library started */
	}
	return early_env_lookup(name);
}

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
	if (rt_arena_dir_from(rt_getenv(RT_ARENA_DIR_ENV), dir, sizeof(dir)) != 0)
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
		env = rt_getenv("RINGTRACE_ARENA");
	}
	if (!(env && env[0]) && rt_privileged() && geteuid() == getuid()) {
		/*
		 * A privileged process without a path of the program's own makes
		 * its arena in the default directory of its effective user, the
		 * user its files belong to: for a set-user-ID program not the
		 * caller, who can neither enter that directory nor open the
		 * 0600 file.  The arena is the process's memory, shared: its
		 * caller must no more read or write it (or truncate it under
		 * the process's stores) than ptrace the process, which the
		 * kernel forbids.  When the effective user is the caller (a
		 * set-group-ID program, file capabilities), that directory and
		 * the file would be the caller's: no arena then.
		 */
		snprintf(why, why_size,
			 "this process has privileges its user (uid %lu) lacks, and an arena "
			 "in that user's directory would be theirs to read and change: a "
			 "privileged program records only into a path it names itself "
			 "(ringtrace_options.arena_path)",
			 (unsigned long)getuid());
		return -EPERM;
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
	} else if ((env = rt_getenv("RINGTRACE_MODE")) && env[0]) {
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
	} else if ((env = rt_getenv("RINGTRACE_BUFFER")) && env[0]) {
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
	if (!rings && (env = rt_getenv("RINGTRACE_RINGS")) && env[0]) {
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
	} else if ((env = rt_getenv("RINGTRACE_CRASH_EVENTS")) && env[0]) {
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
	} else if ((env = rt_getenv("RINGTRACE_SYNC")) && env[0]) {
		uint64_t ms;
		if (rt_parse_u64(env, &ms) != 0 || ms == 0 || ms > RT_SYNC_MS_MAX)
			return bad(why, why_size, "RINGTRACE_SYNC", env,
				   "is not a period from 1 to 3600000 milliseconds");
		config->sync_ms = (uint32_t)ms;
	}
	if ((env = rt_getenv("RINGTRACE_MODULES")) && env[0]) {
		uint64_t n;
		if (rt_parse_u64(env, &n) != 0 || n > RT_MODULE_CAPACITY_MAX)
			return bad(why, why_size, "RINGTRACE_MODULES", env,
				   "is not a count from 0 (no module map) to 65536");
		config->modules = (uint32_t)n;
	}
	if ((env = rt_getenv(RT_ARENA_COLLECTOR_ENV)) && env[0]) {
		uint64_t pid;
		if (rt_parse_u64(env, &pid) != 0 || pid == 0 || pid > INT32_MAX)
			return bad(why, why_size, RT_ARENA_COLLECTOR_ENV, env, "is not a pid");
		config->collector = (int32_t)pid;
	}
	if ((env = rt_getenv(RT_FULL_WAIT_ENV)) && env[0]) {
		uint64_t us;
		if (rt_parse_u64(env, &us) != 0 || us > RT_FULL_WAIT_US_MAX)
			return bad(why, why_size, RT_FULL_WAIT_ENV, env,
				   "is not a time from 0 to 10000000 microseconds");
		config->full_wait_us = (uint32_t)us;
	}
	/* the descriptor table exists only where the I/O interposer runs */
	config->fds = rt_io_on ? RT_FD_CAPACITY : 0;
	if (rt_io_on && (env = rt_getenv("RINGTRACE_FDS")) && env[0]) {
		uint64_t n;
		if (rt_parse_u64(env, &n) != 0 || n > RT_FD_CAPACITY_MAX)
			return bad(why, why_size, "RINGTRACE_FDS", env,
				   "is not a count from 0 (no descriptor table) to 65536");
		config->fds = (uint32_t)n;
	}
	return 0;
}
