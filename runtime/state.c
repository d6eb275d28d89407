/* ward state ID: the OCI state of a container. */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "container.h"
#include "util.h"

int cmd_state(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_err err = {0};
	cleanup_free char *json = NULL;
	const char *id;
	int rc = cli_help_only(argc, argv, "usage: ward state ID\n"), rootfd;

	if (rc >= 0)
		return rc;
	if (!cli_id_root(cli, argc, argv, &id, &rootfd))
		return 1;
	json = ward_container_state_json(rootfd, id, &err);
	if (!json)
		return cli_fail(&err);
	fputs(json, stdout);
	return 0;
}
