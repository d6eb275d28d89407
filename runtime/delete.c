/* ward delete [-f|--force] [--exit-status N] ID */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "container.h"
#include "util.h"

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
