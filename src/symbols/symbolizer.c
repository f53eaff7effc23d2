/*
 * symbolizer.c - rt_symbolizer: libdwfl's files, answered from tables of
 * our own (see symbolizer.h).
 *
 * Each module has its own Dwfl session, because modules of one process may
 * have used the same addresses at different times and a session maps every
 * address to one module.  libdwfl searches a symbol table from end to end
 * for every address, so when a module is opened its symbol table is read
 * once into a partition of the address space (address -> the symbol
 * libdwfl would name there, rules below at cand_better); per module:
 *
 *   funcs   every symbol that names some address, with its range; its name
 *           is demangled, and the unit holding it looked up, on its first
 *           answer only, since most symbols of a library are never asked for
 *   units   a unit's line table, copied into plain arrays the first time a
 *           function in it is answered
 *   slots   an open-addressing table from address to answer, for addresses
 *           asked for more than once: a repeat costs one hash probe or a few
 *
 * A first-time address thus costs binary searches (one among the pieces of
 * the partition, one among its unit's rows) and nothing that grows with
 * the module.  Reading the table costs a sort of the symbols when the
 * module is opened: milliseconds, some tens for the largest libraries
 * (docs/PERFORMANCE.md, figure 10).
 * Answers are libdwfl's: dwfl_module_addrinfo for the function, and for
 * the line the last row at or below the address in the unit holding the
 * function's start, the way dwarf_getsrc_die picks it.
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

/* The address table stops growing here (24 bytes a slot: 96 MiB); past it,
   new addresses are still answered by the function table. */
#define RT_SYM_SLOTS_MAX_BITS 22u
#define RT_SYM_SLOTS_MIN_BITS 10u
/* Addresses answered once, one bit per hash (64 KiB): an address takes a slot
   only when it comes back. */
#define RT_SYM_SEEN_BITS 19u

struct rt_sym_func {
	uint64_t lo, hi;  /* run-time range [lo, hi) from the symbol table */
	const char *name; /* the symbol's, until demangled on the first answer */
	char *owned_name; /* the demangled name, when name is it */
	uint64_t bias;	  /* run-time address of the unit's address 0 */
	uint32_t unit;	  /* in units: the unit holding lo; RT_SYM_NONE: no lines */
	bool loaded;	  /* name and unit are final */
};

/* One line row: addresses from its own up to the next row's are at file:line
   (file NULL: no line there, as after an end of sequence). */
struct rt_sym_line {
	const char *file;
	uint32_t line;
};

/* A compilation unit's line table, copied once into plain arrays. */
struct rt_sym_unit {
	Dwarf_Lines *lines; /* libdw's, which identifies the unit */
	uint64_t *at;	    /* the rows' DWARF addresses, ascending and distinct */
	struct rt_sym_line *rows;
	size_t n;
};

/* ---- partitions: which of several overlapping ranges holds an address ---- */

#define RT_SYM_NONE UINT32_MAX

/* A range [lo, hi) of item id, one input of partition(). */
struct rt_sym_span {
	uint64_t lo, hi;
	uint32_t id;
};

