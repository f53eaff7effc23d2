/*
 * html_demo.c OUT.html - a page of one of each plot, from known numbers.
 *
 * Writes OUT.html with the page's calls (analyze/html.h) and prints, as one
 * JSON object on stdout, what it asked to be drawn: each histogram's counts
 * per power of two, each plot's lines, each timeline's lanes and intervals.
 * check_html_page.py compares that with what Chromium shows.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "analyze/html.h"
#include "analyze/quantiles.h"

/* A duration in each of five powers of two, and how many of it. */
static const struct {
	uint64_t ns;
	unsigned count;
} durations[] = {{10, 5}, {100, 20}, {1000, 80}, {10000, 40}, {100000, 10}, {4000000, 2}};
#define DURATION_KINDS (sizeof(durations) / sizeof(durations[0]))

#define POINTS 300
static const char *const line_names[] = {"reads", "writes <&> \"quoted\"", "opens"};
#define LINES 3

static const char *const lane_names[] = {"main", "worker 1", "worker 2 \xff", "idle"};
#define LANES 4
static const unsigned lane_intervals[LANES] = {3, 1, 5, 0};

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: html_demo OUT.html\n");
		return 2;
	}
	char message[256];
	struct rt_html *h =
	    rt_html_open(argv[1], "ringtrace analyze demo", message, sizeof(message));
	if (!h) {
		fprintf(stderr, "html_demo: %s: %s\n", argv[1], message);
		return 1;
	}
	const char *names[] = {"analyzer", "input"};
	const char *values[] = {"demo", "numbers known in advance"};
	rt_html_summary(h, names, values, 2);

	rt_html_section(h, "Durations", "Five powers of two, with known counts.");
	struct rt_quantiles q;
	rt_quantiles_init(&q);
	for (size_t k = 0; k < DURATION_KINDS; k++)
		for (unsigned i = 0; i < durations[k].count; i++)
			if (rt_quantiles_add(&q, durations[k].ns)) {
				fprintf(stderr, "html_demo: out of memory\n");
				return 1;
			}
	rt_html_histogram(h, "demo.span", &q);
	char counts[DURATION_KINDS][24], lows[DURATION_KINDS][24];
	const char *cells[DURATION_KINDS * 2];
	for (size_t k = 0; k < DURATION_KINDS; k++) {
		snprintf(lows[k], sizeof(lows[k]), "%llu ns", (unsigned long long)durations[k].ns);
		snprintf(counts[k], sizeof(counts[k]), "%u", durations[k].count);
		cells[2 * k] = lows[k];
		cells[2 * k + 1] = counts[k];
	}
	const char *headers[] = {"duration", "count"};
	rt_html_table(h, headers, 2, cells, DURATION_KINDS);

	rt_html_section(h, "Rates", NULL);
	static int64_t x[POINTS];
	static double y[LINES][POINTS];
	struct rt_html_series series[LINES];
	for (size_t i = 0; i < POINTS; i++) {
		x[i] = (int64_t)i * 10000000; /* 10 ms apart: 3 s in all */
		for (size_t l = 0; l < LINES; l++)
			y[l][i] =
			    1000.0 * (double)(l + 1) + 400.0 * sin((double)i / (20.0 + 7.0 * l));
	}
	for (size_t l = 0; l < LINES; l++)
		series[l] = (struct rt_html_series){
		    .name = line_names[l], .x_ns = x, .y = y[l], .count = POINTS};
	rt_html_series_plot(h, "events per second", "events/s", series, LINES);

	rt_html_section(h, "Stalls", NULL);
	static struct rt_html_interval intervals[16];
	struct rt_html_lane lanes[LANES];
	size_t next = 0;
	for (size_t l = 0; l < LANES; l++) {
		lanes[l] = (struct rt_html_lane){.name = lane_names[l],
						 .intervals = intervals + next,
						 .count = lane_intervals[l]};
		for (unsigned i = 0; i < lane_intervals[l]; i++, next++)
			intervals[next] = (struct rt_html_interval){
			    .start_ns = (int64_t)(l * 100 + i * 500) * 1000000,
			    .end_ns = (int64_t)(l * 100 + i * 500 + 150 + 40 * i) * 1000000,
			    .label = NULL};
	}
	rt_html_timeline(h, "stalls per thread", lanes, LANES, 0, 3000000000);

	int rc = rt_html_close(h);
	if (rc) {
		fprintf(stderr, "html_demo: %s: write failed (%d)\n", argv[1], rc);
		return 1;
	}

	/* what was drawn; the JSON strings hold no character that needs escaping but " */
	printf(
	    "{\"title\": \"ringtrace analyze demo\", \"histograms\": [{\"title\": \"demo.span\", "
	    "\"counts\": [");
	for (size_t k = 0; k < DURATION_KINDS; k++)
		printf("%s[%u, %u]", k ? ", " : "", rt_quantiles_log2_bucket(durations[k].ns),
		       durations[k].count);
	printf("]}], \"series\": [{\"title\": \"events per second\", \"lines\": [");
	for (size_t l = 0; l < LINES; l++) {
		printf("%s\"", l ? ", " : "");
		for (const char *c = line_names[l]; *c; c++)
			fputs(*c == '"' ? "\\\"" : (char[]){*c, 0}, stdout);
		printf("\"");
	}
	printf("]}], \"timelines\": [{\"title\": \"stalls per thread\", \"lanes\": [");
	for (size_t l = 0; l < LANES; l++)
		printf("%s\"%s\"", l ? ", " : "", l == 2 ? "worker 2 \\\\xff" : lane_names[l]);
	printf("], \"intervals\": [");
	for (size_t l = 0; l < LANES; l++)
		printf("%s%u", l ? ", " : "", lane_intervals[l]);
	printf("]}]}\n");
	rt_quantiles_free(&q);
	return 0;
}
