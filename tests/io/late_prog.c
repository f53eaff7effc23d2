/*
 * late_prog.c - a program whose file is opened before a reader attaches.
 *
 *     late_prog FILE GO
 *
 * Opens FILE, writes a line, says "ready PID" on stderr, waits until GO
 * exists, writes three more lines and closes FILE.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "before\n", 7) != 7)
		return 1;
	dprintf(2, "ready %d\n", (int)getpid());
	while (access(argv[2], F_OK) != 0)
		usleep(10000);
	for (int i = 0; i < 3; i++)
		if (write(fd, "after\n", 6) != 6)
			return 1;
	return close(fd) == 0 ? 0 : 1;
}
