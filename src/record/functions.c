/*
 * functions.c - function enter/exit events for programs compiled with
 * -finstrument-functions: the two hooks the compiler calls around every
 * instrumented function, and their controls (on or off, maximum depth,
 * excluded functions and modules).
 *
 * An enter or exit is an ordinary trace event of one of two sites of the
 * library's own (kinds RT_SITE_ENTER and RT_SITE_EXIT, ringtrace/format.h),
 * written by ringtrace__emit(), the fast path of RT_TRACE: the first event
 * starts the library, the ring protocol and every loss count are the same.
 *
 * Each thread keeps two words.  depth counts the instrumented calls it is
 * in, recorded or not, so that an exit has the depth of its enter and a
 * call past the maximum depth or of an excluded function still balances.
 * inside is set while the thread runs a hook: a hook that finds it set
 * returns at once, touching neither depth nor the ring.  That keeps the
 * hooks from recursing through anything they call, and it keeps a signal
 * handler that runs instrumented code while its thread is in a hook from
 * corrupting depth: the handler's calls are simply not recorded, and since
 * they all enter and exit while the interrupted hook waits, they balance.
 * Both are plain thread-local words, written with compiler barriers only:
 * the one reader that can interrupt the writer is a handler on the same
 * thread, which is exactly what a signal fence orders against.
 *
 * The controls are read by the hooks without a lock: one state word (a
 * single load and branch when the hooks are off), the maximum depth, and
 * two small fixed tables (function addresses, address ranges of excluded
 * modules) whose entries are written before their count is raised with a
 * release store.  Entries are only ever added, under a mutex the hooks
 * never take.
 *
 * Calls that never return through their exit hook - left by longjmp, by
 * an exception that C code or a compiler without exit cleanups let pass,
 * by pthread_exit, cancellation or exit() - are closed with an exit event
 * of their own (flags RT_FUNC_F_*, ringtrace/format.h), so that they never
 * shift the depth of every later call.  Each thread remembers, for its
 * innermost RT_FN_SHADOW calls, four words: the function, the call site
 * the compiler passed (the return address of the function the hook runs
 * in), the hook's own return address (which hook call, in which code), and
 * the frame: the address just above the stack slot holding that call site
 * (the canonical frame address of the function the hook runs in).  The
 * hook finds it by looking up the stack from its own return address slot
 * for the word equal to call_site, a few words up in practice
 * (call_frame()).  A function inlined into another keeps its hooks, which
 * run in the other function's code: its call site and frame are those of
 * the function it was inlined into.  The stack grows down, and a callee
 * that really was called has its frame below its caller's return address,
 * so at an enter with frame F:
 *   - an open call whose frame is below F is gone (UNWOUND);
 *   - an open call whose frame is F but whose call site differs belongs to
 *     another call of a function at that place, also gone (UNWOUND);
 *   - open calls with frame F and the same call site are one function and
 *     what was inlined into it: the new call is inlined there too and
 *     nests, unless one of them was entered by this very hook call (same
 *     return address of the hook): code runs a hook call again in one
 *     frame only once its earlier call ended, so that call and everything
 *     inside it are gone (UNWOUND) - the loop that calls a function again
 *     after a longjmp out of it, or an exception that passed it.
 * An exit whose function and call site are not the innermost open call's
 * closes the calls inside its own open call (UNWOUND); an exit that
 * matches no open call (its call was closed already: a coroutine's call
 * ending on a stack the thread had left) writes nothing.  The end of a
 * thread (its pthread key destructor) and exit() (the library's
 * destructor) close what is still open (THREAD_ENDED, EXITED).
 *
 * Other stacks: each thread learns, at its first hook, the top of its own
 * stack (glibc keeps a thread's descriptor just above its stack; the main
 * thread's stack ends at __libc_stack_end), without a system call.  A
 * frame at or above that top is on another stack (an alternate signal
 * stack, a coroutine's): an enter there closes nothing.  A frame below
 * the thread's stack (a signal stack or a coroutine's stack mapped lower)
 * looks like a callee, and nests; what runs there is closed as unwound
 * when the thread's own stack goes on past it, and the exits that come
 * after the thread switched back to it match nothing and are left out.
 * call_frame() reads words upward from the hook's own return address
 * slot and stops at the first equal to call_site, the slot of the function
 * the hook runs in, which lies on the same stack above it (when that
 * function reached the exit hook by a jump, the hook's return address slot
 * is that slot); it reads at most RT_FN_SCAN_WORDS, and on the thread's
 * own stack never past its top.  A frame it does not find is unknown: such
 * a call is matched by its function and call site alone.
 *
 * The hooks make no system call but one mmap at a thread's first hook:
 * the frames live in that per-thread mapping (no allocator in a hook), of
 * which only the pages a thread's depth reaches are used, unmapped when
 * the thread ends.
 *
 * Nothing here may be instrumented: the library is built without
 * -finstrument-functions (CMakeLists.txt), the hooks are
 * no_instrument_function in case a build adds it, and they call only the
 * inline fast path (itself no_instrument_function), the library's slow
 * path and libc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/arena_names.h"
#include "common/parse.h"
#include "record/record.h"

#define RT_NO_INSTRUMENT __attribute__((no_instrument_function))
/*
 * call_frame() reads the caller's stack frame, whose redzones a sanitizer
 * build of the caller poisons: the hooks and it are not checked.
 */
#if defined(__SANITIZE_ADDRESS__)
#define RT_READS_CALLER_FRAME __attribute__((no_sanitize_address))
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RT_READS_CALLER_FRAME __attribute__((no_sanitize("address")))
#endif
#endif
#ifndef RT_READS_CALLER_FRAME
#define RT_READS_CALLER_FRAME
#endif

