/* ward exec */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "util.h"

int cmd_exec(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_exec_opts o = {0};
	struct ward_err err = {0};
	cleanup_strv char **env = NULL;
	cleanup_strv char **gids = NULL;
	cleanup_strv char **caps = NULL;
	const char *preserve = NULL, *label = NULL;
	const struct cli_opt opts[] = {
	    {"process", 'p', "FILE", "process.json describing the process", .arg = &o.process_file},
	    {"tty", 't', NULL, "allocate a terminal", .flag = &o.tty},
	    {"detach", 'd', NULL, "do not wait for the process", .flag = &o.detach},
	    {"pid-file", 0, "FILE", "write the process's pid here", .arg = &o.pid_file},
	    {"console-socket", 0, "SOCK", "receive the pty master over this unix socket",
	     .arg = &o.console_socket},
	    {"env", 'e', "K=V", "add an environment variable (repeatable)", .list = &env},
	    {"cwd", 0, "DIR", "working directory inside the container", .arg = &o.cwd},
	    {"user", 'u', "UID[:GID]", "user to run as", .arg = &o.user},
	    {"additional-gids", 'g', "G", "extra group (repeatable)", .list = &gids},
	    {"cap", 'c', "CAP", "add a capability (repeatable)", .list = &caps},
	    {"no-new-privs", 0, NULL, "set no_new_privs", .flag = &o.no_new_privs},
	    {"preserve-fds", 0, "N", "pass N extra fds", .arg = &preserve},
	    {"process-label", 0, "LABEL", "refused: SELinux labels are not supported",
	     .arg = &label},
	    {"apparmor", 0, "PROFILE", "AppArmor profile (default: the container's)",
	     .arg = &o.apparmor},
	    {"ignore-paused", 0, NULL, "exec in a paused container (waits for its resume)",
	     .flag = &o.ignore_paused},
	};
	int rootfd, status = 255;
	int rc = cli_options(argc, argv, argv[0], opts, ARRAY_SIZE(opts),
			     "usage: ward exec [OPTIONS] ID [COMMAND [ARG...]]\n");

	if (rc >= 0)
		return rc;
	for (size_t i = 0; env && env[i]; i++)
		if (!strchr(env[i], '='))
			return cli_usage(argv[0], "--env \"%s\": expected K=V", env[i]);
	if (preserve && !cli_preserve_fds(argv[0], preserve, &o.preserve_fds))
		return 1;
	if (label)
		return cli_usage(argv[0],
				 "--process-label: SELinux labels are not supported by ward");
	if (optind >= argc)
		return cli_usage(argv[0], "container ID required");
	o.id = argv[optind];
	if (!cli_id_ok(o.id))
		return 255;
	o.args = argv + optind + 1;
	o.env = env;
	o.additional_gids = gids;
	o.caps = caps;
	if (!o.process_file && !o.args[0])
		return cli_usage(argv[0], "a command or --process is required");
	rootfd = cli_root(cli);
	if (rootfd < 0)
		return 255;
	if (ward_container_exec(rootfd, &o, &status, &err) < 0) {
		ward_wrap(&err, "exec failed");
		cli_fail(&err);
		return 255;
	}
	return status;
}
