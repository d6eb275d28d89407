/* The pod's members in a state root: a container's claims about its pod (its tenant, its
 * sandbox, its user namespace, its pod uid) checked against the other containers' state
 * (state.json, else intent.json) and, for the sandbox, its namespaces in /proc. Apart from
 * pod.c because the state holds a pod: state.h includes pod.h, this file reads states. */
#ifndef WARD_POD_MEMBER_H
#define WARD_POD_MEMBER_H

#include "err.h"
#include "pod.h"

struct ward_hostfds;
struct ward_tenant;

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
/* podman's pod without an infra container (podman pod create --share none), or a member
 * that shares none of the infra's ipc, uts or network namespaces (--share pid), names its
 * pod in io.kubernetes.cri-o.SandboxID too: a container whose pod only that annotation
 * names, and which ward_pod_check_sandbox would refuse, is a container alone instead (its
 * own pod, its own ID slice: nothing of the named one's). containerd's sandbox-id keeps the
 * refusal. Call before the pod's tenant check (its lock and intent name the pod). */
void ward_pod_alone_unless_member(int rootfd, const char *id, struct ward_pod *pod,
				  const struct ward_hostfds *fds, const struct ward_tenant *t);

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

#endif
