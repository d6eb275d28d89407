/* Raw syscall wrappers, defined once: the new mount API (open_tree, move_mount,
 * mount_setattr, fsopen/fsconfig/fsmount), openat2, pidfd_*, close_range, execveat,
 * pivot_root, seccomp, keyctl (bpf is bpfdev.c's, clone3 util.c's, ioprio_set and
 * sched_setattr process.c's: each with the structures only that file uses).
 * glibc 2.36 has some of them, older ones do not: use syscall() always. The constants an
 * older <sys/mount.h> lacks are defined here too. */
#ifndef WARD_SYS_H
#define WARD_SYS_H

#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mount.h> /* glibc >= 2.36: the new mount API constants (and <linux/mount.h>) */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* statx's mount ids (STATX_MNT_ID Linux 5.8, STATX_MNT_ID_UNIQUE 6.8, which Debian 12's
 * headers lack). */
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif
#ifndef MOUNT_ATTR_NOSYMFOLLOW
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif

static inline int sys_fsopen(const char *fstype, unsigned flags)
{
	return (int)syscall(SYS_fsopen, fstype, flags);
}

static inline int sys_fsconfig(int fd, unsigned cmd, const char *key, const void *value, int aux)
{
	return (int)syscall(SYS_fsconfig, fd, cmd, key, value, aux);
}

static inline int sys_fsmount(int fd, unsigned flags, unsigned attr)
{
	return (int)syscall(SYS_fsmount, fd, flags, attr);
}

static inline int sys_open_tree(int dfd, const char *path, unsigned flags)
{
	return (int)syscall(SYS_open_tree, dfd, path, flags);
}

static inline int sys_move_mount(int from_dfd, const char *from_path, int to_dfd,
				 const char *to_path, unsigned flags)
{
	return (int)syscall(SYS_move_mount, from_dfd, from_path, to_dfd, to_path, flags);
}

/* mount_setattr on the mount at fd itself (AT_EMPTY_PATH, plus extra flags: AT_RECURSIVE). */
static inline int sys_mount_setattr_fd(int fd, unsigned extra_flags, const struct mount_attr *a)
{
	return (int)syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | extra_flags, a, sizeof(*a));
}

/* Make the mount at fd idmapped through the user namespace behind userns_fd. */
static inline int sys_mount_idmap_fd(int fd, unsigned extra_flags, int userns_fd)
{
	struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns_fd};
	return sys_mount_setattr_fd(fd, extra_flags, &a);
}

static inline int sys_openat2(int dfd, const char *path, const struct open_how *how)
{
	return (int)syscall(SYS_openat2, dfd, path, how, sizeof(*how));
}

static inline int sys_pidfd_open(pid_t pid, unsigned flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

static inline int sys_pidfd_send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static inline int sys_close_range(unsigned first, unsigned last, unsigned flags)
{
	return (int)syscall(SYS_close_range, first, last, flags);
}

static inline int sys_execveat(int dfd, const char *path, char *const *argv, char *const *envp,
			       int flags)
{
	return (int)syscall(SYS_execveat, dfd, path, argv, envp, flags);
}

static inline int sys_pivot_root(const char *new_root, const char *put_old)
{
	return (int)syscall(SYS_pivot_root, new_root, put_old);
}

/* seccomp(2): op SECCOMP_SET_MODE_FILTER, SECCOMP_GET_ACTION_AVAIL, ... */
static inline long sys_seccomp(unsigned op, unsigned long flags, void *arg)
{
	return syscall(SYS_seccomp, op, flags, arg);
}

static inline long sys_keyctl(int op, unsigned long arg2)
{
	return syscall(SYS_keyctl, op, arg2);
}

/* statmount(2) (Linux 6.8; Debian 12's headers predate it) of the mount with that unique id
 * (statx STATX_MNT_ID_UNIQUE) in the caller's mount namespace: the fields mask asks for
 * (WARD_STATMOUNT_*) into *sm. 0, or -1 with errno (ENOENT: no such mount in this namespace;
 * ENOSYS, EINVAL: a kernel without it). */
#ifndef SYS_statmount
#define SYS_statmount 457
#endif
#define WARD_STATMOUNT_SB_BASIC	 0x00000001U
#define WARD_STATMOUNT_MNT_BASIC 0x00000002U

struct ward_statmount {
	uint32_t size, spare1;
	uint64_t mask;
	uint32_t sb_dev_major, sb_dev_minor;
	uint64_t sb_magic;
	uint32_t sb_flags, fs_type;
	uint64_t mnt_id, mnt_parent_id;
	uint32_t mnt_id_old, mnt_parent_id_old;
	uint64_t mnt_attr, mnt_propagation, mnt_peer_group, mnt_master, propagate_from;
	uint32_t mnt_root, mnt_point;
	uint64_t spare2[50]; /* and room for what newer kernels add */
};

static inline int sys_statmount(uint64_t mnt_id_unique, uint64_t mask, struct ward_statmount *sm)
{
	struct {
		uint32_t size, spare;
		uint64_t mnt_id, param;
	} req = {.size = 24, .mnt_id = mnt_id_unique, .param = mask};
	return (int)syscall(SYS_statmount, &req, sm, sizeof(*sm), 0);
}

#endif
