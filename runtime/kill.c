/* ward kill [-a|--all] ID [SIGNAL] */
#include <stdbool.h>
#include <stdio.h>

#include "cli.h"
#include "util.h"
#include "container.h"

int cmd_kill(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_err err = {0};
	bool all = false;
	const struct cli_opt opts[] = {
	    {"all", 'a', NULL, "signal every process of the container's cgroup", .flag = &all},
	};
	int sig = 15, rootfd,
	    rc = cli_options(argc, argv, argv[0], opts, ARRAY_SIZE(opts),
			     "usage: ward kill [-a|--all] ID [SIGNAL]\n");
	const char *id;

	if (rc >= 0)
		return rc;
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
