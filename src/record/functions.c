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
 * innermost RT_FN_SHADOW calls, the function and its frame: the address
 * just above its return address (its canonical frame address).  The hook
 * finds it by looking up the stack from its own frame for the return
 * address the compiler passed it as call_site, a few words up in practice
 * (call_frame()).  The stack grows down and a callee's frame always lies
 * below its caller's return address, so:
 *   - an enter whose frame is at or above the innermost open call's frame
 *     cannot be its callee: that call, and every open call found the same
 *     way, is gone (UNWOUND);
 *   - an exit of a function other than the innermost open call's closes
 *     the open calls whose frames lie below its own first (UNWOUND);
 *   - the end of a thread (its pthread key destructor) and exit() (the
 *     library's destructor) close what is still open (THREAD_ENDED,
 *     EXITED).
 * A signal handler running on the same stack nests below what it
 * interrupted; one running on an alternate stack (sigaltstack) may sit
 * above it, so before closing anything the hook asks the kernel whether
 * it runs on one, and closes nothing if so.  Stack switching done by the
 * program itself (coroutines, swapcontext) defeats the rule: docs/FORMAT.md
 * says so.  The frames live in a per-thread mapping (mmap: no allocator
 * in a hook), of which only the pages a thread's depth reaches are used,
 * unmapped when the thread ends.
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
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* Serialises the writers of the tables; never taken by a hook. */
static pthread_mutex_t rt_fn_lock = PTHREAD_MUTEX_INITIALIZER;

/* The innermost calls of a thread whose places are remembered (16 bytes each). */
#define RT_FN_SHADOW 16384u

/* How far up the stack a hook looks for its caller's return address. */
#define RT_FN_SCAN_WORDS 512u

/* An open call: its function and its frame (call_frame()). */
struct rt_fn_frame {
	uintptr_t fn;
	uintptr_t frame;
};

struct rt_fn_thread {
	uint32_t depth;
	uint32_t inside;
	struct rt_fn_frame *shadow; /* RT_FN_SHADOW entries: index d is the call at depth d */
	uint32_t no_shadow;	    /* mmap failed, or the thread ended: calls are not checked */
};

static __thread struct rt_fn_thread rt_fn_thread __attribute__((tls_model("initial-exec")));

#define RT_FN_ARGS                                                                                 \
	{                                                                                          \
		RT_ARG_UNSIGNED | 4, RT_ARG_UNSIGNED | 4, RT_ARG_UNSIGNED | 4,                     \
		    RT_ARG_UNSIGNED | 4, RT_ARG_POINTER | sizeof(void *),                          \
		    RT_ARG_POINTER | sizeof(void *)                                                \
	}
static struct ringtrace__site rt_fn_enter_site = {0, RT_SITE_ENTER, 6,	RT_FN_ARGS,
						  0, "enter",	    "", ""};
static struct ringtrace__site rt_fn_exit_site = {0, RT_SITE_EXIT, 6, RT_FN_ARGS, 0, "exit", "", ""};

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

static inline __attribute__((always_inline)) RT_NO_INSTRUMENT int excluded(uintptr_t fn)
{
	return RT__UNLIKELY(__atomic_load_n(&rt_fn.any, __ATOMIC_RELAXED) != 0) &&
	       excluded_slow(fn);
}

