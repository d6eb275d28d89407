/* Namespaces: which to create, which to join (by path), in the order the kernel needs. */
#ifndef WARD_NS_H
#define WARD_NS_H

#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>
#include <sys/utsname.h>

#include "err.h"
#include "hostfds.h"
#include "spec.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

#define WARD_NS_MAX 8

struct ward_ns_plan {
	int new_flags; /* CLONE_NEW* to create */
	int join_type[WARD_NS_MAX];
	int join_fd[WARD_NS_MAX];	    /* O_RDONLY|O_CLOEXEC fds of the namespaces to join */
	const char *join_path[WARD_NS_MAX]; /* their paths in the spec (for errors) */
	int n_join;
	/* CLONE_NEW* of the namespaces joined by path that the container's user namespace
	 * (new, or joined) does not own: its root has no privilege there (ward_ns_hint). */
	int foreign;
	/* The network namespace is joined by path and the container's user namespace (new,
	 * or joined) does not own it: the init cannot mount its sysfs (the runtime
	 * mounts it from the host side) and ports below ip_unprivileged_port_start cannot be
	 * bound. */
	bool net_foreign;
	/* Set net.ipv4.ip_unprivileged_port_start=0 in that network namespace, from the
	 * host side before the user namespace (as Kubernetes does for its pods): the
	 * container makes a new user namespace (a pod's sandbox), the netns is owned by the
	 * host's user namespace but is not the host's own, and the spec sets no such sysctl. */
	bool net_port_start;
};

/* The namespaces of the spec to create and to join. Those joined by path are the fds
 * held in fds (opened and checked once, ward_hostfds_open), duplicated; each is checked
 * again for its type ("linux.namespaces[1].path: /x: not a network namespace"). */
int ward_ns_plan(const struct ward_spec *spec, const struct ward_hostfds *fds,
		 struct ward_ns_plan *plan, struct ward_err *err);
void ward_ns_plan_close(struct ward_ns_plan *plan);

/* 1 if the namespace behind fd is the host's (pid 1's) or the runtime's own of that kind
 * ("net", "ipc", ... as in /proc/PID/ns), 0 if not, -1 if fd cannot be read. */
int ward_ns_fd_is_host(int fd, const char *proc);

/* Refuse a linux.sysctl key that would be written into the host's namespaces, as runc and
 * crun do, for every tenant: the IPC sysctls (kernel.msg*, sem, shm*, fs.mqueue.*) need an
 * IPC namespace, net.* a network namespace, kernel.hostname and kernel.domainname a UTS
 * namespace, each new or joined (plan's fd) and not the host's (pid 1's) or the runtime's
 * own; any other key is not namespaced and refused. */
int ward_ns_check_sysctls(const struct ward_spec *spec, const struct ward_ns_plan *plan,
			  struct ward_err *err);

/* The names (uname's nodename and domainname) of the uts namespace fd holds, read by a
 * short-lived child that joins it through the fd and calls uname(): the runtime's own
 * namespaces stay as they are, and nothing is written. */
int ward_ns_uts_names(int fd, struct utsname *out, struct ward_err *err);

/* setns into the planned namespaces whose type is in mask (user first if in mask). */
int ward_ns_join(const struct ward_ns_plan *plan, int mask, struct ward_err *err);
/* An EPERM of a step in the container's namespaces (join, mount, sethostname) where the
 * plan joins namespaces the container's user namespace does not own: say which, and what
 * to do, after the error's message. Other errors are left as they are. */
void ward_ns_hint(const struct ward_ns_plan *plan, struct ward_err *err);

/* Write uid_map/gid_map of pid (caller: parent in the initial user namespace). */
int ward_userns_write_maps(pid_t pid, const struct ward_idmaps *uids,
			   const struct ward_idmaps *gids, struct ward_err *err);

/* After unshare(CLONE_NEWTIME): write /proc/self/timens_offsets. */
int ward_timens_write_offsets(const struct ward_linux *lx, struct ward_err *err);

/* Bring up "lo" in the current network namespace. */
int ward_net_lo_up(struct ward_err *err);

#endif
