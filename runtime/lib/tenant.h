/* Which tenant a pod belongs to: the tenant annotation, else the Kubernetes namespace
 * (annotations containerd's CRI plugin sets) mapped through ward.json "namespaces", else
 * the default tenant, else refused. Containers of one pod must share a tenant. */
#ifndef WARD_TENANT_H
#define WARD_TENANT_H

#include <jansson.h>

#include "config.h"
#include "err.h"
#include "hostfds.h"
#include "spec.h" /* WARD_ANN_SANDBOX_ID */

/* annotations: the pod spec's "annotations" object (may be NULL). *why (malloc'd) says how
 * the tenant was chosen. */
const struct ward_tenant *ward_tenant_select(const struct ward_config *c, json_t *annotations,
					     char **why, struct ward_err *err);

/* The pod a container belongs to: its CRI sandbox id, else the container itself.
 * malloc'd. */
char *ward_tenant_pod_of(json_t *annotations, const char *container_id);

/* The ID-pool owner for a container of tenant t in pod: "pod:<tenant>/<pod>" or
 * "tenant:<tenant>" (NULL for fixed ranges). malloc'd. */
char *ward_tenant_id_owner(const struct ward_tenant *t, const char *pod);

/* Refuse a container whose pod already has containers of another tenant (state root scan:
 * state.json, else intent.json, so creates under way and dead ones count as members). */
int ward_tenant_check_pod(int rootfd, const char *pod, const char *tenant, struct ward_err *err);

/* A container whose sandbox id (pod) is not its own id must be part of that pod: the
 * sandbox container exists in this state root (rootfd), is not itself in another pod, is
 * alive (the pid in its state, checked against its start time), and the container's
 * namespaces joined by path (fds: the held fds of hostfds.c) join at least one of the sandbox's
 * ipc, uts or network namespaces by path (the same nsfs inode as /proc/<sandbox pid>/ns/X).
 * Otherwise refused: `container "c": annotation io.kubernetes.cri.sandbox-id=P: the
 * container does not join pod P's namespaces (why)`. */
int ward_tenant_check_sandbox(int rootfd, const char *id, const char *pod,
			      const struct ward_hostfds *fds, struct ward_err *err);
/* A pod member (pod != id) of a tenant that is not trusted joins its sandbox's user
 * namespace: open /proc/<sandbox pid>/ns/user into fds (held, like the spec's namespace
 * paths) after ward_tenant_check_sandbox passed, and check that the pid is still the live
 * sandbox init once it is held. *path: the name held (malloc'd), NULL when nothing is to be
 * joined (the sandbox itself, a container alone, or a spec that names its user namespace). */
int ward_tenant_sandbox_userns(int rootfd, const char *id, const char *pod,
			       struct ward_hostfds *fds, char **path, struct ward_err *err);

/* Lock the pod host-wide: flock LOCK_EX on <lib_dir>/pods/<pod>.lock (made 0700/0600 if
 * missing; pod must be a valid container id). Held from the tenant check until the
 * container's intent (tenant, pod) is on disk, so concurrent creates of one pod check one
 * after the other. Returns the lock's fd (close it to unlock). */
int ward_tenant_lock_pod(const char *lib_dir, const char *pod, struct ward_err *err);

#endif
