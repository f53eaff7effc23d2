/*
 * test_io.c - file I/O records on the reading side: payloads parsed and
 * checked (decode/io_event.h), descriptor names by time and derived
 * positions (decode/fd_names.h), against records made by hand.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "../lib/check.h"
#include "../lib/io_payload.h"
#include "decode/fd_names.h"
#include "decode/io_event.h"
#include "format/records.h"

/* The payload of call as a record holds it: padded to its slots. */
static size_t record_payload(const struct tio *call, unsigned char *out)
{
	memset(out, 0, RT_LOG_PAYLOAD_MAX);
	size_t n = tio_payload(call, out);
	return RT_LOG_PAYLOAD_BYTES(RT_LOG_SLOTS(n));
}

/* Feed one call completed at done; *r what the table said. */
static void call(struct rt_fd_names *t, const struct tio *c, uint64_t done,
		 struct rt_fd_resolved *r)
{
	unsigned char p[RT_LOG_PAYLOAD_MAX];
	size_t n = record_payload(c, p);
	struct rt_io_event ev;
	const char *why = NULL;
	CHECK(rt_io_event_parse(p, n, &ev, &why) == 0);
	CHECK_EQ(rt_fd_names_call(t, &ev, done, r), 0);
}

static int named(const struct rt_fd_name *n, const char *want)
{
	if (!n->known || !n->name || strcmp(n->name, want) != 0) {
		fprintf(stderr, "  resolved [%s] (%s), expected [%s]\n", n->known ? n->name : "?",
			n->why ? n->why : "-", want);
		return 0;
	}
	return n->name_length == strlen(want);
}

static int unknown(const struct rt_fd_name *n, const char *why)
{
	return !n->known && n->why && strcmp(n->why, why) == 0;
}

static struct tio open_call(const char *path, uint64_t start, int64_t fd, uint32_t flags)
{
	return (struct tio){.op = RT_IO_OPEN,
			    .flags = RT_IO_F_AUX,
			    .fd = -1,
			    .start = start,
			    .result = fd,
			    .aux = {flags, 0644},
			    .path = path};
}

static struct tio io_call(uint16_t op, int32_t fd, uint64_t start, int64_t result)
{
	return (struct tio){.op = op, .fd = fd, .start = start, .size = 4096, .result = result};
}

static void test_parse(void)
{
	unsigned char p[RT_LOG_PAYLOAD_MAX];
	struct rt_io_event ev;
	const char *why;
	const struct tio rename_call = {.op = RT_IO_RENAME,
					.fd = -1,
					.start = 5,
					.result = 0,
					.path = "/tmp/a",
					.path2 = "/tmp/bb"};
	size_t n = record_payload(&rename_call, p);
	CHECK(rt_io_event_parse(p, n, &ev, &why) == 0);
	CHECK(ev.op == RT_IO_RENAME && ev.path_length == 6 && ev.path2_length == 7);
	CHECK(ev.path && memcmp(ev.path, "/tmp/a", 6) == 0);
	CHECK(ev.path2 && memcmp(ev.path2, "/tmp/bb", 7) == 0);
	CHECK(!rt_io_event_failed(&ev));

	/* the fixed part alone: one slot is too few, two are the minimum */
	const struct tio read_call = {.op = RT_IO_READ, .fd = 3, .start = 9, .result = -ENOENT};
	n = record_payload(&read_call, p);
	CHECK_EQ(n, RT_LOG_PAYLOAD_BYTES(2));
	CHECK(rt_io_event_parse(p, n, &ev, &why) == 0 && rt_io_event_failed(&ev));
	CHECK(rt_io_event_parse(p, 8, &ev, &why) == -1);
	/* a slot more than its parts take */
	CHECK(rt_io_event_parse(p, RT_LOG_PAYLOAD_BYTES(3), &ev, &why) == -1);
	/* bytes after its parts */
	n = record_payload(&rename_call, p);
	p[n - 1] = 1;
	CHECK(rt_io_event_parse(p, n, &ev, &why) == -1);
	n = record_payload(&read_call, p);
	/* an unknown op, an unknown flag */
	struct rt_io_payload head;
	memcpy(&head, p, sizeof(head));
	head.op = RT_IO_OP_MAX + 1;
	memcpy(p, &head, sizeof(head));
	CHECK(rt_io_event_parse(p, n, &ev, &why) == -1);
	head.op = RT_IO_READ;
	head.flags = 0x100;
	memcpy(p, &head, sizeof(head));
	CHECK(rt_io_event_parse(p, n, &ev, &why) == -1);
	/* path lengths past the payload */
	n = record_payload(&rename_call, p);
	uint32_t huge = 5000;
	memcpy(p + sizeof(struct rt_io_payload), &huge, 4);
	CHECK(rt_io_event_parse(p, n, &ev, &why) == -1 && why != NULL);
	/* a NUL inside a path */
	n = record_payload(&rename_call, p);
	p[sizeof(struct rt_io_payload) + 8 + 2] = 0;
	CHECK(rt_io_event_parse(p, n, &ev, &why) == -1);

	CHECK_STR(rt_io_op_name(RT_IO_COPY_FILE_RANGE), "CopyFileRange");
	CHECK_STR(rt_io_op_json_name(RT_IO_COPY_FILE_RANGE), "copy_file_range");
	CHECK(rt_io_op_name(0) == NULL && rt_io_op_name(RT_IO_OP_MAX + 1) == NULL);
	CHECK_STR(rt_io_errno_name(ENOENT), "ENOENT");
	CHECK(rt_io_errno_name(0) == NULL);
}

