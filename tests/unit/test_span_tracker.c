/*
 * test_span_tracker.c - the span tracker (event/span_tracker.c) on the hard
 * cases, as a table: each case is a line of events and the reports it must
 * give, in order.  Then the cases a table does not write well: the depth
 * cap, by the thousand.
 *
 * An event is TID:OP NAME[/DEPTH][!FLAG]@TS:
 *   OP  > enter   < exit   [ begin   ] end   . any other event of the thread
 *       ~> ~<     an enter or exit left out by a filter (rt_span_close_unseen)
 *   FLAG u unwound, t thread ended, x exited (the library's exits)
 * A call's function address is its name's first byte.  Each case ends with
 * rt_span_finish() on its threads, in the order first seen; an event left out
 * by a filter is no time of its thread.
 *
 * A report is one line:
 *   +TID NAME@TS                    a begin
 *   -TID NAME BEGIN..END HOW        an end
 *   ?TID NAME@TS                    an orphan exit or end
 *   !TID NAME@TS                    a begin past the depth cap
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/check.h"
#include "../lib/test_site.h"
#include "event/span_tracker.h"

#define THREADS_MAX 4
#define EVENTS_MAX 64
#define LOG_MAX 8192

static const char *const how_names[] = {"returned", "unwound",	 "thread_ended",
					"exited",   "exit_lost", "unclosed"};

struct thread {
	int tid;
	struct rt_span_thread spans;
};

struct run {
	struct rt_span_tracker tracker;
	struct thread threads[THREADS_MAX];
	int thread_count;
	char log[LOG_MAX];
	size_t used;
	/* the sites of the marked spans' names, made as they come */
	struct rt_site sites[EVENTS_MAX];
	char tags[EVENTS_MAX][16];
	int site_count;
};

/* What the callbacks keep per open span: its name, to say which ended. */
struct user {
	char name[16];
};

static void say(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct run *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(r->log + r->used, sizeof(r->log) - r->used, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < sizeof(r->log) - r->used)
		r->used += (size_t)n;
}

static void name_of(const struct rt_span_event *ev, char *out, size_t size)
{
	if (ev->input == RT_SPAN_BEGIN || ev->input == RT_SPAN_END)
		snprintf(out, size, "%s", ev->site->tag);
	else
		snprintf(out, size, "%c", (char)ev->addr);
}

static int on_begin(void *ctx, void *thread, struct rt_span *span, const struct rt_span_event *ev)
{
	struct run *r = ctx;
	struct thread *t = thread;
	struct user *u = rt_span_user(span);
	name_of(ev, u->name, sizeof(u->name));
	say(r, "+%d %s@%lld\n", t->tid, u->name, (long long)ev->ts);
	return 0;
}

static int on_end(void *ctx, void *thread, struct rt_span *span, int64_t end_ts,
		  enum rt_span_end how, const struct rt_span_event *own_end)
{
	struct run *r = ctx;
	struct thread *t = thread;
	const struct user *u = rt_span_user(span);
	/* the event that ended it is its own exactly when the exit or end was recorded */
	int own_expected =
	    how == RT_SPAN_RETURNED || (span->kind == RT_SPAN_CALL && how >= RT_SPAN_UNWOUND &&
					how <= RT_SPAN_EXITED && own_end != NULL);
	CHECK((own_end != NULL) == own_expected);
	CHECK_EQ(rt_span_duration(span, end_ts), (uint64_t)(end_ts - span->begin_ts));
	const char *how_name =
	    how == RT_SPAN_EXIT_LOST && span->kind == RT_SPAN_MARKED ? "end_lost" : how_names[how];
	say(r, "-%d %s %lld..%lld %s\n", t->tid, u->name, (long long)span->begin_ts,
	    (long long)end_ts, how_name);
	return 0;
}

static int on_orphan(void *ctx, void *thread, const struct rt_span_event *ev)
{
	char name[16];
	name_of(ev, name, sizeof(name));
	say(ctx, "?%d %s@%lld\n", ((struct thread *)thread)->tid, name, (long long)ev->ts);
	return 0;
}

