/* cgroup v2 through raw cgroupfs: find the hierarchy, place the container, freeze,
 * kill, list pids, remove. Limits (linux.resources) are cgroup_res.c, the device program
 * bpfdev.c, statistics cgroup_stats.c; this file only knows placement and lifecycle. */

#ifndef WARD_CGROUP_H
#define WARD_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "err.h"

/* Mount point of the cgroup2 hierarchy visible to this process: /sys/fs/cgroup if it is
 * cgroup2, else /sys/fs/cgroup/unified (hybrid hosts), else the first cgroup2 mount in
 * /proc/self/mountinfo. Cached. Fails if there is none. */
const char *ward_cgroup_v2_root(struct ward_err *err);

/* Absolute host path of the container's cgroup: <v2><cgroupsPath> for an absolute
 * cgroupsPath, <v2>/ward/<cgroupsPath> for a relative one, <v2>/<systemd path> for the
 * systemd "slice:prefix:name" form (ward_cgroup_systemd_path), <v2>/ward/<id> without one.
 * Rejects ".." components and any other relative form with ':'. malloc'd. */
char *ward_cgroup_path_for(const char *cgroups_path, const char *id, struct ward_err *err);

/* The cgroupfs path, relative to the cgroup2 root, that systemd gives the unit of a
 * "slice:prefix:name" cgroupsPath (Kubernetes' systemd cgroup driver): every '-' in the
 * slice name is a parent slice, the unit is the scope "prefix-name.scope":
 * "kubepods-besteffort-pod1.slice:cri-containerd:ID" ->
 * "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1.slice/
 * cri-containerd-ID.scope". NULL with err (saying what is wrong, without the path) for
 * anything else. Pure: no syscalls. malloc'd. */
char *ward_cgroup_systemd_path(const char *cgroups_path, struct ward_err *err);

/* mkdir -p of the cgroup. Fails if the leaf already exists and is populated. */
int ward_cgroup_create(const char *path, struct ward_err *err);
/* O_PATH|O_DIRECTORY fd of the cgroup, for clone3(CLONE_INTO_CGROUP). */
int ward_cgroup_open(const char *path, struct ward_err *err);
/* Kill every process in the cgroup with sig (cgroup.kill for SIGKILL when available). */
int ward_cgroup_signal_all(const char *path, int sig, struct ward_err *err);
/* Freeze or thaw, waiting for cgroup.events "frozen" to follow. */
int ward_cgroup_freeze(const char *path, bool freeze, struct ward_err *err);
bool ward_cgroup_is_frozen(const char *path);
/* cgroup.events: "populated" (a live process in the cgroup or below) and "frozen"; false
 * when the file cannot be read (both are then false). */
bool ward_cgroup_events(const char *path, bool *populated, bool *frozen);
/* Wait until fd is readable (a message, EOF, a pidfd's exit), looking at the cgroup every
 * second: with frozen_ok false, fails once the cgroup (a container's, "" for none) is frozen,
 * since a process in it would never write; so no wait on a child in it hangs for ever.
 * With frozen_ok, waits through a freeze (exec --ignore-paused). */
int ward_cgroup_wait_fd(int fd, const char *path, bool frozen_ok, struct ward_err *err);
/* Pids in cgroup.procs (malloc'd array). */
int ward_cgroup_pids(const char *path, pid_t **pids, size_t *n, struct ward_err *err);
/* Wait, at most timeout_ms, until no process is left in the cgroup or below: poll()s
 * cgroup.events for the kernel's change notification, no fixed step. 1: empty, 0: timed
 * out, -1: cgroup.events cannot be read or watched (the caller falls back to polling).
 * reads (may be NULL) counts the reads of cgroup.events. */
int ward_cgroup_wait_empty(const char *path, long timeout_ms, unsigned *reads);
/* Kill what is left, wait (bounded, event-driven) until empty, rmdir; a missing cgroup is
 * fine. */
int ward_cgroup_destroy(const char *path, struct ward_err *err);

#endif