/* The hooks' names and signatures are the compilers'; no header declares them. */
void __cyg_profile_func_enter(void *fn, void *call_site) RT_NO_INSTRUMENT;
void __cyg_profile_func_exit(void *fn, void *call_site) RT_NO_INSTRUMENT;

enum rt_fn_state {
	RT_FN_UNSET = 0, /* the environment was not read yet */
	RT_FN_READING = 1,
	RT_FN_ON = 2,
	RT_FN_OFF = 3,
};

struct rt_fn_range {
	uintptr_t start, end;
};

/* Everything the hooks read, together. */
static struct {
	int state;	    /* enum rt_fn_state */
	uint32_t max_depth; /* record calls at depths below it */
	uint32_t functions; /* entries of function[] in use */
	uint32_t ranges;    /* entries of range[] in use */
	uint32_t any;	    /* functions + ranges: 0 spares the hooks both loops */
	uintptr_t function[RINGTRACE_EXCLUDED_FUNCTIONS];
	struct rt_fn_range range[RINGTRACE_EXCLUDED_RANGES];
} rt_fn = {.max_depth = UINT32_MAX};

/*
 * The recording filter `ringtrace record -F/-N` wrote: run-time address
 * ranges of the main program's functions, sorted and disjoint, set once by
 * the constructor before the program runs.  only: record nothing but the
 * calls of these functions and what runs inside them; out: record neither
 * these functions' calls nor what runs inside them.
 */
static struct {
	struct rt_fn_range *only, *out;
	uint32_t only_count, out_count;
	/*
	 * RINGTRACE_MIN_DURATION, in counter ticks (0: none): a call shorter
	 * than this is not recorded.  Its enter is held in the thread's open
	 * calls and written, with the time it was entered, once the call or a
	 * call inside it proves long enough; the enters of the calls around it
	 * go first.
	 */
	uint64_t min_ticks;
} rt_fn_filter;

/* Serialises the writers of the tables; never taken by a hook. */
static pthread_mutex_t rt_fn_lock = PTHREAD_MUTEX_INITIALIZER;

/* The innermost calls of a thread whose places are remembered (48 bytes each). */
#define RT_FN_SHADOW 16384u

/* How far up the stack a hook looks for its caller's return address. */
#define RT_FN_SCAN_WORDS 512u

/* The frame of a call whose call site call_frame() did not find. */
#define RT_FN_NO_FRAME UINTPTR_MAX

/* How far below a thread's descriptor or the main stack's end its stack may reach. */
#define RT_FN_STACK_REACH ((uintptr_t)1 << 30)

/* An open call (see the comment at the top). */
struct rt_fn_call {
	uintptr_t fn;
	uintptr_t frame;     /* call_frame(), or RT_FN_NO_FRAME */
	uintptr_t call_site; /* as the compiler passed it */
	uintptr_t hook;	     /* the return address of the enter hook's call */
	/* the minimum duration (RINGTRACE_MIN_DURATION): its enter, not written yet */
	uint64_t counter; /* when it was entered */
	uint64_t pending; /* 1: the enter waits for the call to prove long enough */
};

struct rt_fn_thread {
	uint32_t depth;
	uint32_t inside;
	struct rt_fn_call *shadow; /* RT_FN_SHADOW entries: index d is the call at depth d */
	uintptr_t stack_top;	   /* frames at or above it are on another stack */
	uint32_t no_shadow;	   /* mmap failed, or the thread ended: calls are not checked */
	/* the recording filter (RINGTRACE_FUNCTION_FILTER): 1 + the depth of the outermost
	   open call of a function it selects (-F) or leaves out (-N); 0: none open */
	uint32_t only_scope, out_scope;
	/* the minimum duration: 1 + the lowest depth whose enter is pending; 0: none */
	uint32_t pending_low;
};

static __thread struct rt_fn_thread rt_fn_thread __attribute__((tls_model("initial-exec")));

#define RT_FN_ARGS                                                                                 \
	{                                                                                          \
		RT_ARG_UNSIGNED | 4, RT_ARG_UNSIGNED | 4, RT_ARG_UNSIGNED | 4,                     \
		    RT_ARG_UNSIGNED | 4, RT_ARG_POINTER | sizeof(void *),                          \
		    RT_ARG_POINTER | sizeof(void *)                                                \
	}
/* sites as a program's: the hooks write through the fast path of ringtrace.h */
static struct ringtrace__site rt_fn_enter_site = {
    RT__ABI_HEAD(struct ringtrace__site), {0, RT_SITE_ENTER, 6, RT_FN_ARGS, 0, "enter", "", ""}};
static struct ringtrace__site rt_fn_exit_site = {
    RT__ABI_HEAD(struct ringtrace__site), {0, RT_SITE_EXIT, 6, RT_FN_ARGS, 0, "exit", "", ""}};

/* ---- the environment -------------------------------------------------- */

static RT_NO_INSTRUMENT uint32_t depth_limit(uint64_t max_depth)
{
	return max_depth == 0 || max_depth >= UINT32_MAX ? UINT32_MAX : (uint32_t)max_depth;
}

/*
 * RINGTRACE_FUNCTIONS and RINGTRACE_MAX_DEPTH, once.  No loader lock and no
 * allocation: the first hook may run anywhere, a signal handler included.
 * A hook that finds another thread reading records nothing.
 */
