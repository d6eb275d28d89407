/* One spec mount -> the new mount API: a detached mount (fsopen/fsconfig/fsmount for a new
 * filesystem, open_tree(OPEN_TREE_CLONE) for a bind), its attributes (mount_setattr),
 * then move_mount onto the destination fd resolved inside the rootfs (path.h). */
#include "mount.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "overlay.h"
#include "path.h"
#include "sys.h"
#include "util.h"

#define MOVE_EMPTY	 (MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)
#define OVERLAYFS_MAGIC	 0x794c7630L
#define WARD_SYSFS_MAGIC 0x62656572L

/* ---- syscalls (sys.h) ---- */

/* move_mount of the detached mount at from_fd onto the mount point at to_fd. */
static int move_onto(int from_fd, int to_fd)
{
	return sys_move_mount(from_fd, "", to_fd, "", MOVE_EMPTY);
}

/* mount_setattr on the mount at fd itself (AT_EMPTY_PATH). */
static int setattr_fd(int fd, bool recursive, uint64_t set, uint64_t clr, uint64_t propagation,
		      int userns_fd)
{
	struct mount_attr a = {
	    .attr_set = set,
	    .attr_clr = clr,
	    .propagation = propagation,
	    .userns_fd = userns_fd >= 0 ? (uint64_t)userns_fd : 0,
	};
	return sys_mount_setattr_fd(fd, recursive ? AT_RECURSIVE : 0, &a);
}

/* ---- options ---- */

enum opt_kind {
	K_ATTR,	   /* MOUNT_ATTR_* bit */
	K_ATIME,   /* atime mode (an enum inside MOUNT_ATTR__ATIME) */
	K_PROP,	   /* propagation */
	K_BIND,	   /* bind */
	K_IDMAP,   /* idmap */
	K_SB,	   /* superblock flag, passed to fsconfig */
	K_IGNORED, /* recognised, nothing to do with the new mount API */
	K_TMPCOPYUP,
};

/* The kinds up to K_IDMAP also have a recursive form: the name with an "r" in front
 * (rro, rnoatime, rprivate, rbind, ridmap). */
static bool has_recursive_form(enum opt_kind k)
{
	return k <= K_IDMAP;
}

struct opt_def {
	const char *name;
	enum opt_kind kind;
	bool clear; /* for attribute bits */
	uint64_t value;
};

/* An attribute bit that the option sets, or clears; an atime mode; a propagation; an
 * option of a kind that carries no value. */
#define OPT(name, kind, clear, value)                                                              \
	{                                                                                          \
		name, kind, clear, value                                                           \
	}
#define SETS(name, bit)	     OPT(name, K_ATTR, false, bit)
#define CLEARS(name, bit)    OPT(name, K_ATTR, true, bit)
#define ATIME(name, mode)    OPT(name, K_ATIME, false, mode)
#define PROPAGATION(name, p) OPT(name, K_PROP, false, p)
#define PLAIN(name, kind)    OPT(name, kind, false, 0)

/* "norelatime" means strictatime and "atime"/"nostrictatime" the kernel default
 * (relatime), as mount(8) describes them. */
static const struct opt_def opt_defs[] = {
    SETS("ro", MOUNT_ATTR_RDONLY),
    CLEARS("rw", MOUNT_ATTR_RDONLY),
    SETS("nosuid", MOUNT_ATTR_NOSUID),
    CLEARS("suid", MOUNT_ATTR_NOSUID),
    SETS("nodev", MOUNT_ATTR_NODEV),
    CLEARS("dev", MOUNT_ATTR_NODEV),
    SETS("noexec", MOUNT_ATTR_NOEXEC),
    CLEARS("exec", MOUNT_ATTR_NOEXEC),
    PLAIN("sync", K_SB),
    PLAIN("async", K_SB),
    PLAIN("dirsync", K_SB),
    PLAIN("remount", K_IGNORED),
    PLAIN("mand", K_SB),
    PLAIN("nomand", K_SB),
    ATIME("atime", MOUNT_ATTR_RELATIME),
    ATIME("noatime", MOUNT_ATTR_NOATIME),
    CLEARS("diratime", MOUNT_ATTR_NODIRATIME),
    SETS("nodiratime", MOUNT_ATTR_NODIRATIME),
    ATIME("relatime", MOUNT_ATTR_RELATIME),
    ATIME("norelatime", MOUNT_ATTR_STRICTATIME),
    ATIME("strictatime", MOUNT_ATTR_STRICTATIME),
    ATIME("nostrictatime", MOUNT_ATTR_RELATIME),
    PLAIN("lazytime", K_SB),
    PLAIN("nolazytime", K_SB),
    PLAIN("iversion", K_IGNORED),
    PLAIN("noiversion", K_IGNORED),
    PLAIN("loud", K_IGNORED),
    PLAIN("silent", K_IGNORED),
    PLAIN("bind", K_BIND),
    PROPAGATION("private", MS_PRIVATE),
    PROPAGATION("shared", MS_SHARED),
    PROPAGATION("slave", MS_SLAVE),
    PROPAGATION("unbindable", MS_UNBINDABLE),
    SETS("nosymfollow", MOUNT_ATTR_NOSYMFOLLOW),
    CLEARS("symfollow", MOUNT_ATTR_NOSYMFOLLOW),
    PLAIN("idmap", K_IDMAP),
    PLAIN("tmpcopyup", K_TMPCOPYUP),
};

