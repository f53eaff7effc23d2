/*
 * pending_keys.c - see pending_keys.h.  Nodes live in one array, linked
 * from oldest to newest and chained per hash bucket; a taken node goes to
 * a free list, so the array never holds more than the most keys that
 * waited at once.
 */
#include "analyze/pending_keys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/id_table.h"

void rt_pending_keys_init(struct rt_pending_keys *p, size_t limit)
{
	memset(p, 0, sizeof(*p));
	p->limit = limit ? limit : 1;
}

void rt_pending_keys_free(struct rt_pending_keys *p)
{
	free(p->nodes);
	free(p->buckets);
	rt_pending_keys_init(p, p->limit);
}

#define NODE(p, i) (&(p)->nodes[(i)-1])

static size_t bucket_of(const struct rt_pending_keys *p, uint32_t space, uint64_t key)
{
	return rt_id_table_hash(space, key) & (p->bucket_count - 1);
}

static int grow_buckets(struct rt_pending_keys *p, size_t need)
{
	if (p->bucket_count >= 2 * need)
		return 0;
	size_t count = p->bucket_count ? p->bucket_count : 64;
	while (count < 2 * need)
		count *= 2;
	uint32_t *buckets = calloc(count, sizeof(*buckets));
	if (!buckets)
		return -ENOMEM;
	free(p->buckets);
	p->buckets = buckets;
	p->bucket_count = count;
	/* rechain the live nodes, oldest first */
	for (uint32_t i = p->oldest; i; i = NODE(p, i)->newer) {
		struct rt_pending_key *n = NODE(p, i);
		size_t b = bucket_of(p, n->space, n->key);
		n->next = p->buckets[b];
		p->buckets[b] = i;
	}
	return 0;
}

/* Unlink node i from its chain and the age list, onto the free list. */
static void unlink_node(struct rt_pending_keys *p, uint32_t i)
{
	struct rt_pending_key *n = NODE(p, i);
	uint32_t *at = &p->buckets[bucket_of(p, n->space, n->key)];
	while (*at != i)
		at = &NODE(p, *at)->next;
	*at = n->next;
	if (n->older)
		NODE(p, n->older)->newer = n->newer;
	else
		p->oldest = n->newer;
	if (n->newer)
		NODE(p, n->newer)->older = n->older;
	else
		p->newest = n->older;
	n->next = p->free_list;
	p->free_list = i;
	p->count--;
}

static uint32_t find(const struct rt_pending_keys *p, uint32_t space, uint64_t key)
{
	if (!p->bucket_count)
		return 0;
	uint32_t i = p->buckets[bucket_of(p, space, key)];
	while (i && (NODE(p, i)->key != key || NODE(p, i)->space != space))
		i = NODE(p, i)->next;
	return i;
}

static void link_newest(struct rt_pending_keys *p, uint32_t i)
{
	struct rt_pending_key *n = NODE(p, i);
	n->older = p->newest;
	n->newer = 0;
	if (p->newest)
		NODE(p, p->newest)->newer = i;
	else
		p->oldest = i;
	p->newest = i;
}

int rt_pending_keys_put(struct rt_pending_keys *p, uint32_t space, uint64_t key, int64_t ts_ns,
			uint32_t thread, struct rt_pending_key *old)
{
	uint32_t i = find(p, space, key);
	int result = RT_PENDING_ADDED;
	if (i) {
		*old = *NODE(p, i);
		unlink_node(p, i);
		result = RT_PENDING_REPLACED;
	} else if (p->count >= p->limit) {
		*old = *NODE(p, p->oldest);
		unlink_node(p, p->oldest);
		result = RT_PENDING_EVICTED;
	}
	if (!p->free_list) {
		if (p->node_count == p->node_capacity) {
			size_t capacity = p->node_capacity ? p->node_capacity * 2 : 64;
			if (capacity > p->limit)
				capacity = p->limit;
			struct rt_pending_key *grown = realloc(p->nodes, capacity * sizeof(*grown));
			if (!grown)
				return -ENOMEM;
			p->nodes = grown;
			p->node_capacity = capacity;
		}
		if (grow_buckets(p, p->node_capacity))
			return -ENOMEM;
		p->nodes[p->node_count].next = 0;
		p->free_list = (uint32_t)++p->node_count;
	}
	i = p->free_list;
	struct rt_pending_key *n = NODE(p, i);
	p->free_list = n->next;
	*n = (struct rt_pending_key){.key = key, .ts_ns = ts_ns, .space = space, .thread = thread};
	size_t b = bucket_of(p, space, key);
	n->next = p->buckets[b];
	p->buckets[b] = i;
	link_newest(p, i);
	p->count++;
	return result;
}

int rt_pending_keys_take(struct rt_pending_keys *p, uint32_t space, uint64_t key,
			 struct rt_pending_key *out)
{
	uint32_t i = find(p, space, key);
	if (!i)
		return 0;
	*out = *NODE(p, i);
	unlink_node(p, i);
	return 1;
}

int rt_pending_keys_pop_oldest(struct rt_pending_keys *p, struct rt_pending_key *out)
{
	if (!p->oldest)
		return 0;
	*out = *NODE(p, p->oldest);
	unlink_node(p, p->oldest);
	return 1;
}
