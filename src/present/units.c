/*
 * units.c - sizes, durations and wall-clock times for people.
 */
#include <stdio.h>
#include <time.h>

#include "present/units.h"

char *rt_units_bytes(char *out, size_t size, uint64_t bytes)
{
	static const char units[] = "KMGTPE";
	if (bytes < 1024) {
		snprintf(out, size, bytes ? "%lluB" : "0", (unsigned long long)bytes);
		return out;
	}
	double v = (double)bytes / 1024;
	unsigned u = 0;
	while (v >= 1024 && units[u + 1]) {
		v /= 1024;
		u++;
	}
	if (v < 9.95)
		snprintf(out, size, "%.1f%c", v, units[u]);
	else
		snprintf(out, size, "%.0f%c", v, units[u]);
	return out;
}

char *rt_units_duration(char *out, size_t size, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	uint64_t s = (uint64_t)ns / 1000000000u;
	if (ns < 1000000)
		snprintf(out, size, "%llu us", (unsigned long long)ns / 1000u);
	else if (ns < 1000000000)
		snprintf(out, size, "%llu.%01llu ms", (unsigned long long)ns / 1000000u,
			 (unsigned long long)ns % 1000000u / 100000u);
	else if (s < 60)
		snprintf(out, size, "%llu.%03llu s", (unsigned long long)s,
			 (unsigned long long)((uint64_t)ns % 1000000000u / 1000000u));
	else if (s < 3600)
		snprintf(out, size, "%llum%02llus", (unsigned long long)(s / 60),
			 (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(out, size, "%lluh%02llum", (unsigned long long)(s / 3600),
			 (unsigned long long)(s % 3600 / 60));
	else
		snprintf(out, size, "%llud%02lluh", (unsigned long long)(s / 86400),
			 (unsigned long long)(s % 86400 / 3600));
	return out;
}

char *rt_units_duration_short(char *out, size_t size, int64_t ns)
{
	static const struct {
		int64_t scale;
		const char *unit;
	} units[] = {{1000000000, "s"}, {1000000, "ms"}, {1000, "us"}, {1, "ns"}};
	if (ns <= 0) {
		snprintf(out, size, "0");
		return out;
	}
	if (ns >= 60 * (int64_t)1000000000)
		return rt_units_duration(out, size, ns);
	unsigned u = 0;
	while (ns < units[u].scale)
		u++;
	/* four significant digits, by integer arithmetic so a tick reads as its value */
	int64_t whole, fraction, full;
	unsigned decimals;
	for (;;) {
		int64_t scale = units[u].scale, step = scale;
		whole = ns / scale;
		decimals = scale == 1 ? 0 : whole >= 100 ? 1 : whole >= 10 ? 2 : 3;
		full = 1;
		for (unsigned d = 0; d < decimals; d++) {
			step /= 10;
			full *= 10;
		}
		fraction = (ns % scale + step / 2) / step;
		if (fraction >= full) { /* 9.9996 us rounds to 10 us */
			whole++;
			fraction -= full;
		}
		if (whole < 1000 || u == 0)
			break;
		u--; /* 999.96 us rounds to 1 ms */
	}
	while (decimals && fraction % 10 == 0) {
		fraction /= 10;
		decimals--;
	}
	if (decimals)
		snprintf(out, size, "%lld.%0*lld %s", (long long)whole, (int)decimals,
			 (long long)fraction, units[u].unit);
	else
		snprintf(out, size, "%lld %s", (long long)whole, units[u].unit);
	return out;
}

char *rt_units_wall(char *out, size_t size, uint64_t wall_ns, unsigned decimals)
{
	time_t t = (time_t)(wall_ns / 1000000000u);
	struct tm tm;
	if (!localtime_r(&t, &tm) || strftime(out, size, "%Y-%m-%d %H:%M:%S", &tm) == 0) {
		snprintf(out, size, "?");
		return out;
	}
	if (decimals) {
		if (decimals > 9)
			decimals = 9;
		unsigned long long fraction = wall_ns % 1000000000u;
		for (unsigned i = decimals; i < 9; i++)
			fraction /= 10;
		size_t n = 0;
		while (n < size && out[n])
			n++;
		snprintf(out + n, size - n, ".%0*llu", (int)decimals, fraction);
	}
	return out;
}

char *rt_units_duration_column(char *out, size_t size, int64_t ns)
{
	if (ns < 1000000)
		snprintf(out, size, "%8.3f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(out, size, "%8.3f ms", (double)ns / 1e6);
	else
		snprintf(out, size, "%8.3f  s", (double)ns / 1e9);
	return out;
}
