/*
 * exec.c - a child started with an environment of its own is traced as its
 * parent is.
 *
 * Tracing is configured through the environment: the RINGTRACE_* variables
 * (the arena's path, its mode and size, the pid of the `ringtrace record`
 * that collects it...) and, for a program that is not linked with
 * ringtrace, the recording library in LD_PRELOAD.  A child started with the
 * process's own environment (fork, execv, execvp, system, popen) keeps
 * them; one given an environment of the caller's making (execve, execle,
 * execvpe, fexecve, execveat, posix_spawn, posix_spawnp) would lose them,
 * and with them its place in the recording: a linked child would record
 * into an arena of its own that is removed when it ends, a preloaded one
 * would not record at all.  So the library stands in front of those seven
 * functions and adds to the environment given:
 *   - each RINGTRACE_* variable of the process's environment that it does
 *     not name (one it names is the caller's choice, kept as it is);
 *   - each entry of the process's LD_PRELOAD whose file name starts with
 *     "libringtrace" and that its LD_PRELOAD lacks (compared by file name
 *     up to ".so", whatever the directory), after the entries it has.
 * The process's environment is read at the call, as execv would read it.
 * Nothing is added when the process's environment or the one given holds
 * RINGTRACE_INHERIT=0: the way for a program to start a child untraced on
 * purpose.  Nothing is added either by a privileged process (set-user-ID,
 * set-group-ID, file capabilities: config.c): its environment is its
 * caller's, which it does not obey, and a child it starts with an
 * environment of its own making, often after taking its privileges for
 * good, must not be handed the caller's settings to obey instead.  A
 * child started with an environment that already has all of it gets that
 * environment itself, not a copy.
 *
 * execve, execle and fexecve are async-signal-safe, and execve is what a
 * vfork() child calls, on its parent's stack and memory: the new
 * environment is built on the stack, in arrays sized by what they hold,
 * never with malloc, and the real functions are looked up (dlsym with
 * RTLD_NEXT: the next definition after this library, the C library's or
 * another interposer's) by the library's constructor, not at the call.
 * Called before the constructor ran, execve, fexecve and execveat make the
 * system call themselves; the others look the function up then (they are
 * not async-signal-safe anyway), and where none is found they fail with
 * ENOSYS, said once on stderr.  An environment of more than ENTRIES_MAX
 * entries, or a merged LD_PRELOAD longer than PRELOAD_MAX bytes, is passed
 * as it was given, and that too is said once: the stack is not a place for
 * unbounded arrays.
 *
 * An exec also ends the image that calls it, and with it the arena's
 * writer: the process runs on under the same pid, as another program with
 * an arena of its own.  So every exec of the process's own (not that of a
 * vfork child, which runs on its parent's memory, nor posix_spawn's, whose
 * child is another process) first says so in the header of the arena this
 * process owns: end_reason RT_END_EXEC and end_counter the moment, the
 * state left RUNNING (a collector drains the rings on: the other threads'
 * records, until the kernel ends them at the exec).  An exec that fails
 * takes it back: end_reason RT_END_UNKNOWN and end_counter 0, the header as
 * it was.  For that the library also stands in front of execv, execl,
 * execvp and execlp, which the C library does not make through execve.
 * The writes are atomics into the shared mapping, async-signal-safe; see
 * mark_exec() for their order, and for what wins when a fatal signal or an
 * exit ends the process at the same time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/record.h"

#define PREFIX "RINGTRACE_"
#define INHERIT "RINGTRACE_INHERIT"
#define PRELOAD "LD_PRELOAD"
#define OURS "libringtrace"
#define LENGTH(s) (sizeof(s) - 1)
#define ENTRIES_MAX 4096u /* 32 KiB of pointers on the stack at most */
#define PRELOAD_MAX 8192u

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*execvp_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

/* The next definitions, from the constructor (or the first call, for the last four). */
static struct {
	execve_fn execve;
	fexecve_fn fexecve;
	execveat_fn execveat;
	execvpe_fn execvpe;
	execvp_fn execvp;
	spawn_fn posix_spawn;
	spawn_fn posix_spawnp;
} real;

