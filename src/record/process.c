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

#include "common/proc_stat.h"
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

size_t rt_build_id_from_notes(const uint8_t *p, size_t len, uint8_t *out, size_t size)
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
	/* the auxiliary vector hands out addresses as integers */
	// NOLINTNEXTLINE(performance-no-int-to-ptr)
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
		/* a load address computed from the headers */
		// NOLINTNEXTLINE(performance-no-int-to-ptr)
		size_t n = rt_build_id_from_notes((const uint8_t *)(bias + phdr[i].p_vaddr),
						  phdr[i].p_memsz, out, size);
		if (n)
			return n;
	}
	return 0;
}

uint64_t rt_process_start_time(pid_t pid)
{
	char path[64];
	struct rt_proc_stat st;
	rt_proc_stat_path(path, sizeof(path), (int)pid, 0);
	return rt_proc_stat_read(path, &st) == 0 ? st.start_time : 0;
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
