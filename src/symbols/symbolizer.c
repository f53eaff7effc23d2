/*
 * symbolizer.c - rt_symbolizer: libdwfl behind two caches (see symbolizer.h).
 *
 * Each module has its own Dwfl session, because modules of one process may
 * have used the same addresses at different times and a session maps every
 * address to one module.  Per module, two caches sit in front of libdw:
 *
 *   slots  an open-addressing table from address to answer: a repeated
 *          address costs one hash probe or a few;
 *   funcs  the functions resolved so far, sorted by start address, each with
 *          its symbol-table range and a copy of the line rows inside it: an
 *          unseen address inside a known function costs two binary searches.
 *
 * Only an address outside every known function goes to libdw, which then
 * fills both.  Answers from the caches and from libdw are the same by
 * construction: the line of an address is always taken from the copied
 * rows, the way dwarf_getsrc_die picks it (the last row at or below it).
 */
#define _GNU_SOURCE
#include "symbols/symbolizer.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "symbols/demangle.h"

/* The address table stops growing here (32 bytes a slot: 128 MiB); past it,
   new addresses are still answered by the function ranges. */
#define RT_SYM_SLOTS_MAX_BITS 22u
#define RT_SYM_SLOTS_MIN_BITS 10u

/* One line row of a function: addresses from addr up to the next row's are
   at file:line (file NULL: no line there, as after an end of sequence). */
struct rt_sym_row {
	uint64_t addr; /* run-time address */
	const char *file;
	uint32_t line;
};

struct rt_sym_func {
	uint64_t lo, hi; /* run-time range [lo, hi) from the symbol table */
	const char *name;
	char *owned_name; /* the demangled name, when name is it */
	struct rt_sym_row *rows;
	uint32_t nrows;
};

struct rt_sym_slot {
	uint64_t addr;
	const struct rt_sym_func *func; /* NULL: no function known there */
	const char *file;
	uint32_t line;
	uint32_t used;
};

enum rt_sym_state {
	RT_SYM_UNOPENED = 0,
	RT_SYM_OPEN = 1, /* names from the file */
	RT_SYM_RAW = 2,	 /* module+offset only: see error */
};

struct rt_sym_module {
	char *path;
	const char *name; /* last component of path */
	uint8_t build_id[RT_SYM_BUILD_ID_MAX];
	size_t build_id_len;
	uint64_t base;
	enum rt_sym_state state;
	char *error;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct rt_sym_func **funcs; /* sorted by lo */
	size_t nfuncs, funcs_cap;
	struct rt_sym_slot *slots; /* NULL until the first answer */
	unsigned slot_bits;
	size_t slot_count;
};

struct rt_symbolizer {
	/* libdwfl keeps pointers to both for the life of each session */
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	struct rt_sym_module **mods;
	size_t nmods, mods_cap;
};

/* ---- creation ---- */

struct rt_symbolizer *rt_symbolizer_create(const char *const *debug_dirs, size_t ndirs, char *err,
					   size_t errlen)
{
	if (errlen)
		err[0] = '\0';
	/* libdwfl's search path: the file's directory, its .debug subdirectory,
	   the caller's directories, then the system's.  Only absolute entries
	   are searched by build-id, so the caller's are made absolute. */
	size_t len = sizeof(":.debug:/usr/lib/debug");
	char **abs = calloc(ndirs ? ndirs : 1, sizeof(*abs));
	if (!abs) {
		errno = ENOMEM;
		return NULL;
	}
	int e = 0;
	for (size_t i = 0; i < ndirs && !e; i++) {
		abs[i] = realpath(debug_dirs[i], NULL);
		if (!abs[i]) {
			e = errno;
			snprintf(err, errlen, "debug directory %s: %s", debug_dirs[i], strerror(e));
		} else if (strchr(abs[i], ':')) {
			e = EINVAL;
			snprintf(err, errlen,
				 "debug directory %s: a ':' in its path is not supported", abs[i]);
		} else {
			len += strlen(abs[i]) + 1;
		}
	}
	struct rt_symbolizer *sym = e ? NULL : calloc(1, sizeof(*sym));
	char *path = sym ? malloc(len) : NULL;
	if (!e && !path) {
		e = ENOMEM;
		snprintf(err, errlen, "out of memory");
	}
	if (!e) {
		char *p = path + sprintf(path, ":.debug");
		for (size_t i = 0; i < ndirs; i++)
			p += sprintf(p, ":%s", abs[i]);
		sprintf(p, ":/usr/lib/debug");
		sym->debuginfo_path = path;
		sym->callbacks.find_elf = dwfl_build_id_find_elf;
		/*
		 * The standard search also asks debuginfod servers when
		 * DEBUGINFOD_URLS is set: reading a trace must never reach out to
		 * the network unasked, so the tool drops that setting.
		 */
		unsetenv("DEBUGINFOD_URLS");
		sym->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
		sym->callbacks.section_address = dwfl_offline_section_address;
		sym->callbacks.debuginfo_path = &sym->debuginfo_path;
	}
	for (size_t i = 0; i < ndirs; i++)
		free(abs[i]);
	free(abs);
	if (e) {
		free(path);
		free(sym);
		errno = e;
		return NULL;
	}
	return sym;
}

