/*
 * fuzz_arena.c - the arena reader, and everything the tool prints from
 * what it read, on any bytes.
 *
 * The input is an arena file.  It is decoded from memory by
 * rt_reader_open_memory(), the code rt_reader_open() runs on a mapped file,
 * here on a heap buffer of exactly the input's size so that the sanitizers
 * catch a read past its end.  Then it is printed the ways `ringtrace dump`
 * and `ringtrace info` print it: text, JSON, --tail with --tid, --last-events,
 * --hexdump, info and info --json, into /dev/null.  Whatever the bytes, none of this
 * may crash, leak, hang or read outside the input, and what the reader
 * returns must keep the promises the printers rely on (check_promises).
 *
 * Then it is followed as `ringtrace tail` follows a live arena: its tables
 * read (and read again), every ring read from where a follower that starts
 * now stands and from its start, the items printed as text and JSON.
 *
 * Whether the writer still runs comes from /proc (the header's pid and
 * start time): pid 1 with start time 0 takes the live-writer path.
 *
 * An input that starts with SPARSE_MAGIC is a sparse file instead: after
 * the magic, the file's size (u64, at most SPARSE_MAX), where its second
 * part goes (u64) and the length of its first part (u32); then the parts.
 * The first is written at offset 0, the second where it says, and the rest
 * of the file is holes: a header may claim rings of gigabytes over a file
 * that holds kilobytes.  It is written under /dev/shm (tmpfs, where reading
 * a hole through a shared mapping would allocate it) and read by path, as
 * the tool reads it, then printed; the file must hold no more blocks after
 * than before, and the reader's memory follows the bytes written.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "common/output.h"
#include "fuzz.h"
#include "decode/io_event.h"
#include "decode/log_args.h"
#include "format/records.h"
#include "present/json.h"
#include "present/text.h"
#include "read/arena_cursor.h"
#include "read/arena_reader.h"
#include "read/merge.h"

static int null_fd = -1;

/*
 * A log item: of a log site, its payload whole slots' worth, and its
 * message rendered from whatever the payload says without reading past it.
 */
static void check_log(const struct rt_reader *rd, const struct rt_item *it)
{
	const struct rt_site *site = rt_site_lookup(&rd->sites, it->site);
	PROMISE(site && site->kind == RT_SITE_LOG);
	PROMISE(it->log.payload && it->log.nslots >= 1 && it->log.nslots <= RT_LOG_MAX_SLOTS &&
		it->log.length == RT_LOG_PAYLOAD_BYTES(it->log.nslots));
	char message[512];
	size_t n =
	    rt_log_render(message, sizeof(message), site, it->log.payload, it->log.length, NULL);
	PROMISE(strlen(message) == (n < sizeof(message) ? n : sizeof(message) - 1));
}

/*
 * An I/O item: of the I/O site, at least its fixed part in whole slots; a
 * payload that parses names paths inside itself.
 */
static void check_io(const struct rt_reader *rd, const struct rt_item *it)
{
	const struct rt_site *site = rt_site_lookup(&rd->sites, it->site);
	PROMISE(site && site->kind == RT_SITE_IO);
	PROMISE(it->log.payload && it->log.nslots >= 2 && it->log.nslots <= RT_LOG_MAX_SLOTS &&
		it->log.length == RT_LOG_PAYLOAD_BYTES(it->log.nslots));
	struct rt_io_event ev;
	if (rt_io_event_parse(it->log.payload, it->log.length, &ev, NULL) == 0) {
		const char *end = (const char *)it->log.payload + it->log.length;
		PROMISE(!ev.path || ev.path + ev.path_length <= end);
		PROMISE(!ev.path2 || ev.path2 + ev.path2_length <= end);
	}
}

/*
 * What read/arena_reader.h promises about any arena it opens: a thread's
 * items are its own, in rising record order, and every event's site is
 * valid; the losses are in time-line order; the totals count the events
 * that are there (dump --tail relies on it); merging hands out each item
 * once.
 */
