/*
 * arena_end.c - print how an arena says its process ended, one field a
 * line, for tests/crash/crash.sh:
 *
 *   state 1
 *   end_reason 2
 *   end_signal 11
 *   end_tid 1234
 *   end_address 0x0
 *   end_counter 123456789
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include <ringtrace/format.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: arena_end ARENA\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct rt_arena_header h;
	if (fd < 0 || pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
		perror(argv[1]);
		return 1;
	}
	close(fd);
	printf("state %" PRIu32 "\n", h.state);
	printf("end_reason %" PRIu32 "\n", h.end_reason);
	printf("end_signal %" PRId32 "\n", h.end_signal);
	printf("end_tid %" PRId32 "\n", h.end_tid);
	printf("end_address 0x%" PRIx64 "\n", h.end_address);
	printf("end_counter %" PRIu64 "\n", h.end_counter);
	return 0;
}
