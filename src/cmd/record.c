/*
 * record.c - `ringtrace record [OPTIONS] [--] PROGRAM [ARGS...]`: run a
 * program with tracing configured for it and drain its arenas (and its
 * children's) into a trace file while it runs.
 *
 * Order of things, and why:
 *  1. The output is opened before anything runs, so an output that cannot
 *     be written is reported and no program is started (exit 1; 2 for a
 *     file of another user, never written: common/out_file.h).
 *  2. The program is forked and exec'd with RINGTRACE_ARENA (a private file
 *     in the user's arena directory unless the user set one), RINGTRACE_MODE,
 *     RINGTRACE_BUFFER and RINGTRACE_COLLECTOR (record's pid) in its
 *     environment, and the recording library
 *     appended to its LD_PRELOAD (record_preload.h).  stdin, stdout and stderr are
 *     its own; record writes only to stderr.  An exec failure comes back
 *     through a close-on-exec pipe: 127 not found, 126 otherwise, as a
 *     shell says.
 *  3. The loop: attach the arena as soon as its header is complete, poll
 *     the collector, scan for children's arenas every 5 ms.  Between polls
 *     it sleeps (50 us, growing to 400 us while nothing comes) only when
 *     the collector says the rings fill slowly enough
 *     (rt_collector_wait_ns() of 2 ms or more): a sleep can last milliseconds
 *     longer than asked on a busy or virtual machine, and even stream
 *     mode's 16 MiB default ring fills in about 52 ms at 10 M events/s.
 *     Faster than that it only yields the CPU between polls.
 *  4. When the program ends (waitpid): a last pass, and its source
 *     finished.  Then record goes on, as in 3, while a process the program
 *     left behind (a child still running, a daemon) records: its arena is
 *     attached and neither closed nor its process gone, or it was forked
 *     from a process that recorded and has not recorded yet
 *     (record_arenas.h).  Record is the subreaper of the program's
 *     processes (PR_SET_CHILD_SUBREAPER), so that a daemon whose parent
 *     exited stays among its descendants, where it is looked for; it reaps
 *     them as they end.  SIGINT, SIGTERM, SIGHUP or SIGQUIT stop that wait,
 *     and --no-wait skips it.
 *  5. Then: sources of processes still running detached (what they write
 *     from then on is not recorded, and is not a loss), the output closed,
 *     private arenas removed, and record ends as the program did: its exit
 *     status, or its signal raised again on record (with core dumps off, so
 *     the shell sees the signal but only one core is ever written: the
 *     program's).
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to record by another
 * process (kill: SI_USER, SI_QUEUE, SI_TKILL) while the program runs are
 * passed on to it; those the terminal sent (SI_KERNEL) reached the program
 * already, since it is in the same process group, and are not sent twice.
 * Once the program has ended, any of them stops the wait of 4.  Record
 * itself outlives them, so that it can finish the trace.
 *
 * A failing output (disk full) stops the recording with one line on
 * stderr; the file stays valid up to its last complete block, the program
 * runs on untouched, and record still ends with the program's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "cmd/record_arenas.h"
#include "cmd/record_orphans.h"
#include "cmd/record_preload.h"
#include "collect/collector.h"
#include "common/arena_names.h"
#include "common/parse.h"
#include "symbols/function_filter.h"
#include "symbols/instrumentation.h"

#define USAGE                                                                                      \
	"ringtrace record [-o OUT] [--io] [--mode stream|flight] [--buffer SIZE] "                 \
	"[--max-size SIZE] [--max-files N] [-F PATTERN]... [-N PATTERN]... [-D DEPTH] [-t TIME] "  \
	"[--drop] [--no-wait] [-q] [--] PROGRAM [ARGS...]"
#define RT_RECORD_PATTERNS_MAX 64
#define DEFAULT_OUTPUT "ringtrace.rt"
#define SCAN_EVERY_NS 5000000ull
#define IDLE_SLEEP_MIN_NS 50000L
#define IDLE_SLEEP_MAX_NS 400000L
#define SLEEP_WHEN_WAIT_NS 2000000ull
/* stream mode: the longest a writer waits at a full ring for record to drain it */
#define FULL_WAIT_US 100000u
/* after the program: how often its descendants' maps are read (record_arenas.h) */
#define TREE_EVERY_NS 50000000ull

