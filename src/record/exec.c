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
 * purpose.  A child started with an environment that already has all of
 * it gets that environment itself, not a copy.
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
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			const posix_spawnattr_t *, char *const[], char *const[]);

/* The next definitions, from the constructor (or the first call, for the last three). */
static struct {
	execve_fn execve;
	fexecve_fn fexecve;
	execveat_fn execveat;
	execvpe_fn execvpe;
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
	if (!mine || inherit_off(mine) || inherit_off(c->given))
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
	if (fn)
		return fn(path, argv, envp);
	return (int)syscall(SYS_execve, path, argv, envp);
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
 * execle(path, arg0, ..., (char *)NULL, envp): the arguments on the stack,
 * counted from arg0 as the C library counts them (it declares arg0 non-null).
 */
RT_EXPORT int execle(const char *path, const char *arg, ...)
{
	size_t argc = 1;
	va_list ap;
	va_start(ap, arg);
	while (va_arg(ap, const char *))
		argc++;
	va_end(ap);
	char *argv[argc + 1];
	va_start(ap, arg);
	argv[0] = (char *)arg;
	for (size_t i = 1; i <= argc; i++)
		argv[i] = va_arg(ap, char *); /* argv[argc]: the NULL */
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return exec_with_env(path, argv, envp);
}

RT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	execvpe_fn fn = (execvpe_fn)resolve((void **)&real.execvpe, "execvpe");
	if (!fn)
		return unavailable("execvpe");
	struct child_env c;
	if (!plan(envp, &c))
		return fn(file, argv, envp);
	char *list[c.slots];
	char preload[c.preload_bytes + 1];
	return fn(file, argv, fill(&c, list, preload));
}

static int call_execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
			 int flags)
{
	execveat_fn fn = __atomic_load_n(&real.execveat, __ATOMIC_RELAXED);
	if (fn)
		return fn(dirfd, path, argv, envp, flags);
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
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
	if (fn)
		return fn(fd, argv, envp);
	return (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
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
