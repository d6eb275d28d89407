/* ward: global options, then one command. */
#include <getopt.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "fault.h"
#include "log.h"
#include "selfexe.h"
#include "spec.h"
#include "state.h"

extern char **environ;

static const struct {
	const char *name;
	int (*fn)(struct ward_cli *, int, char **);
	bool enters_container; /* runs from a sealed copy of the binary (CVE-2019-5736) */
	const char *summary;
} commands[] = {
    {"create", cmd_create, true, "create a container from a bundle"},
    {"start", cmd_start, false, "start the program of a created container"},
    {"run", cmd_run, true, "create and start a container"},
    {"state", cmd_state, false, "print the state of a container"},
    {"list", cmd_list, false, "list containers"},
    {"kill", cmd_kill, false, "send a signal to a container"},
    {"delete", cmd_delete, false, "delete a container"},
    {"gc", cmd_gc, false, "remove what creates that died left behind"},
    {"exec", cmd_exec, true, "run a process in a container"},
    {"ps", cmd_ps, false, "list the processes of a container"},
    {"pause", cmd_pause, false, "freeze a container's processes"},
    {"resume", cmd_resume, false, "thaw a paused container"},
    {"spec", cmd_spec, false, "write a default config.json"},
    {"features", cmd_features, false, "print the OCI features document"},
    {"update", cmd_update, false, "change the resource limits of a container"},
    {"policy", cmd_policy, false, "show the tenant policy applied to a bundle"},
    {"events", cmd_events, false, "print a container's cgroup statistics and OOM events"},
    {"check", cmd_check, false, "check that this host can enforce the configured policy"},
    {"gpu", cmd_gpu, false, "list GPUs and their leases; release a quarantined GPU"},
    {"audit", cmd_audit, false, "read the audit trail back (who ran what, where)"},
    {"metrics", cmd_metrics, false, "print usage per tenant and container (Prometheus text)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ward [GLOBAL OPTIONS] COMMAND [OPTIONS] [ARGS]\n\n"
		   "ward is a hardened multi-tenant OCI runtime with runc's command line.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nglobal options:\n"
		   "  --root DIR             state directory (default " WARD_DEFAULT_ROOT ")\n"
		   "  --config DIR           configuration directory (default $WARD_CONFIG, else\n"
		   "                         /etc/ward, else the built-in configuration)\n"
		   "  --log FILE             log file (default stderr)\n"
		   "  --log-format FORMAT    text or json\n"
		   "  --debug                debug logging\n"
		   "  --systemd-cgroup       runc's: linux.cgroupsPath is slice:prefix:name (ward\n"
		   "                         makes that cgroup itself, through cgroupfs)\n"
		   "  --cgroup-manager MGR   crun's: cgroupfs, or disabled (no cgroup; trusted\n"
		   "                         tenants only); systemd is refused\n"
		   "  --rootless VALUE       accepted and ignored (runc compatibility)\n"
		   "  -v, --version          print the version\n"
		   "  -h, --help             this help\n\n"
		   "'ward COMMAND --help' describes a command; man 8 ward has everything.\n");
}

static void version(void)
{
	printf("ward version %s\ncommit: %s\nspec: %s\n", WARD_VERSION, WARD_COMMIT,
	       WARD_OCI_VERSION);
	printf("libseccomp: %u.%u.%u\n", seccomp_version()->major, seccomp_version()->minor,
	       seccomp_version()->micro);
	printf("+SECCOMP +CAP +CGROUPV2 +USERNS +TIMENS\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"root", required_argument, NULL, 'r'},
	    {"config", required_argument, NULL, 'c'},
	    {"log", required_argument, NULL, 'l'},
	    {"log-format", required_argument, NULL, 'f'},
	    {"debug", no_argument, NULL, 'd'},
	    {"systemd-cgroup", no_argument, NULL, 's'},
	    {"cgroup-manager", required_argument, NULL, 'M'},
	    {"rootless", required_argument, NULL, 'R'},
	    {"criu", required_argument, NULL, 'C'},
	    {"version", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct ward_cli cli = {.root = WARD_DEFAULT_ROOT};
	const char *log_path = NULL;
	bool json = false, root_given = false;
	int c;

	if (ward_fault_list()) /* the fault-injection test's list of kill points */
		return 0;
	opterr = 0; /* our own one-line errors */
	while ((c = getopt_long(argc, argv, "+vh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			cli.root = optarg;
			root_given = true;
			break;
		case 'c':
			ward_config_set_dir(optarg);
			break;
		case 'l':
			log_path = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") && strcmp(optarg, "text")) {
				fprintf(stderr,
					"ward: --log-format: \"%s\": expected text or json\n",
					optarg);
				return 1;
			}
			json = !strcmp(optarg, "json");
			break;
		case 'd':
			cli.debug = true;
			break;
		case 's':
			cli.systemd_cgroup = true;
			break;
		case 'M':
			if (strcmp(optarg, "cgroupfs") && strcmp(optarg, "disabled") &&
			    strcmp(optarg, "systemd")) {
				fprintf(stderr,
					"ward: --cgroup-manager: \"%s\": expected cgroupfs, "
					"disabled or systemd\n",
					cli_printable(optarg));
				return 1;
			}
			cli.cgroup_manager = optarg;
			break;
		case 'R':
		case 'C':
			break;
		case 'v':
			version();
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "ward: unknown global option '%s' (see 'ward --help')\n",
				cli_printable(argv[optind - 1]));
			return 1;
		}
	}
	if (ward_log_open(log_path, json, cli.debug) < 0) {
		fprintf(stderr, "ward: --log %s: %m\n", log_path);
		return 1;
	}
	if (optind >= argc) {
		fprintf(stderr, "ward: no command given (see 'ward --help')\n");
		return 1;
	}
	cli.cmd = argv[optind];
	if (!root_given && strcmp(cli.cmd, "spec") && strcmp(cli.cmd, "features")) {
		/* ward.json may move the state root; without a configuration nothing is read
		 * beyond a stat of /etc/ward. */
		struct ward_err err = {0};
		const struct ward_config *cfg = ward_config_get(&err);
		if (!cfg)
			return cli_fail(&err);
		if (cfg->state_root)
			cli.root = cfg->state_root;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, cli.cmd))
			continue;
		if (commands[i].enters_container) {
			struct ward_err err = {0};
			/* CVE-2019-5736 (selfexe.h): the re-exec, unless every container this
			 * configuration makes has a user namespace that keeps the binary from
			 * it and none that could write it runs (a create or run that re-execs
			 * says so for the rest of the boot); exec checks the container it
			 * enters again. */
			const struct ward_config *cfg = ward_config_get(&err);
			if (!cfg)
				return cli_fail(&err);
			ward_selfexe_remember(argv, environ);
			if (!ward_selfexe_userns_guards(cfg) &&
			    ((strcmp(cli.cmd, "exec") &&
			      ward_selfexe_mark_exposed(cfg, &err) < 0) ||
			     ward_selfexe_ensure_sealed(argv, environ, &err) < 0))
				return cli_fail(&err);
		}
		argc -= optind;
		argv += optind;
		optind = 0; /* full getopt reset for the command's own options */
		return commands[i].fn(&cli, argc, argv);
	}
	ward_error("unknown command \"%s\" (see 'ward --help')", cli_printable(cli.cmd));
	return 1;
}
