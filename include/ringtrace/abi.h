/*
 * ringtrace/abi.h - what a program compiled with ringtrace.h writes itself.
 *
 * RT_TRACE, RT_LOG and the function hooks write their records into the
 * calling thread's ring inline, in the program's own code: the slots, the
 * ring's descriptor, the record and site kinds and the argument type codes
 * below are compiled into every traced program, so they are the library's
 * binary interface as much as part of the arena format.  The rest of the
 * format (the arena header, the thread, site and module tables, trace files)
 * is ringtrace/format.h, which includes this header and which only the
 * library and the tool use.  Every rule of format.h holds here: fixed-width
 * integers, no padding the compiler chooses, sizes checked below, fields
 * added only in reserved space, and every change bumps RT_FORMAT_VERSION.
 *
 * A program keeps what it compiled in for as long as it runs, next to
 * whatever library it is given, so a change here is also a new
 * RINGTRACE_ABI_VERSION (below; the rule is in ringtrace.h and
 * docs/ABI.md): a library serves the programs of every version it knows
 * and turns off, never misreads, the sites of any other.
 */
#ifndef RINGTRACE_ABI_H
#define RINGTRACE_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The version of all that a program's inline code shares with the library:
 * the slots and the ring descriptor of this header as it writes them, and
 * ringtrace.h's sites and thread writer.  Every site a program hands to the
 * library carries it.  Version 0 is the headers from before sites carried
 * one.
 */
#define RINGTRACE_ABI_VERSION 1

#define RT_SLOT_SIZE 32u /* bytes; a record is 1..RT_RECORD_MAX_SLOTS slots */
#define RT_MAX_ARGS 6u	 /* arguments of an RT_TRACE */

/* rt_arena_header.mode */
enum rt_mode {
	RT_MODE_FLIGHT = 1, /* rings overwrite their oldest records */
	RT_MODE_STREAM = 2, /* a full ring drops the new record and counts it */
};

/* rt_slot_head.kind; 0 is never valid, so zeroed memory never decodes. */
enum rt_record_kind {
	RT_REC_TRACE = 1,   /* an RT_TRACE event; argument count from its site */
	RT_REC_LOST = 2,    /* records this ring dropped while it was full */
	RT_REC_LOG = 3,	    /* an RT_LOG message: its arguments as a payload (below) */
	RT_REC_IO = 4,	    /* a file I/O call of the program: a payload (below) */
	RT_REC_CONT = 0xc0, /* continuation slot of a multi-slot record */
};

/*
 * rt_site_entry.kind.  Enter and exit events (-finstrument-functions) are
 * RT_REC_TRACE records of the library's own "enter" and "exit" sites: six
 * arguments (u32 x4, pointer x2), so always two slots:
 *   a0 the call depth on its thread (0: the outermost traced call)
 *   a1 flags, RT_FUNC_F_*
 *   a2, a3 zero
 *   a4 the function's address, a5 the call site (a return address)
 * The depth counts every instrumented call, recorded or not (maximum depth,
 * excluded functions), so an exit has the depth of its enter.
 */
enum rt_site_kind {
	RT_SITE_TRACE = 1, /* an RT_TRACE in the source */
	RT_SITE_ENTER = 2, /* a function was entered */
	RT_SITE_EXIT = 3,  /* a function returned */
	RT_SITE_LOG = 4,   /* an RT_LOG in the source: RT_REC_LOG records */
	RT_SITE_IO = 5,	   /* the I/O interposer's one site: RT_REC_IO records */
	RT_SITE_BEGIN = 6, /* an RT_BEGIN (or RT_SCOPE's start): RT_REC_TRACE records */
	RT_SITE_END = 7,   /* an RT_END (or RT_SCOPE's end): RT_REC_TRACE records */
};

/*
 * Argument type codes, captured at compile time: class in the high nibble,
 * the C type's size in bytes in the low one.  The decoder uses them to
 * sign-extend a signed value stored in a 32-bit field.
 */
#define RT_ARG_UNSIGNED 0x10u
#define RT_ARG_SIGNED 0x20u
#define RT_ARG_POINTER 0x30u
/* RT_LOG only: */
#define RT_ARG_FLOAT 0x40u	 /* a double, size 8 (a float is promoted) */
#define RT_ARG_STRING 0x50u	 /* a char * whose bytes were copied at the call, size 8 */
#define RT_ARG_LONG_DOUBLE 0x60u /* a long double, 16 bytes in the payload (size nibble 0) */
#define RT_ARG_CLASS(code) ((code)&0xf0u)
#define RT_ARG_BYTES(code) ((code)&0x0fu)

/*
 * RT_LOG levels, most severe first: the level an RT_LOG site is compiled
 * with, and rt_site_entry.level.  A call is recorded when its level is at
 * most the threshold.  These are the names programs use (ringtrace.h).
 */
enum rt_log_level {
	RT_LOG_FATAL = 1,
	RT_LOG_ERROR = 2,
	RT_LOG_WARN = 3,
	RT_LOG_NOTICE = 4,
	RT_LOG_INFO = 5,
	RT_LOG_DEBUG = 6,
};

/* Slots of an RT_REC_LOG record with a payload of bytes bytes. */
#define RT_LOG_SLOTS(bytes) ((bytes) <= 8u ? 1u : 1u + ((bytes)-8u + 23u) / 24u)

/* Slots an event with n arguments takes: two 32-bit arguments fit the head. */
#define RT_TRACE_SLOTS(nargs) ((nargs) <= 2 ? 1u : 2u)

