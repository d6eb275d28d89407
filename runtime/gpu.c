/* ward gpu list [--json]: every GPU of this host, the tenant it is assigned to, and its
 * state in the lease ledger (free, leased by container X of tenant Y, dirty, wiping,
 * quarantined, with the last wipe).
 * ward gpu release [--force] UUID: make a quarantined (or dirty) GPU free again: only after
 * a new wipe succeeds (the configured ward-gpu-hook's wipe, the path the poststop release
 * takes), or with --force without one, saying its memory was not wiped. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "gpu.h"
#include "gpu_lease.h"
#include "log.h"
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

	(void)cli; /* the ledger is the host's (lib_dir), not the state root's */
	if (!cfg)
		return cli_fail(&err);
	struct ward_gpu_roots roots = {
	    .proc = cfg->gpu.proc_root, .dev = cfg->gpu.dev_root, .cdi_dirs = cfg->gpu.cdi_dirs};
	if (!(inv = ward_gpu_inventory_load(&roots, &err)))
		return cli_fail(&err);
	if (ward_gpu_ledger_read(cfg->lib_dir, &l, &err) < 0) {
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

/* Run the configured ward-gpu-hook's wipe of uuid with the configuration's roots and wipe
 * limits, a fixed environment, its report on our stderr. 0 if it exited 0 (the GPU is
 * free: the hook ends the wipe in the ledger either way). */
static int run_wipe(const struct ward_config *cfg, const char *uuid, struct ward_err *err)
{
	const struct ward_gpu_config *g = &cfg->gpu;
	char timeout[16], slack[16], held[16];
	char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
	cleanup_strv char **argv = xcalloc(1, sizeof(char *));
	int status;
	pid_t pid;

	snprintf(timeout, sizeof(timeout), "%u", g->wipe_timeout);
	snprintf(slack, sizeof(slack), "%u", g->wipe_slack_mb);
	snprintf(held, sizeof(held), "%u", g->wipe_held_max_mb);
	const char *args[] = {g->hook,
			      "wipe",
			      "--lib-dir",
			      cfg->lib_dir,
			      "--uuid",
			      uuid,
			      "--proc-root",
			      g->proc_root,
			      "--dev-root",
			      g->dev_root,
			      "--libcuda",
			      g->libcuda,
			      "--wipe-timeout",
			      timeout,
			      "--wipe-slack-mb",
			      slack,
			      "--wipe-held-max-mb",
			      held,
			      NULL};
	for (size_t i = 0; args[i]; i++)
		argv = strv_append(argv, args[i]);
	for (size_t i = 0; g->cdi_dirs && g->cdi_dirs[i]; i++) {
		argv = strv_append(argv, "--cdi-dir");
		argv = strv_append(argv, g->cdi_dirs[i]);
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return ward_fail_errno(err, "fork");
	if (pid == 0) {
		dup2(STDERR_FILENO, STDOUT_FILENO); /* stdout stays ours: the report is stderr */
		execve(g->hook, argv, envp);
		fprintf(stderr, "ward: exec %s: %s\n", g->hook, strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return ward_fail_errno(err, "wait for %s", g->hook);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	return ward_fail(err, 0, "the wipe (%s wipe) %s %d", g->hook,
			 WIFEXITED(status) ? "exited with status" : "was killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

/* release: dirty or quarantined -> a new wipe -> free; --force: free without a wipe. */
static int gpu_release(const char *uuid, bool force)
{
	struct ward_err err = {0};
	const struct ward_config *cfg = ward_config_get(&err);
	struct ward_gpu_ledger l = {0};
	const struct ward_gpu_entry *e;
	enum ward_gpu_state state;

	if (!cfg || ward_gpu_ledger_read(cfg->lib_dir, &l, &err) < 0)
		return cli_fail(&err);
	e = ward_gpu_ledger_find(&l, uuid);
	state = e ? e->state : WARD_GPU_FREE;
	ward_gpu_ledger_clear(&l);
	if (state == WARD_GPU_FREE)
		return 0; /* nothing to do */
	if (force || state == WARD_GPU_LEASED || state == WARD_GPU_WIPING) {
		/* leased or being wiped: ward_gpu_release refuses, with the holder */
		if (ward_gpu_release(cfg->lib_dir, uuid, &err) < 0)
			return cli_fail(&err);
		ward_warn("GPU \"%s\" released without a wipe (--force): its memory was not wiped "
			  "and the next tenant may read what the last one left",
			  uuid);
		return 0;
	}
	if (run_wipe(cfg, uuid, &err) < 0) {
		struct ward_err ignored = {0};
		if (ward_gpu_ledger_read(cfg->lib_dir, &l, &ignored) == 0 &&
		    (e = ward_gpu_ledger_find(&l, uuid)))
			state = e->state;
		ward_gpu_ledger_clear(&l);
		ward_wrap(&err,
			  "GPU \"%s\" not released: its memory was not wiped (it stays %s; reset "
			  "it and run `ward gpu release %s` again, or free it unwiped with "
			  "`ward gpu release --force %s`)",
			  uuid, ward_gpu_state_name(state), uuid, uuid);
		return cli_fail(&err);
	}
	return 0;
}

static bool help_arg(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h");
}

int cmd_gpu(struct ward_cli *cli, int argc, char **argv)
{
	/* `ward gpu --help`, and `ward gpu SUB --help`, which cli_usage's errors point to */
	if (argc < 2 || help_arg(argv[1]) || (argc == 3 && help_arg(argv[2]))) {
		fputs("usage: ward gpu list [--json]\n"
		      "       ward gpu release [--force] UUID\n"
		      "list: this host's GPUs, the tenants they are assigned to, and their lease "
		      "state\n(free, leased, dirty, wiping, quarantined).\n"
		      "release: wipe a quarantined or dirty GPU (after an admin has reset it) and "
		      "make it\nfree if the wipe succeeds; --force frees it without a wipe (its "
		      "memory is not wiped).\n",
		      argc < 2 ? stderr : stdout);
		return argc < 2 ? 1 : 0;
	}
	if (!strcmp(argv[1], "list")) {
		if (argc > 3 || (argc == 3 && strcmp(argv[2], "--json")))
			return cli_usage("gpu list", "unexpected argument \"%s\"", argv[2]);
		return gpu_list(cli, argc == 3);
	}
	if (!strcmp(argv[1], "release")) {
		bool force = argc == 4 && (!strcmp(argv[2], "--force") || !strcmp(argv[2], "-f"));
		if (argc != 3 + force || argv[argc - 1][0] == '-')
			return cli_usage("gpu release", "expected [--force] and one GPU UUID");
		return gpu_release(argv[argc - 1], force);
	}
	return cli_usage("gpu", "unknown subcommand \"%s\"", argv[1]);
}
