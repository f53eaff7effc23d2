/*
 * vfork.c - vfork() children, which run on their parent's memory and on the
 * calling thread's own state until they exec or exit.
 *
 * Nothing the fast path reads tells such a child from its parent: same
 * thread pointer, same writer, same arena, and the parent's thread sleeps
 * meanwhile.  The child is, for the library, one more thread of its
 * parent's process that runs while the calling thread is stopped, and
 * records as one: its events go into a ring of its own, under a thread
 * entry of its own whose tid is the child's pid, flagged
 * RT_THREAD_F_VFORK_CHILD.  So the library stands in front of the C
 * library's vfork (it is linked into the program or preloaded before the
 * C library), and:
 *
 *  1. in the parent, before the system call (rt_vfork_before): the calling
 *     thread's writer (128 bytes) and call depth (functions.c) are saved in
 *     a slot of a static pool, every signal is blocked (a handler of the
 *     parent that ran between the system call's return and step 3 would
 *     write into the child's ring as the child), and the writer becomes a
 *     new thread's: state NEW, limit 0, vfork_child set;
 *  2. in the child, right after the system call (rt_vfork_child): the
 *     signal mask is set back to the parent's; the child's first event
 *     takes the slow path and attaches as a new thread (threads.c), minus
 *     what would outlive the child or touch its parent: no alternate
 *     signal stack (its mapping would stay in the parent's address space),
 *     no thread-exit key (the parent's thread's), no rseq area (the kernel
 *     registers none for a child sharing its parent's memory: the CPU is
 *     unknown);
 *  3. in the parent, once the child exec'd or exited (rt_vfork_return):
 *     the child's entry is ended as a thread's exit ends it (end_record,
 *     exit_counter, EXITED) and its ring released, so that readers
 *     attribute its records and the ring can serve another thread; then
 *     the writer, the call depth and the signal mask are put back exactly
 *     as saved.
 *
 * Everything else the child's slow path touches is shared on purpose and
 * made for concurrent writers: the arena's tables and counters (other
 * threads of the parent run meanwhile), the sites' cached ids, the call
 * stack's shadow entries above the saved depth (the parent's own below it
 * are not written), the table of attached writers (the child's slot is
 * emptied in step 3).  The pool and its links are shared too, so a child
 * that itself calls vfork takes a slot of its own, linked to the one
 * before it through one thread-local word.
 *
 * What is still counted lost (the arena's lost_untracked, or lost while
 * starting), never written into the parent's ring, by lending the writer
 * to the child as a whole: its limit 0 and its lent count up, so that
 * every event of the child takes the slow path, which writes nothing and
 * counts it; the parent gets its limit and call depth back after.  That
 * is done when tracing is not on at the call (the child must not create
 * the arena: it would own it, its file and its threads, and go away), when
 * every slot of the pool is taken, and for a child of a child that lends.
 * A vfork child's file I/O calls (`record --io`) are counted lost in every
 * case: the descriptor table in the arena is the parent's, and the child's
 * descriptors (a copy, which it rearranges before exec) are not.
 *
 * The wrapper is a few instructions of assembly, as the C library's own:
 * the child returns from it on the parent's stack, so the return address
 * waits in a register, never in a stack slot the child may overwrite.
 * Where there is no wrapper (other architectures, vfork reached through
 * syscall()), a vfork child's events go to its parent's ring as its
 * parent's own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/io/io_call.h"
#include "record/record.h"

/* Calls of vfork in progress at once, nested or on several threads. */
#define RT_VFORK_SLOTS 64u

/* The parent's state while its vfork child runs. */
struct rt_vfork_slot {
	uint32_t taken; /* atomic: 0 free, 1 taken */
	uint32_t below; /* the slot of the call this one is nested in (+1), 0 none */
	uint32_t fn_depth;
	uint32_t reserved;
	uint64_t mask; /* the parent's signal mask, as the kernel keeps it */
	struct ringtrace__writer writer;
};

