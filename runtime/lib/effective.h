/* The effective spec of a bundle: configuration -> tenant -> ID range -> policy. What
 * `create` runs and `ward policy explain` prints. This is where the policy meets the host:
 * the ID pool is written here and the host facts the policy asks for are looked up here. */
#ifndef WARD_EFFECTIVE_H
#define WARD_EFFECTIVE_H

#include <jansson.h>
#include <stdbool.h>

#include "config.h"
#include "err.h"
#include "hostfds.h"
#include "idpool.h"
#include "pod.h"
#include "spec.h"

struct ward_effective {
	struct ward_spec *spec; /* the effective spec, typed: create runs it, the state keeps it */
	const struct ward_tenant *tenant;
	char *why; /* how the tenant was chosen */
	/* The pod (pod.h): its identity, tenant, ID slice (ids_owner NULL for a fixed range),
	 * the namespaces it takes from its sandbox; the state keeps it. pod.tenant_ann: the
	 * pod's own ward.dev/tenant annotation (the state's annotations are the pod's, the
	 * tenant is ward's field). */
	struct ward_pod pod;
	bool ids_acquired; /* a pool user was added for the container */
	char **notes;	   /* what the policy changed */
	char *state_root;  /* the state root's path (the GPU ledger's holder) */
	bool gpus_leased;  /* the container holds GPUs in the ledger */
	/* The seccomp profile's name for the audit lines (the tenant's, its privileged one);
	 * NULL: the pod's own (a trusted tenant). */
	const char *audit_seccomp;
	/* The pod's process.apparmorProfile, before the policy (the state keeps it). */
	char *apparmor_asked;
	/* The host paths the pod names (root, bind sources, namespaces), opened once: the
	 * policy's host facts come from these fds and create mounts and joins them. */
	struct ward_hostfds fds;
};

/* Build the effective spec for container id from bundle (absolute). rootfd: the state
 * root, for the one-tenant-per-pod check and the GPU ledger (-1 to skip both). dry_run: do
 * not keep an ID allocation or lease GPUs (explain). On failure nothing is left allocated
 * or leased. */
int ward_effective_build(const struct ward_config *cfg, const char *bundle, const char *id,
			 int rootfd, bool dry_run, struct ward_effective *out,
			 struct ward_err *err);
/* The same for a create: dirfd is the container's state dir and intent its record
 * (intent.h), written before each allocation (tenant and pod, written under the pod's lock
 * that the tenant check takes; the ID-pool owner; the GPUs). */
struct ward_intent;
int ward_effective_build_at(const struct ward_config *cfg, const char *bundle, const char *id,
			    int rootfd, int dirfd, struct ward_intent *intent, bool dry_run,
			    struct ward_effective *out, struct ward_err *err);
/* Undo what a create's intent names in the ID pool and the GPU ledger (delete -f of a create
 * that died, and every delete): the ID-pool user is released; the GPUs are given back dirty
 * if something of the container ran (intent->ran), else clean. Idempotent. */
int ward_effective_release_intent(const struct ward_config *cfg, const char *state_root,
				  const char *id, const struct ward_intent *intent,
				  struct ward_err *err);
/* Give back the container's hold on its ID range and GPUs (a failed create). */
void ward_effective_undo(const struct ward_config *cfg, struct ward_effective *e, const char *id);
void ward_effective_clear(struct ward_effective *e);

/* delete: release the container's ID range, from its record's ids (own.h)
 * ("owner start size"). */
int ward_effective_release_ids(const struct ward_config *cfg, const char *ids_annotation,
			       const char *id, struct ward_err *err);

/* The ID pool the configuration describes (reserved: the tenants' fixed ranges; freed by
 * ward_idpool_config_free). */
/* containerd's state dir when the bundle is <state>/io.containerd.runtime.v2.task/<ns>/<id>
 * (a shim v2 bundle: ward's shim's or containerd-shim-runc-v2's), read from the directory
 * itself (its fd's path); else NULL. malloc'd. */
char *ward_bundle_containerd_state(const char *bundle, const char *id);

void ward_idpool_from_config(const struct ward_config *cfg, struct ward_idpool *p);
void ward_idpool_config_free(struct ward_idpool *p);

#endif