/* Whether item a wins over item b where both hold an address. */
typedef bool (*rt_sym_better)(const void *ctx, uint32_t a, uint32_t b);

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int span_cmp(const void *a, const void *b)
{
	const struct rt_sym_span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Cut the address space at every end of every span and give each piece
 * the item that wins there, merging neighbours with the same winner: the
 * answer for an address is then one binary search in p->lo.  Only the
 * pieces where several spans overlap compare items, so the cost is the
 * sort unless many spans pile up on the same addresses.
 */
struct rt_sym_partition {
	uint64_t *lo; /* piece i is [lo[i], lo[i + 1]); the last one is empty */
	uint32_t *id; /* its winner, or RT_SYM_NONE */
	size_t n;
};

static int partition(struct rt_sym_span *spans, size_t n, rt_sym_better better, const void *ctx,
		     struct rt_sym_partition *p)
{
	p->lo = NULL;
	p->id = NULL;
	p->n = 0;
	if (n == 0)
		return 0;
	qsort(spans, n, sizeof(*spans), span_cmp);
	uint64_t *cuts = malloc(2 * n * sizeof(*cuts));
	struct rt_sym_span *active = malloc(n * sizeof(*active));
	uint64_t *lo = malloc(2 * n * sizeof(*lo));
	uint32_t *id = malloc(2 * n * sizeof(*id));
	if (!cuts || !active || !lo || !id) {
		free(cuts);
		free(active);
		free(lo);
		free(id);
		return -ENOMEM;
	}
	p->lo = lo;
	p->id = id;
	for (size_t i = 0; i < n; i++) {
		cuts[2 * i] = spans[i].lo;
		cuts[2 * i + 1] = spans[i].hi;
	}
	qsort(cuts, 2 * n, sizeof(*cuts), u64_cmp);
	size_t nactive = 0, next = 0;
	for (size_t c = 0; c < 2 * n; c++) {
		uint64_t x = cuts[c];
		if (c && cuts[c - 1] == x)
			continue;
		for (size_t i = 0; i < nactive;)
			if (active[i].hi <= x)
				active[i] = active[--nactive];
			else
				i++;
		for (; next < n && spans[next].lo <= x; next++)
			if (spans[next].hi > x)
				active[nactive++] = spans[next];
		uint32_t win = RT_SYM_NONE;
		for (size_t i = 0; i < nactive; i++)
			if (win == RT_SYM_NONE || better(ctx, active[i].id, win))
				win = active[i].id;
		if (p->n ? p->id[p->n - 1] != win : win != RT_SYM_NONE) {
			p->lo[p->n] = x;
			p->id[p->n++] = win;
		}
	}
	free(cuts);
	free(active);
	return 0;
}

static uint32_t partition_find(const struct rt_sym_partition *p, uint64_t addr)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (p->lo[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? p->id[lo - 1] : RT_SYM_NONE;
}

static void partition_free(struct rt_sym_partition *p)
{
	free(p->lo);
	free(p->id);
	p->lo = NULL;
	p->id = NULL;
	p->n = 0;
}

struct rt_sym_slot {
	uint64_t addr;
	const char *file;
	uint32_t tag; /* 0: a free slot; 1: no function; 2 + i: funcs[i] */
	uint32_t line;
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
	struct rt_sym_func *funcs; /* every symbol that names some address */
	size_t nfuncs;
	struct rt_sym_partition func_parts; /* address -> index in funcs */
	struct rt_sym_unit *units;	    /* the units copied so far */
	size_t nunits, units_cap;
	uint32_t *unit_slots; /* open addressing on lines: 1 + index in units, 0 free */
	unsigned unit_bits;
	/* compilation units, read only when .debug_aranges does not find one */
	Dwarf_Die **cus;
	size_t ncus;
	Dwarf_Addr cu_bias;
	struct rt_sym_partition cu_parts; /* DWARF address -> index in cus */
	bool cus_loaded, cus_failed;
	struct rt_sym_slot *slots; /* NULL until the first answer */
	unsigned slot_bits;
	size_t slot_count;
	uint64_t *seen; /* RT_SYM_SEEN_BITS bits; NULL until the first answer */
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
		free(m->funcs[i].owned_name);
	}
	free(m->funcs);
	partition_free(&m->func_parts);
	for (size_t i = 0; i < m->nunits; i++) {
		free(m->units[i].at);
		free(m->units[i].rows);
	}
	free(m->units);
	free(m->unit_slots);
	free(m->cus);
	partition_free(&m->cu_parts);
	free(m->slots);
	free(m->seen);
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

static int symtab_load(struct rt_sym_module *m);

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
	if (symtab_load(m) != 0) {
		if (asprintf(
			&why,
			"%s: out of memory reading its symbol table; its addresses are shown as "
			"module+offset",
			m->path) < 0)
			why = NULL;
		module_raw(m, why);
		return;
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
	while (slots[i].tag)
		i = (i + 1) & mask;
	slots[i] = *s;
}

/*
 * Whether addr was answered before (or may have been: bits are shared).
 * Many addresses are asked for only once; writing each into the table
 * would cost its memory and, on a fresh table, a page fault every hundred
 * addresses or so, which was most of a first resolution's time.
 */
static bool seen_before(struct rt_sym_module *m, uint64_t addr)
{
	if (!m->seen) {
		m->seen = calloc((size_t)1 << (RT_SYM_SEEN_BITS - 6), sizeof(*m->seen));
		if (!m->seen)
			return true;
	}
	size_t i = slot_index(addr, RT_SYM_SEEN_BITS);
	uint64_t bit = 1ull << (i & 63);
	if (m->seen[i >> 6] & bit)
		return true;
	m->seen[i >> 6] |= bit;
	return false;
}

/*
 * Make room for one more answer: false when the table is full or memory ran
 * out, and the answer is then only not remembered.  The table grows four
 * times at a time, so that few pages are written to only to be copied.
 */
static bool slots_room(struct rt_sym_module *m)
{
	if (m->slots && 2 * (m->slot_count + 1) <= ((size_t)1 << m->slot_bits))
		return true;
	unsigned bits = RT_SYM_SLOTS_MIN_BITS;
	if (m->slots) {
		if (m->slot_bits >= RT_SYM_SLOTS_MAX_BITS)
			return false;
		bits = m->slot_bits + 2 < RT_SYM_SLOTS_MAX_BITS ? m->slot_bits + 2
								: RT_SYM_SLOTS_MAX_BITS;
	}
	struct rt_sym_slot *slots = calloc((size_t)1 << bits, sizeof(*slots));
	if (!slots)
		return false;
	if (m->slots) {
		for (size_t i = 0; i < ((size_t)1 << m->slot_bits); i++)
			if (m->slots[i].tag)
				slots_put(slots, bits, &m->slots[i]);
		free(m->slots);
	}
	m->slots = slots;
	m->slot_bits = bits;
	return true;
}

/* ---- the symbol table, read once per module ---- */

/*
 * The order in which libdwfl's dwfl_module_addrinfo picks among the symbols
 * that could name an address, which the table below reproduces so that its
 * answers stay libdwfl's.  libdwfl searches the symbols after the table's
 * first global (all of them when the table has no locals split off) and,
 * only when none of those has a size that covers the address, the locals.
 * Within a search, a covering symbol starting closer to the address wins,
 * then global over weak over local, then the smaller, then the earlier in
 * the table.  A symbol of no size wins only when nothing sized covers the
 * address in its search and it sits exactly at the address (libdwfl may
 * name one further below, but such an answer has always been dropped
 * here): of several there, the later in the table; a global one found in
 * the first search stops the search of the locals.
 */
enum rt_sym_rank {
	RT_SYM_LOCAL_SIZELESS = 0,
	RT_SYM_LOCAL_SIZED = 1,
	RT_SYM_FIRST_SIZELESS = 2,
	RT_SYM_FIRST_SIZED = 3,
};

struct rt_sym_cand {
	uint64_t lo, size;
	const char *name;
	uint32_t index; /* in the symbol table */
	uint8_t rank;
	uint8_t bind; /* higher is preferred */
};

static bool cand_better(const void *ctx, uint32_t a, uint32_t b)
{
	const struct rt_sym_cand *x = (const struct rt_sym_cand *)ctx + a,
				 *y = (const struct rt_sym_cand *)ctx + b;
	if (x->rank != y->rank)
		return x->rank > y->rank;
	if (x->rank == RT_SYM_FIRST_SIZELESS || x->rank == RT_SYM_LOCAL_SIZELESS)
		return x->index > y->index;
	if (x->lo != y->lo)
		return x->lo > y->lo;
	if (x->bind != y->bind)
		return x->bind > y->bind;
	if (x->size != y->size)
		return x->size < y->size;
	return x->index < y->index;
}

static uint8_t bind_value(const GElf_Sym *s)
{
	switch (GELF_ST_BIND(s->st_info)) {
	case STB_GLOBAL:
		return 3;
	case STB_WEAK:
		return 2;
	case STB_LOCAL:
		return 1;
	default:
		return 0;
	}
}

/* Read m's symbol table into m->funcs and m->func_parts; -ENOMEM or 0
   (a module without symbols has no functions). */
static int symtab_load(struct rt_sym_module *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	int first_global = dwfl_module_getsymtab_first_global(m->mod);
	if (n <= 1 || first_global < 0)
		return 0;
	struct rt_sym_cand *cands = malloc((size_t)n * sizeof(*cands));
	struct rt_sym_span *spans = malloc((size_t)n * sizeof(*spans));
	uint32_t *func_of = NULL;
	int e = -ENOMEM;
	if (!cands || !spans)
		goto out;
	size_t nc = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr value = 0;
		const char *name = dwfl_module_getsym_info(m->mod, i, &s, &value, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(s.st_info);
		if (!name || !name[0] || s.st_shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS || (!s.st_size && value == UINT64_MAX))
			continue;
		bool first = first_global <= 1 || i >= first_global;
		cands[nc] = (struct rt_sym_cand){
		    .lo = value,
		    .size = s.st_size,
		    .name = name,
		    .index = (uint32_t)i,
		    .bind = bind_value(&s),
		    .rank = first ? (s.st_size ? RT_SYM_FIRST_SIZED : RT_SYM_FIRST_SIZELESS)
				  : (s.st_size ? RT_SYM_LOCAL_SIZED : RT_SYM_LOCAL_SIZELESS)};
		uint64_t hi = value + s.st_size < value ? UINT64_MAX : value + s.st_size;
		spans[nc] = (struct rt_sym_span){
		    .lo = value, .hi = s.st_size ? hi : value + 1, .id = (uint32_t)nc};
		nc++;
	}
	if (partition(spans, nc, cand_better, cands, &m->func_parts) != 0)
		goto out;
	/* keep only the symbols that win somewhere, renumbered */
	func_of = malloc(nc * sizeof(*func_of) + 1);
	if (!func_of)
		goto out;
	memset(func_of, 0xff, nc * sizeof(*func_of));
	size_t nf = 0;
	for (size_t i = 0; i < m->func_parts.n; i++) {
		uint32_t c = m->func_parts.id[i];
		if (c != RT_SYM_NONE && func_of[c] == RT_SYM_NONE)
			func_of[c] = (uint32_t)nf++;
	}
	m->funcs = calloc(nf ? nf : 1, sizeof(*m->funcs));
	if (!m->funcs)
		goto out;
	m->nfuncs = nf;
	for (size_t c = 0; c < nc; c++) {
		if (func_of[c] == RT_SYM_NONE)
			continue;
		struct rt_sym_func *f = &m->funcs[func_of[c]];
		f->lo = cands[c].lo;
		/* a symbol of no size covers only its own address */
		f->hi = cands[c].size ? cands[c].lo + cands[c].size : cands[c].lo + 1;
		f->name = cands[c].name;
	}
	for (size_t i = 0; i < m->func_parts.n; i++)
		if (m->func_parts.id[i] != RT_SYM_NONE)
			m->func_parts.id[i] = func_of[m->func_parts.id[i]];
	e = 0;
out:
	if (e)
		partition_free(&m->func_parts);
	free(func_of);
	free(spans);
	free(cands);
	return e;
}

/* ---- compilation units and their lines ---- */

static bool cu_better(const void *ctx, uint32_t a, uint32_t b)
{
	(void)ctx;
	return a < b; /* the first unit that has the address, as a walk would find */
}

/* Every unit's address ranges, for modules without .debug_aranges. */
static int cus_load(struct rt_sym_module *m)
{
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias = 0;
	size_t n = 0, cap = 0, nspans = 0, spans_cap = 0;
	struct rt_sym_span *spans = NULL;
	int e = 0;
	while (!e && (cu = dwfl_module_nextcu(m->mod, cu, &bias)) != NULL) {
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
			Dwarf_Die **cus = realloc(m->cus, cap * sizeof(*cus));
			if (!cus) {
				e = -ENOMEM;
				break;
			}
			m->cus = cus;
		}
		m->cus[n] = cu;
		m->cu_bias = bias;
		Dwarf_Addr base, begin, end;
		ptrdiff_t off = 0;
		while ((off = dwarf_ranges(cu, off, &base, &begin, &end)) > 0) {
			if (begin >= end)
				continue;
			if (nspans == spans_cap) {
				spans_cap = spans_cap ? 2 * spans_cap : 64;
				struct rt_sym_span *s = realloc(spans, spans_cap * sizeof(*s));
				if (!s) {
					e = -ENOMEM;
					break;
				}
				spans = s;
			}
			spans[nspans++] =
			    (struct rt_sym_span){.lo = begin, .hi = end, .id = (uint32_t)n};
		}
		n++;
	}
	if (!e)
		e = partition(spans, nspans, cu_better, NULL, &m->cu_parts);
	free(spans);
	m->ncus = n;
	return e;
}

/*
 * The compilation unit holding addr.  libdw finds it through .debug_aranges,
 * which clang does not write unless told to (-gdwarf-aranges); without it,
 * the units' own ranges are read once and searched.
 */
static Dwarf_Die *unit_of(struct rt_sym_module *m, uint64_t addr, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, bias);
	if (cu)
		return cu;
	if (!m->cus_loaded) {
		m->cus_loaded = true;
		m->cus_failed = cus_load(m) != 0;
	}
	if (m->cus_failed) {
		/* out of memory: ask each unit in turn */
		while ((cu = dwfl_module_nextcu(m->mod, cu, bias)) != NULL)
			if (dwarf_haspc(cu, addr - *bias) == 1)
				return cu;
		return NULL;
	}
	uint32_t i = partition_find(&m->cu_parts, addr - m->cu_bias);
	*bias = m->cu_bias;
	return i == RT_SYM_NONE ? NULL : m->cus[i];
}

