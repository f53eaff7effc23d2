/*
 * io_event.c - parse and name file I/O calls.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "decode/io_event.h"
#include "format/records.h"

static int fail(const char **problem, const char *why)
{
	if (problem)
		*problem = why;
	return -1;
}

int rt_io_event_parse(const unsigned char *payload, size_t length, struct rt_io_event *out,
		      const char **problem)
{
	memset(out, 0, sizeof(*out));
	if (!payload || length < sizeof(struct rt_io_payload))
		return fail(problem, "shorter than its fixed part");
	struct rt_io_payload p;
	memcpy(&p, payload, sizeof(p));
	if (p.op < RT_IO_RUNDOWN || p.op > RT_IO_OP_MAX)
		return fail(problem, "unknown operation");
	const unsigned known =
	    RT_IO_F_OFFSET | RT_IO_F_AUX | RT_IO_F_STREAM | RT_IO_F_PATH | RT_IO_F_PATH_CUT;
	/* an unknown part would move every later one: nothing after it can be found */
	if (p.flags & ~known)
		return fail(problem, "unknown flags");
	if ((p.flags & RT_IO_F_PATH_CUT) && !(p.flags & RT_IO_F_PATH))
		return fail(problem, "a cut path without a path");
	out->op = p.op;
	out->flags = p.flags;
	out->fd = p.fd;
	out->start = p.start;
	out->size = p.size;
	out->result = p.result;
	size_t at = sizeof(p);
	if (p.flags & RT_IO_F_OFFSET) {
		if (length - at < 8)
			return fail(problem, "offset past the end");
		memcpy(&out->offset, payload + at, 8);
		at += 8;
	}
	if (p.flags & RT_IO_F_AUX) {
		if (length - at < 8)
			return fail(problem, "aux past the end");
		memcpy(out->aux, payload + at, 8);
		at += 8;
	}
	if (p.flags & RT_IO_F_STREAM) {
		if (length - at < 8)
			return fail(problem, "stream past the end");
		memcpy(&out->stream, payload + at, 8);
		at += 8;
	}
	if (p.flags & RT_IO_F_PATH) {
		uint32_t lengths[2];
		if (length - at < 8)
			return fail(problem, "path lengths past the end");
		memcpy(lengths, payload + at, 8);
		at += 8;
		/* 64-bit sum of 32-bit lengths: no overflow */
		if ((uint64_t)lengths[0] + lengths[1] > length - at)
			return fail(problem, "paths past the end");
		const char *a = (const char *)payload + at;
		const char *b = a + lengths[0];
		if (memchr(a, 0, (size_t)lengths[0] + lengths[1]))
			return fail(problem, "a NUL inside a path");
		out->path = lengths[0] ? a : NULL;
		out->path_length = lengths[0];
		out->path2 = lengths[1] ? b : NULL;
		out->path2_length = lengths[1];
		at += (size_t)lengths[0] + lengths[1];
	}
	/* exactly as long as its parts: no slot more, and zeros after them */
	if (RT_LOG_SLOTS(at) != RT_LOG_SLOTS(length))
		return fail(problem, "longer than its parts");
	for (size_t i = at; i < length; i++)
		if (payload[i])
			return fail(problem, "bytes after its parts");
	return 0;
}

static const char *const text_names[RT_IO_OP_MAX + 1] = {
    [RT_IO_RUNDOWN] = "Rundown",
    [RT_IO_NAMED] = "Named",
    [RT_IO_OPEN] = "Open",
    [RT_IO_CLOSE] = "Close",
    [RT_IO_READ] = "Read",
    [RT_IO_WRITE] = "Write",
    [RT_IO_PREAD] = "Pread",
    [RT_IO_PWRITE] = "Pwrite",
    [RT_IO_READV] = "Readv",
    [RT_IO_WRITEV] = "Writev",
    [RT_IO_PREADV] = "Preadv",
    [RT_IO_PWRITEV] = "Pwritev",
    [RT_IO_LSEEK] = "Lseek",
    [RT_IO_FSYNC] = "Fsync",
    [RT_IO_FDATASYNC] = "Fdatasync",
    [RT_IO_FTRUNCATE] = "Ftruncate",
    [RT_IO_UNLINK] = "Unlink",
    [RT_IO_RENAME] = "Rename",
    [RT_IO_DUP] = "Dup",
    [RT_IO_MMAP] = "Mmap",
    [RT_IO_COPY_FILE_RANGE] = "CopyFileRange",
    [RT_IO_SENDFILE] = "Sendfile",
    [RT_IO_FOPEN] = "Fopen",
    [RT_IO_FCLOSE] = "Fclose",
    [RT_IO_FREAD] = "Fread",
    [RT_IO_FWRITE] = "Fwrite",
    [RT_IO_FFLUSH] = "Fflush",
    [RT_IO_FSEEK] = "Fseek",
};

