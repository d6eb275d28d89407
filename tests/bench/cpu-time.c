/* cpu-time FILE CMD [ARG...]: runs CMD, waits for it and appends to FILE the CPU time (user +
 * system, in microseconds, one line) that it and every descendant it waited for used, from
 * wait4()'s rusage; the exit status is CMD's (CMD keeps this program's stdio). For
 * tests/bench/run-latency's CPU=1 mode: CPU time is less at the mercy of other load on a shared
 * host than wall time. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	FILE *out;
	int status;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: cpu-time FILE CMD [ARG...]\n");
		return 2;
	}
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
	out = fopen(argv[1], "ae");
	if (!out ||
	    fprintf(out, "%lld\n",
		    (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
			ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) < 0 ||
	    fclose(out) != 0) {
		perror("cpu-time: write the figure");
		return 2;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}
