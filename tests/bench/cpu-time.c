/* cpu-time FILE CMD [ARG...]: runs CMD, waits for it and appends to FILE one line: the CPU
 * time (user + system, in microseconds) that it and every descendant it waited for used, from
 * wait4()'s rusage, and the wall time from just before the fork of CMD to wait4()'s return
 * (microseconds, CLOCK_MONOTONIC: CMD's fork and exec included, this program's own start
 * not, so a sample wrapped in it is timed as one that is not); the exit status is CMD's (CMD
 * keeps this program's stdio). For tests/bench/run-latency's CPU=1 mode: CPU time is less at
 * the mercy of other load on a shared host than wall time. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *out;
	int status;
	long long t0, wall;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: cpu-time FILE CMD [ARG...]\n");
		return 2;
	}
	t0 = now_us();
	pid = fork();
	if (pid < 0) {
		perror("cpu-time: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror("cpu-time: exec");
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("cpu-time: wait4");
		return 2;
	}
	wall = now_us() - t0;
	out = fopen(argv[1], "ae");
	if (!out ||
	    fprintf(out, "%lld %lld\n",
		    (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
			ru.ru_utime.tv_usec + ru.ru_stime.tv_usec,
		    wall) < 0 ||
	    fclose(out) != 0) {
		perror("cpu-time: write the figure");
		return 2;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
