/*
 * pending_keys.h - the starts waiting for their ends, by key: `analyze
 * latency --key argN` pairs each A with the B that carries the same
 * argument value, on any thread of the process.
 *
 * At most `limit` keys wait at once.  A new key past that evicts the one
 * that waited longest (the oldest), so a program that never ends some of
 * its requests cannot grow the table without bound; the caller counts the
 * evicted start as unmatched.  Each entry takes 40 bytes and the hash
 * buckets 8 to 16 more: 1M keys, about 56 MB.
 */
#ifndef RT_ANALYZE_PENDING_KEYS_H
#define RT_ANALYZE_PENDING_KEYS_H

#include <stddef.h>
#include <stdint.h>

struct rt_pending_key {
	uint64_t key;
	int64_t ts_ns;
	uint32_t space;		     /* the process (source) */
	uint32_t thread;	     /* the caller's index of the A's thread */
	uint32_t older, newer, next; /* node index + 1; 0: none */
	uint32_t reserved;
};

struct rt_pending_keys {
	struct rt_pending_key *nodes;
	size_t node_count, node_capacity; /* nodes made (live or free) */
	uint32_t *buckets;		  /* node index + 1 heading each chain */
	size_t bucket_count;		  /* a power of two, at least 2 * node_capacity */
	size_t count, limit;
	uint32_t oldest, newest, free_list; /* node index + 1 */
};

void rt_pending_keys_init(struct rt_pending_keys *p, size_t limit);
void rt_pending_keys_free(struct rt_pending_keys *p);

/* What put() did with the table's old contents. */
enum rt_pending_put {
	RT_PENDING_ADDED = 0,
	RT_PENDING_REPLACED = 1, /* the key waited already: its old start is *old */
	RT_PENDING_EVICTED = 2,	 /* the table was full: the oldest start went, as *old */
};

/* Make (space, key) wait since ts_ns.  An enum rt_pending_put, or -ENOMEM. */
int rt_pending_keys_put(struct rt_pending_keys *p, uint32_t space, uint64_t key, int64_t ts_ns,
			uint32_t thread, struct rt_pending_key *old);

/* Take (space, key) out into *out: 1, or 0 when it was not waiting. */
int rt_pending_keys_take(struct rt_pending_keys *p, uint32_t space, uint64_t key,
			 struct rt_pending_key *out);

/* Take the oldest out into *out: 1, or 0 when none waits. */
int rt_pending_keys_pop_oldest(struct rt_pending_keys *p, struct rt_pending_key *out);

#endif /* RT_ANALYZE_PENDING_KEYS_H */
