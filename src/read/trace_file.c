/*
 * trace_file.c - reading a trace file in order, block by block, in bounded
 * memory, and finding the next good block after damage.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/file_data.h"
#include "format/packed_slots.h"
#include "read/trace_file.h"

/* Bytes read at once by the scan; a block never straddles more than one refill. */
#define SCAN_CHUNK (256u << 10)

static ssize_t read_at(int fd, void *buf, size_t n, uint64_t offset)
{
	size_t done = 0;
	while (done < n) {
		ssize_t got = pread(fd, (char *)buf + done, n - done, (off_t)(offset + done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			break;
		done += (size_t)got;
	}
	return (ssize_t)done;
}

/*
 * How far into a file without a magic at its start a good block is looked
 * for: damage that wiped a trace file's first bytes must not make the
 * whole file unreadable, and a file with no good block in its first
 * megabytes is taken for something else rather than scanned whole.
 */
#define KIND_SCAN_BYTES (4u << 20)
#define KIND_SCAN_CHUNK (64u << 10)

int rt_trace_file_find_block(const struct rt_trace_file *f, struct rt_block_header *h)
{
	/* a chunk, and room for a block that starts near its end */
	unsigned char *buf = malloc(KIND_SCAN_CHUNK + RT_BLOCK_MAX_BYTES);
	if (!buf)
		return -ENOMEM;
	int found = 0;
	for (uint64_t base = 0; !found && base < KIND_SCAN_BYTES; base += KIND_SCAN_CHUNK) {
		ssize_t got = read_at(f->fd, buf, KIND_SCAN_CHUNK + RT_BLOCK_MAX_BYTES, base);
		if (got <= 0)
			break;
		size_t have = (size_t)got;
		size_t limit = have < KIND_SCAN_CHUNK ? have : KIND_SCAN_CHUNK;
		for (size_t at = 0; at + sizeof(RT_BLOCK_MAGIC) <= have && at < limit && !found;) {
			const unsigned char *m =
			    memmem(buf + at, have - at, RT_BLOCK_MAGIC, sizeof(RT_BLOCK_MAGIC));
			if (!m || (size_t)(m - buf) >= limit)
				break;
			found = rt_block_check(m, have - (size_t)(m - buf), h) == RT_BLOCK_OK;
			at = (size_t)(m - buf) + 1;
		}
		if (have < KIND_SCAN_CHUNK + RT_BLOCK_MAX_BYTES)
			break; /* the end of the file */
	}
	free(buf);
	return found;
}

/* Whether a block that passes every check starts in the first KIND_SCAN_BYTES. */
static int has_good_block(const char *path)
{
	struct rt_trace_file f;
	char message[64];
	if (rt_trace_file_open(&f, path, message, sizeof(message)) != 0)
		return 0;
	struct rt_block_header h;
	int found = rt_trace_file_find_block(&f, &h) > 0;
	rt_trace_file_close(&f);
	return found;
}

/*
 * Open path for reading, a regular file only.  O_NONBLOCK: opening a FIFO
 * without a writer would wait for one, and a device may never end; the
 * flag means nothing to a regular file.  The fd, or -errno (-EINVAL: not a
 * regular file, -EISDIR: a directory).
 */
static int open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
	}
	return fd;
}

int rt_input_kind_of(const char *path)
{
	int fd = open_regular(path);
	if (fd < 0)
		return fd;
	char magic[8];
	ssize_t got = read_at(fd, magic, sizeof(magic), 0);
	close(fd);
	if (got < 0)
		return (int)got;
	if (got == (ssize_t)sizeof(magic) && memcmp(magic, RT_ARENA_MAGIC, 8) == 0)
		return RT_INPUT_ARENA;
	if (got == (ssize_t)sizeof(magic) && rt_block_magic_at(magic))
		return RT_INPUT_TRACE;
	return has_good_block(path) ? RT_INPUT_TRACE : RT_INPUT_UNKNOWN;
}

int rt_trace_file_open(struct rt_trace_file *f, const char *path, char *message, size_t size)
{
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = open_regular(path);
	if (f->fd < 0) {
		int err = -f->fd;
		f->fd = -1;
		snprintf(message, size, "%s", err == EINVAL ? "not a regular file" : strerror(err));
		return -err;
	}
	struct stat st;
	if (fstat(f->fd, &st) != 0) {
		int err = errno;
		snprintf(message, size, "%s", strerror(err));
		close(f->fd);
		f->fd = -1;
		return -err;
	}
	f->size = (uint64_t)st.st_size;
	return 0;
}

