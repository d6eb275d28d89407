/* What runs inside the container's namespaces, in order, top to bottom.
 *
 * stage 1 (child of the runtime): join namespaces by path, create the user namespace
 *   (the runtime writes its id maps), create the other namespaces, fork stage 2, report
 *   its pid, exit. Two stages because a new pid or time namespace only applies to
 *   children, and namespaces given by path are joined before the user namespace is made.
 *   A container that joins none and has no new time namespace skips it: the runtime
 *   clones stage 2 straight into all its new namespaces (clone3; ward_init_direct), writes
 *   the id maps and goes on as below (one process less to fork, two messages less).
 * stage 2 (the container init, pid 1 of a new pid namespace): wait until the runtime put
 *   it in its cgroup, cgroup namespace, hostname, lo, then the rootfs and mounts the
 *   runtime made on the host side (the cgroup's device program is in force before the
 *   init gets its root; cloned straight into its namespaces, the init does the steps
 *   before while the runtime loads it), the seccomp filters (compiled by the runtime
 *   meanwhile, in a memfd), prestart /
 *   createRuntime hooks (run by the runtime) and createContainer hooks, pivot_root,
 *   console, masked/readonly paths, rlimits/scheduler, seccomp (early if no
 *   noNewPrivileges), user, capabilities, noNewPrivileges, seccomp (late), "ready",
 *   block on exec.fifo until `start`, startContainer hooks, execve. */
#ifndef WARD_INIT_H
#define WARD_INIT_H

#include <stdbool.h>

#include "err.h"
#include "ns.h"
#include "seccomp.h"
#include "spec.h"
#include "state.h"

struct ward_init_args {
	const struct ward_spec *spec;
	const struct ward_ns_plan *plan;
	const struct ward_state *state; /* id, bundle, annotations for hook state JSON */
	int sync_fd;			/* our end of the socketpair */
	int fifo_fd;			/* exec.fifo, O_RDWR */
	int log_fd;			/* the runtime's log (CLOEXEC), kept for debug traces */
	bool no_pivot;
	bool no_new_keyring;
	int preserve_fds;
};

/* Runs in the forked child; never returns. */
__attribute__((noreturn)) void ward_init_stage1(const struct ward_init_args *a);
/* Whether the spec has prestart, createRuntime or createContainer hooks: the init then
 * waits at step 4 while the runtime puts the state in place and runs the first two;
 * without any it goes on. */
bool ward_init_hook_pause(const struct ward_spec *spec);
/* Whether the runtime may clone the init directly into the plan's new namespaces. */
bool ward_init_direct_ok(const struct ward_ns_plan *plan);
/* Runs in the child cloned into every new namespace of the plan (ward_init_direct_ok):
 * waits for its id maps, then is the container init (stage 2); never returns. */
__attribute__((noreturn)) void ward_init_direct(const struct ward_init_args *a);

/* Shared with exec: everything after the filesystem is in place, up to the filter.
 * Order: rlimits, io priority, scheduler, personality, seccomp if !noNewPrivileges,
 * user + groups, capabilities, noNewPrivileges, seccomp if noNewPrivileges. */
int ward_process_harden(const struct ward_process *p, const struct ward_seccomp_filters *sf,
			const struct ward_personality *pers, struct ward_err *err);
/* chdir to process.cwd inside the current root, refusing to end up outside it. */
int ward_process_chdir(const struct ward_process *p, struct ward_err *err);
/* The process's environment, plus HOME from the container's /etc/passwd for the user
 * (or "/") when the config sets none, as runc does. malloc'd vector. */
char **ward_process_env(const struct ward_process *p);
/* Find args[0] in the process's PATH inside the current root; malloc'd path. */
char *ward_process_find_exe(const struct ward_process *p, struct ward_err *err);

#endif
