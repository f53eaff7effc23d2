/*
 * units.h - sizes, durations and wall-clock times for people, as `ls` and
 * `rm` print them (JSON output gives the exact numbers instead).
 */
#ifndef RT_PRESENT_UNITS_H
#define RT_PRESENT_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define RT_UNITS_MAX 48 /* room for any of the strings below */

/* "0", "512B", "84K", "1.1M", "12G": powers of 1024, as `ls -sh`. */
char *rt_units_bytes(char *out, size_t size, uint64_t bytes);
/* "122 us", "12.3 ms", "59.999 s", "5m03s", "2h05m", "3d04h". */
char *rt_units_duration(char *out, size_t size, int64_t ns);
/*
 * A duration in its own unit with up to 4 significant digits, trailing
 * zeros dropped: "0", "500 ns", "2.5 us", "1.024 us", "10 ms", "1.5 s";
 * a minute and more as rt_units_duration.  For the ticks of an axis and
 * figures below a microsecond, where rt_units_duration would say "0 us".
 */
char *rt_units_duration_short(char *out, size_t size, int64_t ns);
/*
 * Local time of a CLOCK_REALTIME reading: "2026-11-21 10:00:01", then
 * `decimals` digits of the second (0 to 9): "2026-11-21 10:00:01.250".
 */
char *rt_units_wall(char *out, size_t size, uint64_t wall_ns, unsigned decimals);
/*
 * A duration for a column of a table, 11 characters: "   1.234 us",
 * "  12.345 ms", "   1.234  s" (`report`'s columns).
 */
char *rt_units_duration_column(char *out, size_t size, int64_t ns);

#endif /* RT_PRESENT_UNITS_H */
