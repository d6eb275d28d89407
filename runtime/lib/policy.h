/* The tenant policy: pod spec (config.json as the orchestrator wrote it) + tenant config
 * -> the effective spec ward runs. Data in, data out: the few host facts the policy needs
 * (is this namespace the host's, what does this path resolve to, which device is this) come
 * through the callbacks in struct ward_policy_host, so the rules are unit-testable and
 * `ward policy explain` prints exactly what `create` runs.
 *
 * What it enforces (see man 5 ward-tenants): a user namespace always, mapped inside the
 * pod's ID range; idmapped rootfs and bind mounts; the tenant's seccomp filter (the pod's
 * own is stacked on top, never instead); bounded capabilities; noNewPrivileges; rlimit
 * caps; the tenant's AppArmor profile; masked and read-only paths; only allowed host paths,
 * devices, host namespaces and namespaced sysctls; privileged pods only when allowed, and
 * then still inside their user namespace, without host devices or host namespaces. */
#ifndef WARD_POLICY_H
#define WARD_POLICY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "err.h"
#include "gpu.h"
#include "idpool.h"

struct ward_policy_host {
	/* 1 if the namespace file at path is the host's (pid 1's) namespace of that kind
	 * ("net", "pid", ...), 0 if not, -1 with err if it cannot be opened. */
	int (*ns_is_host)(void *arg, const char *path, const char *kind, struct ward_err *err);
	/* The host ranges an existing user namespace maps (first uid and gid line suffices:
	 * every line must lie inside the pod's range, so the callback returns the envelope:
	 * lowest host ID and one past the highest). */
	int (*userns_envelope)(void *arg, const char *path, uint64_t uid[2], uint64_t gid[2],
			       struct ward_err *err);
	/* Canonical absolute path (symlinks and ".." resolved) of a host path, and its mode;
	 * NULL with err if it cannot be resolved. */
	char *(*resolve)(void *arg, const char *path, mode_t *mode, struct ward_err *err);
	/* Type ('c' or 'b') and numbers of a host device node. */
	int (*device)(void *arg, const char *path, char *type, int64_t *major, int64_t *minor,
		      struct ward_err *err);
	void *arg;
	/* The runtime's own soft and hard limit of an rlimit ("RLIMIT_NOFILE"), which the
	 * container inherits when its spec sets none (RLIM_INFINITY: UINT64_MAX); -1 if
	 * unknown. NULL: unknown (then no limit is added). */
	int (*rlimit)(void *arg, const char *type, uint64_t lim[2]);
	/* containers/storage's layer of container id (cstorage.h): 0 and *layer (malloc'd;
	 * NULL: none listed), -1 with err. NULL: no container has a layer there. */
	int (*storage_layer)(void *arg, const char *graph_root, const char *run_root,
			     const char *id, char **layer, struct ward_err *err);
};

struct ward_policy_in {
	const struct ward_config *cfg;
	const struct ward_tenant *tenant;
	const char *container_id;
	const char *bundle;	       /* absolute, canonical */
	struct ward_idrange ids;       /* the pod's host ID range */
	const char *ids_owner;	       /* pool owner, or NULL for a fixed range */
	bool apparmor_enabled;	       /* the host enforces AppArmor */
	const char *seccomp_json;      /* the tenant's profile (NULL: "unconfined") */
	const char *seccomp_priv_json; /* the profile for privileged pods */
	const struct ward_policy_host *host;
	/* GPUs: what the pod asks for (NULL or no refs: none) and the host's inventory
	 * (loaded only when some GPU is asked for); the state root holds the lease ledger the
	 * GPU hooks use. */
	const struct ward_gpu_request *gpu_req;
	const struct ward_gpu_inventory *gpu_inv;
	const char *state_root;
	/* containerd's state dir when the bundle (the real directory ward opened) is
	 * <state>/io.containerd.runtime.v2.task/<ns>/<container id>, else NULL: the pod's own
	 * directories under it are recognised like those under ward.json's "containerd". */
	const char *bundle_containerd_state;
	/* The pod's uid as its sandbox recorded it (a container of a pod cannot name another
	 * pod's); NULL: the container's own io.kubernetes.cri.sandbox-uid annotation. */
	const char *pod_uid;
	/* A pod member: its sandbox's user namespace (/proc/<pid>/ns/user, held by the
	 * caller), which the container joins; NULL for a sandbox or a container alone. */
	const char *pod_userns;
	/* A host fact beside those of host (called with host->arg): 0 when the filesystem of a
	 * bind source (as given to host->resolve) cannot be idmapped on this kernel (tmpfs
	 * before Linux 6.3: CRI's sandbox /dev/shm, kubelet's secret and memory-backed
	 * volumes), and idmap_mounts then leaves that mount unmapped; 1 otherwise. NULL: every
	 * source can be. */
	int (*idmappable)(void *arg, const char *path);
	/* containers/storage (podman, CRI-O): the ids whose userdata directories
	 * (<root|runroot>/overlay-containers/<id>/userdata: resolv.conf, hosts, hostname, shm,
	 * .containerenv) the container may bind; unused entries NULL. The caller names
	 * container_id when the bundle it opened is that container's userdata directory
	 * (ward_cstorage_bundle_is_userdata), and a pod member's sandbox id (a podman pod's
	 * infra container) when ward's state says the sandbox is a live ward container of the
	 * same tenant and pod whose bundle was its own userdata directory (pod_member.h). No
	 * id: no container's userdata is this one's. */
	const char *userdata_ids[2];
};

