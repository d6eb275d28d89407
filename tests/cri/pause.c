/* The pause image's /pause for tests/cri (built static at test time): holds the pod's
 * namespaces, reaps zombies (it is PID 1 of a shared PID namespace), exits 0 on SIGINT or
 * SIGTERM, as Kubernetes' pause does. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void quit(int sig)
{
	(void)sig;
	_exit(0);
}

static void reap(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int main(void)
{
	struct sigaction q = {.sa_handler = quit},
			 r = {.sa_handler = reap, .sa_flags = SA_NOCLDSTOP};

	sigaction(SIGINT, &q, NULL);
	sigaction(SIGTERM, &q, NULL);
	sigaction(SIGCHLD, &r, NULL);
	for (;;)
		pause();
	return 1;
}
