/*
 * report_io.h - `ringtrace report --io` (report_io.c), called by report.c
 * with the options it parsed.
 */
#ifndef RT_CMD_REPORT_IO_H
#define RT_CMD_REPORT_IO_H

#include <stdint.h>

#include "common/output.h"
#include "read/trace_set.h"

enum rt_report_io_sort {
	RT_REPORT_IO_TIME,
	RT_REPORT_IO_BYTES,
	RT_REPORT_IO_OPENS,
	RT_REPORT_IO_READS,
	RT_REPORT_IO_WRITES,
	RT_REPORT_IO_ERRORS,
};

struct rt_report_io_options {
	int has_tid;
	int32_t tid;
	int json;
	enum rt_report_io_sort sort;
};

/* The report of set on out (an rt_cmd_set_printer); 0 or -errno. */
int rt_report_io_set(struct rt_trace_set *set, const void *options, struct rt_out *out);

#endif /* RT_CMD_REPORT_IO_H */
