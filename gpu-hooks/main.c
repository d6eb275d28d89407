/* ward-gpu-hook: the GPU side of ward (see man 8 ward-gpu-hook).
 *
 *   inject   OCI createRuntime hook: bind the container's leased GPUs into it (inject.h)
 *   release  OCI poststop hook: give the container's GPUs back; each one it was the last
 *            holder of is wiped (wipe.h): free when the wipe succeeds, quarantined if not
 *   wipe     an admin's wipe of a dirty GPU (same path as release)
 *
 * ward's policy pass registers inject and release with every argument they need and a
 * fixed environment, so a pod can neither remove them nor steer them. Errors are one line
 * on stderr ("ward-gpu-hook: ..."), exit status 1. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "audit.h"
#include "config.h"
#include "err.h"
#include "gpu.h"
#include "gpu_lease.h"
#include "hooks.h"
#include "inject.h"
#include "state.h"
#include "util.h"
#include "wipe.h"

struct opts {
	const char *lib_dir; /* the host-wide GPU ledger: <lib_dir>/gpu/ledger.json */
	const char *root, *container, *tenant, *gpus, *libcuda, *uuid, *rootfs;
	const char *audit_dir; /* NULL: no audit lines (an admin's wipe without it) */
	const char *proc_root, *dev_root;
	char **cdi_dirs;
	bool compute;
	unsigned wipe_timeout, wipe_slack_mb, wipe_held_max_mb;
};

static void usage(FILE *f)
{
	fputs(
	    "usage: ward-gpu-hook inject  --lib-dir DIR --root DIR --container ID --tenant T\n"
	    "                             --gpus UUID[,UUID] [--rootfs DIR] [--compute] [ROOTS]\n"
	    "                             (state JSON on stdin)\n"
	    "       ward-gpu-hook release --lib-dir DIR --root DIR --container ID [WIPE] [ROOTS]\n"
	    "       ward-gpu-hook wipe    --lib-dir DIR --uuid UUID [WIPE] [ROOTS]\n"
	    "--lib-dir: ward's lib_dir, where the host's GPU ledger is "
	    "(default " WARD_LIB_DEFAULT_DIR ")\n"
	    "ROOTS: --proc-root DIR --dev-root DIR --cdi-dir DIR...\n"
	    "AUDIT: --audit-dir DIR (gpu-lease and gpu-wipe lines, see ward-audit-hook(8))\n"
	    "WIPE:  --libcuda LIB --wipe-timeout SECONDS --wipe-slack-mb MB --wipe-held-max-mb "
	    "MB\n",
	    f);
}