static void check_promises(const struct rt_reader *rd)
{
	struct rt_merge_source *sources = calloc((size_t)rd->thread_count + 1, sizeof(*sources));
	struct rt_arena_cursor *cursors = calloc((size_t)rd->thread_count + 1, sizeof(*cursors));
	if (!sources || !cursors) {
		free(sources);
		free(cursors);
		return;
	}
	uint64_t events = 0, items = 0;
	for (uint32_t i = 0; i < rd->thread_count; i++) {
		const struct rt_reader_thread *t = &rd->threads[i];
		/* windows of a few items: refilling is read as often as the items */
		struct rt_arena_cursor c;
		if (rt_arena_cursor_init(&c, rd, i, 3))
			continue;
		size_t k = 0;
		uint64_t previous = 0;
		for (size_t n; (n = rt_arena_cursor_fill(&c)) > 0;) {
			for (size_t w = 0; w < n; w++, k++) {
				const struct rt_item *it = &c.items[w];
				PROMISE(it->thread == i && it->tid == t->tid);
				PROMISE(it->kind == RT_ITEM_TRACE || it->kind == RT_ITEM_LOSS ||
					it->kind == RT_ITEM_LOG || it->kind == RT_ITEM_IO);
				PROMISE(it->kind == RT_ITEM_LOSS ||
					rt_site_lookup(&rd->sites, it->site));
				PROMISE(k == 0 || it->seq > previous);
				previous = it->seq;
				events += rt_item_kind_is_event(it->kind);
				if (it->kind == RT_ITEM_LOG)
					check_log(rd, it);
				if (it->kind == RT_ITEM_IO)
					check_io(rd, it);
			}
		}
		/* the cursor gives the items the check pass counted, no more, no fewer */
		PROMISE(k == t->item_count);
		rt_arena_cursor_free(&c);
		PROMISE(!t->last.kind || rt_site_lookup(&rd->sites, t->last.site));
		if (rt_arena_cursor_init(&cursors[i], rd, i, 5) == 0) {
			sources[i].refill = rt_arena_cursor_refill;
			sources[i].state = &cursors[i];
		}
		items += t->item_count;
	}
	for (uint32_t i = 0; i < rd->fds.count; i++) {
		const struct rt_fd_seed *f = &rd->fds.items[i];
		PROMISE(f->name && f->name_length < RT_FD_NAME_MAX &&
			strlen(f->name) == f->name_length);
		PROMISE(f->state == RT_FD_OPEN || f->state == RT_FD_CLOSED);
	}
	for (size_t k = 0; k < rd->loss_count; k++) {
		PROMISE(rd->losses[k].kind == RT_ITEM_LOSS);
		PROMISE(!(rd->losses[k].flags & RT_ITEM_DAMAGE) ||
			rd->losses[k].loss.damage < rd->damage.count);
		PROMISE(rd->losses[k].thread == RT_ITEM_NO_THREAD ||
			rd->losses[k].thread < rd->thread_count);
		PROMISE(k == 0 || rt_item_compare(&rd->losses[k - 1], &rd->losses[k]) <= 0);
	}
	PROMISE(events == rd->totals.present);
	/* a damaged region that did not parse is bytes of the file (--hexdump shows them) */
	for (size_t k = 0; k < rd->damage.count; k++) {
		const struct rt_damage *d = &rd->damage.items[k];
		PROMISE(d->offset + d->length >= d->offset);
		PROMISE(!(d->flags & RT_DAMAGE_UNPARSED) || d->offset + d->length <= rd->size);
		PROMISE(memchr(d->what, 0, sizeof(d->what)) != NULL);
	}
	sources[rd->thread_count].items = rd->losses;
	sources[rd->thread_count].count = rd->loss_count;
	items += rd->loss_count;
	struct rt_merge merge;
	if (rt_merge_init(&merge, sources, (size_t)rd->thread_count + 1) == 0) {
		uint64_t merged = 0;
		while (rt_merge_next(&merge))
			merged++;
		PROMISE(merged == items);
		rt_merge_free(&merge);
	}
	for (uint32_t i = 0; i < rd->thread_count; i++)
		rt_arena_cursor_free(&cursors[i]);
	free(cursors);
	free(sources);
}

static void print_all(const struct rt_reader *rd, struct rt_out *out)
{
	struct rt_dump_options o;
	memset(&o, 0, sizeof(o));
	rt_cmd_dump_print(rd, &o, out);
	o.json = 1;
	rt_cmd_dump_print(rd, &o, out);
	/* --tail 2 --tid of the first thread: the filtered copy of the losses */
	memset(&o, 0, sizeof(o));
	o.has_tail = 1;
	o.tail = 2;
	o.has_tid = 1;
	o.tid = rd->thread_count ? rd->threads[0].tid : 1;
	rt_cmd_dump_print(rd, &o, out);
	memset(&o, 0, sizeof(o));
	o.json = 1;
	o.last_events_only = 1;
	rt_cmd_dump_print(rd, &o, out);
	memset(&o, 0, sizeof(o));
	o.hexdump = 1;
	rt_cmd_dump_print(rd, &o, out);
	rt_cmd_info_print(rd, 0, out);
	rt_cmd_info_print(rd, 1, out);
}

/*
 * The follower's items: each of a thread the tables hold (or none), every
 * event's site valid, a log's payload whole; printed as tail prints them.
 */
