/*
 * test_symbols.c - the symbolizer against programs built by the test suite.
 *
 *   test_symbols SRC_DIR TARGET REBUILT LIBRARY CXX
 *
 * TARGET (sym_target.c) loads LIBRARY (sym_lib.c) with dlopen and prints
 * its modules and some function addresses; CXX (sym_cxx.cc) does the same
 * for C++ names; REBUILT is TARGET's source built differently.  Each
 * address must resolve to the right function, the source file and the line
 * of the function's marker in SRC_DIR; copies made here with objcopy check
 * the separate debug files (.gnu_debuglink, a build-id directory), stripped
 * files, and the build-id rule.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "symbols/symbolizer.h"

static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

static const char *src_dir;
static char tmp[PATH_MAX];

/* ---- what a program printed about itself ---- */

struct module_rec {
	char path[PATH_MAX];
	uint64_t base;
	char id_hex[2 * RT_SYM_BUILD_ID_MAX + 1];
	uint8_t id[RT_SYM_BUILD_ID_MAX];
	size_t id_len;
};

struct func_rec {
	char key[64];
	int module;
	uint64_t addr;
};

struct run {
	struct module_rec mods[2];
	int nmods;
	struct func_rec funcs[32];
	int nfuncs;
};

static void run_program(const char *cmd, struct run *r)
{
	memset(r, 0, sizeof(*r));
	FILE *p = popen(cmd, "r");
	if (!p) {
		fprintf(stderr, "test_symbols: cannot run %s: %s\n", cmd, strerror(errno));
		exit(1);
	}
	char line[PATH_MAX + 256];
	while (fgets(line, sizeof(line), p)) {
		int index;
		char path[PATH_MAX], id[2 * RT_SYM_BUILD_ID_MAX + 3];
		uint64_t base;
		struct func_rec f;
		if (sscanf(line, "module %d %4095s %" SCNx64 " %130s", &index, path, &base, id) ==
			4 &&
		    index >= 0 && index < 2) {
			struct module_rec *m = &r->mods[index];
			snprintf(m->path, sizeof(m->path), "%s", path);
			m->base = base;
			if (strcmp(id, "-") != 0 && strlen(id) <= 2 * RT_SYM_BUILD_ID_MAX) {
				snprintf(m->id_hex, sizeof(m->id_hex), "%s", id);
				m->id_len = strlen(id) / 2;
				for (size_t i = 0; i < m->id_len; i++)
					sscanf(id + 2 * i, "%2hhx", &m->id[i]);
			}
			if (index + 1 > r->nmods)
				r->nmods = index + 1;
		} else if (sscanf(line, "func %63s %d %" SCNx64, f.key, &f.module, &f.addr) == 3 &&
			   r->nfuncs < 32) {
			r->funcs[r->nfuncs++] = f;
		}
	}
	int status = pclose(p);
	if (status != 0 || r->nmods == 0 || r->nfuncs == 0) {
		fprintf(stderr, "test_symbols: %s failed (status %d, %d modules, %d functions)\n",
			cmd, status, r->nmods, r->nfuncs);
		exit(1);
	}
}

static const struct func_rec *func_of(const struct run *r, const char *key)
{
	for (int i = 0; i < r->nfuncs; i++)
		if (strcmp(r->funcs[i].key, key) == 0)
			return &r->funcs[i];
	fprintf(stderr, "test_symbols: the program printed no address for %s\n", key);
	exit(1);
}

/* ---- what the answers must be ---- */

struct expect {
	const char *key;
	const char *func;
	const char *source; /* in SRC_DIR */
	int at_entry;	    /* the address is the function's first */
};

static const struct expect target_expect[] = {
    {"alpha", "sym_alpha", "sym_target.c", 1},
    {"alpha_call", "sym_alpha", "sym_target.c", 0},
    {"beta", "sym_beta", "sym_target.c", 1},
    {"return_address", "sym_return_address", "sym_target.c", 1},
    {"lib_square", "sym_lib_square", "sym_lib.c", 1},
    {"lib_cube", "sym_lib_cube", "sym_lib.c", 1},
    {"lib_helper", "sym_lib_helper", "sym_lib.c", 1},
};
#define TARGET_EXPECT (sizeof(target_expect) / sizeof(target_expect[0]))