void rt_cmd_record_help(FILE *to)
{
	fprintf(to,
		"usage: " USAGE "\n"
		"\n"
		"Run PROGRAM with tracing on and write its trace, and the traces of the\n"
		"children it forks, into OUT while it runs.  PROGRAM's stdin, stdout, stderr\n"
		"and exit status pass through; SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to\n"
		"record are passed on to it.  If PROGRAM crashes or is killed, everything it\n"
		"recorded up to then is written and OUT is closed properly.\n"
		"\n"
		"Processes that outlive PROGRAM (a daemon it started, a child still running)\n"
		"are recorded until they end: record goes on while one of them records, and\n"
		"says so on stderr.  To stop it sooner, press Ctrl-C or send it SIGINT (or\n"
		"SIGTERM, SIGHUP, SIGQUIT) once PROGRAM has ended: what they recorded so far\n"
		"is written, OUT is closed, and they run on unrecorded.\n"
		"\n"
		"Options:\n"
		"  -o, --output OUT   the trace file (default " DEFAULT_OUTPUT ")\n"
		"  --io               trace PROGRAM's file I/O too (open, read, write, close,\n"
		"                     stdio...) through " RT_PRELOAD_IO_LIBRARY ", preloaded\n"
		"                     (RINGTRACE_PRELOAD_IO=PATH names another); every event\n"
		"                     names its file: see FILE I/O in ringtrace(1)\n"
		"  --mode MODE        stream (default): drain the rings continuously; a thread\n"
		"                     whose ring is full waits for record to drain it (up to\n"
		"                     0.1 s at a time: record stopped or killed, it drops and\n"
		"                     counts instead), so nothing is lost;\n"
		"                     flight: rings overwrite, written at exit and on\n"
		"                     'ringtrace snapshot PID'\n"
		"  --buffer SIZE      per-thread ring size (RINGTRACE_BUFFER; default 16M in\n"
		"                     stream mode, 1M in flight mode)\n"
		"  --max-size SIZE    rotate: files OUT.000000, OUT.000001, ... of about SIZE\n"
		"  --max-files N      with --max-size: keep the newest N files\n"
		"  -F, --filter PATTERN  record only the calls of PROGRAM's functions that\n"
		"                     PATTERN selects, and what runs inside them (a shell glob\n"
		"                     on the short name, the full name or the symbol; again\n"
		"                     for more)\n"
		"  -N, --notrace PATTERN  record neither those functions' calls nor what runs\n"
		"                     inside them (applies inside -F's calls too)\n"
		"  -D, --depth N      record calls at depths below N only (RINGTRACE_MAX_DEPTH)\n"
		"  -t, --min-duration TIME  record only calls that last TIME or longer (10us,\n"
		"                     1ms), with the calls around them\n"
		"  --drop             stream mode: a thread whose ring is full never waits; the\n"
		"                     events that do not fit are dropped and counted\n"
		"  --no-wait          end with PROGRAM: processes that outlive it are recorded\n"
		"                     only up to then\n"
		"  -q, --quiet        no closing line on stderr (nor, when nothing was\n"
		"                     recorded, why and how to build a program that records)\n"
		"\n"
		"The arena lives at RINGTRACE_ARENA when set (and is kept), else in a private\n"
		"file " RT_ARENA_DIR_TEXT "/" RT_ARENA_PREFIX "PROGRAM.PID" RT_ARENA_SUFFIX
		" removed at the end;\n"
		"'ringtrace ls' shows it while PROGRAM runs.  Children's arenas take their pid:\n"
		"ARENA.PID.arena.  If record itself is killed (SIGKILL), PROGRAM runs on and\n"
		"OUT holds what was written up to then; the private arenas it leaves are\n"
		"removed by the next record once their processes have ended (it says so), or\n"
		"by 'ringtrace rm --dead'.\n"
		"\n"
		"The recording library is appended to PROGRAM's LD_PRELOAD, so that a program\n"
		"built with -finstrument-functions records its calls even when it is not linked\n"
		"with ringtrace.  It is " RT_PRELOAD_LIBRARY
		" beside the tool (a build tree), else in\n"
		"the tool's ../lib (an installed tree); RINGTRACE_PRELOAD=PATH names another,\n"
		"RINGTRACE_PRELOAD=0 preloads nothing.\n"
		"\n"
		"Exit status: PROGRAM's (a PROGRAM killed by a signal kills record with the\n"
		"same signal); 1 when OUT cannot be written (PROGRAM is not started); 2 for\n"
		"bad usage; 126 or 127 when PROGRAM cannot be run.\n");
}

