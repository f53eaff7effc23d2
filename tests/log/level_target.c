/*
 * level_target.c - a program whose RT_LOG threshold is changed while it
 * runs, for level.sh.
 *
 *     level_target ROUNDS
 *
 * Each round waits for a line on stdin, then logs "debug R", "info R" and
 * "warn R" (levels debug, info, warn) and prints "done R LEVEL" with the
 * threshold it saw.  In round 3 it first sets the threshold itself
 * (ringtrace_set_level(RT_LOG_INFO)); between rounds level.sh changes it from
 * outside with `ringtrace level`.
 */
#include <stdio.h>
#include <stdlib.h>

#include <ringtrace.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	int rounds = atoi(argv[1]);
	char line[64];
	RT_TRACE("start"); /* the arena exists before the first round */
	printf("arena %s\n", ringtrace_arena_path());
	fflush(stdout);
	for (int r = 0; r < rounds && fgets(line, sizeof(line), stdin); r++) {
		if (r == 3)
			ringtrace_set_level(RT_LOG_INFO);
		RT_LOG(RT_LOG_DEBUG, "debug %d", r);
		RT_LOG(RT_LOG_INFO, "info %d", r);
		RT_LOG(RT_LOG_WARN, "warn %d", r);
		printf("done %d %d\n", r, ringtrace_get_level());
		fflush(stdout);
	}
	return 0;
}