/* open, reads that move the position, close; an unknown descriptor. */
static void test_basic(void)
{
	struct rt_fd_names *t = rt_fd_names_new();
	struct rt_fd_resolved r;
	struct tio c = open_call("/etc/hosts", 10, 3, O_RDONLY);
	call(t, &c, 20, &r);
	c = io_call(RT_IO_READ, 3, 30, 516);
	call(t, &c, 40, &r);
	CHECK(named(&r.fd, "/etc/hosts") && r.offset_derived && r.offset == 0);
	c = io_call(RT_IO_READ, 3, 50, 100);
	call(t, &c, 60, &r);
	CHECK(r.offset_derived && r.offset == 516);
	/* pread names its own offset and moves nothing */
	c = io_call(RT_IO_PREAD, 3, 61, 10);
	c.flags = RT_IO_F_OFFSET;
	c.offset = 9000;
	call(t, &c, 62, &r);
	CHECK(!r.offset_derived);
	c = io_call(RT_IO_LSEEK, 3, 63, 2000);
	call(t, &c, 64, &r);
	c = io_call(RT_IO_READ, 3, 65, 0);
	call(t, &c, 66, &r);
	CHECK(r.offset_derived && r.offset == 2000);
	c = io_call(RT_IO_CLOSE, 3, 70, 0);
	call(t, &c, 80, &r);
	CHECK(named(&r.fd, "/etc/hosts"));
	c = io_call(RT_IO_READ, 3, 90, -EBADF);
	call(t, &c, 95, &r);
	CHECK(unknown(&r.fd, "closed") && !r.offset_derived);
	c = io_call(RT_IO_READ, 7, 90, 1);
	call(t, &c, 95, &r);
	CHECK(unknown(&r.fd, "unseen"));
	c = io_call(RT_IO_UNLINK, -1, 96, 0);
	c.path = "/tmp/x";
	call(t, &c, 97, &r);
	CHECK(unknown(&r.fd, "none"));
	/* an open whose record lost its path takes the number but names nothing: never "" */
	c = open_call(NULL, 100, 3, O_RDONLY);
	call(t, &c, 110, &r);
	c = io_call(RT_IO_READ, 3, 120, 1);
	call(t, &c, 130, &r);
	CHECK(unknown(&r.fd, "unseen"));
	c = io_call(RT_IO_DUP, 3, 140, 5);
	call(t, &c, 150, &r);
	c = io_call(RT_IO_READ, 5, 160, 1);
	call(t, &c, 170, &r);
	CHECK(unknown(&r.fd, "unseen"));
	rt_fd_names_free(t);
}

/*
 * Thread A closes 3 (start 100, done 130); thread B's open gets 3 once the
 * kernel freed it and completes first (start 105, done 120).  Records come
 * by completion: B's open, then A's read that began before the close, A's
 * close, B's read.
 */
static void test_close_open_race(void)
{
	struct rt_fd_names *t = rt_fd_names_new();
	struct rt_fd_resolved r;
	struct tio c = open_call("/old", 1, 3, O_RDONLY);
	call(t, &c, 10, &r);
	c = open_call("/new", 105, 3, O_RDONLY);
	call(t, &c, 120, &r);
	c = io_call(RT_IO_READ, 3, 95, 10);
	call(t, &c, 125, &r);
	CHECK(named(&r.fd, "/old"));
	c = io_call(RT_IO_CLOSE, 3, 100, 0);
	call(t, &c, 130, &r);
	CHECK(named(&r.fd, "/old"));
	c = io_call(RT_IO_READ, 3, 126, 10);
	call(t, &c, 140, &r);
	CHECK(named(&r.fd, "/new"));
	CHECK(r.offset_derived && r.offset == 0);
	/* a call that began between the close's start and the open's end: neither is certain */
	c = io_call(RT_IO_FSYNC, 3, 110, 0);
	call(t, &c, 150, &r);
	CHECK(unknown(&r.fd, "closed"));
	rt_fd_names_free(t);
}

