/*
 * ringtrace.h - record events into a crash-proof shared-memory flight recorder.
 *
 *     #include <ringtrace.h>
 *     RT_TRACE("before send", len, flags);
 *
 * RT_TRACE takes a string-literal tag and 0 to 6 integer or pointer
 * arguments, no casts needed.  Arguments 1-4 are stored in 32-bit fields and
 * arguments 5-6 in 64-bit fields; a value that fits its field is kept
 * exactly (signed values are sign-extended again when decoded).
 *
 *     RT_BEGIN("request", id);   ...   RT_END("request", status);
 *     { RT_SCOPE("parse"); ... }
 *
 * RT_BEGIN and RT_END mark where a span named by their tag starts and ends;
 * they take arguments as RT_TRACE does and cost what it costs.  An RT_END
 * ends the innermost open span of its name on its thread.  RT_SCOPE("name")
 * is a declaration: it begins a span at once and ends it wherever the
 * enclosing block is left (its end, return, break, goto; in C++ also an
 * exception; in C through the cleanup attribute, which longjmp skips, as it
 * skips every cleanup).
 *
 * No set-up call is needed: the first event creates the arena described by
 * the environment (RINGTRACE_ARENA, RINGTRACE_BUFFER, RINGTRACE_MODE,
 * RINGTRACE_RINGS, RINGTRACE_CRASH_EVENTS, RINGTRACE_SYNC) or by
 * ringtrace_init().  Read it with `ringtrace dump`.  From then on a crash
 * (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT) prints the last events to
 * stderr before the program dies as it would have; see "Crashes" in the
 * README.  Programs compiled with -finstrument-functions also record every
 * function call (see ringtrace_set_max_depth() below).
 *
 * Compiled with -DRINGTRACE_DISABLE, the macros expand to nothing, their
 * arguments are not evaluated, and the program references no ringtrace
 * symbol.
 *
 * Works from C11 (gcc, clang) and C++11 (g++, clang++) on.
 *
 * A program built against this header keeps recording with every later
 * libringtrace.so.0, unchanged: the sites it compiles in carry the ABI
 * version they were built for (RINGTRACE_ABI_VERSION), which the library
 * goes on serving.  It needs a library at least as new as the header.
 * docs/ABI.md says what is fixed, and the internals below how.
 */
#ifndef RINGTRACE_H
#define RINGTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ringtrace/abi.h"

