/* One spec mount -> the new mount API (fsopen/fsmount, open_tree, mount_setattr,
 * move_mount onto an fd resolved inside the rootfs). */
#ifndef WARD_MOUNT_H
#define WARD_MOUNT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"
#include "spec.h"

struct ward_mount_opts {
	bool bind, rbind;
	uint64_t attr_set, attr_clr;   /* MOUNT_ATTR_* for this mount only */
	uint64_t rattr_set, rattr_clr; /* MOUNT_ATTR_* applied with AT_RECURSIVE (r* options) */
	uint64_t propagation;	       /* MS_SHARED|MS_SLAVE|MS_PRIVATE|MS_UNBINDABLE or 0 */
	bool propagation_recursive;
	char **sb_flags; /* superblock flags passed as fsconfig flags ("sync", "dirsync", ...) */
	char **data;	 /* fs-specific "key=value" or "flag" options, in order */
	bool idmap, ridmap;
	bool tmpcopyup;
};

/* Every option name this parser recognises (NULL-terminated, static), for `features`. */
const char *const *ward_mount_option_names(void);

/* Parse m->options. Unknown options become fs data. Errors name the option. */
int ward_mount_opts_parse(char *const *options, struct ward_mount_opts *out, struct ward_err *err);
void ward_mount_opts_free(struct ward_mount_opts *o);

/* Mount spec mount m at its destination inside rootfd (creating the destination
 * like ward_path_mkdir_p: a file for file bind sources, else a directory).
 * userns_fd: the container's user namespace for idmap/ridmap (-1 if none).
 * Type "cgroup" mounts cgroup2. Errors read "mount /proc: fsopen proc: EPERM". */
int ward_mount_one(int rootfd, const struct ward_mount *m, int userns_fd, struct ward_err *err);

/* ward_mount_one in two halves, for idmap/ridmap in a user namespace: the kernel lets
 * only CAP_SYS_ADMIN over the source filesystem's user namespace (the host's) idmap a
 * mount, so an init that already entered the container's user namespace gets EPERM.
 * The runtime calls ward_mount_open on the host side (userns_fd: the container's user
 * namespace) and passes the fd to the init, which calls ward_mount_attach (runc does the
 * same with its mount fds). ward_mount_open: the detached mount, attributes and idmap
 * applied (fd, or -1). ward_mount_attach: destination, tmpcopyup, move_mount, propagation;
 * mnt_fd stays the caller's. */
int ward_mount_open(const struct ward_mount *m, int src_fd, int userns_fd, struct ward_err *err);
/* True for mounts that must be made by the runtime on the host side (idmap, ridmap,
 * mount-level uid/gid mappings: only the host's user namespace may idmap a mount) and for
 * every bind with a source: the runtime clones the source from the fd it opened once
 * (src_fd of ward_mount_open, hostfds.h), never by name. */
bool ward_mount_needs_host(const struct ward_mount *m);
/* A new sysfs of the network namespace netns_fd (so /sys/class/net shows the pod's
 * devices, not the host's), read-only, nosuid, nodev, noexec, detached: what the runtime
 * makes for m->host_sysfs, a netns the container's user namespace does not own. */
int ward_mount_open_netns_sysfs(int netns_fd, struct ward_err *err);
/* A user namespace with these mappings, held by an fd (a throwaway child unshares it, the
 * caller's side writes its maps and opens it). For idmapped mounts and host probes. */
int ward_userns_with_maps(const struct ward_idmaps *uids, const struct ward_idmaps *gids,
			  struct ward_err *err);
/* The rootfs as a detached recursive bind of root_fd (the root the runtime holds open;
 * root_path only names it in errors), a slave of the host's mount, and with idmap idmapped
 * to the container's user namespace (host side, like ward_mount_open); the init moves it
 * onto root.path and uses that mount. An overlayfs root
 * (containerd's, podman's) is rebuilt with idmapped lower layers instead (overlay.h);
 * root_uid and root_gid are the host IDs of the container's root, ids the size of its
 * range. */
int ward_mount_open_rootfs(int root_fd, const char *root_path, bool idmap, int userns_fd,
			   uid_t root_uid, gid_t root_gid, uint32_t ids, struct ward_err *err);
int ward_mount_attach(int rootfd, const struct ward_mount *m, int mnt_fd, struct ward_err *err);

/* Clone the tree at fd (O_PATH ok) and mount it over itself with attributes set
 * (used for readonly paths and root.readonly): set/clr are MOUNT_ATTR_*. */
int ward_mount_setattr_fd(int fd, uint64_t set, uint64_t clr, bool recursive, struct ward_err *err);
/* Make the mount at fd (the root of a mount) read-only or writable, in place (not
 * recursive, nothing stacked). */
int ward_mount_set_readonly(int fd, bool ro, struct ward_err *err);

/* Bind the mount tree at src_dirfd/src_path (non-recursive; src_path "" means the fd
 * itself, e.g. a verified O_PATH fd of /dev/null) onto dest_fd (from path.h). */
int ward_mount_bind_at(int src_dirfd, const char *src_path, int dest_fd, struct ward_err *err);

/* Mount a new instance of fstype (data: NULL-terminated fs options or NULL; attr:
 * MOUNT_ATTR_*) onto dest_fd; returns the new mount's fd (attached there now: a source
 * for ward_mount_bind_at elsewhere) or -1. Used for the tmpfs over masked directories. */
int ward_mount_new_at(const char *fstype, const char *source, char *const *data, uint64_t attr,
		      int dest_fd, struct ward_err *err);

/* Detached mounts, to be attached later with ward_mount_move (possibly in another mount
 * namespace: the GPU hook clones host device nodes, then enters the container's):
 * a non-recursive bind of dirfd/path ("" = the fd itself) with MOUNT_ATTR_* attr set, or
 * a new fstype instance. Return the mount fd, or -1 with err. */
int ward_mount_detached_bind(int dirfd, const char *path, uint64_t attr, struct ward_err *err);
int ward_mount_detached_new(const char *fstype, char *const *data, uint64_t attr,
			    struct ward_err *err);
int ward_mount_move(int mnt_fd, int dest_fd, struct ward_err *err);

/* True if idmapped mounts work here (probed once: mount_setattr MOUNT_ATTR_IDMAP on a
 * detached tmpfs/bind clone with a throwaway user namespace). Drives `features`. */
bool ward_mount_idmap_supported(void);
/* Whether this kernel can idmap a tmpfs mount (Linux 6.3; probed once). */
bool ward_mount_tmpfs_idmappable(void);

#endif