static const struct expect cxx_expect[] = {
    {"box_make", "outer::inner::Box<int>::make(int)", "sym_cxx.cc", 1},
    {"plain_int", "outer::inner::plain(int)", "sym_cxx.cc", 1},
    {"plain_double", "outer::inner::plain(double)", "sym_cxx.cc", 1},
    {"twice", "long twice<long>(long)", "sym_cxx.cc", 1},
};
#define CXX_EXPECT (sizeof(cxx_expect) / sizeof(cxx_expect[0]))

/* The line of "// @key" at the end of a line of SRC_DIR/source. */
static uint32_t marker_line(const char *source, const char *key)
{
	char path[PATH_MAX], want[96], line[1024];
	snprintf(path, sizeof(path), "%s/%s", src_dir, source);
	snprintf(want, sizeof(want), "// @%s\n", key);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "test_symbols: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	uint32_t n = 0, found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		n++;
		size_t len = strlen(line), wlen = strlen(want);
		if (len >= wlen && strcmp(line + len - wlen, want) == 0)
			found = n;
	}
	fclose(f);
	if (!found) {
		fprintf(stderr, "test_symbols: no marker %s in %s\n", want, path);
		exit(1);
	}
	return found;
}

static int same_file(const char *got, const char *source)
{
	char want[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	snprintf(want, sizeof(want), "%s/%s", src_dir, source);
	if (got && strcmp(got, want) == 0)
		return 1;
	return got && realpath(got, a) && realpath(want, b) && strcmp(a, b) == 0;
}

static int same_string(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

enum want_level {
	WANT_LINES, /* name, file and line */
	WANT_NAMES, /* name only, from a symbol table */
};

/* modules: the symbolizer's handle for each of the run's modules */
static void check_expect(struct rt_symbolizer *sym, const int *modules, const struct run *r,
			 const struct expect *e, size_t n, enum want_level level, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		const struct func_rec *f = func_of(r, e[i].key);
		struct rt_symbol s;
		CHECK(rt_symbolizer_resolve(sym, modules[f->module], f->addr, &s) == 0, "%s", what);
		CHECK(s.func && strcmp(s.func, e[i].func) == 0, "%s: %s: function %s, want %s",
		      what, e[i].key, s.func ? s.func : "(none)", e[i].func);
		CHECK(s.offset == f->addr - r->mods[f->module].base, "%s: %s: offset", what,
		      e[i].key);
		if (e[i].at_entry)
			CHECK(s.func_offset == 0, "%s: %s: offset in function %" PRIu64, what,
			      e[i].key, s.func_offset);
		else
			CHECK(s.func_offset > 0, "%s: %s: offset in function 0", what, e[i].key);
		if (level == WANT_LINES) {
			uint32_t want = marker_line(e[i].source, e[i].key);
			CHECK(same_file(s.file, e[i].source), "%s: %s: file %s, want %s", what,
			      e[i].key, s.file ? s.file : "(none)", e[i].source);
			CHECK(s.line == want, "%s: %s: line %u, want %u", what, e[i].key, s.line,
			      want);
		} else {
			CHECK(s.file == NULL && s.line == 0, "%s: %s: a line (%s:%u) without DWARF",
			      what, e[i].key, s.file, s.line);
		}
		/* asked again: the same answer, from the cache */
		struct rt_symbol again;
		rt_symbolizer_resolve(sym, modules[f->module], f->addr, &again);
		CHECK(again.func == s.func && again.file == s.file && again.line == s.line &&
			  again.warning == NULL,
		      "%s: %s: a second answer differs", what, e[i].key);
	}
}

/* A symbolizer holding the run's modules at the given paths (NULL: as run). */
static struct rt_symbolizer *symbolizer_for(const struct run *r, const char *const *paths,
					    const char *debug_dir, int *modules)
{
	char err[512];
	struct rt_symbolizer *sym =
	    rt_symbolizer_create(&debug_dir, debug_dir ? 1 : 0, err, sizeof(err));
	if (!sym) {
		fprintf(stderr, "test_symbols: rt_symbolizer_create: %s\n", err);
		exit(1);
	}
	for (int i = 0; i < r->nmods; i++) {
		struct rt_module_desc d = {
		    .path = paths && paths[i] ? paths[i] : r->mods[i].path,
		    .build_id = r->mods[i].id,
		    .build_id_len = r->mods[i].id_len,
		    .base = r->mods[i].base,
		};
		modules[i] = rt_symbolizer_add_module(sym, &d);
		CHECK(modules[i] >= 0, "add_module %s: %d", d.path, modules[i]);
	}
	return sym;
}

/* buf (PATH_MAX bytes) := the temporary directory's name/ */
static void in_tmp(char *buf, const char *name)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", tmp, name) >= PATH_MAX) {
		fprintf(stderr, "test_symbols: %s/%s: path too long\n", tmp, name);
		exit(1);
	}
}

