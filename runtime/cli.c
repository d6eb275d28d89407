#include "cli.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "state.h"
#include "util.h"

int cli_fail(struct ward_err *e)
{
	ward_error("%s", e->msg);
	if (ward_log_is_file())
		fprintf(stderr, "ward: %s\n", e->msg);
	return 1;
}

int cli_usage(const char *cmd, const char *fmt, ...)
{
	struct ward_err e;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ward_fail(&e, 0, "%s: %s (see 'ward %s --help')", cmd, msg, cmd);
	return cli_fail(&e);
}

int cli_root(struct ward_cli *cli)
{
	struct ward_err err = {0};
	int fd = ward_state_root_open(cli->root, &err);
	if (fd < 0)
		cli_fail(&err);
	return fd;
}

const char *cli_printable(const char *s)
{
	static char buf[512];
	size_t n = 0;
	for (; *s && n + 5 < sizeof(buf); s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
					      c == '"' || c == '\\' ? "\\%c" : "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = '\0';
	return buf;
}

bool cli_id_ok(const char *id)
{
	struct ward_err e;
	if (ward_id_valid(id))
		return true;
	ward_fail(&e, 0, "invalid container ID format: \"%s\"", cli_printable(id));
	cli_fail(&e);
	return false;
}

int cli_bad_option(const char *cmd, char **argv)
{
	const char *opt = optind > 0 ? argv[optind - 1] : "?";
	if (optopt && !(opt[0] == '-' && opt[1] == '-'))
		return cli_usage(cmd, "unknown option '-%c'", optopt);
	return cli_usage(cmd, "unknown option '%s'", cli_printable(opt));
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
	return cli_id_ok(argv[optind]) ? argv[optind] : NULL;
}

/* getopt_long's value for opts[i] when it has no short option */
#define CLI_LONG_ONLY 256

static void cli_store(const struct cli_opt *o)
{
	if (o->flag)
		*o->flag = true;
	else if (o->list)
		*o->list = strv_append(*o->list, optarg);
	else
		*o->arg = optarg;
}

/* "  -p, --process FILE" or "      --cwd DIR": how an option's --help line begins; its length */
static int cli_opt_head(const struct cli_opt *o, char *buf, size_t size)
{
	char letter[5] = "    ";

	if (o->letter)
		snprintf(letter, sizeof(letter), "-%c, ", o->letter);
	return snprintf(buf, size, "  %s--%s%s%s", letter, o->name, o->metavar ? " " : "",
			o->metavar ? o->metavar : "");
}

/* usage, then a line per option: its head, and its help in the column two past the widest
 * head (the help's further lines in that column too). 0, or 1 if stdout failed. */
static int cli_help(const char *usage, const struct cli_opt *opts, size_t n)
{
	char head[128];
	int col = 0;

	for (size_t i = 0; i < n; i++) {
		int w = cli_opt_head(&opts[i], NULL, 0) + 2;
		col = w > col ? w : col;
	}
	fputs(usage, stdout);
	for (size_t i = 0; i < n; i++) {
		const char *h = opts[i].help ? opts[i].help : "";
		cli_opt_head(&opts[i], head, sizeof(head));
		printf("%-*s", col, head);
		for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1)
			printf("%.*s\n%*s", (int)(nl - h), h, col, "");
		printf("%s\n", h);
	}
	return fflush(stdout) == EOF || ferror(stdout);
}

int cli_options(int argc, char **argv, const char *cmd, const struct cli_opt *opts, size_t n,
		const char *usage)
{
	struct option lo[n + 2];
	char shorts[2 * n + 3];
	size_t k = 0;
	int c;

	shorts[k++] = '+';
	for (size_t i = 0; i < n; i++) {
		int has_arg = opts[i].flag ? no_argument : required_argument;
		lo[i] = (struct option){opts[i].name, has_arg, NULL,
					opts[i].letter ? opts[i].letter : CLI_LONG_ONLY + (int)i};
		if (opts[i].letter)
			shorts[k++] = opts[i].letter;
		if (opts[i].letter && has_arg == required_argument)
			shorts[k++] = ':';
	}
	shorts[k++] = 'h';
	shorts[k] = '\0';
	lo[n] = (struct option){"help", no_argument, NULL, 'h'};
	lo[n + 1] = (struct option){NULL, 0, NULL, 0};
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		size_t i = c >= CLI_LONG_ONLY ? (size_t)(c - CLI_LONG_ONLY) : 0;
		if (c == 'h')
			return cli_help(usage, opts, n);
		while (c < CLI_LONG_ONLY && i < n && opts[i].letter != c)
			i++;
		if (c == '?' || i >= n)
			return cli_bad_option(cmd, argv);
		cli_store(&opts[i]);
	}
	return -1;
}

int cli_options_no_args(int argc, char **argv, const char *cmd, const struct cli_opt *opts,
			size_t n, const char *usage)
{
	int rc = cli_options(argc, argv, cmd, opts, n, usage);
	if (rc < 0 && !cli_no_args(cmd, argc, argv))
		return 1;
	return rc;
}

bool cli_format_json(const char *cmd, const char *format, bool *json)
{
	if (!format)
		return true;
	if (strcmp(format, "json") && strcmp(format, "table")) {
		cli_usage(cmd, "--format: expected table or json");
		return false;
	}
	*json = !strcmp(format, "json");
	return true;
}

bool cli_preserve_fds(const char *cmd, const char *arg, int *n)
{
	uint64_t v;
	if (parse_u64(arg, &v) < 0 || v > 1024) {
		cli_usage(cmd, "--preserve-fds: \"%s\" is not a count", arg);
		return false;
	}
	*n = (int)v;
	return true;
}

int cli_help_only(int argc, char **argv, const char *usage)
{
	return cli_options(argc, argv, argv[0], NULL, 0, usage);
}

bool cli_no_args(const char *cmd, int argc, char **argv)
{
	if (optind >= argc)
		return true;
	cli_usage(cmd, "unexpected argument \"%s\"", cli_printable(argv[optind]));
	return false;
}

bool cli_id_root(struct ward_cli *cli, int argc, char **argv, const char **id, int *rootfd)
{
	*id = cli_one_id(argv[0], argc, argv);
	if (!*id)
		return false;
	*rootfd = cli_root(cli);
	return *rootfd >= 0;
}

int cli_id_call(struct ward_cli *cli, int argc, char **argv, const char *usage,
		int (*fn)(int, const char *, struct ward_err *))
{
	struct ward_err err = {0};
	const char *id;
	int rc = cli_help_only(argc, argv, usage), rootfd;

	if (rc >= 0)
		return rc;
	if (!cli_id_root(cli, argc, argv, &id, &rootfd))
		return 1;
	if (fn(rootfd, id, &err) < 0)
		return cli_fail(&err);
	return 0;
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
		return (n >= 0 && n < _NSIG) ? (int)n : -1; /* 0: is it alive (runc) */
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
