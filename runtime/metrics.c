/* ward metrics: Prometheus text exposition of every tenant's and container's usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgroup.h"
#include "cli.h"
#include "config.h"
#include "metrics.h"
#include "util.h"

static const char metrics_usage[] =
    "usage: ward metrics [--tenant TENANT]\n"
    "Prints usage per tenant and per container (cgroup v2 files) and the GPU lease ledger\n"
    "in the Prometheus text exposition format (for node_exporter's textfile collector).\n";

int cmd_metrics(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_err err = {0}, ignored = {0};
	struct ward_metrics m;
	const struct ward_config *cfg;
	const char *only = NULL;
	cleanup_strv char **configured = NULL;
	cleanup_free char *text = NULL;
	const struct cli_opt opts[] = {
	    {"tenant", 0, "TENANT", "only this tenant's cgroup, containers and GPUs", .arg = &only},
	};
	int rc = cli_options_no_args(argc, argv, argv[0], opts, ARRAY_SIZE(opts), metrics_usage);

	if (rc >= 0)
		return rc;
	if (only && (!*only || strchr(only, '/') || !strcmp(only, ".") || !strcmp(only, "..")))
		return cli_usage(argv[0], "--tenant: \"%s\" is not a tenant name",
				 cli_printable(only));
	cfg = ward_config_get(&err);
	if (!cfg)
		return cli_fail(&err);
	for (size_t i = 0; i < cfg->n_tenants; i++)
		configured = strv_append(configured, cfg->tenants[i].name);
	/* no cgroup2 hierarchy: containers and GPUs only */
	if (ward_metrics_collect(cli->root, cfg->lib_dir, ward_cgroup_v2_root(&ignored), configured,
				 only, (int64_t)time(NULL), &m, &err) < 0)
		return cli_fail(&err);
	text = ward_metrics_render(&m);
	ward_metrics_clear(&m);
	if (fputs(text, stdout) == EOF || fflush(stdout) == EOF) {
		ward_fail_errno(&err, "write metrics");
		return cli_fail(&err);
	}
	return 0;
}
