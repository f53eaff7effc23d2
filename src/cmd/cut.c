/* cut.c - placeholder until the command is written */
#include "cmd/cmd.h"

void rt_cmd_cut_help(FILE *to)
{
	fprintf(to, "ringtrace cut: not written yet\n");
}

int rt_cmd_cut(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ringtrace cut: not written yet\n");
	return RT_EXIT_FAILURE;
}
