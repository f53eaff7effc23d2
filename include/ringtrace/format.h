/*
 * ringtrace/format.h - the one contract: every byte of an arena.
 *
 * The recording library writes these structures into a shared file mapping;
 * the ringtrace tool reads them back, possibly long after the writer died,
 * possibly from a damaged file.  Nothing else defines a byte of the arena.
 * docs/FORMAT.md explains the layout and the ring protocol in prose.  The
 * part a traced program writes itself, inline, is ringtrace/abi.h (included
 * here); this header is the library's and the tool's, never installed.
 *
 * Rules that keep this header a contract rather than a host struct dump:
 *  - fixed-width little-endian integers only (byte_order says what was used),
 *    no bitfields, no pointers, no padding the compiler chooses: every hole
 *    is a named reserved field and every size is checked below;
 *  - fields are only ever added at the end of a structure or in a reserved
 *    field, and every change bumps RT_FORMAT_VERSION;
 *  - a reader treats every field as untrusted until it checked it.
 */
#ifndef RINGTRACE_FORMAT_H
#define RINGTRACE_FORMAT_H

#include <stdint.h>

#include "ringtrace/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions -------------------------------------------------------- */

#define RT_ARENA_MAGIC "RTARENA" /* 8 bytes with the NUL */
#define RT_FORMAT_VERSION 2	 /* the version this header describes */
#define RT_BYTE_ORDER_MARK 0x01020304u

/* ---- geometry -------------------------------------------------------- */

#define RT_RECORD_MAX_SLOTS 2u /* RT_REC_TRACE and RT_REC_LOST */
#define RT_LOG_MAX_SLOTS 64u   /* RT_REC_LOG: 8 + 63 * 24 = 1520 payload bytes */
#define RT_ARENA_HEADER_SIZE 4096u
#define RT_RING_MIN_BYTES 4096u
#define RT_RING_MAX_BYTES (1ull << 36)
#define RT_NAME_MAX 16u /* thread names, as the kernel keeps them */
/*
 * No count of events or records reaches this: 2^48 events is years of
 * tracing flat out.  A loss counter, a LOST record's count or a LOSS
 * entry's count at or above it is damage, never believed.
 */
#define RT_COUNT_MAX (1ull << 48)
#define RT_PROGRAM_MAX 256u
#define RT_BUILD_ID_MAX 32u
#define RT_NO_RING 0xffffffffu
#define RT_CPU_UNKNOWN 0xffffu

/* ---- enumerations ---------------------------------------------------- */

/* rt_arena_header.state: RUNNING until the owner closes the arena cleanly. */
enum rt_arena_state {
	RT_ARENA_CREATING = 0, /* header not complete: never trust such a file */
	RT_ARENA_RUNNING = 1,
	RT_ARENA_CLOSED = 2,
};

/* rt_arena_header.end_reason: how the owning process ended, as far as it saw. */
enum rt_end_reason {
	RT_END_UNKNOWN = 0, /* still running, or killed without a chance to say */
	RT_END_EXIT = 1,    /* exit() or ringtrace_shutdown(): the arena was closed */
	RT_END_SIGNAL = 2,  /* a fatal signal reached the crash handler */
	/*
	 * the image was replaced by exec: the arena's last writer.  Written
	 * just before the exec (end_counter first), put back to UNKNOWN with
	 * end_counter 0 when the exec fails; state stays RUNNING.  A fatal
	 * signal's SIGNAL and exit's EXIT are written over it.
	 */
	RT_END_EXEC = 3,
};

/* rt_arena_header.flags */
#define RT_ARENA_F_USER_PATH 0x1u /* the user chose the path: never deleted */

/* rt_arena_header.clock_source: what the raw counter in every record is. */
enum rt_clock_source {
	RT_CLOCK_TSC = 1,	/* x86-64 invariant time-stamp counter */
	RT_CLOCK_CNTVCT = 2,	/* aarch64 virtual counter */
	RT_CLOCK_MONOTONIC = 3, /* CLOCK_MONOTONIC nanoseconds */
};

/* reason carried by an RT_REC_LOST record (in a0) */
enum rt_lost_reason {
	RT_LOST_DROPPED = 1, /* stream mode: the ring was full */
	RT_LOST_NESTED = 2,  /* a signal handler traced while its thread was mid-record */
};

/* The site kinds this header knows; a reader refuses any other. */
static inline int rt_site_kind_known(unsigned kind)
{
	return kind == RT_SITE_TRACE || kind == RT_SITE_ENTER || kind == RT_SITE_EXIT ||
	       kind == RT_SITE_LOG || kind == RT_SITE_IO || kind == RT_SITE_BEGIN ||
	       kind == RT_SITE_END;
}

/* Sites whose records may span more than RT_RECORD_MAX_SLOTS slots. */
static inline int rt_site_kind_long(unsigned kind)
{
	return kind == RT_SITE_LOG || kind == RT_SITE_IO;
}

/*
 * Flags of an exit event (a1) the library writes for a call that never
 * returned through its exit hook; such an exit has call site 0.  Enters
 * carry no flag.
 *   UNWOUND       longjmp or an exception left it: a later call or return
 *                 of its thread began at or above its place on the stack
 *   THREAD_ENDED  still open when its thread ended (pthread_exit, cancel)
 *   EXITED        still open when the program called exit()
 */
#define RT_FUNC_F_UNWOUND 0x1u
#define RT_FUNC_F_THREAD_ENDED 0x2u
#define RT_FUNC_F_EXITED 0x4u
#define RT_FUNC_F_CLOSED (RT_FUNC_F_UNWOUND | RT_FUNC_F_THREAD_ENDED | RT_FUNC_F_EXITED)