static const char *const json_names[RT_IO_OP_MAX + 1] = {
    [RT_IO_RUNDOWN] = "rundown",
    [RT_IO_NAMED] = "named",
    [RT_IO_OPEN] = "open",
    [RT_IO_CLOSE] = "close",
    [RT_IO_READ] = "read",
    [RT_IO_WRITE] = "write",
    [RT_IO_PREAD] = "pread",
    [RT_IO_PWRITE] = "pwrite",
    [RT_IO_READV] = "readv",
    [RT_IO_WRITEV] = "writev",
    [RT_IO_PREADV] = "preadv",
    [RT_IO_PWRITEV] = "pwritev",
    [RT_IO_LSEEK] = "lseek",
    [RT_IO_FSYNC] = "fsync",
    [RT_IO_FDATASYNC] = "fdatasync",
    [RT_IO_FTRUNCATE] = "ftruncate",
    [RT_IO_UNLINK] = "unlink",
    [RT_IO_RENAME] = "rename",
    [RT_IO_DUP] = "dup",
    [RT_IO_MMAP] = "mmap",
    [RT_IO_COPY_FILE_RANGE] = "copy_file_range",
    [RT_IO_SENDFILE] = "sendfile",
    [RT_IO_FOPEN] = "fopen",
    [RT_IO_FCLOSE] = "fclose",
    [RT_IO_FREAD] = "fread",
    [RT_IO_FWRITE] = "fwrite",
    [RT_IO_FFLUSH] = "fflush",
    [RT_IO_FSEEK] = "fseek",
};

const char *rt_io_op_name(unsigned op)
{
	return op <= RT_IO_OP_MAX ? text_names[op] : NULL;
}

const char *rt_io_op_json_name(unsigned op)
{
	return op <= RT_IO_OP_MAX ? json_names[op] : NULL;
}

const char *rt_io_errno_name(int number)
{
	if (number <= 0)
		return NULL;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	return strerrorname_np(number);
#else
	/* the numbers file calls fail with most; others are shown as numbers */
	static const struct {
		int number;
		const char *name;
	} names[] = {
	    {EPERM, "EPERM"},
	    {ENOENT, "ENOENT"},
	    {EINTR, "EINTR"},
	    {EIO, "EIO"},
	    {EBADF, "EBADF"},
	    {EAGAIN, "EAGAIN"},
	    {ENOMEM, "ENOMEM"},
	    {EACCES, "EACCES"},
	    {EFAULT, "EFAULT"},
	    {EBUSY, "EBUSY"},
	    {EEXIST, "EEXIST"},
	    {EXDEV, "EXDEV"},
	    {ENOTDIR, "ENOTDIR"},
	    {EISDIR, "EISDIR"},
	    {EINVAL, "EINVAL"},
	    {EMFILE, "EMFILE"},
	    {ENFILE, "ENFILE"},
	    {EFBIG, "EFBIG"},
	    {ENOSPC, "ENOSPC"},
	    {ESPIPE, "ESPIPE"},
	    {EROFS, "EROFS"},
	    {EPIPE, "EPIPE"},
	    {ENAMETOOLONG, "ENAMETOOLONG"},
	    {ELOOP, "ELOOP"},
	    {ENOTEMPTY, "ENOTEMPTY"},
	    {EOVERFLOW, "EOVERFLOW"},
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].number == number)
			return names[i].name;
	return NULL;
#endif
}
