/*
 * corrupt_cmd.c - the `corrupt` program: corrupt.c's command (corrupt.h).
 */
#include "corrupt.h"

int main(int argc, char **argv)
{
	return corrupt_main(argc, argv);
}