/* dup shares the name and the position; a reused number names the new file. */
static void test_dup_and_reuse(void)
{
	struct rt_fd_names *t = rt_fd_names_new();
	struct rt_fd_resolved r;
	struct tio c = open_call("/data/a", 10, 3, O_RDWR);
	call(t, &c, 20, &r);
	c = io_call(RT_IO_DUP, 3, 30, 5);
	call(t, &c, 40, &r);
	CHECK(named(&r.fd, "/data/a"));
	c = io_call(RT_IO_READ, 3, 50, 100);
	call(t, &c, 60, &r);
	c = io_call(RT_IO_READ, 5, 70, 50);
	call(t, &c, 80, &r);
	CHECK(named(&r.fd, "/data/a") && r.offset_derived && r.offset == 100);
	c = io_call(RT_IO_READ, 3, 90, 1);
	call(t, &c, 95, &r);
	CHECK(r.offset_derived && r.offset == 150);
	/* 3 closed and reused for another file; 5 still names the first */
	c = io_call(RT_IO_CLOSE, 3, 100, 0);
	call(t, &c, 110, &r);
	c = open_call("/data/b", 120, 3, O_WRONLY | O_APPEND);
	call(t, &c, 130, &r);
	c = io_call(RT_IO_WRITE, 3, 140, 10);
	call(t, &c, 150, &r);
	CHECK(named(&r.fd, "/data/b") && !r.offset_derived);
	c = io_call(RT_IO_READ, 5, 160, 1);
	call(t, &c, 170, &r);
	CHECK(named(&r.fd, "/data/a"));
	/* a call that began before the reuse still resolves to what 3 was then */
	c = io_call(RT_IO_FSYNC, 3, 99, 0);
	call(t, &c, 180, &r);
	CHECK(named(&r.fd, "/data/a"));
	/* rename changes no descriptor's name */
	c = (struct tio){
	    .op = RT_IO_RENAME, .fd = -1, .start = 190, .path = "/data/b", .path2 = "/data/c"};
	call(t, &c, 191, &r);
	c = io_call(RT_IO_FSYNC, 3, 192, 0);
	call(t, &c, 193, &r);
	CHECK(named(&r.fd, "/data/b"));
	/* copy_file_range: both descriptors, positions no longer known */
	c = io_call(RT_IO_COPY_FILE_RANGE, 5, 200, 64);
	c.flags = RT_IO_F_AUX;
	c.aux[0] = 3;
	call(t, &c, 210, &r);
	CHECK(named(&r.fd, "/data/a") && named(&r.fd2, "/data/b"));
	c = io_call(RT_IO_READ, 5, 220, 1);
	call(t, &c, 230, &r);
	CHECK(named(&r.fd, "/data/a") && !r.offset_derived);
	rt_fd_names_free(t);
}

/* At most RT_FD_NAMES_VERSIONS versions per descriptor: older times are forgotten. */
static void test_version_bound(void)
{
	struct rt_fd_names *t = rt_fd_names_new();
	struct rt_fd_resolved r;
	char name[32];
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "/f/%d", i);
		struct tio c = open_call(name, (uint64_t)i * 100, 4, O_RDONLY);
		call(t, &c, (uint64_t)i * 100 + 10, &r);
		c = io_call(RT_IO_CLOSE, 4, (uint64_t)i * 100 + 50, 0);
		call(t, &c, (uint64_t)i * 100 + 60, &r);
	}
	struct tio c = io_call(RT_IO_FSYNC, 4, 1920, 0);
	call(t, &c, 2000, &r);
	CHECK(named(&r.fd, "/f/19"));
	/* 16 versions: 8 names and 8 closes; the first cycles are gone */
	c = io_call(RT_IO_FSYNC, 4, 1220, 0);
	call(t, &c, 2001, &r);
	CHECK(named(&r.fd, "/f/12"));
	c = io_call(RT_IO_FSYNC, 4, 20, 0);
	call(t, &c, 2002, &r);
	CHECK(unknown(&r.fd, "forgotten"));
	rt_fd_names_free(t);
}