static struct rt_vfork_slot rt_vfork_slots[RT_VFORK_SLOTS];

/*
 * Per thread: the slot of the innermost call in progress (+1), 0 none.  A
 * child writes it too (its own calls), and puts it back before it ends.
 */
static __thread uint32_t rt_vfork_top __attribute__((tls_model("initial-exec")));

/*
 * The writer's limit before the outermost lending, per thread: the child
 * never writes it (it can only borrow again, which saves nothing).
 */
static __thread uint64_t rt_lent_limit __attribute__((tls_model("initial-exec")));
static __thread uint32_t rt_lent_depth __attribute__((tls_model("initial-exec")));

static int set_signal_mask(int how, const uint64_t *set, uint64_t *old)
{
	/* the kernel's sigset: the C library's wrapper keeps back signals of its own */
	return (int)syscall(SYS_rt_sigprocmask, how, set, old, sizeof(*set));
}

static struct rt_vfork_slot *take_slot(void)
{
	for (uint32_t i = 0; i < RT_VFORK_SLOTS; i++) {
		uint32_t expected = 0;
		if (__atomic_load_n(&rt_vfork_slots[i].taken, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&rt_vfork_slots[i].taken, &expected, 1, 0,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return &rt_vfork_slots[i];
	}
	return NULL;
}

/* The whole writer lent to the child: its events counted lost. */
static void lend(struct ringtrace__writer *w)
{
	if (w->lent++ == 0) {
		rt_lent_limit = __atomic_load_n(&w->limit, __ATOMIC_RELAXED);
		rt_lent_depth = rt_fn_depth();
	}
	__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
}

/* Step 1: called by the wrapper before the system call. */
void rt_vfork_before(void);
void rt_vfork_before(void)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	struct rt_vfork_slot *slot;
	if (w->lent || !rt_arena_on() || !(slot = take_slot())) {
		lend(w);
		return;
	}
	const uint64_t all = ~(uint64_t)0;
	if (set_signal_mask(SIG_BLOCK, &all, &slot->mask) != 0) {
		__atomic_store_n(&slot->taken, 0, __ATOMIC_RELEASE);
		lend(w);
		return;
	}
	memcpy(&slot->writer, w, sizeof(*w));
	slot->fn_depth = rt_fn_depth();
	slot->below = rt_vfork_top;
	rt_vfork_top = (uint32_t)(slot - rt_vfork_slots) + 1;
	/* a new thread's writer: its first event attaches (threads.c) */
	uint32_t internal = w->internal;
	memset(w, 0, sizeof(*w));
	w->internal = internal + RINGTRACE__INTERNAL_VFORK_CHILD; /* its file I/O: counted lost */
	w->vfork_child = 1;
}

/* Step 2: called by the wrapper in the child; returns what vfork() returns there. */
long rt_vfork_child(void);
long rt_vfork_child(void)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	/* a lent writer (lent counts the parent's lending): nothing was blocked */
	if (!w->lent && rt_vfork_top)
		set_signal_mask(SIG_SETMASK, &rt_vfork_slots[rt_vfork_top - 1].mask, NULL);
	return 0;
}

/*
 * Step 3: called by the wrapper in the parent once the system call
 * returned (result: the child's pid or -errno); returns what vfork()
 * returns.
 */
long rt_vfork_return(long result);
long rt_vfork_return(long result)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (w->lent) {
		if (--w->lent == 0) {
			rt_fn_set_depth(rt_lent_depth);
			__atomic_store_n(&w->limit, rt_lent_limit, __ATOMIC_RELAXED);
			/* a shutdown meanwhile lowered every limit: keep it so */
			if (!rt_arena_on())
				__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
		}
	} else if (rt_vfork_top) {
		struct rt_vfork_slot *slot = &rt_vfork_slots[rt_vfork_top - 1];
		/* the writer is the child's as it left it: its entry ends, its ring is let go */
		rt_thread_end_vfork_child(w);
		memcpy(w, &slot->writer, sizeof(*w));
		rt_fn_set_depth(slot->fn_depth);
		/* a shutdown meanwhile lowered every limit: keep it so */
		if (!rt_arena_on())
			__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
		rt_vfork_top = slot->below;
		uint64_t mask = slot->mask;
		/* publishes: the slot's contents are read, it may serve another call */
		__atomic_store_n(&slot->taken, 0, __ATOMIC_RELEASE);
		set_signal_mask(SIG_SETMASK, &mask, NULL);
	}
	if (result < 0 && result > -4096) {
		errno = (int)-result;
		return -1;
	}
	return result;
}

