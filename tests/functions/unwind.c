/*
 * unwind.c - calls that do not return through their exit hook, for
 * tests/functions/check_unwind.py: built with -finstrument-functions and
 * linked with ringtrace, it leaves calls by each way a C program can, then
 * `ringtrace dump --json` of its arena must still show every thread's calls
 * properly nested, each enter with exactly one exit, the ones that did not
 * return marked with the flag of how they ended (RT_FUNC_F_*).
 *
 *     unwind SCENARIO
 *
 *   longjmp      jumper() calls top -> middle -> leaf three times; leaf
 *                longjmps back into jumper, which then calls after()
 *   nested-jump  the same, but leaf jumps to a setjmp in middle, from a
 *                callee with a larger frame, then middle returns normally
 *   exit         ex_outer -> ex_inner calls exit(0)
 *   thread-exit  a thread's te_outer -> te_inner calls pthread_exit
 *   cancel       a thread's ca_outer -> ca_inner waits to be cancelled
 *   signal       sig_spin's callees are interrupted by SIGALRM, whose
 *                handler makes calls of its own on the same stack
 *   altstack     a thread's calls are interrupted by a signal whose handler
 *                runs, making calls, on an alternate stack mapped above
 *                the thread's stack
 *
 * Everything but main and the scenario's functions is
 * no_instrument_function, so that the calls are only those described.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#define QUIET __attribute__((no_instrument_function))
#ifdef __clang__
#define CALLED __attribute__((noinline))
#else
#define CALLED __attribute__((noinline, noclone))
#endif

static volatile int sink;
static jmp_buf back;

CALLED void leaf(int n);
CALLED void middle(int n);
CALLED void top(int n);
CALLED void after(void);
CALLED void jumper(void);
CALLED void big_leaf(int n);
CALLED void catcher(int n);
CALLED void nested_jumper(void);
CALLED void ex_inner(void);
CALLED void ex_outer(void);
CALLED void te_inner(void);
CALLED void te_outer(void);
CALLED void *te_thread(void *arg);
CALLED void ca_inner(void);
CALLED void ca_outer(void);
CALLED void *ca_thread(void *arg);
CALLED void handler_work(int n);
CALLED void on_signal(int sig);
CALLED void spin_work(int n);
CALLED void sig_spin(void);
CALLED void alt_inner(void);
CALLED void alt_outer(void);
CALLED void *alt_thread(void *arg);
int main(int argc, char **argv);

/* ---- longjmp ------------------------------------------------------------ */

void leaf(int n)
{
	sink = n;
	longjmp(back, n + 1);
}

void middle(int n)
{
	leaf(n);
	sink = 0;
}

void top(int n)
{
	middle(n);
	sink = 0;
}

void after(void)
{
	sink = 42;
}

void jumper(void)
{
	static volatile int round;
	for (round = 0; round < 3;) {
		if (setjmp(back) == 0)
			top(round);
		else
			round++;
	}
	after();
}

/* ---- longjmp into a frame that is still running --------------------------- */

static jmp_buf inner_back;

/* a large frame: its callee's frame lies far below catcher's */
void big_leaf(int n)
{
	volatile char pad[2048];
	pad[n] = (char)n;
	sink = pad[n];
	longjmp(inner_back, 1);
}

void catcher(int n)
{
	if (setjmp(inner_back) == 0)
		big_leaf(n);
	after(); /* inside catcher: the abandoned big_leaf is closed first */
}

void nested_jumper(void)
{
	for (int i = 0; i < 2; i++)
		catcher(i);
	after();
}

/* ---- exit() --------------------------------------------------------------- */

void ex_inner(void)
{
	exit(0);
}

void ex_outer(void)
{
	ex_inner();
	sink = 0;
}

/* ---- pthread_exit and cancellation ---------------------------------------- */

void te_inner(void)
{
	pthread_exit(NULL);
}