static int on_too_deep(void *ctx, void *thread, const struct rt_span_event *ev)
{
	char name[16];
	name_of(ev, name, sizeof(name));
	say(ctx, "!%d %s@%lld\n", ((struct thread *)thread)->tid, name, (long long)ev->ts);
	return 0;
}

static const struct rt_span_ops ops = {
    .begin = on_begin, .end = on_end, .orphan = on_orphan, .too_deep = on_too_deep};

static struct thread *thread_of(struct run *r, int tid)
{
	for (int i = 0; i < r->thread_count; i++)
		if (r->threads[i].tid == tid)
			return &r->threads[i];
	if (!CHECK(r->thread_count < THREADS_MAX))
		return &r->threads[0];
	struct thread *t = &r->threads[r->thread_count++];
	t->tid = tid;
	return t;
}

static const struct rt_site *site_named(struct run *r, const char *tag, uint8_t kind)
{
	for (int i = 0; i < r->site_count; i++)
		if (strcmp(r->tags[i], tag) == 0 && r->sites[i].kind == kind)
			return &r->sites[i];
	int i = r->site_count++;
	snprintf(r->tags[i], sizeof(r->tags[i]), "%s", tag);
	r->sites[i] = test_site(kind, r->tags[i], 0);
	return &r->sites[i];
}

static void run_init(struct run *r)
{
	memset(r, 0, sizeof(*r));
	rt_span_tracker_init(&r->tracker, &ops, r, sizeof(struct user));
}

static void run_finish(struct run *r)
{
	for (int i = 0; i < r->thread_count; i++) {
		CHECK_EQ(rt_span_finish(&r->tracker, &r->threads[i].spans, &r->threads[i]), 0);
		CHECK_EQ(r->threads[i].spans.calls.count, 0);
		CHECK_EQ(r->threads[i].spans.marked.count, 0);
		rt_span_thread_free(&r->threads[i].spans);
	}
}

/* One event of the notation above; 0, or -1 when it does not parse. */
static int feed(struct run *r, const char *word)
{
	char op[3] = "", name[16] = "", flag = 0;
	int tid = 0;
	unsigned depth = 0;
	long long ts = 0;
	const char *p = word;
	char *end;
	tid = (int)strtol(p, &end, 10);
	if (end == p || *end != ':')
		return -1;
	p = end + 1;
	op[0] = *p++;
	if (op[0] == '~')
		op[1] = *p++;
	size_t n = strcspn(p, "/!@");
	if (n == 0 || n >= sizeof(name))
		return -1;
	memcpy(name, p, n);
	p += n;
	if (*p == '/') {
		depth = (unsigned)strtoul(p + 1, &end, 10);
		p = end;
	}
	if (*p == '!') {
		flag = p[1];
		p += 2;
	}
	if (*p != '@')
		return -1;
	ts = strtoll(p + 1, &end, 10);
	if (*end)
		return -1;

	struct rt_span_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.ts = ts;
	ev.depth = depth;
	ev.addr = (unsigned char)name[0];
	ev.flags = flag == 'u'	 ? RT_FUNC_F_UNWOUND
		   : flag == 't' ? RT_FUNC_F_THREAD_ENDED
		   : flag == 'x' ? RT_FUNC_F_EXITED
				 : 0;
	char kind = op[0] == '~' ? op[1] : op[0];
	ev.input = kind == '>'	 ? RT_SPAN_ENTER
		   : kind == '<' ? RT_SPAN_EXIT
		   : kind == '[' ? RT_SPAN_BEGIN
		   : kind == ']' ? RT_SPAN_END
				 : RT_SPAN_NONE;
	if (ev.input == RT_SPAN_BEGIN || ev.input == RT_SPAN_END)
		ev.site =
		    site_named(r, name, ev.input == RT_SPAN_BEGIN ? RT_SITE_BEGIN : RT_SITE_END);
	struct thread *t = thread_of(r, tid);
	if (op[0] == '.') {
		rt_span_saw(&t->spans, ts);
		return 0;
	}
	if (op[0] == '~')
		return rt_span_close_unseen(&r->tracker, &t->spans, t, &ev) ? -1 : 0;
	return rt_span_feed(&r->tracker, &t->spans, t, &ev) ? -1 : 0;
}

