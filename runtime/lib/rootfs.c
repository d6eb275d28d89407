/* The container's filesystem view, top to bottom: propagation of "/", the rootfs bound
 * onto itself, spec mounts, /dev; pivot_root; sysctls, masked and read-only paths,
 * read-only root. Everything inside the rootfs goes through fds (path.h, mount.h). */
#include "rootfs.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "dev.h"
#include "log.h"
#include "mount.h"
#include "path.h"
#include "sys.h"
#include "util.h"

/* linux.rootfsPropagation -> MS_* for "/" (default rslave, as runc). */
static int root_propagation(const struct ward_spec *spec, unsigned long *flags,
			    struct ward_err *err)
{
	static const struct {
		const char *name;
		unsigned long flags;
	} t[] = {
	    {"shared", MS_SHARED},	   {"rshared", MS_SHARED | MS_REC},
	    {"slave", MS_SLAVE},	   {"rslave", MS_SLAVE | MS_REC},
	    {"private", MS_PRIVATE},	   {"rprivate", MS_PRIVATE | MS_REC},
	    {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
	};
	const char *p = spec->linux.rootfs_propagation;

	*flags = 0;
	if (!p || !*p)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(t); i++)
		if (strcmp(t[i].name, p) == 0)
			*flags = t[i].flags;
	if (!*flags)
		return ward_fail(err, EINVAL, "linux.rootfsPropagation: unknown value \"%s\"", p);
	return 0;
}

/* Refuse to touch mounts in the initial mount namespace (pid 1's), where a propagation
 * change would reach the whole host. */
static int check_own_mntns(struct ward_err *err)
{
	struct stat self, init;
	if (stat("/proc/self/ns/mnt", &self) < 0 || stat("/proc/1/ns/mnt", &init) < 0)
		return 0; /* cannot tell: the caller said it unshared */
	if (self.st_dev == init.st_dev && self.st_ino == init.st_ino)
		return ward_fail(err, EPERM,
				 "refusing to set up a rootfs in the host mount namespace");
	return 0;
}

/* The mount holding the rootfs (the rootfs itself if it is a mount point) becomes a slave,
 * so our bind does not propagate to its peers and pivot_root accepts it (not shared). */
static int rootfs_mount_not_shared(const char *root_path, struct ward_err *err)
{
	cleanup_free char *dir = xstrdup(root_path);
	for (;;) {
		char *slash;
		if (mount(NULL, dir, NULL, MS_SLAVE, NULL) == 0)
			return 0;
		if (errno != EINVAL)
			return ward_fail_errno(err, "make %s a slave mount", dir);
		slash = strrchr(dir, '/');
		if (!slash || strcmp(dir, "/") == 0)
			return 0;
		slash[slash == dir ? 1 : 0] = '\0';
	}
}

/* The root the runtime made on the host side from the fd it opened once (idmapped or
 * not), attached at root.path; that mount (the fd, not the name) is the root from here on.
 * A root.path the container's root cannot reach by name (podman's overlay under its 0700
 * graph root: the runtime opened it as the host's root) is not walked inside the user
 * namespace: the root is stacked on this namespace's "/" instead, which changes no lookup
 * until pivot_root (a path walk starts at the mount below) and is where pivot_root(".", ".")
 * takes it from. "/" is already a slave (ward_rootfs_prepare). */