/*
 * RT_LOG messages.  The site (kind RT_SITE_LOG) holds the format string as
 * its tag, the level, and a type code per argument (up to RT_LOG_MAX_ARGS).
 * A call at or above the threshold (a lower or equal level number) writes
 * one RT_REC_LOG record of as many slots as its payload needs: the payload
 * is bytes 24..31 of the head slot (a0, a1), then bytes 8..31 of each
 * continuation slot (a2..a5), in order, so nslots = 1 + ceil((bytes - 8) /
 * 24) for a payload of more than 8 bytes.  The payload holds each argument
 * in order, in the writer's byte order:
 *   integer (RT_ARG_SIGNED/UNSIGNED)  8 bytes, sign- or zero-extended
 *   pointer                            8 bytes
 *   RT_ARG_FLOAT                       8 bytes, the double
 *   RT_ARG_LONG_DOUBLE                 16 bytes, the long double's storage
 *   RT_ARG_STRING                      8 bytes, the pointer's value; 4 bytes,
 *                                      the bytes copied; 4 bytes, RT_LOG_STR_*
 * then the bytes of every string argument, in order, without NULs.  The
 * strings of one call copy at most the string limit (RINGTRACE_LOG_STRINGS,
 * default RT_LOG_STRINGS_DEFAULT) in all; a string cut short says so.  The
 * rest of the last slot is zero.
 */
/* the levels, enum rt_log_level, are ringtrace/abi.h's: sites carry them compiled in */
#define RT_LOG_LEVEL_DEFAULT RT_LOG_INFO
#define RT_LOG_MAX_ARGS 16u
#define RT_LOG_STRINGS_DEFAULT 320u /* bytes of string data a call keeps */
#define RT_LOG_STRINGS_MAX 1024u
#define RT_LOG_STR_NULL 0x1u	  /* the pointer was NULL: no bytes */
#define RT_LOG_STR_TRUNCATED 0x2u /* cut short by the string limit */

/*
 * File I/O (`ringtrace record --io`).  An interposer in front of the C
 * library's I/O functions writes one RT_REC_IO record per call, after the
 * call returned: the head's counter is when it returned, site is the
 * library's RT_SITE_IO site, and the payload is laid out in slots exactly
 * as an RT_REC_LOG payload.  It starts with struct rt_io_payload; then come
 * the optional parts its flags name, in this order:
 *   RT_IO_F_OFFSET  int64   the file offset the call named (pread, lseek...)
 *   RT_IO_F_AUX     2 x u32 per operation: open flags and mode; dup2's
 *                           target; copy_file_range and sendfile's output
 *                           descriptor; fcntl's command; lseek's whence
 *   RT_IO_F_STREAM  u64     the FILE * of a stdio call
 *   RT_IO_F_PATH    2 x u32 the lengths of a path and a second path
 *                           (rename), then their bytes, without NULs
 * A path is absolute when the call made it so (relative to the working
 * directory at the call, or to the directory descriptor's path), else as
 * given; RT_IO_F_PATH_CUT says the interposer kept only the first bytes.
 * RT_IO_RUNDOWN and RT_IO_NAMED carry the name /proc gives a descriptor
 * ("/etc/hosts", "pipe:[1234]", "socket:[99]"): descriptors that were open
 * when tracing began, and descriptors first seen in a call (made by a call
 * the interposer does not see, such as pipe or socket).
 */
enum rt_io_op {
	RT_IO_RUNDOWN = 1, /* open when tracing began: its name holds from before
			      any record; offset its position, aux[0] its flags */
	RT_IO_NAMED = 2,   /* named when first seen, by the call recorded next on
			      the thread: the name holds from start */
	RT_IO_OPEN = 3,	   /* open, openat, creat (and 64); result: the descriptor */
	RT_IO_CLOSE = 4,
	RT_IO_READ = 5,
	RT_IO_WRITE = 6,
	RT_IO_PREAD = 7,
	RT_IO_PWRITE = 8,
	RT_IO_READV = 9,
	RT_IO_WRITEV = 10,
	RT_IO_PREADV = 11,
	RT_IO_PWRITEV = 12,
	RT_IO_LSEEK = 13, /* offset and whence as asked; result: the new position */
	RT_IO_FSYNC = 14,
	RT_IO_FDATASYNC = 15,
	RT_IO_FTRUNCATE = 16,	    /* size: the length asked */
	RT_IO_UNLINK = 17,	    /* unlink, unlinkat: fd -1 */
	RT_IO_RENAME = 18,	    /* rename, renameat, renameat2: two paths */
	RT_IO_DUP = 19,		    /* dup, dup2, dup3, fcntl F_DUPFD*: result the new descriptor */
	RT_IO_MMAP = 20,	    /* of a file: size its length, offset, result the address */
	RT_IO_COPY_FILE_RANGE = 21, /* fd in, aux[0] out; result bytes copied */
	RT_IO_SENDFILE = 22,	    /* fd in, aux[0] out */
	RT_IO_FOPEN = 23,	    /* fopen, fdopen, freopen: stream; result the descriptor */
	RT_IO_FCLOSE = 24,
	RT_IO_FREAD = 25,  /* fread, fgets, getline, getdelim, fgetc...: result bytes */
	RT_IO_FWRITE = 26, /* fwrite, fputs, puts, fprintf, printf...: result bytes */
	RT_IO_FFLUSH = 27,
	RT_IO_FSEEK = 28, /* fseek, fseeko, rewind: offset and whence */
};
#define RT_IO_OP_MAX RT_IO_FSEEK

/* rt_io_payload.flags */
#define RT_IO_F_OFFSET 0x1u
#define RT_IO_F_AUX 0x2u
#define RT_IO_F_STREAM 0x4u
#define RT_IO_F_PATH 0x8u
#define RT_IO_F_PATH_CUT 0x10u /* a path was longer than the record holds: cut */

