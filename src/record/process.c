/*
 * process.c - facts about the traced process that the arena records so that
 * it explains itself later: program path, build-id, pid start time.  Uses
 * the auxiliary vector rather than dl_iterate_phdr so that no loader lock is
 * taken (the first event may come from a signal handler).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "record/record.h"

pid_t rt_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

void rt_process_program(char *out, size_t size)
{
	ssize_t n = readlink("/proc/self/exe", out, size - 1);
	out[n > 0 ? n : 0] = 0;
}

static size_t build_id_from_notes(const uint8_t *p, size_t len, uint8_t *out, size_t size)
{
	size_t off = 0;
	while (off + sizeof(ElfW(Nhdr)) <= len) {
		const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(p + off);
		size_t name = (nh->n_namesz + 3u) & ~3u;
		size_t desc = (nh->n_descsz + 3u) & ~3u;
		size_t next = off + sizeof(*nh) + name + desc;
		if (next > len || next <= off)
			return 0;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    memcmp(p + off + sizeof(*nh), "GNU", 4) == 0) {
			size_t n = nh->n_descsz < size ? nh->n_descsz : size;
			memcpy(out, p + off + sizeof(*nh) + name, n);
			return n;
		}
		off = next;
	}
	return 0;
}

size_t rt_process_build_id(uint8_t *out, size_t size)
{
	/* NOLINTNEXTLINE(performance-no-int-to-ptr): the auxiliary vector hands out addresses as
	 * integers */
	const ElfW(Phdr) *phdr = (const ElfW(Phdr) *)getauxval(AT_PHDR);
	size_t phnum = getauxval(AT_PHNUM);
	if (!phdr || !phnum)
		return 0;
	/* the load bias: where PT_PHDR says the headers are vs where they are */
	uintptr_t bias = 0;
	for (size_t i = 0; i < phnum; i++)
		if (phdr[i].p_type == PT_PHDR)
			bias = (uintptr_t)phdr - phdr[i].p_vaddr;
	for (size_t i = 0; i < phnum; i++) {
		if (phdr[i].p_type != PT_NOTE)
			continue;
		/* NOLINTNEXTLINE(performance-no-int-to-ptr): a load address computed from the
		 * headers */
		size_t n = build_id_from_notes((const uint8_t *)(bias + phdr[i].p_vaddr),
					       phdr[i].p_memsz, out, size);
		if (n)
			return n;
	}
	return 0;
}

uint64_t rt_process_start_time(pid_t pid)
{
	char path[64], buf[1024];
	char digits[24];
	size_t d = 0;
	/* format the path without stdio: async-signal-safe */
	const char *prefix = "/proc/";
	long v = pid;
	do {
		digits[d++] = (char)('0' + v % 10);
		v /= 10;
	} while (v && d < sizeof(digits));
	size_t p = strlen(prefix);
	memcpy(path, prefix, p);
	while (d)
		path[p++] = digits[--d];
	memcpy(path + p, "/stat", 6);

	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	/* the command name may hold spaces and parentheses: count after the last ')' */
	char *s = strrchr(buf, ')');
	if (!s)
		return 0;
	int field = 2;
	for (; *s && field < 22; s++)
		if (*s == ' ')
			field++;
	uint64_t start = 0;
	for (; *s >= '0' && *s <= '9'; s++)
		start = start * 10 + (uint64_t)(*s - '0');
	return start;
}

void rt_warn(const char *a, const char *b, const char *c, const char *d)
{
	char line[1024];
	size_t n = 0;
	const char *parts[] = {"ringtrace: ", a, b, c, d, "\n"};
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (!parts[i])
			continue;
		size_t len = strlen(parts[i]);
		if (len > sizeof(line) - 1 - n)
			len = sizeof(line) - 1 - n;
		memcpy(line + n, parts[i], len);
		n += len;
	}
	if (n && line[n - 1] != '\n')
		line[n - 1] = '\n';
	ssize_t ignored = write(STDERR_FILENO, line, n);
	(void)ignored;
}