static const struct opt_def *opt_find(const char *name)
{
	for (size_t k = 0; k < ARRAY_SIZE(opt_defs); k++)
		if (strcmp(opt_defs[k].name, name) == 0)
			return &opt_defs[k];
	return NULL;
}

/* The definition of option o, and whether o is its recursive form. */
static const struct opt_def *opt_lookup(const char *o, bool *recursive)
{
	const struct opt_def *d = opt_find(o);
	*recursive = false;
	if (d || o[0] != 'r')
		return d;
	d = opt_find(o + 1);
	if (!d || !has_recursive_form(d->kind))
		return NULL;
	*recursive = true;
	return d;
}

const char *const *ward_mount_option_names(void)
{
	static char rnames[ARRAY_SIZE(opt_defs)][32];
	static const char *names[2 * ARRAY_SIZE(opt_defs) + 1];
	size_t n = 0;

	if (names[0])
		return names;
	for (size_t k = 0; k < ARRAY_SIZE(opt_defs); k++)
		names[n++] = opt_defs[k].name;
	for (size_t k = 0; k < ARRAY_SIZE(opt_defs); k++) {
		if (!has_recursive_form(opt_defs[k].kind))
			continue;
		snprintf(rnames[k], sizeof(rnames[k]), "r%s", opt_defs[k].name);
		names[n++] = rnames[k];
	}
	return names;
}

static void set_bits(uint64_t *set, uint64_t *clr, bool clear, uint64_t bits)
{
	if (clear) {
		*clr |= bits;
		*set &= ~bits;
	} else {
		*set |= bits;
		*clr &= ~bits;
	}
}

/* The atime modes are an enum: mount_setattr wants all of MOUNT_ATTR__ATIME in attr_clr. */
static void set_atime(uint64_t *set, uint64_t *clr, uint64_t mode)
{
	*clr |= MOUNT_ATTR__ATIME;
	*set = (*set & ~(uint64_t)MOUNT_ATTR__ATIME) | mode;
}

int ward_mount_opts_parse(char *const *options, struct ward_mount_opts *out, struct ward_err *err)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; options && options[i]; i++) {
		const char *o = options[i];
		bool r;
		const struct opt_def *d = opt_lookup(o, &r);

		if (!d) {
			if (o[0] == '\0' || o[0] == '=') {
				ward_mount_opts_free(out);
				return ward_fail(err, EINVAL, "mount option \"%s\": empty name", o);
			}
			out->data = strv_append(out->data, o); /* fs-specific */
			continue;
		}
		switch (d->kind) {
		case K_ATTR:
			set_bits(r ? &out->rattr_set : &out->attr_set,
				 r ? &out->rattr_clr : &out->attr_clr, d->clear, d->value);
			break;
		case K_ATIME:
			set_atime(r ? &out->rattr_set : &out->attr_set,
				  r ? &out->rattr_clr : &out->attr_clr, d->value);
			break;
		case K_PROP:
			out->propagation = d->value;
			out->propagation_recursive = r;
			break;
		case K_BIND:
			*(r ? &out->rbind : &out->bind) = true;
			break;
		case K_IDMAP:
			*(r ? &out->ridmap : &out->idmap) = true;
			break;
		case K_SB:
			out->sb_flags = strv_append(out->sb_flags, o);
			break;
		case K_IGNORED:
			break;
		case K_TMPCOPYUP:
			out->tmpcopyup = true;
			break;
		}
	}
	return 0;
}

/* The attributes of the options on the tree at fd: the recursive ones (rro, ...) on the
 * whole tree, then the others on its top mount. */
static int setattr_opts(int fd, const struct ward_mount_opts *o, struct ward_err *err)
{
	if ((o->rattr_set || o->rattr_clr) &&
	    setattr_fd(fd, true, o->rattr_set, o->rattr_clr, 0, -1) < 0)
		return ward_fail_errno(err, "mount_setattr (recursive)");
	if ((o->attr_set || o->attr_clr) &&
	    setattr_fd(fd, false, o->attr_set, o->attr_clr, 0, -1) < 0)
		return ward_fail_errno(err, "mount_setattr");
	return 0;
}