struct rt_io_payload {
	uint16_t op;	/* enum rt_io_op */
	uint16_t flags; /* RT_IO_F_* */
	int32_t fd;	/* the descriptor the call used (stdio: the stream's), -1 none */
	uint64_t start; /* raw clock when the call began */
	int64_t size;	/* bytes asked, 0 when the call asks none */
	int64_t result; /* what the call returned, -errno when it failed */
};
/* The most path bytes one RT_REC_IO record holds (both paths together). */
#define RT_IO_PATH_BYTES_MAX (8u + (RT_LOG_MAX_SLOTS - 1u) * 24u - 32u - 8u - 8u - 8u - 8u)

/*
 * The descriptor table: one entry per descriptor below fd_capacity, the
 * name it has now, so that a reader who starts late (`ringtrace tail`, a
 * trace file after rotation) can name descriptors opened before it.
 * Written by whichever thread opens, names or closes the descriptor, under
 * a sequence count: odd while a writer is inside (a reader skips the entry
 * then), 0 for an entry never written.  A writer that finds the count odd
 * leaves the entry alone (and the reader then has only the records).
 */
#define RT_FD_CAPACITY 1024u	  /* default entries; RINGTRACE_FDS=N changes it */
#define RT_FD_CAPACITY_MAX 65536u /* RINGTRACE_FDS is bounded by this */
#define RT_FD_NAME_MAX 480u	  /* bytes of a name the table keeps, NUL included */

/* rt_fd_entry.state */
enum rt_fd_state {
	RT_FD_UNUSED = 0,
	RT_FD_OPEN = 1,	  /* since counter */
	RT_FD_CLOSED = 2, /* closed at closed_counter; name is what it was */
};

/* rt_fd_entry.flags */
#define RT_FD_F_NAME_CUT 0x1u /* the name was longer than RT_FD_NAME_MAX - 1 */

struct rt_fd_entry {
	uint32_t sequence; /* even when whole, odd while written, 0 never written */
	uint32_t state;	   /* enum rt_fd_state */
	uint64_t counter;  /* raw clock from which the name holds (0: since before tracing) */
	uint64_t closed_counter;
	uint32_t open_flags; /* O_* as opened, or as /proc/self/fdinfo says */
	uint16_t name_length;
	uint8_t op;    /* enum rt_io_op that named it */
	uint8_t flags; /* RT_FD_F_* */
	char name[RT_FD_NAME_MAX];
};

/* rt_thread_entry.state */
enum rt_thread_state {
	RT_THREAD_FREE = 0,
	RT_THREAD_LIVE = 1,
	RT_THREAD_EXITED = 2,
};

/*
 * rt_thread_entry.flags.  VFORK_CHILD: the entry is a vfork() child's, a
 * process of its own (tid is its pid) that ran on its parent's memory and
 * on the calling thread's state until it exec'd or exited; its parent's
 * thread ended the entry when it ran again.
 */
#define RT_THREAD_F_VFORK_CHILD 0x1u
#define RT_THREAD_F_KNOWN RT_THREAD_F_VFORK_CHILD

/* rt_ring_desc.state */
enum rt_ring_state {
	RT_RING_UNUSED = 0,   /* never handed out; its pages may not exist yet */
	RT_RING_OWNED = 1,    /* a live thread writes into it */
	RT_RING_RELEASED = 2, /* its thread exited; readable until reused */
};

/* ---- the clock ------------------------------------------------------- */

/* One simultaneous reading of the raw counter and the kernel's clocks. */
struct rt_clock_pair {
	uint64_t counter;
	uint64_t mono_ns; /* CLOCK_MONOTONIC */
	uint64_t wall_ns; /* CLOCK_REALTIME, nanoseconds since the epoch */
};

/*
 * A later reading, refreshed by the library now and then.  Written under a
 * sequence count: odd while a writer is inside, so a reader that sees an odd
 * or changed count ignores the pair (a writer may have died inside).
 */
struct rt_clock_sync {
	uint64_t sequence;
	struct rt_clock_pair pair;
};

/* ---- the arena header (offset 0) ------------------------------------- */

struct rt_arena_header {
	/* identification: never moves between versions */
	char magic[8];		 /* RT_ARENA_MAGIC */
	uint32_t header_size;	 /* RT_ARENA_HEADER_SIZE */
	uint16_t version;	 /* RT_FORMAT_VERSION of the writer */
	uint16_t compat_version; /* oldest reader version able to read this */
	uint32_t byte_order;	 /* RT_BYTE_ORDER_MARK in the writer's order */
	uint32_t state;		 /* enum rt_arena_state */

	/* geometry, fixed at creation */
	uint64_t arena_size;	       /* bytes of the file */
	uint64_t ring_bytes_requested; /* per-ring size as configured */
	uint64_t ring_bytes;	       /* per-ring size used: power of two */
	uint32_t slot_size;	       /* RT_SLOT_SIZE */
	uint32_t mode;		       /* enum rt_mode */
	uint32_t flags;		       /* RT_ARENA_F_* */
	uint32_t ring_count;
	uint32_t thread_capacity;
	uint32_t site_capacity;
	uint64_t string_capacity; /* bytes */
	uint64_t thread_table_offset;
	uint64_t site_table_offset;
	uint64_t string_area_offset;
	uint64_t ring_desc_offset;
	uint64_t ring_area_offset;

	/* the process that owns the arena */
	int32_t pid;
	uint32_t build_id_size;
	uint64_t process_start;	      /* /proc/PID/stat starttime, to tell pid reuse */
	char program[RT_PROGRAM_MAX]; /* NUL-terminated */
	uint8_t build_id[RT_BUILD_ID_MAX];

