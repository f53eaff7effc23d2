/* snapshot.c - placeholder until the command is written */
#include "cmd/cmd.h"

void rt_cmd_snapshot_help(FILE *to)
{
	fprintf(to, "ringtrace snapshot: not written yet\n");
}

int rt_cmd_snapshot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ringtrace snapshot: not written yet\n");
	return RT_EXIT_FAILURE;
}
