/*
 * processes.cc - two processes whose calls alternate, for outputs.sh.
 *
 *     processes ROUNDS
 *
 * The program forks; then parent and child take turns through two pipes,
 * ROUNDS turns each, the parent first: a turn is one call of
 * Player::hit(int).  So the Player::hit(int) calls of the two processes
 * alternate in time, parent, child, parent...  Built with
 * -finstrument-functions: a view that merges processes by time shows them
 * alternating, each with its pid.  Prints "parent PID child PID" once the
 * child ended.
 */
#include <cstdio>
#include <cstdlib>
#include <sys/wait.h>
#include <unistd.h>

struct Player {
	int hits = 0;
	__attribute__((noinline)) void hit(int round)
	{
		hits += round;
	}
};

__attribute__((noinline)) static int wait_turn(int fd)
{
	char c;
	return read(fd, &c, 1) == 1 ? 0 : -1;
}

__attribute__((noinline)) static int give_turn(int fd)
{
	return write(fd, "x", 1) == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;
	int to_child[2], to_parent[2];
	if (pipe(to_child) != 0 || pipe(to_parent) != 0)
		return 1;
	Player player;
	pid_t pid = fork();
	if (pid < 0)
		return 1;
	int in = pid ? to_parent[0] : to_child[0];
	int out = pid ? to_child[1] : to_parent[1];
	for (int i = 0; i < rounds; i++) {
		if (pid == 0 && wait_turn(in) != 0)
			_exit(1);
		player.hit(i);
		if (give_turn(out) != 0)
			return 1;
		if (pid != 0 && wait_turn(in) != 0)
			return 1;
	}
	if (pid == 0)
		_exit(0);
	int status = 0;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 1;
	printf("parent %d child %d\n", (int)getpid(), (int)pid);
	return 0;
}