static void *resolve(void **slot, const char *name)
{
	void *fn = __atomic_load_n(slot, __ATOMIC_RELAXED);
	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		__atomic_store_n(slot, fn, __ATOMIC_RELAXED);
	}
	return fn;
}

__attribute__((constructor)) static void rt_exec_resolve(void)
{
	resolve((void **)&real.execve, "execve");
	resolve((void **)&real.fexecve, "fexecve");
	resolve((void **)&real.execveat, "execveat");
	resolve((void **)&real.execvpe, "execvpe");
	resolve((void **)&real.execvp, "execvp");
	resolve((void **)&real.posix_spawn, "posix_spawn");
	resolve((void **)&real.posix_spawnp, "posix_spawnp");
}

static void say_once(int *said, const char *a, const char *b)
{
	if (!__atomic_exchange_n(said, 1, __ATOMIC_RELAXED))
		rt_warn(a, b, NULL, NULL);
}

/* ---- the child's environment ----------------------------------------- */

/* Whether entry ("NAME=VALUE") sets the variable name (n bytes). */
static int sets(const char *entry, const char *name, size_t n)
{
	return strncmp(entry, name, n) == 0 && entry[n] == '=';
}

/* The value env gives the variable name (n bytes), or NULL. */
static const char *value_in(char *const env[], const char *name, size_t n)
{
	for (; *env; env++)
		if (sets(*env, name, n))
			return *env + n + 1;
	return NULL;
}

/* Whether env sets the variable entry sets. */
static int names(char *const env[], const char *entry)
{
	const char *eq = strchr(entry, '=');
	return value_in(env, entry, eq ? (size_t)(eq - entry) : strlen(entry)) != NULL;
}

static int inherit_off(char *const env[])
{
	const char *v = value_in(env, INHERIT, LENGTH(INHERIT));
	return v && strcmp(v, "0") == 0;
}

/* The next entry of an LD_PRELOAD list (ld.so splits at colons and spaces); 0 at its end. */
static size_t next_preload(const char **list, const char **entry)
{
	const char *s = *list;
	while (*s == ':' || *s == ' ')
		s++;
	const char *e = s;
	while (*e && *e != ':' && *e != ' ')
		e++;
	*entry = s;
	*list = e;
	return (size_t)(e - s);
}

/*
 * The file name of an n-byte path and its length, up to ".so" where it has
 * one: libringtrace.so.0 and libringtrace.so.0.1.0 are one library.
 */
static const char *library_name(const char *path, size_t n, size_t *length)
{
	const char *base = path;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '/')
			base = path + i + 1;
	size_t len = n - (size_t)(base - path);
	for (size_t i = 0; i + 3 <= len; i++)
		if (memcmp(base + i, ".so", 3) == 0) {
			len = i;
			break;
		}
	*length = len;
	return base;
}

static int is_ours(const char *path, size_t n)
{
	size_t length;
	const char *base = library_name(path, n, &length);
	return length >= LENGTH(OURS) && memcmp(base, OURS, LENGTH(OURS)) == 0;
}

/* Whether the list (may be NULL) preloads the library of the n-byte path, wherever from. */
static int preloads(const char *list, const char *path, size_t n)
{
	size_t length, other_length;
	const char *base = library_name(path, n, &length);
	const char *entry;
	size_t m;
	while (list && (m = next_preload(&list, &entry)) > 0) {
		const char *other = library_name(entry, m, &other_length);
		if (other_length == length && memcmp(other, base, length) == 0)
			return 1;
	}
	return 0;
}

/* Text written into a buffer of size bytes, or only measured (at NULL). */
struct text {
	char *at;
	size_t size;
	size_t length;
};

static void append(struct text *t, const char *s, size_t n)
{
	if (t->at && t->length + n < t->size)
		memcpy(t->at + t->length, s, n);
	t->length += n;
}

/*
 * "LD_PRELOAD=" with the entries of theirs (the child's list, may be NULL),
 * then those of ours that are ours and that theirs lacks; nothing when
 * theirs lacks none.
 */
static void merge_preload(struct text *t, const char *theirs, const char *ours)
{
	const char *entry;
	size_t n;
	while (ours && (n = next_preload(&ours, &entry)) > 0) {
		if (!is_ours(entry, n) || preloads(theirs, entry, n))
			continue;
		if (t->length == 0) {
			append(t, PRELOAD "=", LENGTH(PRELOAD) + 1);
			if (theirs && theirs[0]) {
				append(t, theirs, strlen(theirs));
				append(t, ":", 1);
			}
		} else {
			append(t, ":", 1);
		}
		append(t, entry, n);
	}
}