/* The effective spec (a new struct, a deep copy of pod the rules edit), or NULL with an
 * error naming the tenant and the rule: `tenant "a": host_paths: mounts[2] (/data): source
 * /etc is not under an allowed host path` (field paths are the pod's). notes (may be NULL)
 * collects one line per change ("added a user namespace ..."); lines starting with
 * "warning: " are for the log too. What the policy decides for later (the pod's own
 * seccomp filter, an idmapped root, the ID range, the GPUs) is ward's record (spec->own,
 * linux.seccomp_pod), never the pod's annotations. pod: as ward_spec_pod_from_json
 * decoded it, after the every-field gate (ward_policy_check_fields) passed its JSON. */
struct ward_spec;
struct ward_spec *ward_policy_apply(const struct ward_policy_in *in, const struct ward_spec *pod,
				    char ***notes, struct ward_err *err);
/* The edge of create and `policy explain`: the pod's config.json (parsed once) through the
 * every-field gate, decoded once into the typed spec (ward_spec_pod_from_json), the policy,
 * and the whole-document checks (ward_spec_check) on the effective spec. seccomp (may be
 * NULL) gets the name of the tenant's profile the policy loaded (its privileged one for a
 * privileged pod, which the effective spec need not show: a CAP_SYS_ADMIN asked only in
 * the inheritable or ambient set is cleared), borrowed from in->tenant; the audit's. */
struct ward_spec *ward_policy_apply_json(const struct ward_policy_in *in, json_t *pod,
					 char ***notes, const char **seccomp, struct ward_err *err);
/* How the note about a host without AppArmor starts: a fact of the host, not of the pod,
 * so create says it once per boot (ward check always). */
#define WARD_NOTE_NO_APPARMOR "warning: AppArmor is not enabled on this host"

/* A capability of containerd's default set: the policy drops it quietly where the tenant
 * does not allow it (every CRI pod and exec asks for these) instead of refusing. */
bool ward_policy_cap_droppable(const char *cap);

/* The masked and read-only paths (runc's plus ward's), NULL-terminated: added to every
 * effective spec, and the defaults of `ward spec`. */
extern const char *const ward_policy_masked_paths[];
extern const char *const ward_policy_readonly_paths[];

/* exec: what a tenant's exec process may ask. p is the process exec was asked to run
 * (--process FILE, else the container's process with the command line's overrides and
 * runc's AppArmor default); container is the container's own process (its effective spec's)
 * and policy_made says the policy made the container (its pod has an ID slice of ward's:
 * pod.h). Then p is made to fit the container's bounds in place: every capability set
 * within the container's bounding set (containerd's default capabilities the container
 * lacks are dropped, with a note; any other is refused), no_new_privileges kept if the
 * container has it, and its AppArmor profile the container's: apparmor_asked (may be NULL)
 * is the profile the pod's config.json asked for at create, before the policy replaced it
 * (the state's); engines such as podman ask it again on every exec, and p gets the
 * container's profile instead, with a note; any other profile is refused. A container the
 * policy did not make (a trusted tenant's) runs p as asked. Refusals name the tenant and the
 * rule: `tenant "a": capabilities: CAP_SYS_ADMIN is not in the container's bounding set`.
 * notes (may be NULL) collects what was changed. */
struct ward_process;
int ward_policy_exec(const char *tenant, bool policy_made, const struct ward_process *container,
		     const char *apparmor_asked, struct ward_process *p, char ***notes,
		     struct ward_err *err);

#endif
