/*
 * privileged.c - a program linked with the static library, which the
 * privileged-process test installs set-user-ID and set-group-ID.
 *
 *   privileged --early
 *   privileged [--arena PATH] [--exec PROGRAM]
 *
 * It says whether it runs privileged (AT_SECURE) and as whom, records one
 * event (into PATH when given, through ringtrace_init's options: the
 * program's own choice), prints where its arena is, and with --exec runs
 * PROGRAM with an environment of its own making, FROM_PROGRAM=1 alone.
 * With --early the first event comes from an entry of the program's
 * .preinit_array, before the C library has set up environ.
 */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <ringtrace.h>

static void early_event(int argc, char **argv, char **envp)
{
	(void)envp;
	if (argc == 2 && strcmp(argv[1], "--early") == 0)
		RT_TRACE("early", 0);
}

__attribute__((section(".preinit_array"),
	       used)) static void (*const early_entry)(int, char **, char **) = early_event;

int main(int argc, char **argv)
{
	const char *arena = NULL, *exec = NULL;
	int early = argc == 2 && strcmp(argv[1], "--early") == 0;
	for (int i = 1; !early && i < argc; i += 2) {
		if (i + 1 < argc && strcmp(argv[i], "--arena") == 0) {
			arena = argv[i + 1];
		} else if (i + 1 < argc && strcmp(argv[i], "--exec") == 0) {
			exec = argv[i + 1];
		} else {
			fprintf(stderr,
				"usage: privileged --early | [--arena PATH] [--exec PROGRAM]\n");
			return 2;
		}
	}
	printf("secure %lu uid %lu euid %lu gid %lu egid %lu\n", getauxval(AT_SECURE),
	       (unsigned long)getuid(), (unsigned long)geteuid(), (unsigned long)getgid(),
	       (unsigned long)getegid());
	if (arena) {
		struct ringtrace_options options;
		memset(&options, 0, sizeof(options));
		options.size = sizeof(options);
		options.arena_path = arena;
		ringtrace_init(&options);
	}
	RT_TRACE("privileged", 1);
	const char *path = ringtrace_arena_path();
	printf("arena %s\n", path ? path : "none");
	fflush(stdout);
	if (exec) {
		char *args[] = {(char *)exec, NULL};
		char *env[] = {(char *)"FROM_PROGRAM=1", NULL};
		execve(exec, args, env);
		perror(exec);
		return 1;
	}
	return 0;
}
