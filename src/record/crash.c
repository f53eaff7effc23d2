/*
 * crash.c - the crash handler: when a fatal signal reaches the traced
 * program, record in the arena how it ended, print its last events
 * (crash_format.c), and hand the signal on, so that the process ends as it
 * would have without ringtrace: same signal, same exit status, same core.
 *
 * Installing.  When the arena is created (not before: a program that never
 * traces is not touched), the handler is put on SIGSEGV, SIGBUS, SIGILL,
 * SIGFPE and SIGABRT with SA_SIGINFO | SA_ONSTACK | SA_NODEFER, and the
 * action it replaces is kept.  A signal the program ignores (SIG_IGN) is
 * left alone.  A handler the program installs later simply replaces ours:
 * it is in charge from then on, and ours runs only if it chains to the
 * action it got back from sigaction().  We never install ours again.
 *
 * Passing the signal on.  After the dump the handler puts the kept action
 * back, then:
 *  - a fault (si_code > 0: the kernel raised it for an instruction) is left
 *    to happen again: returning re-executes the instruction, which now meets
 *    the program's own action (its handler, or the default: death, core
 *    dump of the faulting context);
 *  - a signal that was sent (abort(), raise(), kill: si_code <= 0) is sent
 *    again to this thread, blocked until the handler returns.
 * So from the program's point of view, the signal arrives once, at its own
 * action, after ringtrace has had its say.  When a handler the program
 * installed after ours calls ours (passing the signal on to the action
 * sigaction() gave it), ours does likewise with the action it kept: calls
 * it if it is a handler, or puts the default action in place, since that is
 * what passing a fatal signal on to the default means.
 *
 * One dump at a time.  The first thread in claims the handler; another
 * thread that crashes meanwhile waits (bounded) for the process to die.
 * SA_NODEFER lets a fault inside the dump itself (a damaged arena, a file
 * truncated under the mapping: SIGBUS) re-enter the handler on the same
 * thread; it then jumps back out of the dump (siglongjmp), and the first
 * signal is passed on as usual.  A fault while passing on ends the process
 * with the default action of that signal.  Nothing loops.
 *
 * Alternate stacks.  A stack overflow faults with no stack left to run a
 * handler on, so every thread that attaches gets its own alternate signal
 * stack (sigaltstack is per thread) unless it has one: mapped, with a guard
 * page below it; when the thread exits, if it is still ours, kept for a
 * thread that starts later (kept_stacks) or unmapped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"

#define ALT_STACK_MIN (64u << 10)
/* How long a second crashing thread waits for the first one's dump. */
#define WAIT_STEP_NS 1000000L
#define WAIT_STEPS 5000

static const int crash_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define CRASH_SIGNAL_COUNT (sizeof(crash_signals) / sizeof(crash_signals[0]))

/* The program's actions, kept when ours replaced them. */
static struct sigaction previous[CRASH_SIGNAL_COUNT];
static int installed[CRASH_SIGNAL_COUNT];
static uint32_t crash_events;

/* The thread working in the handler (0: none), and how far it got. */
static pid_t owner_tid;
enum stage {
	STAGE_IDLE = 0,
	STAGE_DUMPING = 1, /* a fault now jumps back out of the dump */
	STAGE_PASSING = 2, /* a fault now ends the process */
};
static volatile sig_atomic_t stage;
static sigjmp_buf dump_escape;
static volatile sig_atomic_t escape_signal;

/* The calling thread's alternate stack, if we mapped it. */
struct alt_stack {
	void *map;
	size_t map_size;
	void *sp;
};
static __thread struct alt_stack alt_stack __attribute__((tls_model("initial-exec")));

/*
 * Stacks of threads that ended, kept for the next threads that start: a
 * mapping and its guard page cost a new thread's first event more than
 * anything else it does (about 5 us of its 15 on a 2-vCPU VM), and a
 * program that starts a thread per task would pay them each time.  Each
 * slot holds one mapping or NULL, taken and given with atomic exchanges
 * (no lock: a first event may come from a signal handler).  Kept mappings
 * are memory the program no longer uses: at most ALT_STACK_KEPT of them,
 * the rest unmapped as before.
 */
#define ALT_STACK_KEPT 16u
static struct alt_stack *kept_stacks[ALT_STACK_KEPT];

/* A kept stack, taken for the calling thread: 1 and out, or 0. */
static int take_kept_stack(struct alt_stack *out)
{
	for (unsigned i = 0; i < ALT_STACK_KEPT; i++) {
		if (!__atomic_load_n(&kept_stacks[i], __ATOMIC_RELAXED))
			continue;
		struct alt_stack *kept =
		    __atomic_exchange_n(&kept_stacks[i], NULL, __ATOMIC_ACQUIRE);
		if (kept) {
			*out = *kept;
			return 1;
		}
	}
	return 0;
}