static void follow_all(const uint8_t *data, size_t size, struct rt_out *out)
{
	struct rt_reader *rd;
	struct rt_read_error error;
	if (rt_reader_open_live_memory(data, size, "fuzz-input", &rd, &error) != 0)
		return;
	struct rt_text_printer text;
	struct rt_json_printer json;
	struct rt_item_batch batch = {0};
	if (rt_reader_reload(rd, &error) >= 0 && rt_text_printer_init(&text, out, rd) == 0) {
		if (rt_json_printer_init(&json, out, rd) == 0) {
			for (uint32_t r = 0; r < rd->header.ring_count; r++) {
				struct rt_ring_cursor cursors[2];
				rt_reader_ring_start(rd, r, &cursors[0]);
				memset(&cursors[1], 0, sizeof(cursors[1]));
				for (int c = 0; c < 2; c++) {
					batch.count = 0;
					uint64_t head = rt_reader_ring_head(rd, r);
					uint64_t was = cursors[c].slot;
					if (rt_reader_follow_ring(rd, r, head, &cursors[c], &batch))
						break;
					for (size_t k = 0; k < batch.count; k++) {
						const struct rt_item *it = &batch.items[k];
						PROMISE(it->thread == RT_ITEM_NO_THREAD ||
							it->thread < rd->thread_count);
						PROMISE(it->kind == RT_ITEM_LOSS ||
							rt_site_lookup(&rd->sites, it->site));
						if (it->kind == RT_ITEM_LOG)
							check_log(rd, it);
						rt_text_print_item(&text, it);
						rt_json_print_item(&json, it);
					}
					/* at head, or where it was (a ring the file cuts short) */
					PROMISE(cursors[c].slot == was || cursors[c].slot == head);
					rt_reader_forget_payloads(rd);
				}
			}
			rt_json_printer_free(&json);
		}
		rt_text_printer_free(&text);
	}
	free(batch.items);
	rt_reader_close(rd);
}

#define SPARSE_MAGIC "RTSPARSE"
#define SPARSE_PREFIX 28u
#define SPARSE_MAX (64ull << 30)

static uint64_t load_u64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* What the tool does with an arena it opened: the promises, then every printer. */
static void check_and_print(struct rt_reader *rd)
{
	check_promises(rd);
	struct rt_out out;
	if (rt_out_open(&out, null_fd) == 0) {
		print_all(rd, &out);
		rt_out_close(&out);
	}
}
/* The sparse-file mode (above): write the file, read it by path, check its blocks. */
static void read_sparse(const uint8_t *data, size_t size)
{
	uint32_t split;
	memcpy(&split, data + 24, sizeof(split));
	const uint8_t *parts = data + SPARSE_PREFIX;
	const size_t length = size - SPARSE_PREFIX;
	if (split > length)
		split = (uint32_t)length;
	uint64_t second = load_u64(data + 16) % SPARSE_MAX & ~(uint64_t)4095;
	if (second < split)
		second = (split + 4095u) & ~(uint64_t)4095;
	uint64_t end = second + (length - split);
	uint64_t apparent = load_u64(data + 8) % SPARSE_MAX;
	if (apparent < end)
		apparent = end;
	char path[] = "/dev/shm/fuzz-arena-sparse.XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return;
	unlink(path);
	struct stat before, after;
	char name[64];
	if (pwrite(fd, parts, split, 0) != (ssize_t)split ||
	    pwrite(fd, parts + split, length - split, (off_t)second) != (ssize_t)(length - split) ||
	    ftruncate(fd, (off_t)apparent) != 0 || fstat(fd, &before) != 0) {
		close(fd);
		return;
	}
	/* by path, as the tool opens it: the descriptor's own entry in /proc */
	snprintf(name, sizeof(name), "/proc/self/fd/%d", fd);
	struct rt_reader *rd;
	struct rt_read_error error;
	if (rt_reader_open(name, &rd, &error) == 0) {
		check_and_print(rd);
		rt_reader_close(rd);
	}
	if (fstat(fd, &after) == 0 && after.st_blocks > before.st_blocks) {
		fprintf(stderr,
			"fuzz_arena: reading a sparse file added blocks to it: %lld -> %lld\n",
			(long long)before.st_blocks, (long long)after.st_blocks);
		abort();
	}
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (null_fd < 0)
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (size >= SPARSE_PREFIX && memcmp(data, SPARSE_MAGIC, 8) == 0) {
		read_sparse(data, size);
		return 0;
	}
	/* the reader wants 8-byte alignment, which malloc gives (libFuzzer's copy has it) */
	uint8_t *copy = NULL;
	if ((uintptr_t)data % 8) {
		copy = malloc(size ? size : 1);
		if (!copy)
			return 0;
		memcpy(copy, data, size);
		data = copy;
	}
	struct rt_reader *rd;
	struct rt_read_error error;
	if (rt_reader_open_memory(data, size, "fuzz-input", &rd, &error) == 0) {
		check_and_print(rd);
		rt_reader_close(rd);
		struct rt_out out;
		if (rt_out_open(&out, null_fd) == 0) {
			follow_all(data, size, &out);
			rt_out_close(&out);
		}
	}
	free(copy);
	return 0;
}
