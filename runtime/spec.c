/* ward spec [-b|--bundle DIR] [--rootless]: write a default config.json. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "spec.h"
#include "util.h"

int cmd_spec(struct ward_cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {{"bundle", required_argument, NULL, 'b'},
					     {"rootless", no_argument, NULL, 'r'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *bundle = ".";
	bool rootless = false;
	struct ward_err err = {0};
	cleanup_free char *json = NULL;
	cleanup_fd int dfd = -1;
	int c;
	(void)cli;

	while ((c = getopt_long(argc, argv, "+b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'b':
			bundle = optarg;
			break;
		case 'r':
			rootless = true;
			break;
		case 'h':
			fputs("usage: ward spec [-b|--bundle DIR] [--rootless]\n", stdout);
			return 0;
		default:
			return cli_bad_option(argv[0], argv);
		}
	}
	if (!cli_no_args(argv[0], argc, argv))
		return 1;
	dfd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ward_fail_errno(&err, "spec: bundle %s", bundle);
		return cli_fail(&err);
	}
	json = ward_spec_default_json(rootless);
	if (write_file_at(dfd, "config.json", O_CREAT | O_EXCL, 0644, json, strlen(json), &err) <
	    0) {
		if (err.errnum == EEXIST)
			ward_fail(&err, EEXIST, "spec: %s/config.json already exists", bundle);
		return cli_fail(&err);
	}
	return 0;
}
