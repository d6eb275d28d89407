/* ward gc: remove what creates that died (SIGKILL, a crash, a reboot of the node agent)
 * left behind, as `ward delete -f` would; with --all, stopped containers too. */
#include <stdio.h>

#include "cli.h"
#include "container.h"
#include "util.h"

static const char gc_usage[] =
    "usage: ward gc [-a|--all]\n"
    "Deletes (as delete -f does) every container whose create died before it finished:\n"
    "its state directory has no state.json and no live ward holds it. Prints their ids.\n";

int cmd_gc(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_err err = {0};
	cleanup_strv char **removed = NULL;
	bool all = false;
	const struct cli_opt opts[] = {
	    {"all", 'a', NULL, "also every stopped container", .flag = &all},
	};
	int rootfd, rc = cli_options_no_args(argc, argv, argv[0], opts, ARRAY_SIZE(opts), gc_usage);

	if (rc >= 0)
		return rc;
	rootfd = cli_root(cli);
	if (rootfd < 0)
		return 1;
	rc = ward_container_gc(rootfd, all, &removed, &err);
	for (size_t i = 0; removed && removed[i]; i++)
		printf("%s\n", removed[i]);
	fflush(stdout);
	return rc < 0 ? cli_fail(&err) : 0;
}