static void module_close(struct rt_sym_module *m)
{
	for (size_t i = 0; i < m->nfuncs; i++) {
		free(m->funcs[i]->owned_name);
		free(m->funcs[i]->rows);
		free(m->funcs[i]);
	}
	free(m->funcs);
	free(m->slots);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	free(m->error);
	free(m->path);
	free(m);
}

void rt_symbolizer_destroy(struct rt_symbolizer *sym)
{
	if (!sym)
		return;
	for (size_t i = 0; i < sym->nmods; i++)
		module_close(sym->mods[i]);
	free(sym->mods);
	free(sym->debuginfo_path);
	free(sym);
}

int rt_symbolizer_add_module(struct rt_symbolizer *sym, const struct rt_module_desc *desc)
{
	if (!desc->path || !desc->path[0] || desc->build_id_len > RT_SYM_BUILD_ID_MAX ||
	    (desc->build_id_len && !desc->build_id) || sym->nmods >= INT_MAX)
		return -EINVAL;
	if (sym->nmods == sym->mods_cap) {
		size_t cap = sym->mods_cap ? 2 * sym->mods_cap : 16;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct rt_sym_module **mods = realloc(sym->mods, cap * sizeof(*mods));
		if (!mods)
			return -ENOMEM;
		sym->mods = mods;
		sym->mods_cap = cap;
	}
	struct rt_sym_module *m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(desc->path))) {
		free(m);
		return -ENOMEM;
	}
	const char *slash = strrchr(m->path, '/');
	m->name = slash && slash[1] ? slash + 1 : m->path;
	if (desc->build_id_len)
		memcpy(m->build_id, desc->build_id, desc->build_id_len);
	m->build_id_len = desc->build_id_len;
	m->base = desc->base;
	sym->mods[sym->nmods] = m;
	return (int)sym->nmods++;
}

const char *rt_symbolizer_module_error(const struct rt_symbolizer *sym, int module)
{
	if (module < 0 || (size_t)module >= sym->nmods)
		return NULL;
	return sym->mods[module]->error;
}

int rt_symbol_format_raw(const struct rt_symbol *s, char *buf, size_t len)
{
	return snprintf(buf, len, "%s+0x%" PRIx64, s->module_name, s->offset);
}

/* ---- opening a module: the build-id rule ---- */

static void hex(char *out, const uint8_t *bytes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", bytes[i]);
	out[2 * n] = '\0';
}

/* Give up on names from m: keep why, for the caller. */
static void module_raw(struct rt_sym_module *m, char *why)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = NULL;
	m->mod = NULL;
	m->state = RT_SYM_RAW;
	m->error = why;
}

static void module_open(struct rt_symbolizer *sym, struct rt_sym_module *m)
{
	char *why = NULL;
	m->dwfl = dwfl_begin(&sym->callbacks);
	if (!m->dwfl) {
		if (asprintf(&why, "%s: cannot start libdwfl: %s", m->path, dwfl_errmsg(-1)) < 0)
			why = NULL;
		module_raw(m, why);
		return;
	}
	dwfl_report_begin(m->dwfl);
	/* add_p_vaddr: base is the load bias, as dl_iterate_phdr gives it */
	m->mod = dwfl_report_elf(m->dwfl, m->name, m->path, -1, m->base, true);
	if (dwfl_report_end(m->dwfl, NULL, NULL) != 0 || !m->mod) {
		if (asprintf(&why, "%s: cannot read: %s; its addresses are shown as module+offset",
			     m->path, dwfl_errmsg(-1)) < 0)
			why = NULL;
		module_raw(m, why);
		return;
	}
	if (m->build_id_len) {
		const unsigned char *bits = NULL;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(m->mod, &bits, &vaddr);
		if (n != (int)m->build_id_len || memcmp(bits, m->build_id, m->build_id_len) != 0) {
			char recorded[2 * RT_SYM_BUILD_ID_MAX + 1],
			    disk[2 * RT_SYM_BUILD_ID_MAX + 1];
			hex(recorded, m->build_id, m->build_id_len);
			if (n > 0 && (size_t)n <= RT_SYM_BUILD_ID_MAX)
				hex(disk, bits, (size_t)n);
			else
				snprintf(disk, sizeof(disk), "none");
			if (asprintf(
				&why,
				"%s: build-id on disk %s differs from the recorded %s: the file "
				"changed since the trace was made; its addresses are shown as "
				"module+offset",
				m->path, disk, recorded) < 0)
				why = NULL;
			module_raw(m, why);
			return;
		}
	}
	m->state = RT_SYM_OPEN;
}