RT_EXPORT RT_NO_INSTRUMENT int ringtrace_exclude_function(void *fn)
{
	int err = 0;
	pthread_mutex_lock(&rt_fn_lock);
	uint32_t n = rt_fn.functions;
	if (!excluded((uintptr_t)fn)) {
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

/*
 * At load, before the program runs: the environment, and the modules to
 * exclude (dl_iterate_phdr takes the loader's lock, so never from a hook).
 */
__attribute__((constructor)) static RT_NO_INSTRUMENT void rt_fn_start(void)
{
	if (rt_fn_read_env())
		exclude_modules_from_env();
}

RT_EXPORT RT_NO_INSTRUMENT void ringtrace_set_max_depth(uint32_t max_depth)
{
	__atomic_store_n(&rt_fn.max_depth, depth_limit(max_depth), __ATOMIC_RELAXED);
}

/* ---- calls that did not return ---------------------------------------- */

/*
 * The frame of the instrumented function whose hook calls this: the
 * address just above the stack slot holding its return address, the first
 * word equal to call_site looking up from the hook's own frame.  Every
 * word read lies in that function's frame, below the slot.  0 when the
 * slot is further than RT_FN_SCAN_WORDS up (a function with large locals),
 * or on a machine whose calls do not push the return address.
 */
static inline __attribute__((always_inline)) RT_NO_INSTRUMENT RT_READS_CALLER_FRAME uintptr_t
call_frame(const void *call_site)
{
#if defined(__x86_64__) || defined(__i386__)
	/* the hook's own frame: saved frame pointer, then its return address */
	const uintptr_t *w = (const uintptr_t *)__builtin_frame_address(0) + 2;
	for (unsigned i = 0; i < RT_FN_SCAN_WORDS; i++)
		if (w[i] == (uintptr_t)call_site)
			return (uintptr_t)&w[i + 1];
#else
	(void)call_site;
#endif
	return 0;
}

static RT_NO_INSTRUMENT struct rt_fn_frame *shadow_map(struct rt_fn_thread *t)
{
	if (t->no_shadow)
		return NULL;
	void *p = mmap(NULL, RT_FN_SHADOW * sizeof(struct rt_fn_frame), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		t->no_shadow = 1;
		return NULL;
	}
	t->shadow = p;
	return p;
}

/* An exit for the open call at depth, which did not return by itself. */
static RT_NO_INSTRUMENT void emit_closed(uint32_t depth, uintptr_t fn, uint32_t flags)
{
	if (depth < __atomic_load_n(&rt_fn.max_depth, __ATOMIC_RELAXED) && !excluded(fn))
		ringtrace__emit(&rt_fn_exit_site, RT_TRACE_SLOTS(6), depth, flags, 0, 0,
				(uint64_t)fn, 0);
}

/* Whether the thread runs on its alternate signal stack (one system call). */
static RT_NO_INSTRUMENT int on_signal_stack(void)
{
	stack_t ss;
	return sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);
}

/*
 * Close the open calls an enter with this frame cannot be inside: those
 * whose frames are at or below it.  Returns the depth left.  depth is at
 * most RT_FN_SHADOW.
 */
static RT_NO_INSTRUMENT uint32_t close_above(struct rt_fn_frame *s, uint32_t depth, uintptr_t frame)
{
	if (on_signal_stack())
		return depth;
	while (depth > 0 && s[depth - 1].frame <= frame) {
		depth--;
		emit_closed(depth, s[depth].fn, RT_FUNC_F_UNWOUND);
	}
	return depth;
}

/*
 * Before the exit of a call with this frame: close the open calls whose
 * frames lie below it.  Returns the depth left.  depth is at most
 * RT_FN_SHADOW.
 */
static RT_NO_INSTRUMENT uint32_t close_below(struct rt_fn_frame *s, uint32_t depth, uintptr_t frame)
{
	if (!frame || on_signal_stack())
		return depth;
	while (depth > 1 && s[depth - 1].frame < frame) {
		depth--;
		emit_closed(depth, s[depth].fn, RT_FUNC_F_UNWOUND);
	}
	return depth;
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
		munmap(t->shadow, RT_FN_SHADOW * sizeof(struct rt_fn_frame));
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

RT_EXPORT RT_NO_INSTRUMENT RT_READS_CALLER_FRAME void __cyg_profile_func_enter(void *fn,
									       void *call_site)
{
	if (RT__UNLIKELY(!hooks_on()))
		return;
	struct rt_fn_thread *t = &rt_fn_thread;
	if (RT__UNLIKELY(t->inside))
		return;
	t->inside = 1;
	RT__COMPILER_BARRIER(); /* a handler sees inside before depth changes */
	uint32_t depth = t->depth;
	struct rt_fn_frame *s = t->shadow;
	if (RT__UNLIKELY(!s))
		s = shadow_map(t);
	if (RT__LIKELY(s != NULL) && RT__LIKELY(depth <= RT_FN_SHADOW)) {
		uintptr_t frame = call_frame(call_site);
		if (RT__UNLIKELY(depth > 0 && s[depth - 1].frame <= frame))
			depth = close_above(s, depth, frame);
		if (RT__LIKELY(depth < RT_FN_SHADOW)) {
			s[depth].fn = (uintptr_t)fn;
			s[depth].frame = frame ? frame : UINTPTR_MAX; /* unknown: never closed */
		}
	}
	t->depth = depth + 1;
	if (RT__LIKELY(depth < __atomic_load_n(&rt_fn.max_depth, __ATOMIC_RELAXED)) &&
	    !excluded((uintptr_t)fn))
		ringtrace__emit(&rt_fn_enter_site, RT_TRACE_SLOTS(6), depth, 0, 0, 0,
				(uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)call_site);
	RT__COMPILER_BARRIER();
	t->inside = 0;
}

RT_EXPORT RT_NO_INSTRUMENT RT_READS_CALLER_FRAME void __cyg_profile_func_exit(void *fn,
									      void *call_site)
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
	struct rt_fn_frame *s = t->shadow;
	if (RT__LIKELY(s != NULL) && RT__LIKELY(depth <= RT_FN_SHADOW) &&
	    RT__UNLIKELY(s[depth - 1].fn != (uintptr_t)fn))
		depth = close_below(s, depth, call_frame(call_site));
	t->depth = --depth;
	if (RT__LIKELY(depth < __atomic_load_n(&rt_fn.max_depth, __ATOMIC_RELAXED)) &&
	    !excluded((uintptr_t)fn))
		ringtrace__emit(&rt_fn_exit_site, RT_TRACE_SLOTS(6), depth, 0, 0, 0,
				(uint64_t)(uintptr_t)fn, (uint64_t)(uintptr_t)call_site);
	RT__COMPILER_BARRIER();
	t->inside = 0;
}
