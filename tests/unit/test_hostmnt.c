/* hostmnt.c: a trusted tenant's rootfs attached in the runtime's mount namespace is
 * detached again with what is stacked on it, and a mount ward did not make is left alone,
 * even where the kernel gave it the mountinfo id of ward's mount (ids are reused; the
 * unique ids of statx/statmount, Linux 6.8, are not). Runs in a private mount namespace of
 * its own (root). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hostmnt.h"
#include "sys.h"
#include "tap.h"
#include "util.h"

static char dir[PATH_MAX], root[PATH_MAX + 8];

struct ids {
	uint64_t unique, old;
};

/* The mount at path (statx; 0s when the kernel lacks unique ids). */
static struct ids ids_of(const char *path)
{
	struct statx a, b;
	struct ids r = {0, 0};
	if (statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID_UNIQUE, &a) == 0 &&
	    (a.stx_mask & STATX_MNT_ID_UNIQUE) &&
	    statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &b) == 0) {
		r.unique = a.stx_mnt_id;
		r.old = b.stx_mnt_id;
	}
	return r;
}

/* A new detached tmpfs mount. */
static int new_tmpfs(void)
{
	cleanup_fd int fs = sys_fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0 || sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -1;
	return sys_fsmount(fs, FSMOUNT_CLOEXEC, 0);
}

/* Attach a new rootfs mount at root (ward_hostmnt_attach), recording it in dirfd. */
static struct ids attach(int dirfd)
{
	struct ward_err err = {0};
	cleanup_fd int under = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	cleanup_fd int tree = new_tmpfs();
	struct ids r = {0, 0};

	if (under < 0 || tree < 0 || ward_hostmnt_attach(dirfd, under, tree, root, &err) < 0) {
		printf("#   attach: %s\n", err.msg);
		return r;
	}
	return ids_of(root);
}

static void test_stacked(int dirfd, struct ids under)
{
	struct ward_err err = {0};
	struct ids ours = attach(dirfd), top;

	CHECK(ours.unique && ours.unique != under.unique, "the rootfs mount is attached at root");
	CHECK(mount("tmpfs", root, "tmpfs", 0, NULL) == 0, "a mount stacked on it");
	top = ids_of(root);
	CHECK(ward_hostmnt_descends(top.unique, top.old, ours.unique, ours.old, false),
	      "statmount: the stacked mount descends from ours");
	CHECK(ward_hostmnt_descends(top.unique, top.old, ours.unique, ours.old, true),
	      "mountinfo: the stacked mount descends from ours");
	CHECK(!ward_hostmnt_descends(ours.unique, ours.old, top.unique, top.old, false) &&
		  !ward_hostmnt_descends(ours.unique, ours.old, top.unique, top.old, true),
	      "ours does not descend from the stacked mount");
	CHECK(ward_hostmnt_release(dirfd, &err) == 0, "release");
	CHECK(ids_of(root).unique == under.unique, "release detached both: root is as before");
}

/* ours detached behind ward's back, another mount at root that got ours's mountinfo id, a
 * third stacked on that: release must leave both alone. */
static void test_reused_id(int dirfd)
{
	struct ward_err err = {0};
	struct ids ours = attach(dirfd), impostor = {0, 0}, top;

	CHECK(ours.unique != 0, "the rootfs mount is attached again");
	CHECK(umount2(root, MNT_DETACH) == 0, "detached by someone else");
	/* The kernel frees a mountinfo id after an RCU grace period and hands out the lowest
	 * free one: wait for it (bounded) to come back. */
	for (int i = 0; i < 200; i++) {
		if (mount("tmpfs", root, "tmpfs", 0, NULL) < 0)
			break;
		impostor = ids_of(root);
		if (impostor.old == ours.old)
			break;
		umount2(root, MNT_DETACH);
		impostor.old = 0;
		usleep(10000);
	}
	if (impostor.old != ours.old) {
		printf("ok %d - a mount that reuses ours's mountinfo id # skip the kernel gave "
		       "none\n",
		       ++tap_n);
		return;
	}
	CHECK(impostor.unique != ours.unique, "another mount with ours's mountinfo id");
	CHECK(mount("tmpfs", root, "tmpfs", 0, NULL) == 0, "a mount stacked on it");
	top = ids_of(root);
	CHECK(!ward_hostmnt_descends(top.unique, top.old, ours.unique, ours.old, false),
	      "statmount's unique ids: not below ours");
	CHECK(ward_hostmnt_release(dirfd, &err) == 0, "release");
	CHECK(ids_of(root).unique == top.unique,
	      "release left the mounts ward did not make alone (mountinfo ids would have "
	      "detached the top one)");
	umount2(root, MNT_DETACH);
	umount2(root, MNT_DETACH);
}

/* fsopen and statmount exist (valgrind 3.19 knows neither and answers ENOSYS). */
static bool have_syscalls(uint64_t unique)
{
	struct ward_statmount sm;
	cleanup_fd int fs = sys_fsopen("tmpfs", FSOPEN_CLOEXEC);

	if (fs < 0 && errno == ENOSYS)
		return false;
	return !(sys_statmount(unique, WARD_STATMOUNT_MNT_BASIC, &sm) < 0 && errno == ENOSYS);
}

int main(void)
{
	char tmpl[] = "/tmp/ward-test-hostmnt-XXXXXX";
	cleanup_fd int dirfd = -1;
	struct ids under;

	if (unshare(CLONE_NEWNS) < 0 || mount("none", "/", "none", MS_PRIVATE | MS_REC, NULL) < 0) {
		printf("ok 1 - hostmnt # skip a private mount namespace needs root: %s\n",
		       strerror(errno));
		tap_n = 1;
		TAP_DONE();
	}
	if (!mkdtemp(tmpl))
		return 1;
	snprintf(dir, sizeof(dir), "%s", tmpl);
	/* The whole test below a tmpfs of its own: it goes with the namespace. */
	CHECK(mount("tmpfs", dir, "tmpfs", 0, NULL) == 0, "a tmpfs for the test");
	snprintf(root, sizeof(root), "%s/root", dir);
	mkdir(root, 0755);
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	under = ids_of(root);
	if (!under.unique) {
		printf("ok %d - hostmnt # skip no STATX_MNT_ID_UNIQUE (Linux 6.8)\n", ++tap_n);
	} else if (!have_syscalls(under.unique)) {
		printf(
		    "ok %d - hostmnt # skip no fsopen/statmount (old kernel, or valgrind < 3.20)\n",
		    ++tap_n);
	} else {
		test_stacked(dirfd, under);
		test_reused_id(dirfd);
	}
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	TAP_DONE();
}