struct record_options {
	const char *output;
	const char *mode; /* "stream" or "flight" */
	const char *buffer;
	uint64_t max_size;
	uint32_t max_files;
	int quiet;
	int io;	     /* --io: preload the I/O interposer as well */
	int no_wait; /* --no-wait: end with the program */
	int drop;    /* --drop: a full ring drops, its writer never waits */
	/* -F/-N: the recording filter, written to filter_path (symbols/function_filter.h) */
	const char *only[RT_RECORD_PATTERNS_MAX];
	size_t only_count;
	const char *out[RT_RECORD_PATTERNS_MAX];
	size_t out_count;
	char filter_path[PATH_MAX];
	const char *depth;	  /* -D: RINGTRACE_MAX_DEPTH */
	const char *min_duration; /* -t: RINGTRACE_MIN_DURATION */
	char **program;		  /* argv of the program, NULL-terminated */
	/* the libraries added to its LD_PRELOAD, or "" */
	char preload[PATH_MAX];
	char preload_io[PATH_MAX];
};

#define PATTERN_ERROR "%s takes a function pattern (at most %d)"

/* One more -F or -N pattern (NULL: the option had none).  -1 when there is no room. */
static int add_pattern(const char **list, size_t *count, const char *pattern)
{
	if (!pattern || !pattern[0] || *count == RT_RECORD_PATTERNS_MAX)
		return -1;
	list[(*count)++] = pattern;
	return 0;
}

static int parse_options(int argc, char **argv, struct record_options *o, int *help)
{
	memset(o, 0, sizeof(*o));
	o->output = DEFAULT_OUTPUT;
	o->mode = "stream";
	int has_max_files = 0;
	int i = 1;
	for (; i < argc; i++) {
		const char *v = NULL;
		const char *arg = argv[i];
		int m;
		if (strcmp(arg, "--") == 0) {
			i++;
			break;
		}
		if (arg[0] != '-' || arg[1] == 0)
			break;
		if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			*help = 1;
			return 0;
		}
		if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0) {
			o->quiet = 1;
		} else if (strcmp(arg, "--io") == 0) {
			o->io = 1;
		} else if (strcmp(arg, "--no-wait") == 0) {
			o->no_wait = 1;
		} else if (strcmp(arg, "--drop") == 0) {
			o->drop = 1;
		} else if ((m = rt_cmd_option(argc, argv, &i, "-F", &v)) != 0 ||
			   (m = rt_cmd_option(argc, argv, &i, "--filter", &v)) != 0) {
			if (add_pattern(o->only, &o->only_count, m < 0 ? NULL : v) != 0)
				return rt_cmd_usage_error("record", USAGE, PATTERN_ERROR, "-F",
							  RT_RECORD_PATTERNS_MAX);
		} else if ((m = rt_cmd_option(argc, argv, &i, "-N", &v)) != 0 ||
			   (m = rt_cmd_option(argc, argv, &i, "--notrace", &v)) != 0) {
			if (add_pattern(o->out, &o->out_count, m < 0 ? NULL : v) != 0)
				return rt_cmd_usage_error("record", USAGE, PATTERN_ERROR, "-N",
							  RT_RECORD_PATTERNS_MAX);
		} else if ((m = rt_cmd_option(argc, argv, &i, "-t", &v)) != 0 ||
			   (m = rt_cmd_option(argc, argv, &i, "--min-duration", &v)) != 0) {
			uint64_t ns;
			if (m < 0 || rt_parse_duration(v, &ns) != 0 || ns > RT_MIN_DURATION_NS_MAX)
				return rt_cmd_usage_error(
				    "record", USAGE,
				    "-t is a duration up to 1h with a unit (10us)");
			o->min_duration = v;
		} else if ((m = rt_cmd_option(argc, argv, &i, "-D", &v)) != 0 ||
			   (m = rt_cmd_option(argc, argv, &i, "--depth", &v)) != 0) {
			uint64_t n;
			if (m < 0 || rt_parse_u64(v, &n) != 0 || n == 0 || n > UINT32_MAX)
				return rt_cmd_usage_error("record", USAGE,
							  "-D is a number of calls of at least 1");
			o->depth = v;
		} else if (strncmp(arg, "-o", 2) == 0 && arg[2] != 0 && arg[1] != '-') {
			o->output = arg + 2;
		} else if ((m = rt_cmd_option(argc, argv, &i, "-o", &v)) != 0 ||
			   (m = rt_cmd_option(argc, argv, &i, "--output", &v)) != 0) {
			if (m < 0 || !v[0])
				return rt_cmd_usage_error("record", USAGE, "%s needs a file name",
							  arg);
			o->output = v;
		} else if ((m = rt_cmd_option(argc, argv, &i, "--mode", &v)) != 0) {
			if (m < 0 || (strcmp(v, "stream") != 0 && strcmp(v, "flight") != 0))
				return rt_cmd_usage_error("record", USAGE,
							  "--mode is stream or flight");
			o->mode = v;
		} else if ((m = rt_cmd_option(argc, argv, &i, "--buffer", &v)) != 0) {
			uint64_t bytes;
			if (m < 0 || rt_parse_size(v, &bytes) != 0 || bytes < RT_RING_MIN_BYTES ||
			    bytes > RT_RING_MAX_BYTES)
				return rt_cmd_usage_error("record", USAGE,
							  "--buffer is a size from 4K to 64G");
			o->buffer = v;
		} else if ((m = rt_cmd_option(argc, argv, &i, "--max-size", &v)) != 0) {
			if (m < 0 || rt_parse_size(v, &o->max_size) != 0 ||
			    o->max_size < 4ull * RT_BLOCK_MAX_BYTES)
				return rt_cmd_usage_error("record", USAGE,
							  "--max-size is a size of at least 16K");
		} else if ((m = rt_cmd_option(argc, argv, &i, "--max-files", &v)) != 0) {
			uint64_t n;
			if (m < 0 || rt_parse_u64(v, &n) != 0 || n == 0 || n > UINT32_MAX)
				return rt_cmd_usage_error("record", USAGE,
							  "--max-files is a count of at least 1");
			o->max_files = (uint32_t)n;
			has_max_files = 1;
		} else {
			return rt_cmd_usage_error("record", USAGE, "unknown option '%s'", arg);
		}
	}
	if (i >= argc)
		return rt_cmd_usage_error("record", USAGE, "no program to run");
	if (has_max_files && !o->max_size)
		return rt_cmd_usage_error("record", USAGE, "--max-files needs --max-size");
	o->program = argv + i;
	return 0;
}