void ward_mount_opts_free(struct ward_mount_opts *o)
{
	strv_free(o->sb_flags);
	strv_free(o->data);
	o->sb_flags = o->data = NULL;
}

static void opts_cleanup(struct ward_mount_opts *o)
{
	ward_mount_opts_free(o);
}

/* ---- new filesystems ---- */

/* The last error the filesystem logged on the fs_context fd, if any ("tmpfs: Bad value
 * for 'mode'"). */
static void fs_log(int fsfd, char *buf, size_t len)
{
	char line[256];
	ssize_t n;
	buf[0] = '\0';
	while ((n = read(fsfd, line, sizeof(line) - 1)) > 0) {
		line[n] = '\0';
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == 'e' && line[1] == ' ')
			snprintf(buf, len, " (%s)", line + 2);
	}
}

static int fsconfig_fail(int fsfd, struct ward_err *err, const char *what)
{
	int saved = errno;
	char msg[300];
	fs_log(fsfd, msg, sizeof(msg));
	return ward_fail(err, saved, "fsconfig %s%s", what, msg);
}

/* A detached mount of a new instance of fstype. */
static int fs_create(const char *fstype, const char *source, char *const *sb_flags,
		     char *const *data, uint64_t attr, struct ward_err *err)
{
	cleanup_fd int fs = sys_fsopen(fstype, FSOPEN_CLOEXEC);
	int mnt;

	if (fs < 0)
		return ward_fail_errno(err, "fsopen");
	if (source && *source && sys_fsconfig(fs, FSCONFIG_SET_STRING, "source", source, 0) < 0)
		return fsconfig_fail(fs, err, "source");
	for (size_t i = 0; sb_flags && sb_flags[i]; i++)
		if (sys_fsconfig(fs, FSCONFIG_SET_FLAG, sb_flags[i], NULL, 0) < 0)
			return fsconfig_fail(fs, err, sb_flags[i]);
	for (size_t i = 0; data && data[i]; i++) {
		cleanup_free char *key = xstrdup(data[i]);
		char *value = strchr(key, '=');
		int r;
		if (value) {
			*value++ = '\0';
			r = sys_fsconfig(fs, FSCONFIG_SET_STRING, key, value, 0);
		} else {
			r = sys_fsconfig(fs, FSCONFIG_SET_FLAG, key, NULL, 0);
		}
		if (r < 0)
			return fsconfig_fail(fs, err, data[i]);
	}
	if (sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return fsconfig_fail(fs, err, "create");
	mnt = sys_fsmount(fs, FSMOUNT_CLOEXEC, (unsigned)attr);
	if (mnt < 0)
		return ward_fail_errno(err, "fsmount");
	return mnt;
}

int ward_mount_new_at(const char *fstype, const char *source, char *const *data, uint64_t attr,
		      int dest_fd, struct ward_err *err)
{
	cleanup_fd int mnt = fs_create(fstype, source, NULL, data, attr, err);
	if (mnt < 0)
		return ward_wrap(err, "%s", fstype);
	if (move_onto(mnt, dest_fd) < 0)
		return ward_fail_errno(err, "%s: move_mount", fstype);
	return steal_fd(mnt);
}

int ward_mount_bind_at(int src_dirfd, const char *src_path, int dest_fd, struct ward_err *err)
{
	unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (*src_path ? 0 : AT_EMPTY_PATH);
	cleanup_fd int tree = sys_open_tree(src_dirfd, src_path, flags);
	if (tree < 0)
		return ward_fail_errno(err, "open_tree");
	if (move_onto(tree, dest_fd) < 0)
		return ward_fail_errno(err, "move_mount");
	return 0;
}

int ward_mount_detached_bind(int dirfd, const char *path, uint64_t attr, struct ward_err *err)
{
	unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (*path ? 0 : AT_EMPTY_PATH);
	int tree = sys_open_tree(dirfd, path, flags);

	if (tree < 0)
		return ward_fail_errno(err, "open_tree %s", path);
	if (attr && setattr_fd(tree, false, attr, 0, 0, -1) < 0) {
		ward_fail_errno(err, "mount_setattr %s", path);
		close(tree);
		return -1;
	}
	return tree;
}

int ward_mount_detached_new(const char *fstype, char *const *data, uint64_t attr,
			    struct ward_err *err)
{
	int mnt = fs_create(fstype, fstype, NULL, data, attr, err);
	return mnt < 0 ? ward_wrap(err, "%s", fstype) : mnt;
}

int ward_mount_move(int mnt_fd, int dest_fd, struct ward_err *err)
{
	if (move_onto(mnt_fd, dest_fd) < 0)
		return ward_fail_errno(err, "move_mount");
	return 0;
}

int ward_mount_setattr_fd(int fd, uint64_t set, uint64_t clr, bool recursive, struct ward_err *err)
{
	unsigned flags =
	    OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0);
	cleanup_fd int tree = sys_open_tree(fd, "", flags);
	if (tree < 0)
		return ward_fail_errno(err, "open_tree");
	if (setattr_fd(tree, recursive, set, clr, 0, -1) < 0)
		return ward_fail_errno(err, "mount_setattr");
	if (move_onto(tree, fd) < 0)
		return ward_fail_errno(err, "move_mount");
	return 0;
}

