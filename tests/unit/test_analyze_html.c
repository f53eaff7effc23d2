/*
 * test_analyze_html.c - the bytes of the analysis page (analyze/html.c).
 *
 * A page is written with every call, fed strings a recorded program could
 * hold (markup, quotes, control bytes, bytes that are not UTF-8), values
 * that are not finite, empty inputs, and more points and intervals than a
 * plot can show.  The page must escape all of it, stay valid UTF-8 with
 * balanced tags, load nothing (no script, no address), draw one mark per
 * thing drawn, thin and cap as it says, and be the same bytes when written
 * again.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../lib/check.h"
#include "analyze/html.h"
#include "analyze/quantiles.h"
#include "common/utf8.h"
#include "present/units.h"

static const char hostile[] = "<script>alert(\"x\")</script> & 'q' \x01\x1b\x7f bad:\xff\xc0\xaf"
			      " cut:\xe2\x82 ok:\xc3\xa9\xe2\x82\xac";
/* what it must become: markup escaped, control and stray bytes as \xNN, UTF-8 kept */
static const char hostile_escaped[] =
    "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;q&#39; \\x01\\x1b\\x7f "
    "bad:\\xff\\xc0\\xaf cut:\\xe2\\x82 ok:\xc3\xa9\xe2\x82\xac";

#define MANY_POINTS 100000
#define MANY_INTERVALS 5000

static int64_t *many_x;
static double *many_y;
static struct rt_html_interval *many_intervals;
static char (*many_labels)[16];

static void make_inputs(void)
{
	many_x = calloc(MANY_POINTS, sizeof(*many_x));
	many_y = calloc(MANY_POINTS, sizeof(*many_y));
	many_intervals = calloc(MANY_INTERVALS, sizeof(*many_intervals));
	many_labels = calloc(MANY_INTERVALS, sizeof(*many_labels));
	if (!many_x || !many_y || !many_intervals || !many_labels) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < MANY_POINTS; i++) {
		many_x[i] = (int64_t)i * 1000;
		/* a spike every 997 points: thinning must keep the highs and lows */
		many_y[i] = i % 997 == 0 ? 1000.0 : i % 991 == 0 ? -5.0 : (double)(i % 50);
	}
	/* interval i lasts i+1 us, so the 2000 longest are those from 3000 on */
	for (size_t i = 0; i < MANY_INTERVALS; i++) {
		size_t k = (i * 7919) % MANY_INTERVALS; /* not in length order */
		many_intervals[i].start_ns = (int64_t)i * 10000;
		many_intervals[i].end_ns = (int64_t)i * 10000 + (int64_t)(k + 1) * 1000;
		snprintf(many_labels[i], sizeof(many_labels[i]), "L%zu", k);
		many_intervals[i].label = many_labels[i];
	}
}