struct tracker_case {
	const char *name;
	const char *events;
	const char *want;
};

static const struct tracker_case cases[] = {
    {"calls that return", "1:>f/0@10 1:>g/1@20 1:<g/1@30 1:<f/0@40",
     "+1 f@10\n+1 g@20\n-1 g 20..30 returned\n-1 f 10..40 returned\n"},
    /* the disagreement of the old copies: pairing by address timed the inner f to 40 */
    {"an exit lost inside recursion", "1:>f/0@10 1:>f/1@20 1:<f/0@40",
     "+1 f@10\n+1 f@20\n-1 f 20..40 exit_lost\n-1 f 10..40 returned\n"},
    {"the enter of a sibling closes a call whose exit was lost",
     "1:>f/0@10 1:>g/1@20 1:>h/1@30 1:<h/1@35 1:<f/0@40",
     "+1 f@10\n+1 g@20\n-1 g 20..30 exit_lost\n+1 h@30\n-1 h 30..35 returned\n"
     "-1 f 10..40 returned\n"},
    {"an exit at the depth of another function's call", "1:>f/0@10 1:>g/1@20 1:<h/1@30 1:<f/0@40",
     "+1 f@10\n+1 g@20\n-1 g 20..30 exit_lost\n?1 h@30\n-1 f 10..40 returned\n"},
    {"an exit deeper than any open call", "1:>f/0@10 1:<g/2@20 1:<f/0@30",
     "+1 f@10\n?1 g@20\n-1 f 10..30 returned\n"},
    {"longjmp: the library's exits for the calls it left",
     "1:>m/0@10 1:>a/1@20 1:>b/2@30 1:<b/2!u@40 1:<a/1!u@40 1:>c/1@50 1:<c/1@60 1:<m/0@70",
     "+1 m@10\n+1 a@20\n+1 b@30\n-1 b 30..40 unwound\n-1 a 20..40 unwound\n+1 c@50\n"
     "-1 c 50..60 returned\n-1 m 10..70 returned\n"},
    {"longjmp whose exits were lost: the next enter's depth closes the calls",
     "1:>m/0@10 1:>a/1@20 1:>b/2@30 1:>c/1@50 1:<c/1@60 1:<m/0@70",
     "+1 m@10\n+1 a@20\n+1 b@30\n-1 b 30..50 exit_lost\n-1 a 20..50 exit_lost\n+1 c@50\n"
     "-1 c 50..60 returned\n-1 m 10..70 returned\n"},
    /* longjmp skips a C scope's cleanup: nothing says the span ended */
    {"a span begun in a call left by longjmp stays open", "1:>m/0@10 1:>a/1@20 1:[s@25 1:<a/1!u@40",
     "+1 m@10\n+1 a@20\n+1 s@25\n-1 a 20..40 unwound\n-1 s 25..40 unclosed\n"
     "-1 m 10..40 unclosed\n"},
    {"exits and ends with nothing open", "1:<g/3@5 1:]x@6 1:<g/3!t@7", "?1 g@5\n?1 x@6\n?1 g@7\n"},
    {"an end inside a call reaches a span begun outside it",
     "1:[s@10 1:>f/0@20 1:]s@30 1:<f/0@40 1:]s@50",
     "+1 s@10\n+1 f@20\n-1 s 10..30 returned\n-1 f 20..40 returned\n?1 s@50\n"},
    /* a request begun in one callback and ended in the next */
    {"a span begun in f and ended in g",
     "1:>m/0@5 1:>f/1@10 1:[req@15 1:<f/1@20 1:>g/1@30 1:]req@35 1:<g/1@40 1:<m/0@50",
     "+1 m@5\n+1 f@10\n+1 req@15\n-1 f 10..20 returned\n+1 g@30\n"
     "-1 req 15..35 returned\n-1 g 30..40 returned\n-1 m 5..50 returned\n"},
    {"a span begun in f ended after f's caller returned",
     "1:>m/0@5 1:>f/1@10 1:[req@15 1:<f/1@20 1:<m/0@30 1:>n/0@40 1:]req@45 1:<n/0@50",
     "+1 m@5\n+1 f@10\n+1 req@15\n-1 f 10..20 returned\n-1 m 5..30 returned\n"
     "+1 n@40\n-1 req 15..45 returned\n-1 n 40..50 returned\n"},
    {"spans of two names nested across calls",
     "1:>f/0@10 1:[a@12 1:>g/1@14 1:[b@16 1:<g/1@18 1:]b@20 1:<f/0@22 1:]a@24",
     "+1 f@10\n+1 a@12\n+1 g@14\n+1 b@16\n-1 g 14..18 returned\n"
     "-1 b 16..20 returned\n-1 f 10..22 returned\n-1 a 12..24 returned\n"},
    /* marked spans stay nested: the one begun inside the other ends first */
    {"spans of two names interleaved", "1:>f/0@10 1:[a@12 1:[b@14 1:<f/0@16 1:]a@18 1:]b@20",
     "+1 f@10\n+1 a@12\n+1 b@14\n-1 f 10..16 returned\n-1 b 14..18 end_lost\n"
     "-1 a 12..18 returned\n?1 b@20\n"},
    {"marked spans of one name nest; an end closes the innermost",
     "1:[r@10 1:[r@20 1:]r@30 1:]r@40",
     "+1 r@10\n+1 r@20\n-1 r 20..30 returned\n-1 r 10..40 returned\n"},
    {"an end below the innermost span: the spans above it lost their ends",
     "1:[s@10 1:[t@20 1:]s@30 1:]t@40",
     "+1 s@10\n+1 t@20\n-1 t 20..30 end_lost\n-1 s 10..30 returned\n?1 t@40\n"},
    {"a call's exit leaves the spans begun inside it open", "1:>f/0@10 1:[u@20 1:<f/0@30",
     "+1 f@10\n+1 u@20\n-1 f 10..30 returned\n-1 u 20..30 unclosed\n"},
    {"an enter at a call's depth leaves the spans begun inside it open",
     "1:>f/0@10 1:[u@20 1:>g/0@30 1:]u@35 1:<g/0@40",
     "+1 f@10\n+1 u@20\n-1 f 10..30 exit_lost\n+1 g@30\n-1 u 20..35 returned\n"
     "-1 g 30..40 returned\n"},
    {"a call nests in a span; the span outlives it", "1:[s@10 1:>f/0@20 1:<f/0@30 1:]s@40",
     "+1 s@10\n+1 f@20\n-1 f 20..30 returned\n-1 s 10..40 returned\n"},
    /* the library writes exits for calls only: the span ends with the trace, unclosed */
    {"a span left open when its thread ends",
     "1:>w/0@10 1:>x/1@20 1:[s@25 1:<x/1!t@30 1:<w/0!t@30 2:[r@40 2:.x@50",
     "+1 w@10\n+1 x@20\n+1 s@25\n-1 x 20..30 thread_ended\n-1 w 10..30 thread_ended\n"
     "+2 r@40\n-1 s 25..30 unclosed\n-2 r 40..50 unclosed\n"},
    {"exit() with calls open", "1:>m/0@10 1:<m/0!x@90", "+1 m@10\n-1 m 10..90 exited\n"},
    {"open at the end: closed at the thread's last time", "1:>f/0@10 1:>g/1@20 1:.x@50 1:[s@30",
     "+1 f@10\n+1 g@20\n+1 s@30\n-1 s 30..50 unclosed\n-1 g 20..50 unclosed\n"
     "-1 f 10..50 unclosed\n"},
    {"interleaved threads keep their own stacks",
     "1:>f/0@10 2:>f/0@11 1:>g/1@12 2:<f/0@13 1:<g/1@14 2:>f/0@15 1:<f/0@16",
     "+1 f@10\n+2 f@11\n+1 g@12\n-2 f 11..13 returned\n-1 g 12..14 returned\n+2 f@15\n"
     "-1 f 10..16 returned\n-2 f 15..15 unclosed\n"},
    /* a rotated set: the enter in one file, the exit in the next, read as one stream */
    {"a rotation boundary between an enter and its exit",
     "1:>f/0@10 1:>g/1@20 1:<g/1@1000 1:<f/0@1010",
     "+1 f@10\n+1 g@20\n-1 g 20..1000 returned\n-1 f 10..1010 returned\n"},
    /* the earlier files removed: the calls they began end without their enters */
    {"the file with the enters removed", "1:>h/2@100 1:<h/2@105 1:<g/1@110 1:<f/0@120 1:>k/0@130",
     "+1 h@100\n-1 h 100..105 returned\n?1 g@110\n?1 f@120\n+1 k@130\n-1 k 130..130 unclosed\n"},
    {"events a filter left out still close calls by their depth",
     "1:>f/0@10 1:>g/1@20 1:~>h/1@30 1:<f/0@40 1:>a/0@50 1:>b/1@60 1:~<c/1@70 1:~<a/0@80",
     "+1 f@10\n+1 g@20\n-1 g 20..30 exit_lost\n-1 f 10..40 returned\n+1 a@50\n+1 b@60\n"
     "-1 b 60..70 exit_lost\n-1 a 50..60 unclosed\n"},
};

