/* ward delete [-f|--force] [--exit-status N] ID */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "container.h"
#include "util.h"

int cmd_delete(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_err err = {0};
	bool force = false;
	const char *id, *status_arg = NULL;
	/* --exit-status is ward's own: the init's exit status, from whoever reaped it (the shim) */
	const struct cli_opt opts[] = {
	    {"force", 'f', NULL, "kill its processes first; an unknown ID is not an error",
	     .flag = &force},
	    {"exit-status", 0, "N", "the init's exit status (0 to 255), for the poststop hooks",
	     .arg = &status_arg},
	};
	int rootfd, exit_status = -1;
	int rc = cli_options(argc, argv, argv[0], opts, ARRAY_SIZE(opts),
			     "usage: ward delete [-f|--force] [--exit-status N] ID\n");
	uint64_t v;

	if (rc >= 0)
		return rc;
	if (status_arg) {
		if (parse_u64(status_arg, &v) < 0 || v > 255)
			return cli_usage(argv[0], "--exit-status %s: expected 0 to 255",
					 status_arg);
		exit_status = (int)v;
	}
	if (!cli_id_root(cli, argc, argv, &id, &rootfd))
		return 1;
	if (ward_container_delete_status(rootfd, id, force, exit_status, &err) < 0)
		return cli_fail(&err);
	return 0;
}