/* ---- the address table ---- */

static inline size_t slot_index(uint64_t addr, unsigned bits)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static void slots_put(struct rt_sym_slot *slots, unsigned bits, const struct rt_sym_slot *s)
{
	size_t mask = ((size_t)1 << bits) - 1;
	size_t i = slot_index(s->addr, bits);
	while (slots[i].used)
		i = (i + 1) & mask;
	slots[i] = *s;
}

/* Remember an answer; when memory runs out or the table is full, it is only not remembered. */
static void slot_insert(struct rt_sym_module *m, uint64_t addr, const struct rt_sym_func *f,
			const char *file, uint32_t line)
{
	if (!m->slots || 2 * (m->slot_count + 1) > ((size_t)1 << m->slot_bits)) {
		unsigned bits = m->slots ? m->slot_bits + 1 : RT_SYM_SLOTS_MIN_BITS;
		if (bits > RT_SYM_SLOTS_MAX_BITS)
			return;
		struct rt_sym_slot *slots = calloc((size_t)1 << bits, sizeof(*slots));
		if (!slots)
			return;
		if (m->slots) {
			for (size_t i = 0; i < ((size_t)1 << m->slot_bits); i++)
				if (m->slots[i].used)
					slots_put(slots, bits, &m->slots[i]);
			free(m->slots);
		}
		m->slots = slots;
		m->slot_bits = bits;
	}
	struct rt_sym_slot s = {.addr = addr, .func = f, .file = file, .line = line, .used = 1};
	slots_put(m->slots, m->slot_bits, &s);
	m->slot_count++;
}

/* ---- the function ranges ---- */

/* Index of the first function whose lo is above addr. */
static size_t funcs_upper(const struct rt_sym_module *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->funcs[mid]->lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct rt_sym_func *funcs_find(const struct rt_sym_module *m, uint64_t addr)
{
	size_t i = funcs_upper(m, addr);
	if (i == 0)
		return NULL;
	struct rt_sym_func *f = m->funcs[i - 1];
	return addr < f->hi ? f : NULL;
}

static void rows_lookup(const struct rt_sym_func *f, uint64_t addr, const char **file,
			uint32_t *line)
{
	size_t lo = 0, hi = f->nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->rows[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	*file = lo ? f->rows[lo - 1].file : NULL;
	*line = *file ? f->rows[lo - 1].line : 0;
}

/*
 * Copy the line rows that cover f's range, from the line table of the
 * compilation unit that holds f->lo.  libdw keeps a unit's rows sorted by
 * address; of several rows at one address the last one holds.
 */
/*
 * The compilation unit holding addr.  libdw finds it through .debug_aranges,
 * which clang does not write unless told to (-gdwarf-aranges); without it,
 * each unit is asked for its address ranges in turn.
 */
static Dwarf_Die *unit_of(struct rt_sym_module *m, uint64_t addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, bias);
	if (cu)
		return cu;
	while ((cu = dwfl_module_nextcu(m->mod, cu, bias)) != NULL)
		if (dwarf_haspc(cu, addr - *bias) == 1)
			return cu;
	return NULL;
}

static int rows_load(struct rt_sym_module *m, struct rt_sym_func *f)
{
	Dwarf_Addr bias = 0;
	Dwarf_Die *cu = unit_of(m, f->lo, &bias);
	Dwarf_Lines *lines = NULL;
	size_t n = 0;
	if (!cu || dwarf_getsrclines(cu, &lines, &n) != 0 || n == 0)
		return 0;
	uint64_t lo = f->lo - bias, hi = f->hi - bias;
	/* the last row at or below lo, so that lo itself has its line */
	size_t a = 0, b = n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		Dwarf_Addr at = 0;
		dwarf_lineaddr(dwarf_onesrcline(lines, mid), &at);
		if (at <= lo)
			a = mid + 1;
		else
			b = mid;
	}
	size_t first = a ? a - 1 : 0;
	size_t cap = 0;
	for (size_t i = first; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr at = 0;
		int lineno = 0;
		bool end = false;
		if (!l || dwarf_lineaddr(l, &at) != 0 || at >= hi)
			break;
		dwarf_lineendsequence(l, &end);
		const char *file = end ? NULL : dwarf_linesrc(l, NULL, NULL);
		if (dwarf_lineno(l, &lineno) != 0 || lineno <= 0)
			file = NULL;
		struct rt_sym_row row = {
		    .addr = at + bias, .file = file, .line = file ? (uint32_t)lineno : 0};
		if (f->nrows && f->rows[f->nrows - 1].addr == row.addr) {
			f->rows[f->nrows - 1] = row;
			continue;
		}
		if (f->nrows == cap) {
			cap = cap ? 2 * cap : 16;
			struct rt_sym_row *rows = realloc(f->rows, cap * sizeof(*rows));
			if (!rows)
				return -ENOMEM;
			f->rows = rows;
		}
		f->rows[f->nrows++] = row;
	}
	return 0;
}

