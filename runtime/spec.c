/* ward spec [-b|--bundle DIR] [--rootless]: write a default config.json. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "policy.h"
#include "spec.h"
#include "util.h"

int cmd_spec(struct ward_cli *cli, int argc, char **argv)
{
	const char *bundle = ".";
	bool rootless = false;
	const struct cli_opt opts[] = {
	    {"bundle", 'b', "DIR", "write DIR/config.json (default: the current directory)",
	     .arg = &bundle},
	    {"rootless", 0, NULL, "a configuration for a caller without root privileges",
	     .flag = &rootless},
	};
	struct ward_err err = {0};
	cleanup_free char *json = NULL;
	cleanup_fd int dfd = -1;
	int rc = cli_options_no_args(argc, argv, argv[0], opts, ARRAY_SIZE(opts),
				     "usage: ward spec [-b|--bundle DIR] [--rootless]\n");
	(void)cli;

	if (rc >= 0)
		return rc;
	dfd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ward_fail_errno(&err, "spec: bundle %s", bundle);
		return cli_fail(&err);
	}
	json =
	    ward_spec_default_json(rootless, ward_policy_masked_paths, ward_policy_readonly_paths);
	if (write_file_at(dfd, "config.json", O_CREAT | O_EXCL, 0644, json, strlen(json), &err) <
	    0) {
		if (err.errnum == EEXIST)
			ward_fail(&err, EEXIST, "spec: %s/config.json already exists", bundle);
		return cli_fail(&err);
	}
	return 0;
}
