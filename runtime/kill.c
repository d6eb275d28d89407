/* ward kill [-a|--all] ID [SIGNAL] */
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "container.h"

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