/* Keep an ended thread's stack, whose description goes into its lowest bytes: 1, or 0 when full. */
static int keep_stack(const struct alt_stack *stack)
{
	/* the description goes into the stack's own memory, which nobody uses now */
	struct alt_stack *kept = stack->sp;
	*kept = *stack;
	for (unsigned i = 0; i < ALT_STACK_KEPT; i++) {
		struct alt_stack *none = NULL;
		if (__atomic_compare_exchange_n(&kept_stacks[i], &none, kept, 0, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return 1;
	}
	return 0;
}

static void crash_handler(int sig, siginfo_t *info, void *context);

static int signal_index(int sig)
{
	for (unsigned i = 0; i < CRASH_SIGNAL_COUNT; i++)
		if (crash_signals[i] == sig)
			return (int)i;
	return -1;
}

static int is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == crash_handler;
}

static int is_ignored(const struct sigaction *sa)
{
	return !(sa->sa_flags & SA_SIGINFO) && sa->sa_handler == SIG_IGN;
}

/* ---- alternate signal stacks ------------------------------------------ */

void rt_crash_thread_start(void)
{
	if (alt_stack.map)
		return;
	stack_t current;
	if (sigaltstack(NULL, &current) != 0 || !(current.ss_flags & SS_DISABLE))
		return; /* the thread has one (or runs on one): keep it */
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0)
		page = 4096;
	size_t size = ALT_STACK_MIN;
	long sigstksz = SIGSTKSZ; /* a sysconf() call on newer glibc */
	if (sigstksz > 0 && (size_t)sigstksz * 4 > size)
		size = (size_t)sigstksz * 4;
	size = (size + (size_t)page - 1) & ~((size_t)page - 1);
	size_t map_size = size + (size_t)page;
	struct alt_stack kept;
	if (take_kept_stack(&kept)) {
		stack_t ss = {.ss_sp = kept.sp, .ss_size = kept.map_size - (size_t)page};
		if (sigaltstack(&ss, NULL) == 0) {
			alt_stack = kept;
			return;
		}
		munmap(kept.map, kept.map_size);
	}
	void *map = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (map == MAP_FAILED)
		return;
	/* the guard: stacks grow down, so an overflow of this one faults here */
	stack_t ss = {.ss_sp = (char *)map + page, .ss_size = size, .ss_flags = 0};
	if (mprotect(map, (size_t)page, PROT_NONE) != 0 || sigaltstack(&ss, NULL) != 0) {
		munmap(map, map_size);
		return;
	}
	alt_stack.map = map;
	alt_stack.map_size = map_size;
	alt_stack.sp = ss.ss_sp;
}

void rt_crash_thread_end(void)
{
	if (!alt_stack.map)
		return;
	stack_t current;
	if (sigaltstack(NULL, &current) != 0 || (current.ss_flags & SS_ONSTACK))
		return;
	if (!(current.ss_flags & SS_DISABLE) && current.ss_sp == alt_stack.sp) {
		stack_t off = {.ss_flags = SS_DISABLE};
		if (sigaltstack(&off, NULL) != 0)
			return;
	}
	/* else the program put its own in place: ours is unused */
	if (!keep_stack(&alt_stack))
		munmap(alt_stack.map, alt_stack.map_size);
	alt_stack.map = NULL;
}

/* ---- installing ------------------------------------------------------- */

void rt_crash_install(uint32_t events)
{
	crash_events = events;
	rt_crash_thread_start();
	struct sigaction ours;
	memset(&ours, 0, sizeof(ours));
	ours.sa_sigaction = crash_handler;
	ours.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sigemptyset(&ours.sa_mask);
	for (unsigned i = 0; i < CRASH_SIGNAL_COUNT; i++) {
		/* a forked child starting its own arena: ours is in place, previous[i] right */
		struct sigaction now;
		if (installed[i] && sigaction(crash_signals[i], NULL, &now) == 0 && is_ours(&now))
			continue;
		/* kept first, so that a signal right after the swap finds it */
		if (sigaction(crash_signals[i], NULL, &previous[i]) != 0 ||
		    is_ignored(&previous[i]))
			continue;
		struct sigaction old;
		if (sigaction(crash_signals[i], &ours, &old) != 0)
			continue;
		if (is_ignored(&old)) {
			/* ignored since we looked: leave it so */
			sigaction(crash_signals[i], &old, NULL);
			continue;
		}
		previous[i] = old;
		installed[i] = 1;
	}
}

void rt_crash_uninstall(void)
{
	for (unsigned i = 0; i < CRASH_SIGNAL_COUNT; i++) {
		if (!installed[i])
			continue;
		struct sigaction current;
		/* a handler the program installed after ours stays */
		if (sigaction(crash_signals[i], NULL, &current) == 0 && is_ours(&current))
			sigaction(crash_signals[i], &previous[i], NULL);
		installed[i] = 0;
	}
}

/* ---- the handler --------------------------------------------------------- */

static int is_fault(const siginfo_t *info)
{
	return info->si_code > 0;
}

static void set_default(int sig)
{
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
}

