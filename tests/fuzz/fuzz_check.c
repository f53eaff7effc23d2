/*
 * fuzz_check.c - `ringtrace check` on any bytes, through the command's own
 * entry point (rt_cmd_check), as one input and as two.
 *
 * The input is a trace file.  It is written into a memfd made once and
 * reused (the reader reads files by descriptor, by their /proc/self/fd
 * path, as any file), and `check` runs four times: on it in text and in
 * --json, on it given twice (one recording read from two files: the
 * repeated blocks are kept once), and on its two halves in two more memfds
 * (a rotated pair cut anywhere, even inside a block).  Its output goes to
 * /dev/null (fd 1 while it runs) and its messages nowhere (stderr while it
 * runs; the sanitizers and libFuzzer write to fd 2, which stays).
 *
 * Beyond not crashing, leaking, hanging or reading out of bounds, check
 * must keep its word (check_promises):
 *   - its exit status is 0 (clean), 1 (damaged) or 2 (unreadable), and the
 *     same in text and JSON;
 *   - 2 exactly when the trace set cannot open or read the inputs;
 *   - 0 exactly when the set holds no damage: no damaged region, and no
 *     events lost to damage other than those an earlier `recover` or `cut`
 *     noted in the file (a LOSS entry of a trace file that is not a gap);
 *   - the same file given twice gets the status it gets alone.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "fuzz.h"
#include "read/trace_set.h"

enum { WHOLE, FIRST_HALF, SECOND_HALF, FILES };

static int null_fd = -1, saved_stdout = -1;
static FILE *null_file;
static int fds[FILES];
static char paths[FILES][64];

/* Made once: the three memfds, /dev/null, and a way back to the real stdout. */
static void setup(void)
{
	if (null_file)
		return;
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	saved_stdout = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	null_file = fopen("/dev/null", "we");
	if (null_fd < 0 || saved_stdout < 0 || !null_file) {
		perror("fuzz_check: setup");
		abort();
	}
	for (int i = 0; i < FILES; i++) {
		fds[i] = memfd_create("fuzz-check", MFD_CLOEXEC);
		if (fds[i] < 0) {
			perror("fuzz_check: memfd_create");
			abort();
		}
		snprintf(paths[i], sizeof(paths[i]), "/proc/self/fd/%d", fds[i]);
	}
}

static int fill(int fd, const uint8_t *data, size_t size)
{
	return ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size ? 0 : -1;
}

/* `ringtrace check [--json] INPUT...` with stdout to /dev/null and stderr silenced. */
static int run_check(const char *const *inputs, size_t count, int json)
{
	char *argv[8];
	int argc = 0;
	argv[argc++] = "check";
	if (json)
		argv[argc++] = "--json";
	for (size_t i = 0; i < count; i++)
		argv[argc++] = (char *)inputs[i];
	argv[argc] = NULL;
	FILE *saved_stderr = stderr;
	stderr = null_file;
	if (dup2(null_fd, STDOUT_FILENO) < 0)
		abort();
	int status = rt_cmd_check(argc, argv);
	if (dup2(saved_stdout, STDOUT_FILENO) < 0)
		abort();
	stderr = saved_stderr;
	return status;
}

/*
 * What the trace set itself says about the inputs: -1 unreadable, 1
 * damaged, 0 clean, by its own rules rather than check's: its damaged
 * regions, then every loss the merge hands out.
 */
static int set_verdict(const char *const *inputs, size_t count)
{
	struct rt_trace_set *set;
	char message[512];
	if (rt_trace_set_open((char *const *)inputs, count, &set, message, sizeof(message)) != 0)
		return -1;
	int verdict = 0;
	if (rt_trace_set_count(set) != 0 || rt_trace_set_start(set, 0) != 0) {
		verdict = -1;
		goto out;
	}
	if (rt_trace_set_damage_regions(set))
		verdict = 1;
	const struct rt_item *it;
	uint32_t source;
	while ((it = rt_trace_set_next(set, &source)) != NULL) {
		PROMISE(source < set->source_count);
		if (it->kind != RT_ITEM_LOSS || it->loss.reason != RT_LOSS_DAMAGED)
			continue;
		const struct rt_set_source *s = &set->sources[source];
		int noted =
		    !s->arena && !(it->flags & RT_ITEM_DAMAGE) && it->loss.note != RT_NOTE_GAP;
		if (!noted && (it->loss.count || (it->flags & RT_ITEM_DAMAGE)))
			verdict = 1;
	}
	if (rt_trace_set_error(set))
		verdict = -1;
out:
	rt_trace_set_close(set);
	return verdict;
}

/* check's status on inputs, in text and JSON, against the set's verdict. */
static int check_promises(const char *const *inputs, size_t count, int json)
{
	int status = run_check(inputs, count, json);
	PROMISE(status == 0 || status == 1 || status == 2);
	int verdict = set_verdict(inputs, count);
	if (verdict < 0)
		PROMISE(status == 2);
	else
		PROMISE(status == verdict);
	return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	size_t half = size / 2;
	if (fill(fds[WHOLE], data, size) || fill(fds[FIRST_HALF], data, half) ||
	    fill(fds[SECOND_HALF], data + half, size - half))
		return 0;
	const char *one[] = {paths[WHOLE]};
	const char *twice[] = {paths[WHOLE], paths[WHOLE]};
	const char *halves[] = {paths[FIRST_HALF], paths[SECOND_HALF]};

	int alone = check_promises(one, 1, 0);
	PROMISE(run_check(one, 1, 1) == alone);
	PROMISE(check_promises(twice, 2, 0) == alone);
	check_promises(halves, 2, 1);
	return 0;
}
