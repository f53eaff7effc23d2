/*
 * fd_names.c - descriptor names by time, and file positions where certain
 * (fd_names.h states the rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "decode/fd_names.h"

/* An open file description: what dup'd descriptors share. */
struct file {
	uint32_t refs;
	int known;	    /* pos is certain */
	int64_t pos;	    /* the position, when known */
	uint32_t flags;	    /* O_* as opened */
	uint64_t last_done; /* completion of the newest call that used the position */
};

enum version_kind {
	NAMED = 0,   /* name holds from `from` */
	CLOSED = 1,  /* closed from `from` */
	UNNAMED = 2, /* reused from `from` for something the records do not name */
};

struct version {
	uint64_t from;
	uint8_t kind; /* enum version_kind */
	char *name;   /* NAMED: length bytes and a NUL */
	uint32_t length;
	struct file *file; /* NULL: no position */
};

struct slot {
	uint32_t count;
	int forgot; /* versions were dropped: before the first one kept, nothing is known */
	struct version v[RT_FD_NAMES_VERSIONS];
};

struct stream {
	int used, known;
	uint64_t stream;
	int32_t fd;
	int64_t pos;
	uint64_t last_done;
};

struct rt_fd_names {
	struct slot **slots; /* by descriptor, NULL until first named */
	uint32_t slot_count;
	int positions;
	struct stream streams[RT_FD_NAMES_STREAMS];
	unsigned next_stream;
	char *buf[2]; /* the names resolved for the current call */
	size_t buf_size[2];
};

static struct file *file_new(int known, int64_t pos, uint32_t flags)
{
	struct file *f = calloc(1, sizeof(*f));
	if (f) {
		f->refs = 1;
		f->known = known;
		f->pos = pos;
		f->flags = flags;
	}
	return f;
}

static struct file *file_get(struct file *f)
{
	if (f)
		f->refs++;
	return f;
}

static void file_put(struct file *f)
{
	if (f && --f->refs == 0)
		free(f);
}

static void version_free(struct version *v)
{
	free(v->name);
	file_put(v->file);
	memset(v, 0, sizeof(*v));
}

struct rt_fd_names *rt_fd_names_new(void)
{
	struct rt_fd_names *t = calloc(1, sizeof(*t));
	if (t)
		t->positions = 1;
	return t;
}

void rt_fd_names_free(struct rt_fd_names *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->slot_count; i++) {
		struct slot *s = t->slots[i];
		for (uint32_t k = 0; s && k < s->count; k++)
			version_free(&s->v[k]);
		free(s);
	}
	free(t->slots);
	free(t->buf[0]);
	free(t->buf[1]);
	free(t);
}

void rt_fd_names_positions(struct rt_fd_names *t, int on)
{
	t->positions = on;
}

/* The slot of fd, made when make; NULL when out of range or memory. */
static struct slot *slot_of(struct rt_fd_names *t, int32_t fd, int make)
{
	if (fd < 0 || fd >= RT_FD_NAMES_FD_MAX)
		return NULL;
	if ((uint32_t)fd >= t->slot_count) {
		if (!make)
			return NULL;
		uint32_t count = t->slot_count ? t->slot_count : 64;
		while (count <= (uint32_t)fd)
			count *= 2;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		struct slot **more = realloc(t->slots, count * sizeof(*more));
		if (!more)
			return NULL;
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		memset(more + t->slot_count, 0, (count - t->slot_count) * sizeof(*more));
		t->slots = more;
		t->slot_count = count;
	}
	if (!t->slots[fd] && make)
		t->slots[fd] = calloc(1, sizeof(struct slot));
	return t->slots[fd];
}

/*
 * Insert a version of fd from `from` where it sorts (after versions of the
 * same time: they arrived earlier).  Takes over file; the name is copied.
 */
