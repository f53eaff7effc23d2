/*
 * analyze_workload.c - the input `make bench` times the analyzers on:
 * THREADS threads each recording EVENTS_PER_THREAD events in a loop of
 * five, shaped like a server's requests, so every analyzer has work on
 * every event it is given:
 *
 *   RT_BEGIN("request", id)      a span (spans)
 *   RT_TRACE("enqueue", id)      paired with dequeue by id (latency --key arg0)
 *   RT_TRACE("lookup", shard)    64 argument values (by-arg --arg 0)
 *   RT_TRACE("dequeue", id)
 *   RT_END("request", id)
 *
 * rate and stalls read every event of any kind.  Flight mode with rings
 * large enough that nothing is overwritten.
 */
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

#include "measure.h"
#include "setup.h"

/* Ring bytes per event: every event here takes one 32-byte slot. */
#define BYTES_PER_EVENT 36u

static void *record_requests(void *arg);
static struct bench_workload workload = {
    .bytes_per_event = BYTES_PER_EVENT, .min_events = 5, .record = record_requests};

static void *record_requests(void *arg)
{
	unsigned thread = *(const unsigned *)arg;
	char name[16];
	snprintf(name, sizeof(name), "server-%u", thread);
	ringtrace_set_thread_name(name);
	uint64_t requests = workload.events_per_thread / 5;
	for (uint64_t i = 0; i < requests; i++) {
		uint64_t id = i * 64 + thread; /* unique across threads */
		RT_BEGIN("request", id);
		RT_TRACE("enqueue", id);
		RT_TRACE("lookup", (unsigned)(i * 2654435761u) % 64u);
		RT_TRACE("dequeue", id);
		RT_END("request", id);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int status = bench_workload_run(&workload, argc, argv);
	if (status)
		return status;
	bench_note("%u threads x %llu events, rings of %llu bytes", workload.threads,
		   (unsigned long long)(workload.events_per_thread / 5 * 5),
		   (unsigned long long)workload.ring_bytes);
	bench_result("events",
		     (double)workload.threads * (double)(workload.events_per_thread / 5 * 5));
	return 0;
}
