/* libFuzzer target: the tenant policy (ward_policy_apply_json: the every-field gate, the
 * typed decoding, ward_policy_apply) on a fuzzed config.json, for three
 * fixed tenants (one with host paths, a device, a host namespace and an rlimit cap; one
 * that may run privileged pods; the built-in "default"), with ward's built-in seccomp profiles and
 * a fake host as tests/unit/test_policy.c has it (and a fake GPU inventory). An effective spec the
 * policy returns is parsed again (ward_spec_parse), as create does, and what create would run must
 * keep the policy's promises (check_effective): a crash means the policy let something through. */
#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <sys/stat.h>

#include "audit.h"
#include "config.h"
#include "dev.h"
#include "fuzz.h"
#include "gpu.h"
#include "mount.h"
#include "path.h"
#include "policy.h"
#include "seccomp_profiles.h"
#include "spec.h"
#include "pod.h"
#include "tenant.h"
#include "util.h"
#include "../stubs/policy_host.h"

/* The fake host: tests/stubs/policy_host.h. */
static const struct ward_policy_host fake = FAKE_POLICY_HOST_RLIMITS;

static struct ward_config *cfg;
static char *profile, *profile_priv;

/* A fake GPU host: two whole GPUs and a MIG device of the first. Tenant "a" owns GPU 0
 * (and so its MIG device), tenant "p" GPU 1. */
#define GPU0 "GPU-3b2f1e7a-9c1d-4a5e-8b6f-0c1d2e3f4a5b"
#define GPU1 "GPU-8c2d6e1f-0a1b-4c2d-9e3f-4a5b6c7d8e9f"
#define MIG0 "MIG-1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"
static struct ward_gpu_node nodes0[] = {{"/dev/nvidia0", "/dev/nvidia0", 195, 0}};
static struct ward_gpu_node nodes1[] = {{"/dev/nvidia1", "/dev/nvidia1", 195, 1}};
static struct ward_gpu_node nodes_mig[] = {
    {"/dev/nvidia0", "/dev/nvidia0", 195, 0},
    {"/dev/nvidia-caps/nvidia-cap12", "/dev/nvidia-caps/nvidia-cap12", 237, 12},
    {"/dev/nvidia-caps/nvidia-cap13", "/dev/nvidia-caps/nvidia-cap13", 237, 13}};
static struct ward_gpu gpus[] = {{.uuid = GPU0,
				  .bus_id = "0000:3b:00.0",
				  .model = "NVIDIA H100",
				  .index = 0,
				  .minor = 0,
				  .nodes = nodes0,
				  .n_nodes = 1},
				 {.uuid = GPU1,
				  .bus_id = "0000:5e:00.0",
				  .model = "NVIDIA H100",
				  .index = 1,
				  .minor = 1,
				  .nodes = nodes1,
				  .n_nodes = 1},
				 {.uuid = MIG0,
				  .bus_id = "0000:3b:00.0",
				  .model = "1g.10gb",
				  .index = -1,
				  .minor = 0,
				  .mig = true,
				  .parent_uuid = GPU0,
				  .nodes = nodes_mig,
				  .n_nodes = 3}};
static struct ward_gpu_inventory inventory = {
    .gpus = gpus,
    .n = 3,
    .ctl = {"/dev/nvidiactl", "/dev/nvidiactl", 195, 255},
    .uvm = {"/dev/nvidia-uvm", "/dev/nvidia-uvm", 508, 0},
    .uvm_tools = {"/dev/nvidia-uvm-tools", "/dev/nvidia-uvm-tools", 508, 1},
    .caps_major = 237,
    .proc_root = "/proc",
    .dev_root = "/dev"};

static void setup(void)
{
	static const char *names[] = {"a", "p"};
	static const char *tenants[] = {
	    "{\"host_paths\": [\"/srv/a\"], \"devices\": [\"/dev/fuse\"], \"host_namespaces\": "
	    "[\"network\"], \"rlimits\": {\"RLIMIT_NOFILE\": 4096}, \"gpus\": [\"0\"]}",
	    "{\"privileged\": true, \"allow_pod_apparmor\": true, \"allow_new_privileges\": true, "
	    "\"gpus\": [\"" GPU1 "\"]}"};
	struct ward_err err = {0};

	cfg = ward_config_parse(NULL, names, tenants, 2, &err);
	profile = ward_seccomp_profile_load("default", &err);
	profile_priv = ward_seccomp_profile_load("privileged", &err);
	if (!cfg || !ward_config_tenant(cfg, "default") || !profile || !profile_priv)
		abort();
}

