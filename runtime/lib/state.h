/* Container state under <root>/<id>/: state.json, config.json, exec.fifo, per-container
 * flock. Status is derived from the live process, never trusted from disk. */
#ifndef WARD_STATE_H
#define WARD_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "own.h"
#include "pod.h"
#include "util.h"

#define WARD_DEFAULT_ROOT "/run/ward"

enum ward_status { WARD_CREATING, WARD_CREATED, WARD_RUNNING, WARD_PAUSED, WARD_STOPPED };

struct ward_state {
	char *id;
	char *oci_version;
	pid_t pid;
	uint64_t pid_start; /* /proc/PID/stat starttime: guards against pid reuse */
	char *bundle;
	char *rootfs;
	char *created; /* RFC3339 */
	char *owner;
	char *cgroup;	/* absolute host path of the container's cgroup, "" if none */
	unsigned hooks; /* bit (1 << enum ward_hook_kind) set for each kind the config has */
	char *tenant;	/* the tenant chosen at create, "" if none: ward's own field, so the
			 * annotations stay as the pod wrote them */
	char *audit;	/* ward_audit_lifecycle_base (JSON), NULL: no lifecycle lines */
	/* The AppArmor profile the pod's config.json asked for (process.apparmorProfile,
	 * before the policy replaced it; NULL: none): exec accepts it and runs the
	 * container's instead (ward_policy_exec). */
	char *apparmor_asked;
	/* The pod (pod.h) resolved at create: ward's own "pod" object; id NULL in a state.json
	 * written before it (ward_state_pod reads the annotations then). */
	struct ward_pod pod;
	/* ward's own record (own.h): state.json's "ward" object; for a state.json written
	 * before it, read from the annotations (which then hold the policy's ward.dev/ keys). */
	struct ward_own own;
	/* The poststop state only: the init's exit status (not kept). */
	bool has_exit_status;
	int exit_status;
	char **annotation_keys, **annotation_values; /* the pod's, as its config.json had them */
};

/* The container's tenant: st->tenant, or for a state.json written before that field the
 * policy's annotation ward.dev/tenant; NULL if neither. */
const char *ward_state_tenant(const struct ward_state *st);

/* The container's pod (sandbox id): st->pod, or for a state.json written before that field
 * its io.kubernetes.cri.sandbox-id annotation, else the container itself. */
const char *ward_state_pod(const struct ward_state *st);

/* The tenant policy made the container: its pod has an ID slice of ward's (an older
 * state.json: it has an ID range, own.ids). A trusted tenant's has none. */
bool ward_state_policy_made(const struct ward_state *st);

/* ward_id_valid (a container id) is util.h's. */

/* Open (creating with mode 0711 if missing) the state root. */
int ward_state_root_open(const char *root, struct ward_err *err);

/* Create <root>/<id> exclusively and lock it (LOCK_EX): made as <root>/@new-..., locked,
 * then renamed, so the id's dir is never seen unlocked while its create lives. Fails with
 * "container with given ID already exists". Returns the dir fd. */
int ward_state_create(int rootfd, const char *id, struct ward_err *err);
/* Open and lock an existing container dir (exclusive or shared). Fails with
 * `container "ID" does not exist` (also when the dir vanished while we waited). */
int ward_state_open(int rootfd, const char *id, bool exclusive, struct ward_err *err);
/* True if <root>/<name> is a state dir that nobody holds locked (LOCK_EX|LOCK_NB, let go
 * again) and that has no state.json: what a create that died leaves. *locked: someone
 * (a live create, delete, ...) holds it. */
bool ward_state_abandoned(int rootfd, const char *name, bool *locked);
/* Remove dirfd/state.json (not there: fine): the container no longer exists for anyone. */
int ward_state_unlink(int dirfd, const char *id, struct ward_err *err);
/* Remove <root>/<id> and everything in it. */
int ward_state_remove(int rootfd, const char *id, struct ward_err *err);

int ward_state_write(int dirfd, const struct ward_state *st, struct ward_err *err);
/* The same in two steps: the new state written aside, then put in place (one rename): create
 * writes it while the init makes its mounts, and puts it in place once the container is. */
int ward_state_write_staged(int dirfd, const struct ward_state *st, struct ward_err *err);
int ward_state_commit(int dirfd, struct ward_err *err);
int ward_state_read(int dirfd, struct ward_state *st, struct ward_err *err);
/* What ward_state_read does with the text of state.json (NUL-terminated): the fuzz target
 * (tests/fuzz/fuzz_state.c) parses from memory. */
int ward_state_parse(const char *text, struct ward_state *st, struct ward_err *err);
void ward_state_clear(struct ward_state *st);

/* Each container directory of the state root, in readdir order: fn(dirfd, id, arg) with an
 * O_PATH fd of it (valid IDs only; skip, when not NULL, is passed over). Stops at the first
 * fn that returns nonzero and returns that; 0 once all are seen, or if the root cannot be
 * read (an unreadable root fails later, with a better message). */
typedef int (*ward_state_each_fn)(int dirfd, const char *id, void *arg);
int ward_state_each(int rootfd, const char *skip, ward_state_each_fn fn, void *arg);

/* Refuse cgroup (the host path the container id would get) when it is, lies below or
 * holds the cgroup of another container of the state root: that container's kill --all,
 * pause or delete would reach this one's processes, and the reverse. */
int ward_state_check_cgroup(int rootfd, const char *id, const char *cgroup, struct ward_err *err);
/* A container of pod (sandbox id) kept in its kubelet pod cgroup dir (absolute): no other
 * pod's container of the state root has its cgroup in dir. */
int ward_state_check_pod_cgroup(int rootfd, const char *id, const char *pod, const char *dir,
				struct ward_err *err);

/* Live status from the process: pidfd + start time, exec.fifo presence, cgroup freeze. */
enum ward_status ward_state_status(int dirfd, const struct ward_state *st);
const char *ward_status_name(enum ward_status s);
/* True while the container init is the same live process (pidfd, or /proc without). */
bool ward_state_alive(const struct ward_state *st);
/* pidfd of the container init if it is still the same live process, else -1 (errno). */
int ward_state_pidfd(const struct ward_state *st);

/* runc-shaped state JSON (2-space indent, trailing newline); malloc'd. Its annotations are
 * the pod's; ward's own fields are "tenant" and the "ward" object (own.h's record, and
 * "exitStatus" in a poststop hook's state when it is known), present when not empty. */
char *ward_state_json(const struct ward_state *st, enum ward_status status, bool pretty);

#define WARD_EXEC_FIFO	 "exec.fifo"
#define WARD_STATE_JSON	 "state.json"
#define WARD_CONFIG_JSON "config.json"
/* Prefix of a state dir being made (not a valid id): see ward_state_create. */
#define WARD_STATE_NEW_PREFIX "@new-"

#endif