int rt_trace_file_refused(const char *path, char *message, size_t size)
{
	struct rt_trace_file f;
	char why[128];
	int rc = rt_trace_file_open(&f, path, why, sizeof(why));
	if (rc) {
		snprintf(message, size, "%s: %s", path, why);
		return rc;
	}
	unsigned char *buf = malloc(RT_BLOCK_MAX_BYTES);
	if (!buf) {
		rt_trace_file_close(&f);
		snprintf(message, size, "out of memory");
		return -ENOMEM;
	}
	struct rt_block_header h;
	/* a file cut short, even before its first block ends, is damage: the scan says so */
	if (rt_trace_file_read_block(&f, 0, buf, &h) == RT_BLOCK_BAD_VERSION) {
		/* its checksum holds: a newer writer's file, not damage */
		snprintf(message, size,
			 "%s: byte %zu: unknown trace-file format version %u (this reader knows "
			 "%u to %u)",
			 path, offsetof(struct rt_block_header, version),
			 (unsigned)buf[offsetof(struct rt_block_header, version)],
			 (unsigned)RT_FILE_VERSION_OLDEST, (unsigned)RT_FILE_VERSION);
		rc = -EPROTONOSUPPORT;
	}
	free(buf);
	rt_trace_file_close(&f);
	return rc;
}

void rt_trace_file_close(struct rt_trace_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
}

/* The file-level facts of a good block: which recording, whether it closed. */
static void note_block(struct rt_trace_file *f, const struct rt_block_header *h,
		       const unsigned char *b)
{
	if (f->blocks++ == 0 || (h->type == RT_BLOCK_FILE && !f->has_file_block)) {
		f->file_id = h->file_id;
		f->file_seq = h->file_seq;
	}
	if (h->type == RT_BLOCK_FILE && !f->has_file_block) {
		memcpy(&f->info, b + RT_BLOCK_HEADER_SIZE, sizeof(f->info));
		f->info.host[sizeof(f->info.host) - 1] = 0;
		f->has_file_block = 1;
	}
	if (h->type == RT_BLOCK_END) {
		memcpy(&f->end, b + RT_BLOCK_HEADER_SIZE, sizeof(f->end));
		f->has_end = 1;
	}
}

/*
 * The block numbers of the file seen so far, to know a replayed block.  A
 * good block of the file has a number below the file's size over the
 * smallest block's: past it no memory is spent, and such a block is never
 * taken for a replay.
 */
struct seen_blocks {
	uint8_t *bits;
	uint64_t limit; /* numbers below it are tracked */
	size_t bytes;	/* of bits */
};

/* Whether block number seq was seen already; marks it seen.  -ENOMEM. */
static int seen_before(struct seen_blocks *s, uint64_t seq)
{
	if (seq >= s->limit)
		return 0;
	size_t byte = (size_t)(seq / 8);
	if (byte >= s->bytes) {
		size_t bytes = s->bytes ? s->bytes : 512;
		while (bytes <= byte)
			bytes *= 2;
		uint8_t *bigger = realloc(s->bits, bytes);
		if (!bigger)
			return -ENOMEM;
		memset(bigger + s->bytes, 0, bytes - s->bytes);
		s->bits = bigger;
		s->bytes = bytes;
	}
	uint8_t bit = (uint8_t)(1u << (seq % 8));
	int seen = (s->bits[byte] & bit) != 0;
	s->bits[byte] |= bit;
	return seen;
}