/*
 * Ring protocol (single producer: the owning thread).
 *
 * Sequence numbers are free-running 64-bit slot counts; slot s lives at
 * index s & (ring_slots - 1).  To write a record of n slots at head h:
 *
 *   1. reserve := h + n                (relaxed store)
 *   2. release fence                   (reserve is visible before any slot)
 *   3. write slots h .. h+n-1, each stamped with its own seq
 *   4. records := records + 1          (relaxed store)
 *   5. head := h + n                   (release store: publishes the slots)
 *
 * So reserve == head except while a record is being written.  A reader
 * takes head and reserve, copies the window [reserve - ring_slots, head),
 * then reads reserve again: slots below (new reserve - ring_slots) may have
 * been overwritten while it copied and are discarded as overwritten.  If the
 * writer died with reserve != head, the record at [head, reserve) is torn.
 * Every slot carries the low 32 bits of its own seq, so a slot that does not
 * fit its position is never taken for part of a record.
 *
 * A ring's pages come into the file as the writer reaches them: in its
 * first lap, pages past the one holding slot head may be holes, which read
 * as zeros but must not be read through a mapping (tmpfs would allocate
 * them, or SIGBUS when full).  A reader reads no slot past head, save to
 * rebuild a damaged descriptor from the slots.
 *
 * Stream mode adds tail, written only by the collector: the writer never
 * goes past tail + ring_slots; it drops the record instead and later writes
 * an RT_REC_LOST record with the count.
 */
struct rt_ring_desc {
	/* cache line 0: written by the owning thread only */
	uint64_t head;	       /* seq: end of committed slots */
	uint64_t reserve;      /* seq: end of the record being written */
	uint64_t records;      /* records committed, ever: the next record seq */
	uint64_t dropped;      /* records dropped (full ring, nested signal) */
	uint64_t noted;	       /* of those, how many lost notes in the ring report */
	uint64_t notes;	       /* RT_REC_LOST records committed, ever (0 in older arenas) */
	uint64_t waits;	       /* times the ring was full and the writer waited (full_wait_us) */
	uint64_t wait_gave_up; /* 1 + tail when a wait last ran out: none again at that tail */
	/* cache line 1: written by the collector only */
	uint64_t tail; /* seq: slots consumed */
	uint64_t reserved1[7];
	/* cache line 2: ownership, written when the ring changes hands */
	uint32_t state;		   /* enum rt_ring_state */
	uint32_t owner;		   /* thread-table index of the current or last owner */
	uint64_t released_counter; /* raw clock when released; oldest reused first */
	uint64_t reserved2[6];
};

/* The first slot of a record. */
struct rt_slot_head {
	uint32_t seq;	  /* low 32 bits of this slot's seq */
	uint8_t kind;	  /* enum rt_record_kind, not RT_REC_CONT */
	uint8_t nslots;	  /* slots in the record: 1..RT_RECORD_MAX_SLOTS */
	uint16_t cpu;	  /* CPU at the time, RT_CPU_UNKNOWN if not known */
	uint32_t record;  /* low 32 bits of the record's seq in its ring */
	uint32_t site;	  /* site-table index (0 for RT_REC_LOST) */
	uint64_t counter; /* raw clock, enum rt_clock_source */
	uint32_t a0, a1;  /* arguments 1 and 2 (LOST: reason, 0) */
};

/* Every following slot of a record. */
struct rt_slot_cont {
	uint32_t seq;  /* low 32 bits of this slot's seq */
	uint8_t kind;  /* RT_REC_CONT */
	uint8_t index; /* 1 for the second slot of a record */
	uint16_t reserved;
	uint32_t a2, a3; /* arguments 3 and 4 */
	uint64_t a4, a5; /* arguments 5 and 6 (LOST: count, last counter) */
};

union rt_slot {
	struct rt_slot_head head;
	struct rt_slot_cont cont;
	uint8_t bytes[RT_SLOT_SIZE];
	uint64_t words[RT_SLOT_SIZE / 8]; /* how the writer stores a slot */
};

/*
 * The fences of the ring protocol.  ThreadSanitizer does not model fences
 * (gcc refuses them under -fsanitize=thread), so in such a build they shrink
 * to compiler barriers: right on x86-64, which orders stores with stores and
 * loads with loads by itself, and only ever used for tests.
 */
#if defined(__SANITIZE_THREAD__)
#define RT__UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define RT__UNDER_TSAN 1
#endif
#endif
#ifdef RT__UNDER_TSAN
#define RT_FENCE_RELEASE() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#define RT_FENCE_ACQUIRE() __atomic_signal_fence(__ATOMIC_SEQ_CST)
#else
#define RT_FENCE_RELEASE() __atomic_thread_fence(__ATOMIC_RELEASE)
#define RT_FENCE_ACQUIRE() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

/* ---- layout checks --------------------------------------------------- */

#if defined(__cplusplus)
#define RT__FORMAT_ASSERT(c, m) static_assert(c, m)
#else
#define RT__FORMAT_ASSERT(c, m) _Static_assert(c, m)
#endif
RT__FORMAT_ASSERT(sizeof(struct rt_ring_desc) == 192, "ring descriptor size");
RT__FORMAT_ASSERT(sizeof(struct rt_slot_head) == RT_SLOT_SIZE, "head slot size");
RT__FORMAT_ASSERT(sizeof(struct rt_slot_cont) == RT_SLOT_SIZE, "continuation slot size");
RT__FORMAT_ASSERT(sizeof(union rt_slot) == RT_SLOT_SIZE, "slot size");

#ifdef __cplusplus
} /* extern "C" */
#endif
#endif /* RINGTRACE_ABI_H */