	/* clock calibration */
	uint32_t clock_source; /* enum rt_clock_source */
	uint32_t reserved0;
	uint64_t counter_hz;	    /* estimate made when the arena was created */
	struct rt_clock_pair start; /* the trace's time zero */
	struct rt_clock_sync sync;  /* latest reading; frequency from start..sync */

	/* live counters, updated atomically while the program runs */
	uint32_t threads_used; /* thread-table entries ever handed out (a reused one once) */
	uint32_t sites_used;   /* site-table entries handed out */
	uint32_t rings_used;   /* rings ever handed out (<= ring_count) */
	uint32_t reserved1;
	uint64_t strings_used;	    /* bytes of the string area handed out */
	uint64_t ring_reuses;	    /* rings taken over from exited threads */
	uint64_t threads_untracked; /* threads that found no free thread-table entry */
	uint64_t lost_untracked;    /* their events, all lost */
	uint64_t sites_refused;	    /* registrations refused: table or strings full */
	uint64_t lost_no_site;	    /* events of refused sites (no room, or an ABI not served) */

	/*
	 * how the process ended: written once, by arena_close, the crash
	 * handler or an exec (which takes it back if the exec fails)
	 */
	uint32_t end_reason; /* enum rt_end_reason */
	int32_t end_signal;  /* RT_END_SIGNAL: the signal number */
	int32_t end_tid;     /* RT_END_SIGNAL: the thread it was delivered to */
	uint32_t reserved2;
	uint64_t end_address; /* RT_END_SIGNAL: si_addr of a fault, else 0 */
	uint64_t end_counter; /* raw clock when it ended; 0 while end_reason is UNKNOWN */

	/* writing back to disk (RINGTRACE_SYNC) */
	uint32_t sync_ms; /* period of the write-back thread, 0 if none runs */
	uint32_t reserved3;
	uint64_t synced_counter; /* raw clock read before the newest write-back that
				    completed: records committed before it are on disk */

	/*
	 * the collector (`ringtrace record`) draining this arena: written by it
	 * and by `ringtrace snapshot`, never by the program
	 */
	int32_t collector_pid;	    /* 0 when no collector drains the arena */
	uint32_t snapshot_requests; /* bumped by `ringtrace snapshot`: write the rings out */
	uint32_t snapshots_taken;   /* set by the collector to the requests it served */
	/*
	 * stream mode: a writer whose ring is full waits up to this many
	 * microseconds for the collector to make room, instead of dropping the
	 * record at once (0: it drops at once, as without a collector).  Set
	 * by the collector while it drains the arena, 0 again when it leaves.
	 */
	uint32_t full_wait_us;

	/*
	 * the module map (struct rt_module_entry); all zero in arenas written
	 * before it existed: no module table
	 */
	uint32_t module_capacity;
	uint32_t modules_used;	      /* module-table entries handed out */
	uint64_t module_table_offset; /* 0 when module_capacity is 0 */
	uint64_t modules_refused; /* objects seen loaded that found no entry or no string room */
	uint32_t module_unloads;  /* unload_counter fields written so far */
	/*
	 * RT_LOG calls at this level or more severe are recorded (enum
	 * rt_log_level); the library reads it at every call, RINGTRACE_LEVEL,
	 * ringtrace_set_level() and `ringtrace level` write it.  0 in arenas
	 * written before it existed.
	 */
	uint32_t log_threshold;

	/*
	 * the descriptor table (struct rt_fd_entry) of a program traced with
	 * `ringtrace record --io`; all zero without one
	 */
	uint32_t fd_capacity; /* entries: descriptors 0 .. fd_capacity - 1 */
	uint32_t reserved5;
	uint64_t fd_table_offset; /* 0 when fd_capacity is 0 */
	uint64_t fds_beyond;	  /* descriptors named at or above fd_capacity: not in the table */

	/*
	 * earlier images of this process (before an exec) whose arenas were
	 * replaced before `ringtrace record` read them, and their events, all
	 * lost (each replaced arena's own count of replaced images included).
	 * Written once, before the arena is published; 0 in arenas written
	 * before these fields existed.
	 */
	uint64_t images_replaced;
	uint64_t lost_replaced;

	/*
	 * thread-table entries taken over from threads that ended (see struct
	 * rt_thread_entry), and the events their earlier occupants had lost for
	 * want of a ring (their lost_no_ring, counted here once the entry is
	 * taken over).  Arena only: a SOURCE block stops before these fields,
	 * since a collector writes each occupant's entry before it may be taken
	 * over.  0 in arenas written before they existed.
	 */
	uint64_t threads_reused;
	uint64_t lost_reused;

	uint8_t reserved_tail[3384];
};

/* ---- the thread table ------------------------------------------------ */

/*
 * A copy of one event kept outside the rings: the thread's last event when
 * its ring could not keep it (dropped, no ring, or the ring may go to
 * another thread).  valid is 0 while the copy is empty or being written,
 * else a generation number: of a thread's two copies, the valid one with
 * the newer generation is its last event.  The writer always rewrites the
 * older copy, so a writer that dies mid-copy leaves the other one whole.
 */
struct rt_last_event {
	uint32_t valid; /* 0, or the generation of this copy */
	uint32_t site;
	uint64_t counter;
	uint16_t cpu;
	uint8_t kind;
	uint8_t flags;	       /* RT_LAST_F_*; 0 from writers before them */
	uint32_t ring_records; /* RT_LAST_F_RING_RECORDS: see below */
	uint32_t a32[4];
	uint64_t a64[2];
};

