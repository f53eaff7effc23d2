/*
 * modules.c - sym_print_module (see modules.h).
 */
#define _GNU_SOURCE
#include "modules.h"

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct want {
	const char *name_part;
	int found;
	char path[4096];
	uintptr_t base;
	char build_id[2 * 64 + 1];
};

static void build_id_of(struct dl_phdr_info *info, char *out)
{
	out[0] = '\0';
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
			const unsigned char *name = p + sizeof(*n);
			const unsigned char *desc = name + ((n->n_namesz + 3) & ~3u);
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0 && n->n_descsz <= 64) {
				for (unsigned j = 0; j < n->n_descsz; j++)
					sprintf(out + 2 * j, "%02x", desc[j]);
				return;
			}
			p = desc + ((n->n_descsz + 3) & ~3u);
		}
	}
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	struct want *w = data;
	int is_main = info->dlpi_name == NULL || info->dlpi_name[0] == '\0';
	if (w->name_part ? is_main || !strstr(info->dlpi_name, w->name_part) : !is_main)
		return 0;
	if (is_main) {
		ssize_t n = readlink("/proc/self/exe", w->path, sizeof(w->path) - 1);
		w->path[n > 0 ? n : 0] = '\0';
	} else {
		snprintf(w->path, sizeof(w->path), "%s", info->dlpi_name);
	}
	w->base = info->dlpi_addr;
	build_id_of(info, w->build_id);
	w->found = 1;
	return 1;
}

void sym_print_module(int index, const char *name_part)
{
	struct want w = {.name_part = name_part};
	dl_iterate_phdr(visit, &w);
	if (w.found)
		printf("module %d %s %jx %s\n", index, w.path, (uintmax_t)w.base,
		       w.build_id[0] ? w.build_id : "-");
}
