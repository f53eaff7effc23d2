/*
 * seed_trace.c - the seed corpus of fuzz_trace: small trace files of the
 * shapes the reader knows (tests/lib/trace_gen.h), written into DIR.
 *
 *   seed_trace DIR
 */
#include <stdio.h>

#include "../lib/io_payload.h"
#include "../lib/trace_gen.h"

static struct tg g;

static void start(uint32_t mode)
{
	tg_init(&g);
	tg_add_source(&g, 0, 100, 0, mode, TG_START_NS);
	tg_add_site(&g, 0, 1, "one", 1, 10);
	tg_add_site(&g, 0, 2, "six", 6, 20);
	tg_add_thread(&g, 0, 101, "main", 0, TG_START_NS);
	tg_add_thread(&g, 0, 102, "worker", 1, TG_START_NS);
}

static void events(int n, uint64_t t)
{
	for (int i = 0; i < n; i++)
		tg_event(&g, 0, (uint32_t)(i & 1), 1 + (uint32_t)(i % 2), t + (uint64_t)i * 10,
			 (uint32_t)i);
}

int main(int argc, char **argv)
{
	char path[512];
	if (argc != 2)
		return 2;
	/* stream: two threads, a drop note, a torn record */
	start(RT_MODE_STREAM);
	snprintf(path, sizeof(path), "%s/stream.rt", argv[1]);
	tg_open(&g, path, 1, 0);
	tg_file_head(&g);
	events(60, TG_START_NS + 100);
	tg_lost_record(&g, 0, 0, TG_START_NS + 900, 17, TG_START_NS + 990);
	events(20, TG_START_NS + 1000);
	tg_flush_all(&g);
	tg_loss_block(&g, 0, 1, 1, 3, g.sources[0].rings[1].record, 1, TG_START_NS + 2000, 0);
	tg_close(&g, RT_FILE_END_FINISHED);
	/* flight: two overlapping snapshots and an overwritten loss */
	start(RT_MODE_FLIGHT);
	snprintf(path, sizeof(path), "%s/flight.rt", argv[1]);
	tg_open(&g, path, 2, 0);
	g.sources[0].rings[0].record = 40;
	g.sources[0].rings[0].slot = 80;
	tg_file_head(&g);
	tg_loss_block(&g, 0, 0, 0, 1, 0, 40, TG_START_NS + 10, 0);
	events(40, TG_START_NS + 100);
	tg_flush_all(&g);
	g.sources[0].rings[0].record -= 10;
	g.sources[0].rings[0].slot -= 15;
	events(30, TG_START_NS + 400);
	tg_close(&g, RT_FILE_END_FINISHED);
	/* two sources, a gap, no END (cut short on a block boundary) */
	start(RT_MODE_STREAM);
	tg_add_source(&g, 1, 200, 100, RT_MODE_STREAM, TG_START_NS + 50);
	tg_add_site(&g, 1, 0, "child", 0, 5);
	tg_add_thread(&g, 1, 201, "child", 0, TG_START_NS + 50);
	snprintf(path, sizeof(path), "%s/sources.rt", argv[1]);
	tg_open(&g, path, 3, 1);
	tg_file_head(&g);
	events(30, TG_START_NS + 100);
	tg_skip(&g, 0, 0, 5);
	events(10, TG_START_NS + 500);
	for (int i = 0; i < 20; i++)
		tg_event(&g, 1, 0, 0, TG_START_NS + 120 + (uint64_t)i * 7, 0);
	tg_flush_all(&g);
	tg_abandon(&g);

	/* file I/O: an FDS rundown, calls of every shape, one that does not parse */
	start(RT_MODE_STREAM);
	tg_add_io_site(&g, 0, 3);
	snprintf(path, sizeof(path), "%s/io.rt", argv[1]);
	tg_open(&g, path, 4, 0);
	tg_file_head(&g);
	const uint32_t fds[2] = {0, 5};
	const char *const names[2] = {"/dev/pts/0", "pipe:[4321]"};
	tg_fds_block(&g, 0, 2, fds, names, 0);
	unsigned char p[RT_LOG_PAYLOAD_MAX];
	const struct tio calls[] = {
	    {.op = RT_IO_OPEN, .flags = RT_IO_F_AUX, .fd = 3, .result = 3, .path = "/etc/hosts"},
	    {.op = RT_IO_READ, .fd = 3, .size = 4096, .result = 516},
	    {.op = RT_IO_PREAD, .flags = RT_IO_F_OFFSET, .fd = 3, .size = 10, .offset = 100},
	    {.op = RT_IO_DUP, .fd = 3, .result = 6},
	    {.op = RT_IO_LSEEK, .flags = RT_IO_F_OFFSET | RT_IO_F_AUX, .fd = 6, .offset = -4},
	    {.op = RT_IO_COPY_FILE_RANGE, .flags = RT_IO_F_AUX, .fd = 3, .aux = {5, 0}},
	    {.op = RT_IO_CLOSE, .fd = 3},
	    {.op = RT_IO_OPEN, .fd = -1, .result = -2, .path = "/nope"},
	    {.op = RT_IO_RENAME, .fd = -1, .path = "/tmp/a", .path2 = "/tmp/b"},
	    {.op = RT_IO_FOPEN,
	     .flags = RT_IO_F_STREAM | RT_IO_F_AUX,
	     .fd = 4,
	     .result = 4,
	     .stream = 0x5000,
	     .path = "/etc/passwd"},
	    {.op = RT_IO_FREAD, .flags = RT_IO_F_STREAM, .fd = 4, .result = 32, .stream = 0x5000},
	    {.op = 0x7f, .fd = 4},
	};
	uint64_t t = TG_START_NS + 100;
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct tio c = calls[i];
		c.start = t;
		tg_io(&g, 0, (uint32_t)(i & 1), 3, t + 5, p, tio_payload(&c, p));
		t += 10;
	}
	tg_close(&g, RT_FILE_END_FINISHED);
	return 0;
}
