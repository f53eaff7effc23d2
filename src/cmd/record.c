/* record.c - placeholder until the command is written */
#include "cmd/cmd.h"

void rt_cmd_record_help(FILE *to)
{
	fprintf(to, "ringtrace record: not written yet\n");
}

int rt_cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "ringtrace record: not written yet\n");
	return RT_EXIT_FAILURE;
}
