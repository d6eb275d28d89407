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
	static const struct option opts[] = {
	    {"process", required_argument, NULL, 'p'},
	    {"tty", no_argument, NULL, 't'},
	    {"detach", no_argument, NULL, 'd'},
	    {"pid-file", required_argument, NULL, 'P'},
	    {"console-socket", required_argument, NULL, 'C'},
	    {"env", required_argument, NULL, 'e'},
	    {"cwd", required_argument, NULL, 'w'},
	    {"user", required_argument, NULL, 'u'},
	    {"additional-gids", required_argument, NULL, 'g'},
	    {"cap", required_argument, NULL, 'c'},
	    {"no-new-privs", no_argument, NULL, 'n'},
	    {"preserve-fds", required_argument, NULL, 'F'},
	    {"process-label", required_argument, NULL, 'L'},
	    {"apparmor", required_argument, NULL, 'A'},
	    {"ignore-paused", no_argument, NULL, 'I'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct ward_exec_opts o = {0};
	struct ward_err err = {0};
	cleanup_strv char **env = NULL;
	cleanup_strv char **gids = NULL;
	cleanup_strv char **caps = NULL;
	int c, rootfd, status = 255;

	while ((c = getopt_long(argc, argv, "+p:tde:u:g:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			o.process_file = optarg;
			break;
		case 't':
			o.tty = true;
			break;
		case 'd':
			o.detach = true;
			break;
		case 'P':
			o.pid_file = optarg;
			break;
		case 'C':
			o.console_socket = optarg;
			break;
		case 'e':
			if (!strchr(optarg, '='))
				return cli_usage(argv[0], "--env \"%s\": expected K=V", optarg);
			env = strv_append(env, optarg);
			break;
		case 'w':
			o.cwd = optarg;
			break;
		case 'u':
			o.user = optarg;
			break;
		case 'g':
			gids = strv_append(gids, optarg);
			break;
		case 'c':
			caps = strv_append(caps, optarg);
			break;
		case 'n':
			o.no_new_privs = true;
			break;
		case 'F': {
			uint64_t n;
			if (parse_u64(optarg, &n) < 0 || n > 1024)
				return cli_usage(argv[0], "--preserve-fds: \"%s\" is not a count",
						 optarg);
			o.preserve_fds = (int)n;
			break;
		}
		case 'L':
			return cli_usage(argv[0], "--process-label: SELinux labels are not "
						  "supported by ward");
		case 'A':
			o.apparmor = optarg;
			break;
		case 'I':
			o.ignore_paused = true;
			break;
		case 'h':
			fputs(help, stdout);
			return 0;
		default:
			return cli_bad_option(argv[0], argv);
		}
	}
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
