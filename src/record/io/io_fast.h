/*
 * io_fast.h - an RT_REC_IO record's payload, and the common record written
 * inline where the call was made, as RT_TRACE's fast path is: a call that
 * succeeded on a descriptor the table already names, with no path and no
 * descriptor to follow (a read, a write, a seek), while the I/O site is
 * registered and the record fits below the writer's limit.  Anything else
 * goes to ringtrace__io_record, which names, follows, starts and counts.
 *
 * Why inline: on a kernel that switches page tables at every system call
 * (page-table isolation without PCID), every page a wrapper touches is a
 * TLB miss, paid one after another along a chain of dependent loads.
 * Calling into libringtrace.so touched five pages this path does not: the
 * interposer's PLT, the C library's __errno_location, libringtrace's code,
 * its GOT and the site.  What remains in the interposer: its code, its
 * one page of state (interpose.h: the real function, the cached site id,
 * the known bits), the thread's writer (beside the thread pointer, whose
 * page a multi-threaded program's read touches too), the rseq CPU number
 * (in the thread's control block: the writer's page or the next), the
 * ring's descriptor and the ring; and of each page, one cache line where
 * it can be (the first of the page of state, the writer's fast-path line,
 * the descriptor's first, the record's), since after the system call each
 * line is likely a miss too.
 *
 * Uses only what libringtrace.so exports (io_call.h), so that both the
 * interposer and the benchmark of its work can include it.
 */
#ifndef RT_RECORD_IO_FAST_H
#define RT_RECORD_IO_FAST_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "record/io/io_call.h"
#include "record/payload_record.h"
#include "ringtrace.h"
#include "ringtrace/format.h"

/*
 * The payload's fixed part and the optional parts its flags name, into
 * out (room for 56 bytes); its size.  A path, when the call has one, is
 * io_record.c's to append.
 */
static inline __attribute__((always_inline)) uint32_t
rt_io_payload_parts(const struct rt_io_call *c, uint8_t *out)
{
	uint16_t flags = (uint16_t)(c->flags & (RT_IO_F_OFFSET | RT_IO_F_AUX | RT_IO_F_STREAM));
	/* one word: gcc would read the two halves' constants from .rodata, one more page */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint32_t op_flags = (uint32_t)c->op | (uint32_t)flags << 16;
#else
	uint32_t op_flags = (uint32_t)c->op << 16 | flags;
#endif
	RT__FORMAT_ASSERT(offsetof(struct rt_io_payload, flags) == 2, "op and flags: one word");
	memcpy(out + offsetof(struct rt_io_payload, op), &op_flags, 4);
	memcpy(out + offsetof(struct rt_io_payload, fd), &c->fd, 4);
	memcpy(out + offsetof(struct rt_io_payload, start), &c->start, 8);
	memcpy(out + offsetof(struct rt_io_payload, size), &c->size, 8);
	memcpy(out + offsetof(struct rt_io_payload, result), &c->result, 8);
	uint32_t at = sizeof(struct rt_io_payload);
	if (flags & RT_IO_F_OFFSET) {
		memcpy(out + at, &c->offset, 8);
		at += 8;
	}
	if (flags & RT_IO_F_AUX) {
		memcpy(out + at, c->aux, 8);
		at += 8;
	}
	if (flags & RT_IO_F_STREAM) {
		memcpy(out + at, &c->stream, 8);
		at += 8;
	}
	return at;
}

/*
 * The operations whose record is all ringtrace__io_record does for them
 * once their descriptor is named: no new descriptor to follow (open, dup,
 * fopen), none closed (close, fclose), no second one to name
 * (copy_file_range, sendfile), no path (unlink, rename, open).
 */
static inline __attribute__((always_inline)) int rt_io_fast_op(unsigned op)
{
	return (op >= RT_IO_READ && op <= RT_IO_FTRUNCATE) || op == RT_IO_MMAP ||
	       (op >= RT_IO_FREAD && op <= RT_IO_FSEEK);
}

/*
 * Write the record of c, which returned result (not negative) at end, here
 * if it is the common case (see the top): 1 when written, 0 when it is
 * ringtrace__io_record's to do.  w is the calling thread's writer, known
 * whether the table names c's descriptor (rt_io_fd_known), id
 * ringtrace__io_site's id as the caller caches it (0: not known yet; an id
 * never changes once given, and a forked child's arena keeps its
 * parent's).  Async-signal-safe: busy is taken before the head is read, as
 * in ringtrace__emit.
 */
static inline __attribute__((always_inline)) int rt_io_record_fast(struct ringtrace__writer *w,
								   int known, uint32_t id,
								   const struct rt_io_call *c,
								   uint64_t end, int64_t result)
{
	if (!rt_io_fast_op(c->op) || c->path || result < 0 || !known)
		return 0;
	if (w->busy || w->internal)
		return 0;
	w->busy = 1;
	RT__COMPILER_BARRIER(); /* a handler sees busy before we read head */
	struct rt_io_call call = *c;
	call.end = end;
	call.result = result;
	uint8_t payload[sizeof(struct rt_io_payload) + 24] __attribute__((aligned(8)));
	uint32_t bytes = rt_io_payload_parts(&call, payload);
	int done = rt_try_write_payload(w, RT_REC_IO, id, payload, bytes, end);
	if (RT__LIKELY(done)) {
		/*
		 * The line the next record starts in was last written a whole ring
		 * ago: fetch it for writing now, while the program runs, rather
		 * than wait for it when the next system call drains the stores.
		 */
		__builtin_prefetch(&w->slots[w->head & w->mask], 1, 3);
	}
	RT__COMPILER_BARRIER();
	w->busy = 0;
	return done;
}

#endif /* RT_RECORD_IO_FAST_H */