#ifdef __cplusplus
#include <type_traits>
extern "C" {
#endif

/* ---- configuration ---------------------------------------------------- */

enum ringtrace_mode {
	RINGTRACE_FLIGHT = RT_MODE_FLIGHT,
	RINGTRACE_STREAM = RT_MODE_STREAM,
};

/*
 * Options for ringtrace_init().  Set size to sizeof(struct ringtrace_options);
 * fields are only ever added at the end.  A zero field means "from the
 * environment, else the default".
 */
struct ringtrace_options {
	size_t size;
	const char *arena_path; /* RINGTRACE_ARENA */
	uint64_t buffer_bytes;	/* RINGTRACE_BUFFER: per-thread ring size */
	int mode;		/* RINGTRACE_MODE: enum ringtrace_mode */
	uint32_t rings;		/* RINGTRACE_RINGS: threads with a ring at once */
	/*
	 * RINGTRACE_CRASH_EVENTS: events the crash handler prints on a fatal
	 * signal (default 50, at most 1000).  0 is "from the environment" as for
	 * every field; RINGTRACE_CRASH_EVENTS_NONE (any negative value) prints
	 * nothing, though the handler still records the signal in the arena.
	 */
	int crash_events;
	/*
	 * RINGTRACE_SYNC: write the arena back to disk every sync_ms
	 * milliseconds (1 to 3600000), so that a machine crash loses at most
	 * about that much; only for an arena on a disk file.  0 is "from the
	 * environment" (default: never); RINGTRACE_SYNC_OFF (any negative
	 * value) never, whatever the environment says.
	 */
	int sync_ms;
};
#define RINGTRACE_CRASH_EVENTS_NONE (-1)
#define RINGTRACE_SYNC_OFF (-1)

#ifndef RINGTRACE_DISABLE

/*
 * Start tracing now with these options (NULL: the environment only).
 * Returns 0, -EALREADY if tracing already started or failed to start,
 * -EINVAL for a bad option, -EPERM in a set-group-ID program or one with
 * file capabilities given no arena_path (a privileged process reads no
 * RINGTRACE_* variable), or another -errno when the arena cannot be
 * created; on failure tracing stays off and one line on stderr says why.
 */
int ringtrace_init(const struct ringtrace_options *options);

/* Mark the arena closed and stop tracing; later events are ignored. */
void ringtrace_shutdown(void);

/* Whether events are being recorded (starting the library if needed). */
int ringtrace_enabled(void);

/* The arena's path, or NULL when tracing is off. */
const char *ringtrace_arena_path(void);

/* Name the calling thread in the trace (at most 15 bytes are kept). */
void ringtrace_set_thread_name(const char *name);

/*
 * Function enter/exit events: a program compiled with -finstrument-functions
 * and linked with ringtrace (or run under `ringtrace record`, which preloads
 * the library) records an "enter" and an "exit" event for every call of an
 * instrumented function: its address, the call site and the call depth on
 * the thread, raw addresses only.  RINGTRACE_FUNCTIONS=0 turns this off.
 * The depth counts every instrumented call, recorded or not, so that an
 * exit always has the depth of its enter.
 *
 * Record calls at depths below max_depth only (0: no limit, the default;
 * RINGTRACE_MAX_DEPTH).  Each thread keeps counting deeper calls.
 */
void ringtrace_set_max_depth(uint32_t max_depth);

/*
 * Record no enter or exit of the function at fn (its address, as
 * -finstrument-functions passes it: &function).  Returns 0, or -ENOSPC when
 * RINGTRACE_EXCLUDED_FUNCTIONS functions are excluded already.
 */
int ringtrace_exclude_function(void *fn);

/*
 * Record no enter or exit of the functions of every module (the program or
 * a shared object) loaded now whose path contains path_part, as
 * RINGTRACE_EXCLUDE_MODULES=a,b does at start.  Modules loaded later are not
 * covered.  Returns the number of modules excluded (0: none matched),
 * -EINVAL for an empty path_part, -ENOSPC when the table of
 * RINGTRACE_EXCLUDED_RANGES address ranges is full (those that fit are
 * excluded).
 */
int ringtrace_exclude_module(const char *path_part);

#define RINGTRACE_EXCLUDED_FUNCTIONS 64
#define RINGTRACE_EXCLUDED_RANGES 32

/*
 * The RT_LOG threshold: calls at this level or more severe are recorded
 * (RT_LOG_FATAL 1 ... RT_LOG_DEBUG 6).  Starts at RINGTRACE_LEVEL=name
 * (fatal, error, warn, notice, info, debug), else RT_LOG_INFO; `ringtrace
 * level ARENA NAME` changes it from outside.  Returns the previous
 * threshold, or -EINVAL for a level outside 1..6 (nothing changes).
 */
int ringtrace_set_level(int level);

/* The RT_LOG threshold now. */
int ringtrace_get_level(void);

#else /* RINGTRACE_DISABLE: macros, so that not even a local symbol remains */

#define ringtrace_init(options) ((void)(options), 0)
#define ringtrace_shutdown() ((void)0)
#define ringtrace_enabled() 0
#define ringtrace_arena_path() ((const char *)0)
#define ringtrace_set_thread_name(name) ((void)(name))
#define ringtrace_set_max_depth(max_depth) ((void)(max_depth))
#define ringtrace_exclude_function(fn) ((void)(fn), 0)
#define ringtrace_exclude_module(path_part) ((void)(path_part), 0)
#define ringtrace_set_level(level) ((void)(level), 0)
#define ringtrace_get_level() 0

#endif /* RINGTRACE_DISABLE */

/* ---- everything below is internal: names with a double underscore ---- */

/*
 * The binary interface between the code these macros compile into a
 * program and the library (docs/ABI.md).  A program keeps the layouts of
 * the sites below, of the writer and of ringtrace/abi.h's slots for as long
 * as it runs, beside whatever later version of the library it is given:
 *
 * - Every site the program hands to the library begins with a struct
 *   ringtrace__abi_head: the RINGTRACE_ABI_VERSION the program was compiled
 *   for and the site's own size; the version covers what is passed beside
 *   it (struct ringtrace__log_arg).  The library's slow path checks the head
 *   before it reads anything else of a site (the fast path never looks at
 *   it, so the check costs it nothing).  A site whose head the library does
 *   not serve stays off: its events are counted lost (as sites refused),
 *   never recorded wrong, and one line on stderr says so, once.
 * - Each ABI version has slow-path entry points of its own (version 1:
 *   ringtrace__emit_slow_v1, ringtrace__log_v1), and the library keeps the
 *   entry points of every version it serves, each reading its own layout.
 *   Version 0, the headers before the head existed, passed what is now a
 *   site's body alone to ringtrace__emit_slow and ringtrace__log; those
 *   remain, for the programs built then.
 * - A layout never changes under a version number: changing one, or the
 *   fast path's fields of the writer, or the slots, is a new
 *   RINGTRACE_ABI_VERSION with new entry points.  The writer is the
 *   library's (thread-local storage) and the program reads it at fixed
 *   offsets, so its size and those offsets are checked below: the program's
 *   sites vouch for the writer layout that was compiled beside them.
 */
struct ringtrace__abi_head {
	uint32_t version; /* RINGTRACE_ABI_VERSION the program was compiled for */
	uint32_t size;	  /* sizeof the struct this head begins */
};

/*
 * What a trace site says: one per RT_TRACE in the source, a static in the
 * caller.  id is 0 until the library copied the site into the arena.  It
 * was the whole site in ABI version 0, and keeps that layout.
 */
struct ringtrace__site_body {
	uint32_t id;
	uint8_t kind;
	uint8_t nargs;
	uint8_t arg_types[RT_MAX_ARGS];
	uint32_t line;
	const char *tag;
	const char *file;
	const char *func;
};

/* A trace site of RT_TRACE, RT_BEGIN, RT_END or RT_SCOPE (ABI version 1). */
struct ringtrace__site {
	struct ringtrace__abi_head abi;
	struct ringtrace__site_body body;
};

/*
 * What an RT_LOG site says: a trace site's body of kind RT_SITE_LOG (tag:
 * the format), the type code of each argument and the level.  The whole log
 * site in ABI version 0, and keeps that layout.
 */
struct ringtrace__log_site_body {
	struct ringtrace__site_body site;
	const uint8_t *types;
	uint32_t level;
};

/* An RT_LOG site (ABI version 1). */
struct ringtrace__log_site {
	struct ringtrace__abi_head abi;
	struct ringtrace__log_site_body body;
};

/* The layouts version 0 compiled, and the head in front of them. */
RT__FORMAT_ASSERT(offsetof(struct ringtrace__site_body, line) == 12 &&
		      offsetof(struct ringtrace__site_body, tag) == 16 &&
		      sizeof(struct ringtrace__site_body) == 16 + 3 * sizeof(const char *),
		  "a site's body keeps the layout of ABI version 0");
RT__FORMAT_ASSERT(offsetof(struct ringtrace__log_site_body, types) ==
			  sizeof(struct ringtrace__site_body) &&
		      offsetof(struct ringtrace__log_site_body, level) ==
			  sizeof(struct ringtrace__site_body) + sizeof(const uint8_t *),
		  "a log site's body keeps the layout of ABI version 0");
RT__FORMAT_ASSERT(offsetof(struct ringtrace__site, body) == 8 &&
		      offsetof(struct ringtrace__log_site, body) == 8,
		  "the ABI head is two words in front of the body");

/*
 * One RT_LOG argument as captured: an integer's, a double's or a pointer's
 * bits in lo; a long double in lo and hi.
 */
struct ringtrace__log_arg {
	uint64_t lo, hi;
};

/*
 * The writer's alignment: a cache line, where the C library can give one.  glibc puts
 * the initial-exec TLS of a library that dlopen() loads after start into what is left of
 * the static TLS block, and refuses it ("cannot allocate memory in static TLS block")
 * when the library's TLS asks for more alignment than that block has: 64 on x86-64, less
 * on AArch64.  There 16, and the fast path's fields may span two cache lines.
 */
#if defined(__aarch64__)
#define RT__WRITER_ALIGN 16
#else
#define RT__WRITER_ALIGN 64
#endif

/*
 * The calling thread's writing state.  The fast path runs while
 * head + nslots <= limit; everything else (first event, full ring, periodic
 * clock refresh, tracing off) goes through ringtrace__emit_slow_v1().  A zeroed
 * writer has limit 0, so a thread's first event always takes the slow path.
 */
struct ringtrace__writer {
	/*
	 * One cache line, all that a record written on the fast path reads of
	 * the writer: after a system call each line is likely a miss.
	 */
	union rt_slot *slots;
	uint64_t mask; /* ring slots - 1 */
	uint64_t head;
	uint64_t limit;
	uint64_t records;
	struct rt_ring_desc *ring;
	const volatile int32_t *cpu; /* rseq cpu_id, or a constant -1 */
	uint32_t busy;		     /* inside a record: a signal handler must not write */
	uint32_t internal;	     /* the library's own calls: the I/O interposer lets them by */
	/* slow path only */
	uint32_t thread;	/* thread-table index */
	uint32_t state;		/* attachment: see src/record/record.h */
	uint32_t named;		/* the program named this thread: keep its name */
	uint32_t claim_wait;	/* after a failed claim: events to let pass before the next */
	uint64_t dropped;	/* dropped since the last LOST record was written */
	uint64_t dropped_first; /* counters of the first and last of them */
	uint64_t dropped_last;
	uint64_t nested;      /* events a signal handler could not record */
	uint64_t claimed;     /* ring seq where the ring's claimed pages end; UINT64_MAX: all */
	uint32_t lent;	      /* vfork() children counting their events lost on it (vfork.c) */
	uint32_t vfork_child; /* the writer records a vfork() child's events (vfork.c) */
} __attribute__((aligned(RT__WRITER_ALIGN)));
RT__FORMAT_ASSERT(offsetof(struct ringtrace__writer, internal) + 4 <= 64,
		  "the fast path's fields in the writer's first cache line");
RT__FORMAT_ASSERT(sizeof(struct ringtrace__writer) == 128,
		  "the writer's size: programs built with an older header share the library's");
#if defined(__LP64__)
/* where the inline code of ABI versions 0 and 1 finds them */
RT__FORMAT_ASSERT(offsetof(struct ringtrace__writer, slots) == 0 &&
		      offsetof(struct ringtrace__writer, mask) == 8 &&
		      offsetof(struct ringtrace__writer, head) == 16 &&
		      offsetof(struct ringtrace__writer, limit) == 24 &&
		      offsetof(struct ringtrace__writer, records) == 32 &&
		      offsetof(struct ringtrace__writer, ring) == 40 &&
		      offsetof(struct ringtrace__writer, cpu) == 48 &&
		      offsetof(struct ringtrace__writer, busy) == 56,
		  "the writer's fast-path fields stay where ABI version 1 reads them");
#endif

#ifndef RINGTRACE_DISABLE

extern __thread struct ringtrace__writer ringtrace__tls_writer
    __attribute__((tls_model("initial-exec")));

/* Everything the fast path leaves out, for a site of ABI version 1 (see above). */
void ringtrace__emit_slow_v1(struct ringtrace__site *site, uint32_t a0, uint32_t a1, uint32_t a2,
			     uint32_t a3, uint64_t a4, uint64_t a5);

/*
 * The threshold RT_LOG compares with: the library's own word until the
 * arena exists, then the arena header's log_threshold, so that `ringtrace
 * level` can change it from outside.  Never NULL.
 */
extern volatile uint32_t *ringtrace__log_threshold;

/*
 * Record one RT_LOG call of a site of ABI version 1 (its level passed the
 * threshold): args[site->body.site.nargs].
 */
void ringtrace__log_v1(struct ringtrace__log_site *site, const struct ringtrace__log_arg *args);

/* Bytes of string data one RT_LOG call keeps, in all (RINGTRACE_LOG_STRINGS): set at load. */
extern volatile uint32_t ringtrace__log_string_limit;

/* Never called: it only lets the compiler check an RT_LOG format against its arguments. */
static inline __attribute__((always_inline, no_instrument_function, format(printf, 1, 2))) void
ringtrace__log_format_check(const char *format, ...)
{
	(void)format;
}

#if defined(__x86_64__) || defined(__i386__)
static inline __attribute__((always_inline, no_instrument_function)) uint64_t
ringtrace__counter(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
static inline __attribute__((always_inline, no_instrument_function)) uint64_t
ringtrace__counter(void)
{
	uint64_t v;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
}
#else
uint64_t ringtrace__counter(void); /* CLOCK_MONOTONIC nanoseconds */
#endif

#define RT__LIKELY(x) __builtin_expect(!!(x), 1)
#define RT__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define RT__COMPILER_BARRIER() __atomic_signal_fence(__ATOMIC_SEQ_CST)

/*
 * The inline functions below are no_instrument_function: a program compiled
 * with -finstrument-functions instruments inlined functions too, and
 * ringtrace's own code must never show up among its calls.
 */

/*
 * A slot is put together in registers and stored as four 8-byte words: the
 * fields' own stores (bytes and halves among them) cost a traced call a
 * tenth of its time.  Two 32-bit fields side by side make a word, and so do
 * the 8-, 8- and 16-bit fields after seq (struct rt_slot_head and
 * struct rt_slot_cont in ringtrace/abi.h); the byte order decides which
 * goes high.
 */
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define RT__WORD_32_32(first, second) ((uint64_t)(uint32_t)(first) << 32 | (uint32_t)(second))
#define RT__WORD_8_8_16(first, second, third)                                                      \
	((uint32_t)(uint8_t)(first) << 24 | (uint32_t)(uint8_t)(second) << 16 | (uint16_t)(third))
#else
#define RT__WORD_32_32(first, second) ((uint32_t)(first) | (uint64_t)(uint32_t)(second) << 32)
#define RT__WORD_8_8_16(first, second, third)                                                      \
	((uint8_t)(first) | (uint32_t)(uint8_t)(second) << 8 | (uint32_t)(uint16_t)(third) << 16)
#endif

/*
 * Relaxed atomic stores: plain moves on every target, but they tell the
 * compiler (and ThreadSanitizer) that a reader may look concurrently.
 */
static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__store_slot(union rt_slot *dst, uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3)
{
	__atomic_store_n(&dst->words[0], w0, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->words[1], w1, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->words[2], w2, __ATOMIC_RELAXED);
	__atomic_store_n(&dst->words[3], w3, __ATOMIC_RELAXED);
}

/* The head slot of the record at seq h: its fields, its time, its first payload word. */
static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__store_head(struct ringtrace__writer *w, uint64_t h, uint8_t kind, unsigned nslots,
		      uint32_t id, uint64_t t, uint64_t first)
{
	ringtrace__store_slot(&w->slots[h & w->mask],
			      RT__WORD_32_32(h, RT__WORD_8_8_16(kind, nslots, *w->cpu)),
			      RT__WORD_32_32(w->records, id), t, first);
}

/* Continuation slot k (1 for the second) of the record at seq h: three payload words. */
static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__store_cont(struct ringtrace__writer *w, uint64_t h, unsigned k, uint64_t w1, uint64_t w2,
		      uint64_t w3)
{
	ringtrace__store_slot(&w->slots[(h + k) & w->mask],
			      RT__WORD_32_32(h + k, RT__WORD_8_8_16(RT_REC_CONT, k, 0)), w1, w2,
			      w3);
}

/*
 * A record's bracket, following the ring protocol in ringtrace/format.h:
 * reserve before any of its slots changes, head after all of them.
 */
static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__reserve(struct ringtrace__writer *w, uint64_t h, unsigned nslots)
{
	__atomic_store_n(&w->ring->reserve, h + nslots, __ATOMIC_RELAXED);
	/* publishes: reserve, before any slot of the record changes */
	RT_FENCE_RELEASE();
}

static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__publish(struct ringtrace__writer *w, uint64_t h, unsigned nslots)
{
	w->records++;
	__atomic_store_n(&w->ring->records, w->records, __ATOMIC_RELAXED);
	/* publishes: the record's slots, to readers that load head with acquire */
	__atomic_store_n(&w->ring->head, h + nslots, __ATOMIC_RELEASE);
	w->head = h + nslots;
}

/*
 * Store one record of nslots (1 or 2) slots at seq h of the calling
 * thread's ring.  The caller holds busy and checked h + nslots <= limit.
 */
static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__write_record(struct ringtrace__writer *w, uint64_t h, const unsigned nslots,
			uint8_t kind, uint32_t id, uint64_t t, uint32_t a0, uint32_t a1,
			uint32_t a2, uint32_t a3, uint64_t a4, uint64_t a5)
{
	ringtrace__reserve(w, h, nslots);
	ringtrace__store_head(w, h, kind, nslots, id, t, RT__WORD_32_32(a0, a1));
	if (nslots > 1)
		ringtrace__store_cont(w, h, 1, RT__WORD_32_32(a2, a3), a4, a5);
	ringtrace__publish(w, h, nslots);
}

/*
 * The fast path.  busy keeps a signal handler that traces on this thread
 * from writing into the record this thread is in the middle of; limit is
 * read atomically because ringtrace_shutdown() lowers it from another thread.
 */
static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__emit(struct ringtrace__site *site, const unsigned nslots, uint32_t a0, uint32_t a1,
		uint32_t a2, uint32_t a3, uint64_t a4, uint64_t a5)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	uint32_t id = __atomic_load_n(&site->body.id, __ATOMIC_RELAXED);
	if (RT__UNLIKELY(id == 0 || w->busy)) {
		ringtrace__emit_slow_v1(site, a0, a1, a2, a3, a4, a5);
		return;
	}
	w->busy = 1;
	RT__COMPILER_BARRIER(); /* a handler sees busy before we read head */
	uint64_t h = w->head;
	if (RT__UNLIKELY(h + nslots > __atomic_load_n(&w->limit, __ATOMIC_RELAXED))) {
		RT__COMPILER_BARRIER();
		w->busy = 0;
		ringtrace__emit_slow_v1(site, a0, a1, a2, a3, a4, a5);
		return;
	}
	ringtrace__write_record(w, h, nslots, RT_REC_TRACE, id, ringtrace__counter(), a0, a1, a2,
				a3, a4, a5);
	RT__COMPILER_BARRIER();
	w->busy = 0;
}

/*
 * RT_LOG's fast path.  When every argument is an integer or a pointer, the
 * payload is one 8-byte word each (ringtrace/format.h), its layout known at
 * compile time: up to RT__LOG_INLINE_WORDS words make at most three slots,
 * written here as RT_TRACE writes its record.  A string, a floating-point
 * argument, the site's first call, a full ring or a signal handler inside a
 * record go to ringtrace__log_v1(), which lays out any payload.
 */
#define RT__LOG_INLINE_WORDS 7u
/* With strings: arguments, and string bytes in all, an inline call takes at most. */
#define RT__LOG_INLINE_STRING_ARGS 6u
#define RT__LOG_INLINE_STRING_BYTES 64u
/* without optimization GCC ignores the request and says so: a warning in users' builds */
#ifdef __OPTIMIZE__
#define RT__UNROLL _Pragma("GCC unroll 16")
#else
#define RT__UNROLL
#endif

/* What an argument class is to the inline path: a word, a string, or neither. */
#define RT__LOG_WORD 1
#define RT__LOG_STRING 2
static inline __attribute__((always_inline, no_instrument_function)) int
ringtrace__log_arg_shape(unsigned type)
{
	const unsigned c = RT_ARG_CLASS(type);
	if (c == RT_ARG_SIGNED || c == RT_ARG_UNSIGNED || c == RT_ARG_POINTER)
		return RT__LOG_WORD;
	return c == RT_ARG_STRING ? RT__LOG_STRING : 0;
}

/*
 * Which inline path a site's arguments take: RT__LOG_WORD (integers and
 * pointers only), RT__LOG_STRING (strings among them), or 0 (the library).
 */
static inline __attribute__((always_inline, no_instrument_function)) int
ringtrace__log_inline_path(const uint8_t *types, const unsigned n)
{
	/* unrolled, so that the compiler folds the site's constant types into one answer */
	int shapes = 0, others = 0;
	RT__UNROLL for (unsigned i = 0; i < n && i < RT__LOG_INLINE_WORDS; i++)
	{
		const int shape = ringtrace__log_arg_shape(types[i]);
		shapes |= shape;
		others |= !shape;
	}
	if (n > RT__LOG_INLINE_WORDS || others)
		return 0;
	if (shapes & RT__LOG_STRING)
		return n <= RT__LOG_INLINE_STRING_ARGS ? RT__LOG_STRING : 0;
	return RT__LOG_WORD;
}

static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__log_words(struct ringtrace__log_site *site, const unsigned n,
		     const struct ringtrace__log_arg *args)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	/* the payload's first word in the head slot, three in each continuation slot */
	const unsigned nslots = n <= 1 ? 1u : 1u + (n - 1u + 2u) / 3u;
	uint32_t id = __atomic_load_n(&site->body.site.id, __ATOMIC_RELAXED);
	if (RT__UNLIKELY(id == 0 || w->busy)) {
		ringtrace__log_v1(site, args);
		return;
	}
	w->busy = 1;
	RT__COMPILER_BARRIER(); /* a handler sees busy before we read head */
	uint64_t h = w->head;
	if (RT__UNLIKELY(h + nslots > __atomic_load_n(&w->limit, __ATOMIC_RELAXED))) {
		RT__COMPILER_BARRIER();
		w->busy = 0;
		ringtrace__log_v1(site, args);
		return;
	}
	uint64_t t = ringtrace__counter();
	ringtrace__reserve(w, h, nslots);
	ringtrace__store_head(w, h, RT_REC_LOG, nslots, id, t, n > 0 ? args[0].lo : 0);
	for (unsigned k = 1; k < nslots; k++) {
		const unsigned first = 1u + 3u * (k - 1u); /* the slot's first word */
		ringtrace__store_cont(w, h, k, args[first].lo,
				      first + 1 < n ? args[first + 1].lo : 0,
				      first + 2 < n ? args[first + 2].lo : 0);
	}
	ringtrace__publish(w, h, nslots);
	RT__COMPILER_BARRIER();
	w->busy = 0;
}