/* ---- the program's process -------------------------------------------- */

static volatile sig_atomic_t child_pid;
/* a signal came once the program had ended: stop waiting for what it left */
static volatile sig_atomic_t interrupted;

static void forward(int sig, siginfo_t *info, void *context)
{
	(void)context;
	int saved = errno;
	/* the terminal's signals went to the whole process group, the program too */
	if (child_pid > 0 &&
	    (info->si_code == SI_USER || info->si_code == SI_QUEUE || info->si_code == SI_TKILL))
		kill((pid_t)child_pid, sig);
	else if (child_pid == 0)
		interrupted = 1;
	errno = saved;
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define FORWARDED_COUNT (sizeof(forwarded) / sizeof(forwarded[0]))

static void install_forwarding(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < FORWARDED_COUNT; i++)
		sigaction(forwarded[i], &sa, NULL);
}

/* The name part of a private arena: the program's base name, safe in a file name. */
static void program_name(const char *program, char *out, size_t size)
{
	const char *base = rt_path_basename(program);
	size_t n = 0;
	for (; n + 1 < size && base[n]; n++) {
		char c = base[n];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
		out[n] = (char)(ok ? c : '_');
	}
	out[n] = 0;
	if (n == 0)
		snprintf(out, size, "program");
}

/*
 * In the child: the environment, the signals record changed, then exec.
 * errno goes back through report (close-on-exec) if exec fails.
 */
static void run_program(const struct record_options *o, const char *arena, int report)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (size_t i = 0; i < FORWARDED_COUNT; i++)
		sigaction(forwarded[i], &dfl, NULL);
	int err = 0;
	char collector[24];
	/* record is the parent: arenas an exec sets aside are kept for it (arena_last.c) */
	snprintf(collector, sizeof(collector), "%ld", (long)getppid());
	/* the writers wait for room from their first event on, before record attaches */
	char full_wait[24];
	snprintf(full_wait, sizeof(full_wait), "%u", o->drop ? 0u : FULL_WAIT_US);
	if (setenv(RT_ARENA_COLLECTOR_ENV, collector, 1) != 0 ||
	    (arena && setenv("RINGTRACE_ARENA", arena, 1) != 0) ||
	    setenv("RINGTRACE_MODE", o->mode, 1) != 0 ||
	    setenv(RT_FULL_WAIT_ENV, full_wait, 1) != 0 ||
	    (o->filter_path[0] && setenv(RT_FUNCTION_FILTER_ENV, o->filter_path, 1) != 0) ||
	    (o->depth && setenv("RINGTRACE_MAX_DEPTH", o->depth, 1) != 0) ||
	    (o->min_duration && setenv(RT_MIN_DURATION_ENV, o->min_duration, 1) != 0) ||
	    (o->buffer && setenv("RINGTRACE_BUFFER", o->buffer, 1) != 0))
		err = errno;
	if (!err && o->preload_io[0])
		err = -rt_record_preload_apply(o->preload_io);
	if (!err && o->preload[0])
		err = -rt_record_preload_apply(o->preload);
	if (!err) {
		execvp(o->program[0], o->program);
		err = errno;
	}
	ssize_t ignored = write(report, &err, sizeof(err));
	(void)ignored;
	_exit(err == ENOENT ? 127 : 126);
}

