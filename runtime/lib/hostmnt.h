/* A container without a mount namespace of its own (a trusted tenant's spec that lists
 * none): its rootfs and the spec's mounts are made in the runtime's mount namespace, under
 * root.path. What create attached there is recorded in the state dir ("hostmnt") and
 * detached again by delete (and by a failed create), so nothing stays mounted on the host. */
#ifndef WARD_HOSTMNT_H
#define WARD_HOSTMNT_H

#include "err.h"

/* Record, in dirfd/hostmnt, the mount under root.path (under_fd: the root as opened when
 * the spec was checked) and the detached rootfs mount tree_fd, then attach tree_fd onto
 * under_fd (through the fds) and make it private (its own tree). The init gets tree_fd. */
int ward_hostmnt_attach(int dirfd, int under_fd, int tree_fd, const char *root_path,
			struct ward_err *err);

/* Detach (MNT_DETACH, with everything mounted below it, the container's own mounts too)
 * the rootfs mount dirfd/hostmnt names, and any mount stacked on it at root.path, then
 * remove the record. Mounts ward did not make are left alone. No record: nothing to do. */
int ward_hostmnt_release(int dirfd, struct ward_err *err);

#endif
