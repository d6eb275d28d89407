/* ward exec */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "container.h"
#include "util.h"

static const char help[] =
    "usage: ward exec [OPTIONS] ID [COMMAND [ARG...]]\n"
    "  -p, --process FILE        process.json describing the process\n"
    "  -t, --tty                 allocate a terminal\n"
    "  -d, --detach              do not wait for the process\n"
    "      --pid-file FILE       write the process's pid here\n"
    "      --console-socket SOCK receive the pty master over this unix socket\n"
    "  -e, --env K=V             add an environment variable (repeatable)\n"
    "      --cwd DIR             working directory inside the container\n"
    "  -u, --user UID[:GID]      user to run as\n"
    "  -g, --additional-gids G   extra group (repeatable)\n"
    "  -c, --cap CAP             add a capability (repeatable)\n"
    "      --no-new-privs        set no_new_privs\n"
    "      --preserve-fds N      pass N extra fds\n"
    "      --apparmor PROFILE    AppArmor profile (default: the container's)\n"
    "      --ignore-paused       exec in a paused container (waits for its resume)\n";

int cmd_exec(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_exec_opts o = {0};
	struct ward_err err = {0};
	cleanup_strv char **env = NULL;
	cleanup_strv char **gids = NULL;
	cleanup_strv char **caps = NULL;
	const char *preserve = NULL;
	bool label = false;
	const struct cli_opt opts[] = {
	    {"process", 'p', .arg = &o.process_file},
	    {"tty", 't', .flag = &o.tty},
	    {"detach", 'd', .flag = &o.detach},
	    {"pid-file", 0, .arg = &o.pid_file},
	    {"console-socket", 0, .arg = &o.console_socket},
	    {"env", 'e', .list = &env},
	    {"cwd", 0, .arg = &o.cwd},
	    {"user", 'u', .arg = &o.user},
	    {"additional-gids", 'g', .list = &gids},
	    {"cap", 'c', .list = &caps},
	    {"no-new-privs", 0, .flag = &o.no_new_privs},
	    {"preserve-fds", 0, .arg = &preserve},
	    {"process-label", 0, .flag = &label},
	    {"apparmor", 0, .arg = &o.apparmor},
	    {"ignore-paused", 0, .flag = &o.ignore_paused},
	};
	int rootfd, status = 255;
	int rc = cli_options(argc, argv, argv[0], opts, ARRAY_SIZE(opts), help);

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
