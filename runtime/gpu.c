/* ward gpu list [--json]: every GPU of this host, the tenant it is assigned to, and its
 * state in the lease ledger (free, leased by container X of tenant Y, dirty, wiping,
 * quarantined, with the last wipe).
 * ward gpu release UUID: an admin has reset a quarantined (or dirty) GPU: make it free. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "gpu.h"
#include "gpu_lease.h"
#include "util.h"

/* The tenants whose "gpus" name this GPU (by uuid, index or bus id), comma-separated. */
static char *assigned_to(const struct ward_config *cfg, const struct ward_gpu_inventory *inv,
			 const struct ward_gpu *g)
{
	char *out = NULL;

	for (size_t t = 0; t < cfg->n_tenants; t++) {
		const struct ward_tenant *tn = &cfg->tenants[t];
		bool mine = false;
		for (size_t i = 0; tn->gpus && tn->gpus[i] && !mine; i++) {
			const struct ward_gpu *o = ward_gpu_find(inv, tn->gpus[i]);
			mine = o && (o == g || (g->mig && g->parent_uuid &&
						!strcasecmp(o->uuid, g->parent_uuid)));
		}
		if (mine) {
			char *n = xasprintf("%s%s%s", out ? out : "", out ? "," : "", tn->name);
			free(out);
			out = n;
		}
	}
	return out;
}

static json_t *entry_json(const struct ward_gpu *g, const char *tenants,
			  const struct ward_gpu_entry *e)
{
	json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:i,s:b}", "uuid", g->uuid, "bus_id", g->bus_id,
			      "model", g->model ? g->model : "", "index", g->index, "minor",
			      (int)g->minor, "mig", g->mig);
	json_t *holders = json_array();

	json_object_set_new(o, "tenants", tenants ? json_string(tenants) : json_null());
	json_object_set_new(o, "state",
			    json_string(ward_gpu_state_name(e ? e->state : WARD_GPU_FREE)));
	if (e && e->tenant)
		json_object_set_new(o, "tenant", json_string(e->tenant));
	for (size_t i = 0; e && i < e->n_holders; i++)
		json_array_append_new(holders, json_string(e->holders[i].container));
	json_object_set_new(o, "holders", holders);
	if (e && e->reason)
		json_object_set_new(o, "reason", json_string(e->reason));
	if (e && e->last_wipe.total)
		json_object_set_new(o, "last_wipe",
				    json_pack("{s:b,s:I,s:I,s:f,s:s?}", "ok", e->last_wipe.ok,
					      "bytes", (json_int_t)e->last_wipe.bytes, "total",
					      (json_int_t)e->last_wipe.total, "seconds",
					      e->last_wipe.seconds, "reason", e->last_wipe.reason));
	return o;
}

static void print_text(json_t *list)
{
	size_t i;
	json_t *g;

	printf("%-44s %-13s %-10s %-12s %s\n", "GPU", "BUS", "TENANTS", "STATE", "DETAIL");
	json_array_foreach(list, i, g)
	{
		const char *state = json_string_value(json_object_get(g, "state"));
		const char *tenants = json_string_value(json_object_get(g, "tenants"));
		char detail[512] = "";
		json_t *h = json_object_get(g, "holders"), *lw = json_object_get(g, "last_wipe");

		if (!strcmp(state, "leased")) {
			size_t n = (size_t)snprintf(
			    detail, sizeof(detail),
			    "tenant %s:", json_string_value(json_object_get(g, "tenant")));
			for (size_t k = 0; k < json_array_size(h) && n < sizeof(detail); k++)
				n += (size_t)snprintf(detail + n, sizeof(detail) - n, " %s",
						      json_string_value(json_array_get(h, k)));
		} else if (json_object_get(g, "reason")) {
			snprintf(detail, sizeof(detail), "%s",
				 json_string_value(json_object_get(g, "reason")));
		} else if (json_is_object(lw)) {
			snprintf(detail, sizeof(detail), "last wipe: %s, %.1f GiB in %.2f s",
				 json_is_true(json_object_get(lw, "ok")) ? "ok" : "failed",
				 (double)json_integer_value(json_object_get(lw, "bytes")) /
				     (1 << 30),
				 json_real_value(json_object_get(lw, "seconds")));
		}
		printf("%-44s %-13s %-10s %-12s %s\n",
		       json_string_value(json_object_get(g, "uuid")),
		       json_string_value(json_object_get(g, "bus_id")), tenants ? tenants : "-",
		       state, detail);
	}
}

static int gpu_list(struct ward_cli *cli, bool json)
{
	struct ward_err err = {0};
	const struct ward_config *cfg = ward_config_get(&err);
	struct ward_gpu_inventory *inv;
	struct ward_gpu_ledger l = {0};
	json_t *list;

	if (!cfg)
		return cli_fail(&err);
	struct ward_gpu_roots roots = {
	    .proc = cfg->gpu.proc_root, .dev = cfg->gpu.dev_root, .cdi_dirs = cfg->gpu.cdi_dirs};
	if (!(inv = ward_gpu_inventory_load(&roots, &err)))
		return cli_fail(&err);
	if (ward_gpu_ledger_read(cli->root, &l, &err) < 0) {
		ward_gpu_inventory_free(inv);
		return cli_fail(&err);
	}
	list = json_array();
	for (size_t i = 0; i < inv->n; i++) {
		cleanup_free char *tenants = assigned_to(cfg, inv, &inv->gpus[i]);
		json_array_append_new(list,
				      entry_json(&inv->gpus[i], tenants,
						 ward_gpu_ledger_find(&l, inv->gpus[i].uuid)));
	}
	if (json) {
		char *t = json_dumps(list, JSON_INDENT(2));
		puts(t);
		free(t);
	} else {
		print_text(list);
	}
	json_decref(list);
	ward_gpu_ledger_clear(&l);
	ward_gpu_inventory_free(inv);
	return 0;
}

int cmd_gpu(struct ward_cli *cli, int argc, char **argv)
{
	struct ward_err err = {0};

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs("usage: ward gpu list [--json]\n"
		      "       ward gpu release UUID\n"
		      "list: this host's GPUs, the tenants they are assigned to, and their lease "
		      "state\n(free, leased, dirty, wiping, quarantined).\n"
		      "release: make a quarantined or dirty GPU free again, after an admin has "
		      "reset it.\n",
		      argc < 2 ? stderr : stdout);
		return argc < 2 ? 1 : 0;
	}
	if (!strcmp(argv[1], "list")) {
		if (argc > 3 || (argc == 3 && strcmp(argv[2], "--json")))
			return cli_usage("gpu list", "unexpected argument \"%s\"", argv[2]);
		return gpu_list(cli, argc == 3);
	}
	if (!strcmp(argv[1], "release")) {
		if (argc != 3)
			return cli_usage("gpu release", "expected one GPU UUID");
		if (ward_gpu_release(cli->root, argv[2], &err) < 0)
			return cli_fail(&err);
		return 0;
	}
	return cli_usage("gpu", "unknown subcommand \"%s\"", argv[1]);
}