static int insert(struct rt_fd_names *t, int32_t fd, uint64_t from, enum version_kind kind,
		  const char *name, uint32_t length, struct file *file)
{
	struct slot *s = slot_of(t, fd, 1);
	char *copy = NULL;
	/* a damaged record that names no path: the number is taken, by something unnamed */
	if (kind == NAMED && (!name || length == 0))
		kind = UNNAMED;
	if (s && kind == NAMED && (copy = malloc((size_t)length + 1)) != NULL) {
		memcpy(copy, name, length);
		copy[length] = 0;
	}
	if (!s || (kind == NAMED && !copy)) {
		file_put(file);
		return fd < 0 || fd >= RT_FD_NAMES_FD_MAX ? 0 : -ENOMEM;
	}
	uint32_t at = s->count;
	while (at > 0 && s->v[at - 1].from > from)
		at--;
	if (s->count == RT_FD_NAMES_VERSIONS) {
		s->forgot = 1;
		if (at == 0) {
			/* older than everything kept: it is the one to drop */
			free(copy);
			file_put(file);
			return 0;
		}
		version_free(&s->v[0]);
		memmove(&s->v[0], &s->v[1], (s->count - 1) * sizeof(s->v[0]));
		s->count--;
		at--;
	}
	memmove(&s->v[at + 1], &s->v[at], (s->count - at) * sizeof(s->v[0]));
	s->count++;
	struct version *v = &s->v[at];
	memset(v, 0, sizeof(*v));
	v->from = from;
	v->kind = (uint8_t)kind;
	v->name = copy;
	v->length = copy ? length : 0;
	v->file = file;
	return 0;
}

/* The version of fd in effect at time at, or NULL with *why. */
static const struct version *lookup(struct rt_fd_names *t, int32_t fd, uint64_t at,
				    const char **why)
{
	if (fd < 0) {
		*why = "none";
		return NULL;
	}
	struct slot *s = slot_of(t, fd, 0);
	uint32_t i = s ? s->count : 0;
	while (i > 0 && s->v[i - 1].from > at)
		i--;
	if (i == 0) {
		*why = s && s->forgot ? "forgotten" : "unseen";
		return NULL;
	}
	const struct version *v = &s->v[i - 1];
	if (v->kind != NAMED) {
		*why = v->kind == CLOSED ? "closed" : "unseen";
		return NULL;
	}
	return v;
}

/* Resolve fd at time at into out, its name copied to buffer k. */
static const struct version *resolve(struct rt_fd_names *t, int32_t fd, uint64_t at, unsigned k,
				     struct rt_fd_name *out)
{
	memset(out, 0, sizeof(*out));
	const struct version *v = lookup(t, fd, at, &out->why);
	if (!v)
		return NULL;
	if (t->buf_size[k] < (size_t)v->length + 1) {
		char *more = realloc(t->buf[k], (size_t)v->length + 1);
		if (!more) {
			out->why = "unseen";
			return NULL;
		}
		t->buf[k] = more;
		t->buf_size[k] = (size_t)v->length + 1;
	}
	memcpy(t->buf[k], v->name, (size_t)v->length + 1);
	out->known = 1;
	out->name = t->buf[k];
	out->name_length = v->length;
	out->why = NULL;
	return v;
}

