/* ward start / kill / delete / pause / resume: one ID, one engine call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "util.h"

static int simple(struct ward_cli *cli, int argc, char **argv, const char *help,
		  int (*fn)(int, const char *, struct ward_err *))
{
	struct ward_err err = {0};
	const char *id;
	int rc = cli_help_only(argc, argv, help), rootfd;

	if (rc >= 0)
		return rc;
	if (!cli_id_root(cli, argc, argv, &id, &rootfd))
		return 1;
	if (fn(rootfd, id, &err) < 0)
		return cli_fail(&err);
	return 0;
}

static int do_pause(int rootfd, const char *id, struct ward_err *err)
{
	return ward_container_pause(rootfd, id, true, err);
}

static int do_resume(int rootfd, const char *id, struct ward_err *err)
{
	return ward_container_pause(rootfd, id, false, err);
}

int cmd_start(struct ward_cli *cli, int argc, char **argv)
{
	return simple(cli, argc, argv, "usage: ward start ID\n", ward_container_start);
}

int cmd_pause(struct ward_cli *cli, int argc, char **argv)
{
	return simple(cli, argc, argv, "usage: ward pause ID\n", do_pause);
}

int cmd_resume(struct ward_cli *cli, int argc, char **argv)
{
	return simple(cli, argc, argv, "usage: ward resume ID\n", do_resume);
}

int cmd_kill(struct ward_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"all", no_argument, NULL, 'a'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	struct ward_err err = {0};
	bool all = false;
	int c, sig = 15, rootfd;
	const char *id;
	while ((c = getopt_long(argc, argv, "+ah", opts, NULL)) != -1) {
		if (c == 'a') {
			all = true;
		} else if (c == 'h') {
			fputs("usage: ward kill [-a|--all] ID [SIGNAL]\n", stdout);
			return 0;
		} else {
			return cli_bad_option(argv[0], argv);
		}
	}
	if (optind >= argc)
		return cli_usage(argv[0], "container ID required");
	if (argc - optind > 2)
		return cli_usage(argv[0], "expected ID [SIGNAL]");
	id = argv[optind];
	if (!cli_id_ok(id))
		return 1;
	if (argc - optind == 2) {
		sig = cli_parse_signal(argv[optind + 1]);
		if (sig < 0)
			return cli_usage(argv[0], "unknown signal \"%s\"", argv[optind + 1]);
	}
	rootfd = cli_root(cli);
	if (rootfd < 0)
		return 1;
	if (ward_container_kill(rootfd, id, sig, all, &err) < 0)
		return cli_fail(&err);
	return 0;
}

int cmd_delete(struct ward_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {{"force", no_argument, NULL, 'f'},
					     {"exit-status", required_argument, NULL, 'x'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	struct ward_err err = {0};
	bool force = false;
	int c, rootfd, exit_status = -1;
	const char *id;
	uint64_t v;
	while ((c = getopt_long(argc, argv, "+fh", opts, NULL)) != -1) {
		if (c == 'f') {
			force = true;
		} else if (c == 'x') {
			/* ward's own: the init's exit status, from whoever reaped it (the shim) */
			if (parse_u64(optarg, &v) < 0 || v > 255)
				return cli_usage(argv[0], "--exit-status %s: expected 0 to 255",
						 optarg);
			exit_status = (int)v;
		} else if (c == 'h') {
			fputs("usage: ward delete [-f|--force] [--exit-status N] ID\n", stdout);
			return 0;
		} else {
			return cli_bad_option(argv[0], argv);
		}
	}
	if (!cli_id_root(cli, argc, argv, &id, &rootfd))
		return 1;
	if (ward_container_delete_status(rootfd, id, force, exit_status, &err) < 0)
		return cli_fail(&err);
	return 0;
}