/* What the environment given to a child lacks. */
struct child_env {
	char *const *given;
	size_t count;	      /* entries given */
	size_t preload_index; /* of their LD_PRELOAD, count when they have none */
	size_t slots;	      /* of the new environment: given, added, an LD_PRELOAD, NULL */
	size_t preload_bytes; /* of the merged LD_PRELOAD entry with its NUL, 0: none */
};

static const char *their_preload(const struct child_env *c)
{
	return c->preload_index < c->count ? c->given[c->preload_index] + LENGTH(PRELOAD) + 1
					   : NULL;
}

/* 1 when envp lacks something of the process's (c says what), 0 when it is used as it is. */
static int plan(char *const envp[], struct child_env *c)
{
	static char *const none[] = {NULL};
	static int said;
	char *const *mine = environ;
	memset(c, 0, sizeof(*c));
	c->given = envp ? envp : none; /* Linux, and the C library's posix_spawn: no variable */
	if (!mine || rt_privileged() || inherit_off(mine) || inherit_off(c->given))
		return 0;
	c->preload_index = SIZE_MAX;
	for (; c->given[c->count]; c->count++)
		if (c->preload_index == SIZE_MAX &&
		    sets(c->given[c->count], PRELOAD, LENGTH(PRELOAD)))
			c->preload_index = c->count;
	if (c->preload_index == SIZE_MAX)
		c->preload_index = c->count;
	size_t added = 0;
	const char *ours = value_in(mine, PRELOAD, LENGTH(PRELOAD));
	for (char *const *p = mine; *p; p++)
		if (strncmp(*p, PREFIX, LENGTH(PREFIX)) == 0 && !names(c->given, *p))
			added++;
	struct text t = {NULL, 0, 0};
	merge_preload(&t, their_preload(c), ours);
	c->preload_bytes = t.length ? t.length + 1 : 0;
	if (!added && !c->preload_bytes)
		return 0;
	c->slots = c->count + added + 2;
	if (c->count + added > ENTRIES_MAX || c->preload_bytes > PRELOAD_MAX) {
		say_once(&said,
			 "a child's environment is too large to add the tracing variables to: ",
			 "it was started as it was given, and may not be traced");
		return 0;
	}
	return 1;
}

/*
 * The new environment, into list (c->slots entries) and preload
 * (c->preload_bytes).  The process's environment is read again: another
 * thread may have changed it since plan(), so nothing is written past
 * what plan() measured.
 */
static char **fill(const struct child_env *c, char **list, char *preload)
{
	char *const *mine = environ;
	struct text t = {preload, c->preload_bytes, 0};
	merge_preload(&t, their_preload(c), mine ? value_in(mine, PRELOAD, LENGTH(PRELOAD)) : NULL);
	int merged = t.length > 0 && t.length < t.size;
	if (merged)
		preload[t.length] = 0;
	size_t n = 0;
	for (size_t i = 0; i < c->count; i++)
		list[n++] = i == c->preload_index && merged ? preload : c->given[i];
	/* room is kept for an LD_PRELOAD and the NULL */
	for (char *const *p = mine; p && *p && n + 2 < c->slots; p++)
		if (strncmp(*p, PREFIX, LENGTH(PREFIX)) == 0 && !names(c->given, *p))
			list[n++] = *p;
	if (merged && c->preload_index == c->count)
		list[n++] = preload;
	list[n] = NULL;
	return list;
}

/* ---- the arena's end --------------------------------------------------- */

/*
 * Say in the header that this image ends by exec, just before the exec:
 * the end_counter it wrote, or 0 when it wrote nothing (no arena of this
 * process's own is on, a vfork child, or another end is there).
 *
 * end_counter is 0 until some end is written, and every writer of an end
 * writes end_counter before end_reason.  So an exec claims the end with a
 * compare-and-swap of end_counter from 0, then publishes end_reason with a
 * compare-and-swap from UNKNOWN (release: a reader that sees EXEC sees the
 * counter).  The crash handler (RT_END_SIGNAL) and the exit (RT_END_EXIT)
 * store theirs unconditionally: a fatal signal or an exit at the same time
 * is written over EXEC, or makes the second swap fail and then stands,
 * counter and all, and an exec never writes over them.  Of two threads that
 * exec at once, only the first to swap end_counter marks the arena.
 */