static size_t unit_slot(const Dwarf_Lines *lines, unsigned bits)
{
	return (size_t)(((uint64_t)(uintptr_t)lines * 0x9e3779b97f4a7c15ull) >> (64 - bits));
}

static int unit_slots_grow(struct rt_sym_module *m)
{
	unsigned bits = m->unit_bits ? m->unit_bits + 1 : 6;
	uint32_t *slots = calloc((size_t)1 << bits, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	size_t mask = ((size_t)1 << bits) - 1;
	for (size_t u = 0; u < m->nunits; u++) {
		size_t i = unit_slot(m->units[u].lines, bits);
		while (slots[i])
			i = (i + 1) & mask;
		slots[i] = (uint32_t)u + 1;
	}
	free(m->unit_slots);
	m->unit_slots = slots;
	m->unit_bits = bits;
	return 0;
}

/*
 * The copy of cu's line table, made on first use: of several rows at one
 * address the last one holds (libdw keeps them sorted by address), the
 * way dwarf_getsrc_die picks a row.  RT_SYM_NONE when the unit has no
 * lines or memory ran out.
 */
static uint32_t unit_get(struct rt_sym_module *m, Dwarf_Die *cu)
{
	Dwarf_Lines *lines = NULL;
	size_t n = 0;
	if (dwarf_getsrclines(cu, &lines, &n) != 0 || n == 0)
		return RT_SYM_NONE;
	if (m->unit_slots) {
		size_t mask = ((size_t)1 << m->unit_bits) - 1;
		for (size_t i = unit_slot(lines, m->unit_bits); m->unit_slots[i];
		     i = (i + 1) & mask)
			if (m->units[m->unit_slots[i] - 1].lines == lines)
				return m->unit_slots[i] - 1;
	}
	if (m->nunits >= UINT32_MAX - 1)
		return RT_SYM_NONE;
	if ((!m->unit_slots || 2 * (m->nunits + 1) > ((size_t)1 << m->unit_bits)) &&
	    unit_slots_grow(m) != 0)
		return RT_SYM_NONE;
	if (m->nunits == m->units_cap) {
		size_t cap = m->units_cap ? 2 * m->units_cap : 16;
		struct rt_sym_unit *units = realloc(m->units, cap * sizeof(*units));
		if (!units)
			return RT_SYM_NONE;
		m->units = units;
		m->units_cap = cap;
	}
	struct rt_sym_unit u = {.lines = lines};
	u.at = malloc(n * sizeof(*u.at));
	u.rows = malloc(n * sizeof(*u.rows));
	if (!u.at || !u.rows) {
		free(u.at);
		free(u.rows);
		return RT_SYM_NONE;
	}
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr at = 0;
		int lineno = 0;
		bool end = false;
		if (!l || dwarf_lineaddr(l, &at) != 0)
			break;
		dwarf_lineendsequence(l, &end);
		const char *file = end ? NULL : dwarf_linesrc(l, NULL, NULL);
		if (dwarf_lineno(l, &lineno) != 0 || lineno <= 0)
			file = NULL;
		struct rt_sym_line row = {.file = file, .line = file ? (uint32_t)lineno : 0};
		if (u.n && u.at[u.n - 1] == at) {
			u.rows[u.n - 1] = row;
			continue;
		}
		u.at[u.n] = at;
		u.rows[u.n++] = row;
	}
	size_t mask = ((size_t)1 << m->unit_bits) - 1;
	size_t i = unit_slot(lines, m->unit_bits);
	while (m->unit_slots[i])
		i = (i + 1) & mask;
	m->unit_slots[i] = (uint32_t)m->nunits + 1;
	m->units[m->nunits] = u;
	return (uint32_t)m->nunits++;
}