static void shell(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0) {
		fprintf(stderr, "test_symbols: failed: %s\n", cmd);
		exit(1);
	}
}

/* ---- the cases ---- */

static void test_plain(const struct run *r, const struct run *cxx)
{
	int mods[2];
	struct rt_symbolizer *sym = symbolizer_for(r, NULL, NULL, mods);
	check_expect(sym, mods, r, target_expect, TARGET_EXPECT, WANT_LINES, "PIE and dlopen");
	CHECK(rt_symbolizer_module_error(sym, mods[0]) == NULL, "an error for a good module");

	/* far past anything in the program: no name, no crash */
	struct rt_symbol s;
	CHECK(rt_symbolizer_resolve(sym, mods[0], r->mods[0].base + 0x40000000u, &s) == 0 &&
		  s.func == NULL && s.file == NULL && s.offset == 0x40000000u,
	      "an address outside the program has a name: %s", s.func);
	char raw[128];
	rt_symbol_format_raw(&s, raw, sizeof(raw));
	CHECK(strcmp(raw, "sym_target+0x40000000") == 0, "raw form %s", raw);
	CHECK(rt_symbolizer_resolve(sym, 7, 0, &s) == -EINVAL, "an unknown handle");
	CHECK(rt_symbolizer_resolve(sym, -1, 0, &s) == -EINVAL, "a negative handle");
	rt_symbolizer_destroy(sym);

	int cmods[1];
	sym = symbolizer_for(cxx, NULL, NULL, cmods);
	check_expect(sym, cmods, cxx, cxx_expect, CXX_EXPECT, WANT_LINES, "C++");
	rt_symbolizer_destroy(sym);
}

/*
 * Every address of a few functions, answered from the caches (in order,
 * after the entry) and cold (a fresh symbolizer each, backwards), must match
 * what libdw itself says for the line.
 */
static void test_every_address(const struct run *r)
{
	static const char *const keys[] = {"alpha", "beta", "lib_square"};
	int mods[2];
	struct rt_symbolizer *warm = symbolizer_for(r, NULL, NULL, mods);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		const struct func_rec *f = func_of(r, keys[k]);
		const struct module_rec *m = &r->mods[f->module];
		static const Dwfl_Callbacks cb = {.find_debuginfo = dwfl_standard_find_debuginfo,
						  .section_address = dwfl_offline_section_address};
		Dwfl *dwfl = dwfl_begin(&cb);
		dwfl_report_begin(dwfl);
		Dwfl_Module *dm = dwfl_report_elf(dwfl, "m", m->path, -1, m->base, true);
		dwfl_report_end(dwfl, NULL, NULL);
		CHECK(dm != NULL, "libdwfl cannot read %s", m->path);
		struct rt_symbol first;
		rt_symbolizer_resolve(warm, mods[f->module], f->addr, &first);
		int n = 0, lines = 0;
		for (uint64_t a = f->addr; dm && n < 4096; a++, n++) {
			struct rt_symbol s;
			rt_symbolizer_resolve(warm, mods[f->module], a, &s);
			if (s.func != first.func)
				break;
			/* libdw's own line lookup, in the unit that holds a (asked
			   unit by unit: clang writes no .debug_aranges) */
			Dwarf_Addr bias = 0;
			Dwarf_Die *cu = NULL;
			while ((cu = dwfl_module_nextcu(dm, cu, &bias)) != NULL &&
			       dwarf_haspc(cu, a - bias) != 1)
				;
			Dwarf_Line *l = cu ? dwarf_getsrc_die(cu, a - bias) : NULL;
			int lineno = 0;
			const char *file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
			if (l)
				dwarf_lineno(l, &lineno);
			/* line 0 is code of no line (sanitizer checks, for one): shown as none */
			if (lineno <= 0)
				file = NULL;
			CHECK(same_string(file, s.file) && s.line == (file ? (uint32_t)lineno : 0),
			      "%s+%d: %s:%u, libdw says %s:%d", keys[k], n, s.file, s.line, file,
			      lineno);
			lines += file != NULL;
			CHECK(s.func_offset == (uint64_t)n, "%s+%d: offset %" PRIu64, keys[k], n,
			      s.func_offset);
		}
		CHECK(n > 8 && n < 4096 && lines > n / 2,
		      "%s: %d addresses in the function, %d with a line", keys[k], n, lines);
		/* cold, from the last address backwards */
		for (int i = n - 1; i >= 0; i -= 7) {
			int cold_mods[2];
			struct rt_symbolizer *cold = symbolizer_for(r, NULL, NULL, cold_mods);
			struct rt_symbol c, w;
			rt_symbolizer_resolve(cold, cold_mods[f->module], f->addr + (uint64_t)i,
					      &c);
			rt_symbolizer_resolve(warm, mods[f->module], f->addr + (uint64_t)i, &w);
			CHECK(c.func && w.func && strcmp(c.func, w.func) == 0 && c.line == w.line &&
				  c.func_offset == w.func_offset && same_string(c.file, w.file),
			      "%s+%d: cold %s:%u, cached %s:%u", keys[k], i, c.file, c.line, w.file,
			      w.line);
			rt_symbolizer_destroy(cold);
		}
		dwfl_end(dwfl);
	}
	rt_symbolizer_destroy(warm);
}