/*
 * RT_LOG's fast path with strings among integers and pointers: the fixed
 * parts' layout is known at compile time, the strings' lengths are found
 * now.  When they fit RT__LOG_INLINE_STRING_BYTES and the string limit, the
 * payload is laid out on the stack, zeros to its last slot's end, and
 * written slot by slot; a NULL string, a longer one, the site's first call
 * or a full ring go to ringtrace__log_v1(), which cuts and marks.
 */
static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__log_strings(struct ringtrace__log_site *site, const uint8_t *types, const unsigned n,
		       const struct ringtrace__log_arg *args)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	uint32_t id = __atomic_load_n(&site->body.site.id, __ATOMIC_RELAXED);
	if (RT__UNLIKELY(id == 0 || w->busy)) {
		ringtrace__log_v1(site, args);
		return;
	}
	uint32_t lengths[RT__LOG_INLINE_STRING_ARGS];
	uint32_t fixed = 0, strings = 0;
	RT__UNROLL for (unsigned i = 0; i < n && i < RT__LOG_INLINE_STRING_ARGS; i++)
	{
		lengths[i] = 0;
		if (ringtrace__log_arg_shape(types[i]) != RT__LOG_STRING) {
			fixed += 8;
			continue;
		}
		fixed += 16;
		/* the caller's char *, captured as bits */
		const char *str = (const char *)(uintptr_t)args[i].lo;
		if (RT__UNLIKELY(!str)) {
			ringtrace__log_v1(site, args);
			return;
		}
		/*
		 * one byte more than fits tells a string that is too long here; memchr,
		 * not strnlen, which strict ISO C builds do not declare (memchr stops
		 * reading at the byte it finds)
		 */
		const char *end = (const char *)memchr(str, 0, RT__LOG_INLINE_STRING_BYTES + 1);
		lengths[i] = end ? (uint32_t)(end - str) : RT__LOG_INLINE_STRING_BYTES + 1;
		strings += lengths[i];
	}
	if (RT__UNLIKELY(strings > RT__LOG_INLINE_STRING_BYTES ||
			 strings > ringtrace__log_string_limit)) {
		ringtrace__log_v1(site, args);
		return;
	}
	const uint32_t bytes = fixed + strings;
	const unsigned nslots = RT_LOG_SLOTS(bytes);
	w->busy = 1;
	RT__COMPILER_BARRIER(); /* a handler sees busy before we read head */
	uint64_t h = w->head;
	if (RT__UNLIKELY(h + nslots > __atomic_load_n(&w->limit, __ATOMIC_RELAXED))) {
		RT__COMPILER_BARRIER();
		w->busy = 0;
		ringtrace__log_v1(site, args);
		return;
	}
	/* the payload, zeros to the end of its last slot */
	unsigned char payload[16 * RT__LOG_INLINE_STRING_ARGS + RT__LOG_INLINE_STRING_BYTES + 24]
	    __attribute__((aligned(8)));
	unsigned char *f = payload, *p = payload + fixed;
	RT__UNROLL for (unsigned i = 0; i < n && i < RT__LOG_INLINE_STRING_ARGS; i++)
	{
		__builtin_memcpy(f, &args[i].lo, 8);
		f += 8;
		if (ringtrace__log_arg_shape(types[i]) != RT__LOG_STRING)
			continue;
		const uint32_t part[2] = {lengths[i], 0}; /* the bytes copied; no flag */
		__builtin_memcpy(f, part, 8);
		f += 8;
		__builtin_memcpy(p, (const char *)(uintptr_t)args[i].lo, lengths[i]);
		p += lengths[i];
	}
	__builtin_memset(p, 0, 24);
	uint64_t t = ringtrace__counter();
	ringtrace__reserve(w, h, nslots);
	uint64_t first;
	__builtin_memcpy(&first, payload, 8);
	ringtrace__store_head(w, h, RT_REC_LOG, nslots, id, t, first);
	for (unsigned k = 1; k < nslots; k++) {
		uint64_t words[3];
		__builtin_memcpy(words, payload + 8 + 24 * (k - 1), sizeof(words));
		ringtrace__store_cont(w, h, k, words[0], words[1], words[2]);
	}
	ringtrace__publish(w, h, nslots);
	RT__COMPILER_BARRIER();
	w->busy = 0;
}