/*
 * ring_records holds the low 32 bits of the number of records the
 * thread's ring had when the event was kept: the event came after ring
 * record ring_records - 1 and before record ring_records (a copy of a ring
 * record r says r: it is that record).  A counter can stamp a record and
 * an event dropped next to it alike (AArch64's ticks at tens of MHz); then
 * this says which is newer.  Not set for an event of a thread with no ring.
 */
#define RT_LAST_F_RING_RECORDS 0x1u

/*
 * One entry per thread alive at once.  Written by that thread (a vfork
 * child's entry is ended by its parent's thread).  A thread's records are
 * the records of ring `ring` whose record sequence lies in
 * [first_record, end_record).
 *
 * An entry whose thread ended and let its ring go is taken over by a
 * thread that starts when no entry was never used: serial counts the
 * entry's occupants (0 for the first), so (index, serial) names one
 * thread.  The new occupant claims the entry by turning its state from
 * EXITED to FREE (a compare-and-swap), rewrites every field but
 * `collected`, serial + 1 included, and publishes it LIVE.  A reader skips
 * a FREE entry, and believes a copy only if state and serial read the same
 * before and after it.  The old occupant's records still in a ring then
 * belong to no entry: a reader counts them as lost (their thread's entry
 * went to a later thread), never as the new occupant's.
 *
 * While a collector is draining the arena (collector_pid, or one announced
 * to the library that has not attached yet), an entry is taken over only
 * once the collector has written the ended occupant's copy into its trace
 * file and drained its records: the collector then sets collected to
 * serial + 1.  Only the collector writes collected.
 */
struct rt_thread_entry {
	uint32_t state; /* enum rt_thread_state; set last when claimed */
	int32_t tid;
	uint32_t ring;		      /* ring index or RT_NO_RING */
	uint32_t flags;		      /* RT_THREAD_F_*; 0 in arenas written before it existed */
	uint64_t first_record;	      /* ring's record count when the thread took it */
	uint64_t end_record;	      /* UINT64_MAX until the ring passes on */
	uint64_t start_counter;	      /* raw clock when the thread attached */
	uint64_t exit_counter;	      /* raw clock at thread exit, 0 if not seen */
	uint64_t lost_no_ring;	      /* events lost because no ring was free */
	char name[RT_NAME_MAX];	      /* NUL-terminated */
	struct rt_last_event last[2]; /* see struct rt_last_event */
	uint32_t serial;    /* occupants of this entry before this one; 0 in older arenas */
	uint32_t collected; /* written by a collector: serial + 1 once it holds this occupant */
};

/* ---- the site table and string area ---------------------------------- */

/*
 * One entry per trace site, copied from the program at its first event so
 * that the arena decodes without the program.  Strings live in the string
 * area at the given offsets, NUL-terminated, with their length (excluding
 * the NUL) given so a reader never needs to search for the end.  valid is
 * written last.
 */
struct rt_site_entry {
	uint32_t valid;
	uint32_t line;
	uint32_t tag_offset, tag_length;
	uint32_t file_offset, file_length;
	uint32_t func_offset, func_length;
	uint8_t kind;  /* enum rt_site_kind */
	uint8_t nargs; /* 0..RT_MAX_ARGS */
	uint8_t arg_types[RT_MAX_ARGS];
	uint64_t registered_counter; /* raw clock at registration */
	/*
	 * RT_SITE_LOG sites: the argument type codes, one byte each (nargs of
	 * them, NUL-terminated like every string) in the string area; level,
	 * enum rt_log_level.  Zero for other sites, whose types are arg_types.
	 */
	uint32_t types_offset, types_length;
	uint8_t level;
	uint8_t reserved[7];
};

/* ---- rings ----------------------------------------------------------- */

/*
 * A thread's last event from its two copies (see struct rt_last_event):
 * 1 and *out filled, or 0 when neither copy is whole.  Safe against a
 * writer that is still running or died mid-copy.
 */
static inline int rt_last_event_read(const struct rt_thread_entry *e, struct rt_last_event *out)
{
	int found = 0;
	uint32_t best = 0;
	for (int i = 0; i < 2; i++) {
		const struct rt_last_event *c = &e->last[i];
		uint32_t g = __atomic_load_n(&c->valid, __ATOMIC_ACQUIRE);
		if (g == 0 || (found && (int32_t)(g - best) <= 0))
			continue;
		struct rt_last_event copy;
		__builtin_memcpy(&copy, c, sizeof(copy));
		/* the copy is taken before valid is looked at again */
		RT_FENCE_ACQUIRE();
		if (__atomic_load_n(&c->valid, __ATOMIC_RELAXED) != g)
			continue;
		*out = copy;
		best = g;
		found = 1;
	}
	return found;
}

/* ---- trace files ----------------------------------------------------- */

/*
 * A trace file is what a collector (`ringtrace record`) writes while it
 * drains arenas: a plain sequence of self-checking blocks, nothing else.
 * Every block starts with RT_BLOCK_MAGIC, says its own size, and carries a
 * CRC32C of everything after the crc field, so a reader that lands anywhere
 * (after damage, in the middle of a file) finds the next block by scanning
 * for the magic and believes it only if the checksum holds.  No block is
 * larger than RT_BLOCK_MAX_BYTES: damage costs at most the blocks it touches.
 *
 * Slots are copied verbatim from the rings (union rt_slot), so one decoder
 * serves arenas and files.  Metadata (the process, its threads, its sites,
 * where each ring stood) is written at the head of every file and again
 * whenever it changes, so every file decodes alone.  One file can hold
 * several traced processes (a program and the children it forked): each
 * is a "source", numbered by the collector, and every block names its own.
 *
 * All blocks of one recording share file_id; file_seq counts the files of a
 * recording (rotation) and block_seq the blocks of a file, so a reader can
 * tell a missing, repeated or foreign block from a good one.
 */