/* Every call, with the hostile string in each place text goes. */
static int write_page(const char *path)
{
	char message[256] = "";
	struct rt_html *h = rt_html_open(path, hostile, message, sizeof(message));
	if (!CHECK(h != NULL)) {
		fprintf(stderr, "%s: %s\n", path, message);
		return -1;
	}
	const char *names[] = {"input", hostile};
	const char *values[] = {hostile, "none"};
	rt_html_summary(h, names, values, 2);
	rt_html_section(h, hostile, hostile);
	rt_html_section(h, "no text", NULL);
	rt_html_paragraph(h, hostile);
	rt_html_paragraph(h, NULL);
	const char *headers[] = {"name", hostile};
	const char *cells[] = {hostile, "1", "b", "2"};
	rt_html_table(h, headers, 2, cells, 2);
	rt_html_table(h, headers, 2, NULL, 0);

	struct rt_quantiles q;
	rt_quantiles_init(&q);
	/* 1 value at 0, 3 in [512, 1024), 40 in [4096, 8192), 10 in [2^20, 2^21) */
	rt_quantiles_add(&q, 0);
	for (int i = 0; i < 3; i++)
		rt_quantiles_add(&q, 600);
	for (int i = 0; i < 40; i++)
		rt_quantiles_add(&q, 5000 + (uint64_t)i);
	for (int i = 0; i < 10; i++)
		rt_quantiles_add(&q, 1500000);
	rt_html_histogram(h, hostile, &q);
	rt_quantiles_free(&q);
	struct rt_quantiles empty;
	rt_quantiles_init(&empty);
	rt_html_histogram(h, "empty histogram", &empty);
	rt_quantiles_free(&empty);

	int64_t xs[] = {0, 1000000, 2000000, 3000000, 4000000, 5000000};
	double ys[] = {3, 97, NAN, 40, INFINITY, 12};
	double flat[] = {5, 5, 5, 5, 5, 5};
	struct rt_html_series lines[] = {
	    {.name = hostile, .x_ns = xs, .y = ys, .count = 6},
	    {.name = "flat", .x_ns = xs, .y = flat, .count = 6},
	};
	rt_html_series_plot(h, hostile, hostile, lines, 2);
	struct rt_html_series long_line = {
	    .name = "long", .x_ns = many_x, .y = many_y, .count = MANY_POINTS};
	rt_html_series_plot(h, "long line", "events/s", &long_line, 1);
	double nans[] = {NAN, NAN};
	struct rt_html_series nan_line = {.name = "not finite", .x_ns = xs, .y = nans, .count = 2};
	rt_html_series_plot(h, "not finite only", "y", &nan_line, 1);
	rt_html_series_plot(h, "no lines", "y", NULL, 0);

	struct rt_html_interval ivs[] = {
	    {.start_ns = 1000, .end_ns = 500000, .label = hostile},
	    {.start_ns = 700000, .end_ns = 701000, .label = NULL},
	    {.start_ns = -5000, .end_ns = 9000000000, .label = "clipped both ends"},
	};
	struct rt_html_lane lanes[] = {
	    {.name = hostile, .intervals = ivs, .count = 2},
	    {.name = "idle", .intervals = NULL, .count = 0},
	    {.name = "a thread with a name too long for its lane, \xc3\xa9",
	     .intervals = ivs + 2,
	     .count = 1},
	};
	rt_html_timeline(h, hostile, lanes, 3, 0, 1000000);
	struct rt_html_lane crowded = {
	    .name = "crowded", .intervals = many_intervals, .count = MANY_INTERVALS};
	rt_html_timeline(h, "crowded", &crowded, 1, 0, MANY_INTERVALS * 10000);
	rt_html_timeline(h, "no lanes", NULL, 0, 0, 0);
	return rt_html_close(h);
}

static char *read_all(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *grown = realloc(buf, 2 * cap + 1);
			if (!grown) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = grown;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	*size = n;
	return buf;
}

static size_t count_of(const char *page, const char *what)
{
	size_t n = 0;
	for (const char *p = page; (p = strstr(p, what)) != NULL; p += strlen(what))
		n++;
	return n;
}

/* The page's tags nest: every element opened is closed, in order (void ones excepted). */
static void check_balanced(const char *page)
{
	static const char *const void_elements[] = {"meta", "br", "hr", "img", "link", "input"};
	char stack[64][16];
	int depth = 0, ok = 1;
	for (const char *p = page; ok && (p = strchr(p, '<')) != NULL; p++) {
		if (p[1] == '!') { /* the doctype */
			CHECK(strncmp(p, "<!DOCTYPE html>", 15) == 0);
			continue;
		}
		const char *end = strchr(p, '>');
		if (!CHECK(end != NULL))
			return;
		/* a tag holds no other '<' and every quote closes */
		size_t quotes = 0;
		for (const char *c = p + 1; c < end; c++) {
			ok &= CHECK(*c != '<');
			quotes += *c == '"';
		}
		ok &= CHECK(quotes % 2 == 0);
		int closing = p[1] == '/';
		const char *name = p + 1 + closing;
		size_t len = strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789");
		if (!CHECK(len > 0 && len < 16)) {
			fprintf(stderr, "bad tag at offset %zu: %.40s\n", (size_t)(p - page), p);
			return;
		}
		char tag[16];
		memcpy(tag, name, len);
		tag[len] = 0;
		int is_void = end[-1] == '/';
		for (size_t v = 0; v < sizeof(void_elements) / sizeof(void_elements[0]); v++)
			is_void |= strcmp(tag, void_elements[v]) == 0;
		if (closing) {
			if (!CHECK(depth > 0 && strcmp(stack[depth - 1], tag) == 0)) {
				fprintf(stderr, "</%s> at offset %zu closes <%s>\n", tag,
					(size_t)(p - page), depth ? stack[depth - 1] : "nothing");
				return;
			}
			depth--;
		} else if (!is_void) {
			if (!CHECK(depth < 64))
				return;
			strcpy(stack[depth++], tag);
		}
		p = end;
	}
	CHECK_EQ(depth, 0);
}

