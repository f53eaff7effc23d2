/* summary.c - placeholder until the command is written */
#include "cmd/cmd.h"

void rt_cmd_summary_help(FILE *to)
{
	fprintf(to, "ringtrace summary: not written yet\n");
}

int rt_cmd_summary(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ringtrace summary: not written yet\n");
	return RT_EXIT_FAILURE;
}