#define RT_BLOCK_MAGIC "RTBLOCK" /* 8 bytes with the NUL */
#define RT_FILE_VERSION 2	 /* what this writer writes: PACKED blocks came in 2 */
#define RT_FILE_VERSION_OLDEST 1 /* the oldest a reader of this version reads */
#define RT_BLOCK_HEADER_SIZE 80u
#define RT_BLOCK_MAX_BYTES 4096u
#define RT_BLOCK_ALIGN 8u      /* every block's size is a multiple of this */
#define RT_BLOCK_CRC_START 12u /* the crc covers bytes [12, size) of a block */
/* slots in one SLOTS block: 125, so a full block is 4080 bytes */
#define RT_BLOCK_MAX_SLOTS ((RT_BLOCK_MAX_BYTES - RT_BLOCK_HEADER_SIZE) / RT_SLOT_SIZE)

/* rt_block_header.type */
enum rt_block_type {
	RT_BLOCK_FILE = 1,    /* first block of every file: struct rt_block_file */
	RT_BLOCK_SOURCE = 2,  /* one traced process: struct rt_block_source */
	RT_BLOCK_THREADS = 3, /* count x struct rt_block_thread */
	RT_BLOCK_SITES = 4,   /* count x struct rt_block_site, each with its strings */
	RT_BLOCK_RINGS = 5,   /* count x struct rt_block_ring */
	RT_BLOCK_SLOTS = 6,   /* count records of one ring, as union rt_slot[] */
	RT_BLOCK_LOSS = 7,    /* count x struct rt_block_loss */
	RT_BLOCK_END = 8,     /* last block of a file that was closed: struct rt_block_end */
	RT_BLOCK_MODULES = 9, /* count x struct rt_block_module, each with its path */
	RT_BLOCK_FDS = 10,    /* count x struct rt_block_fd, each with its name */
	RT_BLOCK_PACKED = 11, /* a SLOTS block, encoded (below); version 2 on */
};

struct rt_block_header {
	char magic[8];		/* RT_BLOCK_MAGIC */
	uint32_t crc;		/* CRC32C (Castagnoli) of bytes [RT_BLOCK_CRC_START, size) */
	uint16_t size;		/* bytes of the block, header included: a multiple of 8 */
	uint8_t type;		/* enum rt_block_type */
	uint8_t version;	/* RT_FILE_VERSION */
	uint64_t file_id;	/* random, the same in every file of one recording */
	uint32_t file_seq;	/* 0 for a recording's first file, +1 per rotation */
	uint32_t block_seq;	/* blocks before this one in its file */
	uint32_t source;	/* the traced process (struct rt_block_source) it belongs to */
	uint32_t ring;		/* SLOTS: ring index in that process's arena; else 0 */
	uint32_t count;		/* entries in the payload; SLOTS: whole records */
	uint32_t flags;		/* RT_BLOCK_F_* (RINGS only), else 0 */
	uint64_t first;		/* SLOTS: ring seq of the first slot; else 0 */
	uint64_t first_record;	/* SLOTS: record seq of the first record; else 0 */
	uint64_t counter_first; /* SLOTS: raw clock of the first record; else when written */
	uint64_t counter_last;	/* SLOTS: raw clock of the last record; else when written */
};

/*
 * rt_block_header.flags.  RT_BLOCK_F_FINAL on a RINGS block: where each
 * ring stood when the file ended (written right before END, at close and at
 * rotation, and when a traced process ends): `record` is the record seq after
 * the last record the file holds for the ring, `slot` the slot seq after it.
 * Records below that no SLOTS block nor LOSS entry holds were lost, even
 * when no later record of the ring shows it.  It never says where a file's
 * records begin (that is the RINGS block of the head, without the flag).
 */
#define RT_BLOCK_F_FINAL 1u

/* rt_block_end.reason: why the file ended. */
enum rt_file_end {
	RT_FILE_END_FINISHED = 1, /* the recording ended: every source was drained */
	RT_FILE_END_ROTATED = 2,  /* the file reached its size limit; the next one goes on */
	RT_FILE_END_STOPPED = 3,  /* writing failed (disk full...): nothing after this */
};

/* RT_BLOCK_FILE: the first block of every file. */
struct rt_block_file {
	uint64_t created_wall_ns;   /* CLOCK_REALTIME when the file was opened */
	uint64_t recording_wall_ns; /* CLOCK_REALTIME when the recording began */
	uint64_t max_size;	    /* rotation: bytes per file, 0 for no limit */
	uint32_t max_files;	    /* rotation: files kept, 0 for no limit */
	int32_t collector_pid;
	char host[64]; /* NUL-terminated */
};

/*
 * RT_BLOCK_SOURCE: a traced process, as its arena header said when the
 * collector read it (geometry, process, clock, live counters, how it ended).
 * Written when the collector first sees the arena, at the head of every
 * file, and again when the header changes (clock sync, loss counters, end),
 * always when the process ended; the newest one in the file counts.  Its
 * loss counters (lost_untracked, lost_no_site, lost_replaced) are events
 * no ring holds: a reader counts them as lost.
 */
#define RT_SOURCE_HEADER_BYTES 696u /* the arena header up to threads_reused */
/* A SOURCE block written before the module map: its header stops at reserved4. */
#define RT_SOURCE_HEADER_BYTES_V1 624u
/* A SOURCE block written before images_replaced: its header stops at fds_beyond. */
#define RT_SOURCE_HEADER_BYTES_V2 680u
struct rt_block_source {
	int32_t parent_pid; /* the traced process it forked from, 0 if none */
	uint32_t reserved;
	uint8_t header[RT_SOURCE_HEADER_BYTES]; /* struct rt_arena_header, leading bytes */
};

