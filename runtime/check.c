/* ward check [--json]: what this host supports and whether the configured policy can be
 * enforced on it. Exit 0: it can; 1: it cannot (the last line, or "enforceable", says). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "hostcheck.h"
#include "util.h"

int cmd_check(struct ward_cli *cli, int argc, char **argv)
{
	static const char usage[] =
	    "usage: ward check [--json]\n"
	    "Probe what this host supports (user namespaces, idmapped mounts, seccomp,\n"
	    "AppArmor, cgroup v2 controllers, device BPF programs, the ID pool) and say\n"
	    "whether the configured policy can be enforced: exit 0 if it can, 1 if not.\n";
	struct ward_err err = {0};
	const struct ward_config *conf;
	struct ward_host_paths paths;
	struct ward_host host;
	struct ward_verdict verdict;
	cleanup_free char *text = NULL;
	cleanup_free char *desc = NULL;
	bool json = false;
	const struct cli_opt opts[] = {
	    {"json", 0, NULL, "print the same facts as one JSON object", .flag = &json},
	};
	int rc = cli_options_no_args(argc, argv, argv[0], opts, ARRAY_SIZE(opts), usage);

	if (rc >= 0)
		return rc;

	conf = ward_config_get(&err);
	paths.state_root = cli->root; /* --root, else the configured state_root (main.c) */
	paths.lib_dir = conf ? conf->lib_dir : WARD_LIB_DEFAULT_DIR;
	paths.config = conf;
	desc = conf ? xstrdup(conf->dir ? conf->dir : "built-in") : xstrdup("not loaded");

	ward_host_probe(&paths, &host);
	ward_host_verdict(&host, conf, conf ? NULL : err.msg, &verdict);
	text = json ? ward_host_json(&host, &verdict, desc) : ward_host_text(&host, &verdict, desc);
	rc = verdict.errors ? 1 : 0;
	ward_verdict_free(&verdict);
	ward_host_free(&host);
	if (!text) {
		fprintf(stderr, "ward: check: cannot render the report\n");
		return 1;
	}
	fputs(text, stdout);
	if (json)
		fputc('\n', stdout);
	return rc;
}