int ward_mount_set_readonly(int fd, bool ro, struct ward_err *err)
{
	if (setattr_fd(fd, false, ro ? MOUNT_ATTR_RDONLY : 0, ro ? 0 : MOUNT_ATTR_RDONLY, 0, -1) <
	    0)
		return ward_fail_errno(err, "mount_setattr %s", ro ? "ro" : "rw");
	return 0;
}

/* ---- user namespaces for idmapped mounts ---- */

static int write_map(pid_t pid, const char *file, const struct ward_idmaps *m, struct ward_err *err)
{
	char path[64];
	size_t len = 0;
	cleanup_free char *buf = xmalloc(m->n * 36 + 1);

	for (size_t i = 0; i < m->n; i++)
		len += (size_t)sprintf(buf + len, "%u %u %u\n", m->v[i].container_id,
				       m->v[i].host_id, m->v[i].size);
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return write_file_at(AT_FDCWD, path, 0, 0, buf, len, err);
}

static int setup_userns(pid_t pid, int ready_fd, const struct ward_idmaps *uids,
			const struct ward_idmaps *gids, struct ward_err *err)
{
	char path[64];
	int child_errno = 0;
	struct ward_err ignored;
	int fd;

	if (read_exact(ready_fd, &child_errno, sizeof(child_errno)) != sizeof(child_errno))
		return ward_fail(err, EIO, "user namespace helper died");
	if (child_errno)
		return ward_fail(err, child_errno, "unshare user namespace");
	if (uids->n && write_map(pid, "uid_map", uids, err) < 0)
		return -1;
	if (gids->n) {
		/* Needed when we lack CAP_SETGID over the ids; nothing runs in this ns. */
		snprintf(path, sizeof(path), "/proc/%d/setgroups", (int)pid);
		(void)write_file_at(AT_FDCWD, path, 0, 0, "deny", 4, &ignored);
		if (write_map(pid, "gid_map", gids, err) < 0)
			return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ward_fail_errno(err, "open %s", path);
	return fd;
}

/* A user namespace with these mappings, held by an fd (a throwaway child unshares it, we
 * write its maps, open it and let the child go). */
int ward_userns_with_maps(const struct ward_idmaps *uids, const struct ward_idmaps *gids,
			  struct ward_err *err)
{
	int ready[2], done[2];
	pid_t pid;
	int fd;

	if (pipe2(ready, O_CLOEXEC) < 0)
		return ward_fail_errno(err, "pipe");
	if (pipe2(done, O_CLOEXEC) < 0) {
		close(ready[0]);
		close(ready[1]);
		return ward_fail_errno(err, "pipe");
	}
	pid = fork();
	if (pid == 0) {
		int e = unshare(CLONE_NEWUSER) < 0 ? errno : 0;
		char c;
		close(ready[0]);
		close(done[1]);
		(void)!write(ready[1], &e, sizeof(e));
		(void)!read(done[0], &c, 1); /* until the parent closes its end */
		_exit(0);
	}
	close(ready[1]);
	close(done[0]);
	if (pid < 0) {
		fd = ward_fail_errno(err, "fork");
	} else {
		fd = setup_userns(pid, ready[0], uids, gids, err);
	}
	close(ready[0]);
	close(done[1]);
	while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	return fd;
}

static int apply_idmap(int mnt, const struct ward_mount *m, bool recursive, int userns_fd,
		       struct ward_err *err)
{
	cleanup_fd int own = -1;

	if (m->uid_mappings.n || m->gid_mappings.n) {
		own = ward_userns_with_maps(&m->uid_mappings, &m->gid_mappings, err);
		if (own < 0)
			return ward_wrap(err, "idmap");
		userns_fd = own;
	} else if (userns_fd < 0) {
		return ward_fail(
		    err, EINVAL,
		    "idmap: no user namespace and no uidMappings/gidMappings to map to");
	}
	if (setattr_fd(mnt, recursive, MOUNT_ATTR_IDMAP, 0, 0, userns_fd) < 0)
		return ward_fail_errno(err, "mount_setattr idmap");
	return 0;
}

static int probe_idmap(void)
{
	struct ward_idmap u = {0, (uint32_t)getuid(), 1}, g = {0, (uint32_t)getgid(), 1};
	struct ward_idmaps um = {&u, 1}, gm = {&g, 1};
	struct ward_err e;
	cleanup_fd int ns = ward_userns_with_maps(&um, &gm, &e);
	cleanup_fd int tmpfs = -1;
	cleanup_fd int tree = -1;

	if (ns < 0)
		return 0;
	tmpfs = fs_create("tmpfs", "tmpfs", NULL, NULL, 0, &e);
	if (tmpfs >= 0 && setattr_fd(tmpfs, false, MOUNT_ATTR_IDMAP, 0, 0, ns) == 0)
		return 1;
	/* tmpfs gained idmap support in 6.3; disk filesystems had it earlier. */
	tree = sys_open_tree(AT_FDCWD, "/tmp", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree >= 0 && setattr_fd(tree, false, MOUNT_ATTR_IDMAP, 0, 0, ns) == 0)
		return 1;
	return 0;
}

/* sysfs takes the network namespace it shows (/sys/class/net, the net devices' kobjects)
 * and the right to be mounted from the task that opens its context (fsopen): the runtime
 * enters the pod's netns for that one call and goes back at once. The host's root owns
 * that netns's user namespace, so it may mount it; the pod's root may not. */
int ward_mount_open_netns_sysfs(int netns_fd, struct ward_err *err)
{
	cleanup_fd int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	cleanup_fd int fs = -1, mnt = -1;
	int saved;

	if (self < 0)
		return ward_fail_errno(
		    err, "sysfs of the pod's network namespace: open /proc/self/ns/net");
	if (setns(netns_fd, CLONE_NEWNET) < 0)
		return ward_fail_errno(err, "sysfs of the pod's network namespace: setns");
	fs = sys_fsopen("sysfs", FSOPEN_CLOEXEC);
	saved = errno;
	if (setns(self, CLONE_NEWNET) < 0)
		return ward_fail_errno(err, "back to the runtime's network namespace");
	if (fs < 0)
		return ward_fail(err, saved, "sysfs of the pod's network namespace: fsopen");
	if (sys_fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return ward_fail_errno(err, "sysfs of the pod's network namespace: create");
	mnt = sys_fsmount(fs, FSMOUNT_CLOEXEC,
			  MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			      MOUNT_ATTR_NOEXEC);
	if (mnt < 0)
		return ward_fail_errno(err, "sysfs of the pod's network namespace: fsmount");
	return steal_fd(mnt);
}

bool ward_mount_needs_host(const struct ward_mount *m)
{
	if (m->host_sysfs)
		return true;
	if (m->uid_mappings.n || m->gid_mappings.n)
		return true;
	/* A bind: its source is the host path the runtime holds open (hostfds.h). */
	if (m->type && !strcmp(m->type, "bind") && m->source && *m->source)
		return true;
	for (size_t i = 0; m->options && m->options[i]; i++)
		if (!strcmp(m->options[i], "idmap") || !strcmp(m->options[i], "ridmap") ||
		    (m->source && *m->source &&
		     (!strcmp(m->options[i], "bind") || !strcmp(m->options[i], "rbind"))))
			return true;
	return false;
}

bool ward_mount_tmpfs_idmappable(void)
{
	static int cached = -1;
	if (cached < 0) {
		struct ward_idmap u = {0, (uint32_t)getuid(), 1}, g = {0, (uint32_t)getgid(), 1};
		struct ward_idmaps um = {&u, 1}, gm = {&g, 1};
		struct ward_err e;
		cleanup_fd int ns = ward_userns_with_maps(&um, &gm, &e);
		cleanup_fd int tmpfs = -1;
		if (ns >= 0)
			tmpfs = fs_create("tmpfs", "tmpfs", NULL, NULL, 0, &e);
		cached = tmpfs >= 0 && setattr_fd(tmpfs, false, MOUNT_ATTR_IDMAP, 0, 0, ns) == 0;
	}
	return cached == 1;
}

bool ward_mount_idmap_supported(void)
{
	static int cached = -1;
	if (cached < 0)
		cached = probe_idmap();
	return cached == 1;
}

/* ---- tmpcopyup: copy the destination directory into the new tmpfs ---- */

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

static int copy_dir(int src, int dst, int depth, struct ward_err *err);

static int copy_file(int src, int dst, const char *name, struct ward_err *err)
{
	char buf[65536];
	struct stat st;
	ssize_t n;
	cleanup_fd int in =
	    openat(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	cleanup_fd int out = -1;

	if (in < 0)
		return ward_fail_errno(err, "open");
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
		return ward_fail(err, EAGAIN, "changed while copying");
	out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return ward_fail_errno(err, "create");
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ward_fail_errno(err, "read");
		if (write_all(out, buf, (size_t)n) < 0)
			return ward_fail_errno(err, "write");
	}
	return 0;
}

static int copy_entry(int src, int dst, const char *name, int depth, struct ward_err *err)
{
	struct stat st;
	struct timespec times[2];

	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return ward_fail_errno(err, "stat");
	if (S_ISDIR(st.st_mode)) {
		cleanup_fd int s = -1;
		cleanup_fd int d = -1;
		if (depth >= 256)
			return ward_fail(err, ELOOP, "too deep");
		if (mkdirat(dst, name, 0700) < 0)
			return ward_fail_errno(err, "mkdir");
		s = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		d = openat(dst, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s < 0 || d < 0)
			return ward_fail_errno(err, "open");
		if (copy_dir(s, d, depth + 1, err) < 0)
			return -1;
	} else if (S_ISREG(st.st_mode)) {
		if (copy_file(src, dst, name, err) < 0)
			return -1;
	} else if (S_ISLNK(st.st_mode)) {
		char target[4096];
		ssize_t n = readlinkat(src, name, target, sizeof(target) - 1);
		if (n < 0)
			return ward_fail_errno(err, "readlink");
		target[n] = '\0';
		if (symlinkat(target, dst, name) < 0)
			return ward_fail_errno(err, "symlink");
	} else if (mknodat(dst, name, st.st_mode, st.st_rdev) < 0) {
		return ward_fail_errno(err, "mknod");
	}
	/* The copy lives on a detached tmpfs only we can reach: plain *at calls are safe. */
	if (fchownat(dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
		return ward_fail_errno(err, "chown");
	if (!S_ISLNK(st.st_mode) && fchmodat(dst, name, st.st_mode & 07777, 0) < 0)
		return ward_fail_errno(err, "chmod");
	times[0] = st.st_atim;
	times[1] = st.st_mtim;
	(void)utimensat(dst, name, times, AT_SYMLINK_NOFOLLOW);
	return 0;
}

static int copy_dir(int src, int dst, int depth, struct ward_err *err)
{
	__attribute__((cleanup(closedirp))) DIR *d = NULL;
	int fd = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;

	if (fd < 0)
		return ward_fail_errno(err, "open");
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return ward_fail_errno(err, "opendir");
	}
	while ((errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (copy_entry(dirfd(d), dst, de->d_name, depth, err) < 0)
			return ward_wrap(err, "%s", de->d_name);
	}
	if (errno)
		return ward_fail_errno(err, "readdir");
	return 0;
}

static int tmpcopyup(int dest, int mnt, struct ward_err *err)
{
	struct stat st;
	if (fstat(dest, &st) < 0)
		return ward_fail_errno(err, "tmpcopyup: stat");
	if (copy_dir(dest, mnt, 0, err) < 0)
		return ward_wrap(err, "tmpcopyup");
	if (fchownat(mnt, "", st.st_uid, st.st_gid, AT_EMPTY_PATH) < 0)
		return ward_fail_errno(err, "tmpcopyup: chown");
	return 0;
}

/* ---- one spec mount ---- */

static bool type_is(const struct ward_mount *m, const char *t)
{
	return m->type && strcmp(m->type, t) == 0;
}

/* Clone the bind source (detached), attributes applied. src_fd: the source the runtime
 * holds open (hostfds.h), cloned as it is; -1: m->source, by name (inside the container's
 * mount namespace). A clone made on the host side becomes a slave of the host's mount, as
 * a bind made after the container's "/" went rslave would be, unless the mount asks for
 * shared propagation ("rshared": Kubernetes' Bidirectional), which keeps it a peer. */
static int bind_source(const struct ward_mount *m, const struct ward_mount_opts *o, int src_fd,
		       struct ward_err *err)
{
	unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (o->rbind ? AT_RECURSIVE : 0);
	cleanup_fd int tree = -1;

	if (!m->source || !*m->source)
		return ward_fail(err, EINVAL, "bind mount without a source");
	if (src_fd >= 0) {
		tree = sys_open_tree(src_fd, "", flags | AT_EMPTY_PATH);
		if (tree >= 0 && o->propagation != MS_SHARED &&
		    setattr_fd(tree, o->rbind, 0, 0, MS_SLAVE, -1) < 0)
			return ward_fail_errno(err, "open_tree %s: make it a slave", m->source);
	} else {
		tree = sys_open_tree(AT_FDCWD, m->source, flags);
	}
	if (tree < 0 && errno == EINVAL && !o->rbind)
		return ward_fail_errno(err,
				       "open_tree %s (submounts locked in a user namespace "
				       "can only be bound with rbind)",
				       m->source);
	if (tree < 0)
		return ward_fail_errno(err, "open_tree %s", m->source);
	if (setattr_opts(tree, o, err) < 0)
		return -1;
	return steal_fd(tree);
}

/* A user namespace without a cgroup namespace of its own may not mount cgroup2 (the kernel
 * wants CAP_SYS_ADMIN over the cgroup namespace: the host's): the process's own cgroup
 * directory, bound (detached), attributes applied, as runc falls back to. In the container
 * init, before pivot_root: the host's cgroup2 mount is still in view. */
static int own_cgroup_bind(const struct ward_mount_opts *o, struct ward_err *err)
{
	const char *v2 = ward_cgroup_v2_root(err);
	cleanup_free char *text = NULL;
	cleanup_free char *path = NULL;
	cleanup_fd int tree = -1;
	char *line, *nl;

	if (!v2)
		return -1;
	text = read_file_at(AT_FDCWD, "/proc/self/cgroup", NULL, err);
	if (!text)
		return -1;
	line = !strncmp(text, "0::", 3) ? text : strstr(text, "\n0::");
	if (!line)
		return ward_fail(err, ENOENT, "/proc/self/cgroup: no cgroup v2 line");
	line += line == text ? 3 : 4;
	if ((nl = strchr(line, '\n')))
		*nl = '\0';
	path = xasprintf("%s%s", v2, line);
	tree = sys_open_tree(AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		return ward_fail_errno(err, "open_tree %s", path);
	if (setattr_opts(tree, o, err) < 0)
		return -1;
	ward_debug("cgroup2 refused (no cgroup namespace of its own): bound %s", path);
	return steal_fd(tree);
}

/* A new filesystem instance (detached), attributes applied. */
static int new_source(const struct ward_mount *m, const struct ward_mount_opts *o,
		      struct ward_err *err)
{
	const char *fstype = m->type;
	cleanup_fd int mnt = -1;

	if (!fstype || !*fstype)
		return ward_fail(err, EINVAL, "no type and not a bind mount");
	if (strcmp(fstype, "cgroup") == 0)
		fstype = "cgroup2";
	mnt = fs_create(fstype, m->source, o->sb_flags, o->data, o->attr_set, err);
	if (mnt < 0 && err->errnum == EPERM && !strcmp(fstype, "cgroup2")) {
		struct ward_err first = *err;
		mnt = own_cgroup_bind(o, err);
		if (mnt >= 0)
			return steal_fd(mnt);
		return ward_wrap(err, "%s; and the container's own cgroup instead", first.msg);
	}
	if (mnt < 0)
		return -1;
	if ((o->rattr_set || o->rattr_clr) &&
	    setattr_fd(mnt, true, o->rattr_set, o->rattr_clr, 0, -1) < 0)
		return ward_fail_errno(err, "mount_setattr (recursive)");
	return steal_fd(mnt);
}

/* The destination inside the root. proc and sysfs are never mounted through a symlink
 * (runc's rule, CVE-2019-16884 class), other destinations follow symlinks inside root. */
static int open_dest(int rootfd, const struct ward_mount *m, enum ward_path_kind kind, bool is_bind,
		     struct ward_err *err)
{
	int fd;

	if (!is_bind && (type_is(m, "proc") || type_is(m, "sysfs"))) {
		struct ward_err e;
		struct stat st;
		cleanup_fd int cur =
		    ward_path_open(rootfd, m->destination, O_PATH | O_NOFOLLOW, &e);
		if (cur >= 0 && fstat(cur, &st) == 0 && !S_ISDIR(st.st_mode))
			/* runc's words, which engines and runc's suite match */
			return ward_fail(err, ENOTDIR, "must be mounted on ordinary directory (%s)",
					 S_ISLNK(st.st_mode) ? "destination is a symlink"
							     : "destination is not a directory");
	}
	fd = ward_path_mkdir_p(rootfd, m->destination, kind, err);
	return fd < 0 ? ward_wrap(err, "destination") : fd;
}

static bool is_bind(const struct ward_mount *m, const struct ward_mount_opts *o)
{
	return o->bind || o->rbind || type_is(m, "bind");
}

/* The detached mount for m: source, attributes, idmap. */
static int open_mount(const struct ward_mount *m, const struct ward_mount_opts *o, int src_fd,
		      int userns_fd, struct ward_err *err)
{
	cleanup_fd int mnt = -1;

	if (o->tmpcopyup && (is_bind(m, o) || !type_is(m, "tmpfs")))
		return ward_fail(err, EINVAL, "tmpcopyup: only for tmpfs mounts");
	mnt = is_bind(m, o) ? bind_source(m, o, src_fd, err) : new_source(m, o, err);
	if (mnt < 0)
		return -1;
	if ((o->idmap || o->ridmap || m->uid_mappings.n || m->gid_mappings.n) &&
	    apply_idmap(mnt, m, o->ridmap, userns_fd, err) < 0)
		return -1;
	return steal_fd(mnt);
}

/* Attach the detached mount at m's destination inside the root. */
static int attach_mount(int rootfd, const struct ward_mount *m, const struct ward_mount_opts *o,
			int mnt, struct ward_err *err)
{
	struct stat st;
	cleanup_fd int dest = -1;

	if (fstat(mnt, &st) < 0)
		return ward_fail_errno(err, "stat source");
	dest = open_dest(rootfd, m, S_ISDIR(st.st_mode) ? WARD_PATH_DIR : WARD_PATH_FILE,
			 is_bind(m, o), err);
	if (dest < 0)
		return -1;
	if (o->tmpcopyup && tmpcopyup(dest, mnt, err) < 0)
		return -1;
	if (move_onto(mnt, dest) < 0)
		return ward_fail_errno(err, "move_mount");
	/* Attached now: the fd refers to the mount in the container's tree. */
	if (o->propagation &&
	    setattr_fd(mnt, o->propagation_recursive, 0, 0, o->propagation, -1) < 0)
		return ward_fail_errno(err, "set propagation");
	return 0;
}

static int wrap_mount(const struct ward_mount *m, const struct ward_mount_opts *o,
		      struct ward_err *err)
{
	if (is_bind(m, o))
		return ward_wrap(err, "mount %s (bind %s)", m->destination,
				 m->source ? m->source : "");
	return ward_wrap(err, "mount %s (type %s)", m->destination, m->type ? m->type : "none");
}

int ward_mount_open(const struct ward_mount *m, int src_fd, int userns_fd, struct ward_err *err)
{
	__attribute__((cleanup(opts_cleanup))) struct ward_mount_opts o = {0};
	int mnt;

	if (ward_mount_opts_parse(m->options, &o, err) < 0)
		return wrap_mount(m, &o, err);
	mnt = open_mount(m, &o, src_fd, userns_fd, err);
	return mnt < 0 ? wrap_mount(m, &o, err) : mnt;
}

int ward_mount_attach(int rootfd, const struct ward_mount *m, int mnt_fd, struct ward_err *err)
{
	__attribute__((cleanup(opts_cleanup))) struct ward_mount_opts o = {0};

	if (ward_mount_opts_parse(m->options, &o, err) < 0 ||
	    attach_mount(rootfd, m, &o, mnt_fd, err) < 0)
		return wrap_mount(m, &o, err);
	ward_debug("mounted %s (%s)", m->destination, m->type ? m->type : "bind");
	return 0;
}

int ward_mount_one(int rootfd, const struct ward_mount *m, int userns_fd, struct ward_err *err)
{
	__attribute__((cleanup(opts_cleanup))) struct ward_mount_opts o = {0};
	cleanup_fd int mnt = -1;

	if (ward_mount_opts_parse(m->options, &o, err) < 0)
		return wrap_mount(m, &o, err);
	mnt = open_mount(m, &o, -1, userns_fd, err);
	if (mnt < 0 || attach_mount(rootfd, m, &o, mnt, err) < 0)
		return wrap_mount(m, &o, err);
	ward_debug("mounted %s (%s)", m->destination, m->type ? m->type : "bind");
	return 0;
}

static const char *fs_type_name(long magic)
{
	switch (magic) {
	case 0xEF53:
		return "ext4";
	case 0x01021994:
		return "tmpfs";
	case OVERLAYFS_MAGIC:
		return "overlayfs";
	case 0x58465342:
		return "xfs";
	case 0x9123683E:
		return "btrfs";
	case 0x01021997:
		return "9p";
	case 0x6969:
		return "nfs";
	default:
		return "this";
	}
}

int ward_mount_open_rootfs(int root_fd, const char *root_path, bool idmap, int userns_fd,
			   uid_t root_uid, gid_t root_gid, uint32_t ids, struct ward_err *err)
{
	cleanup_fd int tree = sys_open_tree(
	    root_fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
	struct statfs sf;

	if (tree < 0)
		return ward_fail_errno(err, "root %s: open_tree", root_path);
	if (setattr_fd(tree, true, 0, 0, MS_SLAVE, -1) < 0)
		return ward_fail_errno(err, "root %s: make it a slave", root_path);
	if (idmap && setattr_fd(tree, true, MOUNT_ATTR_IDMAP, 0, 0, userns_fd) < 0) {
		int e = errno;
		if (fstatfs(tree, &sf) < 0)
			sf.f_type = 0;
		/* containerd's rootfs: overlayfs itself cannot be idmapped, its layers can */
		if ((long)sf.f_type == OVERLAYFS_MAGIC && (e == EINVAL || e == EOPNOTSUPP))
			return ward_overlay_open_idmapped(root_fd, root_path, userns_fd, root_uid,
							  root_gid, ids, err);
		if (e == EINVAL || e == EOPNOTSUPP || e == EPERM)
			return ward_fail(
			    err, e,
			    "root %s: the %s filesystem cannot be idmapped on this "
			    "kernel; set \"idmap_rootfs\": false in the tenant's config "
			    "to run with an unmapped root (its files then show as "
			    "nobody inside)",
			    root_path, fs_type_name((long)sf.f_type));
		return ward_fail_errno(err, "root %s: mount_setattr idmap", root_path);
	}
	return steal_fd(tree);
}