/* Seeds, the rundown with its offset, overlapping calls, a process that forked. */
static void test_seeds_and_positions(void)
{
	struct rt_fd_names *t = rt_fd_names_new();
	struct rt_fd_resolved r;
	struct rt_fd_seeds seeds = {0};
	const struct rt_fd_seed tty = {
	    .fd = 0, .state = RT_FD_OPEN, .op = RT_IO_RUNDOWN, .name_length = 10};
	const struct rt_fd_seed gone = {.fd = 9,
					.state = RT_FD_CLOSED,
					.counter = 50,
					.closed_counter = 70,
					.op = RT_IO_OPEN,
					.name_length = 5};
	CHECK(rt_fd_seeds_add(&seeds, &tty, "/dev/pts/0") == 0);
	CHECK(rt_fd_seeds_add(&seeds, &gone, "/gone") == 0);
	CHECK_EQ(rt_fd_names_seed(t, &seeds), 0);
	rt_fd_seeds_free(&seeds);
	struct tio c = io_call(RT_IO_READ, 0, 5, 3);
	call(t, &c, 6, &r);
	CHECK(named(&r.fd, "/dev/pts/0") && !r.offset_derived);
	c = io_call(RT_IO_FSYNC, 9, 60, 0);
	call(t, &c, 61, &r);
	CHECK(named(&r.fd, "/gone"));
	c = io_call(RT_IO_FSYNC, 9, 80, 0);
	call(t, &c, 81, &r);
	CHECK(unknown(&r.fd, "closed"));

	/* the rundown's offset is the position then */
	c = (struct tio){.op = RT_IO_RUNDOWN,
			 .flags = RT_IO_F_OFFSET | RT_IO_F_AUX,
			 .fd = 4,
			 .start = 1,
			 .offset = 4096,
			 .path = "/var/log/app.log"};
	call(t, &c, 1, &r);
	c = io_call(RT_IO_READ, 4, 100, 10);
	call(t, &c, 110, &r);
	CHECK(named(&r.fd, "/var/log/app.log") && r.offset_derived && r.offset == 4096);
	/* two reads that overlap: their order is unknown, so is the position */
	c = io_call(RT_IO_READ, 4, 120, 10);
	call(t, &c, 140, &r);
	CHECK(r.offset_derived && r.offset == 4106);
	c = io_call(RT_IO_READ, 4, 130, 10);
	call(t, &c, 150, &r);
	CHECK(!r.offset_derived);
	c = io_call(RT_IO_READ, 4, 160, 10);
	call(t, &c, 170, &r);
	CHECK(!r.offset_derived);
	/* a NAMED descriptor has a name from its start, but no position */
	c = (struct tio){.op = RT_IO_NAMED, .fd = 6, .start = 200, .path = "pipe:[99]"};
	call(t, &c, 210, &r);
	c = io_call(RT_IO_READ, 6, 200, 1);
	call(t, &c, 220, &r);
	CHECK(named(&r.fd, "pipe:[99]") && !r.offset_derived);
	/* positions off: nothing derived */
	rt_fd_names_positions(t, 0);
	c = open_call("/x", 300, 8, O_RDONLY);
	call(t, &c, 310, &r);
	c = io_call(RT_IO_READ, 8, 320, 1);
	call(t, &c, 330, &r);
	CHECK(named(&r.fd, "/x") && !r.offset_derived);
	rt_fd_names_free(t);
}

/* stdio: the stream's own position; a call on its descriptor makes it unknown. */
static void test_stdio(void)
{
	struct rt_fd_names *t = rt_fd_names_new();
	struct rt_fd_resolved r;
	struct tio c = {.op = RT_IO_FOPEN,
			.flags = RT_IO_F_STREAM | RT_IO_F_AUX,
			.fd = -1,
			.start = 10,
			.result = 3,
			.stream = 0x5000,
			.path = "/etc/passwd"};
	call(t, &c, 20, &r);
	c = (struct tio){.op = RT_IO_FREAD,
			 .flags = RT_IO_F_STREAM,
			 .fd = 3,
			 .start = 30,
			 .result = 40,
			 .stream = 0x5000};
	call(t, &c, 40, &r);
	CHECK(named(&r.fd, "/etc/passwd") && r.offset_derived && r.offset == 0);
	c.start = 50;
	call(t, &c, 60, &r);
	CHECK(r.offset_derived && r.offset == 40);
	c = (struct tio){.op = RT_IO_FSEEK,
			 .flags = RT_IO_F_STREAM | RT_IO_F_OFFSET | RT_IO_F_AUX,
			 .fd = 3,
			 .start = 70,
			 .offset = 1000,
			 .aux = {SEEK_SET, 0},
			 .stream = 0x5000};
	call(t, &c, 80, &r);
	c = (struct tio){.op = RT_IO_FREAD,
			 .flags = RT_IO_F_STREAM,
			 .fd = 3,
			 .start = 90,
			 .result = 5,
			 .stream = 0x5000};
	call(t, &c, 100, &r);
	CHECK(r.offset_derived && r.offset == 1000);
	struct tio raw = io_call(RT_IO_READ, 3, 110, 10);
	call(t, &raw, 120, &r);
	CHECK(!r.offset_derived); /* the stream's buffer moved the descriptor */
	c.start = 130;
	call(t, &c, 140, &r);
	CHECK(!r.offset_derived);
	rt_fd_names_free(t);
}

int main(void)
{
	test_parse();
	test_basic();
	test_close_open_race();
	test_dup_and_reuse();
	test_version_bound();
	test_seeds_and_positions();
	test_stdio();
	int failures = check_failure_count();
	printf("test_io: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