static void test_separate_debug(const struct run *r, const char *target, const char *lib)
{
	int mods[2];
	/* stripped, with .gnu_debuglink: the program's debug file beside it,
	   the library's in the .debug subdirectory */
	shell("mkdir -p %s/link/.debug", tmp);
	shell("objcopy --only-keep-debug %s %s/link/sym_target.debug", target, tmp);
	shell("cd %s/link && objcopy --strip-all --add-gnu-debuglink=sym_target.debug %s "
	      "sym_target",
	      tmp, target);
	shell("objcopy --only-keep-debug %s %s/link/.debug/libsym_lib.so.debug", lib, tmp);
	shell("cd %s/link/.debug && objcopy --strip-all --add-gnu-debuglink=libsym_lib.so.debug "
	      "%s ../libsym_lib.so",
	      tmp, lib);
	char p0[PATH_MAX], p1[PATH_MAX];
	in_tmp(p0, "link/sym_target");
	in_tmp(p1, "link/libsym_lib.so");
	const char *link_paths[2] = {p0, p1};
	struct rt_symbolizer *sym = symbolizer_for(r, link_paths, NULL, mods);
	check_expect(sym, mods, r, target_expect, TARGET_EXPECT, WANT_LINES, ".gnu_debuglink");
	rt_symbolizer_destroy(sym);

	/* stripped of everything, no debug file: the library's exported names
	   from .dynsym, nothing for the program's (it exports none) */
	shell("mkdir -p %s/bare && objcopy --strip-all %s %s/bare/sym_target", tmp, target, tmp);
	shell("objcopy --strip-all %s %s/bare/libsym_lib.so", lib, tmp);
	in_tmp(p0, "bare/sym_target");
	in_tmp(p1, "bare/libsym_lib.so");
	const char *bare_paths[2] = {p0, p1};
	sym = symbolizer_for(r, bare_paths, NULL, mods);
	static const struct expect exported[] = {
	    {"lib_square", "sym_lib_square", "sym_lib.c", 1},
	    {"lib_cube", "sym_lib_cube", "sym_lib.c", 1},
	};
	check_expect(sym, mods, r, exported, 2, WANT_NAMES, "stripped library");
	static const char *const unnamed[] = {"alpha", "beta", "lib_helper"};
	for (size_t i = 0; i < 3; i++) {
		const struct func_rec *f = func_of(r, unnamed[i]);
		struct rt_symbol s;
		rt_symbolizer_resolve(sym, mods[f->module], f->addr, &s);
		CHECK(s.func == NULL && s.file == NULL && s.warning == NULL,
		      "stripped: %s named %s", unnamed[i], s.func);
	}
	rt_symbolizer_destroy(sym);

	/* debug information stripped, symbol table kept: names without lines */
	shell("mkdir -p %s/nodebug && objcopy --strip-debug %s %s/nodebug/sym_target", tmp, target,
	      tmp);
	shell("objcopy --strip-debug %s %s/nodebug/libsym_lib.so", lib, tmp);
	in_tmp(p0, "nodebug/sym_target");
	in_tmp(p1, "nodebug/libsym_lib.so");
	const char *nodebug_paths[2] = {p0, p1};
	sym = symbolizer_for(r, nodebug_paths, NULL, mods);
	check_expect(sym, mods, r, target_expect, TARGET_EXPECT, WANT_NAMES, "no DWARF");
	rt_symbolizer_destroy(sym);

	/* stripped, no debuglink: found by build-id under the caller's directory */
	shell("mkdir -p %s/bid %s/dbg/.build-id/%.2s", tmp, tmp, r->mods[0].id_hex);
	shell("objcopy --strip-all %s %s/bid/sym_target", target, tmp);
	shell("objcopy --only-keep-debug %s %s/dbg/.build-id/%.2s/%s.debug", target, tmp,
	      r->mods[0].id_hex, r->mods[0].id_hex + 2);
	in_tmp(p0, "bid/sym_target");
	const char *bid_paths[2] = {p0, NULL};
	char dbg[PATH_MAX];
	in_tmp(dbg, "dbg");
	sym = symbolizer_for(r, bid_paths, dbg, mods);
	check_expect(sym, mods, r, target_expect, 4, WANT_LINES, "build-id directory");
	rt_symbolizer_destroy(sym);
	/* and without that directory, no names: it was what helped */
	sym = symbolizer_for(r, bid_paths, NULL, mods);
	struct rt_symbol s;
	rt_symbolizer_resolve(sym, mods[0], func_of(r, "alpha")->addr, &s);
	CHECK(s.func == NULL && s.file == NULL, "a name without the debug directory: %s", s.func);
	rt_symbolizer_destroy(sym);
}

