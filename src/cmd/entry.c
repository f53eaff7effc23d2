/*
 * entry.c - the ringtrace executable's main(); everything else lives in
 * the tool's object library, so tests can link it and call rt_tool_main().
 */
#include "cmd/cmd.h"

int main(int argc, char **argv)
{
	return rt_tool_main(argc, argv);
}