/* Nanoseconds of CLOCK_MONOTONIC. */
static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Reap record's children: the program, and the processes it left that
 * ended (record is their subreaper).  1 when the program was reaped (its
 * wait status into status), else 0.
 */
static int reap(pid_t program, int *status)
{
	int reaped = 0, st;
	pid_t r;
	while ((r = waitpid(-1, &st, WNOHANG)) > 0)
		if (r == program) {
			*status = st;
			reaped = 1;
		}
	return reaped;
}

/* Between two polls: yield while the rings fill fast, else sleep, longer while idle. */
static void pause_between_polls(struct rt_record_arenas *arenas, int64_t written, long *idle_ns)
{
	if (written > 0)
		*idle_ns = IDLE_SLEEP_MIN_NS;
	if (rt_collector_wait_ns(arenas->collector) < SLEEP_WHEN_WAIT_NS) {
		sched_yield();
		return;
	}
	if (written > 0)
		return;
	struct timespec pause = {0, *idle_ns};
	nanosleep(&pause, NULL);
	if (*idle_ns < IDLE_SLEEP_MAX_NS)
		*idle_ns *= 2;
}

/* Drain until the program ends; its wait status. */
static int collect_until_exit(struct rt_record_arenas *arenas, pid_t pid)
{
	uint64_t next_scan = 0;
	long idle_ns = IDLE_SLEEP_MIN_NS;
	int status = 0;
	for (;;) {
		uint64_t now = now_ns();
		int scan = now >= next_scan;
		if (scan)
			next_scan = now + SCAN_EVERY_NS;
		rt_record_arenas_discover(arenas, scan);
		int64_t written = rt_record_arenas_poll(arenas);
		if (reap(pid, &status))
			return status;
		pause_between_polls(arenas, written, &idle_ns);
	}
}

/*
 * After the program: drain while a process it left behind records, until
 * none does, the output failed, or a signal came (interrupted).
 */
static void collect_while_recording(const struct record_options *o, struct rt_record_arenas *arenas)
{
	uint64_t next_scan = 0, next_tree = 0;
	long idle_ns = IDLE_SLEEP_MIN_NS;
	int forked_waiting = 0, said = 0;
	while (!interrupted && !arenas->failed) {
		int status;
		reap(0, &status);
		uint64_t now = now_ns();
		int scan = now >= next_scan;
		if (scan)
			next_scan = now + SCAN_EVERY_NS;
		rt_record_arenas_discover(arenas, scan);
		int64_t written = rt_record_arenas_poll(arenas);
		if (scan && rt_record_arenas_attached_running(arenas) == 0) {
			/* maps are read now and then; a fork seen is waited for meanwhile */
			if (now >= next_tree) {
				forked_waiting = rt_record_arenas_forked_waiting(arenas, getpid());
				next_tree = now + TREE_EVERY_NS;
			}
			if (!forked_waiting)
				return;
		}
		if (scan && !said && !o->quiet) {
			fprintf(
			    stderr,
			    "ringtrace record: %s ended; waiting for the processes it left that "
			    "still record (Ctrl-C stops)\n",
			    o->program[0]);
			said = 1;
		}
		pause_between_polls(arenas, written, &idle_ns);
	}
}