static void test_build_id_rule(const struct run *r, const struct run *rebuilt, const char *target,
			       const char *rebuilt_path)
{
	CHECK(r->mods[0].id_len > 0 && rebuilt->mods[0].id_len > 0 &&
		  strcmp(r->mods[0].id_hex, rebuilt->mods[0].id_hex) != 0,
	      "the rebuilt program has build-id %s like the original %s", rebuilt->mods[0].id_hex,
	      r->mods[0].id_hex);
	/* the trace was made with TARGET; REBUILT now sits at its path */
	char p0[PATH_MAX];
	in_tmp(p0, "mm/sym_target");
	shell("mkdir -p %s/mm && cp %s %s", tmp, rebuilt_path, p0);
	const char *paths[2] = {p0, NULL};
	int mods[2];
	struct rt_symbolizer *sym = symbolizer_for(r, paths, NULL, mods);
	int warnings = 0;
	for (size_t i = 0; i < TARGET_EXPECT; i++) {
		const struct func_rec *f = func_of(r, target_expect[i].key);
		struct rt_symbol s;
		rt_symbolizer_resolve(sym, mods[f->module], f->addr, &s);
		if (f->module != 0)
			continue;
		CHECK(s.func == NULL && s.file == NULL && s.line == 0,
		      "%s resolved in a mismatched file: %s %s:%u", f->key, s.func, s.file, s.line);
		char raw[128], want[128];
		rt_symbol_format_raw(&s, raw, sizeof(raw));
		snprintf(want, sizeof(want), "sym_target+0x%" PRIx64, f->addr - r->mods[0].base);
		CHECK(strcmp(raw, want) == 0, "raw form %s, want %s", raw, want);
		if (s.warning) {
			warnings++;
			CHECK(strstr(s.warning, p0) && strstr(s.warning, r->mods[0].id_hex) &&
				  strstr(s.warning, rebuilt->mods[0].id_hex),
			      "the warning does not name the file and both build-ids: %s",
			      s.warning);
		}
	}
	CHECK(warnings == 1, "%d warnings for one mismatched module", warnings);
	const char *err = rt_symbolizer_module_error(sym, mods[0]);
	CHECK(err && strstr(err, "build-id"), "module error: %s", err ? err : "(none)");
	/* the library, which did not change, still has its names */
	struct rt_symbol s;
	rt_symbolizer_resolve(sym, mods[1], func_of(r, "lib_cube")->addr, &s);
	CHECK(s.func && strcmp(s.func, "sym_lib_cube") == 0, "the library lost its names");
	rt_symbolizer_destroy(sym);

	/* the same file copied back: names again */
	shell("cp %s %s", target, p0);
	sym = symbolizer_for(r, paths, NULL, mods);
	check_expect(sym, mods, r, target_expect, TARGET_EXPECT, WANT_LINES, "copied back");
	rt_symbolizer_destroy(sym);

	/* a file that is gone: said once, module+offset */
	char gone[PATH_MAX];
	in_tmp(gone, "gone/sym_target");
	const char *gone_paths[2] = {gone, NULL};
	sym = symbolizer_for(r, gone_paths, NULL, mods);
	struct rt_symbol a, b;
	rt_symbolizer_resolve(sym, mods[0], func_of(r, "alpha")->addr, &a);
	rt_symbolizer_resolve(sym, mods[0], func_of(r, "beta")->addr, &b);
	CHECK(a.func == NULL && a.warning && strstr(a.warning, gone) && b.warning == NULL &&
		  b.func == NULL,
	      "a missing file: %s / %s", a.warning ? a.warning : "(no warning)",
	      b.warning ? b.warning : "(none)");
	rt_symbolizer_destroy(sym);
}