static RT_NO_INSTRUMENT int rt_fn_read_env(void)
{
	int expected = RT_FN_UNSET;
	if (!__atomic_compare_exchange_n(&rt_fn.state, &expected, RT_FN_READING, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return expected == RT_FN_ON;
	int state = RT_FN_ON;
	const char *on = rt_getenv("RINGTRACE_FUNCTIONS");
	if (on && strcmp(on, "0") == 0) {
		state = RT_FN_OFF;
	} else if (on && on[0] && strcmp(on, "1") != 0) {
		rt_warn("function events off: RINGTRACE_FUNCTIONS is '", on, "', not 0 or 1", NULL);
		state = RT_FN_OFF;
	}
	const char *depth = rt_getenv("RINGTRACE_MAX_DEPTH");
	uint64_t max_depth = 0;
	if (state == RT_FN_ON && depth && rt_parse_u64(depth, &max_depth) != 0) {
		rt_warn("function events off: RINGTRACE_MAX_DEPTH is '", depth,
			"', not a number of calls (0: no limit)", NULL);
		state = RT_FN_OFF;
	}
	/* an API call may have set a limit already: the environment does not undo it */
	if (max_depth)
		__atomic_store_n(&rt_fn.max_depth, depth_limit(max_depth), __ATOMIC_RELAXED);
	/* publishes: the limit, before a hook sees the state */
	__atomic_store_n(&rt_fn.state, state, __ATOMIC_RELEASE);
	return state == RT_FN_ON;
}

/* ---- exclusions ------------------------------------------------------- */

static RT_NO_INSTRUMENT int excluded_slow(uintptr_t fn)
{
	uint32_t n = __atomic_load_n(&rt_fn.functions, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (rt_fn.function[i] == fn)
			return 1;
	n = __atomic_load_n(&rt_fn.ranges, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (fn - rt_fn.range[i].start < rt_fn.range[i].end - rt_fn.range[i].start)
			return 1;
	return 0;
}

static RT_NO_INSTRUMENT int in_ranges(const struct rt_fn_range *r, uint32_t n, uintptr_t fn)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (fn < r[mid].start)
			hi = mid;
		else if (fn >= r[mid].end)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/*
 * The recording filter, for the call of fn at depth (its enter, or its
 * exit): 1 when it is not recorded.  A scope opened at a depth the thread
 * has come back above was left without its exit (unwound): it is over.
 */
static RT_NO_INSTRUMENT int filtered(uintptr_t fn, uint32_t depth, int enter)
{
	struct rt_fn_thread *t = &rt_fn_thread;
	const uint32_t over =
	    enter ? depth : depth + 1; /* scopes from this depth + 1 on are over */
	if (t->only_scope > over)
		t->only_scope = 0;
	if (t->out_scope > over)
		t->out_scope = 0;
	if (enter) {
		if (!t->out_scope && in_ranges(rt_fn_filter.out, rt_fn_filter.out_count, fn))
			t->out_scope = depth + 1;
		if (!t->only_scope && in_ranges(rt_fn_filter.only, rt_fn_filter.only_count, fn))
			t->only_scope = depth + 1;
	}
	int skip = t->out_scope || (rt_fn_filter.only_count && !t->only_scope);
	if (!enter) {
		if (t->only_scope == depth + 1)
			t->only_scope = 0;
		if (t->out_scope == depth + 1)
			t->out_scope = 0;
	}
	return skip;
}

/* The open call at depth, when the thread remembers it. */
static RT_NO_INSTRUMENT struct rt_fn_call *open_call(struct rt_fn_thread *t, uint32_t depth)
{
	return t->shadow && depth < RT_FN_SHADOW ? &t->shadow[depth] : NULL;
}

/* Write the held enters from the lowest up to depth, with the times they were entered. */
static RT_NO_INSTRUMENT void write_pending(struct rt_fn_thread *t, uint32_t depth)
{
	if (!t->pending_low)
		return;
	for (uint32_t d = t->pending_low - 1; d <= depth; d++) {
		struct rt_fn_call *c = open_call(t, d);
		if (!c || !c->pending)
			continue;
		c->pending = 0;
		const uint32_t a32[4] = {d, 0, 0, 0};
		const uint64_t a64[2] = {(uint64_t)c->fn, (uint64_t)c->call_site};
		rt_emit_trace_at(&rt_fn_enter_site.body, c->counter, a32, a64);
	}
	t->pending_low = 0;
}

/*
 * The minimum duration, for a call that is recorded: 1 when its event is
 * not written now.  An enter is held (when the thread remembers the call;
 * else the held ones are written and so is it).  The exit of a call whose
 * enter is held: written, after the enters held, when the call lasted long
 * enough; else neither is.
 */
static RT_NO_INSTRUMENT int held(uint32_t depth, int enter)
{
	struct rt_fn_thread *t = &rt_fn_thread;
	struct rt_fn_call *c = open_call(t, depth);
	if (enter) {
		if (!c) {
			write_pending(t, depth);
			return 0;
		}
		c->counter = ringtrace__counter();
		c->pending = 1;
		if (!t->pending_low)
			t->pending_low = depth + 1;
		return 1;
	}
	if (!c || !c->pending)
		return 0;
	if (ringtrace__counter() - c->counter >= rt_fn_filter.min_ticks) {
		write_pending(t, depth);
		return 0;
	}
	c->pending = 0;
	if (t->pending_low == depth + 1)
		t->pending_low = 0;
	return 1;
}

/*
 * Whether the event of the call of fn at depth (its enter, or its exit) is
 * left out now: excluded, by the recording filter, or held for the minimum
 * duration.
 */
static inline __attribute__((always_inline)) RT_NO_INSTRUMENT int
excluded(uintptr_t fn, uint32_t depth, int enter)
{
	if (RT__LIKELY(__atomic_load_n(&rt_fn.any, __ATOMIC_RELAXED) == 0))
		return 0;
	if (rt_fn_filter.min_ticks && enter) {
		/* a new call at this depth: whatever an earlier one left is not its */
		struct rt_fn_call *c = open_call(&rt_fn_thread, depth);
		if (c)
			c->pending = 0;
	}
	int out = rt_fn_filter.only_count | rt_fn_filter.out_count ? filtered(fn, depth, enter) : 0;
	if (excluded_slow(fn) || out)
		return 1;
	return rt_fn_filter.min_ticks ? held(depth, enter) : 0;
}

RT_EXPORT RT_NO_INSTRUMENT int ringtrace_exclude_function(void *fn)
{
	int err = 0;
	pthread_mutex_lock(&rt_fn_lock);
	uint32_t n = rt_fn.functions;
	if (!excluded_slow((uintptr_t)fn)) {
		if (n < RINGTRACE_EXCLUDED_FUNCTIONS) {
			rt_fn.function[n] = (uintptr_t)fn;
			/* publishes: the entry, before a hook looks at it */
			__atomic_store_n(&rt_fn.functions, n + 1, __ATOMIC_RELEASE);
			__atomic_store_n(&rt_fn.any, rt_fn.any + 1, __ATOMIC_RELEASE);
		} else {
			err = -ENOSPC;
		}
	}
	pthread_mutex_unlock(&rt_fn_lock);
	return err;
}

struct module_search {
	const char *part;
	char program[RT_PROGRAM_MAX]; /* the main program's path: its dlpi_name is "" */
	int modules;		      /* modules that matched */
	int full;		      /* a range did not fit */
};

static RT_NO_INSTRUMENT void add_range(uintptr_t start, uintptr_t end, struct module_search *s)
{
	uint32_t n = rt_fn.ranges;
	for (uint32_t i = 0; i < n; i++)
		if (rt_fn.range[i].start == start && rt_fn.range[i].end == end)
			return;
	if (n == RINGTRACE_EXCLUDED_RANGES) {
		s->full = 1;
		return;
	}
	rt_fn.range[n].start = start;
	rt_fn.range[n].end = end;
	/* publishes: the range, before a hook looks at it */
	__atomic_store_n(&rt_fn.ranges, n + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&rt_fn.any, rt_fn.any + 1, __ATOMIC_RELEASE);
}

/* dl_iterate_phdr callback: the executable segments of a module that matches. */
static RT_NO_INSTRUMENT int match_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct module_search *s = arg;
	const char *name = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : s->program;
	if (!strstr(name, s->part))
		return 0;
	int matched = 0;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) || ph->p_memsz == 0)
			continue;
		uintptr_t start = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
		add_range(start, start + (uintptr_t)ph->p_memsz, s);
		matched = 1;
	}
	s->modules += matched;
	return 0;
}

