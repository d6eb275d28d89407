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
struct ward_hostfds;

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
	bool locked;  /* lockfd is the pod's lock, held (not kept) */
	int lockfd;
};

#define WARD_POD_INIT                                                                              \
	{                                                                                          \
		.lockfd = -1                                                                       \
	}

/* The pod a container belongs to: its CRI sandbox id, else the container itself.
 * malloc'd. */
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

/* Refuse a container whose pod already has containers of another tenant (state root scan:
 * state.json, else intent.json, so creates under way and dead ones count as members). */
int ward_pod_check_tenant(int rootfd, const char *pod, const char *tenant, struct ward_err *err);

/* A container whose sandbox id (pod) is not its own id must be part of that pod: the
 * sandbox container exists in this state root (rootfd), is not itself in another pod, is
 * alive (the pid in its state, checked against its start time), and the container's
 * namespaces joined by path (fds: the held fds of hostfds.c) join at least one of the
 * sandbox's ipc, uts or network namespaces by path (the same nsfs inode as
 * /proc/<sandbox pid>/ns/X); those it joins go into pod->from_sandbox. Otherwise refused:
 * `container "c": annotation io.kubernetes.cri.sandbox-id=P: the container does not join
 * pod P's namespaces (why)`. */
int ward_pod_check_sandbox(int rootfd, const char *id, struct ward_pod *pod,
			   const struct ward_hostfds *fds, struct ward_err *err);
/* A pod member (pod != id) of a tenant that is not trusted joins its sandbox's user
 * namespace: open /proc/<sandbox pid>/ns/user into fds (held, like the spec's namespace
 * paths) after ward_pod_check_sandbox passed, and check that the pid is still the live
 * sandbox init once it is held. pod->userns: the name held, NULL when nothing is to be
 * joined (the sandbox itself, a container alone, or a spec that names its user namespace). */
int ward_pod_sandbox_userns(int rootfd, const char *id, struct ward_pod *pod,
			    struct ward_hostfds *fds, struct ward_err *err);

/* The pod uid a member container may claim: its sandbox's (its state's pod, else its
 * annotation), "" if the sandbox has none; NULL for the sandbox itself or without a state
 * root (rootfd < 0). malloc'd. */
char *ward_pod_sandbox_uid(int rootfd, const char *id, const char *pod);

/* state.json's "pod" object: a new object, and back (a missing or malformed object leaves
 * pod->id NULL). */
json_t *ward_pod_to_json(const struct ward_pod *pod);
void ward_pod_from_json(json_t *o, struct ward_pod *pod);

/* dst: what state.json keeps of src (neither tenant_ann nor the lock). */
void ward_pod_copy(struct ward_pod *dst, const struct ward_pod *src);

/* Free what pod holds and let go of its lock. */
void ward_pod_clear(struct ward_pod *pod);

#endif