#endif /* !RINGTRACE_DISABLE */

/* ---- argument capture ------------------------------------------------- */

#define RT__STORE(x) ((uint64_t)(uintptr_t)(x))

#ifdef __cplusplus
} /* extern "C" */

template <typename T, bool IsEnum = std::is_enum<T>::value> struct ringtrace__underlying {
	typedef T type;
};
template <typename T> struct ringtrace__underlying<T, true> {
	typedef typename std::underlying_type<T>::type type;
};
template <typename T> struct ringtrace__argtype {
	typedef typename ringtrace__underlying<typename std::decay<T>::type>::type U;
	static_assert(!std::is_floating_point<U>::value,
		      "RT_TRACE arguments must be integers or pointers");
	static const uint8_t value =
	    (std::is_pointer<U>::value || std::is_member_pointer<U>::value ||
	     std::is_same<U, decltype(nullptr)>::value)
		? (uint8_t)(RT_ARG_POINTER | sizeof(void *))
		: (uint8_t)((std::is_signed<U>::value ? RT_ARG_SIGNED : RT_ARG_UNSIGNED) |
			    sizeof(U));
};
#define RT__TYPE(x) (ringtrace__argtype<decltype(x)>::value)
#define RT__CHECK(x) static_assert(true, "")

/* RT_LOG's arguments: a type code and the captured value of each. */
template <typename T> struct ringtrace__logtype {
	typedef typename ringtrace__underlying<typename std::decay<T>::type>::type U;
	static const uint8_t value =
	    (std::is_same<U, char *>::value || std::is_same<U, const char *>::value)
		? (uint8_t)(RT_ARG_STRING | 8)
	    : std::is_same<U, long double>::value ? (uint8_t)RT_ARG_LONG_DOUBLE
	    : std::is_floating_point<U>::value	  ? (uint8_t)(RT_ARG_FLOAT | 8)
	    : (std::is_pointer<U>::value || std::is_same<U, decltype(nullptr)>::value)
		? (uint8_t)(RT_ARG_POINTER | sizeof(void *))
		: (uint8_t)((std::is_signed<U>::value ? RT_ARG_SIGNED : RT_ARG_UNSIGNED) |
			    sizeof(U));
};
static inline __attribute__((always_inline, no_instrument_function)) ringtrace__log_arg
ringtrace__la(long double v)
{
	ringtrace__log_arg a = {0, 0};
	__builtin_memcpy(&a, &v, sizeof(v) < sizeof(a) ? sizeof(v) : sizeof(a));
	return a;
}
static inline __attribute__((always_inline, no_instrument_function)) ringtrace__log_arg
ringtrace__la(double v)
{
	ringtrace__log_arg a = {0, 0};
	__builtin_memcpy(&a.lo, &v, sizeof(v));
	return a;
}
static inline __attribute__((always_inline, no_instrument_function)) ringtrace__log_arg
ringtrace__la(float v)
{
	return ringtrace__la((double)v);
}
static inline __attribute__((always_inline, no_instrument_function)) ringtrace__log_arg
ringtrace__la(const char *s)
{
	ringtrace__log_arg a = {(uint64_t)(uintptr_t)s, 0};
	return a;
}
static inline __attribute__((always_inline, no_instrument_function)) ringtrace__log_arg
ringtrace__la(char *s)
{
	return ringtrace__la((const char *)s);
}
static inline __attribute__((always_inline, no_instrument_function)) ringtrace__log_arg
ringtrace__la(decltype(nullptr))
{
	ringtrace__log_arg a = {0, 0};
	return a;
}
template <typename T>
static inline __attribute__((always_inline, no_instrument_function)) ringtrace__log_arg
ringtrace__la(T *p)
{
	ringtrace__log_arg a = {(uint64_t)(uintptr_t)p, 0};
	return a;
}
template <typename T>
static inline __attribute__((always_inline, no_instrument_function))
typename std::enable_if<std::is_integral<T>::value || std::is_enum<T>::value,
			ringtrace__log_arg>::type