/* How the process ended, in the header: end_reason last, so a reader sees all or nothing. */
static void record_end(int sig, const siginfo_t *info, pid_t tid)
{
	struct rt_arena_header *h = rt_arena.header;
	uint64_t address = 0;
	if (is_fault(info) && sig != SIGABRT)
		address = (uint64_t)(uintptr_t)info->si_addr;
	__atomic_store_n(&h->end_signal, sig, __ATOMIC_RELAXED);
	__atomic_store_n(&h->end_tid, tid, __ATOMIC_RELAXED);
	__atomic_store_n(&h->end_address, address, __ATOMIC_RELAXED);
	__atomic_store_n(&h->end_counter, ringtrace__counter(), __ATOMIC_RELAXED);
	/* publishes: the fields above */
	__atomic_store_n(&h->end_reason, (uint32_t)RT_END_SIGNAL, __ATOMIC_RELEASE);
}

static void dump(int sig, const siginfo_t *info, pid_t tid)
{
	record_end(sig, info, tid);
	rt_clock_refresh(rt_arena.header, 1); /* lock-free; skipped if a refresh was cut short */
	if (!crash_events)
		return;
	struct rt_crash_info what;
	memset(&what, 0, sizeof(what));
	what.signal = sig;
	what.tid = tid;
	what.has_address = is_fault(info) && sig != SIGABRT;
	what.address = (uint64_t)(uintptr_t)info->si_addr;
	/* the crashing thread's entry, from its own writer (static TLS: signal-safe) */
	const struct ringtrace__writer *w = &ringtrace__tls_writer;
	what.thread = UINT32_MAX;
	if (w->state == RT_WRITER_ATTACHED || w->state == RT_WRITER_NO_RING)
		what.thread = w->thread;
	/* the dump's writes are the library's, not the program's I/O */
	ringtrace__tls_writer.internal++;
	rt_crash_write_dump(STDERR_FILENO, &what, crash_events);
	ringtrace__tls_writer.internal--;
}

/*
 * The kept action back in place, and the signal on its way to it.  When
 * ours is no longer installed, a handler the program installed later called
 * us, passing the signal on: we do the same with the action we kept (call
 * it, or for the default action put it in place), and leave its handler be
 * otherwise.
 */
static void pass_on(int sig, siginfo_t *info, void *context)
{
	int i = signal_index(sig);
	struct sigaction current;
	if (i >= 0 && sigaction(sig, NULL, &current) == 0 && !is_ours(&current)) {
		const struct sigaction *kept = &previous[i];
		if (kept->sa_flags & SA_SIGINFO) {
			kept->sa_sigaction(sig, info, context);
			return;
		}
		if (kept->sa_handler != SIG_DFL && kept->sa_handler != SIG_IGN) {
			kept->sa_handler(sig);
			return;
		}
	}
	if (i >= 0) {
		sigaction(sig, &previous[i], NULL);
		installed[i] = 0;
	} else {
		set_default(sig);
	}
	if (!is_fault(info)) {
		/* sent, not a fault: send it again, delivered once we return */
		sigset_t set;
		sigemptyset(&set);
		sigaddset(&set, sig);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		syscall(SYS_tgkill, getpid(), rt_gettid(), sig);
	}
}

/* Wait for another thread's dump; 1 once this thread owns the handler. */
static int claim(pid_t tid)
{
	for (int step = 0; step < WAIT_STEPS; step++) {
		pid_t expected = 0;
		if (__atomic_compare_exchange_n(&owner_tid, &expected, tid, 0, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return 1;
		struct timespec pause = {0, WAIT_STEP_NS};
		nanosleep(&pause, NULL);
	}
	return 0;
}

static void write_escape_note(int sig)
{
	char line[96];
	const char *text = "ringtrace: the crash dump was cut short by signal ";
	size_t n = strlen(text);
	memcpy(line, text, n);
	char digits[12];
	unsigned d = 0;
	unsigned v = (unsigned)sig;
	do {
		digits[d++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && d < sizeof(digits));
	while (d)
		line[n++] = digits[--d];
	line[n++] = '\n';
	ssize_t ignored = write(STDERR_FILENO, line, n);
	(void)ignored;
}

static void crash_handler(int sig, siginfo_t *info, void *context)
{
	int saved_errno = errno;
	pid_t tid = rt_gettid();
	if (__atomic_load_n(&owner_tid, __ATOMIC_ACQUIRE) == tid) {
		/* re-entered: our own work faulted */
		if (stage == STAGE_DUMPING) {
			escape_signal = sig;
			siglongjmp(dump_escape, 1);
		}
		/* passing on faulted: nothing of ours is left to try */
		set_default(sig);
		if (!is_fault(info))
			syscall(SYS_tgkill, getpid(), tid, sig);
		errno = saved_errno;
		return;
	}
	int owned = claim(tid);
	if (owned) {
		/*
		 * Only the process that created the arena speaks for it: a forked
		 * child inherits this handler but not the arena.
		 */
		if (rt_arena_on() && getpid() == rt_arena.owner) {
			stage = STAGE_DUMPING;
			if (sigsetjmp(dump_escape, 1) == 0)
				dump(sig, info, tid);
			else
				write_escape_note(escape_signal);
		}
		stage = STAGE_PASSING;
	}
	pass_on(sig, info, context);
	if (owned) {
		stage = STAGE_IDLE;
		__atomic_store_n(&owner_tid, 0, __ATOMIC_RELEASE);
	}
	errno = saved_errno;
}
