/*
 * plain_program.c - a program made in no way to record: not built with
 * -finstrument-functions, not linked with ringtrace, for uninstrumented.sh.
 * Exits with the status its first argument gives (0 without one).
 */
#include <stdlib.h>

int main(int argc, char **argv)
{
	return argc > 1 ? atoi(argv[1]) : 0;
}