int rt_fd_names_seed(struct rt_fd_names *t, const struct rt_fd_seeds *seeds)
{
	for (uint32_t i = 0; i < seeds->count; i++) {
		const struct rt_fd_seed *f = &seeds->items[i];
		int rc = insert(t, f->fd, f->counter, NAMED, f->name, f->name_length,
				file_new(0, 0, f->open_flags));
		if (!rc && f->state == RT_FD_CLOSED)
			rc = insert(t, f->fd, f->closed_counter + 1, CLOSED, NULL, 0, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

static struct stream *stream_of(struct rt_fd_names *t, uint64_t stream)
{
	for (unsigned i = 0; i < RT_FD_NAMES_STREAMS; i++)
		if (t->streams[i].used && t->streams[i].stream == stream)
			return &t->streams[i];
	return NULL;
}

static void stream_open(struct rt_fd_names *t, uint64_t stream, int32_t fd, int known)
{
	struct stream *s = stream_of(t, stream);
	if (!s) {
		/* the oldest entry goes: its stream's position is then unknown */
		s = &t->streams[t->next_stream];
		t->next_stream = (t->next_stream + 1) % RT_FD_NAMES_STREAMS;
	}
	memset(s, 0, sizeof(*s));
	s->used = 1;
	s->stream = stream;
	s->fd = fd;
	s->known = known;
}

/* A call on fd itself: the streams over it no longer know where they are. */
static void streams_unknown(struct rt_fd_names *t, int32_t fd)
{
	for (unsigned i = 0; i < RT_FD_NAMES_STREAMS; i++)
		if (t->streams[i].used && t->streams[i].fd == fd)
			t->streams[i].known = 0;
}

static void file_unknown(const struct version *v)
{
	if (v && v->file)
		v->file->known = 0;
}

/*
 * A call that uses a position (known, pos, last_done): the position before
 * it into *out when certain, then moved by delta (when move).  A call that
 * began before the previous one returned leaves it unknown.
 */
static void use_position(int *known, int64_t *pos, uint64_t *last_done,
			 const struct rt_io_event *ev, uint64_t done, int64_t delta, int move,
			 struct rt_fd_resolved *out)
{
	if (ev->start < *last_done)
		*known = 0;
	if (*known) {
		out->offset_derived = 1;
		out->offset = *pos;
		if (move)
			*pos += delta;
	}
	if (done > *last_done)
		*last_done = done;
}

static int is_write(unsigned op)
{
	return op == RT_IO_WRITE || op == RT_IO_WRITEV;
}

/* The output descriptor of a call that has one (aux[0]), else -1. */
static int32_t second_fd(const struct rt_io_event *ev)
{
	if (!(ev->flags & RT_IO_F_AUX) ||
	    (ev->op != RT_IO_COPY_FILE_RANGE && ev->op != RT_IO_SENDFILE))
		return -1;
	return (int32_t)ev->aux[0];
}

void rt_fd_names_resolve(struct rt_fd_names *t, const struct rt_io_event *ev,
			 struct rt_fd_resolved *out)
{
	memset(out, 0, sizeof(*out));
	resolve(t, ev->fd, ev->start, 0, &out->fd);
	int32_t fd2 = second_fd(ev);
	if (fd2 >= 0 || ev->op == RT_IO_COPY_FILE_RANGE || ev->op == RT_IO_SENDFILE)
		resolve(t, fd2, ev->start, 1, &out->fd2);
}

int rt_fd_names_call(struct rt_fd_names *t, const struct rt_io_event *ev, uint64_t done,
		     struct rt_fd_resolved *out)
{
	memset(out, 0, sizeof(*out));
	const struct version *v = resolve(t, ev->fd, ev->start, 0, &out->fd), *v2 = NULL;
	const int has_aux = (ev->flags & RT_IO_F_AUX) != 0;
	const int32_t fd2 = second_fd(ev);
	if (ev->op == RT_IO_COPY_FILE_RANGE || ev->op == RT_IO_SENDFILE)
		v2 = resolve(t, fd2, ev->start, 1, &out->fd2);
	const int failed = rt_io_event_failed(ev);
	const int64_t result = ev->result;
	const int new_fd = !failed && result >= 0 && result < RT_FD_NAMES_FD_MAX;
	switch (ev->op) {
	case RT_IO_RUNDOWN:
		return insert(t, ev->fd, 0, NAMED, ev->path, ev->path_length,
			      file_new((ev->flags & RT_IO_F_OFFSET) != 0, ev->offset,
				       has_aux ? ev->aux[0] : 0));
	case RT_IO_NAMED:
		return insert(t, ev->fd, ev->start, NAMED, ev->path, ev->path_length,
			      file_new(0, 0, 0));
	case RT_IO_OPEN:
		if (!new_fd)
			return 0;
		return insert(t, (int32_t)result, done, NAMED, ev->path, ev->path_length,
			      file_new(1, 0, has_aux ? ev->aux[0] : 0));
	case RT_IO_FOPEN: {
		if (!new_fd)
			return 0;
		/* fdopen names no path: the descriptor keeps its name */
		const int append = has_aux && (ev->aux[0] & O_APPEND);
		if (ev->flags & RT_IO_F_STREAM)
			stream_open(t, ev->stream, (int32_t)result, ev->path && !append);
		if (!ev->path)
			return 0;
		return insert(t, (int32_t)result, done, NAMED, ev->path, ev->path_length,
			      file_new(1, 0, has_aux ? ev->aux[0] : 0));
	}
	case RT_IO_CLOSE:
	case RT_IO_FCLOSE:
		if (ev->op == RT_IO_FCLOSE && (ev->flags & RT_IO_F_STREAM)) {
			struct stream *s = stream_of(t, ev->stream);
			if (s)
				s->used = 0;
		}
		/* only EBADF says the descriptor was not closed (Linux closes on EINTR too) */
		if (result == -EBADF || ev->fd < 0)
			return 0;
		streams_unknown(t, ev->fd);
		return insert(t, ev->fd, ev->start + 1, CLOSED, NULL, 0, NULL);
	case RT_IO_DUP:
		if (!new_fd)
			return 0;
		if (!v)
			return insert(t, (int32_t)result, done, UNNAMED, NULL, 0, NULL);
		return insert(t, (int32_t)result, done, NAMED, v->name, v->length,
			      file_get(v->file));
	case RT_IO_READ:
	case RT_IO_WRITE:
	case RT_IO_READV:
	case RT_IO_WRITEV:
		streams_unknown(t, ev->fd);
		if (!t->positions || !v || !v->file)
			return 0;
		if (is_write(ev->op) && (v->file->flags & O_APPEND))
			v->file->known = 0;
		use_position(&v->file->known, &v->file->pos, &v->file->last_done, ev, done,
			     result > 0 ? result : 0, 1, out);
		return 0;
	case RT_IO_LSEEK:
		streams_unknown(t, ev->fd);
		if (!v || !v->file)
			return 0;
		{
			struct file *f = v->file;
			int overlapped = ev->start < f->last_done;
			if (done > f->last_done)
				f->last_done = done;
			if (overlapped)
				f->known = 0;
			else if (!failed && result >= 0) {
				f->known = 1;
				f->pos = result;
			}
		}
		return 0;
	case RT_IO_FREAD:
	case RT_IO_FWRITE:
	case RT_IO_FSEEK: {
		file_unknown(v);
		struct stream *s = ev->flags & RT_IO_F_STREAM ? stream_of(t, ev->stream) : NULL;
		if (!s)
			return 0;
		if (ev->op != RT_IO_FSEEK) {
			if (t->positions)
				use_position(&s->known, &s->pos, &s->last_done, ev, done,
					     result > 0 ? result : 0, 1, out);
			return 0;
		}
		/* a seek that overlapped another stream call: their order is not known */
		const int overlapped = ev->start < s->last_done;
		if (done > s->last_done)
			s->last_done = done;
		const uint32_t whence = has_aux ? ev->aux[0] : UINT32_MAX;
		const int has_offset = (ev->flags & RT_IO_F_OFFSET) != 0;
		if (failed && !overlapped)
			return 0; /* a failed seek moves nothing */
		if (!overlapped && whence == SEEK_SET && has_offset && ev->offset >= 0) {
			s->known = 1;
			s->pos = ev->offset;
		} else if (!overlapped && whence == SEEK_CUR && has_offset && s->known) {
			s->pos += ev->offset;
		} else {
			s->known = 0;
		}
		return 0;
	}
	case RT_IO_FFLUSH:
		file_unknown(v);
		return 0;
	case RT_IO_COPY_FILE_RANGE:
	case RT_IO_SENDFILE:
		file_unknown(v);
		file_unknown(v2);
		streams_unknown(t, ev->fd);
		streams_unknown(t, fd2);
		return 0;
	default:
		/* pread/pwrite and friends name their offset; the rest move nothing */
		return 0;
	}
}
