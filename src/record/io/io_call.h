/*
 * io_call.h - what the I/O interposer (libringtrace_io.so) hands the
 * recording library for one call of the program, and the library's entry
 * points it uses.  The interposer times the call and knows its arguments;
 * the library turns them into an RT_REC_IO record (ringtrace/format.h),
 * keeps the descriptor table and names descriptors it has not seen.
 */
#ifndef RT_RECORD_IO_CALL_H
#define RT_RECORD_IO_CALL_H

#include <stdint.h>

#include "ringtrace.h"
#include "ringtrace/format.h"

struct rt_io_call {
	uint16_t op;	/* enum rt_io_op */
	uint16_t flags; /* RT_IO_F_OFFSET, RT_IO_F_AUX, RT_IO_F_STREAM: which fields below hold */
	int32_t fd;
	uint64_t start; /* raw clock (ringtrace__counter) before the call */
	uint64_t end;	/* and after it returned: the record's time (0: when recorded) */
	int64_t size;
	int64_t result; /* -errno when the call failed */
	int64_t offset;
	uint32_t aux[2];
	uint64_t stream;
	/* a path the call named (NULL: none), made absolute by the interposer */
	const char *path;
	uint32_t path_length;
	const char *path2; /* rename's new path */
	uint32_t path2_length;
};

/*
 * The I/O interposer's one site (RT_SITE_IO), and the descriptors the
 * table names as open, one bit each (RT_FD_KNOWN_WORDS words): what the
 * inline path of io_fast.h reads.  Exported by libringtrace.so for the
 * interposer alone.
 */
#define RT_FD_KNOWN_WORDS (RT_FD_CAPACITY_MAX / 64)
extern struct ringtrace__site_body ringtrace__io_site;
extern uint64_t *ringtrace__fd_known;

/*
 * Keep the known bits in bits (RT_FD_KNOWN_WORDS words, zeroed) from now
 * on, the ones set so far copied there: the interposer keeps them in the
 * page its wrappers read anyway (io_fast.h says why).  Called once, by the
 * interposer's constructor before it records anything.
 */
void ringtrace__io_known_bits_at(uint64_t *bits);

/* Whether the known bits (ringtrace__fd_known, wherever the caller keeps them) name fd. */
static inline __attribute__((always_inline)) int rt_io_fd_known(const uint64_t *known, int32_t fd)
{
	uint32_t i = (uint32_t)fd;
	return i < RT_FD_CAPACITY_MAX &&
	       ((__atomic_load_n(&known[i / 64], __ATOMIC_RELAXED) >> (i % 64)) & 1);
}

/*
 * What a vfork() child's writer has added to its internal count: the
 * child's calls go by unrecorded, its descriptors are not the ones the
 * arena's table names (its parent's), and are counted lost
 * (ringtrace__io_let_by).
 */
#define RINGTRACE__INTERNAL_VFORK_CHILD (1u << 30)
/*
 * A call the interposer lets by because the calling thread's internal
 * count is not 0: counted lost when it is a vfork child's call.  Returns 1.
 */
int ringtrace__io_let_by(void);

/* Record one call (libringtrace.so; any thread, async-signal-safe). */
void ringtrace__io_record(const struct rt_io_call *call);
/*
 * fd is about to be closed (close, fclose, dup2's target...) by a call
 * that started at start: name it if needed and mark it closed in the
 * table now, before another thread can be given the number again.
 */
void ringtrace__io_before_close(int fd, uint64_t start);

/*
 * Turn I/O tracing on for this process and its children: start the arena
 * if it is not started, and write the descriptor rundown.  Called by the
 * interposer's constructor; a forked child's arena writes its own rundown.
 */
void ringtrace__io_start(void);

#endif /* RT_RECORD_IO_CALL_H */
