/*
 * lttng_tp.c - the probe of the LTTng-UST tracepoint in lttng_tp.h, linked
 * into the benchmark itself as LTTng documents for a statically linked
 * provider.
 */
#define TRACEPOINT_CREATE_PROBES
#define TRACEPOINT_DEFINE
#include "lttng_tp.h"