int rt_trace_file_scan(struct rt_trace_file *f, const struct rt_trace_scan_ops *ops, char *message,
		       size_t size)
{
	/* room for a chunk plus the unread tail of the previous one */
	unsigned char *buf = malloc(SCAN_CHUNK + 2 * RT_BLOCK_MAX_BYTES);
	if (!buf) {
		snprintf(message, size, "out of memory");
		return -ENOMEM;
	}
	/* a PACKED block is handed over as the SLOTS block it stands for, made here */
	unsigned char *const expanded = buf + SCAN_CHUNK + RT_BLOCK_MAX_BYTES;
	uint64_t base = 0; /* file offset of buf[0] */
	size_t have = 0;   /* bytes in buf */
	size_t at = 0;	   /* where the next block should start */
	int eof = 0;
	int in_damage = 0; /* a damaged region is open since damage_from */
	uint64_t damage_from = 0;
	const char *damage_why = "";
	int rc = 0;
	/* the last good block: one of the same file that does not follow it was moved or lost */
	int have_last = 0;
	struct rt_block_header last = {0};
	struct seen_blocks seen = {NULL, f->size / RT_BLOCK_HEADER_SIZE + 1, 0};
	/* a run of replayed blocks since replay_from, reported as one region */
	int in_replay = 0;
	uint64_t replay_from = 0, replay_end = 0;
	/*
	 * Right after copies of blocks up to N, block N + 1 is in order too: a
	 * run of blocks was replayed just before its originals' next block.
	 */
	uint64_t copy_next = UINT64_MAX;
	/* holes hold no block: damage is scanned past them, unread (common/file_data.h) */
	struct rt_file_data data;
	rt_file_data_init(&data, f->fd);

	for (;;) {
		/* keep a whole block's worth ahead of `at` unless the file ends first */
		if (!eof && have - at < RT_BLOCK_MAX_BYTES) {
			memmove(buf, buf + at, have - at);
			base += at;
			have -= at;
			at = 0;
			if (in_damage && have < sizeof(RT_BLOCK_MAGIC)) {
				/* no magic left to finish: the scan goes on at the next data */
				uint64_t data_end,
				    end = f->size > base + have ? f->size : base + have;
				uint64_t next =
				    rt_file_data_next(&data, base + have, end, &data_end);
				if (next > base + have) {
					base = next;
					have = 0;
				}
			}
			ssize_t got = read_at(f->fd, buf + have, SCAN_CHUNK, base + have);
			if (got < 0) {
				snprintf(message, size, "cannot read at byte %llu: %s",
					 (unsigned long long)base + have, strerror((int)-got));
				rc = (int)got;
				break;
			}
			have += (size_t)got;
			eof = (size_t)got < SCAN_CHUNK;
		}
		if (at >= have)
			break;
		struct rt_block_header h;
		/*
		 * A PACKED payload is checked by expanding it, once, below; or,
		 * when the callback does not read its slots, later by whoever
		 * expands it (its prelude only is checked here).
		 */
		enum rt_block_verdict v = rt_block_check_unexpanded(buf + at, have - at, &h);
		/* a PACKED block is handed over as the SLOTS block it stands for */
		const uint32_t on_disk = v == RT_BLOCK_OK ? h.size : 0;
		const unsigned char *b = buf + at;
		if (v == RT_BLOCK_OK && h.type == RT_BLOCK_PACKED) {
			if (ops->reads_slots && !ops->reads_slots(ops->context)) {
				const int checks =
				    ops->checks_packed && ops->checks_packed(ops->context);
				if ((checks &&
				     rt_packed_expand(&h, b + RT_BLOCK_HEADER_SIZE,
						      h.size - RT_BLOCK_HEADER_SIZE, NULL) == 0) ||
				    rt_packed_claimed_header(&h, b + RT_BLOCK_HEADER_SIZE, &h) != 0)
					v = RT_BLOCK_BAD_PAYLOAD;
			} else if (rt_packed_to_slots_unsealed(b, &h, expanded, &h) == 0) {
				b = expanded;
			} else {
				v = RT_BLOCK_BAD_PAYLOAD;
			}
		}
		if (v == RT_BLOCK_OK &&
		    (!have_last || (h.file_id == last.file_id && h.file_seq == last.file_seq))) {
			int again = seen_before(&seen, h.block_seq);
			if (again < 0) {
				snprintf(message, size, "out of memory");
				rc = again;
				break;
			}
			if (again) {
				if (in_damage) {
					in_damage = 0;
					f->damaged_bytes += base + at - damage_from;
					if ((rc = ops->damage(ops->context, f, damage_from,
							      base + at - damage_from, damage_why,
							      0)))
						break;
				}
				if (!in_replay || replay_end != base + at) {
					if (in_replay &&
					    (rc = ops->damage(ops->context, f, replay_from,
							      replay_end - replay_from,
							      RT_SCAN_REPLAY, 0)))
						break;
					in_replay = 1;
					replay_from = base + at;
				}
				replay_end = base + at + on_disk;
				f->damaged_bytes += on_disk;
				copy_next = h.block_seq + 1;
				at += on_disk;
				continue;
			}
		}
		if (in_replay && (v == RT_BLOCK_OK || !in_damage)) {
			/* the run of copies ends here: a block to read, or damage of another kind
			 */
			in_replay = 0;
			if ((rc = ops->damage(ops->context, f, replay_from,
					      replay_end - replay_from, RT_SCAN_REPLAY, 0)))
				break;
		}
		if (v == RT_BLOCK_OK) {
			if (in_damage) {
				in_damage = 0;
				f->damaged_bytes += base + at - damage_from;
				if ((rc = ops->damage(ops->context, f, damage_from,
						      base + at - damage_from, damage_why, 0)))
					break;
			} else if (have_last && h.file_id == last.file_id &&
				   h.file_seq == last.file_seq &&
				   h.block_seq != last.block_seq + 1 && h.block_seq != copy_next) {
				/*
				 * Good bytes, wrong place: whole blocks left out, or moved
				 * elsewhere.  Its records are kept (repeats are dropped by
				 * record seq), but the break is damage, never silent.
				 */
				if ((rc = ops->damage(ops->context, f, base + at, 0, RT_SCAN_BREAK,
						      0)))
					break;
			}
			have_last = 1;
			last = h;
			copy_next = UINT64_MAX;
			note_block(f, &h, buf + at);
			if ((rc = ops->block(ops->context, f, base + at, &h, b)))
				break;
			at += on_disk;
			continue;
		}
		if (!in_damage) {
			in_damage = 1;
			damage_from = base + at;
			damage_why = rt_block_verdict_text(v);
		}
		/* the next place a block may start: the next magic */
		const unsigned char *next =
		    memmem(buf + at + 1, have - at - 1, RT_BLOCK_MAGIC, sizeof(RT_BLOCK_MAGIC));
		if (next) {
			at = (size_t)(next - buf);
			continue;
		}
		if (eof)
			break;
		/* a magic may straddle the refill: keep its first 7 bytes */
		at = have - (sizeof(RT_BLOCK_MAGIC) - 1);
	}
	if (rc == 0 && in_replay)
		rc = ops->damage(ops->context, f, replay_from, replay_end - replay_from,
				 RT_SCAN_REPLAY, 0);
	if (rc == 0 && in_damage) {
		uint64_t end = base + have;
		f->damaged_bytes += end - damage_from;
		rc = ops->damage(ops->context, f, damage_from, end - damage_from, damage_why, 1);
	}
	free(buf);
	free(seen.bits);
	return rc;
}