ringtrace__la(T v)
{
	typedef typename ringtrace__underlying<T>::type U;
	ringtrace__log_arg a = {std::is_signed<U>::value ? (uint64_t)(int64_t)(U)v : (uint64_t)(U)v,
				0};
	return a;
}
#define RT__LTYPE(x) (ringtrace__logtype<decltype(x)>::value)
#define RT__LARG(x) ringtrace__la(x)

#else /* C */

/* Floating-point arguments would be silently truncated: RT__CHECK refuses them. */
#define RT__IS_FLOAT(x) _Generic((x), float : 1, double : 1, long double : 1, default : 0)
#define RT__CHECK(x)                                                                               \
	_Static_assert(!RT__IS_FLOAT(x), "RT_TRACE arguments must be integers or pointers")
#define RT__TYPE(x)                                                                                \
	_Generic((x), _Bool                                                                        \
		 : RT_ARG_UNSIGNED | 1, char                                                       \
		 : ((char)-1 < 0 ? RT_ARG_SIGNED : RT_ARG_UNSIGNED) | 1, signed char               \
		 : RT_ARG_SIGNED | 1, unsigned char                                                \
		 : RT_ARG_UNSIGNED | 1, short                                                      \
		 : RT_ARG_SIGNED | sizeof(short), unsigned short                                   \
		 : RT_ARG_UNSIGNED | sizeof(short), int                                            \
		 : RT_ARG_SIGNED | sizeof(int), unsigned int                                       \
		 : RT_ARG_UNSIGNED | sizeof(int), long                                             \
		 : RT_ARG_SIGNED | sizeof(long), unsigned long                                     \
		 : RT_ARG_UNSIGNED | sizeof(long), long long                                       \
		 : RT_ARG_SIGNED | sizeof(long long), unsigned long long                           \
		 : RT_ARG_UNSIGNED | sizeof(long long), float : 0, double : 0, long double : 0,    \
		   default                                                                         \
		 : RT_ARG_POINTER | sizeof(void *))

