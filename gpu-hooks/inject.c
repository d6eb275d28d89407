/* ward-gpu-hook inject: see inject.h. */
#include "inject.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mount.h"
#include "path.h"
#include "sys.h"
#include "util.h"

/* A detached mount and where it goes in the container. */
struct attach {
	int fd;
	char *dest; /* container path */
	enum ward_path_kind kind;
};

struct plan {
	struct attach *a;
	size_t n;
};

static bool planned(const struct plan *p, const char *dest)
{
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->a[i].dest, dest))
			return true;
	return false;
}

static void plan_add(struct plan *p, int fd, const char *dest, enum ward_path_kind kind)
{
	p->a = xrealloc(p->a, (p->n + 1) * sizeof(*p->a));
	p->a[p->n++] = (struct attach){fd, xstrdup(dest), kind};
}

static void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		close(p->a[i].fd);
		free(p->a[i].dest);
	}
	free(p->a);
}

/* The host node, verified once more through the fd that is then bound (no window between
 * the check and the bind). */
static int add_node(struct plan *p, const struct ward_gpu_node *n, struct ward_err *err)
{
	cleanup_fd int fd = open(n->host_path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int tree;

	if (planned(p, n->path))
		return 0; /* a MIG device's parent node, already there for the GPU or another MIG */
	if (fd < 0)
		return ward_fail_errno(err, "%s", n->host_path);
	if (fstat(fd, &st) < 0)
		return ward_fail_errno(err, "%s", n->host_path);
	if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != n->major || minor(st.st_rdev) != n->minor)
		return ward_fail(err, 0, "%s: not the character device %u:%u it was", n->host_path,
				 n->major, n->minor);
	tree = ward_mount_detached_bind(
	    fd, "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
	if (tree < 0)
		return ward_wrap(err, "%s", n->host_path);
	plan_add(p, tree, n->path, WARD_PATH_FILE);
	return 0;
}

/* Copy src (a small text file on the host) into dirfd/name, optionally rewriting
 * "ModifyDeviceFiles: 1" (the driver and its libraries must not make device nodes). */
static int copy_text(const char *src, int dirfd, const char *name, bool params,
		     struct ward_err *err)
{
	size_t len;
	cleanup_free char *text = read_file_at(AT_FDCWD, src, &len, err);
	char *m;

	if (!text) {
		if (err->errnum == ENOENT)
			return 0; /* not every driver has every file */
		return ward_wrap(err, "%s", src);
	}
	if (params && (m = strstr(text, "ModifyDeviceFiles: 1")))
		m[strlen("ModifyDeviceFiles: ")] = '0';
	return write_file_at(dirfd, name, O_CREAT | O_EXCL, 0444, text, len, err);
}

static int mkdir_in(int dirfd, const char *name, struct ward_err *err)
{
	if (mkdirat(dirfd, name, 0555) < 0 && errno != EEXIST)
		return ward_fail_errno(err, "mkdir %s", name);
	return 0;
}

/* /proc/driver as the container sees it: a read-only tmpfs with nvidia/{version,params}
 * and the leased GPUs' gpus/<bus>/information. Other GPUs do not exist there. */
static int add_proc_driver(struct plan *p, const struct ward_inject *in, struct ward_err *err)
{
	char *const data[] = {"mode=0555", "size=1m", "nr_inodes=256", NULL};
	const char *proc = in->inv->proc_root ? in->inv->proc_root : "/proc";
	cleanup_fd int mnt = ward_mount_detached_new("tmpfs", data, 0, err);
	cleanup_fd int nv = -1;
	cleanup_fd int gpus = -1;
	char src[4096];

	if (mnt < 0)
		return -1;
	if (mkdir_in(mnt, "nvidia", err) < 0 ||
	    (nv = openat(mnt, "nvidia", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdir_in(nv, "gpus", err) < 0 ||
	    (gpus = openat(nv, "gpus", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return err->msg[0] ? -1 : ward_fail_errno(err, "/proc/driver tmpfs");
	snprintf(src, sizeof(src), "%s/driver/nvidia/version", proc);
	if (copy_text(src, nv, "version", false, err) < 0)
		return -1;
	snprintf(src, sizeof(src), "%s/driver/nvidia/params", proc);
	if (copy_text(src, nv, "params", true, err) < 0)
		return -1;
	for (size_t i = 0; i < in->n_gpus; i++) {
		const struct ward_gpu *g = in->gpus[i];
		cleanup_fd int d = -1;
		if (mkdir_in(gpus, g->bus_id, err) < 0)
			return -1;
		d = openat(gpus, g->bus_id, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (d < 0)
			return ward_fail_errno(err, "/proc/driver tmpfs: %s", g->bus_id);
		snprintf(src, sizeof(src), "%s/driver/nvidia/gpus/%s/information", proc, g->bus_id);
		/* a MIG device shares its parent's bus: one copy */
		if (faccessat(d, "information", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		if (access(src, F_OK) == 0 && copy_text(src, d, "information", false, err) < 0)
			return -1;
	}
	/* Filled: now read-only (a detached mount's attributes are set on its fd). */
	struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
					   MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC};
	if (sys_mount_setattr_fd(mnt, 0, &a) < 0)
		return ward_fail_errno(err, "/proc/driver tmpfs: mount_setattr");
	plan_add(p, mnt, "/proc/driver", WARD_PATH_DIR);
	mnt = -1;
	return 0;
}

static int add_mount(struct plan *p, const struct ward_gpu_mount *m, struct ward_err *err)
{
	struct stat st;
	int tree;

	if (stat(m->host_path, &st) < 0)
		return ward_fail_errno(err, "CDI mount %s", m->host_path);
	tree = ward_mount_detached_bind(
	    AT_FDCWD, m->host_path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
	if (tree < 0)
		return ward_wrap(err, "CDI mount");
	plan_add(p, tree, m->container_path, S_ISDIR(st.st_mode) ? WARD_PATH_DIR : WARD_PATH_FILE);
	return 0;
}

/* The host ID that container ID 0 maps to (0 without a user namespace). */
static unsigned root_of(pid_t pid, const char *map)
{
	char path[64];
	unsigned inside, host, n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, map);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%u %u %u", &inside, &host, &n) == 3)
		if (inside == 0) {
			fclose(f);
			return host;
		}
	fclose(f);
	return 0;
}

static int enter_mntns(pid_t pid, struct ward_err *err)
{
	char path[64];
	cleanup_fd int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ward_fail_errno(err, "the container's mount namespace (%s)", path);
	if (setns(fd, CLONE_NEWNS) < 0)
		return ward_fail_errno(err, "enter the container's mount namespace");
	return 0;
}

int ward_gpu_inject(const struct ward_inject *in, struct ward_err *err)
{
	struct plan p = {0};
	cleanup_fd int rootfd = -1;
	unsigned uid, gid;
	int rc = -1;

	/* 1. Everything from the host, in our own mount namespace. */
	if (add_node(&p, &in->inv->ctl, err) < 0)
		goto out;
	if (in->compute) {
		if (!in->inv->uvm.major) {
			ward_fail(err, 0, "compute asked for and nvidia-uvm is not loaded");
			goto out;
		}
		if (add_node(&p, &in->inv->uvm, err) < 0 ||
		    (in->inv->uvm_tools.major && add_node(&p, &in->inv->uvm_tools, err) < 0))
			goto out;
	}
	for (size_t i = 0; i < in->n_gpus; i++) {
		for (size_t k = 0; k < in->gpus[i]->n_nodes; k++)
			if (add_node(&p, &in->gpus[i]->nodes[k], err) < 0)
				goto out;
		for (size_t k = 0; k < in->gpus[i]->n_mounts; k++)
			if (add_mount(&p, &in->gpus[i]->mounts[k], err) < 0)
				goto out;
	}
	for (size_t k = 0; k < in->inv->n_mounts; k++)
		if (add_mount(&p, &in->inv->mounts[k], err) < 0)
			goto out;
	if (add_proc_driver(&p, in, err) < 0)
		goto out;

	/* 2. The container's mount namespace, its rootfs, paths resolved inside it. Mount
	 * points are made as the container's root: its /dev is a tmpfs of its user namespace,
	 * where host root's IDs do not exist (EOVERFLOW). */
	uid = root_of(in->pid, "uid_map");
	gid = root_of(in->pid, "gid_map");
	if (enter_mntns(in->pid, err) < 0)
		goto out;
	rootfd = open(in->root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		ward_fail_errno(err, "container root %s", in->root_path);
		goto out;
	}
	setfsgid(gid);
	setfsuid(uid);
	for (size_t i = 0; i < p.n; i++) {
		cleanup_fd int dest = ward_path_mkdir_p(rootfd, p.a[i].dest, p.a[i].kind, err);
		if (dest < 0 || ward_mount_move(p.a[i].fd, dest, err) < 0) {
			ward_wrap(err, "container path %s", p.a[i].dest);
			goto out;
		}
	}
	rc = 0;
out:
	setfsuid(0);
	setfsgid(0);
	plan_free(&p);
	return rc;
}
