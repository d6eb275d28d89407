/* The container's filesystem view, in order: propagation, rootfs bind, spec mounts,
 * /dev, pivot_root, masked/readonly paths, read-only root, sysctls. */
#ifndef WARD_ROOTFS_H
#define WARD_ROOTFS_H

#include <stdbool.h>

#include "err.h"
#include "spec.h"

/* Called in the container's (new) mount namespace, before pivot. Sets "/" propagation
 * per linux.rootfsPropagation (default rslave), binds spec->root_path onto itself,
 * performs spec->mounts in order, then /dev (ward_dev_setup).
 * userns_fd: container userns for idmap mounts, -1 if none. in_userns: the process is in
 * a new user namespace (device nodes are bind-mounted from the host, never mknod).
 * premounted: NULL, or one fd per spec mount: a detached mount the runtime made on the host
 * side (ward_mount_open) to attach instead of mounting here, -1 for the others; entry
 * [n_mounts] is the root (ward_mount_open_rootfs, idmapped or not), attached at root.path
 * and used through that fd, or -1 (the root is bound onto itself by name).
 * Returns an fd of the rootfs mount (O_PATH|O_DIRECTORY) or -1. */
int ward_rootfs_prepare(const struct ward_spec *spec, int userns_fd, bool in_userns,
			const int *premounted, struct ward_err *err);

/* ward_rootfs_prepare for a spec without a mount namespace (trusted tenants): in the
 * runtime's mount namespace, whose "/" and other mounts are left as they are. The rootfs
 * mount premounted[n_mounts], which the runtime attached at root.path and made private
 * (ward_hostmnt_attach), gets the spec's mounts and /dev below it. Then ward_rootfs_chroot. */
int ward_rootfs_prepare_host(const struct ward_spec *spec, int userns_fd, bool in_userns,
			     const int *premounted, struct ward_err *err);

/* Make rootfd the new root: pivot_root (old root detached), or with no_pivot move the
 * mount onto "/" and chroot. Afterwards cwd is "/". */
/* The policy asked for an idmapped root (spec->own.rootfs_idmap, own.h) and the container
 * has a user namespace. */
bool ward_rootfs_idmapped(const struct ward_spec *spec);
/* With spec->linux.host_net_sysctls: write the spec's net.* sysctls through the host's
 * /proc, in the network namespace the caller is in (stage 1, the host's root, before the
 * user namespace); ward_rootfs_finalize then writes only the others. */
int ward_rootfs_host_net_sysctls(const struct ward_spec *spec, struct ward_err *err);

int ward_rootfs_pivot(int rootfd, bool no_pivot, struct ward_err *err);

/* No mount namespace of the container's own: chroot into rootfd, nothing else. The host's
 * mounts (proc and sysfs too) stay where they are, out of reach by path only: for trusted
 * tenants. Afterwards cwd is "/". */
int ward_rootfs_chroot(int rootfd, struct ward_err *err);

/* After pivot: maskedPaths, readonlyPaths, sysctls (through /proc/sys, verified procfs),
 * then root.readonly. */
int ward_rootfs_finalize(const struct ward_spec *spec, struct ward_err *err);

#endif