RT_EXPORT RT_NO_INSTRUMENT int ringtrace_exclude_module(const char *path_part)
{
	if (!path_part || !path_part[0])
		return -EINVAL;
	struct module_search s = {.part = path_part};
	rt_process_program(s.program, sizeof(s.program));
	pthread_mutex_lock(&rt_fn_lock);
	dl_iterate_phdr(match_module, &s);
	pthread_mutex_unlock(&rt_fn_lock);
	return s.full ? -ENOSPC : s.modules;
}

/* RINGTRACE_EXCLUDE_MODULES=a,b: each part a path substring. */
static RT_NO_INSTRUMENT void exclude_modules_from_env(void)
{
	const char *list = rt_getenv("RINGTRACE_EXCLUDE_MODULES");
	if (!list)
		return;
	char part[PATH_MAX];
	while (*list) {
		size_t n = strcspn(list, ",");
		if (n >= sizeof(part)) {
			rt_warn("RINGTRACE_EXCLUDE_MODULES: a path is too long; ignored", NULL,
				NULL, NULL);
		} else if (n > 0) {
			memcpy(part, list, n);
			part[n] = 0;
			int r = ringtrace_exclude_module(part);
			if (r == 0)
				rt_warn("RINGTRACE_EXCLUDE_MODULES: no loaded module matches '",
					part, "'", NULL);
			else if (r == -ENOSPC)
				rt_warn("RINGTRACE_EXCLUDE_MODULES: too many address ranges at '",
					part, "'", NULL);
		}
		list += n;
		if (*list == ',')
			list++;
	}
}

/* dl_iterate_phdr callback: the main program's load bias (it comes first, named ""). */
static RT_NO_INSTRUMENT int main_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = (uintptr_t)info->dlpi_addr;
	return 1;
}