static void test_cases(void)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		static struct run r;
		run_init(&r);
		char words[1024];
		snprintf(words, sizeof(words), "%s", cases[c].events);
		for (char *save = NULL, *w = strtok_r(words, " ", &save); w;
		     w = strtok_r(NULL, " ", &save))
			if (feed(&r, w) != 0)
				check_fail(__FILE__, __LINE__, "%s: bad event %s", cases[c].name,
					   w);
		run_finish(&r);
		if (strcmp(r.log, cases[c].want) != 0)
			check_fail(__FILE__, __LINE__, "%s:\ngot:\n%swant:\n%s", cases[c].name,
				   r.log, cases[c].want);
	}
}

struct counts {
	int begins, returned, other_ends, orphans, too_deep;
};

static int count_begin(void *ctx, void *thread, struct rt_span *span,
		       const struct rt_span_event *ev)
{
	((struct counts *)ctx)->begins++;
	return 0;
}

static int count_end(void *ctx, void *thread, struct rt_span *span, int64_t end_ts,
		     enum rt_span_end how, const struct rt_span_event *own_end)
{
	struct counts *k = ctx;
	if (how == RT_SPAN_RETURNED)
		k->returned++;
	else
		k->other_ends++;
	return 0;
}

static int count_orphan(void *ctx, void *thread, const struct rt_span_event *ev)
{
	((struct counts *)ctx)->orphans++;
	return 0;
}