static uint64_t mark_exec(void)
{
	/* a vfork child: the writer, the arena and the header are its parent's */
	if (__atomic_load_n(&ringtrace__tls_writer.lent, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&ringtrace__tls_writer.vfork_child, __ATOMIC_RELAXED))
		return 0;
	if (!rt_arena_on() || getpid() != rt_arena.owner)
		return 0;
	struct rt_arena_header *h = rt_arena.header;
	if (__atomic_load_n(&h->end_reason, __ATOMIC_RELAXED) != RT_END_UNKNOWN ||
	    __atomic_load_n(&h->end_counter, __ATOMIC_RELAXED) != 0)
		return 0;
	rt_clock_refresh(h, 1); /* the clock up to the end, as at exit and at a crash */
	uint64_t now = ringtrace__counter();
	uint64_t none = 0;
	if (!now || !__atomic_compare_exchange_n(&h->end_counter, &none, now, 0, __ATOMIC_RELAXED,
						 __ATOMIC_RELAXED))
		return 0;
	uint32_t unknown = RT_END_UNKNOWN;
	/* publishes: end_counter */
	if (!__atomic_compare_exchange_n(&h->end_reason, &unknown, (uint32_t)RT_END_EXEC, 0,
					 __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		return 0; /* a signal or an exit ended it meanwhile: theirs stands, counter too */
	return now;
}

/*
 * The exec failed: the header as it was before mark_exec() wrote marked,
 * unless another end was written since.  end_reason first, so that a next
 * exec never claims end_counter while EXEC is still there.
 */
static void unmark_exec(uint64_t marked)
{
	if (!marked)
		return;
	struct rt_arena_header *h = rt_arena.header;
	uint32_t exec = RT_END_EXEC;
	if (!__atomic_compare_exchange_n(&h->end_reason, &exec, (uint32_t)RT_END_UNKNOWN, 0,
					 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return;
	/* publishes: end_reason UNKNOWN, before end_counter is free to claim again */
	__atomic_compare_exchange_n(&h->end_counter, &marked, 0, 0, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

/* What an exec returns once it failed, its errno kept: marked taken back first. */
static int failed(int result, uint64_t marked)
{
	unmark_exec(marked);
	return result;
}

/* ---- the functions ------------------------------------------------------ */

static int unavailable(const char *name)
{
	static int said;
	say_once(&said, "no next definition of ", name);
	errno = ENOSYS;
	return -1;
}

static int call_execve(const char *path, char *const argv[], char *const envp[])
{
	execve_fn fn = __atomic_load_n(&real.execve, __ATOMIC_RELAXED);
	uint64_t marked = mark_exec();
	if (fn)
		return failed(fn(path, argv, envp), marked);
	return failed((int)syscall(SYS_execve, path, argv, envp), marked);
}

static int exec_with_env(const char *path, char *const argv[], char *const envp[])
{
	struct child_env c;
	if (!plan(envp, &c))
		return call_execve(path, argv, envp);
	char *list[c.slots];
	char preload[c.preload_bytes + 1];
	return call_execve(path, argv, fill(&c, list, preload));
}

RT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	return exec_with_env(path, argv, envp);
}

/*
 * The list of an execl-style call: arg, then the arguments after it up to
 * the NULL.  Counted first (arg0 is non-null, as the C library declares
 * it), then copied into argv of count + 1 entries, leaving ap after the
 * NULL (execle's envp comes next).
 */
static size_t count_args(va_list *ap)
{
	va_list copy;
	va_copy(copy, *ap);
	size_t argc = 1;
	while (va_arg(copy, const char *))
		argc++;
	va_end(copy);
	return argc;
}

static void copy_args(char **argv, const char *arg, size_t argc, va_list *ap)
{
	argv[0] = (char *)arg;
	for (size_t i = 1; i <= argc; i++)
		argv[i] = va_arg(*ap, char *); /* argv[argc]: the NULL */
}

/* execle(path, arg0, ..., (char *)NULL, envp) */
RT_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t argc = count_args(&ap);
	char *argv[argc + 1];
	copy_args(argv, arg, argc, &ap);
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return exec_with_env(path, argv, envp);
}

/* execv and execl: the process's environment, which lacks nothing; the arena is marked. */
RT_EXPORT int execv(const char *path, char *const argv[])
{
	return call_execve(path, argv, environ);
}

RT_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t argc = count_args(&ap);
	char *argv[argc + 1];
	copy_args(argv, arg, argc, &ap);
	va_end(ap);
	return call_execve(path, argv, environ);
}

/* execvp and execlp: the C library's execvp searches PATH; the arena is marked. */
static int exec_searched(const char *file, char *const argv[])
{
	execvp_fn fn = (execvp_fn)resolve((void **)&real.execvp, "execvp");
	if (!fn)
		return unavailable("execvp");
	uint64_t marked = mark_exec();
	return failed(fn(file, argv), marked);
}

RT_EXPORT int execvp(const char *file, char *const argv[])
{
	return exec_searched(file, argv);
}

RT_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t argc = count_args(&ap);
	char *argv[argc + 1];
	copy_args(argv, arg, argc, &ap);
	va_end(ap);
	return exec_searched(file, argv);
}

RT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execvpe_fn fn = (execvpe_fn)resolve((void **)&real.execvpe, "execvpe");
	if (!fn)
		return unavailable("execvpe");
	struct child_env c;
	uint64_t marked;
	if (!plan(envp, &c)) {
		marked = mark_exec();
		return failed(fn(file, argv, envp), marked);
	}
	char *list[c.slots];
	char preload[c.preload_bytes + 1];
	char **env = fill(&c, list, preload);
	marked = mark_exec();
	return failed(fn(file, argv, env), marked);
}

static int call_execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			 int flags)
{
	execveat_fn fn = __atomic_load_n(&real.execveat, __ATOMIC_RELAXED);
	uint64_t marked = mark_exec();
	if (fn)
		return failed(fn(dirfd, path, argv, envp, flags), marked);
	return failed((int)syscall(SYS_execveat, dirfd, path, argv, envp, flags), marked);
}

