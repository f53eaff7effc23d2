/*
 * function_filter.c - the recording filter of `ringtrace record -F/-N`
 * (symbols/function_filter.h), from the program's symbol table through
 * libelf.
 */
#include "symbols/function_filter.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>
#include <libelf.h>

#include "common/arena_names.h"
#include "symbols/demangle.h"

struct range {
	uint64_t start, end;
};

struct ranges {
	struct range *r;
	size_t count, capacity;
};

static int add(struct ranges *rs, uint64_t start, uint64_t end)
{
	if (rs->count == rs->capacity) {
		size_t capacity = rs->capacity ? 2 * rs->capacity : 64;
		struct range *r = realloc(rs->r, capacity * sizeof(*r));
		if (!r)
			return -ENOMEM;
		rs->r = r;
		rs->capacity = capacity;
	}
	rs->r[rs->count++] = (struct range){start, end};
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sorted, and merged where they touch or overlap (aliases of one function, say). */
static void write_ranges(FILE *out, char kind, struct ranges *rs)
{
	if (!rs->count)
		return;
	qsort(rs->r, rs->count, sizeof(*rs->r), by_start);
	struct range cur = rs->r[0];
	for (size_t i = 1; i < rs->count; i++) {
		if (rs->r[i].start <= cur.end) {
			if (rs->r[i].end > cur.end)
				cur.end = rs->r[i].end;
			continue;
		}
		fprintf(out, "%c %llx %llx\n", kind, (unsigned long long)cur.start,
			(unsigned long long)cur.end);
		cur = rs->r[i];
	}
	fprintf(out, "%c %llx %llx\n", kind, (unsigned long long)cur.start,
		(unsigned long long)cur.end);
}

/* Whether pattern selects the function whose symbol is name (full: demangled, short). */
static int selects(const char *pattern, const char *name, const char *full, const char *brief)
{
	return fnmatch(pattern, brief, 0) == 0 || fnmatch(pattern, full, 0) == 0 ||
	       fnmatch(pattern, name, 0) == 0;
}

/* The functions of one symbol section into only and out, counting each pattern's. */
static int read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr,
			const struct rt_function_patterns *p, struct ranges *only,
			struct ranges *out, size_t *matched)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || !shdr->sh_entsize)
		return 0;
	size_t count = shdr->sh_size / shdr->sh_entsize;
	char brief[1024];
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF ||
		    sym.st_size == 0 || sym.st_value + sym.st_size < sym.st_value)
			continue;
		const char *name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name || !name[0])
			continue;
		char *demangled = rt_demangle(name);
		const char *full = demangled ? demangled : name;
		rt_demangled_short(full, brief, sizeof(brief));
		int rc = 0;
		for (size_t k = 0; k < p->only_count + p->out_count && !rc; k++) {
			int only_pattern = k < p->only_count;
			const char *pattern = only_pattern ? p->only[k] : p->out[k - p->only_count];
			if (!selects(pattern, name, full, brief))
				continue;
			matched[k]++;
			rc = add(only_pattern ? only : out, sym.st_value,
				 sym.st_value + sym.st_size);
		}
		free(demangled);
		if (rc)
			return rc;
	}
	return 0;
}

int rt_function_filter_write(const char *program, const struct rt_function_patterns *p, FILE *out,
			     size_t *matched)
{
	memset(matched, 0, (p->only_count + p->out_count) * sizeof(*matched));
	int fd = open(program, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOEXEC;
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	struct ranges only = {0}, outs = {0};
	int rc = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rc = -ENOEXEC;
	} else {
		/* the full table when there is one; the dynamic one of a stripped program */
		Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
		GElf_Shdr sym_shdr, dyn_shdr, shdr;
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			if (!gelf_getshdr(scn, &shdr))
				continue;
			if (shdr.sh_type == SHT_SYMTAB && !symtab) {
				symtab = scn;
				sym_shdr = shdr;
			} else if (shdr.sh_type == SHT_DYNSYM && !dynsym) {
				dynsym = scn;
				dyn_shdr = shdr;
			}
		}
		if (symtab)
			rc = read_symbols(elf, symtab, &sym_shdr, p, &only, &outs, matched);
		else if (dynsym)
			rc = read_symbols(elf, dynsym, &dyn_shdr, p, &only, &outs, matched);
		else
			rc = -ENOENT;
	}
	if (!rc) {
		fputs(RT_FUNCTION_FILTER_MAGIC, out);
		write_ranges(out, 'F', &only);
		write_ranges(out, 'N', &outs);
		if (fflush(out) != 0 || ferror(out))
			rc = -EIO;
	}
	free(only.r);
	free(outs.r);
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}
