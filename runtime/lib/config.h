/* The admin's configuration: /etc/ward/ward.json (global) and /etc/ward/tenants.d/<name>.json
 * (one file per tenant), or the built-in defaults when neither exists. Data only: what a
 * tenant may do is decided by policy.c, which tenant a pod belongs to by tenant.c.
 *
 * Files are strict JSON: unknown keys and wrong types are errors that name the file, the
 * line and the key ("tenants.d/a.json:7: seccomp: expected a string"). */
#ifndef WARD_CONFIG_H
#define WARD_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define WARD_CONFIG_DEFAULT_DIR "/etc/ward"
#define WARD_LIB_DEFAULT_DIR	"/var/lib/ward"
#define WARD_AUDIT_DEFAULT_DIR	"/var/log/ward"
/* systemd reserves 524288..1879048191 for container ID ranges; ward's built-in pool is
 * that range, in 65536-ID slices. */
#define WARD_POOL_DEFAULT_BASE 524288u
#define WARD_POOL_DEFAULT_SIZE (1879048192u - 524288u)
#define WARD_SLICE	       65536u

enum ward_id_mode {
	WARD_IDS_POD,	 /* one slice per pod from the pool, returned when the pod goes */
	WARD_IDS_TENANT, /* one slice per tenant from the pool, kept */
	WARD_IDS_RANGE,	 /* a fixed range written in the tenant file */
};

struct ward_rlimit_cap {
	char *type; /* "RLIMIT_NOFILE" */
	uint64_t max;
};

struct ward_tenant {
	char *name;
	char *file; /* where it was defined: "tenants.d/a.json" or "built-in" */
	/* The admin trusts this tenant's pods (infrastructure: CNI, device plugins): they run
	 * as their spec says, without ward's policy. Never the default. */
	bool trusted;

	enum ward_id_mode id_mode;
	uint32_t range_start, range_size; /* WARD_IDS_RANGE */

	char *seccomp;		  /* profile name ("default", "strict") or file, or "unconfined" */
	char *seccomp_privileged; /* the profile privileged pods get */
	char *apparmor;		  /* profile name or "unconfined" */
	bool allow_pod_apparmor;  /* a pod's own process.apparmorProfile is honoured */

	char **capabilities; /* the most a non-privileged pod gets (NULL-terminated) */
	bool allow_new_privileges;
	struct ward_rlimit_cap *rlimits;
	size_t n_rlimits;

	char **host_paths;	/* bind-mount sources allowed under these prefixes */
	char **root_paths;	/* root.path allowed under these prefixes (besides the bundle) */
	char **devices;		/* host device nodes a pod may have */
	char **host_namespaces; /* "network", "pid", "ipc", "uts" a pod may share with the host */
	bool privileged;	/* privileged pods (CAP_SYS_ADMIN) allowed */
	/* OCI hooks a pod may name (they run on the host, as root): absolute paths; one
	 * ending in '/' allows the programs directly in that directory. Empty by default. */
	char **hooks;

	bool idmap_rootfs; /* the rootfs is an idmapped mount (else files show as nobody) */
	bool idmap_mounts; /* bind mounts are idmapped */

	char *cgroup_json; /* tenant budget: linux.resources-shaped JSON text, or NULL */
	char **gpus;	   /* GPUs assigned to the tenant (indexes or UUIDs) */
};

enum ward_need { WARD_NEED_REQUIRED, WARD_NEED_OPTIONAL };

/* ward.json "gpu": where the host's GPU files are, and how GPUs are injected and wiped. */
struct ward_gpu_config {
	char *proc_root;	   /* "/proc" */
	char *dev_root;		   /* "/dev" */
	char **cdi_dirs;	   /* {"/etc/cdi", "/var/run/cdi"} */
	char *hook;		   /* the ward-gpu-hook binary (default: beside ward, installed) */
	char *libcuda;		   /* what the wipe dlopens: "libcuda.so.1" */
	uint32_t wipe_timeout;	   /* seconds (default 600) */
	uint32_t wipe_slack_mb;	   /* free memory a wipe may leave uncovered (default 64) */
	uint32_t wipe_held_max_mb; /* memory not free when the wipe starts (its own context,
				    * else another process: quarantine) (default 1024) */
};