/* RT_LOG's arguments: a type code, and a function that captures the value. */
#define RT__LTYPE(x)                                                                               \
	_Generic((x), float                                                                        \
		 : RT_ARG_FLOAT | 8, double                                                        \
		 : RT_ARG_FLOAT | 8, long double                                                   \
		 : RT_ARG_LONG_DOUBLE, char *                                                      \
		 : RT_ARG_STRING | 8, const char *                                                 \
		 : RT_ARG_STRING | 8, default                                                      \
		 : RT__TYPE(x))
static inline __attribute__((always_inline, no_instrument_function)) struct ringtrace__log_arg
ringtrace__la_s(int64_t v)
{
	struct ringtrace__log_arg a = {(uint64_t)v, 0};
	return a;
}
static inline __attribute__((always_inline, no_instrument_function)) struct ringtrace__log_arg
ringtrace__la_u(uint64_t v)
{
	struct ringtrace__log_arg a = {v, 0};
	return a;
}
static inline __attribute__((always_inline, no_instrument_function)) struct ringtrace__log_arg
ringtrace__la_d(double v)
{
	struct ringtrace__log_arg a = {0, 0};
	__builtin_memcpy(&a.lo, &v, sizeof(v));
	return a;
}
static inline __attribute__((always_inline, no_instrument_function)) struct ringtrace__log_arg
ringtrace__la_ld(long double v)
{
	struct ringtrace__log_arg a = {0, 0};
	__builtin_memcpy(&a, &v, sizeof(v) < sizeof(a) ? sizeof(v) : sizeof(a));
	return a;
}
static inline __attribute__((always_inline, no_instrument_function)) struct ringtrace__log_arg
ringtrace__la_p(const volatile void *p)
{
	struct ringtrace__log_arg a = {(uint64_t)(uintptr_t)p, 0};
	return a;
}
/* The generic selection picks the function; the call converts x to its parameter. */
#define RT__LARG(x)                                                                                \
	_Generic((x), _Bool                                                                        \
		 : ringtrace__la_u, char                                                           \
		 : ringtrace__la_s, signed char                                                    \
		 : ringtrace__la_s, unsigned char                                                  \
		 : ringtrace__la_u, short                                                          \
		 : ringtrace__la_s, unsigned short                                                 \
		 : ringtrace__la_u, int                                                            \
		 : ringtrace__la_s, unsigned int                                                   \
		 : ringtrace__la_u, long                                                           \
		 : ringtrace__la_s, unsigned long                                                  \
		 : ringtrace__la_u, long long                                                      \
		 : ringtrace__la_s, unsigned long long                                             \
		 : ringtrace__la_u, float                                                          \
		 : ringtrace__la_d, double                                                         \
		 : ringtrace__la_d, long double                                                    \
		 : ringtrace__la_ld, default                                                       \
		 : ringtrace__la_p)(x)

#endif /* __cplusplus */

/* ---- RT_TRACE --------------------------------------------------------- */

#ifdef RINGTRACE_DISABLE

#define RT_TRACE(...) ((void)0)
#define RT_BEGIN(...) ((void)0)
#define RT_END(...) ((void)0)
#define RT_SCOPE(tag) ((void)0)

#else

/*
 * The argument lists of RT_TRACE and RT_LOG are taken apart at compile time:
 *
 * RT__NARGS(head, x1, ..., xn) is n, 0 to 20: the arguments push the list of
 * counts after them to the right, and RT__NTH_ takes the one that lands in
 * its 22nd place.
 *
 * RT__MAP(n, m, head, x1, ..., xn) is m(x1) m(x2) ... m(xn): each step
 * applies m to one argument and hands the rest to the step below.  m puts
 * its own separator after each (a comma in a list, a semicolon after a
 * statement).  With no arguments it is m0, m's own macro for that case
 * (nothing, or what an initializer that may not be empty holds).  The head
 * (RT_TRACE's tag, RT_LOG's format) rides along unused, so that no step is
 * called with nothing for its "...", which C before C23 does not allow.
 */