void rt_vfork_count_event(void)
{
	int state = __atomic_load_n(&rt_arena.state, __ATOMIC_ACQUIRE);
	if (state == RT_ON)
		__atomic_fetch_add(&rt_arena.header->lost_untracked, 1, __ATOMIC_RELAXED);
	else if (state == RT_OFF_NOT_STARTED || state == RT_STARTING)
		__atomic_fetch_add(&rt_arena.lost_while_starting, 1, __ATOMIC_RELAXED);
	/* RT_OFF: tracing is off, nothing is recorded or counted */
}

#if defined(__x86_64__)
/*
 * As the C library's: the return address popped into rdi (free to clobber,
 * kept by the system call), pushed back for the return.  The child calls
 * rt_vfork_child below its parent's stack pointer, where the parent keeps
 * nothing.  With a shadow stack in use (rdssp reads nonzero), the child
 * jumps back rather than return, leaving the shadow stack it shares with
 * its parent as it was (the call's entry lies below the parent's, and is
 * gone again when the call returns).
 */
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	".p2align 4\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call rt_vfork_before\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_register %rip, %rdi\n"
	"	movl $58, %eax\n" /* SYS_vfork */
	"	syscall\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset %rip, 0\n"
	"	testq %rax, %rax\n"
	"	jnz 1f\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call rt_vfork_child\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	xorl %esi, %esi\n"
	"	rdsspq %rsi\n"
	"	testq %rsi, %rsi\n"
	"	je 2f\n"
	"	popq %rdi\n"
	"	jmp *%rdi\n"
	"2:	ret\n"
	"1:	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	movq %rax, %rdi\n"
	"	call rt_vfork_return\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size vfork, .-vfork\n");
#elif defined(__aarch64__)
/*
 * The return address is in x30, which the system call keeps in both
 * processes; each saves it on the stack only after the system call, below
 * the stack pointer of vfork's caller, where the other keeps nothing (the
 * parent runs again only after the child is gone).  The vfork system call
 * is clone(CLONE_VM | CLONE_VFORK | SIGCHLD).
 */
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, %function\n"
	".p2align 4\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset 29, -16\n"
	"	.cfi_offset 30, -8\n"
	"	mov x29, sp\n"
	"	bl rt_vfork_before\n"
	"	ldp x29, x30, [sp], #16\n"
	"	.cfi_restore 30\n"
	"	.cfi_restore 29\n"
	"	.cfi_def_cfa_offset 0\n"
	"	mov x0, #0x4111\n"
	"	mov x1, #0\n"
	"	mov x2, #0\n"
	"	mov x3, #0\n"
	"	mov x4, #0\n"
	"	mov x8, #220\n" /* SYS_clone */
	"	svc #0\n"
	"	stp x29, x30, [sp, #-16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset 29, -16\n"
	"	.cfi_offset 30, -8\n"
	"	mov x29, sp\n"
	"	cbnz x0, 1f\n"
	"	bl rt_vfork_child\n"
	"	b 2f\n"
	"1:	bl rt_vfork_return\n"
	"2:\n"
	"	ldp x29, x30, [sp], #16\n"
	"	.cfi_restore 30\n"
	"	.cfi_restore 29\n"
	"	.cfi_def_cfa_offset 0\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size vfork, .-vfork\n");
#endif
