/*
 * proc_stat.c - reading /proc/PID/stat with open/read only, so that the
 * recording library may call it from a signal handler.
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/proc_stat.h"

static size_t put(char *out, size_t at, size_t size, const char *s)
{
	for (; *s && at + 1 < size; s++)
		out[at++] = *s;
	return at;
}

static size_t put_decimal(char *out, size_t at, size_t size, int v)
{
	char digits[16];
	size_t n = 0;
	unsigned u = v < 0 ? 0u : (unsigned)v;
	do {
		digits[n++] = (char)('0' + u % 10);
		u /= 10;
	} while (u && n < sizeof(digits));
	while (n && at + 1 < size)
		out[at++] = digits[--n];
	return at;
}

void rt_proc_stat_path(char *out, size_t size, int pid, int tid)
{
	if (size == 0)
		return;
	size_t at = put(out, 0, size, "/proc/");
	at = put_decimal(out, at, size, pid);
	if (tid > 0) {
		at = put(out, at, size, "/task/");
		at = put_decimal(out, at, size, tid);
	}
	at = put(out, at, size, "/stat");
	out[at] = 0;
}

int rt_proc_stat_read(const char *path, struct rt_proc_stat *out)
{
	char buf[1024];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* the command name (field 2) may hold spaces and ')': fields resume after the last ')' */
	const char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -1;
	out->state = p[2];
	int field = 2;
	for (; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	uint64_t start = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		start = start * 10 + (uint64_t)(*p - '0');
	out->start_time = start;
	return 0;
}