#define RT__NARGS(...)                                                                             \
	RT__NTH_(__VA_ARGS__, 20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2,  \
		 1, 0, _)
#define RT__NTH_(h, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17,    \
		 x18, x19, x20, n, ...)                                                            \
	n
#define RT__MAP(n, m, ...) RT__CAT(RT__MAP, n)(m, __VA_ARGS__)
/* clang-format off */
#define RT__MAP0(m, h) m##0
#define RT__MAP1(m, h, x) m(x)
#define RT__MAP2(m, h, x, ...) m(x) RT__MAP1(m, h, __VA_ARGS__)
#define RT__MAP3(m, h, x, ...) m(x) RT__MAP2(m, h, __VA_ARGS__)
#define RT__MAP4(m, h, x, ...) m(x) RT__MAP3(m, h, __VA_ARGS__)
#define RT__MAP5(m, h, x, ...) m(x) RT__MAP4(m, h, __VA_ARGS__)
#define RT__MAP6(m, h, x, ...) m(x) RT__MAP5(m, h, __VA_ARGS__)
#define RT__MAP7(m, h, x, ...) m(x) RT__MAP6(m, h, __VA_ARGS__)
#define RT__MAP8(m, h, x, ...) m(x) RT__MAP7(m, h, __VA_ARGS__)
#define RT__MAP9(m, h, x, ...) m(x) RT__MAP8(m, h, __VA_ARGS__)
#define RT__MAP10(m, h, x, ...) m(x) RT__MAP9(m, h, __VA_ARGS__)
#define RT__MAP11(m, h, x, ...) m(x) RT__MAP10(m, h, __VA_ARGS__)
#define RT__MAP12(m, h, x, ...) m(x) RT__MAP11(m, h, __VA_ARGS__)
#define RT__MAP13(m, h, x, ...) m(x) RT__MAP12(m, h, __VA_ARGS__)
#define RT__MAP14(m, h, x, ...) m(x) RT__MAP13(m, h, __VA_ARGS__)
#define RT__MAP15(m, h, x, ...) m(x) RT__MAP14(m, h, __VA_ARGS__)
#define RT__MAP16(m, h, x, ...) m(x) RT__MAP15(m, h, __VA_ARGS__)
#define RT__MAP17(m, h, x, ...) m(x) RT__MAP16(m, h, __VA_ARGS__)
#define RT__MAP18(m, h, x, ...) m(x) RT__MAP17(m, h, __VA_ARGS__)
#define RT__MAP19(m, h, x, ...) m(x) RT__MAP18(m, h, __VA_ARGS__)
#define RT__MAP20(m, h, x, ...) m(x) RT__MAP19(m, h, __VA_ARGS__)
/* clang-format on */
/* The head of an argument list: the tag or the format (the _ stands in for no arguments). */
#define RT__HEAD(...) RT__HEAD_(__VA_ARGS__, _)
#define RT__HEAD_(h, ...) h
#define RT__CAT(a, b) RT__CAT_(a, b)
#define RT__CAT_(a, b) a##b
/* The head of a site of type (a struct ringtrace__site or ringtrace__log_site). */
/* clang-format off */
#define RT__ABI_HEAD(type) {RINGTRACE_ABI_VERSION, (uint32_t)sizeof(type)}
/* clang-format on */

/*
 * One site of kind kind and a record of its n arguments: each checked (in C,
 * not floating-point), its type code in the site and its value in the
 * record, the six of each filled up with zeros.  "" tag "" only compiles
 * when tag is a string literal.
 */
/* The site initializer reads best one field group per line. */
/* clang-format off */
#define RT__TRACE(kind, ...) RT__TRACE_N(kind, RT__NARGS(__VA_ARGS__), __VA_ARGS__)
#define RT__TRACE_N(kind, n, ...)                                                                  \
	do {                                                                                       \
		RT__FORMAT_ASSERT(n <= RT_MAX_ARGS,                                                \
				  "RT_TRACE, RT_BEGIN and RT_END take at most 6 arguments");       \
		RT__MAP(n, RT__CHECK_, __VA_ARGS__)                                                \
		static struct ringtrace__site rt__site_ = {                                        \
			RT__ABI_HEAD(struct ringtrace__site),                                      \
			{0, kind, n,                                                               \
			 {RT__SIX(RT__MAP(n, RT__TYPE_, __VA_ARGS__) 0, 0, 0, 0, 0, 0, 0)},        \
			 __LINE__, "" RT__HEAD(__VA_ARGS__) "", __FILE__, __func__}};              \
		ringtrace__emit(&rt__site_, RT_TRACE_SLOTS(n),                                     \
				RT__SIX_STORES(RT__MAP(n, RT__STORE_, __VA_ARGS__)                 \
					       0, 0, 0, 0, 0, 0, 0));                              \
	} while (0)
/* clang-format on */
#define RT__CHECK_(x) RT__CHECK(x);
#define RT__CHECK_0
#define RT__TYPE_(x) RT__TYPE(x),
#define RT__TYPE_0
#define RT__STORE_(x) RT__STORE(x),
#define RT__STORE_0
/*
 * The first six of a list: the calls above follow the arguments with seven
 * zeros, six to fill up to six and one for the "..." to take.
 */
#define RT__SIX(...) RT__SIX_(__VA_ARGS__)
#define RT__SIX_(a, b, c, d, e, f, ...) a, b, c, d, e, f
/* The same, as ringtrace__emit's a0 ... a5. */
#define RT__SIX_STORES(...) RT__SIX_STORES_(__VA_ARGS__)
#define RT__SIX_STORES_(a, b, c, d, e, f, ...)                                                     \
	(uint32_t)(a), (uint32_t)(b), (uint32_t)(c), (uint32_t)(d), (uint64_t)(e), (uint64_t)(f)

/* The site's kind is the first argument, so that one expansion serves the three macros. */
#define RT_TRACE(...) RT__TRACE(RT_SITE_TRACE, __VA_ARGS__)
#define RT_BEGIN(...) RT__TRACE(RT_SITE_BEGIN, __VA_ARGS__)
#define RT_END(...) RT__TRACE(RT_SITE_END, __VA_ARGS__)

/*
 * RT_SCOPE: two sites, then a local whose end emits the END.  The sites are
 * statics of the block, so each RT_SCOPE registers once like an RT_TRACE;
 * the local's name carries __COUNTER__ so that scopes in one block, or in
 * nested blocks, neither clash nor shadow.
 */
