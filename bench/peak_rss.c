/*
 * peak_rss.c - `bench_peak_rss COMMAND...`: run COMMAND with its output
 * thrown away and print its peak resident memory in KiB (ru_maxrss).
 *
 * The figure of a child counts what it held before exec too, so the child
 * must be small: a Python or shell wrapper forks a child of 4-10 MiB,
 * below which every peak it reports is the wrapper's own.  This one forks
 * a child of a few hundred KiB.  Exits 1 when COMMAND fails.
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_peak_rss COMMAND...\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("bench_peak_rss: fork");
		return 1;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	int status;
	struct rusage usage;
	if (wait4(pid, &status, 0, &usage) != pid) {
		perror("bench_peak_rss: wait4");
		return 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	printf("%ld\n", usage.ru_maxrss);
	return 0;
}
