/* ward pause ID / ward resume ID: freeze and thaw a container's processes. */
#include <stdbool.h>

#include "cli.h"
#include "container.h"

static int do_pause(int rootfd, const char *id, struct ward_err *err)
{
	return ward_container_pause(rootfd, id, true, err);
}

static int do_resume(int rootfd, const char *id, struct ward_err *err)
{
	return ward_container_pause(rootfd, id, false, err);
}

int cmd_pause(struct ward_cli *cli, int argc, char **argv)
{
	return cli_id_call(cli, argc, argv, "usage: ward pause ID\n", do_pause);
}

int cmd_resume(struct ward_cli *cli, int argc, char **argv)
{
	return cli_id_call(cli, argc, argv, "usage: ward resume ID\n", do_resume);
}
