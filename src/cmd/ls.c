/*
 * ls.c - `ringtrace ls`: the arenas on this machine, whose they are, how
 * their processes are doing or ended, and what they take on disk.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/arena_names.h"
#include "common/output.h"
#include "common/parse.h"
#include "present/units.h"
#include "read/arena_list.h"

#define LS_USAGE "ringtrace ls [--json] [PATH...]"

void rt_cmd_ls_help(FILE *to)
{
	fprintf(to,
		"usage: " LS_USAGE "\n"
		"\n"
		"List arenas: with no PATH, those in " RT_ARENA_DIR_TEXT " (" RT_ARENA_PREFIX
		"*" RT_ARENA_SUFFIX " and their\n" RT_ARENA_LAST_SUFFIX " and " RT_ARENA_LAST_SUFFIX
		".N); else the arenas in each directory PATH and each arena file PATH\n"
		"(and PATH" RT_ARENA_LAST_SUFFIX ", the previous run's, when there is one).\n"
		"\n"
		"Each line gives the status: running, exited, the signal the process died\n"
		"of (with the faulting address), 'replaced by exec' when the process\n"
		"went on as another program, or 'killed or crashed' when it ended\n"
		"without a word (SIGKILL, the OOM killer); then its pid and program, when\n"
		"it started, how long it ran ('>=' when only a lower bound is known), the\n"
		"space the arena takes on disk, and its path.  A last line adds up the\n"
		"space held by the arenas of processes that ended: 'ringtrace rm --dead'\n"
		"removes them.\n"
		"\n"
		"Options:\n"
		"  --json   one JSON object per arena, then one with the totals\n"
		"  --help   this text\n");
}

/* The text of one row, column by column. */
enum column { STATUS, PID, PROGRAM, STARTED, SPAN, DISK, COLUMNS };

static const char *const headings[COLUMNS] = {
    "STATUS", "PID", "PROGRAM", "STARTED", "SPAN", "DISK",
};

struct row {
	char cell[COLUMNS][RT_PROGRAM_MAX];
};

/* The program's name escaped (common/escape.h), cut to the cell. */
static void printable(char *out, size_t size, const char *s)
{
	snprintf(out, size, "%s", rt_escaped_cut(s, strlen(s), size - 1));
}

static void fill_row(struct row *r, const struct rt_arena_file *f)
{
	const struct rt_arena_header *h = &f->header;
	char text[RT_UNITS_MAX];
	memset(r, 0, sizeof(*r));
	rt_arena_fate_text(f->fate, h, r->cell[STATUS], sizeof(r->cell[STATUS]));
	rt_units_bytes(r->cell[DISK], sizeof(r->cell[DISK]), f->disk_bytes);
	if (!f->checked) {
		for (int c = PID; c <= SPAN; c++)
			snprintf(r->cell[c], sizeof(r->cell[c]), "?");
		return;
	}
	snprintf(r->cell[PID], sizeof(r->cell[PID]), "%d", (int)h->pid);
	printable(r->cell[PROGRAM], sizeof(r->cell[PROGRAM]),
		  h->program[0] ? rt_path_basename(h->program) : "?");
	rt_units_wall(r->cell[STARTED], sizeof(r->cell[STARTED]), h->start.wall_ns, 0);
	rt_units_duration(text, sizeof(text), f->duration_ns);
	switch (f->span) {
	case RT_DURATION_UNKNOWN:
		snprintf(r->cell[SPAN], sizeof(r->cell[SPAN]), "?");
		break;
	case RT_DURATION_AT_LEAST:
		snprintf(r->cell[SPAN], sizeof(r->cell[SPAN]), ">=%s", text);
		break;
	default:
		snprintf(r->cell[SPAN], sizeof(r->cell[SPAN]), "%s", text);
		break;
	}
}

struct totals {
	size_t running;
	size_t dead;
	uint64_t dead_disk_bytes;
};

static void add_up(const struct rt_arena_list *list, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < list->count; i++) {
		if (list->files[i].running) {
			t->running++;
		} else {
			t->dead++;
			t->dead_disk_bytes += list->files[i].disk_bytes;
		}
	}
}