void te_outer(void)
{
	te_inner();
	sink = 0;
}

void *te_thread(void *arg)
{
	(void)arg;
	te_outer();
	return NULL;
}

static pthread_barrier_t ca_ready;

QUIET static void ca_wait(void)
{
	pthread_barrier_wait(&ca_ready);
	for (;;)
		pause(); /* a cancellation point */
}

void ca_inner(void)
{
	ca_wait();
}

void ca_outer(void)
{
	ca_inner();
	sink = 0;
}

void *ca_thread(void *arg)
{
	(void)arg;
	ca_outer();
	return NULL;
}

/* ---- signal handlers ------------------------------------------------------ */

static volatile sig_atomic_t handled;

void handler_work(int n)
{
	sink = n;
}

void on_signal(int sig)
{
	handler_work(sig);
	handled++;
}

void spin_work(int n)
{
	for (volatile int i = 0; i < n; i++)
		sink = i;
}

void sig_spin(void)
{
	while (handled < 5)
		spin_work(100000);
	after();
}

QUIET static void run_signal(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval every = {{0, 2000}, {0, 2000}};
	setitimer(ITIMER_REAL, &every, NULL);
	sig_spin();
	struct itimerval off;
	memset(&off, 0, sizeof(off));
	setitimer(ITIMER_REAL, &off, NULL);
}

static void *alt_stack_memory;
static void *alt_thread_stack;
#define ALT_STACK_SIZE (256u * 1024u)

void alt_inner(void)
{
	/* the handler runs on the alternate stack, above this thread's stack */
	while (handled < 3) {
		pthread_kill(pthread_self(), SIGUSR1);
		spin_work(10);
	}
}

void alt_outer(void)
{
	alt_inner();
	after();
}

void *alt_thread(void *arg)
{
	(void)arg;
	int marker;
	alt_thread_stack = &marker;
	stack_t ss = {.ss_sp = alt_stack_memory, .ss_size = ALT_STACK_SIZE, .ss_flags = 0};
	if (sigaltstack(&ss, NULL) != 0) {
		perror("unwind: sigaltstack");
		exit(1);
	}
	alt_outer();
	return NULL;
}

QUIET static int run_altstack(void)
{
	/* mapped before the thread's stack, so (mappings going down) above it */
	alt_stack_memory =
	    mmap(NULL, ALT_STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alt_stack_memory == MAP_FAILED)
		return 1;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, alt_thread, NULL) != 0)
		return 1;
	pthread_join(t, NULL);
	/* the scenario tests something only when the alternate stack is above */
	printf("altstack-above %d\n", (char *)alt_stack_memory > (char *)alt_thread_stack);
	return 0;
}

/* ---- main ----------------------------------------------------------------- */

QUIET static int usage(void)
{
	fprintf(stderr, "usage: unwind longjmp|nested-jump|exit|thread-exit|cancel|signal|"
			"altstack\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return usage();
	const char *s = argv[1];
	if (strcmp(s, "longjmp") == 0) {
		jumper();
	} else if (strcmp(s, "nested-jump") == 0) {
		nested_jumper();
	} else if (strcmp(s, "exit") == 0) {
		ex_outer();
	} else if (strcmp(s, "thread-exit") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, te_thread, NULL) != 0)
			return 1;
		pthread_join(t, NULL);
	} else if (strcmp(s, "cancel") == 0) {
		pthread_barrier_init(&ca_ready, NULL, 2);
		pthread_t t;
		if (pthread_create(&t, NULL, ca_thread, NULL) != 0)
			return 1;
		pthread_barrier_wait(&ca_ready);
		pthread_cancel(t);
		pthread_join(t, NULL);
	} else if (strcmp(s, "signal") == 0) {
		run_signal();
	} else if (strcmp(s, "altstack") == 0) {
		if (run_altstack() != 0)
			return 1;
	} else {
		return usage();
	}
	return 0;
}