/*
 * RT_BLOCK_THREADS: thread-table entries, the newest copy of an index
 * counts.  An entry is written again when it changes (its lost_no_ring at
 * most about once a second) and always when its process ended, so the last
 * copy has the thread's latest name and the events it lost for want of a
 * ring, which a reader counts as lost.
 *
 * index names one thread of the source, not one arena entry: the first
 * occupant of arena entry i is index i; each later occupant of any entry
 * (serial > 0) gets the next free index from thread_capacity up, given by
 * the collector in the order it sees them, so an index is never reused in
 * a recording and a reader keeps every thread apart.
 */
struct rt_block_thread {
	uint32_t index; /* the thread's number in its source (see above) */
	uint32_t reserved;
	struct rt_thread_entry entry;
};

/*
 * RT_BLOCK_SITES: a site entry followed by its strings.  The entry's string
 * offsets count from the first byte after it; size is the whole record,
 * padded to a multiple of 8.
 */
struct rt_block_site {
	uint32_t index; /* in the arena's site table */
	uint32_t size;
	struct rt_site_entry entry;
	/* char strings[]; */
};

/*
 * RT_BLOCK_RINGS: where each ring stood when the file began, so a file
 * that does not start a recording knows which records came before it; with
 * RT_BLOCK_F_FINAL, where it stood when the file ended.
 */
struct rt_block_ring {
	uint32_t index;
	uint32_t state; /* enum rt_ring_state */
	uint32_t owner; /* thread-table index of the current or last owner */
	uint32_t reserved;
	uint64_t slot;	  /* seq of the first slot this file may hold */
	uint64_t record;  /* seq of the first record this file may hold */
	uint64_t dropped; /* the ring's dropped counter then */
	uint64_t noted;
};

/*
 * RT_BLOCK_LOSS: records the collector knows are lost and that no LOST
 * record in the ring reports: overwritten (flight mode), torn (the writer
 * died mid-record), dropped but never noted (the process ended first).
 */
/* rt_block_loss.reason */
enum rt_block_loss_reason {
	RT_LOSS_REASON_OVERWRITTEN = 1, /* flight mode: the ring wrapped over them */
	RT_LOSS_REASON_DROPPED = 2,	/* never recorded (a full ring) */
	RT_LOSS_REASON_TORN = 3,	/* the writer died writing them */
	RT_LOSS_REASON_DAMAGED = 4,	/* lost to damage of what a cut or recover read */
};

struct rt_block_loss {
	uint32_t ring;	 /* RT_NO_RING when not one ring's */
	uint32_t thread; /* its THREADS index, or RT_NO_RING when unknown */
	uint32_t reason; /* enum rt_block_loss_reason */
	uint32_t reserved;
	uint64_t first_record; /* seq of the first record concerned (0 if unknown) */
	uint64_t count;
	uint64_t counter_from; /* raw clock span, 0 when unknown */
	uint64_t counter_to;
};

/*
 * RT_BLOCK_PACKED: a SLOTS block in fewer bytes.  Its header is the SLOTS
 * block's (ring, count, first, first_record, counter_first, counter_last
 * alike) but for type and size; its payload expands to exactly the slots
 * the SLOTS block would hold, byte for byte, so every reader expands it and
 * reads on as from a SLOTS block: checksum, resync and damage stay per
 * block.  The payload: struct rt_packed_prelude, then one entry per record
 * (or run of raw slots) until `slots` slots are made, then zeros to the
 * next multiple of 8 (fewer than 8 bytes).
 *
 * An entry starts with a tag byte: bits 0-1 its form (enum rt_packed_form),
 * and for the compact forms bits 2-4 the record's kind, bit 5 "cpu as the
 * previous compact record's", bit 6 "site as the previous compact
 * record's", bit 7 zero.  A raw entry's tag has bits 2-7 zero, then one
 * byte n (1..RT_BLOCK_MAX_SLOTS) and n slots verbatim.  A compact entry
 * follows with, as LEB128 varints: the counter's difference from the
 * previous compact record's (zigzag; the first from counter_first); the
 * cpu and the site unless the tag says "as before"; a byte whose bit i says
 * argument a<i> differs from the previous compact record's (bits 0-1 only
 * in the one-slot form), and for each such argument its difference (zigzag,
 * 32-bit for a0-a3, 64-bit for a4-a5).  Before the first compact record
 * the arguments and the site are 0, the cpu RT_CPU_UNKNOWN.  Nothing else
 * is stored: a compact record's slot seqs follow from `first`, its record
 * number is one past the previous entry's (the first: first_record; after
 * a raw entry, its first slot read as a head), a continuation slot is
 * RT_REC_CONT, index 1, reserved 0.  A record that is not so regular is a
 * raw entry.  Any other byte, an entry running past the payload or past
 * `slots`, or padding that is not zero: the block does not check.
 */
struct rt_packed_prelude {
	uint32_t slots; /* the slots it expands to: 1..RT_BLOCK_MAX_SLOTS */
	uint32_t reserved;
};

/* Bits 0-1 of an entry's tag in a PACKED block. */
enum rt_packed_form {
	RT_PACKED_RAW = 1,	/* n slots verbatim */
	RT_PACKED_ONE_SLOT = 2, /* a compact one-slot record */
	RT_PACKED_TWO_SLOTS = 3 /* a compact two-slot record */
};
#define RT_PACKED_TAG_SAME_CPU 0x20u
#define RT_PACKED_TAG_SAME_SITE 0x40u

/* RT_BLOCK_END: the last block of a file that was closed properly. */
struct rt_block_end {
	uint32_t reason; /* enum rt_file_end */
	uint32_t reserved;
	uint64_t blocks;  /* blocks in the file before this one */
	uint64_t records; /* records (SLOTS) in the file */
	uint64_t bytes;	  /* bytes in the file before this block */
};