static void func_free(struct rt_sym_func *f)
{
	if (f) {
		free(f->owned_name);
		free(f->rows);
		free(f);
	}
}

/* Ask libdw for the function around addr and keep it; NULL when the symbol
   table has none (or memory ran out). */
static struct rt_sym_func *func_load(struct rt_sym_module *m, uint64_t addr)
{
	GElf_Off off = 0;
	GElf_Sym s;
	const char *name = dwfl_module_addrinfo(m->mod, addr, &off, &s, NULL, NULL, NULL);
	if (!name || !name[0])
		return NULL;
	uint64_t lo = addr - off;
	/* a symbol of no size covers only its own address */
	uint64_t hi = s.st_size ? lo + s.st_size : lo + 1;
	if (addr >= hi)
		return NULL;
	size_t at = funcs_upper(m, lo);
	if (at && m->funcs[at - 1]->lo == lo)
		return addr < m->funcs[at - 1]->hi ? m->funcs[at - 1] : NULL;
	if (m->nfuncs == m->funcs_cap) {
		size_t cap = m->funcs_cap ? 2 * m->funcs_cap : 64;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct rt_sym_func **funcs = realloc(m->funcs, cap * sizeof(*funcs));
		if (!funcs)
			return NULL;
		m->funcs = funcs;
		m->funcs_cap = cap;
	}
	struct rt_sym_func *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->lo = lo;
	f->hi = hi;
	f->owned_name = rt_demangle(name);
	f->name = f->owned_name ? f->owned_name : name;
	if (rows_load(m, f) != 0) {
		func_free(f);
		return NULL;
	}
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	memmove(&m->funcs[at + 1], &m->funcs[at], (m->nfuncs - at) * sizeof(*m->funcs));
	m->funcs[at] = f;
	m->nfuncs++;
	return f;
}

/* ---- resolving ---- */

static void resolve_slow(struct rt_sym_module *m, uint64_t addr, const struct rt_sym_func **fp,
			 const char **file, uint32_t *line)
{
	struct rt_sym_func *f = funcs_find(m, addr);
	if (!f)
		f = func_load(m, addr);
	*fp = f;
	*file = NULL;
	*line = 0;
	if (f) {
		rows_lookup(f, addr, file, line);
	} else {
		/* no symbol: a line may still be known */
		Dwarf_Addr bias = 0;
		Dwarf_Die *cu = unit_of(m, addr, &bias);
		Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, addr - bias) : NULL;
		int lineno = 0;
		const char *src = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
		if (l && dwarf_lineno(l, &lineno) != 0)
			src = NULL;
		if (src && lineno > 0) {
			*file = src;
			*line = (uint32_t)lineno;
		}
	}
	slot_insert(m, addr, f, *file, *line);
}

int rt_symbolizer_resolve(struct rt_symbolizer *sym, int module, uint64_t addr,
			  struct rt_symbol *out)
{
	if (module < 0 || (size_t)module >= sym->nmods)
		return -EINVAL;
	struct rt_sym_module *m = sym->mods[module];
	out->module = m->path;
	out->module_name = m->name;
	out->offset = addr - m->base;
	out->warning = NULL;

	const struct rt_sym_func *f = NULL;
	const char *file = NULL;
	uint32_t line = 0;
	const struct rt_sym_slot *hit = NULL;
	if (m->slots) {
		size_t mask = ((size_t)1 << m->slot_bits) - 1;
		for (size_t i = slot_index(addr, m->slot_bits); m->slots[i].used;
		     i = (i + 1) & mask)
			if (m->slots[i].addr == addr) {
				hit = &m->slots[i];
				break;
			}
	}
	if (hit) {
		f = hit->func;
		file = hit->file;
		line = hit->line;
	} else {
		if (m->state == RT_SYM_UNOPENED) {
			module_open(sym, m);
			out->warning = m->error;
		}
		if (m->state == RT_SYM_OPEN)
			resolve_slow(m, addr, &f, &file, &line);
	}
	out->func = f ? f->name : NULL;
	out->func_offset = f ? addr - f->lo : 0;
	out->file = file;
	out->line = line;
	return 0;
}
