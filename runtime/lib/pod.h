/* The pod: the unit of Kubernetes, of the ID slice and of the user namespace. Its identity
 * (sandbox id, Kubernetes namespace, name and uid), its tenant, its ID slice, the
 * namespaces a member takes from its sandbox and its lock, resolved once at create from the
 * spec's annotations, the configuration and the ID pool (effective.c), kept in state.json
 * as ward's own "pod" object, and read from there by exec, update, metrics, the GPU code and
 * the audit, never from the annotations again. */
#ifndef WARD_POD_H
#define WARD_POD_H

#include <jansson.h>
#include <stdbool.h>

#include "err.h"
#include "idpool.h"

struct ward_tenant;

struct ward_pod {
	char *id;	     /* the pod: its sandbox's container id (a container alone: its own) */
	bool is_sandbox;     /* the container is the pod's sandbox, or alone */
	char *k8s_namespace; /* io.kubernetes.cri.sandbox-namespace, NULL if none */
	char *name;	     /* io.kubernetes.cri.sandbox-name, NULL if none */
	char *uid;	     /* the pod uid: a member's is its sandbox's; NULL if none */
	char *tenant;	     /* the tenant's name */
	char *tenant_ann;    /* the pod's own ward.dev/tenant annotation, NULL: none (not kept) */
	char *ids_owner;     /* the ID-pool owner of its slice, NULL: the tenant's fixed range */
	struct ward_idrange ids; /* the host uid/gid slice: base and size */
	/* The namespace-sharing plan: CLONE_NEW* of the namespaces a member takes from its
	 * sandbox (ipc, uts, network it joins by path; user for a member of a tenant that is
	 * not trusted); 0 for a sandbox or a container alone. */
	int from_sandbox;
	char *userns; /* the sandbox's user namespace held (/proc/<pid>/ns/user), NULL: none */
	/* The bundle create opened is the container's own containers/storage userdata
	 * directory (ward_cstorage_bundle_is_userdata): podman's and CRI-O's layout. */
	bool userdata;
	/* Not kept: the annotation that named the pod (containerd's sandbox-id, else CRI-O's
	 * and podman's SandboxID), for messages; and, for a member, that its live sandbox's
	 * state records userdata (ward_pod_check_sandbox): the member may bind the sandbox's
	 * userdata (a podman pod's resolv.conf, hosts, shm are its infra container's). */
	const char *sandbox_key;
	bool sandbox_userdata;
	bool locked; /* lockfd is the pod's lock, held (not kept) */
	int lockfd;
};

#define WARD_POD_INIT                                                                              \
	{                                                                                          \
		.lockfd = -1                                                                       \
	}

/* The pod a container belongs to: its sandbox id (containerd's CRI annotation, else CRI-O's
 * and podman's io.kubernetes.cri-o.SandboxID), else the container itself. malloc'd. */
char *ward_pod_of(json_t *annotations, const char *container_id);

/* The ID-pool owner for a container of tenant t in pod: "pod:<tenant>/<pod>" or
 * "tenant:<tenant>" (NULL for fixed ranges). malloc'd. */
char *ward_pod_ids_owner(const struct ward_tenant *t, const char *pod);

/* The pod of container id of tenant t, from the spec's annotations (may be NULL): its
 * identity, tenant and ID-pool owner (none for a trusted tenant; the slice itself is
 * acquired by the caller). Refused:
 * a sandbox id that is not a valid container id. pod: WARD_POD_INIT or cleared. */
int ward_pod_resolve(struct ward_pod *pod, json_t *annotations, const char *container_id,
		     const struct ward_tenant *t, struct ward_err *err);

/* The file of every pod's lock, in <lib_dir>/pods. */
#define WARD_POD_LOCK_FILE "pods.lock"

/* Lock the pod host-wide: an exclusive open file description lock (F_OFD_SETLKW) on one byte
 * of <lib_dir>/pods/pods.lock, at an offset hashed from the pod's id (made 0700/0600 if
 * missing; pod must be a valid container id). Held from the tenant check until the
 * container's intent (tenant, pod) is on disk, so concurrent creates of one pod check one
 * after the other. Returns the lock's fd (close it to unlock). */
int ward_pod_lock_at(const char *lib_dir, const char *pod, struct ward_err *err);
/* The same into pod->lockfd (pod->locked); ward_pod_unlock lets it go. */
int ward_pod_lock(struct ward_pod *pod, const char *lib_dir, struct ward_err *err);
void ward_pod_unlock(struct ward_pod *pod);

/* The pod's Kubernetes identity {namespace, name, uid}, only the fields it has (an empty object
 * for a container alone): a new object. */
json_t *ward_pod_identity_json(const struct ward_pod *pod);

/* state.json's "pod" object: a new object, and back (a missing or malformed object leaves
 * pod->id NULL). */
json_t *ward_pod_to_json(const struct ward_pod *pod);
void ward_pod_from_json(json_t *o, struct ward_pod *pod);

/* dst: what state.json keeps of src (neither tenant_ann nor the lock). */
void ward_pod_copy(struct ward_pod *dst, const struct ward_pod *src);

/* Free what pod holds and let go of its lock. */
void ward_pod_clear(struct ward_pod *pod);

#endif