/*
 * The line of an address in f: the last row at or below it in the unit
 * that holds f->lo.  This is what a copy of only the rows inside f's range
 * (with the one at or below its start) would answer too.
 */
static uint32_t lines_lookup(const struct rt_sym_module *m, const struct rt_sym_func *f,
			     uint64_t addr)
{
	if (f->unit == RT_SYM_NONE)
		return RT_SYM_NONE;
	const struct rt_sym_unit *u = &m->units[f->unit];
	uint64_t at = addr - f->bias;
	size_t lo = 0, hi = u->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (u->at[mid] <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && u->rows[lo - 1].file ? (uint32_t)(lo - 1) : RT_SYM_NONE;
}

/* The function around addr, its name and lines found on its first answer;
   NULL when the symbol table has none there. */
static const struct rt_sym_func *func_at(struct rt_sym_module *m, uint64_t addr)
{
	uint32_t i = partition_find(&m->func_parts, addr);
	if (i == RT_SYM_NONE)
		return NULL;
	struct rt_sym_func *f = &m->funcs[i];
	if (!f->loaded) {
		if (!f->owned_name) {
			f->owned_name = rt_demangle(f->name);
			if (f->owned_name)
				f->name = f->owned_name;
		}
		Dwarf_Addr bias = 0;
		Dwarf_Die *cu = unit_of(m, f->lo, &bias);
		f->unit = cu ? unit_get(m, cu) : RT_SYM_NONE;
		f->bias = bias;
		f->loaded = true;
	}
	return f;
}

/* ---- resolving ---- */

static void resolve_slow(struct rt_sym_module *m, uint64_t addr, const struct rt_sym_func **fp,
			 const char **file, uint32_t *line)
{
	const struct rt_sym_func *f = func_at(m, addr);
	*fp = f;
	*file = NULL;
	*line = 0;
	if (f) {
		uint32_t row = lines_lookup(m, f, addr);
		if (row != RT_SYM_NONE) {
			*file = m->units[f->unit].rows[row].file;
			*line = m->units[f->unit].rows[row].line;
		}
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
	if (!seen_before(m, addr) || !slots_room(m))
		return;
	struct rt_sym_slot s = {.addr = addr,
				.file = *file,
				.tag = f ? 2 + (uint32_t)(f - m->funcs) : 1,
				.line = *line};
	slots_put(m->slots, m->slot_bits, &s);
	m->slot_count++;
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
		for (size_t i = slot_index(addr, m->slot_bits); m->slots[i].tag; i = (i + 1) & mask)
			if (m->slots[i].addr == addr) {
				hit = &m->slots[i];
				break;
			}
	}
	if (hit) {
		f = hit->tag >= 2 ? &m->funcs[hit->tag - 2] : NULL;
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