static int attach_premounted_root(const char *root_path, int mnt, bool in_userns,
				  struct ward_err *err)
{
	if (rootfs_mount_not_shared(root_path, err) == 0) {
		if (sys_move_mount(mnt, "", AT_FDCWD, root_path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return ward_fail_errno(err, "attach the rootfs at %s", root_path);
		return 0;
	}
	if (err->errnum != EACCES || !in_userns)
		return -1;
	ward_debug("root %s: not searchable by the container's root; attached over /", root_path);
	ward_err_clear(err);
	if (sys_move_mount(mnt, "", AT_FDCWD, "/", MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return ward_fail_errno(err, "attach the rootfs (%s) over /", root_path);
	return 0;
}

/* Does a later spec mount (or /dev's nodes) go below mount i's destination? */
static bool has_submounts(const struct ward_spec *spec, size_t i)
{
	const char *d = spec->mounts[i].destination;
	size_t n = strlen(d);

	while (n > 1 && d[n - 1] == '/')
		n--;
	if (n == 4 && !strncmp(d, "/dev", 4))
		return true; /* ward_dev_setup makes the device nodes in it */
	for (size_t j = i + 1; j < spec->n_mounts; j++) {
		const char *s = spec->mounts[j].destination;
		if (!strncmp(s, d, n) && s[n] == '/')
			return true;
	}
	return false;
}

/* A read-only mount that has mounts below it (an "ro" /dev, runc's [ro /dev mount]): the
 * kernel cannot make their mount points in it. Made writable until they (and the device
 * nodes) are made, read-only again at the end of ward_rootfs_prepare. Returns the fd of
 * the mount to make read-only again, or -1: nothing to do, or the kernel keeps it
 * read-only (a locked mount), and the mounts below it need mount points that exist. */
static int writable_for_now(int rootfd, const struct ward_spec *spec, size_t i)
{
	__attribute__((cleanup(ward_mount_opts_free))) struct ward_mount_opts o = {0};
	struct ward_err e = {0};
	cleanup_fd int fd = -1;

	if (ward_mount_opts_parse(spec->mounts[i].options, &o, &e) < 0 ||
	    !(o.attr_set & MOUNT_ATTR_RDONLY) || !has_submounts(spec, i))
		return -1;
	fd = ward_path_open(rootfd, spec->mounts[i].destination, O_PATH | O_DIRECTORY, &e);
	if (fd < 0 || ward_mount_set_readonly(fd, false, &e) < 0) {
		ward_debug("mount %s stays read-only while the mounts below it are made: %s",
			   spec->mounts[i].destination, e.msg);
		return -1;
	}
	return steal_fd(fd);
}

/* The fds writable_for_now returned, one per spec mount (-1: none), closed at scope end. */
struct ro_later {
	size_t n;
	int *fd;
};

static void ro_later_close(struct ro_later *r)
{
	for (size_t i = 0; r->fd && i < r->n; i++)
		if (r->fd[i] >= 0)
			close(r->fd[i]);
	free(r->fd);
}

/* Propagation of "/", the rootfs mount at root.path: returns its fd. */
static int root_mount(const struct ward_spec *spec, bool in_userns, const int *premounted,
		      struct ward_err *err)
{
	unsigned long prop;
	cleanup_fd int rootfd = -1;

	if (!spec->root_path || spec->root_path[0] != '/')
		return ward_fail(err, EINVAL, "root.path must be absolute");
	if (root_propagation(spec, &prop, err) < 0)
		return -1;
	if (check_own_mntns(err) < 0)
		return -1;
	/* An unbindable "/" could not be bound below: that one is applied after pivot. */
	if (mount(NULL, "/", NULL, prop && !(prop & MS_UNBINDABLE) ? prop : MS_SLAVE | MS_REC,
		  NULL) < 0)
		return ward_fail_errno(err, "set propagation of /");
	if (premounted && premounted[spec->n_mounts] >= 0) {
		if (attach_premounted_root(spec->root_path, premounted[spec->n_mounts], in_userns,
					   err) < 0)
			return -1;
		rootfd = fcntl(premounted[spec->n_mounts], F_DUPFD_CLOEXEC, 3);
	} else if (rootfs_mount_not_shared(spec->root_path, err) < 0) {
		if (err->errnum == EACCES && in_userns)
			ward_wrap(err,
				  "the container's root (a user namespace's root) must be able "
				  "to search every directory down to %s",
				  spec->root_path);
		return -1;
	} else if (mount(spec->root_path, spec->root_path, NULL, MS_BIND | MS_REC, NULL) < 0) {
		return ward_fail_errno(err, "bind rootfs %s onto itself", spec->root_path);
	} else {
		rootfd = open(spec->root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (rootfd < 0)
		return ward_fail_errno(err, "open rootfs %s", spec->root_path);
	return steal_fd(rootfd);
}

/* No mount namespace of the container's own (a trusted tenant's spec without one): the
 * runtime's mount namespace, the host's, is left as it is ("/" and the mount holding
 * root.path keep their propagation). The runtime attached the rootfs mount at root.path
 * through the fd it opened and made it private (ward_hostmnt_attach), so that nothing
 * mounted below it propagates anywhere; it is used through that fd. */
static int host_ns_root(const struct ward_spec *spec, const int *premounted, struct ward_err *err)
{
	int rootfd;

	if (!premounted || premounted[spec->n_mounts] < 0)
		return ward_fail(err, EINVAL, "no mount namespace: the rootfs mount is missing");
	rootfd = fcntl(premounted[spec->n_mounts], F_DUPFD_CLOEXEC, 3);
	if (rootfd < 0)
		return ward_fail_errno(err, "open rootfs %s", spec->root_path);
	return rootfd;
}

/* The spec's mounts and /dev under the rootfs mount rootfd (taken over). */
static int mounts_in_root(const struct ward_spec *spec, int rootfd_in, int userns_fd,
			  bool in_userns, const int *premounted, struct ward_err *err)
{
	cleanup_fd int rootfd = rootfd_in;
	__attribute__((cleanup(ro_later_close))) struct ro_later ro = {spec->n_mounts, NULL};

	ro.fd = xcalloc(spec->n_mounts + 1, sizeof(int));
	for (size_t i = 0; i < spec->n_mounts; i++)
		ro.fd[i] = -1;
	for (size_t i = 0; i < spec->n_mounts; i++) {
		int r = premounted && premounted[i] >= 0
			    ? ward_mount_attach(rootfd, &spec->mounts[i], premounted[i], err)
			    : ward_mount_one(rootfd, &spec->mounts[i], userns_fd, err);
		if (r < 0)
			return -1;
		ro.fd[i] = writable_for_now(rootfd, spec, i);
	}
	if (ward_dev_setup(rootfd, spec, in_userns, err) < 0)
		return ward_wrap(err, "/dev");
	for (size_t i = 0; i < spec->n_mounts; i++)
		if (ro.fd[i] >= 0 && ward_mount_set_readonly(ro.fd[i], true, err) < 0)
			return ward_wrap(err, "mount %s: read-only again",
					 spec->mounts[i].destination);
	return steal_fd(rootfd);
}

int ward_rootfs_prepare(const struct ward_spec *spec, int userns_fd, bool in_userns,
			const int *premounted, struct ward_err *err)
{
	int rootfd = root_mount(spec, in_userns, premounted, err);
	if (rootfd < 0)
		return -1;
	return mounts_in_root(spec, rootfd, userns_fd, in_userns, premounted, err);
}

int ward_rootfs_prepare_host(const struct ward_spec *spec, int userns_fd, bool in_userns,
			     const int *premounted, struct ward_err *err)
{
	int rootfd = host_ns_root(spec, premounted, err);
	if (rootfd < 0)
		return -1;
	return mounts_in_root(spec, rootfd, userns_fd, in_userns, premounted, err);
}

/* mountinfo escapes space, tab, newline and backslash as \ooo: undo it in place. */
static void unescape_octal(char *s)
{
	char *w = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

/* --no-pivot: after chroot the host's mounts stay in the container's mount namespace, out
 * of reach by path but not for the kernel, which lets a nested user namespace mount a new
 * proc or sysfs wherever a full, unmasked one exists (mount_too_revealing). Every proc and
 * sysfs outside the rootfs is detached first, or covered by an empty tmpfs where that is
 * refused (runc's msMoveRoot does the same). These are mounts of our own namespace, named
 * before any container process exists. */
static int hide_host_pseudofs(int rootfd, struct ward_err *err)
{
	char fdpath[64], root[PATH_MAX];
	cleanup_free char *info = NULL;
	char *save = NULL;
	size_t rlen;
	ssize_t n;

	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", rootfd);
	n = readlink(fdpath, root, sizeof(root) - 1);
	if (n <= 0)
		return ward_fail_errno(err, "read the rootfs path");
	root[n] = '\0';
	rlen = (size_t)n;
	info = read_file_at(AT_FDCWD, "/proc/self/mountinfo", NULL, err);
	if (!info)
		return -1;
	for (char *line = strtok_r(info, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char mroot[PATH_MAX], point[PATH_MAX], type[64];
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", mroot, point) != 2 ||
		    sscanf(dash, " - %63s", type) != 1)
			continue;
		unescape_octal(mroot);
		unescape_octal(point);
		if (strcmp(mroot, "/") || (strcmp(type, "proc") && strcmp(type, "sysfs")) ||
		    (!strncmp(point, root, rlen) && (point[rlen] == '/' || point[rlen] == '\0')))
			continue;
		if (mount(NULL, point, NULL, MS_SLAVE | MS_REC, NULL) < 0) {
			if (errno == ENOENT)
				continue; /* below one already detached */
			return ward_fail_errno(err, "make %s (%s) a slave mount", point, type);
		}
		if (umount2(point, MNT_DETACH) == 0)
			continue;
		if ((errno != EINVAL && errno != EPERM) ||
		    mount("tmpfs", point, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=0") < 0)
			return ward_fail_errno(err, "hide the host's %s at %s", type, point);
	}
	return 0;
}

int ward_rootfs_pivot(int rootfd, bool no_pivot, struct ward_err *err)
{
	cleanup_fd int oldroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (oldroot < 0)
		return ward_fail_errno(err, "open /");
	/* pivot_root and MS_MOVE refuse a shared current root. */
	if (mount(NULL, "/", NULL, MS_SLAVE, NULL) < 0)
		return ward_fail_errno(err, "make / a slave mount");
	if (fchdir(rootfd) < 0)
		return ward_fail_errno(err, "chdir to rootfs");
	if (no_pivot) {
		char self[64], target[3];
		snprintf(self, sizeof(self), "/proc/self/fd/%d", rootfd);
		if (readlink(self, target, sizeof(target)) == 1 && target[0] == '/')
			return ward_fail(err, EINVAL,
					 "--no-pivot: the root is attached over / (its root.path "
					 "is not searchable by the container's root); run it "
					 "without --no-pivot");
		if (hide_host_pseudofs(rootfd, err) < 0)
			return ward_wrap(err, "--no-pivot");
		if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
			return ward_fail_errno(err, "move rootfs onto /");
		if (chroot(".") < 0)
			return ward_fail_errno(err, "chroot");
	} else {
		if (sys_pivot_root(".", ".") < 0)
			return ward_fail_errno(err, "pivot_root");
		/* The old root is stacked on the new one: detach it, as a slave so that
		 * nothing of the unmount propagates to the host. */
		if (fchdir(oldroot) < 0)
			return ward_fail_errno(err, "chdir to old root");
		if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
			return ward_fail_errno(err, "make old root rslave");
		if (umount2(".", MNT_DETACH) < 0)
			return ward_fail_errno(err, "detach old root");
	}
	if (chdir("/") < 0)
		return ward_fail_errno(err, "chdir /");
	return 0;
}

int ward_rootfs_chroot(int rootfd, struct ward_err *err)
{
	if (fchdir(rootfd) < 0)
		return ward_fail_errno(err, "chdir to rootfs");
	if (chroot(".") < 0)
		return ward_fail_errno(err, "chroot");
	if (chdir("/") < 0)
		return ward_fail_errno(err, "chdir /");
	return 0;
}

/* ---- after pivot ---- */

/* "net.ipv4.ip_forward" -> "sys/net/ipv4/ip_forward"; a key with '/' is taken as a path
 * already (its dots are part of names, as sysctl(8) reads it). */
static char *sysctl_path(const char *key)
{
	bool slashes = strchr(key, '/') != NULL;
	char *p = xasprintf("sys/%s", key);
	const char *c;

	if (!slashes)
		for (char *q = p + 4; *q; q++)
			if (*q == '.')
				*q = '/';
	for (c = p + 4;;) {
		size_t n = strcspn(c, "/");
		if (n == 0 || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.')) {
			free(p);
			return NULL;
		}
		if (!c[n])
			return p;
		c += n + 1;
	}
}

static bool net_key(const char *k)
{
	return !strncmp(k, "net.", 4) || !strncmp(k, "net/", 4);
}

/* The sysctls of spec through proc (a procfs fd): the net ones only (net), or all but the
 * net ones where the runtime wrote those (host_net_sysctls), or all. */
static int write_sysctls_in(int proc, const struct ward_spec *spec, bool net, struct ward_err *err)
{
	char *const *keys = spec->linux.sysctl_keys;
	char *const *values = spec->linux.sysctl_values;
	struct statfs sfs;

	if (fstatfs(proc, &sfs) < 0)
		return ward_fail_errno(err, "sysctl: statfs /proc");
	if (sfs.f_type != PROC_SUPER_MAGIC)
		return ward_fail(err, EINVAL, "sysctl: /proc is not a procfs mount");

	for (size_t i = 0; keys && keys[i]; i++) {
		if (net ? !net_key(keys[i]) : spec->linux.host_net_sysctls && net_key(keys[i]))
			continue;
		cleanup_free char *path = sysctl_path(keys[i]);
		struct open_how how = {
		    .flags = O_WRONLY | O_CLOEXEC,
		    .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			       RESOLVE_NO_XDEV,
		};
		cleanup_fd int fd = -1;
		const char *v = values && values[i] ? values[i] : "";

		if (!path)
			return ward_fail(err, EINVAL, "sysctl \"%s\": invalid name", keys[i]);
		fd = sys_openat2(proc, path, &how);
		if (fd < 0)
			return ward_fail_errno(err, "sysctl %s: open /proc/%s", keys[i], path);
		if (write_all(fd, v, strlen(v)) < 0)
			return ward_fail_errno(err, "sysctl %s=%s", keys[i], v);
	}
	return 0;
}

static int write_sysctls(int rootfd, const struct ward_spec *spec, struct ward_err *err)
{
	cleanup_fd int proc = -1;

	if (!spec->linux.sysctl_keys || !spec->linux.sysctl_keys[0])
		return 0;
	proc = ward_path_open(rootfd, "/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW, err);
	if (proc < 0)
		return ward_wrap(err, "sysctl");
	return write_sysctls_in(proc, spec, false, err);
}

int ward_rootfs_host_net_sysctls(const struct ward_spec *spec, struct ward_err *err)
{
	cleanup_fd int proc = -1;

	if (!spec->linux.host_net_sysctls || !spec->linux.sysctl_keys)
		return 0;
	proc = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (proc < 0)
		return ward_fail_errno(err, "sysctl: open /proc");
	return write_sysctls_in(proc, spec, true, err);
}

static bool missing(const struct ward_err *e)
{
	return e->errnum == ENOENT || e->errnum == ENOTDIR;
}

/* The container's /dev/null, checked to be the null device and not, say, a symlink to a
 * procfs file (CVE-2025-31133). */
static int open_dev_null(int rootfd, struct ward_err *err)
{
	struct stat st;
	cleanup_fd int fd = ward_path_open(rootfd, "/dev/null", O_PATH | O_NOFOLLOW, err);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		return ward_fail_errno(err, "stat /dev/null");
	if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != 1 || minor(st.st_rdev) != 3)
		return ward_fail(err, EPERM, "/dev/null is not the null device (char 1:3)");
	return steal_fd(fd);
}

static int mask_paths(int rootfd, char *const *paths, struct ward_err *err)
{
	cleanup_fd int null = -1;
	cleanup_fd int empty = -1; /* the first directory's read-only tmpfs, bound on the rest */

	for (size_t i = 0; paths && paths[i]; i++) {
		struct ward_err e = {0};
		struct stat st;
		cleanup_fd int fd = ward_path_open(rootfd, paths[i], O_PATH, &e);

		if (fd < 0 && missing(&e))
			continue;
		if (fd < 0) {
			*err = e;
			return -1;
		}
		if (fstat(fd, &st) < 0)
			return ward_fail_errno(err, "stat %s", paths[i]);
		if (S_ISDIR(st.st_mode)) {
			/* one empty superblock for all of them, as /dev/null for the files:
			 * the first gets a new tmpfs, the others a bind of it */
			if (empty < 0)
				empty = ward_mount_new_at("tmpfs", "tmpfs", NULL, MOUNT_ATTR_RDONLY,
							  fd, err);
			else if (ward_mount_bind_at(empty, "", fd, err) < 0)
				return ward_wrap(err, "%s", paths[i]);
			if (empty < 0)
				return ward_wrap(err, "%s", paths[i]);
			continue;
		}
		if (null < 0 && (null = open_dev_null(rootfd, err)) < 0)
			return ward_wrap(err, "%s", paths[i]);
		if (ward_mount_bind_at(null, "", fd, err) < 0)
			return ward_wrap(err, "%s: bind /dev/null", paths[i]);
	}
	return 0;
}

static int readonly_paths(int rootfd, char *const *paths, struct ward_err *err)
{
	for (size_t i = 0; paths && paths[i]; i++) {
		struct ward_err e = {0};
		cleanup_fd int fd = ward_path_open(rootfd, paths[i], O_PATH, &e);

		if (fd < 0 && missing(&e))
			continue;
		if (fd < 0) {
			*err = e;
			return -1;
		}
		if (ward_mount_setattr_fd(fd, MOUNT_ATTR_RDONLY, 0, true, err) < 0)
			return ward_wrap(err, "%s", paths[i]);
	}
	return 0;
}

/* root.readonly: the root mount itself, not recursively (as runc). mount_setattr only
 * adds MOUNT_ATTR_RDONLY, so locked flags in a user namespace are left alone. */
static int readonly_root(int rootfd, struct ward_err *err)
{
	struct mount_attr a = {.attr_set = MOUNT_ATTR_RDONLY};
	if (sys_mount_setattr_fd(rootfd, 0, &a) < 0)
		return ward_fail_errno(err, "make / read-only");
	return 0;
}

int ward_rootfs_finalize(const struct ward_spec *spec, struct ward_err *err)
{
	cleanup_fd int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	unsigned long prop;

	if (rootfd < 0)
		return ward_fail_errno(err, "open /");
	/* rootfsPropagation on the new root (it had to be non-shared for pivot_root). private
	 * too: the root the runtime cloned on the host side is a slave of the host's mount. */
	if (root_propagation(spec, &prop, err) < 0)
		return -1;
	if (prop && mount(NULL, "/", NULL, prop, NULL) < 0)
		return ward_fail_errno(err, "set propagation of / (rootfsPropagation %s)",
				       spec->linux.rootfs_propagation);
	/* sysctls first: /proc/sys becomes read-only just below. */
	if (write_sysctls(rootfd, spec, err) < 0)
		return -1;
	if (mask_paths(rootfd, spec->linux.masked_paths, err) < 0)
		return ward_wrap(err, "maskedPaths");
	if (readonly_paths(rootfd, spec->linux.readonly_paths, err) < 0)
		return ward_wrap(err, "readonlyPaths");
	if (spec->root_readonly && readonly_root(rootfd, err) < 0)
		return -1;
	return 0;
}

bool ward_rootfs_idmapped(const struct ward_spec *spec)
{
	return spec->own.rootfs_idmap && ward_spec_ns(spec, CLONE_NEWUSER);
}
