/* The ward CLI: global options and helpers shared by the command files. */
#ifndef WARD_CLI_H
#define WARD_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "err.h"

struct ward_cli {
	const char *root;
	bool debug;
	bool systemd_cgroup;
	const char *cgroup_manager; /* crun's --cgroup-manager: cgroupfs, disabled or systemd */
	const char *cmd;
};

/* Each command: argv[0] is the command name. Returns the process exit status. */
int cmd_create(struct ward_cli *cli, int argc, char **argv);
int cmd_run(struct ward_cli *cli, int argc, char **argv);
int cmd_start(struct ward_cli *cli, int argc, char **argv);
int cmd_state(struct ward_cli *cli, int argc, char **argv);
int cmd_list(struct ward_cli *cli, int argc, char **argv);
int cmd_kill(struct ward_cli *cli, int argc, char **argv);
int cmd_delete(struct ward_cli *cli, int argc, char **argv);
int cmd_exec(struct ward_cli *cli, int argc, char **argv);
int cmd_ps(struct ward_cli *cli, int argc, char **argv);
int cmd_pause(struct ward_cli *cli, int argc, char **argv);
int cmd_resume(struct ward_cli *cli, int argc, char **argv);
int cmd_spec(struct ward_cli *cli, int argc, char **argv);
int cmd_features(struct ward_cli *cli, int argc, char **argv);
int cmd_update(struct ward_cli *cli, int argc, char **argv);
int cmd_events(struct ward_cli *cli, int argc, char **argv);
int cmd_check(struct ward_cli *cli, int argc, char **argv);
int cmd_policy(struct ward_cli *cli, int argc, char **argv);
int cmd_gpu(struct ward_cli *cli, int argc, char **argv);
int cmd_audit(struct ward_cli *cli, int argc, char **argv);
int cmd_metrics(struct ward_cli *cli, int argc, char **argv);
int cmd_gc(struct ward_cli *cli, int argc, char **argv);

/* Print the error once (stderr and/or the log) and return 1. */
int cli_fail(struct ward_err *e);
/* "ward CMD: MSG" plus a usage hint; returns 1. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* getopt returned '?': one line naming the offending option; returns 1. */
int cli_bad_option(const char *cmd, char **argv);
/* An id as it may be printed: control characters escaped (static buffer). */
const char *cli_printable(const char *s);
/* False (after printing the one-line error) if id is not a valid container ID. */
bool cli_id_ok(const char *id);
/* Open the state root; -1 after printing the error. */
int cli_root(struct ward_cli *cli);
/* Exactly one positional, valid ID expected at argv[optind]. NULL after printing the error. */
const char *cli_one_id(const char *cmd, int argc, char **argv);
/* One option of a command besides -h/--help, and its line in the command's --help. An
 * option without an argument sets *flag; one with an argument stores it in *arg (the last
 * one given wins) or appends it to *list (repeatable). Values are checked by the command
 * after cli_options. */
struct cli_opt {
	const char *name;    /* the long name */
	char letter;	     /* the short option, 0 for none */
	const char *metavar; /* the argument's name in --help (FILE, N); NULL without one */
	const char *help;    /* what it does, for --help; a '\n' starts another line */
	bool *flag;
	const char **arg;
	char ***list;
};

/* Parse the options at argv[optind] (getopt_long, stopping at the first operand) into
 * opts[0..n), -h/--help printing the command's help: usage (its usage line, and what the
 * command does), then one line per option of opts. -1 to go on, else the exit status: 0
 * after printing help, 1 after the error of an unknown option (named as cmd's). */
int cli_options(int argc, char **argv, const char *cmd, const struct cli_opt *opts, size_t n,
		const char *usage);
/* cli_options for a command that takes no operands: an operand left is an error. */
int cli_options_no_args(int argc, char **argv, const char *cmd, const struct cli_opt *opts,
			size_t n, const char *usage);
/* --format table|json (NULL: as *json is): false after printing the error. */
bool cli_format_json(const char *cmd, const char *format, bool *json);
/* --preserve-fds N (0 to 1024): false after printing the error. */
bool cli_preserve_fds(const char *cmd, const char *arg, int *n);
/* The options of a command whose only option is -h/--help: -1 to go on, else the exit
 * status (0 after printing usage, 1 after the error of an unknown option). */
int cli_help_only(int argc, char **argv, const char *usage);
/* No positional argument left at argv[optind]: false after printing the error. */
bool cli_no_args(const char *cmd, int argc, char **argv);
/* The one container ID at argv[optind] and the state root of the global options (--root,
 * the configured one): false after printing the error. */
bool cli_id_root(struct ward_cli *cli, int argc, char **argv, const char **id, int *rootfd);
/* A command whose only argument is one container ID (and -h/--help): fn(rootfd, id, err)
 * on the state root; the exit status (the error printed once). */
int cli_id_call(struct ward_cli *cli, int argc, char **argv, const char *usage,
		int (*fn)(int, const char *, struct ward_err *));
/* Signal by name ("KILL", "SIGKILL") or number; -1 if unknown. */
int cli_parse_signal(const char *s);

#endif