static int die(struct ward_err *err)
{
	fprintf(stderr, "ward-gpu-hook: %s\n", err->msg);
	return 1;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
	    {"root", required_argument, NULL, 'r'},
	    {"lib-dir", required_argument, NULL, 'L'},
	    {"container", required_argument, NULL, 'c'},
	    {"rootfs", required_argument, NULL, 'R'},
	    {"tenant", required_argument, NULL, 't'},
	    {"gpus", required_argument, NULL, 'g'},
	    {"uuid", required_argument, NULL, 'u'},
	    {"compute", no_argument, NULL, 'C'},
	    {"proc-root", required_argument, NULL, 'P'},
	    {"dev-root", required_argument, NULL, 'D'},
	    {"cdi-dir", required_argument, NULL, 'I'},
	    {"libcuda", required_argument, NULL, 'l'},
	    {"wipe-timeout", required_argument, NULL, 'T'},
	    {"wipe-slack-mb", required_argument, NULL, 'S'},
	    {"wipe-held-max-mb", required_argument, NULL, 'H'},
	    {"audit-dir", required_argument, NULL, 'A'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c;

	*o = (struct opts){.lib_dir = WARD_LIB_DEFAULT_DIR,
			   .root = WARD_DEFAULT_ROOT,
			   .libcuda = "libcuda.so.1",
			   .proc_root = "/proc",
			   .dev_root = "/dev",
			   .cdi_dirs = xcalloc(1, sizeof(char *)),
			   .wipe_timeout = 600,
			   .wipe_slack_mb = 64,
			   .wipe_held_max_mb = 1024};
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			o->root = optarg;
			break;
		case 'L':
			o->lib_dir = optarg;
			break;
		case 'c':
			o->container = optarg;
			break;
		case 'R':
			o->rootfs = optarg;
			break;
		case 't':
			o->tenant = optarg;
			break;
		case 'g':
			o->gpus = optarg;
			break;
		case 'u':
			o->uuid = optarg;
			break;
		case 'C':
			o->compute = true;
			break;
		case 'P':
			o->proc_root = optarg;
			break;
		case 'D':
			o->dev_root = optarg;
			break;
		case 'I':
			o->cdi_dirs = strv_append(o->cdi_dirs, optarg);
			break;
		case 'l':
			o->libcuda = optarg;
			break;
		case 'A':
			o->audit_dir = optarg;
			break;
		case 'T':
		case 'S':
		case 'H':
			if (parse_u64(optarg, &v) < 0 || v == 0 || v > 1u << 24) {
				fprintf(stderr,
					"ward-gpu-hook: --%s: %s: expected a positive number\n",
					c == 'T'   ? "wipe-timeout"
					: c == 'S' ? "wipe-slack-mb"
						   : "wipe-held-max-mb",
					optarg);
				return -1;
			}
			*(c == 'T'   ? &o->wipe_timeout
			  : c == 'S' ? &o->wipe_slack_mb
				     : &o->wipe_held_max_mb) = (unsigned)v;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	return 0;
}

static struct ward_gpu_inventory *inventory(const struct opts *o, struct ward_err *err)
{
	struct ward_gpu_roots roots = {.proc = o->proc_root,
				       .dev = o->dev_root,
				       .cdi_dirs = o->cdi_dirs[0] ? o->cdi_dirs : NULL};
	struct ward_gpu_inventory *inv = ward_gpu_inventory_load(&roots, err);
	if (!inv)
		ward_wrap(err, "GPU inventory");
	return inv;
}

/* The state JSON the runtime writes on stdin: the container must be ours. */
static json_t *read_state(const char *container, bool need_pid, struct ward_err *err)
{
	json_t *st = ward_hook_read_state(0, need_pid, err);

	if (st && strcmp(json_string_value(json_object_get(st, "id")), container)) {
		json_decref(st);
		ward_fail(err, 0, "state on stdin: not container \"%s\"", container);
		return NULL;
	}
	return st;
}

/* root.path of the effective spec ward wrote into its state dir, made absolute against the
 * bundle and canonical, as ward mounted it. */
static char *effective_root(const char *root, const char *id, const char *bundle,
			    struct ward_err *err)
{
	cleanup_fd int rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_fd int dirfd = -1;
	cleanup_free char *text = NULL;
	json_t *spec;
	char *path = NULL;
	size_t len;

	if (rootfd < 0 ||
	    (dirfd = openat(rootfd, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		ward_fail_errno(err, "state of container \"%s\" in %s", id, root);
		return NULL;
	}
	if (!(text = read_file_at(dirfd, WARD_CONFIG_JSON, &len, err)))
		return NULL;
	spec = json_loadb(text, len, 0, NULL);
	if (json_is_string(json_object_get(json_object_get(spec, "root"), "path")))
		path = xstrdup(
		    json_string_value(json_object_get(json_object_get(spec, "root"), "path")));
	json_decref(spec);
	if (!path || (path[0] != '/' && (!bundle || bundle[0] != '/'))) {
		free(path);
		ward_fail(err, 0, "container \"%s\": no root.path in its effective config.json",
			  id);
		return NULL;
	}
	if (path[0] != '/') {
		char *abs = xasprintf("%s/%s", bundle, path);
		free(path);
		path = abs;
	}
	char *canon = realpath(path, NULL);
	if (!canon)
		ward_fail_errno(err, "container \"%s\": root %s", id, path);
	free(path);
	return canon;
}

/* The GPU is leased to this container of this tenant (the ledger says so). */
static int check_lease(const struct opts *o, const char *uuid, struct ward_err *err)
{
	struct ward_gpu_ledger l = {0};
	const struct ward_gpu_entry *e;
	bool ok = false;

	if (ward_gpu_ledger_read(o->lib_dir, &l, err) < 0)
		return -1;
	e = ward_gpu_ledger_find(&l, uuid);
	if (e && e->state == WARD_GPU_LEASED && e->tenant && !strcmp(e->tenant, o->tenant))
		for (size_t i = 0; i < e->n_holders; i++)
			ok |= !strcmp(e->holders[i].container, o->container) &&
			      !strcmp(e->holders[i].root, o->root);
	ward_gpu_ledger_clear(&l);
	if (!ok)
		return ward_fail(err, 0,
				 "GPU \"%s\" is not leased to container \"%s\" of tenant \"%s\"",
				 uuid, o->container, o->tenant);
	return 0;
}

static int cmd_inject(const struct opts *o, struct ward_err *err)
{
	struct ward_gpu_inventory *inv = NULL;
	const struct ward_gpu **gpus = NULL;
	cleanup_free char *list = NULL;
	cleanup_free char *root_path = NULL;
	json_t *st = NULL;
	size_t n = 0;
	char *save = NULL;
	int rc = -1;

	if (!o->container || !o->tenant || !o->gpus)
		return ward_fail(err, 0, "inject: --container, --tenant and --gpus are required");
	if (!(st = read_state(o->container, true, err)))
		goto out;
	/* The root as ward mounted it: --rootfs (ward's policy pass passes it), else from
	 * ward's copy of the effective spec. */
	if (o->rootfs && !(root_path = realpath(o->rootfs, NULL))) {
		ward_fail_errno(err, "--rootfs %s", o->rootfs);
		goto out;
	}
	if ((!root_path && !(root_path = effective_root(
				 o->root, o->container,
				 json_string_value(json_object_get(st, "bundle")), err))) ||
	    !(inv = inventory(o, err)))
		goto out;
	list = xstrdup(o->gpus);
	for (char *u = strtok_r(list, ",", &save); u; u = strtok_r(NULL, ",", &save)) {
		const struct ward_gpu *g = ward_gpu_find(inv, u);
		if (!g) {
			ward_fail(err, 0, "GPU \"%s\": no such GPU on this host", u);
			goto out;
		}
		if (check_lease(o, g->uuid, err) < 0)
			goto out;
		gpus = xrealloc(gpus, (n + 1) * sizeof(*gpus));
		gpus[n++] = g;
	}
	struct ward_inject in = {.inv = inv,
				 .gpus = gpus,
				 .n_gpus = n,
				 .compute = o->compute,
				 .pid = (pid_t)json_integer_value(json_object_get(st, "pid")),
				 .root_path = root_path};
	rc = ward_gpu_inject(&in, err);
	if (rc < 0)
		ward_wrap(err, "container \"%s\"", o->container);
	else if (o->audit_dir) { /* fails the hook, so the create: no unaudited lease */
		json_t *ev = json_pack("{s:s,s:s,s:[],s:O}", "event", "gpu-lease", "container",
				       o->container, "gpus", "pid", json_object_get(st, "pid"));
		for (size_t i = 0; i < n; i++)
			json_array_append_new(json_object_get(ev, "gpus"),
					      json_string(gpus[i]->uuid));
		rc = ward_audit_write_dir(o->audit_dir, o->tenant, ev, err);
		json_decref(ev);
	}
out:
	json_decref(st);
	free(gpus);
	ward_gpu_inventory_free(inv);
	return rc;
}

/* Wipe one dirty GPU: dirty -> wiping -> free or quarantined. 0 if it ends free. */
static int wipe_one(const struct opts *o, const struct ward_gpu_inventory *inv, const char *uuid)
{
	const struct ward_gpu *g = inv ? ward_gpu_find(inv, uuid) : NULL;
	struct ward_wipe_report rep = {0};
	struct ward_gpu_wipe_result res = {0};
	struct ward_err err = {0};
	dev_t rdevs[8];
	size_t n = 0;

	if (ward_gpu_wipe_begin(o->lib_dir, uuid, getpid(), &err) < 0)
		return die(&err), -1;
	if (!g) {
		snprintf(rep.reason, sizeof(rep.reason), "not found on this host");
	} else {
		for (size_t k = 0; k < g->n_nodes && n < 8; k++)
			rdevs[n++] = makedev(g->nodes[k].major, g->nodes[k].minor);
		struct ward_wipe_opts wo = {.libcuda = o->libcuda,
					    .uuid = g->uuid,
					    .proc_root = o->proc_root,
					    .rdevs = rdevs,
					    .n_rdevs = n,
					    .timeout_s = o->wipe_timeout,
					    .slack_bytes = (uint64_t)o->wipe_slack_mb << 20,
					    .held_max = (uint64_t)o->wipe_held_max_mb << 20};
		if (ward_gpu_wipe(&wo, &rep, &err) < 0 && !rep.reason[0])
			snprintf(rep.reason, sizeof(rep.reason), "%.500s", err.msg);
	}
	res = (struct ward_gpu_wipe_result){.ok = rep.ok,
					    .bytes = rep.bytes,
					    .total = rep.total,
					    .seconds = rep.seconds,
					    .reason = rep.ok ? NULL : rep.reason};
	ward_err_clear(&err);
	if (ward_gpu_wipe_end(o->lib_dir, uuid, &res, &err) < 0)
		return die(&err), -1;
	if (o->audit_dir) { /* the wipe's outcome stands; a lost line is reported */
		json_t *ev = json_pack(
		    "{s:s,s:s?,s:s,s:I,s:I,s:f,s:f,s:s,s:s?}", "event", "gpu-wipe", "container",
		    o->container, "gpu", uuid, "bytes", (json_int_t)rep.bytes, "total",
		    (json_int_t)rep.total, "seconds", rep.seconds, "gbps", rep.gbps, "result",
		    rep.ok ? "ok" : "quarantined", "reason", rep.ok ? NULL : rep.reason);
		if (ward_audit_write_dir(o->audit_dir, o->tenant, ev, &err) < 0)
			fprintf(stderr, "ward-gpu-hook: GPU %s: the wipe was not audited: %s\n",
				uuid, err.msg);
		json_decref(ev);
	}
	if (rep.ok) {
		fprintf(stderr,
			"ward-gpu-hook: GPU %s wiped: %llu of %llu bytes zeroed and verified in "
			"%.3f s (%.1f GB/s)\n",
			uuid, (unsigned long long)rep.bytes, (unsigned long long)rep.total,
			rep.seconds, rep.gbps);
		return 0;
	}
	fprintf(stderr,
		"ward-gpu-hook: GPU %s quarantined: %s; no tenant gets it until an admin resets it "
		"and runs `ward gpu release %s`\n",
		uuid, rep.reason, uuid);
	return -1;
}

static int cmd_release(const struct opts *o, struct ward_err *err)
{
	cleanup_strv char **released = NULL;
	struct ward_gpu_inventory *inv;
	json_t *st;
	int rc = 0;

	if (!o->container)
		return ward_fail(err, 0, "release: --container is required");
	st = read_state(o->container, false, err);
	if (!st)
		return -1;
	json_decref(st);
	if (ward_gpu_unlease(o->lib_dir, o->root, o->container, true, &released, err) < 0)
		return -1;
	if (!released || !released[0])
		return 0;
	inv = inventory(o, err);
	if (!inv) /* the GPUs stay dirty: never handed out unwiped */
		return -1;
	for (size_t i = 0; released[i]; i++)
		if (wipe_one(o, inv, released[i]) < 0)
			rc = -1;
	ward_gpu_inventory_free(inv);
	return rc < 0 ? ward_fail(err, 0, "container \"%s\": not every GPU could be wiped",
				  o->container)
		      : 0;
}

static int cmd_wipe(const struct opts *o, struct ward_err *err)
{
	struct ward_gpu_inventory *inv;
	int rc;

	if (!o->uuid)
		return ward_fail(err, 0, "wipe: --uuid is required");
	inv = inventory(o, err);
	if (!inv)
		return -1;
	rc = wipe_one(o, inv, o->uuid);
	ward_gpu_inventory_free(inv);
	return rc < 0 ? ward_fail(err, 0, "GPU \"%s\" was not wiped", o->uuid) : 0;
}

int main(int argc, char **argv)
{
	struct ward_err err = {0};
	struct opts o;
	const char *cmd;
	int rc;

	/* Nothing of the caller's: no cwd inside a container, no inherited umask. */
	if (chdir("/") < 0)
		return 1;
	umask(022);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (parse(argc - 1, argv + 1, &o) < 0)
		return 2;
	if (!strcmp(cmd, "inject"))
		rc = cmd_inject(&o, &err);
	else if (!strcmp(cmd, "release"))
		rc = cmd_release(&o, &err);
	else if (!strcmp(cmd, "wipe"))
		rc = cmd_wipe(&o, &err);
	else if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		rc = 0;
	} else {
		fprintf(stderr, "ward-gpu-hook: unknown command \"%s\"\n", cmd);
		usage(stderr);
		return 2;
	}
	strv_free(o.cdi_dirs);
	if (rc < 0 && err.msg[0])
		return die(&err);
	return rc < 0 ? 1 : 0;
}