/* End as the program did: its exit status, or its signal. */
static int end_like(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (!WIFSIGNALED(status))
		return RT_EXIT_FAILURE;
	int sig = WTERMSIG(status);
	struct rlimit none = {0, 0};
	setrlimit(RLIMIT_CORE, &none); /* the program dumped its own core, if any */
	signal(sig, SIG_DFL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	fflush(NULL);
	raise(sig);
	return 128 + sig; /* a signal that does not kill (SIGCHLD...) cannot end a process */
}

/* The closing line: what was written, what was lost, by cause. */
static void report(const struct record_options *o, const struct rt_collector_stats *st)
{
	uint64_t lost = st->dropped + st->overwritten + st->torn + st->unwritten;
	char files[64] = "", unwritten[96] = "";
	if (st->files > 1)
		snprintf(files, sizeof(files), " (%llu files)", (unsigned long long)st->files);
	if (st->unwritten)
		snprintf(unwritten, sizeof(unwritten), ", %llu not written (the output failed)",
			 (unsigned long long)st->unwritten);
	fprintf(stderr,
		"ringtrace: %llu records written to %s%s (%llu lost: %llu dropped, "
		"%llu overwritten, %llu torn%s)\n",
		(unsigned long long)st->records, rt_escaped(o->output), files,
		(unsigned long long)lost, (unsigned long long)st->dropped,
		(unsigned long long)st->overwritten, (unsigned long long)st->torn, unwritten);
}

/*
 * The file execvp runs for program: program itself when it names a path,
 * else the first executable regular file of that name in PATH.  0, or -1.
 */
static int program_file(const char *program, char *out, size_t size)
{
	if (strchr(program, '/'))
		return snprintf(out, size, "%s", program) < (int)size ? 0 : -1;
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin"; /* execvp's default */
	for (const char *dir = path;; dir++) {
		const char *end = strchrnul(dir, ':');
		int n = end == dir ? snprintf(out, size, "%s", program)
				   : snprintf(out, size, "%.*s/%s", (int)(end - dir), dir, program);
		struct stat st;
		if (n >= 0 && n < (int)size && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
		    access(out, X_OK) == 0)
			return 0;
		if (!*end)
			return -1;
		dir = end;
	}
}

/*
 * -F/-N: the functions the patterns select in the program's file, into a
 * private file the library reads at load (removed at the end).  A pattern
 * that selects nothing is a mistake worth stopping for: 2, said why.
 */
static int write_filter(struct record_options *o)
{
	char path[PATH_MAX];
	if (program_file(o->program[0], path, sizeof(path)) != 0) {
		fprintf(stderr, "ringtrace record: -F/-N: %s: no such program\n",
			rt_escaped(o->program[0]));
		return -1;
	}
	const char *dir = getenv("TMPDIR");
	snprintf(o->filter_path, sizeof(o->filter_path), "%s/ringtrace-filter.XXXXXX",
		 dir && dir[0] ? dir : "/tmp");
	int fd = mkstemp(o->filter_path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		fprintf(stderr, "ringtrace record: -F/-N: %s: %s\n", rt_escaped(o->filter_path),
			strerror(errno));
		if (fd >= 0)
			close(fd);
		o->filter_path[0] = 0;
		return -1;
	}
	size_t matched[2 * RT_RECORD_PATTERNS_MAX];
	struct rt_function_patterns p = {o->only, o->only_count, o->out, o->out_count};
	int rc = rt_function_filter_write(path, &p, f, matched);
	if (fclose(f) != 0 && !rc)
		rc = -EIO;
	for (size_t k = 0; !rc && k < o->only_count + o->out_count; k++) {
		if (matched[k])
			continue;
		fprintf(stderr, "ringtrace record: %s '%s' selects no function of %s\n",
			k < o->only_count ? "-F" : "-N",
			rt_escaped(k < o->only_count ? o->only[k] : o->out[k - o->only_count]),
			rt_escaped(path));
		rc = -ENOENT;
	}
	if (rc && rc != -ENOENT)
		fprintf(stderr, "ringtrace record: -F/-N: %s: %s\n", rt_escaped(path),
			rc == -ENOEXEC ? "not an ELF program" : strerror(-rc));
	if (rc) {
		unlink(o->filter_path);
		o->filter_path[0] = 0;
		return -1;
	}
	return 0;
}

/*
 * Nothing at all was recorded: why, as far as the program's file tells,
 * and how a program is made to record.
 */
static void say_nothing_recorded(const struct record_options *o)
{
	char path[PATH_MAX];
	unsigned found = 0;
	int known = program_file(o->program[0], path, sizeof(path)) == 0 &&
		    rt_instrumentation_of(path, &found) == 0;
	const char *program = rt_escaped(o->program[0]);
	if (known && found == RT_INSTRUMENTED_FUNCTIONS && !o->preload[0]) {
		fprintf(stderr,
			"ringtrace record: %s recorded nothing: it is built with "
			"-finstrument-functions, but no recording library was preloaded to record "
			"its calls (" RT_PRELOAD_VARIABLE " names one)\n",
			program);
		return;
	}
	if (known && found) {
		fprintf(
		    stderr,
		    "ringtrace record: %s recorded nothing: none of its traced code ran, or its "
		    "environment kept it from recording (RINGTRACE_FUNCTIONS, "
		    "RINGTRACE_EXCLUDE_MODULES, RINGTRACE_LEVEL)\n",
		    program);
		return;
	}
	if (known)
		fprintf(stderr,
			"ringtrace record: %s recorded nothing: it is neither built with "
			"-finstrument-functions nor linked with libringtrace\n",
			program);
	else
		fprintf(stderr, "ringtrace record: %s recorded nothing\n", program);
	fprintf(stderr,
		"  to record its function calls, build it with -finstrument-functions "
		"(record preloads the library that records them);\n"
		"  to record events of its own, link it with -lringtrace and mark them with "
		"RT_TRACE or RT_LOG (ringtrace.h)%s\n",
		o->io
		    ? ""
		    : ";\n  to record its file I/O as it is, run it under 'ringtrace record --io'");
}

/*
 * The CPU the rings are drained on, the writing thread being kept off it:
 * the highest one record may use (CPU 0 tends to take the most interrupts),
 * or -1 when it may use only one.
 */
static int choose_drain_cpu(void)
{
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0 || CPU_COUNT(&allowed) < 2)
		return -1;
	for (int cpu = CPU_SETSIZE - 1; cpu >= 0; cpu--)
		if (CPU_ISSET(cpu, &allowed))
			return cpu;
	return -1;
}