static int count_too_deep(void *ctx, void *thread, const struct rt_span_event *ev)
{
	((struct counts *)ctx)->too_deep++;
	return 0;
}

static const struct rt_span_ops counting = {
    .begin = count_begin, .end = count_end, .orphan = count_orphan, .too_deep = count_too_deep};

static struct rt_span_event call_event(enum rt_span_input input, uint32_t depth, int64_t ts)
{
	struct rt_span_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.input = input;
	ev.depth = depth;
	ev.addr = 0x10;
	ev.ts = ts;
	return ev;
}

static void feed_marked(struct rt_span_tracker *tr, struct rt_span_thread *t,
			enum rt_span_input input, const struct rt_site *site, int64_t ts)
{
	struct rt_span_event ev = {.input = input, .site = site, .ts = ts};
	CHECK_EQ(rt_span_feed(tr, t, NULL, &ev), 0);
}

/*
 * Deeper than the cap: the calls past it are too deep, their exits absorbed,
 * and the stack in step after them; a shallower event ends the skipping even
 * when the skipped calls' exits were lost; marked spans, a stack of their
 * own, pair inside calls past the cap; marked spans past their own cap pair
 * with their ends; the frames never grow past the caps.
 */
static void test_depth_cap(void)
{
	enum { DEEP = RT_SPAN_CALLS_MAX + 6, DEEP_MARKED = RT_SPAN_MARKED_MAX + 6 };
	struct counts k;
	memset(&k, 0, sizeof(k));
	struct rt_span_tracker tr;
	rt_span_tracker_init(&tr, &counting, &k, 8);
	struct rt_span_thread t;
	memset(&t, 0, sizeof(t));
	struct rt_site begin = test_site(RT_SITE_BEGIN, "s", 0),
		       end = test_site(RT_SITE_END, "s", 0);
	int64_t ts = 0;
	for (uint32_t d = 0; d < DEEP; d++) {
		struct rt_span_event ev = call_event(RT_SPAN_ENTER, d, ts++);
		CHECK_EQ(rt_span_feed(&tr, &t, NULL, &ev), 0);
	}
	CHECK_EQ(t.calls.count, RT_SPAN_CALLS_MAX);
	CHECK(t.calls.capacity <= RT_SPAN_CALLS_MAX);
	/* a marked span inside the calls past the cap: its own stack has room */
	feed_marked(&tr, &t, RT_SPAN_BEGIN, &begin, ts++);
	feed_marked(&tr, &t, RT_SPAN_END, &end, ts++);
	CHECK_EQ(k.returned, 1);
	for (uint32_t d = DEEP; d-- > 0;) {
		struct rt_span_event ev = call_event(RT_SPAN_EXIT, d, ts++);
		CHECK_EQ(rt_span_feed(&tr, &t, NULL, &ev), 0);
	}
	CHECK_EQ(k.begins, RT_SPAN_CALLS_MAX + 1);
	CHECK_EQ(k.returned, RT_SPAN_CALLS_MAX + 1);
	CHECK_EQ(k.too_deep, 6);
	CHECK_EQ(tr.calls_too_deep, 6);
	CHECK_EQ(tr.marked_too_deep, 0);
	CHECK_EQ(k.orphans + k.other_ends, 0);

	/* again, the skipped calls' exits lost: a shallower enter ends the skipping */
	memset(&k, 0, sizeof(k));
	for (uint32_t d = 0; d < DEEP; d++) {
		struct rt_span_event ev = call_event(RT_SPAN_ENTER, d, ts++);
		CHECK_EQ(rt_span_feed(&tr, &t, NULL, &ev), 0);
	}
	struct rt_span_event shallow = call_event(RT_SPAN_ENTER, 1000, ts++);
	CHECK_EQ(rt_span_feed(&tr, &t, NULL, &shallow), 0);
	/* calls at depths 1000..1023 lost their exits; the new one is open at 1000 */
	CHECK_EQ(k.other_ends, RT_SPAN_CALLS_MAX - 1000);
	CHECK_EQ(t.calls.count, 1001);
	CHECK_EQ(rt_span_at(&tr, &t.calls, 1000)->depth, 1000);
	CHECK_EQ(rt_span_finish(&tr, &t, NULL), 0);
	CHECK_EQ(t.calls.count, 0);

	/* marked spans past their cap: skipped with the ends that pair with them */
	memset(&k, 0, sizeof(k));
	for (int i = 0; i < DEEP_MARKED; i++)
		feed_marked(&tr, &t, RT_SPAN_BEGIN, &begin, ts++);
	CHECK_EQ(t.marked.count, RT_SPAN_MARKED_MAX);
	CHECK(t.marked.capacity <= RT_SPAN_MARKED_MAX);
	/* a call inside them: its own stack has room */
	struct rt_span_event call = call_event(RT_SPAN_ENTER, 0, ts++);
	CHECK_EQ(rt_span_feed(&tr, &t, NULL, &call), 0);
	call = call_event(RT_SPAN_EXIT, 0, ts++);
	CHECK_EQ(rt_span_feed(&tr, &t, NULL, &call), 0);
	CHECK_EQ(k.returned, 1);
	for (int i = 0; i < DEEP_MARKED; i++)
		feed_marked(&tr, &t, RT_SPAN_END, &end, ts++);
	CHECK_EQ(k.too_deep, 6);
	CHECK_EQ(tr.marked_too_deep, 6);
	CHECK_EQ(k.returned, RT_SPAN_MARKED_MAX + 1);
	CHECK_EQ(k.orphans + k.other_ends, 0);
	CHECK_EQ(t.marked.count, 0);
	rt_span_thread_free(&t);
}

