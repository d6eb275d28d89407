/* ward policy explain: the tenant a bundle belongs to, why, what the policy changes and the
 * effective config.json that `create` would run. */
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "effective.h"
#include "json.h"
#include "spec.h"
#include "spec_json.h"
#include "state.h"
#include "util.h"

static int explain(struct ward_cli *cli, const char *bundle_arg, const char *id, bool as_json)
{
	char bundle[PATH_MAX];
	struct ward_err err = {0};
	struct ward_effective e;
	const struct ward_config *cfg = ward_config_get(&err);
	cleanup_free char *tenant = NULL;
	cleanup_free char *spec = NULL;
	cleanup_fd int rootfd = -1;
	json_t *effective;

	if (!cfg)
		return cli_fail(&err);
	if (!realpath(bundle_arg, bundle)) {
		ward_fail_errno(&err, "bundle %s", bundle_arg);
		return cli_fail(&err);
	}
	rootfd = open(cli->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ward_effective_build(cfg, bundle, id, rootfd, true, &e, &err) < 0)
		return cli_fail(&err);
	/* What create keeps in the state dir: the policy's typed effective spec, serialized. */
	effective = ward_spec_to_json(e.spec);
	tenant = ward_tenant_json(e.tenant);
	if (as_json) {
		json_t *o = json_object(), *notes = json_array();
		char *out;
		for (size_t i = 0; e.notes && e.notes[i]; i++)
			json_array_append_new(notes, json_string(e.notes[i]));
		json_object_set_new(o, "tenant", json_string(e.tenant->name));
		json_object_set_new(o, "why", json_string(e.why));
		json_object_set_new(o, "pod", json_string(e.pod.id));
		json_object_set_new(o, "ids",
				    json_pack("{s:s?,s:I,s:I}", "owner", e.pod.ids_owner, "start",
					      (json_int_t)e.pod.ids.start, "size",
					      (json_int_t)e.pod.ids.size));
		json_object_set_new(o, "changes", notes);
		json_object_set_new(o, "tenant_config", json_loads(tenant, 0, NULL));
		json_object_set(o, "effective", effective);
		out = ward_json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(out);
		free(out);
		json_decref(o);
		json_decref(effective);
		ward_effective_clear(&e);
		return 0;
	}
	/* u64s above INT64_MAX as the integers they are, as create writes them */
	spec = ward_json_dumps(effective, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(effective);
	printf("tenant: %s (%s)\n", e.tenant->name, e.why);
	printf("configuration: %s\n", cfg->dir ? cfg->dir : "built-in");
	printf("pod: %s\n", e.pod.id);
	if (e.tenant->trusted)
		printf("host IDs: as the spec says (trusted tenant)\n");
	else
		printf("host IDs: %u-%u (%s)\n", e.pod.ids.start,
		       e.pod.ids.start + e.pod.ids.size - 1,
		       e.pod.ids_owner ? e.pod.ids_owner : "fixed range of the tenant");
	printf("\nchanges made by the policy:\n");
	for (size_t i = 0; e.notes && e.notes[i]; i++)
		printf("  - %s\n", e.notes[i]);
	printf("\ntenant configuration:\n%s\n", tenant);
	printf("\neffective config.json:\n%s\n", spec);
	ward_effective_clear(&e);
	return 0;
}

int cmd_policy(struct ward_cli *cli, int argc, char **argv)
{
	static const char usage[] = "usage: ward policy explain [--json] [--id ID] BUNDLE\n";
	const char *id = "explain";
	bool as_json = false;
	const struct cli_opt opts[] = {
	    {"json", 0, NULL, "one JSON object instead of text", .flag = &as_json},
	    {"id", 0, "ID", "the container ID to explain for (default: explain)", .arg = &id},
	};
	int rc;

	if (argc < 2 || strcmp(argv[1], "explain")) {
		if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
			fputs(usage, stdout);
			return 0;
		}
		return cli_usage(argv[0], "expected \"explain\"");
	}
	argc--;
	argv++;
	rc = cli_options(argc, argv, "policy explain", opts, ARRAY_SIZE(opts), usage);
	if (rc >= 0)
		return rc;
	if (optind + 1 != argc)
		return cli_usage("policy explain", "expected one BUNDLE argument");
	if (!ward_id_valid(id)) {
		struct ward_err err;
		ward_fail(&err, 0, "invalid container ID format: \"%s\"", id);
		return cli_fail(&err);
	}
	return explain(cli, argv[optind], id, as_json);
}