/* ---- layout checks --------------------------------------------------- */

RT__FORMAT_ASSERT(sizeof(struct rt_arena_header) == RT_ARENA_HEADER_SIZE, "arena header size");
RT__FORMAT_ASSERT(sizeof(struct rt_last_event) == 56, "last event size");
RT__FORMAT_ASSERT(sizeof(struct rt_thread_entry) == 192, "thread entry size");
RT__FORMAT_ASSERT(sizeof(struct rt_site_entry) == 64, "site entry size");
RT__FORMAT_ASSERT(sizeof(struct rt_block_header) == RT_BLOCK_HEADER_SIZE, "block header size");
RT__FORMAT_ASSERT(RT_BLOCK_HEADER_SIZE + RT_BLOCK_MAX_SLOTS * RT_SLOT_SIZE <= RT_BLOCK_MAX_BYTES,
		  "slots block size");
RT__FORMAT_ASSERT(sizeof(struct rt_block_file) == 96, "file block size");
RT__FORMAT_ASSERT(__builtin_offsetof(struct rt_arena_header, threads_reused) ==
		      RT_SOURCE_HEADER_BYTES,
		  "source header bytes");
RT__FORMAT_ASSERT(sizeof(struct rt_block_source) == RT_SOURCE_HEADER_BYTES + 8, "source size");
RT__FORMAT_ASSERT(sizeof(struct rt_block_thread) == 200, "thread record size");
RT__FORMAT_ASSERT(sizeof(struct rt_block_site) == 72, "site record size");
RT__FORMAT_ASSERT(sizeof(struct rt_block_ring) == 48, "ring record size");
RT__FORMAT_ASSERT(sizeof(struct rt_block_loss) == 48, "loss record size");
RT__FORMAT_ASSERT(sizeof(struct rt_block_end) == 32, "end block size");
RT__FORMAT_ASSERT(sizeof(struct rt_packed_prelude) == 8, "packed prelude size");

/* ---- the module map -------------------------------------------------- */

#define RT_MODULE_CAPACITY 256u	      /* default entries; RINGTRACE_MODULES=N changes it */
#define RT_MODULE_CAPACITY_MAX 65536u /* RINGTRACE_MODULES is bounded by this */
#define RT_MODULE_PATH_MAX 1024u      /* a path longer than this is cut (RT_MODULE_F_PATH_CUT) */

/* rt_module_entry.flags */
#define RT_MODULE_F_AT_START 0x1u /* loaded when tracing started: load_counter is start */
#define RT_MODULE_F_MAIN 0x2u	  /* the program itself */
#define RT_MODULE_F_PATH_CUT 0x4u /* the path was longer than RT_MODULE_PATH_MAX: cut */

/*
 * One loaded object (the program, a shared library, a dlopen'ed plugin),
 * appended when the library first sees it loaded and never overwritten:
 * an object loaded again after an unload gets a new entry.  Every field is
 * written before valid (release); unload_counter alone is written later,
 * once, when the object is seen gone, and module_unloads is bumped after
 * it.  The path, absolute (docs/FORMAT.md says how), lives in the string
 * area like a site's strings, with its NUL.  An address a belongs to the entry if low <= a < high
 * and the entry was loaded at the time (load_counter <= t, and t < unload_counter when that is not
 * 0).
 */
struct rt_module_entry {
	uint32_t valid; /* 0, or 1 once complete */
	uint32_t flags; /* RT_MODULE_F_* */
	uint64_t base;	/* load bias: run-time address minus link-time address */
	uint64_t low;	/* [low, high): the run-time range of its PT_LOAD segments */
	uint64_t high;
	uint64_t load_counter;	 /* raw clock when first seen loaded */
	uint64_t unload_counter; /* raw clock when seen gone; 0 while loaded */
	uint32_t path_offset, path_length;
	uint32_t build_id_size; /* 0..RT_BUILD_ID_MAX; 0 when it has none */
	uint32_t reserved0;
	uint8_t build_id[RT_BUILD_ID_MAX]; /* NT_GNU_BUILD_ID */
	uint8_t reserved[32];
};

/*
 * RT_BLOCK_MODULES: a module entry followed by its path, like a site
 * record: path_offset counts from the first byte after the entry (it is
 * 0), the path ends with a NUL, and size is the whole record padded to a
 * multiple of 8.  The newest copy of an index counts (its unload_counter
 * may have been set since an older one).
 */
struct rt_block_module {
	uint32_t index; /* in the arena's module table */
	uint32_t size;
	struct rt_module_entry entry;
	/* char path[]; */
};

/*
 * RT_BLOCK_FDS: the descriptor table's open entries when a file began (a
 * rundown for a file that does not start the recording), each followed by
 * its name with a NUL, size padded to a multiple of 8.  The entry's
 * name field is not written: only the name after it counts.
 */
struct rt_block_fd {
	uint32_t fd;
	uint32_t size; /* of this record, name included */
	uint64_t counter;
	uint32_t open_flags;
	uint16_t name_length;
	uint8_t op;
	uint8_t flags;
	/* char name[]; */
};

RT__FORMAT_ASSERT(sizeof(struct rt_module_entry) == 128, "module entry size");
RT__FORMAT_ASSERT(sizeof(struct rt_io_payload) == 32, "io payload size");
RT__FORMAT_ASSERT(sizeof(struct rt_fd_entry) == 512, "fd entry size");
RT__FORMAT_ASSERT(sizeof(struct rt_block_fd) == 24, "fd record size");
RT__FORMAT_ASSERT(sizeof(struct rt_block_module) == 136, "module record size");

#ifdef __cplusplus
}
#endif
#endif /* RINGTRACE_FORMAT_H */