/* Valid UTF-8 with no control byte but newline and tab: nothing raw got through. */
static void check_bytes(const char *page, size_t size)
{
	size_t bad = 0;
	for (size_t i = 0; i < size;) {
		unsigned char c = (unsigned char)page[i];
		if (c >= 0x80) {
			size_t len =
			    rt_utf8_sequence_length((const unsigned char *)page + i, size - i);
			if (!len) {
				bad++;
				i++;
			} else {
				i += len;
			}
			continue;
		}
		bad += (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
		i++;
	}
	CHECK_EQ(bad, 0);
}

/* The d attribute of the n-th path (0-based) of class line, copied out. */
static char *path_d(const char *page, size_t n)
{
	const char *p = page;
	for (size_t i = 0; i <= n; i++) {
		p = strstr(p, "<path class=\"line\"");
		if (!p)
			return NULL;
		p++;
	}
	p = strstr(p, " d=\"");
	if (!p)
		return NULL;
	p += 4;
	const char *end = strchr(p, '"');
	return end ? strndup(p, (size_t)(end - p)) : NULL;
}

/* The SVG of the plot whose title (escaped) is `title`, copied out. */
static char *plot(const char *page, const char *title)
{
	char needle[256];
	snprintf(needle, sizeof(needle), "<text class=\"plot-title\" x=\"4\" y=\"14\">%s</text>",
		 title);
	const char *p = strstr(page, needle);
	if (!p)
		return NULL;
	const char *start = p;
	while (start > page && strncmp(start, "<svg", 4) != 0)
		start--;
	const char *end = strstr(p, "</svg>");
	return end ? strndup(start, (size_t)(end + 6 - start)) : NULL;
}

static void check_units(void)
{
	static const struct {
		int64_t ns;
		const char *text;
	} cases[] = {
	    {0, "0"},
	    {1, "1 ns"},
	    {500, "500 ns"},
	    {1000, "1 us"},
	    {1024, "1.024 us"},
	    {2500, "2.5 us"},
	    {999999, "1 ms"},
	    {10000000, "10 ms"},
	    {123456789, "123.5 ms"},
	    {1500000000, "1.5 s"},
	    {59999999999, "60 s"},
	    {120000000000, "2m00s"},
	};
	char buf[RT_UNITS_MAX];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_STR(rt_units_duration_short(buf, sizeof(buf), cases[i].ns), cases[i].text);
}

int main(void)
{
	check_units();
	make_inputs();
	char dir[] = "/tmp/test_analyze_html.XXXXXX";
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	char a[128], b[128], missing[160];
	snprintf(a, sizeof(a), "%s/a.html", dir);
	snprintf(b, sizeof(b), "%s/b.html", dir);
	snprintf(missing, sizeof(missing), "%s/no/such/dir/page.html", dir);

	char message[256] = "";
	CHECK(rt_html_open(missing, "x", message, sizeof(message)) == NULL);
	CHECK(strstr(message, "No such file") != NULL);
	CHECK_EQ(rt_html_close(NULL), 0);

	CHECK_EQ(write_page(a), 0);
	CHECK_EQ(write_page(b), 0);
	size_t size_a = 0, size_b = 0;
	char *page = read_all(a, &size_a);
	char *again = read_all(b, &size_b);
	if (!CHECK(page && again))
		return 1;
	/* reproducible: the same calls write the same bytes */
	CHECK(size_a == size_b && memcmp(page, again, size_a) == 0);
	CHECK_EQ(strlen(page), size_a);

	check_bytes(page, size_a);
	check_balanced(page);
	CHECK(strncmp(page, "<!DOCTYPE html>\n", 16) == 0);
	CHECK(strstr(page, "</body></html>\n") == page + size_a - 15);
	/* self-contained: no script, nothing fetched */
	CHECK(strcasestr(page, "<script") == NULL);
	CHECK(strcasestr(page, "http") == NULL);
	CHECK(strcasestr(page, "src=") == NULL);
	CHECK(strcasestr(page, "href") == NULL);
	CHECK(strcasestr(page, "url(") == NULL);
	CHECK(strcasestr(page, "@import") == NULL);
	/* numbers only: no NaN or infinity printed */
	CHECK(strcasestr(page, "nan") == NULL);
	CHECK(strcasestr(page, "inf") == NULL);
	/* the hostile string, escaped, in each of its places: title, h1, summary (2), h2,
	 * paragraphs (2), table (2), histogram, series plot (title, label, legend,
	 * line title), timeline (title, lane, interval) */
	CHECK_EQ(count_of(page, hostile_escaped), 18);

	char *histogram = plot(page, hostile_escaped);
	if (CHECK(histogram != NULL)) {
		/* one bar per non-empty power of two, its count in its title */
		CHECK_EQ(count_of(histogram, "<rect class=\"bar\""), 4);
		CHECK(strstr(histogram, "<title>0 to 1 ns: 1</title>") != NULL);
		CHECK(strstr(histogram, "<title>512 ns to 1.024 us: 3</title>") != NULL);
		CHECK(strstr(histogram, "<title>4.096 us to 8.192 us: 40</title>") != NULL);
		CHECK(strstr(histogram, "<title>1.049 ms to 2.097 ms: 10</title>") != NULL);
		CHECK_EQ(count_of(histogram, "class=\"mark\""), 3);
		CHECK(strstr(histogram, "<title>p50 5.022 us</title>") != NULL);
		/* round ticks: powers of ten, and the count axis at 0, 10, 20, 30, 40 */
		CHECK(strstr(histogram, ">1 us</text>") != NULL);
		CHECK(strstr(histogram, ">1 ms</text>") != NULL);
		CHECK(strstr(histogram, ">40</text>") != NULL);
		CHECK(strstr(histogram, ">10</text>") != NULL);
		CHECK(strstr(histogram, "count of 54") != NULL);
		free(histogram);
	}
	char *empty = plot(page, "empty histogram");
	if (CHECK(empty != NULL)) {
		CHECK(strstr(empty, "no values") != NULL);
		CHECK_EQ(count_of(empty, "<rect"), 0);
		free(empty);
	}

	/* the two short lines: one path each, the NaN and infinity as gaps (a new M) */
	char *d0 = path_d(page, 0), *d1 = path_d(page, 1);
	if (CHECK(d0 && d1)) {
		CHECK_EQ(count_of(d0, "M"), 3); /* 3, 97 | 40 | 12 */
		CHECK_EQ(count_of(d0, "L"), 1);
		CHECK_EQ(count_of(d1, "M"), 1);
		CHECK_EQ(count_of(d1, "L"), 5);
		CHECK(strspn(d0, "ML0123456789. ") == strlen(d0));
	}
	free(d0);
	free(d1);
	/* the lone points between gaps are dots */
	const char *short_plot = strstr(page, "<svg class=\"series\"");
	if (CHECK(short_plot != NULL)) {
		char *t = strndup(short_plot, (size_t)(strstr(short_plot, "</svg>") - short_plot));
		CHECK_EQ(count_of(t, "<circle"), 2);
		CHECK_EQ(count_of(t, "<path class=\"line\""), 2);
		/* y from 0 to 100 in steps of 20 */
		CHECK(strstr(t, ">100</text>") != NULL);
		CHECK(strstr(t, ">20</text>") != NULL);
		free(t);
	}
	char *long_plot = plot(page, "long line");
	if (CHECK(long_plot != NULL)) {
		CHECK_EQ(count_of(long_plot, "<path class=\"line\""), 1);
		CHECK(strstr(long_plot,
			     "(100000 points, the lowest and highest per pixel drawn)") != NULL);
		/* y axis from -5 to 1000 in round steps */
		CHECK(strstr(long_plot, ">1000</text>") != NULL);
		CHECK(strstr(long_plot, ">0</text>") != NULL);
		CHECK(strstr(long_plot, ">-200</text>") != NULL);
		/* x axis: 100 ms of points, ticks every 20 ms */
		CHECK(strstr(long_plot, ">20 ms</text>") != NULL);
		CHECK(strstr(long_plot, ">80 ms</text>") != NULL);
		free(long_plot);
	}
	char *d2 = path_d(page, 2);
	if (CHECK(d2 != NULL)) {
		size_t points = count_of(d2, "M") + count_of(d2, "L");
		/* at most two per pixel column of the 644 */
		CHECK(points <= 2 * 645);
		CHECK(points >= 600);
		/* the spikes survive the thinning: y of 1000 is the plot's top (24) */
		CHECK(strstr(d2, " 24.0") != NULL);
		free(d2);
	}
	char *nan_plot = plot(page, "not finite only");
	if (CHECK(nan_plot != NULL)) {
		CHECK(strstr(nan_plot, "no values") != NULL);
		free(nan_plot);
	}
	CHECK(strstr(page, "2 points with no finite value left out") != NULL);
	char *no_lines = plot(page, "no lines");
	if (CHECK(no_lines != NULL)) {
		CHECK(strstr(no_lines, "no values") != NULL);
		free(no_lines);
	}

	/* the first timeline: 3 intervals, the one without a label titled by its times */
	const char *first_timeline = strstr(page, "<svg class=\"timeline\"");
	if (CHECK(first_timeline != NULL)) {
		const char *end = strstr(first_timeline, "</svg>");
		char *t = strndup(first_timeline, (size_t)(end - first_timeline));
		CHECK_EQ(count_of(t, "<rect class=\"interval\""), 3);
		/* lane labels: cut to their room; escaped when short */
		CHECK(strstr(t, ">idle</text>") != NULL);
		CHECK_EQ(count_of(t, "<rect class=\"lane\""), 3);
		CHECK(strstr(t, "<title>700 us to 701 us (1 us)</title>") != NULL);
		/* clipped: starts at the axis, ends a pixel short of its right end (200 + 504) */
		CHECK(strstr(t, "x=\"200.0\" y=\"72.0\" width=\"503.0\"") != NULL);
		/* a long lane name cut to 32 characters, the whole of it in a title */
		CHECK(strstr(t,
			     "<title>a thread with a name too long for its lane, \xc3\xa9</title>"
			     "a thread with a name too long f\xe2\x80\xa6</text>") != NULL);
		CHECK(strstr(t, ">200 us</text>") != NULL);
		free(t);
	}
	char *crowded = plot(page, "crowded");
	if (CHECK(crowded != NULL)) {
		CHECK_EQ(count_of(crowded, "<rect class=\"interval\""), 2000);
		/* the longest: L2999 lasts 3 ms, L3000 3.001 ms */
		CHECK(strstr(crowded, "<title>L2999</title>") == NULL);
		CHECK(strstr(crowded, "<title>L3000</title>") != NULL);
		CHECK(strstr(crowded, "<title>L4999</title>") != NULL);
		free(crowded);
	}
	CHECK(strstr(page, "The 2000 longest of 5000 intervals are drawn; the 3000 shorter ones "
			   "are left out.") != NULL);
	char *no_lanes = plot(page, "no lanes");
	if (CHECK(no_lanes != NULL)) {
		CHECK(strstr(no_lanes, "no threads") != NULL);
		free(no_lanes);
	}

	free(page);
	free(again);
	if (check_failure_count()) {
		fprintf(stderr, "the page is kept in %s\n", a);
	} else {
		unlink(a);
		unlink(b);
		rmdir(dir);
	}
	free(many_x);
	free(many_y);
	free(many_intervals);
	free(many_labels);
	if (check_failure_count()) {
		fprintf(stderr, "%d checks failed\n", check_failure_count());
		return 1;
	}
	printf("analyze page: all checks passed\n");
	return 0;
}