static void test_api_errors(void)
{
	char err[512];
	const char *dirs[] = {"/nonexistent/debug/dir"};
	errno = 0;
	struct rt_symbolizer *sym = rt_symbolizer_create(dirs, 1, err, sizeof(err));
	CHECK(sym == NULL && errno == ENOENT && strstr(err, dirs[0]),
	      "a missing debug directory: errno %d, %s", errno, err);
	rt_symbolizer_destroy(sym);
	sym = rt_symbolizer_create(NULL, 0, err, sizeof(err));
	CHECK(sym != NULL, "create: %s", err);
	uint8_t id[RT_SYM_BUILD_ID_MAX + 1] = {0};
	struct rt_module_desc d = {.path = "/bin/true", .build_id = id, .build_id_len = sizeof(id)};
	CHECK(rt_symbolizer_add_module(sym, &d) == -EINVAL, "a build-id too long");
	d.path = "";
	d.build_id_len = 0;
	CHECK(rt_symbolizer_add_module(sym, &d) == -EINVAL, "an empty path");
	/* not an ELF file */
	d.path = "/etc/passwd";
	int m = rt_symbolizer_add_module(sym, &d);
	struct rt_symbol s;
	CHECK(m >= 0 && rt_symbolizer_resolve(sym, m, 0x1234, &s) == 0 && s.func == NULL &&
		  s.warning && strstr(s.warning, "/etc/passwd"),
	      "a file that is not ELF: %s", s.warning ? s.warning : "(no warning)");
	rt_symbolizer_destroy(sym);
	rt_symbolizer_destroy(NULL);
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: test_symbols SRC_DIR TARGET REBUILT LIBRARY CXX\n");
		return 2;
	}
	src_dir = argv[1];
	const char *target = argv[2], *rebuilt_path = argv[3], *lib = argv[4], *cxx_path = argv[5];
	/* nothing from the network: only files on this machine count */
	unsetenv("DEBUGINFOD_URLS");
	snprintf(tmp, sizeof(tmp), "%s/rt-symbols.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(tmp)) {
		fprintf(stderr, "test_symbols: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	char cmd[3 * PATH_MAX];
	struct run r, rebuilt, cxx;
	snprintf(cmd, sizeof(cmd), "'%s' '%s'", target, lib);
	run_program(cmd, &r);
	snprintf(cmd, sizeof(cmd), "'%s' '%s'", rebuilt_path, lib);
	run_program(cmd, &rebuilt);
	snprintf(cmd, sizeof(cmd), "'%s'", cxx_path);
	run_program(cmd, &cxx);
	if (r.nmods != 2) {
		fprintf(stderr, "test_symbols: %s did not report its library\n", target);
		return 1;
	}

	test_plain(&r, &cxx);
	test_every_address(&r);
	test_separate_debug(&r, target, lib);
	test_build_id_rule(&r, &rebuilt, target, rebuilt_path);
	test_api_errors();

	shell("rm -rf '%s'", tmp);
	if (failures) {
		fprintf(stderr, "test_symbols: %d failures\n", failures);
		return 1;
	}
	printf("test_symbols: all checks passed\n");
	return 0;
}
