/*
 * modules.c - the module map: which object (program, shared library,
 * plugin) was loaded where, and when, so that a raw address recorded while
 * the program ran can be named later against the object that was there at
 * that time, even if another object took its addresses since.
 *
 * Who writes what.  One pass (update_locked) walks the loader's list with
 * dl_iterate_phdr: an object the table does not hold as loaded gets a new
 * entry (claimed, filled, valid published last); an entry held as loaded
 * whose object the walk no longer finds gets its unload_counter, once, and
 * module_unloads is bumped after it.  Entries are never reused or
 * overwritten: a full table, or a full string area, counts the object in
 * modules_refused and goes on.  Passes run when the arena starts (the
 * rundown: those entries are flagged "at start" with the trace's start
 * counter) and after every successful dlopen and dlclose, which this
 * library interposes (the real ones come from dlsym(RTLD_NEXT), which works
 * whether the library is linked in or preloaded).
 *
 * One mutex serialises the passes.  The rundown may run inside a signal
 * handler (a program's first event can come from one): it only tries the
 * lock, and skips when this thread is inside dlopen or dlclose (the loader
 * is mid-change then) - the pass that follows the call does the rundown's
 * work, still flagged "at start".  The vdso is skipped: it is no file, and
 * nothing records addresses inside it.
 *
 * Paths are absolute.  The loader names an object as it was asked for it:
 * dlopen("./libx.so"), LD_PRELOAD=./libx.so and LD_LIBRARY_PATH=. give
 * relative names, which a reader in another directory, or the program
 * itself after a chdir, would resolve to another file or none.  Such an
 * object is named by the file the kernel has mapped at its first address
 * (/proc/self/maps), which holds whatever the working directory was when
 * it was loaded; a name that cannot be found there is kept as it was.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/record.h"

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
/* The arena whose rundown is still to be done (a forked child makes its own). */
static struct rt_arena_header *rundown_pending;
/* This thread is inside the real dlopen or dlclose. */
static __thread int in_loader __attribute__((tls_model("initial-exec")));

/* One object as the loader lists it. */
struct seen {
	uint64_t base, low, high;
	const char *name; /* dlpi_name; "" for the program */
	const ElfW(Phdr) * phdr;
	uint16_t phnum;
};

static int seen_from_info(const struct dl_phdr_info *info, struct seen *out)
{
	uint64_t low = UINT64_MAX, high = 0;
	for (uint16_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *p = &info->dlpi_phdr[i];
		if (p->p_type != PT_LOAD || p->p_memsz == 0)
			continue;
		uint64_t from = (uint64_t)info->dlpi_addr + p->p_vaddr;
		if (from < low)
			low = from;
		if (from + p->p_memsz > high)
			high = from + p->p_memsz;
	}
	if (low >= high)
		return 0;
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	if (vdso && vdso >= low && vdso < high)
		return 0;
	out->base = info->dlpi_addr;
	out->low = low;
	out->high = high;
	out->name = info->dlpi_name ? info->dlpi_name : "";
	out->phdr = info->dlpi_phdr;
	out->phnum = info->dlpi_phnum;
	return 1;
}

static size_t build_id_of(const struct seen *o, uint8_t *out)
{
	for (uint16_t i = 0; i < o->phnum; i++) {
		const ElfW(Phdr) *p = &o->phdr[i];
		if (p->p_type != PT_NOTE)
			continue;
		/* the notes are mapped: a load address computed from the headers */
		// NOLINTNEXTLINE(performance-no-int-to-ptr)
		const uint8_t *notes = (const uint8_t *)(uintptr_t)(o->base + p->p_vaddr);
		size_t n = rt_build_id_from_notes(notes, p->p_memsz, out, RT_BUILD_ID_MAX);
		if (n)
			return n;
	}
	return 0;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * The path of the file mapped at addr, from /proc/self/maps, into out (size
 * bytes, NUL-terminated); its length, 0 if none.  System calls only, and
 * no allocation: a rundown may run in a signal handler, and the I/O
 * interposer is not to see the library's own reads.  Each line is
 * "START-END PERMS OFFSET DEV INODE   PATH", read a byte at a time through
 * a small buffer, so that no line is too long for it.
 */
static size_t mapped_path(uint64_t addr, char *out, size_t size)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[512];
	uint64_t start = 0, end = 0;
	int field = 0; /* 0 START, 1 END, 2 to 5 the numbers between, 6 the path */
	int found = 0, done = 0;
	size_t n = 0;
	long got;
	while (!done && (got = syscall(SYS_read, fd, buf, sizeof(buf))) > 0) {
		for (long i = 0; i < got && !done; i++) {
			char c = buf[i];
			if (c == '\n') {
				done = found;
				start = end = 0;
				field = 0;
				continue;
			}
			if (field <= 1) {
				int digit = hex_digit(c);
				if (digit >= 0 && field == 0) {
					start = start * 16 + (uint64_t)digit;
				} else if (digit >= 0) {
					end = end * 16 + (uint64_t)digit;
				} else if (c == '-') {
					field = 1;
				} else if (c == ' ') {
					found = start <= addr && addr < end;
					field = 2;
				}
			} else if (field <= 5) {
				if (c == ' ')
					field++;
			} else if (found && (n || c != ' ') && n + 1 < size) {
				out[n++] = c;
			}
		}
	}
	syscall(SYS_close, fd);
	static const char deleted[] = " (deleted)";
	if (n >= sizeof(deleted) - 1 &&
	    memcmp(out + n - (sizeof(deleted) - 1), deleted, sizeof(deleted) - 1) == 0)
		n -= sizeof(deleted) - 1;
	if (!found || !n || out[0] != '/')
		return 0;
	out[n] = 0;
	return n;
}

