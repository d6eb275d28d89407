/* A container without a mount namespace of its own (a trusted tenant's spec that lists
 * none): its rootfs and the spec's mounts are made in the runtime's mount namespace, under
 * root.path. What create attached there is recorded in the state dir ("hostmnt") and
 * detached again by delete (and by a failed create), so nothing stays mounted on the host. */
#ifndef WARD_HOSTMNT_H
#define WARD_HOSTMNT_H

#include <stdbool.h>
#include <stdint.h>

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

/* Is the mount (unique id, mountinfo id) below mount anc (the same two)? Walks the unique
 * parent ids statmount(2) gives (Linux 6.8): a mount gone since, whose mountinfo id the
 * kernel gave to another, is no ancestor. A kernel without statmount (or mountinfo_only,
 * for the tests) walks /proc/self/mountinfo's parent ids, which the kernel reuses. */
bool ward_hostmnt_descends(uint64_t id, uint64_t old_id, uint64_t anc, uint64_t anc_old,
			   bool mountinfo_only);

#endif
