/* An overlayfs root for a user namespace. overlayfs cannot be idmapped as a whole, but its
 * layers can: the overlay mounted at root_path (containerd's rootfs) is rebuilt as a new,
 * detached overlay whose lower layers are idmapped to the container's user namespace, with
 * the same upper and work dirs, so the image's files show with their owners inside and the
 * container's root can change them (copy-up writes them to the upper dir with the host IDs
 * of the container's range). */
#ifndef WARD_OVERLAY_H
#define WARD_OVERLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "err.h"

/* The overlay's options as the kernel shows them in mountinfo (super options), split:
 * lower layers top first, upper and work (NULL for a read-only overlay), the other
 * options as key or key=value, and whether it is read-only. */
struct ward_overlay_opts {
	char **lower;
	char *upper, *work;
	char **other;
	bool readonly;
};

/* Parse a mountinfo super options field (octal escapes, "\:" in layer paths). Refuses
 * data-only layers ("::") and layer paths that are not absolute (containerd's short paths,
 * relative to a directory we do not know). */
int ward_overlay_parse(const char *superopts, struct ward_overlay_opts *o, struct ward_err *err);
void ward_overlay_opts_clear(struct ward_overlay_opts *o);

/* The mount root_fd holds (an O_PATH fd of its mount point, the overlay's root; found in
 * mountinfo by its mount id, root_path only names it in errors) rebuilt with idmapped lower
 * layers: a detached mount fd, or -1. A fresh (empty, root-owned) upper dir is given to
 * the container's root (root_uid/root_gid, host IDs), as a remapping snapshotter does; in
 * one that is not, entries the host made (IDs below ids, the size of the container's range;
 * 0: none, the used upper dir keeps its owners) move to the same IDs of the range (podman's
 * etc/mtab in the container's own containers/storage layer). A volatile overlay's copy gets a
 * work dir of its own. Layers named by a symlink (containers/storage's l/) are followed. */
int ward_overlay_open_idmapped(int root_fd, const char *root_path, int userns_fd, uid_t root_uid,
			       gid_t root_gid, uint32_t ids, struct ward_err *err);

#endif