int rt_trace_file_read_block(const struct rt_trace_file *f, uint64_t offset, unsigned char *buf,
			     struct rt_block_header *h)
{
	ssize_t got = read_at(f->fd, buf, RT_BLOCK_MAX_BYTES, offset);
	if (got < 0)
		return (int)got;
	int v = rt_block_check_unexpanded(buf, (uint64_t)got, h);
	if (v == RT_BLOCK_OK && h->type == RT_BLOCK_PACKED) {
		unsigned char slots[RT_BLOCK_MAX_BYTES];
		if (rt_packed_to_slots(buf, h, slots, h) != 0)
			return RT_BLOCK_BAD_PAYLOAD;
		memcpy(buf, slots, h->size);
	}
	return v;
}

int rt_trace_file_ended(const struct rt_trace_file *f, struct rt_block_end *end)
{
	const uint64_t size = RT_BLOCK_HEADER_SIZE + sizeof(struct rt_block_end);
	struct stat st;
	if (fstat(f->fd, &st) != 0)
		return -errno;
	if ((uint64_t)st.st_size < size)
		return 0;
	uint64_t offset = (uint64_t)st.st_size - size;
	unsigned char buf[RT_BLOCK_HEADER_SIZE + sizeof(struct rt_block_end)];
	ssize_t got = read_at(f->fd, buf, sizeof(buf), offset);
	if (got < 0)
		return (int)got;
	struct rt_block_header h;
	if (rt_block_check(buf, (uint64_t)got, &h) != RT_BLOCK_OK || h.type != RT_BLOCK_END ||
	    h.size != size)
		return 0;
	memcpy(end, buf + RT_BLOCK_HEADER_SIZE, sizeof(*end));
	/* the END of a file whose tail was cut and rewritten says where it stood */
	return end->bytes == offset;
}