/* A consumer that keeps every call (a call tree) raises the cap: nothing is too deep. */
static void test_raised_cap(void)
{
	enum { DEEP = 3 * RT_SPAN_CALLS_MAX };
	struct counts k;
	memset(&k, 0, sizeof(k));
	struct rt_span_tracker tr;
	rt_span_tracker_init(&tr, &counting, &k, 0);
	tr.calls_max = UINT32_MAX;
	struct rt_span_thread t;
	memset(&t, 0, sizeof(t));
	int64_t ts = 0;
	for (uint32_t d = 0; d < DEEP; d++) {
		struct rt_span_event ev = call_event(RT_SPAN_ENTER, d, ts++);
		CHECK_EQ(rt_span_feed(&tr, &t, NULL, &ev), 0);
	}
	CHECK_EQ(t.calls.count, DEEP);
	for (uint32_t d = DEEP; d-- > 0;) {
		struct rt_span_event ev = call_event(RT_SPAN_EXIT, d, ts++);
		CHECK_EQ(rt_span_feed(&tr, &t, NULL, &ev), 0);
	}
	CHECK_EQ(k.returned, DEEP);
	CHECK_EQ(k.too_deep, 0);
	rt_span_thread_free(&t);
}

/* A callback's error stops the feed and comes back; the stack stays usable. */
static int failing_begin(void *ctx, void *thread, struct rt_span *span,
			 const struct rt_span_event *ev)
{
	return -ENOMEM;
}

