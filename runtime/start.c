/* ward start ID: run the program of a created container. */
#include "cli.h"
#include "container.h"

int cmd_start(struct ward_cli *cli, int argc, char **argv)
{
	return cli_id_call(cli, argc, argv, "usage: ward start ID\n", ward_container_start);
}
