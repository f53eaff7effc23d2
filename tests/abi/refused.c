/*
 * refused.c - sites whose ABI head the library does not serve, handed to
 * the slow path's entry points of version 1 as a program built against
 * another header would: a later version, a size of another layout, a kind
 * the entry point does not record.  The library must leave them off (never
 * register them: their ids stay 0), count their events lost and say so on
 * stderr once, while a good site beside them records as ever.
 *
 *     refused ROUNDS
 *
 * Each round emits one event of the good site and one of each bad one.
 * Exits 1 if a bad site was registered.
 */
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

static const uint8_t log_types[2] = {RT_ARG_SIGNED | 4, 0};

/* A later version's site, which this library cannot know the layout of. */
static struct ringtrace__site later = {
    {RINGTRACE_ABI_VERSION + 1, sizeof(struct ringtrace__site)},
    {0, RT_SITE_TRACE, 1, {RT_ARG_SIGNED | 4}, __LINE__, "later version", __FILE__, "main"}};
/* Version 1 in name, but not its size: some other layout. */
static struct ringtrace__site resized = {
    {RINGTRACE_ABI_VERSION, sizeof(struct ringtrace__site) + 8},
    {0, RT_SITE_TRACE, 1, {RT_ARG_SIGNED | 4}, __LINE__, "other size", __FILE__, "main"}};
/* A log site whose body says it is a trace site. */
static struct ringtrace__log_site wrong_kind = {
    {RINGTRACE_ABI_VERSION, sizeof(struct ringtrace__log_site)},
    {{0, RT_SITE_TRACE, 1, {0}, __LINE__, "wrong kind %d", __FILE__, "main"},
     log_types,
     RT_LOG_ERROR}};

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	for (int i = 0; i < rounds; i++) {
		RT_TRACE("kept", i);
		ringtrace__emit_slow_v1(&later, (uint32_t)i, 0, 0, 0, 0, 0);
		ringtrace__emit_slow_v1(&resized, (uint32_t)i, 0, 0, 0, 0, 0);
		const struct ringtrace__log_arg args[1] = {{(uint64_t)i, 0}};
		ringtrace__log_v1(&wrong_kind, args);
	}
	if (later.body.id || resized.body.id || wrong_kind.body.site.id) {
		fprintf(stderr, "refused: a bad site was registered\n");
		return 1;
	}
	return 0;
}
