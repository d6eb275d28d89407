#include "hostmnt.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "path.h"
#include "sys.h"
#include "util.h"

#define RECORD "hostmnt"

/* The mount of fd: its unique (never reused) id, and the id /proc/self/mountinfo shows. */
static int mount_ids(int fd, uint64_t *unique, uint64_t *old)
{
	struct statx a, b;
	errno = 0;
	if (statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID_UNIQUE, &a) < 0 ||
	    !(a.stx_mask & STATX_MNT_ID_UNIQUE) ||
	    statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &b) < 0 ||
	    !(b.stx_mask & STATX_MNT_ID)) {
		if (!errno)
			errno = EOPNOTSUPP; /* a statx that answered without the mount ids */
		return -1;
	}
	*unique = a.stx_mnt_id;
	*old = b.stx_mnt_id;
	return 0;
}

int ward_hostmnt_attach(int dirfd, int under_fd, int tree_fd, const char *root_path,
			struct ward_err *err)
{
	struct mount_attr priv = {.propagation = MS_PRIVATE};
	uint64_t under, under_old, ours, ours_old;
	cleanup_free char *text = NULL;

	if (mount_ids(under_fd, &under, &under_old) < 0 || mount_ids(tree_fd, &ours, &ours_old) < 0)
		return ward_fail_errno(err,
				       "root %s: the mount ids (statx STATX_MNT_ID_UNIQUE, Linux "
				       "6.8) that delete needs to detach it again",
				       root_path);
	if (asprintf(&text, "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n%s", under, ours, ours_old,
		     root_path) < 0)
		return ward_fail_errno(err, "asprintf");
	if (write_file_at(dirfd, RECORD, O_CREAT | O_TRUNC, 0600, text, strlen(text), err) < 0)
		return -1;
	/* Onto the directory opened once when the spec was checked, never by name. */
	if (sys_move_mount(tree_fd, "", under_fd, "",
			   MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return ward_fail_errno(err, "attach the rootfs at %s", root_path);
	/* Made below a shared mount it is shared: private, its own tree, so that nothing
	 * mounted below it propagates anywhere. */
	if (sys_mount_setattr_fd(tree_fd, AT_RECURSIVE, &priv) < 0)
		return ward_fail_errno(err, "make the rootfs mount at %s private", root_path);
	return 0;
}

/* The unique id of the parent of mount id (in this mount namespace); 0 when it is not
 * there; -1 with errno (ENOSYS: a kernel without statmount). */
static int statmount_parent(uint64_t id, uint64_t *parent)
{
	struct ward_statmount sm;

	memset(&sm, 0, sizeof(sm));
	*parent = 0;
	if (sys_statmount(id, WARD_STATMOUNT_MNT_BASIC, &sm) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!(sm.mask & WARD_STATMOUNT_MNT_BASIC)) {
		errno = EOPNOTSUPP;
		return -1;
	}
	*parent = sm.mnt_parent_id;
	return 0;
}

/* The parent (mountinfo's second field) of mount old_id; 0 if it is not there. */
static uint64_t mountinfo_parent(uint64_t old_id)
{
	struct ward_err ignored;
	cleanup_free char *info = read_file_at(AT_FDCWD, "/proc/self/mountinfo", NULL, &ignored);
	char *save = NULL;

	for (char *l = info ? strtok_r(info, "\n", &save) : NULL; l;
	     l = strtok_r(NULL, "\n", &save)) {
		uint64_t id, parent;
		if (sscanf(l, "%" SCNu64 " %" SCNu64, &id, &parent) == 2 && id == old_id)
			return parent;
	}
	return 0;
}

/* Is mount old_id below mount ancestor (mountinfo ids)? */
static bool descends_from_mountinfo(uint64_t old_id, uint64_t ancestor)
{
	for (int depth = 0; depth < 64 && old_id; depth++) {
		old_id = mountinfo_parent(old_id);
		if (old_id == ancestor)
			return true;
	}
	return false;
}

bool ward_hostmnt_descends(uint64_t id, uint64_t old_id, uint64_t anc, uint64_t anc_old,
			   bool mountinfo_only)
{
	uint64_t parent;

	/* No statmount here (ENOSYS, or a filter): mountinfo's ids. */
	if (mountinfo_only || statmount_parent(id, &parent) < 0)
		return descends_from_mountinfo(old_id, anc_old);
	for (int depth = 0; depth < 64; depth++) {
		if (parent == anc)
			return true;
		if (!parent || parent == id) /* gone, or the namespace's root */
			return false;
		id = parent;
		if (statmount_parent(id, &parent) < 0)
			return false;
	}
	return false;
}

static int detach_fd(int fd, const char *what, const char *root, struct ward_err *err)
{
	char p[32];
	if (umount2(ward_fd_path(fd, p), MNT_DETACH) < 0)
		return ward_fail_errno(err, "detach %s at %s", what, root);
	return 0;
}

int ward_hostmnt_release(int dirfd, struct ward_err *err)
{
	struct ward_err e = {0};
	cleanup_free char *text = read_file_at(dirfd, RECORD, NULL, &e);
	uint64_t under, ours, ours_old;
	char *root;

	if (!text)
		return e.errnum == ENOENT ? 0 : (*err = e, ward_wrap(err, "state " RECORD));
	root = strchr(text, '\n');
	if (!root ||
	    sscanf(text, "%" SCNu64 " %" SCNu64 " %" SCNu64, &under, &ours, &ours_old) != 3)
		return ward_fail(err, EINVAL, "state " RECORD ": malformed");
	root++;
	/* Bounded: each round detaches one mount stacked at root.path, or ends. */
	for (int round = 0; round < 64; round++) {
		cleanup_fd int fd = open(root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		uint64_t top, top_old;
		if (fd < 0 && errno == ENOENT) {
			/* removed or renamed: a renamed parent takes our mount along */
			ward_warn(
			    "rootfs %s: gone; the mount ward attached there (unique id %" PRIu64
			    ") is not detached if it was moved with a renamed parent",
			    root, ours);
			break;
		}
		if (fd < 0 || mount_ids(fd, &top, &top_old) < 0)
			return ward_fail_errno(err, "rootfs %s: find its mount", root);
		if (top == under)
			break; /* ours is gone already */
		if (top == ours) {
			if (detach_fd(fd, "the rootfs mount", root, err) < 0)
				return -1;
			break;
		}
		/* Something on top: mounts the container stacked on its "/" sit on ours. */
		if (!ward_hostmnt_descends(top, top_old, ours, ours_old, false)) {
			ward_warn("rootfs %s: the mount there (id %" PRIu64
				  ") is not one ward made "
				  "for the container: left alone",
				  root, top_old);
			break;
		}
		if (detach_fd(fd, "a mount stacked on the rootfs", root, err) < 0)
			return -1;
	}
	if (unlinkat(dirfd, RECORD, 0) < 0 && errno != ENOENT)
		return ward_fail_errno(err, "remove state " RECORD);
	return 0;
}