static int print_text(struct rt_out *out, const struct rt_arena_list *list, const char *where)
{
	struct totals t;
	add_up(list, &t);
	if (list->count == 0) {
		rt_out_printf(out, "no arenas%s%s\n", where ? " in " : "",
			      rt_escaped(where ? where : ""));
	} else {
		struct row *rows = calloc(list->count, sizeof(*rows));
		if (!rows)
			return -ENOMEM;
		size_t width[COLUMNS];
		for (int c = 0; c < COLUMNS; c++)
			width[c] = strlen(headings[c]);
		for (size_t i = 0; i < list->count; i++) {
			fill_row(&rows[i], &list->files[i]);
			for (int c = 0; c < COLUMNS; c++) {
				size_t n = strlen(rows[i].cell[c]);
				width[c] = n > width[c] ? n : width[c];
			}
		}
		/* numbers right-aligned, words left-aligned */
		rt_out_printf(out, "%-*s  %*s  %-*s  %-*s  %-*s  %*s  ARENA\n", (int)width[STATUS],
			      headings[STATUS], (int)width[PID], headings[PID], (int)width[PROGRAM],
			      headings[PROGRAM], (int)width[STARTED], headings[STARTED],
			      (int)width[SPAN], headings[SPAN], (int)width[DISK], headings[DISK]);
		for (size_t i = 0; i < list->count; i++) {
			const struct row *r = &rows[i];
			rt_out_printf(out, "%-*s  %*s  %-*s  %-*s  %-*s  %*s  ", (int)width[STATUS],
				      r->cell[STATUS], (int)width[PID], r->cell[PID],
				      (int)width[PROGRAM], r->cell[PROGRAM], (int)width[STARTED],
				      r->cell[STARTED], (int)width[SPAN], r->cell[SPAN],
				      (int)width[DISK], r->cell[DISK]);
			rt_out_escaped_str(out, list->files[i].path);
			rt_out_char(out, '\n');
		}
		free(rows);
		char size[RT_UNITS_MAX];
		rt_units_bytes(size, sizeof(size), t.dead_disk_bytes);
		rt_out_printf(out, "%zu arena%s: %zu running; %zu of ended processes, %s on disk\n",
			      list->count, list->count == 1 ? "" : "s", t.running, t.dead, size);
	}
	if (list->unreadable)
		rt_out_printf(out,
			      "%zu more file%s named like arenas could not be read "
			      "(another user's?)\n",
			      list->unreadable, list->unreadable == 1 ? "" : "s");
	return 0;
}

static void json_key(struct rt_out *out, const char *name)
{
	rt_out_char(out, ',');
	rt_out_json_string(out, name, strlen(name));
	rt_out_char(out, ':');
}

static void json_string(struct rt_out *out, const char *name, const char *value, size_t n)
{
	json_key(out, name);
	rt_out_json_string(out, value, n);
}

static void json_u64(struct rt_out *out, const char *name, uint64_t v)
{
	json_key(out, name);
	rt_out_u64(out, v);
}

static void json_null(struct rt_out *out, const char *name)
{
	json_key(out, name);
	rt_out_str(out, "null");
}

static const char *fate_word(enum rt_arena_fate fate)
{
	switch (fate) {
	case RT_FATE_RUNNING:
		return "running";
	case RT_FATE_EXIT:
		return "exited";
	case RT_FATE_SIGNAL:
		return "signal";
	case RT_FATE_EXEC:
		return "replaced_by_exec";
	case RT_FATE_KILLED:
		return "killed_or_crashed";
	default:
		return "unreadable";
	}
}

static const char *span_word(enum rt_duration_basis span)
{
	switch (span) {
	case RT_DURATION_TO_END:
		return "end";
	case RT_DURATION_AT_LEAST:
		return "at_least";
	case RT_DURATION_SO_FAR:
		return "so_far";
	default:
		return NULL;
	}
}

static void print_json_file(struct rt_out *out, const struct rt_arena_file *f)
{
	const struct rt_arena_header *h = &f->header;
	const char *status = fate_word(f->fate);
	rt_out_str(out, "{\"kind\":\"arena\"");
	json_string(out, "path", f->path, strlen(f->path));
	json_string(out, "status", status, strlen(status));
	json_key(out, "running");
	rt_out_str(out, f->running ? "true" : "false");
	if (f->checked) {
		json_string(out, "program", h->program, strnlen(h->program, sizeof(h->program)));
		json_key(out, "pid");
		rt_out_i64(out, h->pid);
	} else {
		json_null(out, "program");
		json_null(out, "pid");
	}
	if (f->fate == RT_FATE_SIGNAL || (f->fate == RT_FATE_EXIT && h->end_signal > 0)) {
		const char *name = rt_signal_name(h->end_signal);
		json_key(out, "signal");
		rt_out_i64(out, h->end_signal);
		if (name)
			json_string(out, "signal_name", name, strlen(name));
		else
			json_null(out, "signal_name");
		json_key(out, "tid");
		rt_out_i64(out, h->end_tid);
		json_u64(out, "address", h->end_address);
	} else {
		json_null(out, "signal");
		json_null(out, "signal_name");
		json_null(out, "tid");
		json_null(out, "address");
	}
	if (f->checked)
		json_u64(out, "start_wall_ns", h->start.wall_ns);
	else
		json_null(out, "start_wall_ns");
	const char *span = span_word(f->span);
	if (span) {
		json_key(out, "duration_ns");
		rt_out_i64(out, f->duration_ns);
		json_string(out, "duration", span, strlen(span));
	} else {
		json_null(out, "duration_ns");
		json_null(out, "duration");
	}
	json_u64(out, "disk_bytes", f->disk_bytes);
	json_u64(out, "file_bytes", f->file_bytes);
	json_u64(out, "uid", f->uid);
	if (!f->checked) {
		json_string(out, "problem", f->problem.message, strlen(f->problem.message));
		json_u64(out, "problem_offset", f->problem.offset);
	}
	rt_out_str(out, "}\n");
}

