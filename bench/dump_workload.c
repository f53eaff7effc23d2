/*
 * dump_workload.c - a traced program that fills an arena for the
 * `ringtrace dump --json` throughput figure.
 *
 *     bench_dump_workload ARENA THREADS EVENTS_PER_THREAD
 *
 * THREADS threads each record EVENTS_PER_THREAD events into rings made big
 * enough that nothing is overwritten, so the arena holds exactly
 * THREADS * EVENTS_PER_THREAD events.  The events mix what programs record:
 * four sites with 0, 1, 2 and 6 arguments (the last takes two slots), values
 * that change every event.  The arena is closed cleanly and left at ARENA
 * for the caller to read and delete.  Prints the events recorded.
 */
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

#include "measure.h"
#include "setup.h"

/* Ring bytes per event: four events take 1 + 1 + 1 + 2 slots of 32 bytes. */
#define BYTES_PER_EVENT 40u

static void *record_events(void *arg);
static struct bench_workload workload = {
    .bytes_per_event = BYTES_PER_EVENT, .min_events = 1, .record = record_events};

static void *record_events(void *arg)
{
	unsigned id = *(const unsigned *)arg;
	char name[16];
	snprintf(name, sizeof(name), "worker-%u", id);
	ringtrace_set_thread_name(name);
	for (uint64_t i = 0; i < workload.events_per_thread; i++) {
		switch (i & 3) {
		case 0:
			RT_TRACE("request received", i, id);
			break;
		case 1:
			RT_TRACE("lookup", i * 7);
			break;
		case 2:
			RT_TRACE("reply sent", (int)id, (unsigned)(i >> 2), (short)-1,
				 (int)(i & 0xff), &workload.events_per_thread, (long long)i << 20);
			break;
		default:
			RT_TRACE("idle");
			break;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int status = bench_workload_run(&workload, argc, argv);
	if (status)
		return status;
	bench_note("%u threads x %llu events, rings of %llu bytes", workload.threads,
		   (unsigned long long)workload.events_per_thread,
		   (unsigned long long)workload.ring_bytes);
	bench_result("events", (double)workload.threads * (double)workload.events_per_thread);
	return 0;
}