/* clang-format off */
#define RT__SCOPE_SITES(tag, id)                                                                   \
	static struct ringtrace__site RT__CAT(rt__scope_begin_, id) = {                            \
		RT__ABI_HEAD(struct ringtrace__site),                                              \
		{0, RT_SITE_BEGIN, 0, {0}, __LINE__, "" tag "", __FILE__, __func__}};              \
	static struct ringtrace__site RT__CAT(rt__scope_end_, id) = {                              \
		RT__ABI_HEAD(struct ringtrace__site),                                              \
		{0, RT_SITE_END, 0, {0}, __LINE__, "" tag "", __FILE__, __func__}}
/* clang-format on */

static inline __attribute__((always_inline, no_instrument_function)) struct ringtrace__site *
ringtrace__scope_begin(struct ringtrace__site *begin, struct ringtrace__site *end)
{
	ringtrace__emit(begin, RT_TRACE_SLOTS(0), 0, 0, 0, 0, 0, 0);
	return end;
}

#ifdef __cplusplus
/* An exception unwinding through the block ends the span too. */
class ringtrace__scope
{
      public:
	__attribute__((always_inline, no_instrument_function))
	ringtrace__scope(struct ringtrace__site *begin, struct ringtrace__site *end)
	    : end_(ringtrace__scope_begin(begin, end))
	{
	}
	__attribute__((always_inline, no_instrument_function)) ~ringtrace__scope()
	{
		ringtrace__emit(end_, RT_TRACE_SLOTS(0), 0, 0, 0, 0, 0, 0);
	}
	ringtrace__scope(const ringtrace__scope &) = delete;
	ringtrace__scope &operator=(const ringtrace__scope &) = delete;

      private:
	struct ringtrace__site *end_;
};
#define RT__SCOPE(tag, id)                                                                         \
	RT__SCOPE_SITES(tag, id);                                                                  \
	ringtrace__scope RT__CAT(rt__scope_, id)(&RT__CAT(rt__scope_begin_, id),                   \
						 &RT__CAT(rt__scope_end_, id))
#else
/* The cleanup runs wherever the block is left: its end, return, break, goto out of it. */
static inline __attribute__((always_inline, no_instrument_function)) void
ringtrace__scope_end(struct ringtrace__site **end)
{
	ringtrace__emit(*end, RT_TRACE_SLOTS(0), 0, 0, 0, 0, 0, 0);
}
#define RT__SCOPE(tag, id)                                                                         \
	RT__SCOPE_SITES(tag, id);                                                                  \
	struct ringtrace__site *RT__CAT(                                                           \
	    rt__scope_, id) __attribute__((cleanup(ringtrace__scope_end), unused)) =               \
	    ringtrace__scope_begin(&RT__CAT(rt__scope_begin_, id), &RT__CAT(rt__scope_end_, id))
#endif

#define RT_SCOPE(tag) RT__SCOPE(tag, __COUNTER__)

#endif /* RINGTRACE_DISABLE */

/* ---- RT_LOG ----------------------------------------------------------- */

/*
 * RT_LOG(level, "format", args...): a printf-style message whose formatting
 * waits until the log is read.  level is a constant, RT_LOG_FATAL ...
 * RT_LOG_DEBUG (enum rt_log_level, ringtrace/abi.h); a call above the
 * threshold (ringtrace_set_level) costs a load and a branch, and
 * -DRINGTRACE_LOG_MIN=RT_LOG_WARN removes the calls less severe than
 * RT_LOG_WARN at compile time.  Up to 16 arguments of any integer, enum,
 * floating-point or pointer type; a char * is copied as a string (its
 * first RINGTRACE_LOG_STRINGS bytes of all strings, default 320), so that
 * %p of a char * prints its address only as a string's pointer.  The
 * format is checked against the arguments like printf's.
 */
#ifndef RINGTRACE_LOG_MIN
#define RINGTRACE_LOG_MIN RT_LOG_DEBUG
#endif
/*
 * The short names RT_FATAL ... RT_DEBUG of earlier versions clash with
 * other projects' macros (RT-Thread's RT_ERROR, for one), so they exist
 * only for a program that asks for them by defining RINGTRACE_SHORT_LEVELS
 * before it includes this header.
 */
#ifdef RINGTRACE_SHORT_LEVELS
#define RT_FATAL RT_LOG_FATAL
#define RT_ERROR RT_LOG_ERROR
#define RT_WARN RT_LOG_WARN
#define RT_NOTICE RT_LOG_NOTICE
#define RT_INFO RT_LOG_INFO
#define RT_DEBUG RT_LOG_DEBUG
#endif

#ifdef RINGTRACE_DISABLE

#define RT_LOG(...) ((void)0)

#else

/*
 * The types and the captured values are arrays of n + 1, so that neither is
 * empty: the last entry is a zero beyond the arguments'.  The call under
 * if (0) has the compiler check the format against the arguments like
 * printf's, and is never made.
 */
/* clang-format off */
#define RT_LOG(level, ...) RT__LOG(level, RT__NARGS(__VA_ARGS__), __VA_ARGS__)
#define RT__LOG(level, n, ...)                                                                     \
	do {                                                                                       \
		if ((level) <= RINGTRACE_LOG_MIN &&                                                \
		    RT__UNLIKELY((uint32_t)(level) <= *ringtrace__log_threshold)) {                \
			RT__FORMAT_ASSERT(n <= 16, "RT_LOG takes at most 16 arguments");           \
			if (0)                                                                     \
				ringtrace__log_format_check(__VA_ARGS__);                          \
			static const uint8_t rt__types_[n + 1] = {                                 \
				RT__MAP(n, RT__LTYPE_, __VA_ARGS__)};                              \
			static struct ringtrace__log_site rt__lsite_ = {                           \
				RT__ABI_HEAD(struct ringtrace__log_site),                          \
				{{0, RT_SITE_LOG, n, {0}, __LINE__, "" RT__HEAD(__VA_ARGS__) "",   \
				  __FILE__, __func__},                                             \
				 rt__types_, (level)}};                                            \
			const struct ringtrace__log_arg rt__args_[n + 1] = {                       \
				RT__MAP(n, RT__LARG_, __VA_ARGS__)};                               \
			const int rt__path_ = ringtrace__log_inline_path(rt__types_, n);           \
			if (rt__path_ == RT__LOG_WORD)                                             \
				ringtrace__log_words(&rt__lsite_, n, rt__args_);                   \
			else if (rt__path_ == RT__LOG_STRING)                                      \
				ringtrace__log_strings(&rt__lsite_, rt__types_, n, rt__args_);     \
			else                                                                       \
				ringtrace__log_v1(&rt__lsite_, rt__args_);                         \
		}                                                                                  \
	} while (0)
/* clang-format on */
#define RT__LTYPE_(x) RT__LTYPE(x),
#define RT__LTYPE_0 0
#define RT__LARG_(x) RT__LARG(x),
/* clang-format off */
#define RT__LARG_0 {0, 0}
/* clang-format on */

#endif /* RINGTRACE_DISABLE */

#endif /* RINGTRACE_H */