static void print_json(struct rt_out *out, const struct rt_arena_list *list)
{
	struct totals t;
	add_up(list, &t);
	for (size_t i = 0; i < list->count; i++)
		print_json_file(out, &list->files[i]);
	rt_out_str(out, "{\"kind\":\"total\"");
	json_u64(out, "arenas", list->count);
	json_u64(out, "running", t.running);
	json_u64(out, "dead", t.dead);
	json_u64(out, "dead_disk_bytes", t.dead_disk_bytes);
	json_u64(out, "unreadable_files", list->unreadable);
	rt_out_str(out, "}\n");
}

static void report(const char *path, const struct rt_read_error *error)
{
	if (error->has_offset)
		fprintf(stderr, "ringtrace ls: %s: byte %llu: %s\n", rt_escaped(path),
			(unsigned long long)error->offset, rt_escaped(error->message));
	else
		fprintf(stderr, "ringtrace ls: %s: %s\n", rt_escaped(path),
			rt_escaped(error->message));
}

/*
 * A file named on the command line, and its .last. Returns 0, or
 * RT_EXIT_USAGE: not an arena, or one whose header cannot be read (listed
 * all the same, for its disk space; its problem is reported with the rest).
 */
static int add_named_file(struct rt_arena_list *list, const char *path)
{
	struct rt_arena_file f;
	struct rt_read_error error;
	int rc = rt_arena_file_read(AT_FDCWD, path, path, &f, &error);
	if (rc) {
		report(path, &error);
		return RT_EXIT_USAGE;
	}
	int status = f.checked ? 0 : RT_EXIT_USAGE;
	if (rt_arena_list_add(list, &f) != 0) {
		rt_arena_file_free(&f);
		return -ENOMEM;
	}
	char *last = rt_arena_last_path(path);
	if (!last)
		return -ENOMEM;
	/* the previous run's, when there is one: anything else there is not ours to list */
	if (rt_arena_file_read(AT_FDCWD, last, last, &f, &error) == 0 &&
	    rt_arena_list_add(list, &f) != 0) {
		rt_arena_file_free(&f);
		free(last);
		return -ENOMEM;
	}
	free(last);
	return status;
}

int rt_cmd_ls(int argc, char **argv)
{
	int json = 0, positional_only = 0, status = RT_EXIT_OK, named = 0;
	for (int i = 1; i < argc; i++) {
		const char *arg = argv[i];
		if (positional_only || arg[0] != '-' || arg[1] == 0) {
			named++;
		} else if (strcmp(arg, "--") == 0) {
			positional_only = 1;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			rt_cmd_ls_help(stdout);
			return RT_EXIT_OK;
		} else if (strcmp(arg, "--json") == 0) {
			json = 1;
		} else {
			return rt_cmd_usage_error("ls", LS_USAGE, "unknown option '%s'", arg);
		}
	}

	struct rt_arena_list list = {0};
	struct rt_read_error error;
	int rc = 0;
	char dir[PATH_MAX];
	if (!named && rt_arena_dir(dir, sizeof(dir)) != 0) {
		fprintf(stderr, "ringtrace ls: %s is too long a path\n", RT_ARENA_DIR_ENV);
		return RT_EXIT_USAGE;
	}
	if (!named) {
		rc = rt_arena_list_dir(&list, dir, 1, &error);
		if (rc == -ENOENT)
			rc = 0; /* no such directory: no arenas */
		else if (rc && rc != -ENOMEM) {
			report(dir, &error);
			status = RT_EXIT_USAGE;
			rc = 0;
		}
	}
	positional_only = 0;
	for (int i = 1; !rc && i < argc; i++) {
		const char *arg = argv[i];
		if (!positional_only && arg[0] == '-' && arg[1] != 0) {
			positional_only = strcmp(arg, "--") == 0;
			continue;
		}
		struct stat st;
		if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
			rc = rt_arena_list_dir(&list, arg, 0, &error);
			if (rc && rc != -ENOMEM) {
				report(arg, &error);
				status = RT_EXIT_USAGE;
				rc = 0;
			}
		} else {
			rc = add_named_file(&list, arg);
			if (rc == RT_EXIT_USAGE) {
				status = RT_EXIT_USAGE;
				rc = 0;
			}
		}
	}
	if (rc) {
		rt_arena_list_free(&list);
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	rt_arena_list_sort(&list);
	for (size_t i = 0; i < list.count; i++)
		if (!list.files[i].checked)
			report(list.files[i].path, &list.files[i].problem);

	struct rt_out out;
	if (rt_out_open(&out, STDOUT_FILENO) != 0) {
		rt_arena_list_free(&list);
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	if (json)
		print_json(&out, &list);
	else
		rc = print_text(&out, &list, named ? NULL : dir);
	rt_arena_list_free(&list);
	int written = rt_cmd_finish_output(rt_out_close(&out));
	if (rc) {
		fprintf(stderr, "ringtrace: out of memory\n");
		return RT_EXIT_FAILURE;
	}
	return written != RT_EXIT_OK ? written : status;
}