int rt_cmd_record(int argc, char **argv)
{
	struct record_options o;
	int help = 0;
	int r = parse_options(argc, argv, &o, &help);
	if (r != 0)
		return r;
	if (help) {
		rt_cmd_record_help(stdout);
		return RT_EXIT_OK;
	}
	if (!o.program || !o.program[0])
		return RT_EXIT_USAGE; /* parse_options said so already */

	char message[1024];
	/* a program built with -finstrument-functions but not linked with ringtrace traces too */
	if (!rt_record_preload_find(RT_PRELOAD_LIBRARY, RT_PRELOAD_VARIABLE, o.preload,
				    sizeof(o.preload), message, sizeof(message))) {
		o.preload[0] = 0;
		if (message[0])
			fprintf(stderr, "ringtrace record: %s%s\n", rt_escaped(message),
				o.io ? "" : ": only programs linked with ringtrace are traced");
	}
	/* --io without its interposer would record no I/O at all: refuse to pretend */
	if (o.io &&
	    !rt_record_preload_find(RT_PRELOAD_IO_LIBRARY, RT_PRELOAD_IO_VARIABLE, o.preload_io,
				    sizeof(o.preload_io), message, sizeof(message))) {
		fprintf(
		    stderr, "ringtrace record: --io: %s\n",
		    rt_escaped(message[0] ? message : RT_PRELOAD_IO_VARIABLE " preloads nothing"));
		return RT_EXIT_FAILURE;
	}
	if ((o.only_count || o.out_count) && write_filter(&o) != 0)
		return RT_EXIT_USAGE;
	/*
	 * background: a slow write() must not keep the rings from being drained,
	 * and it runs on other CPUs than the draining (trace_writer.c: keep_off)
	 */
	int drain_cpu = choose_drain_cpu();
	struct rt_trace_writer_options wo = {.path = o.output,
					     .max_size = o.max_size,
					     .max_files = o.max_files,
					     .background = 1,
					     .keep_off_cpu = drain_cpu >= 0,
					     .cpu = drain_cpu};
	struct rt_collector *c = NULL;
	int opened = rt_collector_open(&c, &wo, message, sizeof(message));
	if (opened != 0) {
		fprintf(stderr, "ringtrace record: %s\n", rt_escaped(message));
		return rt_cmd_output_status(opened);
	}
	if (!o.drop)
		rt_collector_set_full_wait(c, FULL_WAIT_US);

	/* the user's arena is used and kept; else a private one, removed at the end */
	const char *user_arena = getenv("RINGTRACE_ARENA");
	int private_arena = !user_arena || !user_arena[0];
	char arena[PATH_MAX + 256]; /* dir, name, pid: no truncation */
	char name[64];
	program_name(o.program[0], name, sizeof(name));
	/* a private arena goes into the user's own directory, checked before the program runs */
	char dir[PATH_MAX];
	if (private_arena) {
		if (rt_arena_dir(dir, sizeof(dir)) != 0) {
			fprintf(stderr, "ringtrace record: %s is too long a path\n",
				RT_ARENA_DIR_ENV);
			rt_collector_close(c, NULL, message, sizeof(message));
			return RT_EXIT_USAGE;
		}
		if (rt_arena_dir_check(dir, 1, message, sizeof(message)) != 0) {
			fprintf(stderr, "ringtrace record: %s\n", rt_escaped(message));
			rt_collector_close(c, NULL, message, sizeof(message));
			return RT_EXIT_FAILURE;
		}
		rt_record_reclaim_orphans(dir);
	}

	int report_pipe[2];
	if (pipe2(report_pipe, O_CLOEXEC) != 0) {
		fprintf(stderr, "ringtrace record: pipe: %s\n", strerror(errno));
		rt_collector_close(c, NULL, message, sizeof(message));
		return RT_EXIT_FAILURE;
	}
	install_forwarding();
	/* a daemon whose parent exits stays record's: it is still looked for (record_arenas.h) */
	if (!o.no_wait)
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "ringtrace record: fork: %s\n", strerror(errno));
		rt_collector_close(c, NULL, message, sizeof(message));
		return RT_EXIT_FAILURE;
	}
	if (pid == 0) {
		close(report_pipe[0]);
		if (private_arena)
			snprintf(arena, sizeof(arena),
				 "%s/" RT_ARENA_PREFIX "%s.%ld" RT_ARENA_SUFFIX, dir, name,
				 (long)getpid());
		run_program(&o, private_arena ? arena : NULL, report_pipe[1]);
	}
	child_pid = pid;
	close(report_pipe[1]);
	/* after the fork: the program keeps every CPU it was given */
	if (drain_cpu >= 0) {
		cpu_set_t only;
		CPU_ZERO(&only);
		CPU_SET(drain_cpu, &only);
		sched_setaffinity(0, sizeof(only), &only);
	}
	if (private_arena)
		snprintf(arena, sizeof(arena), "%s/" RT_ARENA_PREFIX "%s.%ld" RT_ARENA_SUFFIX, dir,
			 name, (long)pid);
	else
		snprintf(arena, sizeof(arena), "%s", user_arena);

	/* the exec happened (EOF) or failed (its errno) */
	int exec_errno = 0;
	ssize_t got;
	while ((got = read(report_pipe[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR)
		;
	close(report_pipe[0]);
	if (got == (ssize_t)sizeof(exec_errno)) {
		fprintf(stderr, "ringtrace record: %s: %s\n", rt_escaped(o.program[0]),
			strerror(exec_errno));
		int status = 0;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		rt_collector_close(c, NULL, message, sizeof(message));
		return WIFEXITED(status) ? WEXITSTATUS(status) : 127;
	}

	struct rt_record_arenas arenas;
	if (rt_record_arenas_init(&arenas, c, arena, pid) != 0) {
		fprintf(stderr, "ringtrace record: out of memory\n");
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return RT_EXIT_FAILURE;
	}
	int status = collect_until_exit(&arenas, pid);
	child_pid = 0;

	/* the last pass: an arena made at the very end, what the program committed */
	rt_record_arenas_discover(&arenas, 1);
	rt_record_arenas_poll(&arenas);
	rt_record_arenas_finish_main(&arenas);
	if (!o.no_wait)
		collect_while_recording(&o, &arenas);
	/* processes that outlive the program and the wait: their records so far */
	rt_record_arenas_discover(&arenas, 1);
	rt_record_arenas_poll(&arenas);
	rt_record_arenas_finish_all(&arenas);
	struct rt_collector_stats stats;
	int closed = rt_collector_close(c, &stats, message, sizeof(message));
	if (closed != 0 && !arenas.failed)
		fprintf(stderr, "ringtrace record: %s\n", rt_escaped(message));
	if (private_arena)
		rt_record_arenas_remove(&arenas);
	else
		rt_record_arenas_remove_kept(&arenas);
	rt_record_arenas_free(&arenas);
	if (o.filter_path[0])
		unlink(o.filter_path);
	if (!o.quiet) {
		report(&o, &stats);
		if (!closed && !arenas.failed && stats.records == 0 &&
		    stats.dropped + stats.overwritten + stats.torn + stats.unwritten == 0)
			say_nothing_recorded(&o);
	}
	return end_like(status);
}
