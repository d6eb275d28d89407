#include "cli.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "state.h"

int cli_fail(struct ward_err *e)
{
	ward_error("%s", e->msg);
	if (ward_log_is_file())
		fprintf(stderr, "ward: %s\n", e->msg);
	return 1;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ward_error("%s: %s (see 'ward %s --help')", cmd, msg, cmd);
	if (ward_log_is_file())
		fprintf(stderr, "ward: %s: %s (see 'ward %s --help')\n", cmd, msg, cmd);
	return 1;
}

int cli_root(struct ward_cli *cli)
{
	struct ward_err err = {0};
	int fd = ward_state_root_open(cli->root, &err);
	if (fd < 0)
		cli_fail(&err);
	return fd;
}

const char *cli_one_id(const char *cmd, int argc, char **argv)
{
	if (optind >= argc) {
		cli_usage(cmd, "container ID required");
		return NULL;
	}
	if (optind + 1 != argc) {
		cli_usage(cmd, "expected exactly one container ID");
		return NULL;
	}
	return argv[optind];
}

static const struct {
	const char *name;
	int sig;
} signals[] = {
    {"HUP", SIGHUP},	   {"INT", SIGINT},   {"QUIT", SIGQUIT},     {"ILL", SIGILL},
    {"TRAP", SIGTRAP},	   {"ABRT", SIGABRT}, {"IOT", SIGIOT},	     {"BUS", SIGBUS},
    {"FPE", SIGFPE},	   {"KILL", SIGKILL}, {"USR1", SIGUSR1},     {"SEGV", SIGSEGV},
    {"USR2", SIGUSR2},	   {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},     {"TERM", SIGTERM},
    {"STKFLT", SIGSTKFLT}, {"CHLD", SIGCHLD}, {"CONT", SIGCONT},     {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},	   {"TTIN", SIGTTIN}, {"TTOU", SIGTTOU},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},	   {"XFSZ", SIGXFSZ}, {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"WINCH", SIGWINCH},   {"IO", SIGIO},     {"POLL", SIGPOLL},     {"PWR", SIGPWR},
    {"SYS", SIGSYS},
};

int cli_parse_signal(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);
	if (*s && !*end)
		return (n > 0 && n < _NSIG) ? (int)n : -1;
	if (!strncasecmp(s, "SIG", 3))
		s += 3;
	for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		if (!strcasecmp(s, signals[i].name))
			return signals[i].sig;
	if (!strncasecmp(s, "RTMIN+", 6)) {
		n = strtol(s + 6, &end, 10);
		if (!*end && SIGRTMIN + n <= SIGRTMAX)
			return SIGRTMIN + (int)n;
	}
	return -1;
}