/* One hexadecimal number at *p, then spaces; 0, or -1 when there is none. */
static RT_NO_INSTRUMENT int parse_hex(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int digits = 0;
	for (; s < end && digits < 17; s++, digits++) {
		int d = *s >= '0' && *s <= '9'	 ? *s - '0'
			: *s >= 'a' && *s <= 'f' ? *s - 'a' + 10
						 : -1;
		if (d < 0)
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (!digits || digits > 16)
		return -1;
	while (s < end && *s == ' ')
		s++;
	*p = s;
	*out = v;
	return 0;
}

/*
 * RINGTRACE_FUNCTION_FILTER=FILE, written by `ringtrace record -F/-N`: a
 * first line "ringtrace-function-filter 1", then lines "F START END" or
 * "N START END" (hexadecimal link-time addresses of the main program's
 * functions, each kind sorted and disjoint).  Read once, at load; a file
 * that does not parse is ignored, with one line on stderr.
 */
#define FILTER_BYTES_MAX (64u << 20)

static RT_NO_INSTRUMENT void load_filter(void)
{
	const char *path = rt_getenv(RT_FUNCTION_FILTER_ENV);
	if (!path || !path[0])
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > FILTER_BYTES_MAX) {
		rt_warn("RINGTRACE_FUNCTION_FILTER: cannot read '", path, "': no filter", NULL);
		if (fd >= 0)
			close(fd);
		return;
	}
	const size_t size = (size_t)st.st_size;
	char *text = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (text == MAP_FAILED)
		return;
	const char *p = text, *end = text + size;
	size_t lines = 0;
	for (const char *q = p; q < end; q++)
		lines += *q == '\n';
	struct rt_fn_range *ranges =
	    lines ? mmap(NULL, lines * sizeof(*ranges), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
		  : MAP_FAILED;
	int ok = ranges != MAP_FAILED && size >= strlen(RT_FUNCTION_FILTER_MAGIC) &&
		 memcmp(p, RT_FUNCTION_FILTER_MAGIC, strlen(RT_FUNCTION_FILTER_MAGIC)) == 0;
	uintptr_t bias = 0;
	dl_iterate_phdr(main_bias, &bias);
	/* the only (-F) ranges fill the table from its start, the out (-N) ones from its end */
	size_t only = 0, out = 0;
	for (p += ok ? strlen(RT_FUNCTION_FILTER_MAGIC) : 0; ok && p < end;) {
		const char kind = *p++;
		uint64_t start, stop;
		ok = (kind == 'F' || kind == 'N') && p < end && *p++ == ' ' &&
		     parse_hex(&p, end, &start) == 0 && parse_hex(&p, end, &stop) == 0 && p < end &&
		     *p++ == '\n' && start < stop && only + out < lines;
		if (!ok)
			break;
		struct rt_fn_range r = {(uintptr_t)(start + bias), (uintptr_t)(stop + bias)};
		struct rt_fn_range *prev = kind == 'F' ? (only ? &ranges[only - 1] : NULL)
						       : (out ? &ranges[lines - out] : NULL);
		if (prev && prev->end > r.start) {
			ok = 0; /* not sorted, or overlapping */
			break;
		}
		if (kind == 'F')
			ranges[only++] = r;
		else
			ranges[lines - ++out] = r;
	}
	munmap(text, size);
	if (!ok) {
		rt_warn("RINGTRACE_FUNCTION_FILTER: '", path,
			"' is not a function filter: no filter", NULL);
		if (ranges != MAP_FAILED)
			munmap(ranges, lines * sizeof(*ranges));
		return;
	}
	/* the out ranges were filled backwards: put them in order */
	for (size_t i = 0; i < out / 2; i++) {
		struct rt_fn_range tmp = ranges[lines - out + i];
		ranges[lines - out + i] = ranges[lines - 1 - i];
		ranges[lines - 1 - i] = tmp;
	}
	rt_fn_filter.only = ranges;
	rt_fn_filter.only_count = (uint32_t)only;
	rt_fn_filter.out = ranges + (lines - out);
	rt_fn_filter.out_count = (uint32_t)out;
	/* the hooks must look */
	__atomic_store_n(&rt_fn.any, rt_fn.any + 1, __ATOMIC_RELEASE);
}

/* RINGTRACE_MIN_DURATION=DURATION ("10us"): record only calls at least that long. */
static RT_NO_INSTRUMENT void load_min_duration(void)
{
	const char *text = rt_getenv(RT_MIN_DURATION_ENV);
	if (!text || !text[0])
		return;
	uint64_t ns;
	if (rt_parse_duration(text, &ns) != 0 || ns > RT_MIN_DURATION_NS_MAX) {
		rt_warn("RINGTRACE_MIN_DURATION is '", text,
			"', not a duration up to 1h with a unit (10us): every call is recorded",
			NULL);
		return;
	}
	if (!ns)
		return;
	uint64_t ticks = (uint64_t)((unsigned __int128)ns * rt_clock_estimate_hz() / 1000000000u);
	rt_fn_filter.min_ticks = ticks ? ticks : 1;
	/* the hooks must look */
	__atomic_store_n(&rt_fn.any, rt_fn.any + 1, __ATOMIC_RELEASE);
}

/*
 * At load, before the program runs: the environment, the modules to
 * exclude and the recording filter (dl_iterate_phdr takes the loader's
 * lock, so never from a hook).
 */
__attribute__((constructor)) static RT_NO_INSTRUMENT void rt_fn_start(void)
{
	if (rt_fn_read_env()) {
		exclude_modules_from_env();
		load_filter();
		load_min_duration();
	}
}

RT_EXPORT RT_NO_INSTRUMENT void ringtrace_set_max_depth(uint32_t max_depth)
{
	__atomic_store_n(&rt_fn.max_depth, depth_limit(max_depth), __ATOMIC_RELAXED);
}

/* ---- calls that did not return ---------------------------------------- */

/*
 * The frame of the instrumented function whose hook calls this: the
 * address just above the stack slot holding its return address, the first
 * word equal to call_site looking up from the hook's own return address
 * slot (itself that slot when the function jumped to the hook).  Every word
 * read lies between the two slots, on the stack the hook runs on.  0 when
 * the slot is further than RT_FN_SCAN_WORDS up (a function with large
 * locals) or than top, or on a machine whose calls do not push the return
 * address.
 */
static inline __attribute__((always_inline)) RT_NO_INSTRUMENT RT_READS_CALLER_FRAME uintptr_t
call_frame_at(const uintptr_t *w, const void *call_site, uintptr_t top)
{
#if defined(__x86_64__) || defined(__i386__)
	uintptr_t words = RT_FN_SCAN_WORDS;
	if ((uintptr_t)w < top && (top - (uintptr_t)w) / sizeof(*w) < words)
		words = (top - (uintptr_t)w) / sizeof(*w);
	for (uintptr_t i = 0; i < words; i++)
		if (w[i] == (uintptr_t)call_site)
			return (uintptr_t)&w[i + 1];
#else
	(void)w;
	(void)call_site;
	(void)top;
#endif
	return 0;
}

/* The hook's own return address slot: above its saved frame pointer. */
#define RT_FN_RETURN_SLOT() ((const uintptr_t *)__builtin_frame_address(0) + 1)

/* call_frame_at() from the calling hook's own return address slot. */
#define call_frame(call_site, top) call_frame_at(RT_FN_RETURN_SLOT(), (call_site), (top))

/* glibc's: where the main thread's stack ended when the program started. */
extern void *__libc_stack_end;

/*
 * The top of the stack of the thread running at here, with no system
 * call: glibc places a thread's descriptor just above the stack it
 * allocates or is given, and the main thread's stack ends at
 * __libc_stack_end (what lies above, the arguments and environment, is
 * mapped too).  UINTPTR_MAX when neither lies above here: then no frame is
 * taken for another stack's.
 */
static RT_NO_INSTRUMENT uintptr_t stack_top(uintptr_t here)
{
	uintptr_t self = (uintptr_t)pthread_self();
	uintptr_t main_end = (uintptr_t)__libc_stack_end;
	if (self > here && self - here < RT_FN_STACK_REACH)
		return self;
	if (main_end > here && main_end - here < RT_FN_STACK_REACH)
		return main_end;
	return UINTPTR_MAX;
}

static RT_NO_INSTRUMENT struct rt_fn_call *shadow_map(struct rt_fn_thread *t)
{
	if (t->no_shadow)
		return NULL;
	void *p = mmap(NULL, RT_FN_SHADOW * sizeof(struct rt_fn_call), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		t->no_shadow = 1;
		return NULL;
	}
	t->stack_top = stack_top((uintptr_t)__builtin_frame_address(0));
	t->shadow = p;
	return p;
}

/* An exit for the open call at depth, which did not return by itself. */
static RT_NO_INSTRUMENT void emit_closed(uint32_t depth, uintptr_t fn, uint32_t flags)
{
	if (depth < __atomic_load_n(&rt_fn.max_depth, __ATOMIC_RELAXED) && !excluded(fn, depth, 0))
		ringtrace__emit(&rt_fn_exit_site, RT_TRACE_SLOTS(6), depth, flags, 0, 0,
				(uint64_t)fn, 0);
}

/* Close the open calls from depth - 1 down to depth left.  Returns left. */
static RT_NO_INSTRUMENT uint32_t close_down_to(const struct rt_fn_call *s, uint32_t depth,
					       uint32_t left)
{
	while (depth > left) {
		depth--;
		emit_closed(depth, s[depth].fn, RT_FUNC_F_UNWOUND);
	}
	return depth;
}

/*
 * Before an enter with this frame (known), call site and hook return
 * address: close the open calls it cannot be inside (the rule at the top).
 * Returns the depth left.  depth is at most RT_FN_SHADOW.
 */
static RT_NO_INSTRUMENT uint32_t close_before_enter(const struct rt_fn_call *s, uint32_t depth,
						    uintptr_t frame, uintptr_t call_site,
						    uintptr_t hook, uintptr_t top)
{
	if (frame >= top)
		return depth; /* another stack: the thread's calls may be waiting */
	while (depth > 0 && s[depth - 1].frame <= frame) {
		const struct rt_fn_call *c = &s[depth - 1];
		if (c->frame == frame && c->call_site == call_site) {
			/* one function and what was inlined into it: did this hook call enter one?
			 */
			uint32_t d = depth;
			while (d > 0 && s[d - 1].frame == frame &&
			       s[d - 1].call_site == call_site) {
				if (s[d - 1].hook == hook)
					return close_down_to(s, depth, d - 1);
				d--;
			}
			return depth;
		}
		depth = close_down_to(s, depth, depth - 1);
	}
	return depth;
}

/*
 * Before the exit of fn from call_site with this frame (0: unknown): the
 * depth just past its open call, after closing the calls inside it; 0 when
 * no open call is its (then nothing is closed).  The call with the same
 * frame first; failing that, the innermost of fn from call_site.  depth is
 * at least 1 and at most RT_FN_SHADOW.
 */
static RT_NO_INSTRUMENT uint32_t close_before_exit(const struct rt_fn_call *s, uint32_t depth,
						   uintptr_t fn, uintptr_t call_site,
						   uintptr_t frame)
{
	uint32_t d = depth;
	while (d > 0 && !(s[d - 1].fn == fn && s[d - 1].call_site == call_site &&
			  (s[d - 1].frame == frame || s[d - 1].frame == RT_FN_NO_FRAME || !frame)))
		d--;
	if (d == 0) {
		d = depth;
		while (d > 0 && !(s[d - 1].fn == fn && s[d - 1].call_site == call_site))
			d--;
	}
	if (d == 0)
		return 0;
	return close_down_to(s, depth, d);
}

/*
 * The thread is ending, or the program: an exit for every call still
 * open, innermost first (calls deeper than RT_FN_SHADOW, whose function is
 * not remembered, are left to the reader, which closes them by depth).
 */
static RT_NO_INSTRUMENT void close_all(uint32_t flags)
{
	struct rt_fn_thread *t = &rt_fn_thread;
	if (t->inside || t->depth == 0)
		return;
	t->inside = 1;
	RT__COMPILER_BARRIER();
	if (t->shadow)
		for (uint32_t depth = t->depth < RT_FN_SHADOW ? t->depth : RT_FN_SHADOW; depth > 0;)
			depth--, emit_closed(depth, t->shadow[depth].fn, flags);
	t->depth = 0;
	RT__COMPILER_BARRIER();
	t->inside = 0;
}

void rt_fn_thread_end(void)
{
	struct rt_fn_thread *t = &rt_fn_thread;
	if (__atomic_load_n(&rt_fn.state, __ATOMIC_ACQUIRE) == RT_FN_ON)
		close_all(RT_FUNC_F_THREAD_ENDED);
	if (t->shadow)
		munmap(t->shadow, RT_FN_SHADOW * sizeof(struct rt_fn_call));
	t->shadow = NULL;
	/* instrumented code in later destructors of this thread goes unchecked */
	t->no_shadow = 1;
}

void rt_fn_program_exit(void)
{
	if (__atomic_load_n(&rt_fn.state, __ATOMIC_ACQUIRE) == RT_FN_ON)
		close_all(RT_FUNC_F_EXITED);
}

uint32_t rt_fn_depth(void)
{
	return rt_fn_thread.depth;
}

void rt_fn_set_depth(uint32_t depth)
{
	rt_fn_thread.depth = depth;
}

/* ---- the hooks -------------------------------------------------------- */

/* Whether the hooks record; reads the environment if nothing did yet. */
static inline __attribute__((always_inline)) RT_NO_INSTRUMENT int hooks_on(void)
{
	int state = __atomic_load_n(&rt_fn.state, __ATOMIC_ACQUIRE);
	if (RT__LIKELY(state == RT_FN_ON))
		return 1;
	return state == RT_FN_UNSET && rt_fn_read_env();
}

/*
 * Every enter but the common one: it closes open calls (their frames say
 * they are gone), a filter is set, the hooks are not on yet, the thread
 * has no frames yet, the record does not fit.  ra: the hook's own return
 * address slot, where call_frame() starts; hook: its return address.
 */
static __attribute__((noinline)) RT_NO_INSTRUMENT RT_READS_CALLER_FRAME void
enter_general(void *fn, void *call_site, const uintptr_t *ra, uintptr_t hook)
{
	if (RT__UNLIKELY(!hooks_on()))
		return;
	struct rt_fn_thread *t = &rt_fn_thread;
	if (RT__UNLIKELY(t->inside))
		return;
	t->inside = 1;
	RT__COMPILER_BARRIER(); /* a handler sees inside before depth changes */
	uint32_t depth = t->depth;
	struct rt_fn_call *s = t->shadow;
	if (RT__UNLIKELY(!s))
		s = shadow_map(t);
	if (RT__LIKELY(s != NULL) && RT__LIKELY(depth <= RT_FN_SHADOW)) {
		uintptr_t frame = call_frame_at(ra, call_site, t->stack_top);
		/* 0, unknown, is below every frame: such an enter closes nothing */
		if (RT__UNLIKELY(depth > 0 && s[depth - 1].frame <= frame))
			depth = close_before_enter(s, depth, frame, (uintptr_t)call_site, hook,
						   t->stack_top);
		if (RT__LIKELY(depth < RT_FN_SHADOW)) {
			struct rt_fn_call *c = &s[depth];
			c->fn = (uintptr_t)fn;
			c->frame = frame ? frame : RT_FN_NO_FRAME; /* unknown: never closed */
			c->call_site = (uintptr_t)call_site;
			c->hook = hook;
		}
	}
	t->depth = depth + 1;
	if (RT__LIKELY(depth < __atomic_load_n(&rt_fn.max_depth, __ATOMIC_RELAXED)) &&
	    !excluded((uintptr_t)fn, depth, 1))
		ringtrace__emit(&rt_fn_enter_site, RT_TRACE_SLOTS(6), depth, 0, 0, 0,
				(uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)call_site);
	RT__COMPILER_BARRIER();
	t->inside = 0;
}

/*
 * The common enter, decided before anything changes: the hooks are on, the
 * new call closes no open one, nothing filters, the site is known and the
 * record fits.  Written here with no call; anything else goes to
 * enter_general(), which does all over what the hook did before.
 */
RT_EXPORT RT_NO_INSTRUMENT RT_READS_CALLER_FRAME void __cyg_profile_func_enter(void *fn,
									       void *call_site)
{
	struct rt_fn_thread *t = &rt_fn_thread;
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	const uint32_t depth = t->depth;
	struct rt_fn_call *s = t->shadow;
	const uint32_t id = __atomic_load_n(&rt_fn_enter_site.body.id, __ATOMIC_RELAXED);
	const uintptr_t hook = (uintptr_t)__builtin_return_address(0);
	if (RT__LIKELY(__atomic_load_n(&rt_fn.state, __ATOMIC_ACQUIRE) == RT_FN_ON) &&
	    RT__LIKELY(!t->inside && s != NULL && depth < RT_FN_SHADOW) &&
	    RT__LIKELY(depth < __atomic_load_n(&rt_fn.max_depth, __ATOMIC_RELAXED) &&
		       __atomic_load_n(&rt_fn.any, __ATOMIC_RELAXED) == 0 && id != 0 && !w->busy)) {
		const uintptr_t frame = call_frame(call_site, t->stack_top);
		/* 0, unknown, is below every frame: such an enter closes nothing */
		if (RT__LIKELY(depth == 0 || s[depth - 1].frame > frame)) {
			t->inside = 1;
			w->busy = 1;
			RT__COMPILER_BARRIER(); /* a handler sees both before head is read */
			const uint64_t h = w->head;
			if (RT__LIKELY(h + RT_TRACE_SLOTS(6) <=
				       __atomic_load_n(&w->limit, __ATOMIC_RELAXED))) {
				struct rt_fn_call *c = &s[depth];
				c->fn = (uintptr_t)fn;
				c->frame = frame ? frame : RT_FN_NO_FRAME;
				c->call_site = (uintptr_t)call_site;
				c->hook = hook;
				t->depth = depth + 1;
				ringtrace__write_record(w, h, RT_TRACE_SLOTS(6), RT_REC_TRACE, id,
							ringtrace__counter(), depth, 0, 0, 0,
							(uint64_t)(uintptr_t)fn,
							(uint64_t)(uintptr_t)call_site);
				RT__COMPILER_BARRIER();
				w->busy = 0;
				t->inside = 0;
				return;
			}
			RT__COMPILER_BARRIER();
			w->busy = 0;
			t->inside = 0;
		}
	}
	enter_general(fn, call_site, RT_FN_RETURN_SLOT(), hook);
}

/*
 * Every exit but the common one: its function is not the innermost open
 * call's, a filter is set, the hooks are not on yet, the record does not
 * fit.  ra: the hook's own return address slot, where call_frame() starts.
 */
static __attribute__((noinline)) RT_NO_INSTRUMENT RT_READS_CALLER_FRAME void
exit_general(void *fn, void *call_site, const uintptr_t *ra)
{
	if (RT__UNLIKELY(!hooks_on()))
		return;
	struct rt_fn_thread *t = &rt_fn_thread;
	/* depth 0: an exit whose enter came before the hooks were on */
	if (RT__UNLIKELY(t->inside || t->depth == 0))
		return;
	t->inside = 1;
	RT__COMPILER_BARRIER();
	uint32_t depth = t->depth;
	struct rt_fn_call *s = t->shadow;
	if (RT__LIKELY(s != NULL) && RT__LIKELY(depth <= RT_FN_SHADOW) &&
	    RT__UNLIKELY(s[depth - 1].fn != (uintptr_t)fn ||
			 s[depth - 1].call_site != (uintptr_t)call_site)) {
		depth = close_before_exit(s, depth, (uintptr_t)fn, (uintptr_t)call_site,
					  call_frame_at(ra, call_site, t->stack_top));
		if (depth == 0) {
			/* its call was closed already (the rule at the top) */
			RT__COMPILER_BARRIER();
			t->inside = 0;
			return;
		}
	}
	t->depth = --depth;
	if (RT__LIKELY(depth < __atomic_load_n(&rt_fn.max_depth, __ATOMIC_RELAXED)) &&
	    !excluded((uintptr_t)fn, depth, 0))
		ringtrace__emit(&rt_fn_exit_site, RT_TRACE_SLOTS(6), depth, 0, 0, 0,
				(uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)call_site);
	RT__COMPILER_BARRIER();
	t->inside = 0;
}

/*
 * The common exit, decided before anything changes: the hooks are on, the
 * exit is the innermost open call's, nothing filters, the site is known
 * and the record fits.  Written here with no call, so that the hook saves
 * no register; anything else goes to exit_general(), which does all over
 * what the hook did before.
 */
RT_EXPORT RT_NO_INSTRUMENT RT_READS_CALLER_FRAME void __cyg_profile_func_exit(void *fn,
									      void *call_site)
{
	struct rt_fn_thread *t = &rt_fn_thread;
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	const uint32_t depth = t->depth;
	const struct rt_fn_call *s = t->shadow;
	const uint32_t id = __atomic_load_n(&rt_fn_exit_site.body.id, __ATOMIC_RELAXED);
	if (RT__LIKELY(__atomic_load_n(&rt_fn.state, __ATOMIC_ACQUIRE) == RT_FN_ON) &&
	    RT__LIKELY(!t->inside && s != NULL && depth - 1u < RT_FN_SHADOW) &&
	    RT__LIKELY(s[depth - 1].fn == (uintptr_t)fn &&
		       s[depth - 1].call_site == (uintptr_t)call_site) &&
	    RT__LIKELY(depth - 1 < __atomic_load_n(&rt_fn.max_depth, __ATOMIC_RELAXED) &&
		       __atomic_load_n(&rt_fn.any, __ATOMIC_RELAXED) == 0 && id != 0 && !w->busy)) {
		t->inside = 1;
		w->busy = 1;
		RT__COMPILER_BARRIER(); /* a handler sees both before head is read */
		const uint64_t h = w->head;
		if (RT__LIKELY(h + RT_TRACE_SLOTS(6) <=
			       __atomic_load_n(&w->limit, __ATOMIC_RELAXED))) {
			t->depth = depth - 1;
			ringtrace__write_record(w, h, RT_TRACE_SLOTS(6), RT_REC_TRACE, id,
						ringtrace__counter(), depth - 1, 0, 0, 0,
						(uint64_t)(uintptr_t)fn,
						(uint64_t)(uintptr_t)call_site);
			RT__COMPILER_BARRIER();
			w->busy = 0;
			t->inside = 0;
			return;
		}
		RT__COMPILER_BARRIER();
		w->busy = 0;
		t->inside = 0;
	}
	exit_general(fn, call_site, RT_FN_RETURN_SLOT());
}