struct ward_config {
	char *dir; /* the config directory read, or NULL for the built-in configuration */

	char *state_root; /* NULL: the --root default */
	char *lib_dir;	  /* persistent data (the ID pool) */
	uint32_t pool_base, pool_size;

	char *default_tenant;			    /* NULL: pods without a tenant are refused */
	char *tenant_annotation;		    /* "ward.dev/tenant" */
	char **namespace_annotations;		    /* Kubernetes namespace annotations, in order */
	char **namespace_keys, **namespace_tenants; /* namespace -> tenant (parallel) */
	/* ward.json "tenant_choice": which pods may pick their tenant with the tenant
	 * annotation, and from which set. Key: an unmapped namespace, "*" (any unmapped
	 * namespace without its own key) or "" (no namespace annotation: a bare bundle).
	 * Value: tenant names, or {"*"} for any tenant. Built-in: "" -> any. */
	char **choice_keys;
	char ***choice_sets; /* parallel to choice_keys */

	enum ward_need apparmor;       /* "required" or "optional" */
	bool missing_controllers_warn; /* "missing_controllers": "warn" */
	struct ward_gpu_config gpu;
	char *audit_dir;  /* per-tenant audit logs (default /var/log/ward) */
	char *audit_hook; /* the ward-audit-hook binary (default: installed, else beside ward) */
	/* ward.json "containerd": {"root", "state"} and "kubelet_root_dir": where a pod's own
	 * directories (its sandbox's in the CRI plugin's, its uid's in the kubelet's) are
	 * (defaults /var/lib/containerd, /run/containerd, /var/lib/kubelet). */
	char *containerd_root, *containerd_state, *kubelet_root_dir;
	/* ward.json "kubelet_cgroup_root": kubelet's cgroup roots (cgroupfs driver "/kubepods",
	 * systemd driver "kubepods.slice"; default both): a pod's container whose cgroupsPath
	 * is exactly its kubelet pod cgroup plus its id stays there (policy.c rule_cgroup). */
	char **kubelet_cgroup_roots;
	/* ward.json "containers_storage": {"root", "runroot"} (podman's, CRI-O's, buildah's
	 * containers/storage; defaults /var/lib/containers/storage, /run/containers/storage)
	 * and "docker_root" (default /var/lib/docker): a container's own directories there
	 * (<root|runroot>/overlay-containers/<id>/userdata, <docker_root>/containers/<id>) are
	 * its bind sources; another container's never. */
	char *storage_root, *storage_runroot, *docker_root;

	struct ward_tenant *tenants;
	size_t n_tenants;
};

/* Load from dir (NULL: $WARD_CONFIG, else /etc/ward if it exists, else built-in). A dir
 * named explicitly must exist. */
struct ward_config *ward_config_load(const char *dir, struct ward_err *err);
/* Parse from memory (unit tests): ward.json text (NULL = {}) and tenant files. */
struct ward_config *ward_config_parse(const char *global_json, const char *const *tenant_names,
				      const char *const *tenant_jsons, size_t n,
				      struct ward_err *err);
void ward_config_free(struct ward_config *c);

const struct ward_tenant *ward_config_tenant(const struct ward_config *c, const char *name);

/* The tenant as JSON (for `ward policy explain`), malloc'd. */
char *ward_tenant_json(const struct ward_tenant *t);

/* The process-wide configuration, loaded once (global --config). Setting the directory
 * drops a configuration already loaded. */
void ward_config_set_dir(const char *dir);
const struct ward_config *ward_config_get(struct ward_err *err);

#endif