static void test_errors(void)
{
	struct counts k;
	memset(&k, 0, sizeof(k));
	struct rt_span_ops failing = counting;
	failing.begin = failing_begin;
	struct rt_span_tracker tr;
	rt_span_tracker_init(&tr, &failing, &k, 0);
	struct rt_span_thread t;
	memset(&t, 0, sizeof(t));
	struct rt_span_event ev = call_event(RT_SPAN_ENTER, 0, 1);
	CHECK_EQ(rt_span_feed(&tr, &t, NULL, &ev), -ENOMEM);
	ev = call_event(RT_SPAN_EXIT, 0, 2);
	CHECK_EQ(rt_span_feed(&tr, &t, NULL, &ev), 0);
	CHECK_EQ(k.returned, 1);
	CHECK_EQ(t.calls.count, 0);
	rt_span_thread_free(&t);
}

/* The flags of the library's exits, and the marks the exports write. */
static void test_names(void)
{
	CHECK_EQ(rt_span_end_of_flags(0), RT_SPAN_RETURNED);
	CHECK_EQ(rt_span_end_of_flags(RT_FUNC_F_UNWOUND), RT_SPAN_UNWOUND);
	CHECK_EQ(rt_span_end_of_flags(RT_FUNC_F_THREAD_ENDED), RT_SPAN_THREAD_ENDED);
	CHECK_EQ(rt_span_end_of_flags(RT_FUNC_F_EXITED), RT_SPAN_EXITED);
	CHECK(rt_span_end_mark(RT_SPAN_RETURNED, RT_SPAN_CALL) == NULL);
	CHECK_STR(rt_span_end_mark(RT_SPAN_EXIT_LOST, RT_SPAN_CALL), "exit_lost");
	CHECK_STR(rt_span_end_mark(RT_SPAN_EXIT_LOST, RT_SPAN_MARKED), "end_lost");
	CHECK_STR(rt_span_end_mark(RT_SPAN_UNCLOSED, RT_SPAN_MARKED), "unclosed");
	CHECK_STR(rt_span_end_mark(RT_SPAN_THREAD_ENDED, RT_SPAN_CALL), "thread_ended");
	struct rt_site enter = test_site(RT_SITE_ENTER, "enter", 6);
	struct rt_site plain = test_site(RT_SITE_TRACE, "x", 0);
	CHECK_EQ(rt_span_input_of_site(&enter), RT_SPAN_ENTER);
	CHECK_EQ(rt_span_input_of_site(&plain), RT_SPAN_NONE);
	CHECK_EQ(rt_span_input_of_site(NULL), RT_SPAN_NONE);
}

int main(void)
{
	test_cases();
	test_depth_cap();
	test_raised_cap();
	test_errors();
	test_names();
	int failures = check_failure_count();
	printf("test_span_tracker: %s\n", failures ? "FAILED" : "passed");
	return failures ? 1 : 0;
}
