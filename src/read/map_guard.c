/*
 * map_guard.c - the SIGBUS handler that turns a shrunk input into zero
 * pages, and the table of mappings it covers (read/map_guard.h).
 *
 * The table is a fixed array, so that the handler reads it without a lock
 * and nothing in it moves.  A slot is claimed by a compare-and-swap of its
 * base from 0 to 1 (claimed, not yet watched), filled, then published by a
 * release store of the real base; the handler loads each base with acquire
 * and skips 0 and 1.  A fault is synchronous: it comes on the thread that
 * reads the mapping, which is not the one forgetting it (a mapping is
 * forgotten only before it is unmapped, when nobody reads it any more).
 *
 * In the handler: one mmap(MAP_FIXED) over the rest of the mapping, atomic
 * stores, and sigaction/raise to fall back to the default action: nothing
 * that allocates or takes a lock.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "read/map_guard.h"

struct watched {
	uintptr_t base; /* 0 free, 1 being filled, else the mapping's start */
	uintptr_t end;	/* page-aligned */
	int writable;
	uint64_t shrunk; /* 0, or 1 + the first missing offset (the lowest fault) */
};

static struct watched table[RT_MAP_GUARD_MAX];
static struct sigaction previous; /* the SIGBUS action before ours */
static uintptr_t page_size;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int installed;

/* Not ours: the handler there before, or the default action. */
static void pass_on(int sig, siginfo_t *info, void *context)
{
	if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
		previous.sa_sigaction(sig, info, context);
		return;
	}
	if (previous.sa_handler == SIG_IGN && info->si_code <= 0)
		return; /* sent by someone, and ignored before we came */
	if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	/* a fault comes back when the access is retried; a sent signal must be sent again */
	if (info->si_code <= 0)
		raise(sig);
}

static void on_sigbus(int sig, siginfo_t *info, void *context)
{
	int saved_errno = errno;
	uintptr_t at = (uintptr_t)info->si_addr;
	if (info->si_code == BUS_ADRERR) {
		for (size_t i = 0; i < RT_MAP_GUARD_MAX; i++) {
			struct watched *w = &table[i];
			uintptr_t base = __atomic_load_n(&w->base, __ATOMIC_ACQUIRE);
			if (base <= 1 || at < base || at >= w->end)
				continue;
			uintptr_t page = at & ~(page_size - 1);
			int prot = PROT_READ | (w->writable ? PROT_WRITE : 0);
			/* the file ends before this page: it and all after it are zeros now */
			/* NOLINTNEXTLINE(performance-no-int-to-ptr): the page of si_addr */
			void *p = mmap((void *)page, w->end - page, prot,
				       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			if (p == MAP_FAILED)
				break;
			uint64_t offset = (uint64_t)(page - base) + 1;
			uint64_t old = __atomic_load_n(&w->shrunk, __ATOMIC_RELAXED);
			while ((old == 0 || offset < old) &&
			       !__atomic_compare_exchange_n(&w->shrunk, &old, offset, 1,
							    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
				;
			errno = saved_errno;
			return;
		}
	}
	pass_on(sig, info, context);
	errno = saved_errno;
}

static void install(void)
{
	long size = sysconf(_SC_PAGESIZE);
	page_size = size > 0 ? (uintptr_t)size : 4096u;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, &previous) != 0)
		return;
	/* a sanitizer may keep its own handler and refuse ours: then nothing is guarded */
	struct sigaction now;
	if (sigaction(SIGBUS, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
	    now.sa_sigaction == on_sigbus)
		installed = 1;
}

int rt_map_guard_watch(const void *base, size_t length, int writable)
{
	pthread_once(&install_once, install);
	if (!installed)
		return -ENOTSUP;
	if (!base || length == 0)
		return 0;
	for (size_t i = 0; i < RT_MAP_GUARD_MAX; i++) {
		struct watched *w = &table[i];
		uintptr_t free_slot = 0;
		if (!__atomic_compare_exchange_n(&w->base, &free_slot, 1, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		w->end = ((uintptr_t)base + length + page_size - 1) & ~(page_size - 1);
		w->writable = writable;
		__atomic_store_n(&w->shrunk, 0, __ATOMIC_RELAXED);
		/* release: end and writable are set before the handler can match the base */
		__atomic_store_n(&w->base, (uintptr_t)base, __ATOMIC_RELEASE);
		return 0;
	}
	return -ENOSPC;
}

static struct watched *find(const void *base)
{
	for (size_t i = 0; i < RT_MAP_GUARD_MAX; i++)
		if (base && __atomic_load_n(&table[i].base, __ATOMIC_ACQUIRE) == (uintptr_t)base)
			return &table[i];
	return NULL;
}

void rt_map_guard_forget(const void *base)
{
	struct watched *w = find(base);
	if (w)
		__atomic_store_n(&w->base, 0, __ATOMIC_RELEASE);
}

int rt_map_guard_shrunk(const void *base, uint64_t *offset)
{
	struct watched *w = find(base);
	uint64_t shrunk = w ? __atomic_load_n(&w->shrunk, __ATOMIC_ACQUIRE) : 0;
	if (!shrunk)
		return 0;
	*offset = shrunk - 1;
	return 1;
}
