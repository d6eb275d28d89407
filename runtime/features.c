/* ward features: the OCI features document. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "features.h"
#include "util.h"

int cmd_features(struct ward_cli *cli, int argc, char **argv)
{
	cleanup_free char *json = NULL;
	(void)cli;
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs("usage: ward features\n", stdout);
		return 0;
	}
	if (argc > 1)
		return cli_usage(argv[0], "unexpected argument \"%s\"", argv[1]);
	json = ward_features_json();
	fputs(json, stdout);
	return 0;
}