/* Whether entry e stands for object o, loaded now. */
static int entry_is(const struct rt_module_entry *e, const struct seen *o)
{
	return e->base == o->base && e->low == o->low && e->high == o->high;
}

static void add_entry(struct rt_arena_header *h, const struct seen *o, int at_start)
{
	char named[PATH_MAX];
	const char *path = o->name;
	uint32_t flags = at_start ? RT_MODULE_F_AT_START : 0;
	if (!path[0]) {
		/* the program: the loader lists it first, with no name */
		rt_process_program(named, sizeof(named));
		path = named;
		flags |= RT_MODULE_F_MAIN;
	} else if (path[0] != '/' && mapped_path(o->low, named, sizeof(named))) {
		path = named;
	}
	size_t length = strnlen(path, RT_MODULE_PATH_MAX + 1);
	if (length > RT_MODULE_PATH_MAX) {
		length = RT_MODULE_PATH_MAX;
		flags |= RT_MODULE_F_PATH_CUT;
	}
	uint32_t index = h->modules_used;
	uint32_t at = index < h->module_capacity ? rt_strings_claim(length + 1) : UINT32_MAX;
	if (at == UINT32_MAX) {
		__atomic_fetch_add(&h->modules_refused, 1, __ATOMIC_RELAXED);
		return;
	}
	/* claimed before written, as sites are: entries past modules_used are zero */
	__atomic_store_n(&h->modules_used, index + 1, __ATOMIC_RELAXED);
	memcpy(rt_arena.strings + at, path, length);
	rt_arena.strings[at + length] = 0;
	struct rt_module_entry *e = &rt_arena.modules[index];
	e->flags = flags;
	e->base = o->base;
	e->low = o->low;
	e->high = o->high;
	e->load_counter = at_start ? h->start.counter : ringtrace__counter();
	e->path_offset = at;
	e->path_length = (uint32_t)length;
	e->build_id_size = (uint32_t)build_id_of(o, e->build_id);
	/* publishes: the entry and its path */
	__atomic_store_n(&e->valid, 1, __ATOMIC_RELEASE);
}

struct walk {
	struct rt_arena_header *h;
	uint8_t *present; /* per entry: its object is still listed */
	uint32_t count;	  /* entries held when the walk began */
	int at_start;
};

static int on_object(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	struct walk *w = data;
	struct seen o;
	if (!seen_from_info(info, &o))
		return 0;
	for (uint32_t i = 0; i < w->count; i++) {
		const struct rt_module_entry *e = &rt_arena.modules[i];
		if (e->valid && !e->unload_counter && entry_is(e, &o)) {
			if (w->present)
				w->present[i] = 1;
			return 0;
		}
	}
	add_entry(w->h, &o, w->at_start);
	return 0;
}

/* One pass over the loader's list; modules_lock held. */
static void update_locked(void)
{
	struct rt_arena_header *h = rt_arena.header;
	if (!h || !h->module_capacity || !rt_arena.modules)
		return;
	struct walk w = {h, NULL, h->modules_used,
			 __atomic_load_n(&rundown_pending, __ATOMIC_RELAXED) == h};
	if (w.count > h->module_capacity)
		w.count = h->module_capacity;
	/* without the array nothing is marked unloaded this time: the next pass will */
	if (w.count && !w.at_start)
		w.present = calloc(w.count, 1);
	dl_iterate_phdr(on_object, &w);
	__atomic_store_n(&rundown_pending, NULL, __ATOMIC_RELAXED);
	if (!w.present)
		return;
	uint64_t now = ringtrace__counter();
	for (uint32_t i = 0; i < w.count; i++) {
		struct rt_module_entry *e = &rt_arena.modules[i];
		if (w.present[i] || !e->valid || e->unload_counter)
			continue;
		__atomic_store_n(&e->unload_counter, now, __ATOMIC_RELAXED);
		/* publishes: the unload_counter written above */
		__atomic_fetch_add(&h->module_unloads, 1, __ATOMIC_RELEASE);
	}
	free(w.present);
}

void rt_modules_rundown(void)
{
	struct rt_arena_header *h = rt_arena.header;
	if (!h || !h->module_capacity)
		return;
	__atomic_store_n(&rundown_pending, h, __ATOMIC_RELAXED);
	if (in_loader || pthread_mutex_trylock(&modules_lock) != 0)
		return;
	update_locked();
	pthread_mutex_unlock(&modules_lock);
}

static void update(void)
{
	if (!rt_arena_on() || getpid() != rt_arena.owner)
		return;
	pthread_mutex_lock(&modules_lock);
	update_locked();
	pthread_mutex_unlock(&modules_lock);
}

RT_EXPORT void *dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	void *(*fn)(const char *, int) = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!fn) {
		fn = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
		if (!fn)
			return NULL;
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	in_loader++;
	void *handle = fn(file, mode);
	in_loader--;
	/* a rundown this call put off is done here, even when it failed */
	if (handle || __atomic_load_n(&rundown_pending, __ATOMIC_RELAXED))
		update();
	return handle;
}

RT_EXPORT int dlclose(void *handle)
{
	static int (*real)(void *);
	int (*fn)(void *) = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!fn) {
		fn = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!fn)
			return -1;
		__atomic_store_n(&real, fn, __ATOMIC_RELEASE);
	}
	in_loader++;
	int rc = fn(handle);
	in_loader--;
	if (rc == 0 || __atomic_load_n(&rundown_pending, __ATOMIC_RELAXED))
		update();
	return rc;
}
