/*
 * instrumentation.c - how a program's file is made to record
 * (symbols/instrumentation.h), through libelf: every symbol of .symtab and
 * .dynsym by name, every DT_NEEDED entry of .dynamic.
 */
#include "symbols/instrumentation.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

/* The library's symbols: public ringtrace_*, internal ringtrace__* */
#define LIBRARY_PREFIX "ringtrace_"
#define LIBRARY_SONAME "libringtrace.so"

static unsigned symbol_bits(const char *name)
{
	if (!name)
		return 0;
	if (strcmp(name, "__cyg_profile_func_enter") == 0 ||
	    strcmp(name, "__cyg_profile_func_exit") == 0)
		return RT_INSTRUMENTED_FUNCTIONS;
	if (strncmp(name, LIBRARY_PREFIX, strlen(LIBRARY_PREFIX)) == 0)
		return RT_INSTRUMENTED_LINKED;
	return 0;
}

static unsigned section_bits(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr)
{
	unsigned found = 0;
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || !shdr->sh_entsize)
		return 0;
	size_t count = shdr->sh_size / shdr->sh_entsize;
	for (size_t i = 0; i < count; i++) {
		if (shdr->sh_type == SHT_DYNAMIC) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(data, (int)i, &dyn))
				break;
			if (dyn.d_tag == DT_NULL)
				break;
			const char *needed = dyn.d_tag == DT_NEEDED
						 ? elf_strptr(elf, shdr->sh_link, dyn.d_un.d_val)
						 : NULL;
			if (needed && strstr(needed, LIBRARY_SONAME))
				found |= RT_INSTRUMENTED_LINKED;
		} else {
			GElf_Sym sym;
			if (!gelf_getsym(data, (int)i, &sym))
				break;
			found |= symbol_bits(elf_strptr(elf, shdr->sh_link, sym.st_name));
		}
	}
	return found;
}

int rt_instrumentation_of(const char *path, unsigned *found)
{
	*found = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* a FIFO or a device could block or never end */
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	int rc = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rc = -ENOEXEC;
	} else {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr shdr;
			if (gelf_getshdr(scn, &shdr) &&
			    (shdr.sh_type == SHT_SYMTAB || shdr.sh_type == SHT_DYNSYM ||
			     shdr.sh_type == SHT_DYNAMIC))
				*found |= section_bits(elf, scn, &shdr);
		}
	}
	elf_end(elf);
	close(fd);
	return rc;
}
