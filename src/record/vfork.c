/*
 * vfork.c - vfork() children, which run on their parent's memory and on the
 * calling thread's own state until they exec or exit.
 *
 * Nothing the fast path reads tells such a child from its parent: same
 * thread pointer, same writer, same arena, and the parent's thread sleeps
 * meanwhile.  So the library stands in front of the C library's vfork (it
 * is linked into the program or preloaded before the C library) and lends
 * the calling thread's writer to the child for the time of the call: the
 * writer's limit goes to 0 and its lent count up, so that every event of the
 * child takes the slow path, which writes nothing and counts the event lost
 * in the arena's header (the child has no arena: it may not change a byte
 * of what its parent will find again, and it has no thread state of its
 * own to record with).  When the parent runs again, the child has exec'd or
 * exited: the writer's limit and the thread's call depth come back as they
 * were.  A vfork child that itself calls vfork borrows the same writer
 * again: only the outermost call saves and restores.
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

#include "record/record.h"

/*
 * The writer's limit before the outermost lending, per thread: the child
 * never writes it (it can only borrow again, which saves nothing).
 */
static __thread uint64_t rt_lent_limit __attribute__((tls_model("initial-exec")));
static __thread uint32_t rt_lent_depth __attribute__((tls_model("initial-exec")));

/* Called by the wrapper before the system call. */
void rt_vfork_lend(void);
void rt_vfork_lend(void)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (w->lent++ == 0) {
		rt_lent_limit = __atomic_load_n(&w->limit, __ATOMIC_RELAXED);
		rt_lent_depth = rt_fn_depth();
	}
	__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
}

/*
 * Called by the wrapper in the parent once the system call returned
 * (result: the child's pid or -errno); returns what vfork() returns.
 */
long rt_vfork_return(long result);
long rt_vfork_return(long result)
{
	struct ringtrace__writer *w = &ringtrace__tls_writer;
	if (w->lent && --w->lent == 0) {
		rt_fn_set_depth(rt_lent_depth);
		__atomic_store_n(&w->limit, rt_lent_limit, __ATOMIC_RELAXED);
		/* a shutdown meanwhile lowered every limit: keep it so */
		if (!rt_arena_on())
			__atomic_store_n(&w->limit, 0, __ATOMIC_RELAXED);
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
 * kept by the system call), pushed back for the return.  With a shadow
 * stack in use (rdssp reads nonzero), the child jumps back rather than
 * return, leaving the shadow stack it shares with its parent untouched.
 */
__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	".p2align 4\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call rt_vfork_lend\n"
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
 * processes; the parent saves it on the stack only after the child is gone.
 * The vfork system call is clone(CLONE_VM | CLONE_VFORK | SIGCHLD).
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
	"	bl rt_vfork_lend\n"
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
	"	cbnz x0, 1f\n"
	"	ret\n"
	"1:	stp x29, x30, [sp, #-16]!\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset 29, -16\n"
	"	.cfi_offset 30, -8\n"
	"	mov x29, sp\n"
	"	bl rt_vfork_return\n"
	"	ldp x29, x30, [sp], #16\n"
	"	.cfi_restore 30\n"
	"	.cfi_restore 29\n"
	"	.cfi_def_cfa_offset 0\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size vfork, .-vfork\n");
#endif