RT_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
		       int flags)
{
	struct child_env c;
	if (!plan(envp, &c))
		return call_execveat(dirfd, path, argv, envp, flags);
	char *list[c.slots];
	char preload[c.preload_bytes + 1];
	return call_execveat(dirfd, path, argv, fill(&c, list, preload), flags);
}

static int call_fexecve(int fd, char *const argv[], char *const envp[])
{
	fexecve_fn fn = __atomic_load_n(&real.fexecve, __ATOMIC_RELAXED);
	uint64_t marked = mark_exec();
	if (fn)
		return failed(fn(fd, argv, envp), marked);
	return failed((int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH), marked);
}

RT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	struct child_env c;
	if (!plan(envp, &c))
		return call_fexecve(fd, argv, envp);
	char *list[c.slots];
	char preload[c.preload_bytes + 1];
	return call_fexecve(fd, argv, fill(&c, list, preload));
}

/* posix_spawn and posix_spawnp: the error number is returned, errno is not theirs. */
static int spawn(spawn_fn fn, const char *name, pid_t *pid, const char *path,
		 const posix_spawn_file_actions_t *actions, const posix_spawnattr_t *attr,
		 char *const argv[], char *const envp[])
{
	if (!fn) {
		int saved = errno;
		unavailable(name);
		errno = saved;
		return ENOSYS;
	}
	struct child_env c;
	if (!plan(envp, &c))
		return fn(pid, path, actions, attr, argv, envp);
	char *list[c.slots];
	char preload[c.preload_bytes + 1];
	return fn(pid, path, actions, attr, argv, fill(&c, list, preload));
}

RT_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,
			  const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn((spawn_fn)resolve((void **)&real.posix_spawn, "posix_spawn"), "posix_spawn",
		     pid, path, actions, attr, argv, envp);
}

RT_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *actions,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	return spawn((spawn_fn)resolve((void **)&real.posix_spawnp, "posix_spawnp"), "posix_spawnp",
		     pid, file, actions, attr, argv, envp);
}
