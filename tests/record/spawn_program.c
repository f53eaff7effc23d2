/*
 * spawn_program.c - a traced program whose children are started with an
 * environment of their own, and one that turns into a daemon; for
 * tests/record/spawn.sh and tests/record/daemon.sh.
 *
 *   spawn_program child EVENTS
 *       prints "child PID SPAWN ARENA PRELOAD" (the values of SPAWN_ENV,
 *       RINGTRACE_ARENA and LD_PRELOAD, "-" for one not set), then records
 *       EVENTS events "child" and exits 0.
 *   spawn_program HOW EVENTS CHILD [VAR=VALUE...]
 *       records EVENTS events "parent", then starts "CHILD child EVENTS"
 *       with the environment {SPAWN_ENV=given, PATH=/usr/bin:/bin,
 *       VAR=VALUE...} by HOW: execve, execle, execvpe, fexecve, execveat
 *       (each in a forked child), vfork (vfork, then execve), posix_spawn or
 *       posix_spawnp; waits for it and exits 0 when it exited 0.
 *   spawn_program daemon EVENTS GO
 *       records one event "parent" and forks a child that calls setsid,
 *       forks the daemon and exits; then exits 3.  The daemon waits until
 *       the program has exited (a pipe's last writer is gone) and prints
 *       "daemon PID"; waits for the file GO, records EVENTS / 2 events
 *       "daemon" and prints "half PID"; waits for the file GO.2, records the
 *       other events and exits 0.  (Each wait: 30 s at most.)
 *
 * Built twice: linked with ringtrace (RINGTRACE_API 1: the events are
 * RT_TRACE events), and not linked but compiled with -finstrument-functions
 * (RINGTRACE_API 0, run under `ringtrace record`, which preloads the
 * library: the events are calls of parent_step, child_step and
 * daemon_step).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#if RINGTRACE_API
#include <ringtrace.h>
#endif

#define MAX_EXTRA 8

__attribute__((noinline)) static void parent_step(unsigned i)
{
#if RINGTRACE_API
	RT_TRACE("parent", i);
#else
	__asm__ volatile("" : : "r"(i) : "memory");
#endif
}

__attribute__((noinline)) static void child_step(unsigned i)
{
#if RINGTRACE_API
	RT_TRACE("child", i);
#else
	__asm__ volatile("" : : "r"(i) : "memory");
#endif
}

__attribute__((noinline)) static void daemon_step(unsigned i)
{
#if RINGTRACE_API
	RT_TRACE("daemon", i);
#else
	__asm__ volatile("" : : "r"(i) : "memory");
#endif
}

static const char *or_dash(const char *s)
{
	return s ? s : "-";
}

static int run_child(unsigned events)
{
	printf("child %d %s %s %s\n", (int)getpid(), or_dash(getenv("SPAWN_ENV")),
	       or_dash(getenv("RINGTRACE_ARENA")), or_dash(getenv("LD_PRELOAD")));
	fflush(stdout);
	for (unsigned i = 0; i < events; i++)
		child_step(i);
	return 0;
}

/* In a forked child: exec by how, or nothing when how is not an exec of this kind. */
static void exec_by(const char *how, const char *child, char **argv, char **envp)
{
	if (strcmp(how, "execve") == 0) {
		execve(child, argv, envp);
	} else if (strcmp(how, "execle") == 0) {
		execle(child, argv[0], argv[1], argv[2], (char *)NULL, envp);
	} else if (strcmp(how, "execvpe") == 0) {
		execvpe(child, argv, envp);
	} else if (strcmp(how, "fexecve") == 0) {
		int fd = open(child, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			fexecve(fd, argv, envp);
	} else if (strcmp(how, "execveat") == 0) {
		execveat(AT_FDCWD, child, argv, envp, 0);
	}
}

static int run_spawn(const char *how, unsigned events, const char *child, int extra_count,
		     char **extra)
{
	for (unsigned i = 0; i < events; i++)
		parent_step(i);
	char count[32];
	snprintf(count, sizeof(count), "%u", events);
	char *argv[] = {(char *)child, "child", count, NULL};
	char *envp[3 + MAX_EXTRA] = {"SPAWN_ENV=given", "PATH=/usr/bin:/bin"};
	for (int i = 0; i < extra_count && i < MAX_EXTRA; i++)
		envp[2 + i] = extra[i];
	fflush(NULL);
	pid_t pid = -1;
	if (strcmp(how, "posix_spawn") == 0 || strcmp(how, "posix_spawnp") == 0) {
		int err = how[11] == 'p' ? posix_spawnp(&pid, child, NULL, NULL, argv, envp)
					 : posix_spawn(&pid, child, NULL, NULL, argv, envp);
		if (err != 0) {
			fprintf(stderr, "%s: %s\n", how, strerror(err));
			return 1;
		}
	} else if (strcmp(how, "vfork") == 0) {
		pid = vfork();
		if (pid == 0) {
			execve(child, argv, envp);
			_exit(127);
		}
	} else {
		pid = fork();
		if (pid == 0) {
			exec_by(how, child, argv, envp);
			_exit(127);
		}
	}
	int status = 0;
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* Until the file path exists, 30 s at most. */
static void wait_for_file(const char *path)
{
	struct stat st;
	for (int waited = 0; stat(path, &st) != 0 && waited < 30000; waited++)
		usleep(1000);
}

static int run_daemon(unsigned events, const char *go)
{
	int gone[2];
	if (pipe(gone) != 0)
		return 1;
	parent_step(0);
	fflush(NULL);
	pid_t child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		close(gone[1]);
		setsid();
		pid_t daemon = fork();
		if (daemon < 0)
			_exit(1);
		if (daemon > 0)
			_exit(0);
		/* the program and its first child closed their ends: end of file */
		char c;
		while (read(gone[0], &c, 1) > 0)
			;
		close(gone[0]);
		printf("daemon %d\n", (int)getpid());
		fflush(stdout);
		wait_for_file(go);
		unsigned half = events / 2;
		for (unsigned i = 0; i < half; i++)
			daemon_step(i);
		printf("half %d\n", (int)getpid());
		fflush(stdout);
		char go2[4096];
		snprintf(go2, sizeof(go2), "%s.2", go);
		wait_for_file(go2);
		for (unsigned i = half; i < events; i++)
			daemon_step(i);
		exit(0);
	}
	close(gone[0]);
	int status = 0;
	waitpid(child, &status, 0);
	return 3;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "child") == 0)
		return run_child((unsigned)atoi(argv[2]));
	if (argc == 4 && strcmp(argv[1], "daemon") == 0)
		return run_daemon((unsigned)atoi(argv[2]), argv[3]);
	if (argc >= 4)
		return run_spawn(argv[1], (unsigned)atoi(argv[2]), argv[3], argc - 4, argv + 4);
	fprintf(stderr, "usage: spawn_program child EVENTS | HOW EVENTS CHILD [VAR=VALUE...] | "
			"daemon EVENTS GO\n");
	return 2;
}
