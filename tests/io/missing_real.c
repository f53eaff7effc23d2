/*
 * missing_real.c DIR - calls whose real function the I/O interposer could
 * not find (hide_dlsym.c hides unlink and fopen from it): each must fail
 * with errno ENOSYS as the function fails (-1, NULL) and do nothing, twice
 * over.  Prints one line per call and exits 0 when all were so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;

static void expect(const char *what, int ok)
{
	printf("%s %s\n", ok ? "ok" : "FAIL", what);
	failures += !ok;
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	char path[4096];
	snprintf(path, sizeof(path), "%s/kept", argv[1]);
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "x", 1) != 1 || close(fd) != 0) {
		perror(path);
		return 2;
	}
	for (int round = 0; round < 2; round++) {
		errno = 0;
		int r = unlink(path);
		int err = errno;
		struct stat st;
		expect("unlink returns -1 with ENOSYS", r == -1 && err == ENOSYS);
		expect("the file is still there", stat(path, &st) == 0);
		errno = 0;
		FILE *f = fopen(path, "r");
		err = errno;
		expect("fopen returns NULL with ENOSYS", f == NULL && err == ENOSYS);
		if (f)
			fclose(f);
	}
	/* a function found as usual still works */
	fd = open(path, O_RDONLY);
	char c = 0;
	expect("open and read work", fd >= 0 && read(fd, &c, 1) == 1 && c == 'x');
	if (fd >= 0)
		close(fd);
	return failures ? 1 : 0;
}