#define RANGE_START 1000000u
#define RANGE_SIZE  65536u

static void broken(const char *tenant, const char *what)
{
	fprintf(stderr, "policy broken for tenant \"%s\": %s\n", tenant, what);
	abort();
}

static bool under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

static void check_maps(const char *tenant, const struct ward_idmaps *m, bool need)
{
	if (need && !m->n)
		broken(tenant, "a user namespace without ID mappings");
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i].host_id < RANGE_START ||
		    (uint64_t)m->v[i].host_id + m->v[i].size > (uint64_t)RANGE_START + RANGE_SIZE)
			broken(tenant, "host IDs outside the pod's range");
}

static bool has(char *const *list, const char *s)
{
	for (size_t i = 0; list && list[i]; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* What the policy promises for every effective spec, checked on what create parses. */
static void check_effective(const struct ward_tenant *t, const struct ward_spec *s)
{
	const char *tenant = t->name;
	const struct ward_namespace *user = ward_spec_ns(s, CLONE_NEWUSER);
	static const struct {
		int type;
		const char *name; /* in host_namespaces; NULL: never the host's */
	} types[] = {{CLONE_NEWPID, "pid"},	{CLONE_NEWIPC, "ipc"}, {CLONE_NEWUTS, "uts"},
		     {CLONE_NEWNET, "network"}, {CLONE_NEWNS, NULL},   {CLONE_NEWCGROUP, NULL}};

	if (!user)
		broken(tenant, "no user namespace");
	if (user->path) {
		/* The fake host: only ".../inside" paths map the pod's range. */
		if (!strstr(user->path, "inside") || !strncmp(user->path, "/proc/1/", 8))
			broken(tenant, "joins a user namespace outside the pod's range");
	} else {
		check_maps(tenant, &s->linux.uid_mappings, true);
		check_maps(tenant, &s->linux.gid_mappings, true);
	}
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		const struct ward_namespace *ns = ward_spec_ns(s, types[i].type);
		if (ns && ns->path && !strncmp(ns->path, "/proc/1/", 8) &&
		    !(types[i].name && has(t->host_namespaces, types[i].name)))
			broken(tenant, "shares a host namespace the tenant does not allow");
	}
	if (!ward_spec_ns(s, CLONE_NEWNS))
		broken(tenant, "no mount namespace");
	for (size_t i = 0; i < s->n_mounts; i++) {
		const struct ward_mount *m = &s->mounts[i];
		struct ward_mount_opts o = {0};
		struct ward_err err = {0};
		bool bind, ok;

		if (ward_mount_opts_parse(m->options, &o, &err) < 0)
			continue; /* create fails on it */
		bind = o.bind || o.rbind || (m->type && !strcmp(m->type, "bind"));
		ward_mount_opts_free(&o);
		check_maps(tenant, &m->uid_mappings, false);
		check_maps(tenant, &m->gid_mappings, false);
		if (!bind)
			continue;
		ok = m->source &&
		     (under(m->source, "/b") ||
		      under(m->source, "/run/containerd/io.containerd.grpc.v1.cri/sandboxes") ||
		      under(m->source, "/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes") ||
		      under(m->source, "/var/lib/kubelet/pods"));
		for (size_t k = 0; !ok && m->source && t->host_paths && t->host_paths[k]; k++)
			ok = under(m->source, t->host_paths[k]);
		if (!ok)
			broken(tenant, "binds a host path the tenant may not have");
	}
	for (size_t i = 0; i < s->linux.n_devices; i++) {
		const struct ward_device *d = &s->linux.devices[i];
		/* fake_device: /dev/fuse is c 10:229 */
		bool ok = d->type == 'p' || (has(t->devices, "/dev/fuse") && d->type == 'c' &&
					     d->major == 10 && d->minor == 229);
		for (unsigned k = 0; !ok && k < ward_n_default_devices; k++)
			ok = d->type == ward_default_devices[k].type &&
			     d->major == ward_default_devices[k].major &&
			     d->minor == ward_default_devices[k].minor;
		if (!ok)
			broken(tenant, "a device node the tenant may not have");
	}
	if (s->process) {
		const struct ward_capabilities *c = &s->process->capabilities;
		char **sets[] = {c->bounding, c->effective, c->inheritable, c->permitted,
				 c->ambient};
		if (!t->allow_new_privileges && !s->process->no_new_privileges)
			broken(tenant, "noNewPrivileges is not set");
		for (size_t k = 0; !t->privileged && k < ARRAY_SIZE(sets); k++)
			for (size_t j = 0; sets[k] && sets[k][j]; j++)
				if (!strcmp(sets[k][j], "CAP_SYS_ADMIN"))
					broken(tenant,
					       "CAP_SYS_ADMIN for a tenant without privileged");
	}
	if (!s->linux.seccomp)
		broken(tenant, "no seccomp filter");
	if (s->own.gpus) { /* ward's record of the GPUs leased */
		char *list = xstrdup(s->own.gpus), *save = NULL;
		for (char *u = strtok_r(list, ",", &save); u; u = strtok_r(NULL, ",", &save))
			if (!strcmp(tenant, "a")   ? strcmp(u, GPU0) && strcmp(u, MIG0)
			    : !strcmp(tenant, "p") ? strcmp(u, GPU1) != 0
						   : true)
				broken(tenant, "leases a GPU the tenant does not own");
		free(list);
	}
}

static void apply(const char *tenant, json_t *pod, const struct ward_gpu_request *req,
		  bool apparmor)
{
	struct ward_policy_in in = {
	    FAKE_POLICY_IN(cfg, tenant), .apparmor_enabled = apparmor, .seccomp_json = profile,
	    .seccomp_priv_json = profile_priv, .host = &fake, .gpu_req = req,
	    /* As effective.c: the inventory only when GPUs are asked for. */
	    .gpu_inv = req->refs && req->refs[0] ? &inventory : NULL, .state_root = "/run/ward"};
	struct ward_err err = {0};
	char **notes = NULL;
	json_t *copy = json_deep_copy(pod);
	json_t *spec = policy_apply_to_json(&in, copy, &notes, &err);

	if (spec) {
		char *text = json_dumps(spec, JSON_COMPACT);
		struct ward_spec *s = ward_spec_parse(text, strlen(text), "/b", &err);
		if (s)
			check_effective(in.tenant, s);
		else
			fuzz_debug("tenant %s: effective spec: %s", tenant, err.msg);
		ward_spec_free(s);
		free(text);
		json_decref(spec);
	} else {
		fuzz_debug("tenant %s: %s", tenant, err.msg);
	}
	strv_free(notes);
	json_decref(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ward_gpu_request req = {0};
	struct ward_err err = {0};
	json_t *pod;

	if (!cfg)
		setup();
	/* As effective.c reads the pod: duplicate keys refused, an object. */
	pod = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(pod)) {
		json_decref(pod);
		return 0;
	}
	{
		/* Which tenant and pod the annotations name (effective.c does it first). */
		json_t *ann = json_object_get(pod, "annotations");
		char *why = NULL, *pod_id = ward_pod_of(ann, "c1");
		const struct ward_tenant *t = ward_tenant_select(cfg, ann, &why, &err);
		json_t *event = json_object();
		if (t)
			free(ward_pod_ids_owner(t, pod_id));
		free(why);
		free(pod_id);
		/* What the audit hook records of a spec (a trusted tenant's is the pod's own). */
		(void)ward_audit_spec_fields(event, pod);
		json_decref(event);
	}
	if (ward_gpu_request_from_json(pod, &req, &err) == 0) {
		apply("a", pod, &req, false);
		apply("p", pod, &req, true);
		apply("default", pod, &req, false);
		ward_gpu_request_clear(&req);
	}
	json_decref(pod);
	return 0;
}
